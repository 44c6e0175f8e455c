#!/bin/sh
# Records tests/fixtures/agent/*.jsonl again: the real Claude Code and Codex
# (as tests/install-deps puts them in /opt/agent-clis), run on the host with
# a throw-away HOME against the API stand-in, each scenario chosen by its
# prompt marker (see standin.py). Run it after upgrading a CLI, then update
# tests/unit/test_agent_events.c where the events changed.
#   tests/agents/record-fixtures.sh [OUT-DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../fixtures/agent}
AGENT_CLIS=${AGENT_CLIS:-/opt/agent-clis}
CLAUDE=$AGENT_CLIS/node_modules/@anthropic-ai/claude-code-linux-x64/claude
CODEX=$AGENT_CLIS/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
tmp=$(mktemp -d)
trap 'kill "$standin" 2>/dev/null; rm -rf "$tmp"' EXIT
python3 "$here/standin.py" --port-file "$tmp/port" --record "$tmp/requests.jsonl" \
	>"$tmp/standin.log" 2>&1 &
standin=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")

# A tiny MCP stdio server with one tool, echo.
cat >"$tmp/mcp_server.py" <<'PY'
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("id") is None:
        continue
    meth = m.get("method")
    if meth == "initialize":
        r = {"protocolVersion": m["params"].get("protocolVersion", "2025-06-18"),
             "capabilities": {"tools": {}}, "serverInfo": {"name": "tiny", "version": "1"}}
    elif meth == "tools/list":
        r = {"tools": [{"name": "echo", "description": "echoes its text",
                        "inputSchema": {"type": "object",
                                        "properties": {"text": {"type": "string"}}}}]}
    elif meth == "tools/call":
        r = {"content": [{"type": "text",
                          "text": "echo: " + json.dumps(m["params"].get("arguments"))}]}
    else:
        r = None
    msg = {"jsonrpc": "2.0", "id": m["id"]}
    if r is None:
        msg["error"] = {"code": -32601, "message": "no such method"}
    else:
        msg["result"] = r
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
PY
printf '{"mcpServers":{"tiny":{"type":"stdio","command":"python3","args":["%s"]}}}\n' \
	"$tmp/mcp_server.py" >"$tmp/mcp.json"

# in_home NAME SECONDS CMD...: runs CMD in a fresh home, stdout to NAME.jsonl.
in_home()
{
	name=$1 secs=$2
	shift 2
	mkdir -p "$tmp/$name/work"
	(cd "$tmp/$name/work" && HOME=$tmp/$name timeout "$secs" "$@" >"$out/$name.jsonl" \
		2>"$tmp/$name.err" </dev/null) || echo "$name: exit $?"
}

claude()
{
	name=$1
	shift
	in_home "$name" "${SECS:-120}" env ANTHROPIC_BASE_URL="http://127.0.0.1:$port" \
		ANTHROPIC_API_KEY=sk-ant-test-fixture CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
		"$CLAUDE" --print --output-format stream-json --verbose --model claude-sonnet-4-5 "$@"
}

codex()
{
	name=$1
	shift
	in_home "$name" "${SECS:-120}" env OPENAI_API_KEY=sk-test-fixture "$CODEX" exec --json \
		--skip-git-repo-check -c model_provider=standin \
		-c "model_providers.standin={name=\"standin\",base_url=\"http://127.0.0.1:$port/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}" \
		-c analytics.enabled=false -c check_for_update_on_startup=false --disable plugins "$@"
}

claude claude-text -- "say hello"
claude claude-partial --include-partial-messages -- "say hello"
claude claude-thinking -- "STANDIN: thinking"
claude claude-bash --allowedTools Bash -- "STANDIN: bash echo fixture-ran; id -u"
claude claude-bash-denied -- "STANDIN: bash touch denied.txt"
claude claude-write-disallowed --permission-mode acceptEdits --disallowedTools Write,Edit \
	-- "STANDIN: write $tmp/claude-write-disallowed/work/new.txt"
claude claude-mcp --allowedTools mcp__tiny__echo --mcp-config "$tmp/mcp.json" \
	-- 'STANDIN: mcp tiny echo {"text":"hi"}'
CLAUDE_CODE_MAX_RETRIES=1 claude claude-outage -- "STANDIN: outage 529"
SECS=8 claude claude-hang -- "STANDIN: hang"
codex codex-text -- "say hello"
codex codex-command --dangerously-bypass-approvals-and-sandbox -- "STANDIN: bash echo fixture-ran"
codex codex-mcp -c 'mcp_servers.tiny.command="python3"' \
	-c "mcp_servers.tiny.args=[\"$tmp/mcp_server.py\"]" --dangerously-bypass-approvals-and-sandbox \
	-- 'STANDIN: mcp tiny echo {"text":"hi"}'
codex codex-outage -- "STANDIN: outage 500"
SECS=8 codex codex-hang -- "STANDIN: hang"

# SIGINT while the stand-in hangs: the CLI's own answer to an interrupt.
mkdir -p "$tmp/claude-interrupt/work"
(cd "$tmp/claude-interrupt/work" && HOME=$tmp/claude-interrupt \
	ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=sk-ant-test-fixture \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 exec "$CLAUDE" --print --output-format stream-json \
	--verbose --model claude-sonnet-4-5 -- "STANDIN: hang" >"$out/claude-interrupt.jsonl" \
	2>/dev/null </dev/null) &
pid=$!
sleep 4
kill -INT "$pid"
wait "$pid" || true
