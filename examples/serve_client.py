#!/usr/bin/env python3
"""A platform's view of `agent-sandbox serve`, in the Python standard library.

Connects to the daemon, gets (or creates) the sandbox of one user's chat,
runs a command in it while its output streams in, writes and reads a file
in the chat's workspace, and closes the session; the workspace stays for
the next session of the same user and chat.

    agent-sandbox serve &                  # or: systemctl --user start agent-sandbox
    python3 examples/serve_client.py [--socket PATH] [--user NAME] [--chat NAME]

The protocol is JSON-RPC 2.0, one JSON object per line, on a unix socket.
Exits non-zero on any error.
"""

import argparse
import base64
import json
import os
import socket
import struct
import sys


class RpcError(Exception):
    """An error response: code, message, and the daemon's kind and detail."""

    def __init__(self, method, error):
        data = error.get("data") or {}
        self.code = error.get("code")
        self.kind = data.get("kind")
        detail = data.get("detail") or error.get("message")
        super().__init__(f"{method}: {detail} ({self.code}, {self.kind})")


class Client:
    """One connection. call() sends a request and returns its result;
    notifications that arrive in the meantime are kept, in order, for
    notifications()."""

    def __init__(self, path, own_daemon_only):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        if own_daemon_only:
            # The default socket may be under /tmp, where another user
            # could have been first: talk only to a daemon of our own uid.
            creds = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                         struct.calcsize("3i"))
            uid = struct.unpack("3i", creds)[1]
            if uid != os.geteuid():
                self.sock.close()
                raise PermissionError(f"the daemon on {path} runs as uid {uid}, not as us")
        self.reader = self.sock.makefile("rb")
        self.next_id = 1
        self.queued = []

    def _read(self):
        line = self.reader.readline()
        if not line:
            raise ConnectionError("the daemon closed the connection")
        return json.loads(line)

    def call(self, method, params=None):
        request_id = self.next_id
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": request_id, "method": method,
                   "params": params or {}}
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        while True:
            message = self._read()
            if "method" in message:          # a notification: keep it
                self.queued.append(message)
            elif message.get("id") == request_id:
                if "error" in message:
                    raise RpcError(method, message["error"])
                return message["result"]

    def notifications(self):
        """Every notification: first those that came during calls, then
        new ones as they arrive."""
        while True:
            if self.queued:
                yield self.queued.pop(0)
            else:
                message = self._read()
                if "method" in message:
                    yield message

    def close(self):
        self.reader.close()
        self.sock.close()


def default_socket():
    """Where `agent-sandbox serve` listens by default."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return os.path.join(runtime, "agent-sandbox", "api.sock")
    return f"/tmp/agent-sandbox-{os.geteuid()}/api.sock"


def printable(data):
    """Output of a sandboxed command is untrusted: decode it, and show
    control characters (a terminal acts on them) as escapes."""
    text = data.decode("utf-8", errors="replace")
    return "".join(ch if ch in "\n\t" or (ch.isprintable()) else repr(ch)[1:-1]
                   for ch in text)


def run_command(client, session_id, argv):
    """Starts argv in the session and prints its output as it arrives.
    Returns the process/exited notification's params."""
    started = client.call("process/start", {"sessionId": session_id, "argv": argv})
    process_id = started["processId"]
    print(f"started process {process_id} (host pid {started['pid']})")
    for note in client.notifications():
        params = note.get("params", {})
        if params.get("processId") != process_id:
            continue
        if note["method"] == "process/output":
            chunk = base64.b64decode(params["dataBase64"])
            for line in printable(chunk).splitlines():
                print(f"  [{params['stream']} #{params['seq']}] {line}")
        elif note["method"] == "process/exited":
            return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket")
    parser.add_argument("--user", default="example-user")
    parser.add_argument("--chat", default="example-chat")
    args = parser.parse_args()

    client = Client(args.socket or default_socket(), own_daemon_only=not args.socket)
    try:
        server = client.call("initialize", {
            "clientInfo": {"name": "serve_client.py", "version": "1"},
            "protocolVersion": "1",
        })
        print(f"connected to {server['serverInfo']['name']} "
              f"{server['serverInfo']['version']}")

        # Idempotent on the key: the same user and chat get the same
        # session, and a new session of them finds the same workspace.
        session = client.call("session/create",
                              {"key": {"user": args.user, "chat": args.chat}})
        session_id = session["sessionId"]
        print(f"session {session_id}, workspace {session['workspace']} "
              f"(on the host: {session['hostWorkspace']})")

        exited = run_command(client, session_id, [
            "sh", "-c",
            "for i in 1 2 3; do echo \"line $i\"; sleep 0.1; done; echo done >&2"])
        print(f"exit code {exited['exitCode']} in {exited['durationMs']} ms")
        if exited["exitCode"] != 0:
            raise RuntimeError("the command failed")

        # Files are confined to the workspace; paths are relative to it.
        text = "written by the platform\n"
        client.call("fs/write", {"sessionId": session_id, "path": "notes/hello.txt",
                                 "dataBase64": base64.b64encode(text.encode()).decode(),
                                 "createParents": True})
        read = client.call("fs/read", {"sessionId": session_id, "path": "notes/hello.txt"})
        content = base64.b64decode(read["dataBase64"]).decode()
        print(f"read back {read['size']} bytes: {content.strip()}")
        if content != text:
            raise RuntimeError("fs/read returned other bytes than fs/write wrote")

        # The sandbox ends; the workspace is kept for the next session.
        client.call("session/close", {"sessionId": session_id})
        print("session closed, workspace kept")
    finally:
        client.close()


if __name__ == "__main__":
    try:
        main()
    except (RpcError, OSError, RuntimeError, ValueError, KeyError) as e:
        print(f"serve_client.py: {e}", file=sys.stderr)
        sys.exit(1)
