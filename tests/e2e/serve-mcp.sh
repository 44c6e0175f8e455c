#!/bin/sh
# The MCP bridge of `agent-sandbox serve` (API.md "Hooks, skills, MCP"): a
# session's mcpServers reached from inside through
# `agent-sandbox mcp-bridge NAME`, with only the allowed tools listed and
# callable. What reached the server is read from outside, in the log the
# test server (tests/agents/mcp_server.py) keeps, and in the audit log.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/serve-lib"
export T

MCP_SERVER=$(cd "$(dirname "$0")/../agents" && pwd)/mcp_server.py
export MCP_SERVER


test_mcp_command_server_lists_and_runs_only_the_allowed_tools()
{
	start_daemon
	client <<'PY'
from mcp_client import *
import glob, os
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    s = c.create(mcpServers={"demo": {"command": ["python3", os.environ["MCP_SERVER"], log], "tools": ["echo"]}})
    sid = s["sessionId"]
    r, out = bridge(c, sid, "demo", [INIT, LIST, call(3, "echo", "round trip"), call(4, "secret")])
    check(r["exitCode"] == 0, "the bridge failed", r["stderr"])
    check(out[1]["result"]["serverInfo"]["name"] == "test-mcp", out)
    names = [t["name"] for t in out[2]["result"]["tools"]]
    check(names == ["echo"], "tools/list shows", names)
    check(out[2]["result"].get("nextCursor") == "end", "nextCursor kept", out[2])
    check(out[3]["result"]["content"][0]["text"] == "round trip", out[3])
    check(out[4]["error"]["code"] == -32602 and "secret" in out[4]["error"]["message"], out[4])
    got = received(log)
    check([m["params"]["name"] for m in got if m.get("method") == "tools/call"] == ["echo"],
          "what reached the server", got)
    calls = [(a["server"], a["tool"], a["allowed"], a["session"]) for a in audit("serve_mcp_call")]
    check(calls == [("demo", "echo", True, sid), ("demo", "secret", False, sid)], calls)
    # The server ran on the host and is gone with its bridge run.
    started = [m["started"] for m in got if "started" in m]
    check(len(started) == 1, got)
    wait_until(lambda: proc_stat(started[0]) is None, "the server to end with its bridge")
run(main)
PY
	stop_daemon
}

test_mcp_socket_server_is_reached_through_the_filter()
{
	start_daemon
	# Bounded: a failing test leaves nothing running.
	timeout 60 "$SERVE_PY" "$MCP_SERVER" "$T/sock.log" --socket "$T/mcp.sock" >/dev/null 2>&1 </dev/null &
	server=$!
	i=0
	while [ ! -e "$T/mcp.sock.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	client <<'PY'
from mcp_client import *
import glob, os
def main():
    log = os.environ["T"] + "/sock.log"
    c = Client(); c.initialize()
    sid = c.create(mcpServers={"remote": {"socket": os.environ["T"] + "/mcp.sock", "tools": ["echo"]}})["sessionId"]
    r, out = bridge(c, sid, "remote", [INIT, LIST, call(3, "echo", "via socket"), call(4, "secret")])
    check(sorted(out) == [1, 2, 3, 4], r, out, open(log).read(), open(os.environ["XDG_STATE_HOME"] + "/agent-sandbox/audit.jsonl").read()[-1500:])
    check([t["name"] for t in out[2]["result"]["tools"]] == ["echo"], out[2])
    check(out[3]["result"]["content"][0]["text"] == "via socket", out[3])
    check("error" in out[4], out[4])
    check("secret" not in open(log).read(), "secret reached the socket server")
run(main)
PY
	kill "$server"
	stop_daemon
}

test_mcp_servers_without_a_tools_list_allow_every_tool()
{
	start_daemon
	client <<'PY'
from mcp_client import *
import glob, os
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    sid = c.create(mcpServers={"all": {"command": ["python3", os.environ["MCP_SERVER"], log]}})["sessionId"]
    r, out = bridge(c, sid, "all", [INIT, LIST, call(3, "secret")])
    check([t["name"] for t in out[2]["result"]["tools"]] == ["echo", "secret"], out[2])
    check(out[3]["result"]["content"][0]["text"] == "SECRET-REACHED", out[3])
run(main)
PY
	stop_daemon
}

test_mcp_servers_params_are_checked()
{
	start_daemon
	client <<'PY'
from mcp_client import *
import glob, os
def main():
    c = Client(); c.initialize()
    bad = [
        {"a__b": {"command": ["true"]}},
        {"x.y": {"command": ["true"]}},
        {"demo": {}},
        {"demo": {"command": ["true"], "socket": "/tmp/x"}},
        {"demo": {"socket": "relative.sock"}},
        {"demo": {"command": []}},
        {"demo": {"command": ["true"], "tools": ["echo", "echo"]}},
        {"demo": {"command": ["true"], "tools": [1]}},
        {"demo": {"command": ["true"], "env": {}}},
        dict(("s%d" % i, {"command": ["true"]}) for i in range(17)),
        ["demo"],
    ]
    for i, m in enumerate(bad):
        check(c.error("session/create", {"key": {"user": "u", "chat": "c%d" % i}, "mcpServers": m}) == -32602, m)
run(main)
PY
	stop_daemon
}

test_mcp_bridge_fails_with_a_message_for_an_unknown_server()
{
	start_daemon
	client <<'PY'
from mcp_client import *
import glob, os
def main():
    c = Client(); c.initialize()
    sid = c.create(mcpServers={"demo": {"command": ["true"]}})["sessionId"]
    r = c.exec(sid, ["/run/agent-sandbox/agent-sandbox", "mcp-bridge", "other"])
    check(r["exitCode"] != 0 and b"no MCP server other in this session" in r["stderr"], r)
    # A session without servers has no directory at all.
    sid2 = c.create(chat="plain")["sessionId"]
    r = c.exec(sid2, ["/run/agent-sandbox/agent-sandbox", "mcp-bridge", "demo"])
    check(r["exitCode"] != 0 and b"no MCP server demo" in r["stderr"], r)
run(main)
PY
	stop_daemon
}

test_mcp_directory_is_read_only_inside()
{
	start_daemon
	client <<'PY'
from mcp_client import *
import glob, os
def main():
    c = Client(); c.initialize()
    sid = c.create(mcpServers={"demo": {"command": ["true"]}})["sessionId"]
    d = "/run/agent-sandbox/mcp"
    r = c.exec(sid, ["sh", "-c", "ls " + d + "; touch " + d + "/x || echo refused; rm " + d + "/demo.sock || echo kept; "
                     "ln -s /tmp " + d + "/l || echo nolink; mv " + d + "/demo.sock " + d + "/y || echo nomove"])
    out = r["stdout"].decode()
    check(out.split() == ["demo.sock", "refused", "kept", "nolink", "nomove"], out, r["stderr"])
    host = glob.glob(os.environ["XDG_STATE_HOME"] + "/agent-sandbox/serve/mcp-" + sid)
    check(host and os.listdir(host[0]) == ["demo.sock"], host)
run(main)
PY
	stop_daemon
}

test_session_close_leaves_no_mcp_server_or_directory()
{
	start_daemon
	client <<'PY'
from mcp_client import *
import os
def main():
    log = os.environ["T"] + "/mcp.log"
    c = Client(); c.initialize()
    sid = c.create(mcpServers={"demo": {"command": ["python3", os.environ["MCP_SERVER"], log]}})["sessionId"]
    # A bridge left running: its server lives until the session ends.
    p = c.start(sid, ["/run/agent-sandbox/agent-sandbox", "mcp-bridge", "demo"], stdin=True)["processId"]
    c.call("process/write", {"processId": p, "dataBase64": b64(json.dumps(INIT) + "\n")})
    c.wait_output(p, "test-mcp")
    pid = [m["started"] for m in received(log) if "started" in m][0]
    check(proc_stat(pid) is not None, "the server runs")
    c.call("session/close", {"sessionId": sid})
    wait_until(lambda: proc_stat(pid) is None, "the server to end with the session")
    d = os.environ["XDG_STATE_HOME"] + "/agent-sandbox/serve/mcp-" + sid
    check(not os.path.exists(d), "the directory is left", d)
run(main)
PY
	stop_daemon
}

test_mcp_json_names_the_bridge_and_is_read_only_inside()
{
	start_daemon
	mkdir -p "$T/data/agent-sandbox/workspaces/uid-$(id -u)/u/chat-c"
	echo '{"mcpServers": {"own": {"command": "x"}, "demo": {"command": "evil"}}}' \
		>"$T/data/agent-sandbox/workspaces/uid-$(id -u)/u/chat-c/.mcp.json"
	client <<'PY'
from mcp_client import *
def main():
    c = Client(); c.initialize()
    s = c.create(mcpServers={"demo": {"command": ["true"]}})
    check(s["hostWorkspace"].endswith("/uid-%d/u/chat-c" % os.getuid()), s)
    r = c.exec(s["sessionId"], ["sh", "-c", "cat .mcp.json; echo '{}' > .mcp.json && echo WROTE; "
                                "rm -f .mcp.json && echo REMOVED; true"])
    cfg = json.loads(r["stdout"].decode().split("\n}\n")[0] + "\n}")
    check(cfg["mcpServers"]["demo"] == {"type": "stdio", "command": BRIDGE, "args": ["mcp-bridge", "demo"]}, cfg)
    check(cfg["mcpServers"]["own"] == {"command": "x"}, cfg)
    check(b"WROTE" not in r["stdout"] and b"REMOVED" not in r["stdout"], r)
    on_host = json.load(open(s["hostWorkspace"] + "/.mcp.json"))
    check(on_host == cfg, on_host)
run(main)
PY
	stop_daemon
}

test_mcp_servers_from_an_untrusted_connection_are_refused()
{
	[ "$(id -u)" -eq 0 ] || skip "needs root to run a client as another uid"
	user=${TEST_USER:-agent-sandbox-test}
	uid=$(id -u "$user" 2>/dev/null) || skip "no user $user"
	chmod 711 "$T"
	mkdir -m 711 "$T/pub"
	export T
	serve_dirs
	export SOCK="$T/pub/api.sock"
	start_daemon --socket "$SOCK" --allow-uid "$uid"
	setpriv --reuid="$user" --regid="$user" --clear-groups env T="$T" SOCK="$SOCK" \
		PYTHONPATH="$SERVE_DIR" "$SERVE_PY" - >"$T/other.out" 2>&1 <<'PY' || fail "as $user: $(cat "$T/other.out")"
from serve_client import *
import os
def main():
    c = Client(); c.initialize()
    for m in [{"x": {"command": ["touch", os.environ["T"] + "/ran"]}}, {"x": {"socket": "/run/docker.sock"}}]:
        try:
            c.call("session/create", {"key": {"user": "u", "chat": "c"}, "mcpServers": m})
            raise Fail("accepted from an untrusted uid: %s" % m)
        except RpcError as e:
            check(e.code == -32005, e.code, str(e))
    check(c.call("session/list") == {"sessions": []}, "a session was made")
run(main)
PY
	[ ! -e "$T/ran" ] || fail "the command ran"
	stop_daemon
}

run_tests
