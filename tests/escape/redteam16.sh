#!/bin/sh
# Escape attempts against `agent-sandbox serve` by a hostile client of the
# API and a hostile agent inside a session: requests pipelined without
# reading their answers, output collected without bound, and what the
# agent leaves in its workspace for the daemon to act on. Each outcome is
# checked from outside: the daemon's memory, the host's files.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"
. "$(dirname "$0")/../e2e/serve-lib"

test_pipelined_reads_never_read_back_do_not_grow_the_daemon_without_bound()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os, time
def rss():
    for l in open("/proc/%s/status" % os.environ["DAEMON_PID"]):
        if l.startswith("VmRSS"):
            return int(l.split()[1]) // 1024
def main():
    c = Client(); c.initialize()
    s = c.create()
    with open(s["hostWorkspace"] + "/big", "wb") as f:
        f.write(os.urandom(1 << 20))
    before = rss()
    # One write of 300 reads of 1 MiB: the daemon must stop taking them
    # once its queue for this client is full, not answer them all.
    line = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "fs/read",
                       "params": {"sessionId": s["sessionId"], "path": "big"}}) + "\n"
    c.send_raw(line.encode() * 300)
    time.sleep(1.5)
    grown = rss() - before
    check(grown < 100, "the daemon grew by %d MiB for a client that does not read" % grown)
    # Read back, every request is answered.
    n = 0
    while n < 300:
        m = c.read()
        check(m is not None, "the connection ended after", n)
        n += m.get("id") == 5
    check(c.call("session/list")["sessions"][0]["state"] == "ready", "after the flood")
run(main)
PY
	stop_daemon
}

test_exec_with_a_huge_output_cap_does_not_collect_output_without_bound()
{
	start_daemon
	client <<'PY'
from serve_client import *
import os
def peak():
    for l in open("/proc/%s/status" % os.environ["DAEMON_PID"]):
        if l.startswith("VmHWM"):
            return int(l.split()[1]) // 1024
def main():
    c = Client(timeout=60); c.initialize()
    sid = c.create()["sessionId"]
    before = peak()
    # The agent prints 100 MiB; process/exec would hold all of it, and
    # its base64, in one answer line.
    try:
        r = c.exec(sid, ["head", "-c", "100M", "/dev/zero"], outputBytesCap=1 << 40)
        check(r["truncated"] and len(r["stdout"]) <= 16 << 20, "collected", len(r["stdout"]))
    except RpcError as e:
        check(e.code in (-32602, -32004), "refused with", e.code)
    grown = peak() - before
    check(grown < 100, "the daemon's peak grew by %d MiB for one process/exec" % grown)
    check(c.exec(sid, ["echo", "ok"])["stdout"] == b"ok\n", "exec after")
run(main)
PY
	stop_daemon
}

run_tests
