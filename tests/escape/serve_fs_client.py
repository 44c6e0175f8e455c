"""A client of `agent-sandbox serve --stdio` for the fs/* escape tests.

Usage: serve_fs_client.py AGENT_SANDBOX [POLICY_JSON] < steps

Initializes, creates the session of key {user: "u", chat: "c"} (with the
policy, when given), prints "workspace PATH", then runs one step per input
line: a JSON object {"method", "params"} in which the string "@SID" stands
for the session id and a leading "@WS" for the workspace path. For each
step it prints "ok RESULT-JSON" or "error CODE DETAIL". A step
{"method": "close"} closes the session; stdin's end closes it too.
"""
import json
import subprocess
import sys


def main():
    daemon = subprocess.Popen(
        [sys.argv[1], "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    next_id = [0]

    def call(method, params):
        next_id[0] += 1
        msg = {"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}
        daemon.stdin.write(json.dumps(msg) + "\n")
        daemon.stdin.flush()
        while True:
            line = daemon.stdout.readline()
            if not line:
                sys.exit("the daemon closed its output")
            answer = json.loads(line)
            if answer.get("id") == next_id[0]:
                return answer

    def must(method, params):
        answer = call(method, params)
        if "error" in answer:
            sys.exit("%s: %s" % (method, json.dumps(answer["error"])))
        return answer["result"]

    must("initialize", {"clientInfo": {"name": "serve-fs-test", "version": "1"},
                        "protocolVersion": "1"})
    create = {"key": {"user": "u", "chat": "c"}}
    if len(sys.argv) > 2:
        create["policy"] = json.loads(sys.argv[2])
    session = must("session/create", create)
    sid, ws = session["sessionId"], session["workspace"]
    print("workspace " + ws, flush=True)

    def fill(v):
        if isinstance(v, str):
            if v == "@SID":
                return sid
            return ws + v[3:] if v.startswith("@WS") else v
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fill(x) for x in v]
        return v

    for line in sys.stdin:
        if not line.strip():
            continue
        step = json.loads(line)
        if step["method"] == "close":
            break
        answer = call(step["method"], fill(step.get("params", {})))
        if "error" in answer:
            e = answer["error"]
            print("error %d %s" % (e["code"], e.get("data", {}).get("detail", "")), flush=True)
        else:
            print("ok " + json.dumps(answer["result"]), flush=True)
    must("session/close", {"sessionId": sid})
    daemon.stdin.close()
    daemon.wait()


main()
