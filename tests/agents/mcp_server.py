#!/usr/bin/env python3
"""A tiny MCP server for the bridge's tests: initialize, tools/list (two
tools, "echo" and "secret"), tools/call (echo returns its text). Every
message it receives is appended to LOG (one JSON line each), so a test sees
from outside what reached it.

    mcp_server.py LOG                  stdio: one JSON-RPC message a line
    mcp_server.py LOG --socket PATH    the same on each connection to PATH
"""
import json
import os
import socket
import sys
import threading

TOOLS = [
    {"name": "echo", "description": "returns its text",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "secret", "description": "must never be reached",
     "inputSchema": {"type": "object"}},
]


def answer(msg):
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        return None
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "test-mcp", "version": "1"}}
    elif method == "tools/list":
        # Two pages, as MCP pagination has them: every tool, then none.
        if (msg.get("params") or {}).get("cursor") == "end":
            result = {"tools": []}
        else:
            result = {"tools": TOOLS, "nextCursor": "end"}
    elif method == "tools/call":
        name = msg["params"]["name"]
        text = msg["params"].get("arguments", {}).get("text", "")
        if name == "echo":
            result = {"content": [{"type": "text", "text": text}]}
        else:
            result = {"content": [{"type": "text", "text": "SECRET-REACHED"}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no " + str(method)}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def serve(rfile, wfile, log):
    for line in rfile:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        with open(log, "a") as f:
            f.write(json.dumps(msg) + "\n")
        if not isinstance(msg, dict):
            continue
        out = answer(msg)
        if out is not None:
            wfile.write((json.dumps(out) + "\n").encode())
            wfile.flush()


def serve_conn(conn, log):
    with conn, conn.makefile("rb") as r, conn.makefile("wb") as w:
        serve(r, w, log)


def main():
    log = sys.argv[1]
    if len(sys.argv) == 4 and sys.argv[2] == "--socket":
        path = sys.argv[3]
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(8)
        with open(path + ".ready", "w"):
            pass
        while True:
            conn, _ = srv.accept()
            threading.Thread(target=serve_conn, args=(conn, log), daemon=True).start()
    with open(log, "a") as f:
        f.write(json.dumps({"started": os.getpid()}) + "\n")
    serve(sys.stdin.buffer, sys.stdout.buffer, log)


main()
