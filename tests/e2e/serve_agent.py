"""What tests/e2e/serve-agent.sh's clients share: a session whose sandbox
reaches the API stand-in (tests/agents/standin.py) on the host's loopback
and finds the real agent CLIs on its PATH, and checks on agent runs.
Standard library only."""
import json
import os

from serve_client import check

HELLO = "hello from the stand-in"


def agent_env():
    port = os.environ["API_PORT"]
    return {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:%s" % port,
        "ANTHROPIC_API_KEY": "sk-ant-test-" + os.environ.get("MARK", "x"),
        "OPENAI_BASE_URL": "http://127.0.0.1:%s/v1" % port,
        "OPENAI_API_KEY": "sk-test-" + os.environ.get("MARK", "x"),
        # Nothing but the stand-in is called; an outage is not retried
        # for a minute.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "PATH": "%s:%s:/usr/local/bin:/usr/bin:/bin" % (os.environ["CLAUDE_DIR"], os.environ["CODEX_DIR"]),
    }


def agent_session(c, user="u", chat="c", policy=None, env=None, **extra):
    """A session for agent runs: (sessionId, workspace)."""
    pol = {"network": {"localhost": [int(os.environ["API_PORT"])]}}
    pol.update(policy or {})
    e = agent_env()
    e.update(env or {})
    r = c.create(user, chat, policy=pol, env=e, **extra)
    return r["sessionId"], r["workspace"]


def types(events):
    return [e["type"] for e in events]


def of_type(events, t):
    return [e for e in events if e["type"] == t]


def audit(kind):
    """The daemon's audit records of event kind."""
    path = os.path.join(os.environ["XDG_STATE_HOME"], "agent-sandbox", "audit.jsonl")
    out = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("event") == kind:
                out.append(r)
    return out


def requests():
    """The request bodies the stand-in got, as text."""
    path = os.environ["T"] + "/requests.jsonl"
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l)["body"] for l in f]


def show(events):
    return json.dumps(events)[:3000]
