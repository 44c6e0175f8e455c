"""Helpers for the MCP bridge's tests (tests/e2e/serve-mcp.sh and
tests/escape/serve-mcp.sh), on top of serve_client: run the bridge inside a
session with given lines on its stdin, and read from outside what reached
the test server (tests/agents/mcp_server.py) and the audit log."""
import json
import os

from serve_client import *  # noqa: F401,F403

BRIDGE = "/run/agent-sandbox/agent-sandbox"


def bridge(c, sid, name, msgs, raw=None):
    """(process/exec result, {id: answer}) of the bridge given msgs (or raw lines)."""
    lines = raw if raw is not None else [json.dumps(m) for m in msgs]
    script = 'printf "%s\\n" "$@" | ' + BRIDGE + " mcp-bridge " + name
    r = c.exec(sid, ["sh", "-c", script, "sh"] + lines)
    out = [json.loads(l) for l in r["stdout"].decode().splitlines() if l.strip()]
    return r, {m.get("id"): m for m in out}


def audit(event):
    path = os.environ["XDG_STATE_HOME"] + "/agent-sandbox/audit.jsonl"
    return [json.loads(l) for l in open(path) if ('"%s"' % event) in l]


def received(log):
    """Every message the test server got."""
    if not os.path.exists(log):
        return []
    return [json.loads(l) for l in open(log)]


def calls_received(log):
    return [m["params"]["name"] for m in received(log) if m.get("method") == "tools/call"]


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def call(i, tool, text="hi"):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": tool, "arguments": {"text": text}}}


def demo_session(c, log, chat="c", tools=("echo",)):
    """A session whose server "demo" is the test server, echo allowed."""
    server = {"command": ["python3", os.environ["MCP_SERVER"], log], "tools": list(tools)}
    return c.create(chat=chat, mcpServers={"demo": server})["sessionId"]
