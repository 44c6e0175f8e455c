#!/bin/sh
# Escape attempts against the host's unix sockets. A socket on a read-only
# mount can still be connected to, so the sandbox masks every one the host
# has bound (and the places services bind theirs), in every network mode.
# Real servers listen on the host and record every connection; each attempt
# inside must fail and the servers must have heard nothing:
#
#   a fake Docker Desktop socket in ~/.docker/run, a socket at an unusual
#   place in the home directory, one in the project, one in a read-only
#   directory outside both (as root: under /var/lib too)
#   an abstract socket of the host with --network=true (Landlock's scope)
#   the proxy's own socket, talked to directly: it refuses what the proxy
#   refuses
# and what must keep working: a socket listed with --socket or "sockets",
# a server and client both inside (pathname and abstract), and the audit
# record of a refused command whose caller closed inherited descriptors.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

MODES="filtered --network=false --network=true"

# The mode's flag: "filtered" is the default, no flag.
mode_flag()
{
	[ "$1" = filtered ] || printf '%s' "$1"
}

# Starts one server on the host listening on each ADDRESS (a path, or
# @name for the abstract namespace); each connection it accepts appends
# "ADDRESS" to $T/heard. Teardown stops it. Also the ways a name in
# /proc/net/unix stops naming a socket: "rel:DIR:NAME" bound by a relative
# name from DIR (the last one given stays the server's directory), "rename:TMP:FINAL" bound at TMP and renamed to FINAL,
# "link:TMP:FINAL" bound at TMP, linked to FINAL and TMP removed (as
# OpenSSH's ControlMaster makes its ControlPath), "fd:DIR:NAME" bound as
# /proc/self/fd/N/NAME with N a descriptor of DIR (how a path longer than
# 108 bytes is bound).
serve()
{
	rm -f "$T/ready"
	"$PY" -c '
import os, select, socket, sys
ready, heard = sys.argv[1:3]
socks = {}
for address in sys.argv[3:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    kind, _, rest = address.partition(":")
    if kind == "rel":
        # It stays there, as a server that binds so does.
        os.chdir(rest.split(":", 1)[0])
        s.bind(rest.split(":", 1)[1])
    elif kind == "fd":
        where, name = rest.split(":", 1)
        s.bind("/proc/self/fd/%d/%s" % (os.open(where, os.O_PATH), name))
    elif kind in ("rename", "link"):
        tmp, final = rest.split(":", 1)
        s.bind(tmp)
        if kind == "rename":
            os.rename(tmp, final)
        else:
            os.link(tmp, final)
            os.unlink(tmp)
    else:
        s.bind("\0" + address[1:] if address.startswith("@") else address)
    s.listen(16)
    socks[s] = address
open(ready, "w").close()
while True:
    r, _, _ = select.select(list(socks), [], [])
    for s in r:
        c, _ = s.accept()
        c.close()
        with open(heard, "a") as f:
            f.write(socks[s] + "\n")
' "$T/ready" "$T/heard" "$@" >/dev/null 2>"$T/serve.err" &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -e "$T/ready" ] && return 0
		sleep 0.05
	done
	fail "the host's server did not start: $(cat "$T/serve.err")"
}

# connect.py ADDRESS... prints "ADDRESS connected" or "ADDRESS ERRNO-NAME".
write_client()
{
	cat >"$1" <<'PY'
import errno, socket, sys
for address in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect("\0" + address[1:] if address.startswith("@") else address)
        print(address, "connected")
    except OSError as e:
        print(address, errno.errorcode.get(e.errno, str(e.errno)))
PY
}

expect_nothing_heard()
{
	[ ! -s "$T/heard" ] || fail "a host socket was reached: $(cat "$T/heard")"
}

# The control: the host reaches each of its own sockets, so a refusal
# inside means something.
expect_host_reaches()
{
	"$PY" "$PWD/connect.py" "$@" >"$T/host.out"
	! grep -qv ' connected$' "$T/host.out" || fail "the host's own attempt: $(cat "$T/host.out")"
	sleep 0.2
	[ "$(wc -l <"$T/heard")" -eq "$#" ] || fail "the server heard $(cat "$T/heard")"
}

landlock_abi()
{
	"$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(abi if abi > 0 else 0)'
}

test_host_sockets_are_unreachable_in_every_network_mode()
{
	mkdir -p "$HOME/.docker/run" "$HOME/work"
	world_dir outside
	sockets="$HOME/.docker/run/docker.sock $HOME/work/x.sock $PWD/project.sock $outside/daemon.sock"
	if [ "$(id -u)" = 0 ]; then
		mkdir -p /var/lib/as-escape-$$
		# shellcheck disable=SC2064
		trap "rm -rf '$outside' /var/lib/as-escape-$$" EXIT
		sockets="$sockets /var/lib/as-escape-$$/daemon.sock"
	fi
	# shellcheck disable=SC2086
	serve $sockets
	write_client "$PWD/connect.py"
	for mode in $MODES; do
		# shellcheck disable=SC2046,SC2086
		sbx $(mode_flag "$mode") "$PY" "$PWD/connect.py" $sockets
		expect_status 0
		! grep -q ' connected$' "$T/out" || fail "$mode: $(out)"
		[ "$(wc -l <"$T/out")" -eq "$(echo $sockets | wc -w)" ] || fail "$mode: $(out)"
	done
	expect_nothing_heard
	sbx policy
	expect_out_contains "host unix socket; list it with --socket PATH to allow"
	# shellcheck disable=SC2086
	expect_host_reaches $sockets
}

test_host_sockets_bound_by_other_names_are_unreachable_in_every_network_mode()
{
	nl='
'
	mkdir -p sub "$HOME/work" "$HOME/ctl" "$HOME/odd${nl}dir" "$HOME/svc" "$HOME/long"
	serve "rel:$PWD:rel.sock" "rel:$PWD/sub:sub.sock" "rel:$HOME:home.sock" \
		"rename:$HOME/work/tmp.sock:$HOME/work/final.sock" \
		"link:$HOME/ctl/cm.XXXXXXXX:$HOME/ctl/cm" \
		"rename:$HOME/odd${nl}dir/s.sock:$HOME/odd${nl}dir/s.sock" \
		"rel:$HOME/svc:deep.sock" "fd:$HOME/long:long.sock"
	write_client "$PWD/connect.py"
	set -- "$PWD/rel.sock" "$PWD/sub/sub.sock" "$HOME/home.sock" "$HOME/work/final.sock" \
		"$HOME/ctl/cm" "$HOME/odd${nl}dir/s.sock" "$HOME/svc/deep.sock" "$HOME/long/long.sock"
	for mode in $MODES; do
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") "$PY" "$PWD/connect.py" "$@"
		expect_status 0
		! grep -q ' connected$' "$T/out" || fail "$mode: $(out)"
	done
	expect_nothing_heard
	# The control (a name holds a line end: counted by connections).
	"$PY" "$PWD/connect.py" "$@" >"$T/host.out"
	[ "$(grep -c ' connected$' "$T/host.out")" -eq "$#" ] ||
		fail "the host's own attempt: $(cat "$T/host.out")"
}

# A host socket is masked by a mount on its file; a service that restarts
# while the sandbox runs (a daemon upgraded, a helper re-spawned) removes
# the file and binds a new one, which detaches that mount in every mount
# namespace. The run stops before the new socket can be reached.
test_host_socket_rebound_during_the_run_stays_unreachable()
{
	mkdir -p "$HOME/work"
	sock="$HOME/work/x.sock"
	serve "$sock"
	first=$(tail -n 1 "$T/pids")
	# Inside: one attempt at once, one after the restart.
	sbx "$PY" -c '
import os, socket, sys, time
path, flag = sys.argv[1:3]
def attempt():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        print("connected")
    except OSError as e:
        print("refused", e.errno)
attempt()
open("started", "w").close()
for _ in range(200):
    if os.path.exists(flag):
        break
    time.sleep(0.05)
attempt()
' "$sock" "$PWD/restarted" &
	inside=$!
	for _ in $(seq 200); do [ -e started ] && break; sleep 0.05; done
	kill "$first"
	wait "$first" 2>/dev/null
	rm -f "$sock"
	serve "$sock"
	touch restarted
	wait $inside
	expect_nothing_heard
	expect_err_contains "was bound again (its service restarted), which lifts its mask"
}

test_a_socket_the_host_binds_later_in_a_known_place_is_unreachable()
{
	# Docker Desktop starts after the agent: the directory is masked
	# whether or not a socket is in it when the sandbox starts.
	mkdir -p "$HOME/.docker/run"
	write_client "$PWD/connect.py"
	"$AS" --network=false sh -c 'sleep 1; "$1" "$2" "$3"' sh "$PY" "$PWD/connect.py" \
		"$HOME/.docker/run/docker.sock" >"$T/out" 2>"$T/err" </dev/null &
	inside=$!
	sleep 0.3
	serve "$HOME/.docker/run/docker.sock"
	rc=0
	wait "$inside" || rc=$?
	expect_status 0
	expect_out "$HOME/.docker/run/docker.sock ENOENT"
	expect_nothing_heard
}

test_listed_sockets_are_reachable_in_every_network_mode()
{
	mkdir -p "$HOME/.docker/run" "$HOME/.config/agent-sandbox" "$HOME/work"
	docker="$HOME/.docker/run/docker.sock"
	other="$HOME/work/x.sock"
	serve "$docker" "$other"
	write_client "$PWD/connect.py"
	printf '{"sockets": ["~/work/x.sock"]}\n' >"$HOME/.config/agent-sandbox/config.json"
	for mode in $MODES; do
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") --socket "$docker" "$PY" "$PWD/connect.py" "$docker" "$other"
		expect_status 0
		expect_out "$(printf '%s connected\n%s connected' "$docker" "$other")"
	done
	[ "$(wc -l <"$T/heard")" -eq 6 ] || fail "heard: $(cat "$T/heard")"
	sbx --socket "$docker" policy
	expect_out_contains "cli --socket"
	expect_out_contains "config.json:1:14"
}

test_a_socket_bound_after_the_start_is_refused_by_landlock_abi_9()
{
	# Not in a known place and bound after the scan: no mask covers it.
	# Landlock's RESOLVE_UNIX (ABI 9) refuses every socket made outside
	# the command but the listed ones.
	abi=$(landlock_abi)
	[ "$abi" -ge 9 ] || skip "Landlock ABI $abi cannot refuse a socket bound after the start (needs 9)"
	write_client "$PWD/connect.py"
	"$AS" sh -c 'sleep 1; "$1" "$2" "$3"' sh "$PY" "$PWD/connect.py" "$PWD/late.sock" \
		>"$T/out" 2>"$T/err" </dev/null &
	inside=$!
	sleep 0.3
	serve "$PWD/late.sock"
	rc=0
	wait "$inside" || rc=$?
	expect_status 0
	expect_out "$PWD/late.sock EACCES"
	expect_nothing_heard
}

test_a_listed_path_that_is_not_a_socket_is_refused()
{
	# A "socket" entry never exposes a tree: the home directory here.
	mkdir -p "$HOME/.ssh"
	echo key >"$HOME/.ssh/id_ed25519"
	sbx --socket "$HOME" cat "$HOME/.ssh/id_ed25519"
	expect_status 2
	expect_err_contains "is not a unix socket"
	expect_out ""
	sbx --socket "$HOME/*.sock" true
	expect_status 2
	expect_err_contains "a socket is one path, not a pattern"
}

test_a_project_config_listing_a_socket_needs_approval()
{
	mkdir -p "$HOME/work"
	sock="$HOME/work/x.sock"
	serve "$sock"
	write_client "$PWD/connect.py"
	printf '{"sockets": ["%s"]}\n' "$sock" >.agent-sandbox.json
	sbx policy
	expect_out_contains "loosens and is NOT approved"
	sbx "$PY" "$PWD/connect.py" "$sock"
	! grep -q ' connected$' "$T/out" || fail "an unapproved project config exposed $sock"
	expect_nothing_heard
}

test_abstract_host_socket_is_unreachable_with_the_host_network()
{
	abi=$(landlock_abi)
	[ "$abi" -ge 6 ] || skip "Landlock ABI $abi has no abstract socket scope (needs 6)"
	name="@as-escape-$$-$(basename "$T")"
	serve "$name"
	write_client "$PWD/connect.py"
	for mode in $MODES; do
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") "$PY" "$PWD/connect.py" "$name"
		expect_status 0
		# Landlock's scope: EPERM; another network namespace: nothing
		# listens under that name there.
		grep -qxE "$name (EPERM|ECONNREFUSED)" "$T/out" || fail "$mode: $(out)"
	done
	sbx --network=true "$PY" "$PWD/connect.py" "$name"
	expect_out "$name EPERM"
	expect_nothing_heard
	expect_host_reaches "$name"
}

test_a_server_and_client_inside_work_in_every_network_mode()
{
	cat >pair.py <<'PY'
import os, socket, sys, threading
def serve(s):
    c, _ = s.accept()
    c.sendall(c.recv(16).upper())
    c.close()
for address in sys.argv[1:]:
    bind = "\0" + address[1:] if address.startswith("@") else address
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(bind)
    s.listen(1)
    t = threading.Thread(target=serve, args=(s,))
    t.start()
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(bind)
    c.sendall(b"ping")
    print(address, c.recv(16).decode())
    t.join()
PY
	for mode in $MODES; do
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") "$PY" pair.py /tmp/app.sock "$PWD/lsp.sock" "@as-pair-$$"
		expect_status 0
		expect_out "$(printf '/tmp/app.sock PING\n%s PING\n@as-pair-%s PING' "$PWD/lsp.sock" $$)"
		rm -f lsp.sock
	done
}

test_blocked_command_is_logged_when_the_caller_closed_descriptors()
{
	# Python's subprocess closes every inherited descriptor but 0-2 by
	# default: the wrapped command's report cannot use the one the init
	# handed down.
	for mode in $MODES; do
		rm -f "$HOME/.local/state/agent-sandbox/audit.jsonl"
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") --cmd touch=false "$PY" -c '
import os, subprocess
try:
    os.fstat(1000)
    print("inherited")
except OSError:
    print("closed")
r = subprocess.run(["touch", "x"], close_fds=True)
print(r.returncode)'
		expect_status 0
		expect_out "$(printf 'inherited\n126')"
		expect_no_file x
		grep -q '"event":"blocked".*"command":"touch".*"reported_from":"inside"' \
			"$HOME/.local/state/agent-sandbox/audit.jsonl" ||
			fail "$mode: the blocked touch was not logged: $(cat "$HOME/.local/state/agent-sandbox/audit.jsonl")"
	done
}

test_the_proxy_socket_refuses_what_the_proxy_refuses()
{
	# The command can reach the proxy's socket under the filtered
	# network (Landlock ABI 9 refuses it that too): talking to the proxy
	# directly gains nothing over the forwarder.
	cat >direct.py <<'PY'
import socket, sys
def ask(data):
    p = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        p.connect("/run/agent-sandbox/proxy.sock")
    except OSError as e:
        return "connect " + str(e.errno)
    p.settimeout(10)
    p.sendall(data)
    try:
        reply = p.recv(200).decode(errors="replace").split("\r\n")[0]
    except OSError as e:
        reply = "error " + str(e.errno)
    return reply or "closed"
print(ask(b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n"))
port = int(sys.argv[1])
print(ask(b"\x00" + bytes([port >> 8, port & 255]) + b"GET /hello.txt HTTP/1.1\r\n\r\n"))
PY
	mkdir srv
	echo hello >srv/hello.txt
	start_http_server "$PWD/srv"
	sbx "$PY" direct.py "$http_port"
	expect_status 0
	abi=$(landlock_abi)
	if [ "$abi" -ge 9 ]; then
		expect_out "$(printf 'connect 13\nconnect 13')"
		return 0
	fi
	head -1 "$T/out" | grep -q "^HTTP/1.1 403" || fail "a refused host: $(out)"
	# The localhost preamble for a port not in network.localhost: the
	# proxy refuses and closes; the server never answers.
	sed -n 2p "$T/out" | grep -qv "200" || fail "an unlisted localhost port: $(out)"
	sbx log --blocked
	expect_out_contains "evil.example"
	expect_out_contains "localhost port $http_port is not in network.localhost"
}

test_debug_and_doctor_say_what_covers_the_hosts_sockets()
{
	sbx --debug --network=true true
	abi=$(landlock_abi)
	if [ "$abi" -ge 6 ]; then
		expect_err_contains "the host's abstract unix sockets are out of reach"
	else
		expect_err_contains "the host's abstract unix sockets stay reachable"
	fi
	expect_err_contains "sockets: "
	sbx doctor
	expect_out_contains "abstract unix sockets"
}

# Listens on a TCP port of the host's loopback; each connection accepted
# appends "tcp" to $T/heard. Sets tcp_port.
serve_tcp()
{
	rm -f "$T/tcp_port"
	"$PY" -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write("tcp\n")
    c.close()
' "$T/tcp_port" "$T/heard" >/dev/null 2>"$T/serve.err" &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$T/tcp_port" ] && break
		sleep 0.05
	done
	tcp_port=$(cat "$T/tcp_port" 2>/dev/null) || fail "the TCP server did not start"
}

# start_inside ARGS... runs agent-sandbox ARGS in the background, its
# output in $T/out and $T/err; finish_beside_another_sandbox then starts a
# second sandbox (filtered: it has a proxy socket) while the first runs,
# waits for both and sets rc to the first one's status.
start_inside()
{
	"$AS" "$@" >"$T/out" 2>"$T/err" </dev/null &
	inside=$!
	sleep 0.5
}

finish_beside_another_sandbox()
{
	"$AS" sleep 4 >/dev/null 2>&1 </dev/null &
	other=$!
	rc=0
	# shellcheck disable=SC2034 # expect_status reads it
	wait "$inside" || rc=$?
	wait "$other"
}

test_the_runtime_dir_outside_run_hides_its_sockets_and_other_sandboxes()
{
	# $XDG_RUNTIME_DIR is a private tmpfs only under /run; elsewhere (WSL's
	# /mnt/wslg/runtime-dir, a home-made one) it holds what services bind
	# there after the start, and agent-sandbox's own directory with the
	# proxy and audit sockets of every other sandbox of the user. A
	# sandbox without a network must not reach a filtered one's proxy.
	mkdir -p "$HOME/xdg" "$HOME/.config/agent-sandbox"
	chmod 700 "$HOME/xdg"
	export XDG_RUNTIME_DIR="$HOME/xdg"
	serve_tcp
	printf '{"network": {"localhost": [%s]}}\n' "$tcp_port" \
		>"$HOME/.config/agent-sandbox/config.json"
	cat >probe.py <<'PY'
import glob, os, socket, sys, time
time.sleep(2)
port = int(sys.argv[1])
for p in sorted(glob.glob(os.environ["XDG_RUNTIME_DIR"] + "/**", recursive=True)):
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        s = socket.socket(socket.AF_UNIX, kind)
        s.settimeout(5)
        try:
            s.connect(p)
        except OSError:
            continue
        print(p, "connected")
        if kind == socket.SOCK_STREAM:
            try:
                s.sendall(b"\x00" + bytes([port >> 8, port & 255]) + b"x")
                s.recv(10)
            except OSError:
                pass
PY
	start_inside --network=false "$PY" probe.py "$tcp_port"
	# Bound on the host after the start, as a service started on demand.
	serve "$XDG_RUNTIME_DIR/late.sock"
	finish_beside_another_sandbox
	expect_nothing_heard
	expect_status 0
	expect_out ""
}

test_a_host_socket_whose_name_holds_a_newline_is_unreachable()
{
	# /proc/net/unix prints the name as bound: cut at the newline it
	# names another path. The agent can make such a directory in the
	# project for a host tool to bind in.
	nl='
'
	mkdir -p "$HOME/work/new${nl}line"
	set -- "$HOME/work/new${nl}line/a.sock" "$HOME/work/tail${nl}"
	serve "$@"
	write_client "$PWD/connect.py"
	for mode in $MODES; do
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") "$PY" "$PWD/connect.py" "$@"
		expect_status 0
	done
	expect_nothing_heard
	sbx policy
	expect_out_contains "host unix socket; list it with --socket PATH to allow"
}

test_a_home_directory_at_tmp_keeps_the_hosts_tmp_sockets_hidden()
{
	# With HOME=/tmp (service accounts, containers) the host's /tmp is
	# bound whole: its sockets (tmux, X11, an ssh-agent in /tmp/ssh-*)
	# and agent-sandbox's runtime directory without $XDG_RUNTIME_DIR,
	# with the proxy sockets of the sandboxes started later.
	unset XDG_RUNTIME_DIR
	export XDG_CONFIG_HOME="$T/config" XDG_STATE_HOME="$T/state" XDG_CACHE_HOME="$T/cache"
	mkdir -p "$T/tmux"
	serve "$T/tmux/default"
	cat >probe.py <<'PY'
import glob, os, socket, sys, time
time.sleep(2)
paths = sys.argv[1:] + glob.glob("/tmp/agent-sandbox-%d/*/*.sock" % os.getuid())
for p in paths:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(p)
        print(p, "connected")
    except OSError:
        pass
PY
	export HOME=/tmp
	start_inside --network=false "$PY" probe.py "$T/tmux/default"
	finish_beside_another_sandbox
	expect_nothing_heard
	expect_status 0
	expect_out ""
}

test_a_host_socket_bound_by_a_relative_name_is_unreachable()
{
	# /proc/net/unix lists it as "dev.sock": the process that holds it
	# says where (its working directory), as a dev server started in
	# the project or the home directory would.
	mkdir -p "$HOME/svc"
	(cd "$HOME/svc" && serve dev.sock)
	(cd "$T/work" && serve project.sock)
	write_client "$PWD/connect.py"
	for mode in $MODES; do
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") "$PY" "$PWD/connect.py" "$HOME/svc/dev.sock" \
			"$T/work/project.sock"
		expect_status 0
	done
	expect_nothing_heard
	sbx policy
	expect_out_contains "$HOME/svc/dev.sock"
}

run_tests
