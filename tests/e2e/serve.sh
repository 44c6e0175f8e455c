#!/bin/sh
# `agent-sandbox serve`, the executor API, driven over its socket by a
# python client (serve_client.py): the initialize gate, sessions (one per
# owner and key, persistent workspaces, idle expiry, gc), owners kept apart,
# processes (streaming, re-attach, stdin, signals, pty, timeout, output cap,
# limits) and what closing leaves behind. Each test runs a daemon of its
# own; outcomes that matter are checked from outside too: host processes
# in /proc, the workspace on disk, `agent-sandbox list`.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/serve-lib"

test_any_call_before_initialize_fails_with_invalid_request()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client()
    for m, p in [("session/list", {}), ("session/create", {"key": {"user": "u", "chat": "c"}}),
                 ("process/list", {"sessionId": "x"}), ("workspace/gc", {})]:
        check(c.error(m, p) == -32600, m, "before initialize")
    r = c.initialize()
    check(r["protocolVersion"] == "1" and r["capabilities"]["pty"] is True, r)
    check(c.call("session/list", {}) == {"sessions": []}, "the gate stays shut after initialize")
    check(c.error("initialize", {"protocolVersion": "1"}) == -32602, "a second initialize")
    # Another connection has its own gate.
    check(Client().error("session/list", {}) == -32600, "a new connection is not initialized")
run(main)
PY
	stop_daemon
}

test_session_create_returns_the_same_session_for_the_same_key_only()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(); c.initialize()
    a = c.create("alice", "one")
    check(a["state"] == "ready" and os.path.isdir(a["hostWorkspace"]), a)
    check(c.create("alice", "one")["sessionId"] == a["sessionId"], "same key, other session")
    # From another connection of the same owner too (GetOrCreate).
    d = Client(); d.initialize()
    check(d.create("alice", "one")["sessionId"] == a["sessionId"], "same key on a new connection")
    b = c.create("alice", "two")
    check(b["sessionId"] != a["sessionId"] and b["hostWorkspace"] != a["hostWorkspace"], "other chat", b)
    e = c.create("bob", "one")
    check(e["sessionId"] not in (a["sessionId"], b["sessionId"]), "other user")
    ids = sorted(s["sessionId"] for s in c.call("session/list")["sessions"])
    check(ids == sorted([a["sessionId"], b["sessionId"], e["sessionId"]]), ids)
run(main)
PY
	stop_daemon
}

test_workspace_keeps_a_file_across_close_and_recreate_of_the_key()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(); c.initialize()
    a = c.create("u", "keep")
    r = c.exec(a["sessionId"], ["sh", "-c", "echo kept-$((6*7)) > notes.txt; mkdir -p sub; echo deep > sub/f"])
    check(r["exitCode"] == 0, r)
    c.call("session/close", {"sessionId": a["sessionId"]})
    check(c.call("session/get", {"sessionId": a["sessionId"]})["state"] == "closed", "closed")
    with open(os.path.join(a["hostWorkspace"], "notes.txt")) as f:
        check(f.read() == "kept-42\n", "the host's copy")
    b = c.create("u", "keep")
    check(b["sessionId"] != a["sessionId"] and b["hostWorkspace"] == a["hostWorkspace"], b)
    r = c.exec(b["sessionId"], ["cat", "notes.txt", "sub/f"])
    check(r["exitCode"] == 0 and r["stdout"] == b"kept-42\ndeep\n", r)
run(main)
PY
	stop_daemon
}

test_owners_cannot_see_or_touch_each_others_sessions()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    a = Client(); a.initialize(owner="alice")
    b = Client(); b.initialize(owner="bob")
    sa = a.create("u", "c")
    sid = sa["sessionId"]
    p = a.start(sid, ["sleep", "1000"], detached=True)["processId"]
    sb = b.create("u", "c")
    check(sb["sessionId"] != sid, "the same key of another owner is another session")
    check(sb["hostWorkspace"] != sa["hostWorkspace"], "two owners share a workspace")
    for m, params in [("session/get", {"sessionId": sid}),
                      ("session/renew", {"sessionId": sid, "idleTimeoutS": 60}),
                      ("process/list", {"sessionId": sid}),
                      ("process/start", {"sessionId": sid, "argv": ["true"]}),
                      ("process/exec", {"sessionId": sid, "argv": ["true"]}),
                      ("process/signal", {"processId": p, "signal": "KILL"}),
                      ("process/write", {"processId": p, "dataBase64": b64("x")}),
                      ("process/resize", {"processId": p, "cols": 10, "rows": 10}),
                      ("process/attach", {"processId": p, "fromSeq": 1}),
                      ("session/close", {"sessionId": sid})]:
        check(b.error(m, params) == -32003, m, "of another owner's session")
    check([s["sessionId"] for s in b.call("session/list")["sessions"]] == [sb["sessionId"]], "bob's list")
    check([s["sessionId"] for s in a.call("session/list")["sessions"]] == [sid], "alice's list")
    # Still alive and still alice's after all that.
    procs = a.call("process/list", {"sessionId": sid})["processes"]
    check(len(procs) == 1 and procs[0]["running"], procs)
    check(a.call("session/get", {"sessionId": sid})["state"] == "busy", "alice's session")
run(main)
PY
	stop_daemon
}

test_a_second_uid_sees_only_its_own_sessions_and_cannot_name_an_owner()
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
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(); c.initialize()
    sid = c.create("u", "c")["sessionId"]
    with open(os.environ["T"] + "/root-session", "w") as f:
        f.write(sid)
run(main)
PY
	T=$T setpriv --reuid="$user" --regid="$user" --clear-groups env T="$T" SOCK="$SOCK" \
		PYTHONPATH="$SERVE_DIR" "$SERVE_PY" - >"$T/other.out" 2>&1 <<'PY' || fail "as $user: $(cat "$T/other.out")"
from serve_client import *
import os
def main():
    sid = open(os.environ["T"] + "/root-session").read()
    c = Client()
    check(c.error("initialize", {"protocolVersion": "1", "owner": "uid-0x"}) == -32003, "naming an owner")
    r = c.initialize()
    check(r["owner"] == "uid-%d" % os.getuid(), r)
    check(c.call("session/list") == {"sessions": []}, "another uid's sessions listed")
    check(c.error("session/get", {"sessionId": sid}) == -32003, "session/get")
    check(c.error("process/exec", {"sessionId": sid, "argv": ["true"]}) == -32003, "process/exec")
    check(c.error("session/close", {"sessionId": sid}) == -32003, "session/close")
run(main)
PY
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(); c.initialize()
    sid = open(os.environ["T"] + "/root-session").read()
    check(c.call("session/get", {"sessionId": sid})["state"] == "ready", "root's session")
run(main)
PY
	stop_daemon
}

test_ten_megabytes_of_output_stream_intact_in_order_with_gap_free_seq()
{
	start_daemon
	client <<'PY'
from serve_client import *
import hashlib, os, time
def main():
    c = Client(); c.initialize()
    s = c.create()
    data = os.urandom(10 << 20)
    with open(os.path.join(s["hostWorkspace"], "big"), "wb") as f:
        f.write(data)
    t = time.monotonic()
    p = c.start(s["sessionId"], ["cat", "big"])["processId"]
    out, seqs, ex = c.output_until_exit(p)
    took = time.monotonic() - t
    check(ex["exitCode"] == 0 and ex["signal"] is None and not ex["timedOut"], ex)
    check(seqs == list(range(1, len(seqs) + 1)), "seq has gaps or is out of order", seqs[:5])
    check(len(out) == len(data), "got", len(out), "bytes of", len(data))
    check(hashlib.sha256(out).hexdigest() == hashlib.sha256(data).hexdigest(), "sha256 differs")
    print("# 10 MiB streamed in %.2f s (%d notifications)" % (took, len(seqs)))
run(main)
PY
	grep '^#' "$T/client.out" >&2
	stop_daemon
}

test_attach_on_a_new_connection_replays_from_a_middle_seq_after_a_drop()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os
def main():
    a = Client(); a.initialize()
    s = a.create()
    sid, ws = s["sessionId"], s["hostWorkspace"]
    # Part one, then (once told through a file) part two: the first
    # connection drops in the middle of part one.
    script = "seq 1 60000; while [ ! -e go ]; do sleep 0.02; done; seq 60001 120000"
    p = a.start(sid, ["sh", "-c", script], detached=True)["processId"]
    first, seen = b"", 0
    while len(first) < 100000:
        n = a.note("process/output", p)
        check(n["seq"] == seen + 1, "seq", n["seq"], "after", seen)
        seen = n["seq"]
        first += base64.b64decode(n["dataBase64"])
    a.close()
    b = Client(); b.initialize()
    r = b.call("process/attach", {"processId": p, "fromSeq": seen + 1})
    check(r == {"gap": False, "firstSeq": seen + 1}, r)
    open(os.path.join(ws, "go"), "w").close()
    rest, seqs, ex = b.output_until_exit(p)
    check(seqs == list(range(seen + 1, seen + 1 + len(seqs))), "replayed seqs", seqs[:3])
    want = "".join("%d\n" % i for i in range(1, 120001)).encode()
    check(first + rest == want, "the stream differs after re-attach:", len(first + rest), len(want))
    check(ex["exitCode"] == 0, ex)
run(main)
PY
	stop_daemon
}

test_attach_says_gap_when_fromseq_is_older_than_the_ring()
{
	start_daemon --ring-size 64K
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(); c.initialize()
    s = c.create()
    # 1.2 MB through a 64K ring; "done" appears once seq has written it
    # all, when at most a pipe's worth is still unread by the daemon.
    p = c.start(s["sessionId"], ["sh", "-c", "seq 1 200000; touch done; exec sleep 1000"],
                detached=True)["processId"]
    c.close()
    wait_until(lambda: os.path.exists(os.path.join(s["hostWorkspace"], "done")), "seq to finish")
    want = "".join("%d\n" % i for i in range(1, 200001)).encode()
    d = Client(); d.initialize()
    r = d.call("process/attach", {"processId": p, "fromSeq": 1})
    check(r["gap"] is True and r["firstSeq"] > 1, "no gap after 1.2 MB in a 64K ring", r)
    got, seq = b"", r["firstSeq"]
    while not got.endswith(b"\n200000\n"):
        n = d.note("process/output", p)
        check(n["seq"] == seq, "replay seq", n["seq"], "expected", seq)
        seq += 1
        got += base64.b64decode(n["dataBase64"])
    check(len(got) <= 3 * 65536 and want.endswith(got), "the replay is not the tail", len(got))
    # fromSeq within the ring: no gap, from there.
    e = Client(); e.initialize()
    r2 = e.call("process/attach", {"processId": p, "fromSeq": seq - 1})
    check(r2 == {"gap": False, "firstSeq": seq - 1}, r2)
    e.call("process/signal", {"processId": p, "signal": "KILL"})
    out, seqs, ex = e.output_until_exit(p)
    check(ex["signal"] == "KILL", ex)
run(main)
PY
	stop_daemon
}

test_stdin_reaches_the_process_and_eof_ends_it()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    sid = c.create()["sessionId"]
    p = c.start(sid, ["sh", "-c", "cat; echo done"], stdin=True)["processId"]
    c.call("process/write", {"processId": p, "dataBase64": b64("hello ")})
    c.call("process/write", {"processId": p, "dataBase64": b64(b"wor\0ld\n")})
    c.call("process/write", {"processId": p, "eof": True})
    out, seqs, ex = c.output_until_exit(p)
    check(out == b"hello wor\0ld\ndone\n" and ex["exitCode"] == 0, out, ex)
    # Without stdin: true there is nothing to write to.
    q = c.start(sid, ["sleep", "1000"])["processId"]
    check(c.error("process/write", {"processId": q, "dataBase64": b64("x")}) == -32602, "write to no stdin")
run(main)
PY
	stop_daemon
}

test_signal_term_ends_a_sleep_with_signal_term()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    sid = c.create()["sessionId"]
    r = c.start(sid, ["sleep", "1000"])
    # The host pid comes before the exec: wait for it to be the sleep.
    wait_until(lambda: cmdline(r["pid"]) == [b"sleep", b"1000"], "pid %s to be the sleep" % r["pid"])
    c.call("process/signal", {"processId": r["processId"], "signal": "TERM"})
    out, seqs, ex = c.output_until_exit(r["processId"])
    check(ex["signal"] == "TERM" and ex["exitCode"] is None and not ex["timedOut"], ex)
    wait_until(lambda: proc_stat(r["pid"]) is None, "the sleep to go")
    check(c.error("process/signal", {"processId": r["processId"], "signal": "TERM"}) == -32002, "signal after exit")
    check(c.error("process/signal", {"processId": r["processId"], "signal": "NOPE"}) == -32602, "bad signal")
run(main)
PY
	stop_daemon
}

test_pty_reports_its_size_and_a_resize_changes_it()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    sid = c.create()["sessionId"]
    p = c.start(sid, ["sh", "-c", "stty size; [ -t 0 ] && [ -t 1 ] && echo terminal; read x; stty size"],
                pty={"cols": 100, "rows": 30})["processId"]
    got = c.wait_output(p, "30 100")
    c.call("process/resize", {"processId": p, "cols": 120, "rows": 40})
    c.call("process/write", {"processId": p, "dataBase64": b64("\n")})
    out, seqs, ex = c.output_until_exit(p)
    out = got + out
    check(b"terminal" in out, "not a terminal:", out)
    check(out.replace(b"\r", b"").endswith(b"40 120\n"), "after resize:", out)
    check(ex["exitCode"] == 0, ex)
run(main)
PY
	stop_daemon
}

test_timeout_marks_timed_out_and_kills_the_process_group()
{
	start_daemon
	client <<'PY'
from serve_client import *
import time
def main():
    c = Client(); c.initialize()
    sid = c.create()["sessionId"]
    t = time.monotonic()
    r = c.start(sid, ["sh", "-c", "sleep 1001 & echo $!; wait"], timeoutMs=600)
    c.wait_output(r["processId"], "\n")
    wait_until(lambda: any(cmdline(k) == [b"sleep", b"1001"] for k in descendants(r["pid"])),
               "a background sleep under %d" % r["pid"])
    kids = descendants(r["pid"])
    out, seqs, ex = c.output_until_exit(r["processId"])
    took = time.monotonic() - t
    check(ex["timedOut"] is True and ex["signal"] == "KILL", ex)
    check(took < 5, "the 600 ms timeout took", took)
    wait_until(lambda: not still_alive(kids) and proc_stat(r["pid"]) is None,
               "the process group to be gone", 5)
    r = c.exec(sid, ["sleep", "1002"], timeoutMs=300)
    check(r["timedOut"] is True, r)
run(main)
PY
	stop_daemon
}

test_output_bytes_cap_stops_output_at_the_cap_and_says_so()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    sid = c.create()["sessionId"]
    p = c.start(sid, ["sh", "-c", "head -c 3000000 /dev/zero; echo end >&2"],
                outputBytesCap=100000)["processId"]
    data, capped = b"", []
    while True:
        n = c.note("process/output", p) if not any(
            m["method"] == "process/exited" for m in c.notes) or any(
            m["method"] == "process/output" for m in c.notes) else None
        if n is None:
            break
        data += base64.b64decode(n["dataBase64"])
        capped.append(n.get("capReached", False))
        if n.get("capReached"):
            break
    check(len(data) == 100000, "got", len(data), "bytes with a cap of 100000")
    check(capped[-1] is True and not any(capped[:-1]), "capReached", capped[-3:])
    out, seqs, ex = c.output_until_exit(p)
    check(out == b"", "output after the cap:", len(out))
    r = c.exec(sid, ["head", "-c", "50000", "/dev/zero"], outputBytesCap=1000)
    check(r["truncated"] is True and len(r["stdout"]) == 1000, r["truncated"], len(r["stdout"]))
run(main)
PY
	stop_daemon
}

test_session_policy_decides_network_and_read_only()
{
	mkdir -p "$T/www"
	echo served-on-loopback >"$T/www/hello.txt"
	start_http_server "$T/www"
	start_daemon
	HTTP_PORT=$http_port client <<'PY'
from serve_client import *
import os
def main():
    port = int(os.environ["HTTP_PORT"])
    c = Client(); c.initialize()
    # The default policy: the filtered network, its proxy variables set,
    # a loopback port not listed refused.
    sid = c.create(user="net", chat="default")["sessionId"]
    r = c.exec(sid, ["sh", "-c", "echo proxy=$HTTPS_PROXY; curl -sS -m 5 http://127.0.0.1:%d/hello.txt" % port])
    check(r["stdout"].startswith(b"proxy=http://127.0.0.1:"), "no proxy in a default session:", r)
    check(b"served-on-loopback" not in r["stdout"], "an unlisted loopback port was reached:", r)
    # network.localhost in the session's policy forwards that port.
    sid = c.create(user="net", chat="port", policy={"network": {"localhost": [port]}})["sessionId"]
    r = c.exec(sid, ["curl", "-sS", "-m", "5", "http://127.0.0.1:%d/hello.txt" % port])
    check(r["stdout"] == b"served-on-loopback\n", "network.localhost of the policy:", r)
    # network: false and read-only: true are the policy's to say.
    sid = c.create(user="net", chat="closed", policy={"network": False, "read-only": True})["sessionId"]
    r = c.exec(sid, ["sh", "-c", "echo proxy=$HTTPS_PROXY; : >written 2>/dev/null && echo wrote"])
    check(r["stdout"] == b"proxy=\n", "network false still has a proxy, or read-only wrote:", r)
run(main)
PY
	stop_daemon
}

test_session_pids_limit_makes_fork_fail_inside()
{
	if [ "$(id -u)" -eq 0 ] && ! [ -w /sys/fs/cgroup/pids ] && ! [ -w /sys/fs/cgroup/cgroup.subtree_control ]; then
		skip "root without a pids cgroup has no process limit"
	fi
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    sid = c.create(limits={"pids": 8})["sessionId"]
    r = c.exec(sid, ["sh", "-c", "for i in $(seq 40); do sleep 5 & done 2>&1; wait; echo forked"], timeoutMs=20000)
    check(r["stdout"] != b"forked\n" or r["stderr"], "40 forks under pids 8:", r)
    check(b"fork" in (r["stdout"] + r["stderr"]).lower() or b"resource" in (r["stdout"] + r["stderr"]).lower(), r)
run(main)
PY
	stop_daemon
}

test_session_memory_limit_kills_a_hog_with_137_or_fails_its_allocation()
{
	# Without a cgroup the limit is an address-space rlimit on every
	# process inside, the session's own helper too, which a sanitizer's
	# shadow memory cannot fit in.
	memory_cgroup || ! grep -q __asan_init "$AS" ||
		skip "a sanitizer build under RLIMIT_AS (no memory cgroup for this user)"
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    sid = c.create(limits={"memoryBytes": 64 << 20})["sessionId"]
    hog = "try:\n b = bytearray(300 << 20)\n print('survived')\nexcept MemoryError:\n print('MemoryError')"
    r = c.exec(sid, ["python3", "-c", hog], timeoutMs=30000)
    # A memory cgroup kills the hog (137 as a shell reports it); the
    # address-space rlimit of a user without one fails its allocation.
    check(r["stdout"] != b"survived\n", "a 300M hog survived a 64M limit", r)
    check(r["signal"] == "KILL" or r["exitCode"] == 137 or r["stdout"] == b"MemoryError\n", r)
    state = c.call("session/get", {"sessionId": sid})["state"]
    print("# memory hog: exit %s signal %s %r; the session is then %s"
          % (r["exitCode"], r["signal"], r["stdout"], state))
run(main)
PY
	grep '^#' "$T/client.out" >&2
	stop_daemon
}

test_max_sessions_and_the_65th_process_answer_limit_reached()
{
	start_daemon --max-sessions 1
	client <<'PY'
from serve_client import *
def main():
    c = Client(); c.initialize()
    sid = c.create("u", "one")["sessionId"]
    check(c.error("session/create", {"key": {"user": "u", "chat": "two"}}) == -32004, "a second session")
    check(c.create("u", "one")["sessionId"] == sid, "the same key still answers")
    for i in range(64):
        c.start(sid, ["sleep", "1000"], tag="n%d" % i)
    check(c.error("process/start", {"sessionId": sid, "argv": ["true"]}) == -32004, "the 65th process")
    check(c.error("process/exec", {"sessionId": sid, "argv": ["true"]}) == -32004, "the 65th exec")
    # Closing frees the slot for another key.
    c.call("session/close", {"sessionId": sid})
    c.create("u", "two")
run(main)
PY
	stop_daemon
}

test_session_close_leaves_no_process_behind()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os, subprocess
def listed(name):
    out = subprocess.run([os.environ["AGENT_SANDBOX"], "list"], capture_output=True, text=True).stdout
    return name in out
def main():
    c = Client(); c.initialize()
    sid = c.create()["sessionId"]
    c.start(sid, ["sh", "-c", "sleep 1003 & sleep 1004 & wait"], detached=True)
    c.start(sid, ["sh", "-c", "trap '' TERM; sleep 1005"])
    wait_until(lambda: sum(cmdline(p)[:1] == [b"sleep"] for p in descendants(int(os.environ["DAEMON_PID"]))) == 3,
               "three sleeps")
    check(listed("session-" + sid), "agent-sandbox list lacks session-" + sid)
    tree = descendants(int(os.environ["DAEMON_PID"]))
    holds = [p for p in tree if cmdline(p)[1:] == [b"--session-hold"]]
    check(len(holds) == 1, "the session's hold process:", holds)
    try:
        ns = os.readlink("/proc/%d/ns/pid" % holds[0])
    except OSError:
        ns = None
    c.call("session/close", {"sessionId": sid})
    check(not still_alive(tree), "left after session/close:", still_alive(tree))
    if ns:
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    check(os.readlink("/proc/%s/ns/pid" % name) != ns, "a process in its pid namespace:", name)
                except OSError:
                    pass
    check(not listed("session-" + sid), "agent-sandbox list still shows session-" + sid)
    check(c.call("session/get", {"sessionId": sid})["state"] == "closed", "state")
    check(c.error("process/exec", {"sessionId": sid, "argv": ["true"]}) == -32002, "exec in a closed session")
run(main)
PY
	stop_daemon
}

test_idle_session_expires_and_on_expire_delete_removes_the_workspace()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os, time
def main():
    c = Client(); c.initialize()
    s = c.create("u", "gone", lifecycle={"idleTimeoutS": 1, "onExpire": "delete"})
    k = c.create("u", "kept", lifecycle={"idleTimeoutS": 1})
    check(c.exec(s["sessionId"], ["touch", "f"])["exitCode"] == 0, "touch")
    t = time.monotonic()
    wait_until(lambda: c.call("session/get", {"sessionId": s["sessionId"]})["state"] == "expired",
               "the idle session to expire", 6)
    took = time.monotonic() - t
    check(took < 4, "expired after", took)
    wait_until(lambda: not os.path.exists(s["hostWorkspace"]), "onExpire delete to remove the workspace", 5)
    wait_until(lambda: c.call("session/get", {"sessionId": k["sessionId"]})["state"] == "expired", "retain", 6)
    check(os.path.isdir(k["hostWorkspace"]), "onExpire retain removed the workspace")
    check(c.error("process/exec", {"sessionId": s["sessionId"], "argv": ["true"]}) == -32002, "exec when expired")
run(main)
PY
	stop_daemon
}

test_busy_session_does_not_expire_while_a_process_runs()
{
	start_daemon
	client <<'PY'
from serve_client import *
import time
def main():
    c = Client(); c.initialize()
    sid = c.create(lifecycle={"idleTimeoutS": 1})["sessionId"]
    p = c.start(sid, ["sleep", "3"])["processId"]
    out, seqs, ex = c.output_until_exit(p)
    check(ex["exitCode"] == 0, "the process died with its idle session:", ex)
run(main)
PY
	stop_daemon
}

test_non_detached_process_dies_with_its_connection_and_detached_survives()
{
	start_daemon
	client <<'PY'
from serve_client import *
def main():
    a = Client(); a.initialize()
    sid = a.create()["sessionId"]
    tied = a.start(sid, ["sleep", "1006"])
    free = a.start(sid, ["sleep", "1007"], detached=True)
    a.close()
    wait_until(lambda: proc_stat(tied["pid"]) is None, "the non-detached process to die with its connection")
    check(proc_stat(free["pid"]) is not None, "the detached process died with the connection")
    b = Client(); b.initialize()
    procs = {p["processId"]: p["running"] for p in b.call("process/list", {"sessionId": sid})["processes"]}
    check(procs == {tied["processId"]: False, free["processId"]: True}, procs)
    b.call("process/attach", {"processId": free["processId"], "fromSeq": 1})
    b.call("process/signal", {"processId": free["processId"], "signal": "KILL"})
    out, seqs, ex = b.output_until_exit(free["processId"])
    check(ex["signal"] == "KILL", ex)
run(main)
PY
	stop_daemon
}

test_workspace_gc_removes_old_unused_workspaces_only()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os
def main():
    c = Client(); c.initialize()
    old = c.create("u", "old")
    live = c.create("u", "live")
    c.call("session/close", {"sessionId": old["sessionId"]})
    check(c.call("workspace/gc", {})["removed"] == [], "default retention removed a fresh workspace")
    r = c.call("workspace/gc", {"olderThanDays": 0})
    check(r["removed"] == [old["hostWorkspace"]], r)
    check(not os.path.exists(old["hostWorkspace"]), "still on disk")
    check(os.path.isdir(live["hostWorkspace"]), "gc removed a live session's workspace")
    # Another owner's gc never reaches ours.
    o = Client(); o.initialize(owner="other")
    c.call("session/close", {"sessionId": live["sessionId"]})
    check(o.call("workspace/gc", {"olderThanDays": 0})["removed"] == [], "another owner's gc")
    check(os.path.isdir(live["hostWorkspace"]), "removed by another owner")
run(main)
PY
	stop_daemon
}

run_tests
