#!/bin/sh
# Escape attempts against the network modes. Listeners on the host record
# every connection or datagram they get; each attempt inside must fail and
# the listener must have heard nothing:
#
#   TCP to the host's loopback by IP (127.0.0.1), bypassing the proxy
#   TCP to the host's IPv6 loopback ([::1])
#   DNS: UDP/53 to the resolver in /etc/resolv.conf and to 8.8.8.8, and
#   UDP to a host loopback listener
#   raw and packet sockets (CAP_NET_RAW)
#   an abstract unix socket bound on the host
#   a pathname unix socket in the host's /tmp, outside the project
#   the Docker socket at DOCKER_HOST, a real listening socket
#   the ssh-agent socket in the host's /tmp, named "ro" by a project config
#   nobody approved
#   the proxy under abuse: a slowloris of half-open connections, a flood
#   past the connection cap (another run's proxy must not notice), a
#   pipelined second request for a refused host on a kept-alive plain-http
#   connection, and loopback spelt as decimal, octal, hex, short, mapped
#   and NAT64 addresses
# in filtered mode (the default) and, where it applies, --network=false.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# Starts a listener on the host: listen KIND ADDRESS. KIND is tcp4, tcp6,
# udp4 or unix (ADDRESS a path, or @name for the abstract namespace).
# Sets $listen_port (0 for unix); every connection or datagram received
# appends a line to $T/heard.
listen()
{
	portfile=$(mktemp "$T/port.XXXXXX")
	rm -f "$portfile"
	"$PY" -c '
import os, socket, sys
kind, address, portfile, heard = sys.argv[1:5]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + address[1:] if address.startswith("@") else address)
else:
    family = socket.AF_INET6 if kind == "tcp6" else socket.AF_INET
    stype = socket.SOCK_DGRAM if kind == "udp4" else socket.SOCK_STREAM
    s = socket.socket(family, stype)
    s.bind((address, 0))
if s.type == socket.SOCK_STREAM:
    s.listen(16)
port = s.getsockname()[1] if kind != "unix" else 0
with open(portfile + ".tmp", "w") as f:
    f.write(str(port))
os.rename(portfile + ".tmp", portfile)
while True:
    if s.type == socket.SOCK_STREAM:
        c, _ = s.accept()
        c.close()
    else:
        s.recvfrom(4096)
    with open(heard, "a") as f:
        f.write(kind + " " + address + "\n")
' "$1" "$2" "$portfile" "$T/heard" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$portfile" ] && break
		sleep 0.05
	done
	listen_port=$(cat "$portfile" 2>/dev/null) || fail "the host listener did not start"
}

expect_nothing_heard()
{
	[ ! -s "$T/heard" ] || fail "the host listener was reached: $(cat "$T/heard")"
}

# A client inside: connect.py KIND ADDRESS PORT prints "connected" or the
# error's name.
write_client()
{
	cat >connect.py <<'PY'
import errno, socket, sys
kind, address, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect("\0" + address[1:] if address.startswith("@") else address)
    elif kind == "udp4":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        # A DNS query for example.com, type A.
        query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
        s.sendto(query, (address, port))
        s.recvfrom(4096)
    else:
        family = socket.AF_INET6 if kind == "tcp6" else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect((address, port))
    print("connected")
except socket.timeout:
    print("timeout")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
}

test_host_loopback_by_ip_is_unreachable_without_the_proxy()
{
	listen tcp4 127.0.0.1
	write_client
	for mode in "" --network=false; do
		# shellcheck disable=SC2086
		sbx $mode sh -c '"$1" connect.py tcp4 127.0.0.1 "$2"
			curl -s --noproxy "*" --max-time 5 "http://127.0.0.1:$2/" >/dev/null; echo "curl $?"' \
			sh "$PY" "$listen_port"
		expect_status 0
		# Refused by the namespace (nothing listens there) or, with the
		# filtered network, by Landlock before it.
		head -1 "$T/out" | grep -qxE 'ECONNREFUSED|EACCES' || fail "unexpected: $(out)"
		expect_out_contains "curl 7"
	done
	expect_nothing_heard
	# The listener does hear the host itself.
	"$PY" connect.py tcp4 127.0.0.1 "$listen_port" >/dev/null
	sleep 0.1
	[ -s "$T/heard" ] || fail "the listener heard nothing from the host either; nothing was tested"
}

test_host_ipv6_loopback_is_unreachable()
{
	grep -q '^0\{31\}1 ' /proc/net/if_inet6 || return 0 # no ::1 on this host
	listen tcp6 ::1
	write_client
	for mode in "" --network=false; do
		# shellcheck disable=SC2086
		sbx $mode sh -c '"$1" connect.py tcp6 ::1 "$2"
			curl -s --noproxy "*" --max-time 5 "http://[::1]:$2/" >/dev/null; echo "curl $?"' \
			sh "$PY" "$listen_port"
		expect_status 0
		# The sandbox's loopback may lack ::1 altogether.
		grep -qxE 'ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH|EACCES' "$T/out" || fail "unexpected: $(out)"
		expect_out_contains "curl 7"
	done
	expect_nothing_heard
}

test_dns_and_udp_do_not_leave_the_sandbox()
{
	listen udp4 127.0.0.1
	write_client
	resolver=$(sed -n 's/^nameserver[[:space:]]*\([0-9.]*\)$/\1/p' /etc/resolv.conf | head -1)
	for mode in "" --network=false; do
		# shellcheck disable=SC2086
		sbx $mode sh -c 'for target in ${3:-} 8.8.8.8 1.1.1.1; do
				printf "%s " "$target"; "$1" connect.py udp4 "$target" 53
			done
			"$1" connect.py udp4 127.0.0.1 "$2"
			getent hosts example.com || echo "no resolution"' sh "$PY" "$listen_port" "$resolver"
		expect_status 0
		expect_out_lacks connected
		# Outside addresses: no route at all; no answer from loopback.
		expect_out_contains "8.8.8.8 ENETUNREACH"
		expect_out_contains "no resolution"
	done
	sleep 0.2
	expect_nothing_heard
}

test_raw_and_packet_sockets_are_refused()
{
	sbx "$PY" -c 'import socket
for name, args in (("raw4", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
                   ("raw6", (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)),
                   ("rawtcp", (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)),
                   ("packet", (socket.AF_PACKET, socket.SOCK_RAW, 0x0300))):
    try:
        socket.socket(*args); print(name, "opened")
    except OSError as e:
        print(name, e.errno)'
	expect_status 0
	expect_out "raw4 1
raw6 1
rawtcp 1
packet 1"
}

test_abstract_unix_socket_on_the_host_is_unreachable()
{
	name="@agent-sandbox-escape-$$-$(basename "$T")"
	listen unix "$name"
	write_client
	for mode in "" --network=false; do
		# shellcheck disable=SC2086
		sbx $mode "$PY" connect.py unix "$name" 0
		expect_status 0
		# Another namespace's abstract names; with the filtered network
		# no unix socket can even be made.
		grep -qxE 'ECONNREFUSED|EPERM' "$T/out" || fail "unexpected: $(out)"
	done
	expect_nothing_heard
	# The same name from the host's network namespace: reached.
	"$PY" connect.py unix "$name" 0 >/dev/null
	sleep 0.1
	[ -s "$T/heard" ] || fail "the host could not reach its own socket; nothing was tested"
}

test_unix_socket_in_the_host_tmp_is_unreachable()
{
	# Outside the project, in the host's /tmp (X11, ssh-agent and many
	# others put theirs there): the sandbox's /tmp is its own.
	listen unix "$T/host.sock"
	write_client
	for mode in "" --network=false; do
		# shellcheck disable=SC2086
		sbx $mode "$PY" connect.py unix "$T/host.sock" 0
		expect_status 0
		grep -qxE 'ENOENT|EPERM' "$T/out" || fail "unexpected: $(out)"
	done
	sbx --network=false "$PY" connect.py unix "$T/host.sock" 0
	expect_out ENOENT
	expect_nothing_heard
}

test_the_docker_socket_is_unreachable()
{
	# A real socket where a read-only bind would still let connect()
	# through: only the mask keeps it out.
	world_dir outside
	listen unix "$outside/docker.sock"
	write_client
	for host in "unix://$outside/docker.sock" "unix://$outside//docker.sock"; do
		# --network=false: only the mask stands in the way (the
		# filtered network refuses unix sockets altogether).
		DOCKER_HOST=$host sbx --network=false "$PY" connect.py unix "$outside/docker.sock" 0
		expect_status 0
		# The mask is a read-only empty file: not writable, not a socket.
		grep -qxE 'EACCES|ECONNREFUSED' "$T/out" || fail "DOCKER_HOST=$host: $(out)"
	done
	expect_nothing_heard
	# With --docker it is reached: the mask was the only thing in the way.
	DOCKER_HOST="unix://$outside/docker.sock" sbx --docker "$PY" connect.py unix "$outside/docker.sock" 0
	expect_out connected
}

test_unapproved_project_rule_cannot_expose_the_ssh_agent()
{
	# The agent's socket where ssh-agent puts it, in the host's /tmp; a
	# read-only bind of a socket still lets connect() through, so only
	# the built-in exclude rule keeps it out, and a project config (which
	# the agent can write) names it "ro".
	agent_dir=$(mktemp -d /tmp/as-escape-ssh.XXXXXX) || fail "mktemp failed"
	# shellcheck disable=SC2064
	trap "rm -rf '$agent_dir'" EXIT
	sock=$agent_dir/agent.1234
	listen unix "$sock"
	write_client
	export SSH_AUTH_SOCK="$sock"
	printf '{"filesystem": {"ro": ["%s"]}}\n' "$sock" >.agent-sandbox.json
	sbx policy
	expect_status 0
	expect_out_contains "loosens and is NOT approved"
	expect_out_contains "\"ro\": \"$sock\" makes $sock read-only (it was hidden, by ssh-agent socket"
	# --network=false: the mounts alone stand in the way (the filtered
	# network refuses unix sockets altogether).
	sbx --network=false "$PY" connect.py unix "$sock" 0
	expect_status 2
	expect_err_contains "agent-sandbox trust"
	expect_out_lacks connected
	expect_nothing_heard
	# Once the user approves the rule, the client gets through: the
	# refusal was all that stood in the way.
	approve_config
	sbx --network=false "$PY" connect.py unix "$sock" 0
	expect_out connected
}

# A project whose proxy allows test.example, pinned to the host's loopback
# by exact name, so that the tests' servers there stand in for the world.
allow_test_example()
{
	cat >.agent-sandbox.json <<'JSON'
{"network": {"allow": ["test.example"], "resolve": {"test.example": "127.0.0.1:0"}}}
JSON
	sed -i "s/127.0.0.1:0/127.0.0.1:$1/" .agent-sandbox.json
	approve_config
}

# An HTTP server on the host's loopback that keeps every connection alive,
# ignores Connection: close and answers every request it reads, pipelined
# or not, appending "HOST METHOD TARGET" for each to $T/requests. Sets
# $rec_port.
start_recording_server()
{
	portfile=$(mktemp "$T/port.XXXXXX")
	rm -f "$portfile"
	"$PY" -c '
import os, socket, sys, threading
portfile, log = sys.argv[1:3]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
def serve(c):
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            chunk = c.recv(65536)
            if not chunk:
                return
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        fields = dict(l.split(":", 1) for l in lines[1:] if ":" in l)
        fields = {k.strip().lower(): v.strip() for k, v in fields.items()}
        length = int(fields.get("content-length", "0"))
        while len(buf) < length:
            chunk = c.recv(65536)
            if not chunk:
                return
            buf += chunk
        buf = buf[length:]
        method, target = lines[0].split(" ")[:2]
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (fields.get("host", "-"), method, target))
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
' "$portfile" "$T/requests" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$portfile" ] && break
		sleep 0.05
	done
	rec_port=$(cat "$portfile" 2>/dev/null) || fail "the recording server did not start"
}

test_a_pin_opens_its_own_port_and_no_other_loopback_port()
{
	# A listener on another loopback port stands for the host's database
	# or admin interface: the pin for test.example must not open it.
	listen tcp4 127.0.0.1
	mkdir -p "$T/srv"
	echo hello >"$T/srv/hello.txt"
	start_http_server "$T/srv"
	allow_test_example "$http_port"
	sbx sh -c 'curl -sS --max-time 10 -p "http://test.example:$1/hello.txt"
		for how in -p "" --socks5-hostname; do
			[ "$how" = --socks5-hostname ] && how="--socks5-hostname ${ALL_PROXY#socks5h://}"
			curl -s --max-time 10 $how -w "%{http_code}\n" "http://test.example:$2/"; echo " curl $?"
		done' sh "$http_port" "$listen_port"
	expect_out_contains hello
	expect_out_contains "test.example port $listen_port: network.resolve pins test.example to 127.0.0.1:$http_port, which opens that port only"
	[ "$(grep -c 'curl 97$' "$T/out")" = 1 ] || fail "SOCKS was not refused: $(out)"
	# Without a port the pin opens 80 and 443, not the listener's.
	echo '{"network": {"allow": ["test.example"], "resolve": {"test.example": "127.0.0.1"}}}' >.agent-sandbox.json
	approve_config
	sbx curl -s --max-time 10 "http://test.example:$listen_port/"
	expect_out_contains "pins test.example to 127.0.0.1, which opens ports 80 and 443 only; pin \"127.0.0.1:$listen_port\""
	sleep 0.2
	expect_nothing_heard
}

test_a_pipelined_request_for_a_refused_host_never_reaches_the_server()
{
	start_recording_server
	allow_test_example "$rec_port"
	cat >pipeline.py <<'PY'
import socket, sys, time
port = sys.argv[1]
first = ("GET http://test.example:%s/one HTTP/1.1\r\nHost: test.example\r\n\r\n" % port).encode()
post = ("POST http://test.example:%s/post HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello" % port).encode()
second = b"GET http://refused.example/two HTTP/1.1\r\nHost: refused.example\r\n\r\n"
smuggled = b"GET /three HTTP/1.1\r\nHost: refused.example\r\n\r\n"
# In one write (the proxy reads the rest with the head) and after a pause
# (the rest comes through the relay).
for lead, pause in ((first, 0), (post, 0), (first, 0.3), (post, 0.3)):
    s = socket.create_connection(("127.0.0.1", 3128))
    # The server ignores Connection: close and keeps the connection: wait
    # a moment for answers that must not come.
    s.settimeout(1.5)
    if pause:
        s.sendall(lead)
        time.sleep(pause)
        s.sendall(second + smuggled)
    else:
        s.sendall(lead + second + smuggled)
    out = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    print(out.count(b"HTTP/1.1 "), "answer(s)")
PY
	sbx "$PY" pipeline.py "$rec_port"
	expect_status 0
	expect_out "1 answer(s)
1 answer(s)
1 answer(s)
1 answer(s)"
	# From outside: the server read exactly the allowed requests, the
	# POST's body whole, and nothing after them.
	expect_content "$T/requests" "test.example:$rec_port GET /one
test.example:$rec_port POST /post
test.example:$rec_port GET /one
test.example:$rec_port POST /post"
	# A chunked body, whose end the proxy would have to parse, is refused.
	sbx curl -s --max-time 10 -H "Transfer-Encoding: chunked" --data-binary x \
		"http://test.example:$rec_port/chunked"
	expect_out_contains "agent-sandbox: plain-http request bodies need a Content-Length"
	[ "$(wc -l <"$T/requests")" = 4 ] || fail "the chunked request reached the server: $(cat "$T/requests")"
}

test_loopback_spelt_as_another_ip_form_is_refused()
{
	listen tcp4 127.0.0.1
	# Every name is allowed; loopback still needs an exact, user-written
	# entry, whatever the spelling.
	echo '{"network": {"allow": ["*"]}}' >.agent-sandbox.json
	approve_config
	cat >forms.py <<'PY'
import ipaddress, socket, struct, sys
port = int(sys.argv[1])
forms = ["2130706433", "0177.0.0.1", "0x7f000001", "0x7f.0.0.1", "127.1",
         "::ffff:127.0.0.1", "::ffff:7f00:1", "64:ff9b::7f00:1", "::127.0.0.1",
         "127.0.0.1.", "[::ffff:127.0.0.1]"]
def connect(form):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.settimeout(10)
    host = form if not (":" in form and not form.startswith("[")) else "[%s]" % form
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\n\r\n" % (host, port)).encode())
    return s.recv(4096).split(b"\r\n")[0].decode()
def socks(atyp, addr):
    s = socket.create_connection(("127.0.0.1", 1080))
    s.settimeout(10)
    s.sendall(b"\x05\x01\x00")
    s.recv(2)
    s.sendall(b"\x05\x01\x00" + bytes([atyp]) + addr + struct.pack(">H", port))
    r = s.recv(10)
    return "socks reply %d" % r[1] if len(r) > 1 else "socks closed"
for form in forms:
    print(form, "connect:", connect(form))
    name = form.strip("[]").encode()
    print(form, "socks name:", socks(3, bytes([len(name)]) + name))
    try:
        packed = ipaddress.ip_address(form.strip("[]")).packed
    except ValueError:
        continue
    print(form, "socks address:", socks(4 if len(packed) == 16 else 1, packed))
PY
	sbx "$PY" forms.py "$listen_port"
	expect_status 0
	# Each form was tried and refused: 403 and SOCKS reply 2.
	[ "$(grep -c 'connect: HTTP/1.1 403 Forbidden$' "$T/out")" = 11 ] || fail "not every CONNECT was refused: $(out)"
	[ "$(grep -c 'socks name: socks reply 2$' "$T/out")" = 11 ] || fail "not every SOCKS name was refused: $(out)"
	[ "$(grep -c 'socks address: socks reply 2$' "$T/out")" = 5 ] || fail "not every SOCKS address was refused: $(out)"
	sleep 0.2
	expect_nothing_heard
}

test_half_open_connections_are_closed_and_the_proxy_keeps_serving()
{
	mkdir -p "$T/srv"
	echo hello >"$T/srv/hello.txt"
	start_http_server "$T/srv"
	allow_test_example "$http_port"
	cat >slowloris.py <<'PY'
import socket, subprocess, sys, time
port = sys.argv[1]
conns = []
for i in range(400):
    s = socket.create_connection(("127.0.0.1", 3128 if i % 2 else 1080))
    if i % 4 == 1:
        s.sendall(b"GET http://test.example/ HTTP/1.1\r\nX: ")
    elif i % 4 == 2:
        s.sendall(b"\x05\x01\x00\x05\x01")
    conns.append(s)
start = time.monotonic()
# The proxy still serves a well-behaved client meanwhile.
subprocess.run(["curl", "-sS", "--max-time", "5", "http://test.example:%s/hello.txt" % port])
answers = {}
for s in conns:
    s.settimeout(20)
    try:
        data = s.recv(4096)
        while True:
            more = s.recv(4096)
            if not more:
                break
            data += more
    except socket.timeout:
        data = b"still open"
    except ConnectionResetError:
        data = b"reset"
    key = data.split(b"\r\n")[0].decode("latin-1") if data.startswith(b"HTTP") else repr(data)
    answers[key] = answers.get(key, 0) + 1
took = time.monotonic() - start
print("closed within 15 s" if took < 15 else "took %d s" % took)
for key in sorted(answers):
    print(answers[key], key)
PY
	sbx "$PY" slowloris.py "$http_port"
	expect_status 0
	expect_out "hello
closed within 15 s
100 HTTP/1.1 408 Request Timeout
200 b''
100 b'\\x05\\x00\\x05\\x01\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00'"
	# From outside: the audit log names what the proxy cut off.
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	grep '"event":"network"' "$log" | grep '"decision":"refused"' |
		grep -q 'no complete request within 10 seconds' || fail "no timeout record: $(tail -3 "$log")"
}

test_a_flood_past_the_connection_cap_is_refused_and_another_run_is_unaffected()
{
	mkdir -p "$T/srv"
	echo hello >"$T/srv/hello.txt"
	start_http_server "$T/srv"
	allow_test_example "$http_port"
	cat >flood.py <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
conns = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(530)]
open("flooding", "w").close()
for _ in range(100):
    if os.path.exists("released"):
        break
    time.sleep(0.05)
s = socket.create_connection(("127.0.0.1", 3128))
s.settimeout(5)
s.sendall(b"CONNECT test.example:%d HTTP/1.1\r\n\r\n" % port)
print(s.recv(4096).split(b"\r\n")[0].decode())
s = socket.create_connection(("127.0.0.1", 1080))
s.settimeout(5)
s.sendall(b"\x05\x01\x00")
s.recv(2)
s.sendall(b"\x05\x01\x00\x03\x0ctest.example" + struct.pack(">H", port))
print("socks reply", s.recv(10)[1])
for c in conns:
    c.close()
PY
	rm -f flooding released
	"$AS" "$PY" flood.py "$http_port" >"$T/flood-out" 2>"$T/flood-err" </dev/null &
	flood=$!
	for _ in $(seq 100); do
		[ -e flooding ] && break
		sleep 0.05
	done
	[ -e flooding ] || fail "the flood did not start: $(cat "$T/flood-err")"
	# Another run, with its own proxy, while the first is flooded.
	mkdir "$T/other" && cp .agent-sandbox.json "$T/other/"
	other=$(cd "$T/other" && approve_config &&
		"$AS" curl -sS --max-time 5 "http://test.example:$http_port/hello.txt" 2>&1 </dev/null)
	touch released
	[ "$other" = hello ] || fail "the other run was disturbed: $other"
	wait "$flood" || fail "the flooding run failed: $(cat "$T/flood-err")"
	[ "$(cat "$T/flood-out")" = "HTTP/1.1 503 Service Unavailable
socks reply 1" ] || fail "the flood was not refused: $(cat "$T/flood-out")"
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	grep '"event":"network"' "$log" | grep '"decision":"refused"' | grep '"host":"test.example"' |
		grep -q 'the proxy already has 512 connections open' || fail "no cap record: $(tail -3 "$log")"
}

run_tests
