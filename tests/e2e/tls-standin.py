#!/usr/bin/env python3
"""A loopback TLS server standing in for an API upstream in the credential
injection tests. It records every request head it receives (and the body)
to LOG, then answers by MODE:

  ok      200 with a small JSON body and "Connection: keep-alive"
  sse     an event stream: one event, then it waits until the file WAITFOR
          exists (the sandboxed client writes it once it got the event),
          then a second event; a proxy that buffers deadlocks here
  401     401 with a JSON error (as an API does for a bad key)
  plain   no TLS at all: records the raw bytes it gets and answers in
          plain HTTP, as a stripping man in the middle would

usage: tls-standin.py CERT KEY PORTFILE LOG MODE [WAITFOR]
"""
import os
import socket
import ssl
import sys
import threading
import time

cert, key, portfile, log, mode = sys.argv[1:6]
waitfor = sys.argv[6] if len(sys.argv) > 6 else None
lock = threading.Lock()


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None, None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head, body


def serve_plain(raw):
    raw.settimeout(5)
    try:
        data = raw.recv(65536)
        with lock, open(log, "ab") as f:
            f.write(b"PLAIN " + data + b"\n----\n")
        raw.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\nfrom-plaintext")
    except OSError:
        pass
    raw.close()


def serve(raw):
    if mode == "plain":
        serve_plain(raw)
        return
    try:
        conn = ctx.wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError) as e:
        with lock, open(log, "ab") as f:
            f.write(b"TLS-FAILED " + str(e).encode() + b"\n----\n")
        raw.close()
        return
    try:
        head, body = read_request(conn)
        if head is None:
            return
        with lock, open(log, "ab") as f:
            f.write(head + b"\r\n\r\n" + body + b"\n----\n")
        if mode == "sse":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         b"Connection: keep-alive\r\n\r\n")
            conn.sendall(b"event: one\ndata: first\n\n")
            for _ in range(300):
                if os.path.exists(waitfor):
                    break
                time.sleep(0.05)
            conn.sendall(b"event: two\ndata: second\n\n")
        elif mode == "401":
            msg = b'{"error": "bad key"}'
            conn.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\nConnection: keep-alive\r\n\r\n%s" % (len(msg), msg))
        else:
            msg = b'{"answer": "from-upstream"}\n'
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\nConnection: keep-alive\r\n"
                         b"Keep-Alive: timeout=60\r\n\r\n%s" % (len(msg), msg))
        # Keep-alive on purpose: the proxy must close, not the upstream.
        time.sleep(0.3)
    except (ssl.SSLError, OSError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
