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
    print("# tool said: %s" % " / ".join(out.split("\n")))
    check("forge: pidfd_getfd refused" in out and "ptrace write refused" in out and
          "process_vm_writev refused" in out and "/proc/PID/mem refused" in out, "the tool reached into the CLI:", out)
    results = of_type(ev, "result")
    check(len(results) == 1, "more than one result:", show(results))
    check(done["result"] != "FORGED" and done["totalCostUsd"] > 0, "the forged result won:", done)
run(main)
PY
	grep '^#' "$T/client.out" >&2
	stop_daemon
}

# The daemon user's agent state is hidden from every session (README): its
# settings (an env with a key), notes, dotenv and the shell snapshots its
# own sessions source are not read through the binds that keep them
# read-only in a CLI run.
test_daemon_users_agent_settings_and_snapshots_are_not_readable_in_a_session()
{
	mkdir -p "$HOME/.claude/shell-snapshots" "$HOME/.claude/session-env" "$HOME/.claude/commands" \
		"$HOME/.codex/skills/s"
	echo '{"env": {"ANTHROPIC_API_KEY": "settings-secret"}}' >"$HOME/.claude/settings.json"
	echo "notes-secret" >"$HOME/.claude/CLAUDE.md"
	echo "export TOKEN=snapshot-secret" >"$HOME/.claude/shell-snapshots/snapshot-bash-1.sh"
	echo "TOKEN=sessionenv-secret" >"$HOME/.claude/session-env/x.sh"
	echo "cmd-secret" >"$HOME/.claude/commands/c.md"
	echo "OPENAI_API_KEY=dotenv-secret" >"$HOME/.codex/.env"
	echo "[mcp_servers.x]\nenv = {T = \"toml-secret\"}" >"$HOME/.codex/config.toml"
	echo "skill-secret" >"$HOME/.codex/skills/s/SKILL.md"
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client(timeout=60); c.initialize()
    sid = c.create("u", "c")["sessionId"]
    r = c.exec(sid, ["sh", "-c", "grep -rs secret ~/.claude ~/.codex ~/.claude.json; echo done"])
    out = r["stdout"].decode()
    check(out.strip().endswith("done"), r)
    check("secret" not in out, "the daemon user's agent state read inside:", out)
run(main)
PY
	stop_daemon
}

# The same when the daemon user keeps Claude Code's state elsewhere
# (CLAUDE_CONFIG_DIR, CODEX_HOME in the daemon's environment): the
# @agents preset would open that directory read-write in every session,
# another chat's conversations and all.
test_daemon_users_claude_config_dir_is_not_reachable_in_a_session()
{
	mkdir -p "$T/claude-dir/projects/p" "$T/codex-home"
	echo '{"display": "other-chat-secret"}' >"$T/claude-dir/projects/p/s.jsonl"
	echo "codex-home-secret" >"$T/codex-home/history.jsonl"
	CLAUDE_CONFIG_DIR="$T/claude-dir" CODEX_HOME="$T/codex-home" start_daemon
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(timeout=60); c.initialize()
    sid = c.create("u", "c")["sessionId"]
    t = os.environ["T"]
    r = c.exec(sid, ["sh", "-c", "grep -rs secret %s/claude-dir %s/codex-home; "
                     "echo planted > %s/claude-dir/planted; echo done" % (t, t, t)])
    out = r["stdout"].decode()
    check(out.strip().endswith("done"), r)
    check("secret" not in out, "the daemon user's CLAUDE_CONFIG_DIR read inside:", out)
    check(not os.path.exists(t + "/claude-dir/planted"), "a session wrote into CLAUDE_CONFIG_DIR")
run(main)
PY
	stop_daemon
}

# Open: a process the agent detaches (setsid) outlives agent/completed
# and goes on acting, a second agent beside the next run. Nothing in the
# sandbox can reap it for the run (a reaper of its own is the same user's
# to kill; the init cannot tell its orphans apart); a cgroup per run
# could. Run with REDTEAM17_OPEN=1 to see it fail.
test_process_a_tool_leaves_behind_does_not_outlive_its_run()
{
	[ -n "${REDTEAM17_OPEN:-}" ] || skip "open: a detached process outlives its run (README limits)"
	agent_daemon
	client <<'PY'
from serve_client import *
from serve_agent import *
import os, time
def main():
    c = Client(timeout=120); c.initialize()
    sid, ws = agent_session(c)
    # A detached loop that would go on acting (spending the API key,
    # a second agent) after the run the platform saw end.
    cmd = ("setsid sh -c 'while :; do sleep 0.2; date +%N > beat; done' "
           "</dev/null >/dev/null 2>&1 & sleep 1; echo started")
    ev, done = c.agent_run(sid, "STANDIN: bash " + cmd, permissionMode="bypassPermissions")
    out = " ".join(r["text"] for r in of_type(ev, "tool_result"))
    check("started" in out, "the tool:", out)
    # The beat file keeps changing while the loop lives.
    time.sleep(0.3)
    b1 = open(os.path.join(ws, "beat")).read() if os.path.exists(os.path.join(ws, "beat")) else None
    time.sleep(1.2)
    b2 = open(os.path.join(ws, "beat")).read() if os.path.exists(os.path.join(ws, "beat")) else None
    check(b1 is not None, "the loop never ran")
    check(b1 == b2, "the tool's loop still runs after agent/completed")
run(main)
PY
	stop_daemon
}

run_tests
