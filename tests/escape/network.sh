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

run_tests
