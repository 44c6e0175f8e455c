"""A small JSON-RPC client of `agent-sandbox serve` for the tests
(tests/e2e/serve.sh, tests/escape/serve.sh), and the outside checks they
share: which host processes descend from the daemon, which are still
alive. Standard library only; every read has a deadline, so a daemon that
stops answering fails the test instead of hanging it.

As a command: `serve_client.py wait SOCKET` waits (polling connect) until
the daemon accepts; `serve_client.py tree PID` prints the descendants of
PID, one "pid starttime" a line; `serve_client.py alive FILE` prints those
of such a list still running.
"""
import base64
import json
import os
import socket
import sys
import time


class RpcError(Exception):
    def __init__(self, error):
        self.code = error.get("code")
        self.data = error.get("data") or {}
        super().__init__("%s %s" % (self.code, json.dumps(error)))


class Fail(Exception):
    pass


def check(cond, *what):
    if not cond:
        raise Fail(" ".join(str(w) for w in what))


def connect(path, timeout=10.0):
    """Connects to the daemon's socket, waiting (polling) until it listens."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Client:
    def __init__(self, path=None, timeout=30.0, sock=None):
        self.path = path or os.environ["SOCK"]
        self.sock = sock or connect(self.path)
        self.sock.settimeout(timeout)
        self.buf = b""
        self.next_id = 0
        self.notes = []  # notifications not yet consumed
        self.answers = {}  # id -> message, answered out of order

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_raw((json.dumps(msg) + "\n").encode())
        return self.next_id

    def read(self):
        """The next message, or None at the end of the connection."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def pump(self):
        """Reads one message into answers or notes; False at the end."""
        m = self.read()
        if m is None:
            return False
        if "id" in m and "method" not in m:
            self.answers[m["id"]] = m
        else:
            self.notes.append(m)
        return True

    def answer(self, rid):
        while rid not in self.answers:
            check(self.pump(), "the daemon closed the connection before answering", rid)
        m = self.answers.pop(rid)
        if "error" in m:
            raise RpcError(m["error"])
        return m["result"]

    def call(self, method, params=None):
        return self.answer(self.send(method, params))

    def error(self, method, params=None):
        """The error code a call must fail with."""
        try:
            r = self.call(method, params)
        except RpcError as e:
            return e.code
        raise Fail("%s %s succeeded: %s" % (method, json.dumps(params), json.dumps(r)[:300]))

    def initialize(self, owner=None):
        p = {"protocolVersion": "1", "clientInfo": {"name": "tests", "version": "1"}}
        if owner:
            p["owner"] = owner
        return self.call("initialize", p)

    def create(self, user="u", chat="c", **extra):
        p = {"key": {"user": user, "chat": chat}}
        p.update(extra)
        return self.call("session/create", p)

    def exec(self, sid, argv, **extra):
        p = {"sessionId": sid, "argv": argv}
        p.update(extra)
        r = self.call("process/exec", p)
        r["stdout"] = base64.b64decode(r["stdoutBase64"])
        r["stderr"] = base64.b64decode(r["stderrBase64"])
        return r

    def start(self, sid, argv, **extra):
        p = {"sessionId": sid, "argv": argv}
        p.update(extra)
        return self.call("process/start", p)

    def note(self, method, pid=None):
        """The next notification of method (for process pid), in order."""
        while True:
            for i, m in enumerate(self.notes):
                if m["method"] == method and (pid is None or m["params"].get("processId") == pid):
                    return self.notes.pop(i)["params"]
            check(self.pump(), "the connection ended before", method)

    def output_until_exit(self, pid):
        """(bytes of output, seqs, exited params) of process pid."""
        data, seqs = [], []
        while True:
            for i, m in enumerate(self.notes):
                if m["params"].get("processId") != pid:
                    continue
                self.notes.pop(i)
                if m["method"] == "process/exited":
                    return b"".join(data), seqs, m["params"]
                seqs.append(m["params"]["seq"])
                data.append(base64.b64decode(m["params"]["dataBase64"]))
                break
            else:
                check(self.pump(), "the connection ended before process/exited of", pid)

    def agent_events(self, run_id):
        """(events in order, agent/completed params) of run run_id; the
        seqs must run from 1 without gaps."""
        events = []
        while True:
            for i, m in enumerate(self.notes):
                p = m["params"]
                if p.get("runId") != run_id:
                    continue
                self.notes.pop(i)
                if m["method"] == "agent/completed":
                    return events, p
                check(p["seq"] == len(events) + 1, "agent/event seq", p["seq"], "after", len(events))
                events.append(p["event"])
                break
            else:
                check(self.pump(), "the connection ended before agent/completed of", run_id)

    def agent_run(self, sid, prompt, **extra):
        """Runs the agent to its end: (events, completed)."""
        p = {"sessionId": sid, "agent": extra.pop("agent", "claude"), "prompt": prompt}
        p.update(extra)
        return self.agent_events(self.call("agent/run", p)["runId"])

    def wait_output(self, pid, text):
        """Output of pid, read until it holds text."""
        got = b""
        while text.encode() not in got:
            got += base64.b64decode(self.note("process/output", pid)["dataBase64"])
        return got


def b64(data):
    if isinstance(data, str):
        data = data.encode()
    return base64.b64encode(data).decode()


# --- Outside checks ---


def proc_stat(pid):
    """(ppid, starttime) of a host process, or None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return int(fields[1]), fields[19]


def descendants(root):
    """{pid: starttime} of every live process under root (not root)."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st:
                children.setdefault(st[0], []).append((int(name), st[1]))
    out, todo = {}, [root]
    while todo:
        for pid, start in children.get(todo.pop(), []):
            out[pid] = start
            todo.append(pid)
    return out


def still_alive(procs):
    """Those of {pid: starttime} that still run (the same process)."""
    return {p: s for p, s in procs.items() if (proc_stat(p) or (0, None))[1] == s}


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")[:-1]
    except OSError:
        return []


def wait_until(cond, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise Fail("timed out waiting: " + what)
        time.sleep(0.02)


def run(main):
    """Runs a test body; a failure prints its reason and exits 1."""
    try:
        main()
    except (Fail, RpcError, OSError, ValueError, KeyError) as e:
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "wait":
        connect(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 10.0).close()
    elif cmd == "tree":
        for pid, start in sorted(descendants(int(sys.argv[2])).items()):
            print(pid, start)
    elif cmd == "alive":
        with open(sys.argv[2]) as f:
            procs = dict((int(a), b) for a, b in (line.split() for line in f if line.strip()))
        for pid in sorted(still_alive(procs)):
            print(pid, b" ".join(cmdline(pid)).decode(errors="replace"))
    else:
        sys.exit("usage: serve_client.py wait SOCKET | tree PID | alive FILE")
