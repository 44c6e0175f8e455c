#!/usr/bin/python3
"""Loopback stand-in for the two model APIs the agent CLIs speak: Anthropic's
Messages API (Claude Code) and OpenAI's Responses API (Codex), so the tests
run the real CLIs with no network and no key. It plays a scripted turn:
when the request offers a shell tool and --command is given, the first answer
asks the tool to run that command; once a tool result comes back, the answer
is text quoting it, so the transcript shows what the tool saw. Every request
(method, path, headers, body) is appended to --record as one JSON line.

  standin.py --port-file F --record F [--command CMD] [--api-key KEY]
             [--host ADDR] [--port N] [--cert C --key K]

The port it listens on (N, or a free one) is written to --port-file once
it accepts connections. --api-key makes any other key get the API's 401.
--cert/--key serve TLS instead of plain HTTP.

One stand-in serves many runs: a line of the prompt may choose the scenario,
overriding --command. The marker is a line `STANDIN: WHAT ARGS` anywhere in a
user message's text (not in tool results):

  STANDIN: text            a plain answer (HELLO), the default
  STANDIN: bash CMD        a Bash tool_use (Claude) / shell call (Codex) of CMD,
                           then text quoting the tool's output
  STANDIN: write PATH      a Write tool_use creating PATH (content WRITTEN),
                           then text quoting the tool result (Claude only;
                           the CLI's refusal when Write is disallowed)
  STANDIN: thinking        a thinking block, then the plain answer (Claude)
  STANDIN: outage [CODE]   every request answered with HTTP CODE (500; 529
                           is Anthropic's "overloaded")
  STANDIN: hang            the request is read and never answered
  STANDIN: mcp SERVER TOOL [JSON]
                           call the MCP tool mcp__SERVER__TOOL with the JSON
                           object as input; when Claude Code defers it behind
                           ToolSearch, first a ToolSearch tool_use
                           "select:mcp__SERVER__TOOL"; then text quoting the
                           tool's result; Codex gets an `exec` script calling
                           tools.mcp__SERVER__TOOL
"""

import argparse
import http.server
import json
import os
import ssl
import sys
import threading
import time

RECORD_LOCK = threading.Lock()
ARGS = None

# The text every plain answer carries, so a test can tell the model spoke.
HELLO = "hello from the stand-in"
# Marks the quoted tool output in the second turn's answer.
TOOL_MARK = "tool output was:"


# What a Write scenario puts in the file.
WRITTEN = "written by the stand-in\n"
MARKER = "STANDIN:"


def user_texts(items):
    """The text of every user message (strings and text blocks), oldest
    first: where a prompt marker may be. Tool results are not searched, so
    a command's output cannot choose the next scenario."""
    out = []
    for m in items or []:
        if not isinstance(m, dict) or m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            for b in c:
                if isinstance(b, dict) and b.get("type") in ("text", "input_text") \
                        and isinstance(b.get("text"), str):
                    out.append(b["text"])
    return out


def scenario(items):
    """(what, args) from the first marker line, or one made from --command."""
    for text in user_texts(items):
        for line in text.splitlines():
            line = line.strip()
            if line.startswith(MARKER):
                rest = line[len(MARKER):].strip()
                what, _, args = rest.partition(" ")
                return what, args.strip()
    if ARGS.command:
        return "bash", ARGS.command
    return "text", ""


def hang(handler):
    """Never answer; the connection's thread waits until the client goes."""
    while True:
        time.sleep(3600)


def outage(handler, args, anthropic):
    try:
        code = int(args or 500)
    except ValueError:
        code = 500
    if anthropic:
        kind = "overloaded_error" if code == 529 else "api_error"
        handler.send_json(code, {"type": "error", "error": {"type": kind,
                                                            "message": "stand-in outage"}})
    else:
        handler.send_json(code, {"error": {"message": "stand-in outage", "type": "server_error",
                                           "code": "server_error"}})


def record(handler, body):
    entry = {
        "method": handler.command,
        "path": handler.path,
        "headers": {k.lower(): v for k, v in handler.headers.items()},
        "body": body.decode("utf-8", "replace"),
    }
    with RECORD_LOCK:
        with open(ARGS.record, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode()


# --- Anthropic Messages API -------------------------------------------------


def anthropic_tool_results(messages):
    """{tool_use_id: text} of every tool_result in the conversation."""
    found = {}
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            c = block.get("content")
            if isinstance(c, list):
                c = "".join(
                    x.get("text", "") for x in c if isinstance(x, dict)
                )
            found[block.get("tool_use_id")] = c if isinstance(c, str) else json.dumps(c)
    return found


def anthropic_plan(req):
    """What to answer: ("tool", name, id, input), ("thinking", text) or
    ("text", text)."""
    tools = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
    messages = req.get("messages") or []
    results = anthropic_tool_results(messages)
    what, args = scenario(messages)
    final = results.get("toolu_standin01")
    if final is not None:
        return ("text", "%s %s %s" % (HELLO, TOOL_MARK, final))
    if what == "bash" and "Bash" in tools:
        return ("tool", "Bash", "toolu_standin01",
                {"command": args, "description": "run the test command"})
    if what == "write" and "Write" in tools:
        return ("tool", "Write", "toolu_standin01", {"file_path": args, "content": WRITTEN})
    if what == "write" and tools:
        # Without Write on offer (disallowed), ask for it all the same: the
        # CLI must refuse a tool it did not offer.
        return ("tool", "Write", "toolu_standin01", {"file_path": args, "content": WRITTEN})
    if what == "mcp" and tools:
        server, _, rest = args.partition(" ")
        tool, _, arg = rest.strip().partition(" ")
        name = "mcp__%s__%s" % (server, tool)
        try:
            tool_input = json.loads(arg) if arg.strip() else {}
        except ValueError:
            tool_input = {}
        if name in tools or "toolu_standin_search" in results or "ToolSearch" not in tools:
            return ("tool", name, "toolu_standin01", tool_input)
        return ("tool", "ToolSearch", "toolu_standin_search",
                {"query": "select:" + name, "max_results": 1})
    if what == "thinking":
        return ("thinking", "the stand-in thinks before it answers")
    return ("text", HELLO)


def anthropic_blocks(plan):
    kind = plan[0]
    if kind == "tool":
        _, name, tid, tool_input = plan
        return [{"type": "tool_use", "id": tid, "name": name, "input": tool_input}], "tool_use"
    if kind == "thinking":
        return [{"type": "thinking", "thinking": plan[1], "signature": "c3RhbmRpbg=="},
                {"type": "text", "text": HELLO}], "end_turn"
    return [{"type": "text", "text": plan[1]}], "end_turn"


def anthropic_messages(handler, req):
    what, args = scenario(req.get("messages"))
    if what == "hang":
        hang(handler)
    if what == "outage":
        outage(handler, args, True)
        return
    model = req.get("model", "claude-standin")
    blocks, stop = anthropic_blocks(anthropic_plan(req))
    usage = {"input_tokens": 10, "output_tokens": 5,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    if not req.get("stream"):
        handler.send_json(200, {
            "id": "msg_standin", "type": "message", "role": "assistant",
            "model": model, "content": blocks, "stop_reason": stop,
            "stop_sequence": None, "usage": usage,
        })
        return
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_standin", "type": "message", "role": "assistant",
        "model": model, "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": dict(usage, output_tokens=1)}})]
    for i, b in enumerate(blocks):
        if b["type"] == "thinking":
            out.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "thinking",
                                                                     "thinking": "",
                                                                     "signature": ""}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "thinking_delta",
                                                             "thinking": b["thinking"]}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "signature_delta",
                                                             "signature": b["signature"]}}))
        elif b["type"] == "text":
            out.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            out.append(sse("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": dict(b, input={})}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(b["input"])}}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(sse("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    handler.send_sse(out)


# --- OpenAI Responses API ---------------------------------------------------

# Function tools that run a shell command, by the names Codex versions used.
SHELL_TOOLS = ("exec_command", "shell", "shell_command")


def openai_tool_names(req):
    """Every tool the request offers, as (type, name), namespaces flattened.
    Codex 0.169 sends its tools in an `additional_tools` input item, grouped
    in namespaces; older versions put them in `tools`."""
    found = []

    def walk(tools):
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            if t.get("type") == "namespace":
                walk(t.get("tools"))
            else:
                found.append((t.get("type"), t.get("name") or t.get("type")))

    walk(req.get("tools"))
    for it in req.get("input") or []:
        if isinstance(it, dict) and isinstance(it.get("tools"), list):
            walk(it["tools"])
    return found


def openai_tool_result(items):
    found = None
    for it in items:
        if isinstance(it, dict) and it.get("type") in ("function_call_output",
                                                        "custom_tool_call_output",
                                                        "local_shell_call_output"):
            out = it.get("output")
            if isinstance(out, dict):
                out = out.get("content", json.dumps(out))
            if isinstance(out, list):
                out = "".join(x.get("text", "") for x in out if isinstance(x, dict))
            found = out if isinstance(out, str) else json.dumps(out)
    return found


def openai_tool_call(req, command):
    """The item that asks Codex to run --command, in the form its tools take:
    the code-mode `exec` tool (JavaScript calling tools.exec_command), else a
    plain shell function."""
    names = openai_tool_names(req)
    kinds = {n: t for t, n in names}
    if kinds.get("exec") == "custom":
        script = ("const r = await tools.exec_command(%s);\n"
                  "text(r.output);\n" % json.dumps({"cmd": command, "login": False}))
        return {"type": "custom_tool_call", "id": "ctc_standin01", "call_id": "call_standin01",
                "name": "exec", "input": script, "status": "completed"}
    for n in SHELL_TOOLS:
        if n in kinds:
            if n == "exec_command":
                args = {"cmd": command, "login": False}
            elif n == "shell_command":
                args = {"command": command}
            else:
                args = {"command": ["bash", "-c", command]}
            return {"type": "function_call", "id": "fc_standin01", "call_id": "call_standin01",
                    "name": n, "arguments": json.dumps(args), "status": "completed"}
    return None


def openai_mcp_call(req, args):
    """Codex defers MCP tools behind its code-mode `exec` tool: a script
    calling tools.mcp__SERVER__TOOL(input) and printing the result."""
    kinds = {n: t for t, n in openai_tool_names(req)}
    if kinds.get("exec") != "custom":
        return None
    server, _, rest = args.partition(" ")
    tool, _, arg = rest.strip().partition(" ")
    try:
        tool_input = json.loads(arg) if arg.strip() else {}
    except ValueError:
        tool_input = {}
    script = ("const r = await tools[%s](%s);\ntext(JSON.stringify(r));\n"
              % (json.dumps("mcp__%s__%s" % (server, tool)), json.dumps(tool_input)))
    return {"type": "custom_tool_call", "id": "ctc_standin01", "call_id": "call_standin01",
            "name": "exec", "input": script, "status": "completed"}


def openai_items(req):
    items = req.get("input")
    if not isinstance(items, list):
        items = []
    result = openai_tool_result(items)
    what, args = scenario(items)
    if result is None and what == "bash" and args:
        call = openai_tool_call(req, args)
        if call:
            return [call]
    if result is None and what == "mcp":
        call = openai_mcp_call(req, args)
        if call:
            return [call]
    text = HELLO if result is None else "%s %s %s" % (HELLO, TOOL_MARK, result)
    return [{"type": "message", "id": "msg_standin01", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": text, "annotations": []}]}]


def openai_responses(handler, req):
    what, args = scenario(req.get("input") if isinstance(req.get("input"), list) else [])
    if what == "hang":
        hang(handler)
    if what == "outage":
        outage(handler, args, False)
        return
    items = openai_items(req)
    model = req.get("model", "gpt-standin")
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    base = {"id": "resp_standin", "object": "response", "created_at": 0, "model": model}
    done = dict(base, status="completed", output=items, usage=usage)
    if req.get("stream") is False:
        handler.send_json(200, done)
        return
    out = [sse("response.created", {"type": "response.created", "sequence_number": 0,
                                    "response": dict(base, status="in_progress", output=[])})]
    for i, it in enumerate(items):
        if it["type"] == "message":
            text = it["content"][0]["text"]
            out.append(sse("response.output_item.added", {
                "type": "response.output_item.added", "output_index": i,
                "item": dict(it, status="in_progress", content=[])}))
            out.append(sse("response.content_part.added", {
                "type": "response.content_part.added", "item_id": it["id"], "output_index": i,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
            out.append(sse("response.output_text.delta", {
                "type": "response.output_text.delta", "item_id": it["id"], "output_index": i,
                "content_index": 0, "delta": text}))
            out.append(sse("response.output_text.done", {
                "type": "response.output_text.done", "item_id": it["id"], "output_index": i,
                "content_index": 0, "text": text}))
        else:
            out.append(sse("response.output_item.added", {
                "type": "response.output_item.added", "output_index": i, "item": it}))
        out.append(sse("response.output_item.done", {
            "type": "response.output_item.done", "output_index": i, "item": it}))
    out.append(sse("response.completed", {"type": "response.completed", "response": done}))
    handler.send_sse(out)


# --- HTTP -------------------------------------------------------------------


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    tls = None

    def get_request(self):
        # The TLS handshake happens in the connection's own thread (see
        # Handler.setup), so a client that never speaks stalls no other.
        sock, addr = self.socket.accept()
        if self.tls:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        sys.stderr.write("standin: connection from %s failed: %s\n"
                         % (client_address, sys.exc_info()[1]))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Seconds a connection may stay silent: a stuck client fails, never hangs.
    timeout = 60

    def setup(self):
        super().setup()
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()

    def log_message(self, *args):
        pass

    def authorized(self, path):
        """With --api-key, only that key is accepted (as x-api-key or a
        bearer token), the way the real APIs answer a wrong one."""
        if not ARGS.api_key:
            return True
        bearer = self.headers.get("authorization") or ""
        if bearer.startswith("Bearer "):
            bearer = bearer[len("Bearer "):]
        if ARGS.api_key in (self.headers.get("x-api-key"), bearer):
            return True
        if "/messages" in path:
            self.send_json(401, {"type": "error", "error": {"type": "authentication_error",
                                                            "message": "invalid x-api-key"}})
        else:
            self.send_json(401, {"error": {"message": "Incorrect API key provided",
                                           "type": "invalid_request_error",
                                           "code": "invalid_api_key"}})
        return False

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_sse(self, events):
        # Closing ends the stream, so no length or chunking is needed.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for e in events:
            self.wfile.write(e)
            self.wfile.flush()
        self.close_connection = True

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def do_GET(self):
        record(self, b"")
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
        else:
            self.send_json(404, {"error": {"type": "not_found", "message": "not here"}})

    def do_HEAD(self):
        record(self, b"")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.read_body()
        record(self, body)
        path = self.path.split("?")[0]
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            req = {}
        if not isinstance(req, dict):
            req = {}
        if not self.authorized(path):
            return
        if path.endswith("/v1/messages/count_tokens"):
            self.send_json(200, {"input_tokens": 10})
        elif path.endswith("/v1/messages"):
            anthropic_messages(self, req)
        elif path.endswith("/responses"):
            openai_responses(self, req)
        else:
            self.send_json(404, {"error": {"type": "not_found", "message": "not here"}})


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--record", required=True)
    p.add_argument("--command", default="")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--api-key", help="answer 401 to any other key")
    p.add_argument("--cert", help="serve TLS with this certificate (PEM)")
    p.add_argument("--key", help="the certificate's private key (PEM)")
    ARGS = p.parse_args()
    server = Server((ARGS.host, ARGS.port), Handler)
    if ARGS.cert:
        server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.tls.load_cert_chain(ARGS.cert, ARGS.key)
    # The port appears whole or not at all.
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
