#!/bin/sh
# Defences of the host terminal and the sandbox's own process tree.
. "$(dirname "$0")/../lib.sh"

# Prints the errno of ioctl(0, REQUEST, ...) inside the sandbox. On a
# non-terminal the kernel says ENOTTY (25); the seccomp filter says EPERM (1)
# before the kernel looks.
ioctl_errno()
{
	sbx perl -e 'my $b = "x"; ioctl(STDIN, '"$1"', $b) ? print "0" : print $! + 0'
}

test_tiocsti_is_refused_by_seccomp()
{
	ioctl_errno 0x5412
	expect_status 0
	expect_out 1
}

test_tioclinux_is_refused_by_seccomp()
{
	ioctl_errno 0x541C
	expect_out 1
}

test_other_ioctls_still_reach_the_kernel()
{
	# TCGETS on a non-terminal: ENOTTY, not EPERM.
	ioctl_errno 0x5401
	expect_out 25
}

test_command_runs_in_a_new_session_without_a_terminal()
{
	sbx sh -c 'cut -d" " -f6 /proc/self/stat'
	expect_status 0
	sid=$(out)
	# The session leader is the sandbox's init (pid 1), not a host process.
	[ "$sid" = 1 ] || fail "session id inside is $sid, expected 1"
}

test_the_command_cannot_signal_host_processes()
{
	sleep 30 &
	host_pid=$!
	sbx sh -c "kill $host_pid"
	kill -0 $host_pid 2>/dev/null || fail "the sandbox killed a host process"
	kill $host_pid
	[ "$rc" -ne 0 ] || fail "kill of a host pid succeeded"
}

# --- seccomp: the sandbox filter ---------------------------------------------
# syscall-probe.py makes each call by name and prints "NAME ERRNO". Several
# of these calls need a capability the sandbox never has, so the kernel
# would refuse them too; the_filter_answers_before_the_kernel proves, for
# the calls whose unfiltered answer differs, that the filter is what says no.
PROBE="$(cd "$(dirname "$0")" && pwd)/syscall-probe.py"

# Runs the probe inside for each name and fails unless every call got
# EPERM (1).
expect_refused()
{
	sbx python3 "$PROBE" "$@"
	expect_status 0
	for name in "$@"; do
		grep -qx "$name 1" "$T/out" || fail "$name was not refused with EPERM: $(out)"
	done
}

test_keyring_calls_are_refused()
{
	expect_refused keyctl add_key request_key
}

test_bpf_and_perf_events_are_refused()
{
	expect_refused bpf perf_event_open
}

test_userfaultfd_is_refused()
{
	expect_refused userfaultfd
}

test_kexec_and_kernel_modules_are_refused()
{
	expect_refused kexec_load kexec_file_load init_module finit_module delete_module
}

test_mount_calls_are_refused()
{
	expect_refused mount umount2 pivot_root open_tree move_mount fsopen fsconfig fsmount \
		fspick mount_setattr
}

test_io_uring_is_refused()
{
	expect_refused io_uring_setup io_uring_enter io_uring_register
}

test_new_user_namespaces_are_refused()
{
	expect_refused unshare clone
	# The same through the ordinary tool.
	sbx unshare -U true
	[ "$rc" -ne 0 ] || fail "unshare -U succeeded inside the sandbox"
}

test_clone3_says_enosys_so_libc_falls_back_to_clone()
{
	sbx python3 "$PROBE" clone3
	expect_out "clone3 38"
	# Programs still start processes and threads.
	sbx python3 -c 'import os, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))'
	expect_status 0
	expect_out 7
}

test_the_filter_answers_before_the_kernel()
{
	# Outside the sandbox, with the same user and arguments, these calls
	# get another answer (a bad descriptor, an unknown command, success):
	# inside, EPERM can only come from the filter.
	python3 "$PROBE" keyctl fsconfig io_uring_enter mount_setattr >"$T/host" 2>&1
	grep -qx 'keyctl 1' "$T/host" && fail "keyctl is refused on the host too: $(cat "$T/host")"
	grep -qx 'fsconfig 1' "$T/host" && fail "fsconfig is refused on the host too"
	expect_refused keyctl fsconfig io_uring_enter mount_setattr
	sbx sh -c 'grep -E "^Seccomp(_filters)?:" /proc/self/status'
	expect_out_contains "Seccomp:	2"
}

# --- unix sockets: the command's own ----------------------------------------

# Prints what creating each kind of unix socket gives inside: "ok" or errno.
unix_sockets()
{
	sbx "$@" python3 -c '
import socket
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    try:
        socket.socket(socket.AF_UNIX, kind).close()
        print("ok")
    except OSError as e:
        print(e.errno)
a, b = socket.socketpair()
print("pair ok")'
}

test_unix_sockets_can_be_made_in_every_network_mode()
{
	# The host's sockets are masked (tests/escape/host_sockets.sh):
	# the command's own unix sockets stay allowed, for language servers
	# and agents' app servers.
	for mode in "" --network=false --network=true; do
		# shellcheck disable=SC2086
		unix_sockets $mode
		expect_status 0
		expect_out "$(printf 'ok\nok\npair ok')"
	done
}

# --- host sockets ---------------------------------------------------------------
# A unix socket on a read-only mount can still be connected to: the ones the
# environment names are hidden, and so is every other the host has bound
# (tests/escape/host_sockets.sh); only the hiding stands between the command
# and the socket.

# Listens on unix socket $1 on the host; teardown stops it.
listen_unix()
{
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
time.sleep(60)' "$1" &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -S "$1" ] && return 0
		sleep 0.05
	done
	fail "the test socket $1 did not appear"
}

connect_inside()
{
	sbx --network=false "$@" python3 -c '
import socket, sys
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1])
    print("connected")
except OSError as e:
    print("refused", e.errno)' "$PWD/$sock"
}

test_a_unix_socket_is_reachable_when_listed()
{
	# The control for the tests below: the socket is reachable when
	# listed and the environment does not name it.
	sock=other.sock
	listen_unix "$PWD/$sock"
	connect_inside --socket "$PWD/$sock"
	expect_out connected
}

test_ssh_agent_socket_is_hidden()
{
	sock=agent.sock
	listen_unix "$PWD/$sock"
	SSH_AUTH_SOCK=$PWD/$sock connect_inside
	expect_out_contains refused
	SSH_AUTH_SOCK=$PWD/$sock sbx policy
	expect_out_contains "ssh-agent socket (SSH_AUTH_SOCK)"
}

test_dbus_session_bus_socket_is_hidden()
{
	sock=bus
	listen_unix "$PWD/$sock"
	DBUS_SESSION_BUS_ADDRESS="unix:path=$PWD/$sock,guid=0123" connect_inside
	expect_out_contains refused
}

test_gpg_agent_sockets_are_hidden()
{
	mkdir gnupg
	sock=gnupg/S.gpg-agent.ssh
	listen_unix "$PWD/$sock"
	GNUPGHOME=$PWD/gnupg connect_inside
	expect_out_contains refused
}

test_a_user_rule_can_expose_the_ssh_agent_again()
{
	sock=agent.sock
	listen_unix "$PWD/$sock"
	SSH_AUTH_SOCK=$PWD/$sock connect_inside --rw "$PWD/$sock"
	expect_out connected
}

# --- Landlock -------------------------------------------------------------------
# Landlock answers EACCES where a read-only mount answers EROFS, so the errno
# tells which layer refused. The cases below are ones the mounts do not
# cover: a host file reached through /proc/self/fd sits on the host's own
# writable mount, and a TCP port inside the sandbox's network namespace.

test_landlock_refuses_a_write_the_mounts_would_allow()
{
	# The command's stderr is $T/err, a file on the host outside every
	# writable path of the policy. Writing to the open descriptor works;
	# opening the file again through /proc reaches the host's writable
	# mount, where only Landlock can say no (the file is the user's own,
	# mode 0644).
	sbx sh -c 'echo direct >&2; echo reopened >/proc/self/fd/2; echo "status $?"'
	expect_status 0
	expect_out "status 2"
	expect_err_contains direct
	expect_err_contains "Permission denied"
	! grep -q reopened "$T/err" || fail "the reopened host file was written"
	sbx python3 -c '
import os
try:
    os.open("/proc/self/fd/2", os.O_WRONLY)
except OSError as e:
    print(e.errno)'
	expect_out 13
}

test_landlock_keeps_the_policy_writable_paths_writable()
{
	mkdir rw-extra
	sbx --rw "$PWD/rw-extra" sh -c 'echo a >here && echo b >rw-extra/f && echo c >/tmp/t && echo d >/dev/null && cat here rw-extra/f /tmp/t'
	expect_status 0
	expect_out "$(printf 'a\nb\nc')"
}

test_landlock_refuses_tcp_to_ports_other_than_the_forwarders()
{
	sbx python3 -c '
import os, socket
def attempt(what, f):
    s = socket.socket()
    try:
        f(s)
        print(what, "ok")
    except OSError as e:
        print(what, e.errno)
attempt("bind", lambda s: s.bind(("127.0.0.1", 8123)))
attempt("connect", lambda s: s.connect(("127.0.0.1", 8124)))
proxy = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
attempt("proxy", lambda s: s.connect(("127.0.0.1", proxy)))'
	expect_status 0
	# Without Landlock: bind ok, connect ECONNREFUSED (111).
	expect_out "$(printf 'bind 13\nconnect 13\nproxy ok')"
}

test_landlock_leaves_tcp_alone_without_a_filtered_network()
{
	sbx --network=false python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
c = socket.create_connection(s.getsockname())
print("ok")'
	expect_status 0
	expect_out ok
}

test_policy_and_debug_show_the_layers()
{
	sbx policy
	expect_status 0
	expect_out_contains "seccomp: "
	expect_out_contains "landlock: ABI "
	sbx --debug true
	expect_err_contains "debug: landlock: ABI "
	expect_err_contains "debug: seccomp: "
}

# --- fail closed ------------------------------------------------------------------
WITHOUT_LANDLOCK="$(cd "$(dirname "$0")" && pwd)/without-landlock.py"

test_a_kernel_without_landlock_refuses_to_run()
{
	sbx_plain() { rc=0; python3 "$WITHOUT_LANDLOCK" "$AS" "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?; }
	sbx_plain --debug sh -c 'echo ran >ran'
	expect_status 1
	expect_no_file ran
	expect_err_contains "the kernel has no Landlock"
	expect_err_contains "--allow-degraded"
	expect_err_contains "debug: layers: landlock: ABI 0"
}

test_allow_degraded_runs_without_landlock_and_says_so_in_the_audit_log()
{
	rc=0
	python3 "$WITHOUT_LANDLOCK" "$AS" --allow-degraded --debug sh -c 'echo ran >ran' \
		>"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	expect_content ran ran
	expect_err_contains "degraded (--allow-degraded): landlock"
	grep '"event":"start"' "$HOME/.local/state/agent-sandbox/audit.jsonl" |
		grep -q '"degraded":\["landlock: ' || fail "no degraded record in the audit log"
	# A run with every layer has no such field.
	sbx true
	[ "$(grep -c '"degraded"' "$HOME/.local/state/agent-sandbox/audit.jsonl")" -eq 1 ] ||
		fail "a full run was recorded as degraded"
}

# --- nested sandboxes -----------------------------------------------------------
# The inner agent-sandbox rides on the outer sandbox: no bwrap, no
# namespaces. It refuses what would loosen the outer policy and applies
# what tightens it with Landlock and seccomp.

test_nested_run_creates_no_namespaces()
{
	sbx sh -c "readlink /proc/self/ns/user /proc/self/ns/mnt; '$AS' readlink /proc/self/ns/user /proc/self/ns/mnt"
	expect_status 0
	[ "$(sed -n 1,2p "$T/out")" = "$(sed -n 3,4p "$T/out")" ] ||
		fail "the inner run has namespaces of its own: $(out)"
}

test_nested_run_tightens_writes_with_landlock()
{
	# Outside /tmp, which stays writable as a whole for Landlock.
	d=$(mktemp -d /var/tmp/as-nested.XXXXXX)
	sbx --rw "$d" sh -c "touch '$d/outer' && '$AS' touch '$d/inner'"
	r=$rc
	ls "$d" >"$T/listing"
	rm -rf "$d"
	[ "$r" -ne 0 ] || fail "the inner run wrote outside its policy"
	grep -qx outer "$T/listing" || fail "the outer run could not write: $(cat "$T/listing")"
	! grep -qx inner "$T/listing" || fail "the inner run wrote $d/inner"
	expect_err_contains "Permission denied"
}

test_nested_run_tightens_the_network_with_seccomp()
{
	sbx --network=true sh -c "'$AS' --network=false python3 -c 'import socket; socket.socket()'"
	[ "$rc" -ne 0 ] || fail "the inner run created an IP socket"
	expect_err_contains "Operation not permitted"
}

test_nested_run_cannot_add_allowed_hosts()
{
	sbx sh -c "'$AS' --allow-host example.org true"
	expect_status 2
	expect_err_contains "network.allow example.org (--allow-host) cannot be applied"
}

test_nested_run_cannot_expose_a_hidden_path()
{
	mkdir secret
	echo s >secret/key
	sbx --exclude secret sh -c "'$AS' --rw secret cat secret/key"
	expect_status 2
	expect_err_contains "cannot be made writable"
	expect_out ""
}

test_nested_run_enforces_read_only_and_hidden_paths_without_mounts()
{
	mkdir sub
	# A read-only path beneath a writable one, and a file to hide, which
	# the outer sandbox shows: a second Landlock ruleset takes the rights
	# away (tests/e2e/nested.sh has the rest).
	sbx sh -c "'$AS' --ro sub touch sub/x"
	[ "$rc" -ne 0 ] || fail "the inner run wrote beneath its read-only path"
	expect_no_file sub/x
	echo data >visible
	sbx sh -c "'$AS' --exclude visible cat visible"
	[ "$rc" -ne 0 ] || fail "the inner run read its excluded file"
	expect_out ""
}

test_nested_run_keeps_the_outer_seccomp_rules()
{
	sbx sh -c "'$AS' python3 '$PROBE' mount unshare"
	expect_out_contains "mount 1"
	expect_out_contains "unshare 1"
}

run_tests
