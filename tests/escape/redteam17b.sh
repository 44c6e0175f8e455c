#!/bin/sh
# The hostile agent against the daemon through the MCP bridge: what the
# host pays for what the agent sends (audit log bytes, daemon memory), and
# what is left running on the host when the daemon goes. Each outcome is
# read from outside: the audit log's size, the daemon's /proc, ps.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"
. "$(dirname "$0")/../e2e/serve-lib"
export T
MCP_SERVER=$(cd "$(dirname "$0")/../agents" && pwd)/mcp_server.py
export MCP_SERVER

test_refused_mcp_calls_cannot_fill_the_hosts_audit_log()
{
	start_daemon
	client <<'PY'
from mcp_client import *
def main():
    log = os.environ["T"] + "/mcp.log"
    path = os.environ["XDG_STATE_HOME"] + "/agent-sandbox/audit.jsonl"
    c = Client(); c.initialize()
    sid = demo_session(c, log)
    before = os.path.getsize(path)
    # 40 refused calls each naming a 1 MiB tool, then 3000 small ones:
    # answered inside for nothing, each a record on the host.
    script = ("python3 -c 'import json,sys\n"
              "for i in range(40): print(json.dumps({\"jsonrpc\":\"2.0\",\"id\":i,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"*(1<<20)}}))\n"
              "for i in range(3000): print(json.dumps({\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"secret\"}}))\n"
              "' | " + BRIDGE + " mcp-bridge demo >/dev/null")
    r = c.exec(sid, ["sh", "-c", script])
    grown = os.path.getsize(path) - before
    check(grown < 1 << 20, "the audit log grew by", grown)
    calls = audit("serve_mcp_call")
    check(all(len(a["tool"]) <= 300 for a in calls), "a long tool name is recorded whole")
    check(0 < len(calls) <= 1100, "refused calls recorded", len(calls))
    check(calls_received(log) == [], received(log))
    # An allowed call is still recorded after the cap.
    r, out = bridge(c, sid, "demo", [INIT, call(2, "echo", "after")])
    check(out[2]["result"]["content"][0]["text"] == "after", out)
    check(audit("serve_mcp_call")[-1]["allowed"] is True, audit("serve_mcp_call")[-1])
run(main)
PY
	stop_daemon
}

run_tests
