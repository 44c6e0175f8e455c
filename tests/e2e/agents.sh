#!/bin/sh
# The real agent CLIs inside the sandbox: Claude Code and Codex, as
# tests/install-deps puts them in /opt/agent-clis, talk to a loopback
# stand-in for their APIs (tests/agents/standin.py) on a fresh home. They
# must finish in the default policy, keep their state for the next run, and
# run the stand-in's tool call inside, where ~/.ssh and .env cannot be read;
# `--read-only` must not break them. The stand-in records every request, so
# the tests read what a tool saw and what left the sandbox. Skipped only when
# npm could not install the CLIs.
. "$(dirname "$0")/../lib.sh"

AGENT_CLIS=${AGENT_CLIS:-/opt/agent-clis}
CLAUDE=$AGENT_CLIS/node_modules/@anthropic-ai/claude-code-linux-x64/claude
# The static binary itself; the package's bin/codex.js launcher needs Node.
CODEX=$AGENT_CLIS/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
STANDIN=$(cd "$(dirname "$0")/../agents" && pwd)/standin.py
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

# What the stand-in answers: its plain answer, and the mark before the tool
# output it quotes.
HELLO="hello from the stand-in"
TOOL_MARK="tool output was:"

need_clis()
{
	[ -x "$CLAUDE" ] && [ -x "$CODEX" ] && return 0
	if [ -r "$AGENT_CLIS/npm-failed" ]; then
		skip "the agent CLIs are not in $AGENT_CLIS: $(cat "$AGENT_CLIS/npm-failed")"
	fi
	fail "the agent CLIs are missing from $AGENT_CLIS: run tests/install-deps"
}

# Starts the API stand-in on the host's loopback, asking for a tool call
# that runs $1 (if given); sets $api_port, $key (a made-up API key) and
# $mark (a word unique to this test).
start_standin()
{
	need_clis
	mark=m$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	key=sk-ant-test-$mark
	"$PY" "$STANDIN" --port-file "$T/standin.port" --record "$T/requests.jsonl" \
		--command "${1:-}" >"$T/standin.log" 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 200); do
		[ -s "$T/standin.port" ] && break
		sleep 0.05
	done
	api_port=$(cat "$T/standin.port" 2>/dev/null) ||
		fail "the API stand-in did not start: $(cat "$T/standin.log")"
}

# Runs agent-sandbox ARGS with the agents' variables pointing at the
# stand-in, bounded so that a hang fails the test instead of blocking it.
# Claude Code's non-essential traffic (telemetry, update checks) is off so
# that nothing but the stand-in is called.
agent()
{
	rc=0
	ANTHROPIC_BASE_URL=http://127.0.0.1:$api_port ANTHROPIC_API_KEY=$key OPENAI_API_KEY=$key \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
		timeout 120 "$AS" --localhost "$api_port" --env ANTHROPIC_API_KEY --env OPENAI_API_KEY \
		"$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	[ "$rc" -ne 124 ] || fail "the agent did not finish within 120 seconds"
}

# claude --print with stream-json output, sandbox flags first:
# claude_print [SANDBOX-FLAGS...] -- [CLAUDE-ARGS...] PROMPT
claude_print()
{
	flags=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		flags="$flags $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	agent $flags -- "$CLAUDE" --print --output-format stream-json --verbose "$@"
}

# codex exec against the stand-in: a provider of its own (Codex 0.169 reads
# no base URL from the environment and tries a WebSocket first on its
# built-in one), analytics, update check and plugin sync off.
# codex_exec [SANDBOX-FLAGS...] -- [EXEC-ARGS...] PROMPT
codex_exec()
{
	flags=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		flags="$flags $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	agent $flags -- "$CODEX" exec --skip-git-repo-check \
		-c model_provider=standin \
		-c "model_providers.standin={name=\"standin\",base_url=\"http://127.0.0.1:$api_port/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}" \
		-c analytics.enabled=false -c check_for_update_on_startup=false --disable plugins "$@"
}

# The final answer in Claude Code's stream-json output ("error: ..." when
# it reports one).
claude_result()
{
	"$PY" -c '
import json, sys
for line in open(sys.argv[1], errors="replace"):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if isinstance(j, dict) and j.get("type") == "result":
        print(("error: " if j.get("is_error") else "") + str(j.get("result")))
' "$T/out"
}

# The tool results the CLIs sent back to the stand-in, one per request
# that carried one (Claude's tool_result, Codex's custom_tool_call_output).
tool_results()
{
	"$PY" -c '
import json, sys
for line in open(sys.argv[1], errors="replace"):
    try:
        body = json.loads(json.loads(line)["body"])
    except (ValueError, KeyError):
        continue
    items = list(body.get("messages") or []) + list(body.get("input") or [])
    for m in items:
        blocks = m.get("content") if isinstance(m, dict) else None
        for b in (blocks if isinstance(blocks, list) else [m]):
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_result":
                print(json.dumps(b.get("content")))
            elif b.get("type") in ("custom_tool_call_output", "function_call_output"):
                print(json.dumps(b.get("output")))
' "$T/requests.jsonl"
}

# Fails unless some request the stand-in got carried every string given.
expect_request_with()
{
	"$PY" -c '
import json, sys
for line in open(sys.argv[1], errors="replace"):
    body = json.loads(line)["body"]
    if all(s in body for s in sys.argv[2:]):
        sys.exit(0)
sys.exit(1)
' "$T/requests.jsonl" "$@" || fail "no request to the stand-in carried all of: $*"
}

# Fails unless the stand-in got a request with header NAME: VALUE.
expect_request_header()
{
	"$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    if json.loads(line)["headers"].get(sys.argv[2]) == sys.argv[3]:
        sys.exit(0)
sys.exit(1)
' "$T/requests.jsonl" "$1" "$2" || fail "no request to the stand-in had the header $1: $2"
}

# A private key and a .env the tool call will try to read, both holding a
# word unique to this test that must reach neither the stand-in nor the
# transcript.
plant_secrets()
{
	mkdir -p "$HOME/.ssh"
	echo "ssh-secret-$mark" >"$HOME/.ssh/id_ed25519"
	chmod 600 "$HOME/.ssh/id_ed25519"
	echo "ENV_SECRET=env-secret-$mark" >.env
}

# The tool ran inside (the sandbox answers `check`), its reads of the key
# and .env gave nothing, its write to the home failed, and neither secret
# left the sandbox.
expect_tool_confined()
{
	tool_results >"$T/tool-results"
	grep -qF 'inside sandbox' "$T/tool-results" ||
		fail "the tool did not run inside the sandbox: $(head -c 600 "$T/tool-results")"
	grep -qF 'tool-finished' "$T/tool-results" ||
		fail "the tool did not finish: $(head -c 600 "$T/tool-results")"
	grep -qE 'id_ed25519: (No such file or directory|Permission denied)' "$T/tool-results" ||
		fail "reading ~/.ssh/id_ed25519 did not fail: $(head -c 600 "$T/tool-results")"
	for f in "$T/requests.jsonl" "$T/out" "$T/err"; do
		! grep -qF -e "ssh-secret-$mark" -e "env-secret-$mark" "$f" ||
			fail "a secret left the sandbox: in $(basename "$f")"
	done
	expect_no_file "$HOME/proof"
	expect_content "$HOME/.ssh/id_ed25519" "ssh-secret-$mark"
}

# The tool call: prove it runs inside, read the key and .env directly, then
# search the home and the project for either secret by content (the
# bracket keeps the pattern from matching the command's own text, which
# the transcripts hold), and try to leave a file in the home.
TOOL_COMMAND='/run/agent-sandbox/agent-sandbox check; cat ~/.ssh/id_ed25519 .env;
grep -rsI -e "ssh-secre[t]" -e "env-secre[t]" ~ .; touch ~/proof; echo tool-finished'

test_claude_print_stream_json_completes_in_default_policy()
{
	start_standin
	claude_print -- -- "say hi"
	expect_status 0
	[ "$(claude_result)" = "$HELLO" ] ||
		fail "Claude Code's result is '$(claude_result)', not the stand-in's answer"
	expect_request_header x-api-key "$key"
	# Its state on a fresh home is its own business, not a protected path
	# to move aside at every run.
	expect_err_lacks "moved aside"
}

test_claude_continue_finds_first_session()
{
	start_standin
	claude_print -- -- "first-prompt-$mark"
	expect_status 0
	claude_print -- --continue -- "second-prompt-$mark"
	expect_status 0
	# Only a continued conversation sends the first prompt again.
	expect_request_with "first-prompt-$mark" "$HELLO" "second-prompt-$mark"
	ls "$HOME"/.claude/projects/*/*.jsonl >/dev/null 2>&1 ||
		fail "no session transcript under ~/.claude/projects on the host"
}

test_claude_tool_call_runs_inside_and_cannot_read_ssh_or_env()
{
	start_standin "$TOOL_COMMAND"
	plant_secrets
	# As root Claude Code takes this flag only with IS_SANDBOX=1, which is
	# the profile's to set.
	claude_print -- --dangerously-skip-permissions -- "run the command"
	expect_status 0
	case $(claude_result) in
	"$HELLO $TOOL_MARK"*) ;;
	*) fail "Claude Code did not finish the tool turn: $(claude_result)" ;;
	esac
	expect_tool_confined
}

test_codex_exec_completes_in_default_policy()
{
	start_standin
	codex_exec -- -- "say hi"
	expect_status 0
	expect_out "$HELLO"
	expect_request_header authorization "Bearer $key"
	expect_err_lacks "moved aside"
}

test_codex_state_persists_to_second_run()
{
	start_standin
	codex_exec -- -- "first-prompt-$mark"
	expect_status 0
	codex_exec -- resume --last "second-prompt-$mark"
	expect_status 0
	expect_request_with "first-prompt-$mark" "$HELLO" "second-prompt-$mark"
	ls -d "$HOME"/.codex/sessions/* >/dev/null 2>&1 ||
		fail "no session under ~/.codex/sessions on the host"
}

test_codex_tool_call_runs_inside_and_cannot_read_ssh_or_env()
{
	start_standin "$TOOL_COMMAND"
	plant_secrets
	# Codex's own sandbox off: ours is the one under test here.
	codex_exec -- --sandbox danger-full-access "run the command"
	expect_status 0
	expect_out_contains "$HELLO $TOOL_MARK"
	expect_tool_confined
}

test_read_only_runs_work_for_both()
{
	start_standin 'ls >/dev/null && echo listed-ok; touch written-in-project'
	claude_print --read-only -- --dangerously-skip-permissions -- "list the files"
	expect_status 0
	case $(claude_result) in
	"$HELLO $TOOL_MARK"*listed-ok*) ;;
	*) fail "Claude Code's tool did not run under --read-only: $(claude_result)" ;;
	esac
	codex_exec --read-only -- --sandbox danger-full-access "list the files"
	expect_status 0
	expect_out_contains listed-ok
	# Read-only still holds for the project.
	expect_no_file written-in-project
}

run_tests
