#!/bin/sh
# Escape attempts against `agent-sandbox serve`: hostile clients (killed
# mid-stream, malformed or oversized lines, half a message, a flood of
# pipelined requests, hundreds at once, another uid) must leave the daemon
# answering everyone else; a process inside a session must reach neither
# the daemon's socket, nor the sessions' control sockets, nor another
# session's workspace, which is checked from outside too.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"
. "$(dirname "$0")/../e2e/serve-lib"

test_daemon_survives_a_client_killed_mid_stream_and_kills_its_process()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os, signal, subprocess, sys
flood = r'''
import sys
from serve_client import *
c = Client(); c.initialize()
sid = c.create()["sessionId"]
r = c.start(sid, ["cat", "/dev/zero"])
print(r["pid"], flush=True)
c.note("process/output", r["processId"])
print("streaming", flush=True)
while True:
    c.pump()
'''
def main():
    child = subprocess.Popen([sys.executable, "-c", flood], stdout=subprocess.PIPE, text=True)
    pid = int(child.stdout.readline())
    check(child.stdout.readline() == "streaming\n", "the flood did not stream")
    check(cmdline(pid) == [b"cat", b"/dev/zero"], "pid", pid)
    child.send_signal(signal.SIGKILL)
    child.wait()
    wait_until(lambda: proc_stat(pid) is None, "the dead client's process to go")
    c = Client(); c.initialize()
    sessions = c.call("session/list")["sessions"]
    check(len(sessions) == 1 and sessions[0]["processes"] == 0, sessions)
    check(c.exec(sessions[0]["sessionId"], ["echo", "alive"])["stdout"] == b"alive\n", "exec after")
run(main)
PY
	stop_daemon
}

test_malformed_json_gets_parse_error_and_the_connection_stays_usable()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client()
    for bad, code in [(b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700),
                      (b'\xff\xfe{not json}', -32700),
                      (b'{"a": "\x00"}', -32700),
                      (b'[1, 2, 3]', -32600),
                      (b'"just a string"', -32600),
                      (b'{"jsonrpc": "2.0", "id": 7, "method": 5}', -32600),
                      (b'{"jsonrpc": "1.0", "id": 8, "method": "initialize"}', -32600),
                      (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}', -32600),
                      (b'[' * 100000 + b']' * 100000, -32700)]:
        c.send_raw(bad + b"\n")
        m = c.read()
        check(m is not None and "error" in m and m["error"]["code"] == code,
              "for", bad[:40], "got", m)
    c.initialize()
    check(c.call("session/list") == {"sessions": []}, "after the bad lines")
    check(c.error("no/such", {}) == -32601, "an unknown method")
    check(c.error("session/get", {"sessionId": 5}) == -32602, "a mistyped param")
run(main)
PY
	stop_daemon
}

test_oversized_line_is_refused_and_the_next_request_answered()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(timeout=60)
    c.initialize()
    big = b'{"jsonrpc": "2.0", "id": 99, "method": "session/list", "params": {"x": "' + b"a" * (17 << 20) + b'"}}\n'
    c.send_raw(big)
    m = c.read()
    check(m and m["error"]["code"] == -32600 and m["error"]["data"]["kind"] == "limit", m)
    check(c.call("session/list") == {"sessions": []}, "the request after the long line")
    rss = int([l for l in open("/proc/%s/status" % os.environ["DAEMON_PID"]) if l.startswith("VmRSS")][0].split()[1])
    print("# daemon RSS after a 17 MB line: %d kB" % rss)
run(main)
PY
	grep '^#' "$T/client.out" >&2
	stop_daemon
}

test_half_a_message_then_disconnect_leaves_the_daemon_answering()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    for part in [b'{"jsonrpc": "2.0", "id": 1, "meth', b'{"jsonrpc":', b'x' * 300000]:
        c = Client()
        c.send_raw(part)
        c.close()
    # Initialized, with a request owed, then gone before reading it.
    c = Client(); c.initialize(); sid = c.create()["sessionId"]
    c.send("process/exec", {"sessionId": sid, "argv": ["sleep", "0.3"]})
    c.close()
    d = Client(); d.initialize()
    check(len(d.call("session/list")["sessions"]) == 1, "the daemon's sessions")
    check(d.exec(sid, ["true"])["exitCode"] == 0, "exec after")
run(main)
PY
	stop_daemon
}

test_a_thousand_pipelined_requests_are_all_answered_or_overloaded()
{
	start_daemon
	client <<'PY'
from serve_client import *
import json, time
def pipeline(c, calls):
    lines = [json.dumps({"jsonrpc": "2.0", "id": 10000 + i, "method": m, "params": p})
             for i, (m, p) in enumerate(calls)]
    c.send_raw(("\n".join(lines) + "\n").encode())
    ok = busy = 0
    for i in range(len(calls)):
        m = c.read()
        check(m is not None, "the connection ended after", i, "answers")
        if "error" in m:
            check(m["error"]["code"] == -32001, "an error other than overloaded:", m)
            busy += 1
        else:
            ok += 1
    return ok, busy
def main():
    c = Client(timeout=30); c.initialize()
    sid = c.create()["sessionId"]
    t = time.monotonic()
    # Answered at once: every one of them.
    ok, busy = pipeline(c, [("session/get", {"sessionId": sid})] * 1000)
    check(ok == 1000, "immediate requests refused:", busy)
    # Answered later (each a process): beyond the connection's 64 owed
    # answers, overloaded.
    ok, busy = pipeline(c, [("process/exec", {"sessionId": sid, "argv": ["true"]}),
                            ("session/list", {})] * 500)
    print("# 1000 pipelined (half exec): %d answered, %d overloaded, %.2f s in all"
          % (ok, busy, time.monotonic() - t))
    check(ok >= 64, "too few answered:", ok)
    check(c.call("session/get", {"sessionId": sid})["state"] == "ready", "the session after")
    check(c.exec(sid, ["echo", "x"])["stdout"] == b"x\n", "exec after")
run(main)
PY
	grep '^#' "$T/client.out" >&2
	stop_daemon
}

test_two_hundred_concurrent_clients_are_all_answered()
{
	start_daemon
	client <<'PY'
from serve_client import *
import json, os, time
def rss():
    with open("/proc/%s/status" % os.environ["DAEMON_PID"]) as f:
        return int([l for l in f if l.startswith("VmRSS")][0].split()[1])
def main():
    before = rss()
    t = time.monotonic()
    clients = [Client() for _ in range(200)]
    for i, c in enumerate(clients):
        c.send("initialize", {"protocolVersion": "1", "owner": "o%d" % (i % 10)})
        c.send("session/list", {})
    for c in clients:
        check(c.answer(1)["protocolVersion"] == "1", "initialize")
        check(c.answer(2) == {"sessions": []}, "session/list")
    took = time.monotonic() - t
    after = rss()
    for c in clients:
        c.close()
    print("# 200 clients in %.2f s; daemon RSS %d kB -> %d kB" % (took, before, after))
    check(after - before < 64 * 1024, "the daemon grew by", after - before, "kB for 200 clients")
    d = Client(); d.initialize()
    d.call("session/list")
run(main)
PY
	grep '^#' "$T/client.out" >&2
	stop_daemon
}

test_process_inside_reaches_neither_the_daemons_sockets_nor_another_workspace()
{
	# Outside /tmp (private inside) so that the paths exist for the host
	# view a sandbox may have of /var/tmp.
	base=$(mktemp -d /var/tmp/as-serve.XXXXXX) || fail "mktemp"
	serve_dirs "$base"
	start_daemon
	client <<'PY'
from serve_client import *
import glob, json, os
attack = r'''
import json, os, socket, sys
out = {}
for path in sys.argv[1:]:
    for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):
        try:
            s = socket.socket(socket.AF_UNIX, kind)
            s.settimeout(2)
            s.connect(path)
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
                      b'{"jsonrpc":"2.0","id":2,"method":"session/create","params":{"key":{"user":"evil","chat":"x"}}}\n')
            out["connect " + path] = s.recv(4096).decode(errors="replace") or "connected"
        except OSError as e:
            pass
other, stranger = os.environ["OTHER"], os.environ["STRANGER"]
owners = os.path.dirname(os.path.dirname(os.path.dirname(other)))
for what, fn in [("read", lambda: open(other + "/secret").read()),
                 ("list", lambda: os.listdir(other)),
                 ("read another owner's", lambda: open(stranger + "/secret").read()),
                 ("owners", lambda: [n for n in os.listdir(owners) if n != os.path.basename(
                     os.path.dirname(os.path.dirname(other)))]),
                 ("write", lambda: open(other + "/pwn", "w").write("x")),
                 ("mkdir", lambda: os.mkdir(os.path.dirname(other) + "/chat-pwn")),
                 ("siblings", lambda: [n for n in os.listdir(os.path.dirname(other)) if n != "chat-a"])]:
    try:
        out[what] = repr(fn())
    except OSError:
        pass
print(json.dumps(out))
'''
def main():
    c = Client(); c.initialize()
    a = c.create("u", "a")
    b = c.create("u", "b")
    o = Client(); o.initialize(owner="stranger")
    z = o.create("u", "a")
    for ws in (b["hostWorkspace"], z["hostWorkspace"]):
        with open(ws + "/secret", "w") as f:
            f.write("session-b-secret\n")
    rundir = os.environ["XDG_RUNTIME_DIR"]
    targets = [os.environ["SOCK"]] + [p for p in glob.glob(rundir + "/**", recursive=True)
                                      if os.path.exists(p) and not os.path.isdir(p)
                                      and __import__("stat").S_ISSOCK(os.stat(p).st_mode)]
    check(len(targets) >= 3, "expected the api socket and two control sockets:", targets)
    before = sorted(os.listdir(b["hostWorkspace"]))
    r = c.exec(a["sessionId"], ["python3", "-c", attack] + targets, env={"OTHER": b["hostWorkspace"], "STRANGER": z["hostWorkspace"]})
    check(r["exitCode"] == 0, "the attack did not run:", r)
    # The path down to its own workspace shows, and nothing beside it.
    got = {k: v for k, v in json.loads(r["stdout"]).items() if v != "[]"}
    check(got == {}, "reached from inside session a:", got)
    # From outside: nothing changed, no session was made for "evil".
    check(sorted(os.listdir(b["hostWorkspace"])) == before, "b's workspace changed")
    check(not os.path.exists(os.path.dirname(b["hostWorkspace"]) + "/chat-pwn"), "a chat dir was made")
    keys = [s["key"]["user"] for s in c.call("session/list")["sessions"]]
    check("evil" not in keys, "a session was made from inside:", keys)
    check(c.exec(b["sessionId"], ["cat", "secret"])["stdout"] == b"session-b-secret\n", "b's own view")
run(main)
PY
	stop_daemon
}

test_client_of_a_uid_not_allowed_is_refused()
{
	[ "$(id -u)" -eq 0 ] || skip "needs root to connect as another uid"
	user=${TEST_USER:-agent-sandbox-test}
	id "$user" >/dev/null 2>&1 || skip "no user $user"
	chmod 711 "$T"
	mkdir -m 711 "$T/pub"
	serve_dirs
	export SOCK="$T/pub/api.sock"
	# Another uid is allowed, which makes the socket connectable by all:
	# the daemon's own check is what refuses this one.
	start_daemon --socket "$SOCK" --allow-uid 65533
	setpriv --reuid="$user" --regid="$user" --clear-groups env SOCK="$SOCK" \
		PYTHONPATH="$SERVE_DIR" "$SERVE_PY" - >"$T/other.out" 2>&1 <<'PY' || fail "as $user: $(cat "$T/other.out")"
from serve_client import *
def main():
    c = Client()
    try:
        c.send("initialize", {"protocolVersion": "1"})
        m = c.read()
    except OSError:
        m = None
    check(m is None, "a uid not allowed was answered:", m)
run(main)
PY
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    c.call("session/list")
run(main)
PY
	stop_daemon
}

run_tests
