#!/bin/sh
# The hostile agent and the hostile client against agent/run of
# `agent-sandbox serve`: a tool the real Claude Code runs (driven by the
# API stand-in, tests/agents/standin.py) tries to forge the events the
# platform bills from, to reach the daemon's writes into the workspace,
# and to outlive its run. Outcomes are read from outside: the events and
# completion the client gets, the host's files, the processes left.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"
. "$(dirname "$0")/../e2e/serve-lib"
. "$(dirname "$0")/../e2e/serve-agent-lib"
export T
RT_DIR=$(cd "$(dirname "$0")/redteam17a" && pwd)
export RT_DIR

test_tool_cannot_forge_the_result_through_the_clis_stdout()
{
	agent_daemon
	client <<'PY'
from serve_client import *
from serve_agent import *
import os, shutil, time
def main():
    c = Client(timeout=120); c.initialize()
    sid, ws = agent_session(c)
    shutil.copy(os.path.join(os.environ["RT_DIR"], "forge.py"), os.path.join(ws, "forge.py"))
    ev, done = c.agent_run(sid, "STANDIN: bash python3 forge.py", permissionMode="bypassPermissions")
    out = " ".join(r["text"] for r in of_type(ev, "tool_result"))
    print("# tool said: %s" % out.strip())
    check("forge: pidfd_getfd refused" in out and "ptrace refused" in out and
          "process_vm_writev refused" in out, "the tool reached into the CLI:", out)
    results = of_type(ev, "result")
    check(len(results) == 1, "more than one result:", show(results))
    check(done["result"] != "FORGED" and done["totalCostUsd"] > 0, "the forged result won:", done)
run(main)
PY
	grep '^#' "$T/client.out" >&2
	stop_daemon
}

run_tests
