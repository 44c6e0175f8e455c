#!/bin/sh
# The hostile agent against the MCP bridge of `agent-sandbox serve`: from
# inside a session whose server "demo" allows only the tool "echo", it
# tries to reach "secret" (a batch, other spellings, a reused id, a huge
# line) and another session's server. The outcome is read from outside: the
# messages the test server (tests/agents/mcp_server.py) logs, the audit
# log, the daemon still answering.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"
. "$(dirname "$0")/../e2e/serve-lib"
export T
MCP_SERVER=$(cd "$(dirname "$0")/../agents" && pwd)/mcp_server.py
export MCP_SERVER

test_batch_array_cannot_smuggle_a_tools_call()
{
	start_daemon
	client <<'PY'
from mcp_client import *
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    sid = demo_session(c, log)
    batch = [call(5, "secret"), call(6, "echo")]
    r, out = bridge(c, sid, "demo", None, raw=[json.dumps(INIT), json.dumps(batch), json.dumps(call(7, "secret"))])
    check(calls_received(log) == [], "calls reached the server", received(log))
    check(5 not in out and 7 not in out, out)
    check(any("batch" in a["reason"] for a in audit("serve_mcp_refused")), audit("serve_mcp_refused"))
    check(c.call("session/get", {"sessionId": sid})["state"] == "ready", "the session")
run(main)
PY
	stop_daemon
}

test_tools_call_with_the_name_spelled_differently_is_refused()
{
	start_daemon
	client <<'PY'
from mcp_client import *
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    sid = demo_session(c, log)
    names = ["ECHO", "Echo", "echo ", " echo", "echo\n", "ech\u043e", "\uff45cho", "echo\u0000", "echo\u200b", "secret"]
    msgs = [INIT] + [call(10 + i, n) for i, n in enumerate(names)]
    # Duplicate keys: the name the server would read last is "secret".
    raw = [json.dumps(m) for m in msgs] + [
        '{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"echo","name":"secret"}}',
        '{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"echo"},"params":{"name":"secret"}}',
        '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"sec\\u0072et"}}',
    ]
    r, out = bridge(c, sid, "demo", None, raw=raw)
    for i in list(range(10, 10 + len(names))) + [30, 31, 32]:
        check(out.get(i, {}).get("error", {}).get("code") == -32602, i, out.get(i))
    check(calls_received(log) == [], "calls reached the server", received(log))
    refused = [a for a in audit("serve_mcp_call") if not a["allowed"]]
    check(len(refused) == len(names) + 3, len(refused), refused)
run(main)
PY
	stop_daemon
}

test_a_reused_request_id_cannot_get_an_unfiltered_tools_list()
{
	start_daemon
	client <<'PY'
from mcp_client import *
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    sid = demo_session(c, log)
    raw = [json.dumps(INIT),
           '{"jsonrpc":"2.0","id":7,"method":"tools/list"}',
           '{"jsonrpc":"2.0","id":7,"method":"ping"}',
           '{"jsonrpc":"2.0","id":"7","method":"tools/list"}',
           '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"x"}}']
    r = c.exec(sid, ["sh", "-c", 'printf "%s\\n" "$@" | ' + BRIDGE + " mcp-bridge demo", "sh"] + raw)
    lines = [json.loads(l) for l in r["stdout"].decode().splitlines()]
    for m in lines:
        tools = (m.get("result") or {}).get("tools")
        check(tools is None or [t["name"] for t in tools] == ["echo"], "a list got through", m)
    check(sum(1 for m in lines if (m.get("result") or {}).get("tools") is not None) == 3, lines)
    check(any(m.get("id") == 7 and "error" in m for m in lines), "the reused id was answered", lines)
run(main)
PY
	stop_daemon
}

test_a_huge_line_ends_the_bridge_and_not_the_daemon()
{
	start_daemon
	client <<'PY'
from mcp_client import *
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    sid = demo_session(c, log)
    script = ("{ printf '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"'; "
              "head -c 6000000 /dev/zero | tr '\\0' a; printf '\"}}}\\n'; } | " + BRIDGE + " mcp-bridge demo")
    r = c.exec(sid, ["sh", "-c", script])
    check(calls_received(log) == [], "the huge call reached the server")
    check(any("4 MiB" in a["reason"] for a in audit("serve_mcp_refused")), audit("serve_mcp_refused"))
    # The daemon and the server still work.
    r, out = bridge(c, sid, "demo", [INIT, call(2, "echo", "after")])
    check(out[2]["result"]["content"][0]["text"] == "after", out)
run(main)
PY
	stop_daemon
}

test_another_sessions_mcp_socket_is_not_reachable_inside()
{
	start_daemon
	client <<'PY'
from mcp_client import *
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    a = demo_session(c, log, chat="a", tools=("echo", "secret"))
    b = c.create(chat="b")["sessionId"]
    d = os.environ["XDG_STATE_HOME"] + "/agent-sandbox/serve/mcp-" + a
    check(os.path.exists(d + "/demo.sock"), "a's socket on the host")
    probe = ("import socket,sys\n"
             "s=socket.socket(socket.AF_UNIX)\n"
             "try:\n s.connect(sys.argv[1]); print('CONNECTED')\n"
             "except OSError as e: print('refused', e.errno)\n")
    r = c.exec(b, ["python3", "-c", probe, d + "/demo.sock"])
    check(b"CONNECTED" not in r["stdout"], "b reached a's server", r)
    r = c.exec(b, ["sh", "-c", "ls /run/agent-sandbox/mcp 2>&1; ls " + d + " 2>&1 | head -3"])
    check(b"demo.sock" not in r["stdout"], r["stdout"])
    r, out = bridge(c, b, "demo", [INIT, call(2, "secret")])
    check(r["exitCode"] != 0 and not out, r)
    check(calls_received(log) == [], received(log))
run(main)
PY
	stop_daemon
}

run_tests
