#!/bin/sh
# The proxy's relay under load: large transfers through a CONNECT tunnel
# arrive intact in both directions, a half-closed tunnel still carries the
# other direction to its end, and many tunnels at once each carry their own
# bytes. A TCP server on the host's loopback stands in for the world; it
# records what it received and sent, and the checks compare that, from
# outside, with what the client inside saw.
. "$(dirname "$0")/../lib.sh"

# The server. The first line a connection sends says what it wants:
#   up NAME          read to the end, record the SHA-256 of it in NAME
#   down N NAME      wait for the end of the input, then send N bytes and
#                    record their SHA-256 in NAME
#   first N NAME     send N bytes, end the output, then read to the end and
#                    record the SHA-256 of what came in NAME
#   echo             send back whatever comes, until the end
start_relay_server()
{
	portfile=$(mktemp "$T/port.XXXXXX")
	rm -f "$portfile"
	python3 -c '
import hashlib, os, socket, socketserver, sys
out = sys.argv[1]
def record(name, digest):
    with open(os.path.join(out, os.path.basename(name)), "w") as f:
        f.write(digest + "\n")
def data(n):
    return (hashlib.sha256(str(n).encode()).digest() * (n // 32 + 1))[:n]
class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        words = self.rfile.readline().decode().split()
        h = hashlib.sha256()
        if words[0] == "up":
            while chunk := self.rfile.read1(1 << 20):
                h.update(chunk)
            record(words[1], h.hexdigest())
        elif words[0] == "down":
            while self.rfile.read1(1 << 20):
                pass
            d = data(int(words[1]))
            self.connection.sendall(d)
            record(words[2], hashlib.sha256(d).hexdigest())
        elif words[0] == "first":
            self.connection.sendall(data(int(words[1])))
            self.connection.shutdown(socket.SHUT_WR)
            while chunk := self.rfile.read1(1 << 20):
                h.update(chunk)
            record(words[2], h.hexdigest())
        elif words[0] == "echo":
            while chunk := self.rfile.read1(1 << 16):
                self.connection.sendall(chunk)
class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    request_queue_size = 1024
server = Server(("127.0.0.1", 0), Handler)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
' "$T/seen" "$portfile" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	mkdir -p "$T/seen"
	for _ in $(seq 100); do
		[ -s "$portfile" ] && break
		sleep 0.05
	done
	port=$(cat "$portfile" 2>/dev/null) || fail "the test server did not start"
	cat >.agent-sandbox.json <<JSON
{"network": {"allow": ["relay.test"], "resolve": {"relay.test": "127.0.0.1:$port"}}}
JSON
	approve_config
	# The client inside: opens a CONNECT tunnel through $HTTPS_PROXY.
	cat >client.py <<'PY'
import hashlib, os, socket, sys
def tunnel(port, refused=None):
    proxy = int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1].strip("/"))
    s = socket.create_connection(("127.0.0.1", proxy))
    s.sendall(b"CONNECT relay.test:%d HTTP/1.1\r\nHost: relay.test:%d\r\n\r\n" % (port, port))
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        c = s.recv(1)
        if not c:
            sys.exit("the proxy closed the tunnel: %r" % head)
        head += c
    if not head.startswith(b"HTTP/1.1 200"):
        if refused is not None:
            refused.append(head + s.recv(4096))
            return None
        sys.exit("refused: %r" % head)
    return s
def data(n):
    return (hashlib.sha256(str(n).encode()).digest() * (n // 32 + 1))[:n]
def read_all(s):
    h, n = hashlib.sha256(), 0
    while chunk := s.recv(1 << 20):
        h.update(chunk)
        n += len(chunk)
    return h.hexdigest(), n
PY
}

test_a_large_upload_arrives_intact()
{
	start_relay_server
	sbx python3 -c '
import hashlib, os, sys
exec(open("client.py").read())
s = tunnel(int(sys.argv[1]))
s.sendall(b"up upload\n")
h = hashlib.sha256()
for _ in range(64):
    block = os.urandom(1 << 20)
    h.update(block)
    s.sendall(block)
s.shutdown(socket.SHUT_WR)
read_all(s)
print(h.hexdigest())
' "$port"
	expect_status 0
	[ -s "$T/seen/upload" ] || fail "the server recorded nothing"
	[ "$(cat "$T/seen/upload")" = "$(out)" ] ||
		fail "sent $(out), the server received $(cat "$T/seen/upload")"
}

test_a_large_download_arrives_intact_after_the_client_half_closed()
{
	start_relay_server
	# The client ends its side first; the 64 MiB answer comes after.
	sbx python3 -c '
import sys
exec(open("client.py").read())
s = tunnel(int(sys.argv[1]))
s.sendall(b"down 67108864 download\n")
s.shutdown(socket.SHUT_WR)
digest, n = read_all(s)
print(digest, n)
' "$port"
	expect_status 0
	[ -s "$T/seen/download" ] || fail "the server recorded nothing"
	expect_out "$(cat "$T/seen/download") 67108864"
}

test_the_client_keeps_sending_after_the_server_half_closed()
{
	start_relay_server
	sbx python3 -c '
import hashlib, os, sys
exec(open("client.py").read())
s = tunnel(int(sys.argv[1]))
s.sendall(b"first 1048576 rest\n")
got, n = read_all(s)
print(got == hashlib.sha256(data(1048576)).hexdigest(), n)
# The server has ended its side; ours still carries 16 MiB.
h = hashlib.sha256()
for _ in range(16):
    block = os.urandom(1 << 20)
    h.update(block)
    s.sendall(block)
s.shutdown(socket.SHUT_WR)
s.recv(1)
print(h.hexdigest())
' "$port"
	expect_status 0
	[ "$(head -1 "$T/out")" = "True 1048576" ] || fail "the server's part was not intact: $(out)"
	[ -s "$T/seen/rest" ] || fail "the server recorded nothing"
	[ "$(tail -1 "$T/out")" = "$(cat "$T/seen/rest")" ] ||
		fail "sent $(tail -1 "$T/out"), the server received $(cat "$T/seen/rest")"
}

test_many_tunnels_at_once_each_carry_their_own_bytes()
{
	start_relay_server
	# 300 tunnels open together, then each echoes 64 KiB of its own.
	sbx python3 -c '
import os, selectors, sys
exec(open("client.py").read())
port = int(sys.argv[1])
socks = [tunnel(port) for _ in range(300)]
want, got = {}, {}
sel = selectors.DefaultSelector()
for s in socks:
    payload = os.urandom(65536)
    s.sendall(b"echo\n")
    s.setblocking(False)
    want[s] = payload
    got[s] = b""
    sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [payload, 0])
while sel.get_map():
    for key, ev in sel.select(timeout=30) or sys.exit("stalled"):
        s, state = key.fileobj, key.data
        if ev & selectors.EVENT_WRITE and state[1] < len(state[0]):
            state[1] += s.send(state[0][state[1]:state[1] + 16384])
            if state[1] == len(state[0]):
                sel.modify(s, selectors.EVENT_READ, state)
        if ev & selectors.EVENT_READ:
            chunk = s.recv(65536)
            if not chunk:
                sys.exit("a tunnel closed early")
            got[s] += chunk
            if len(got[s]) >= len(want[s]):
                sel.unregister(s)
bad = sum(got[s] != want[s] for s in socks)
print("tunnels", len(socks), "mismatched", bad)
' "$port"
	expect_status 0
	expect_out "tunnels 300 mismatched 0"
}

test_a_tunnel_past_the_descriptor_limit_is_refused_on_record()
{
	start_relay_server
	# Three tunnels, then the host process is left three descriptors
	# (prlimit from outside): the next tunnel's pipes do not fit.
	"$AS" python3 -c '
import os, sys, time
exec(open("client.py").read())
port = int(sys.argv[1])
held = [tunnel(port) for _ in range(3)]
for s in held:
    s.sendall(b"echo\n")
open("ready", "w").close()
while not os.path.exists("go"):
    time.sleep(0.02)
refused = []
for _ in range(20):
    if tunnel(port, refused) is None:
        break
print(refused[0].split(b"\r\n")[0].decode() if refused else "none refused")
print(refused[0].split(b"\r\n\r\n", 1)[1].decode().strip() if refused else "")
for s in held:
    s.sendall(b"still here")
    print(s.recv(64).decode())
' "$port" >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	echo $pid >>"$T/pids"
	for _ in $(seq 200); do
		[ -e ready ] && break
		kill -0 $pid 2>/dev/null || fail "the run ended early: $(err)"
		sleep 0.05
	done
	count=$(ls /proc/$pid/fd | wc -l)
	prlimit --pid $pid --nofile=$((count + 3)): || fail "prlimit failed"
	touch go
	rc=0
	wait $pid || rc=$?
	expect_status 0
	[ "$(head -1 "$T/out")" = "HTTP/1.1 503 Service Unavailable" ] || fail "expected a 503: $(out)"
	sed -n 2p "$T/out" | grep -q "out of file descriptors for the tunnel to relay.test" ||
		fail "the 503 does not say why: $(out)"
	[ "$(tail -3 "$T/out" | uniq)" = "still here" ] || fail "the open tunnels broke: $(out)"
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	grep '"event":"network"' "$log" | grep -q 'out of file descriptors' ||
		fail "no record of the refusal: $(grep '"event":"network"' "$log")"
}

run_tests
