#!/bin/sh
# Escape attempts against the host's processes. agent-sandbox keeps a
# dropped secret in its own environment on the host; inside there must be
# no way to it, nor to stopping or steering that process:
#
#   reading /proc/<host pid>/environ and /proc/<host pid>/mem
#   scanning the environ and memory of every process visible inside
#   ptrace(PTRACE_ATTACH) and PTRACE_SEIZE of the host process
#   killing the host agent-sandbox process (it carries the proxy)
#   kill -1: signalling every process the sandbox can reach
#   setuid binaries (su, mount) under no_new_privs
#   replacing /run/agent-sandbox (launcher, real programs, markers)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

SECRET_VALUE=host-only-secret-4f1d9c

# Runs the sandbox in the background with a dropped secret in its
# environment, tells the command the host pid of agent-sandbox in the
# file host-pid, and waits. Sets $rc, $T/out, $T/err like sbx.
sbx_knowing_host_pid()
{
	rm -f host-pid
	MY_API_TOKEN=$SECRET_VALUE "$AS" "$@" >"$T/out" 2>"$T/err" </dev/null &
	host_pid=$!
	# The secret is there to be had on the host: the host reads it from
	# the very process the command is told about.
	host_saw_secret=no
	for _ in $(seq 100); do
		if tr '\0' '\n' <"/proc/$host_pid/environ" 2>/dev/null | grep -qx "MY_API_TOKEN=$SECRET_VALUE"; then
			host_saw_secret=yes
			break
		fi
		sleep 0.02
	done
	echo "$host_pid" >host-pid.tmp && mv host-pid.tmp host-pid
	rc=0
	wait "$host_pid" || rc=$?
}

# Inside: waits until the host pid is known.
WAIT_FOR_PID='while [ ! -s host-pid ]; do sleep 0.02; done; hp=$(cat host-pid)'

test_host_pids_are_invisible_so_their_environ_and_mem_cannot_be_read()
{
	sbx_knowing_host_pid sh -c "$WAIT_FOR_PID"'
		[ -e /proc/$hp ] && echo "host pid visible"
		cat /proc/$hp/environ 2>/dev/null && echo "read environ"
		head -c 64 /proc/$hp/mem 2>/dev/null && echo "read mem"
		ls /proc/$hp/root/ 2>/dev/null && echo "reached root"
		echo "$MY_API_TOKEN"; true'
	expect_status 0
	expect_out ""
	[ "$host_saw_secret" = yes ] || fail "the host process did not hold the secret; nothing was tested"
}

test_no_process_visible_inside_holds_the_dropped_secret()
{
	# Every process the command can see, environ and readable memory, for
	# a value only the host process has. The needle comes from a file so
	# that the scanner's own code does not contain it; its own memory is
	# skipped.
	printf '%s' "$SECRET_VALUE" >needle
	cat >scan.py <<'PY'
import glob, os
needle = open("needle", "rb").read()
os.unlink("needle")
found, scanned = [], 0
for proc in glob.glob("/proc/[0-9]*"):
    pid = int(proc.rsplit("/", 1)[1])
    if pid == os.getpid():
        continue
    try:
        if needle in open(proc + "/environ", "rb").read():
            found.append(proc + "/environ")
        with open(proc + "/mem", "rb") as mem:
            for line in open(proc + "/maps"):
                span, perms = line.split()[:2]
                start, end = (int(x, 16) for x in span.split("-"))
                # Unreadable mappings, the vsyscall page, and the huge
                # reservations a sanitizer makes hold nothing of ours.
                if "r" not in perms or start >= 1 << 63 or end - start > 1 << 28:
                    continue
                try:
                    mem.seek(start)
                    if needle in mem.read(end - start):
                        found.append(proc + "/mem")
                    scanned += 1
                except OSError:
                    pass
    except OSError:
        pass
print("found:", " ".join(found) or "nothing")
print("scanned" if scanned else "scanned no memory")
PY
	sbx_knowing_host_pid "$PY" scan.py
	expect_status 0
	# No environment or memory readable inside held the secret (Landlock
	# also keeps the command from reading the init's memory).
	[ "$(head -1 "$T/out")" = "found: nothing" ] || fail "$(out)"
}

test_ptrace_of_the_host_process_fails()
{
	cat >attach.py <<'PY'
import ctypes, os, time
while not os.path.exists("host-pid") or not open("host-pid").read().strip():
    time.sleep(0.02)
pid = int(open("host-pid").read())
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206
for name, request in (("attach", PTRACE_ATTACH), ("seize", PTRACE_SEIZE)):
    r = libc.ptrace(request, pid, None, None)
    print(name, "attached" if r == 0 else os.strerror(ctypes.get_errno()))
PY
	sbx_knowing_host_pid "$PY" attach.py
	expect_status 0
	expect_out "attach No such process
seize No such process"
}

test_killing_the_host_process_fails()
{
	sbx_knowing_host_pid sh -c "$WAIT_FOR_PID"'
		for sig in KILL TERM STOP; do kill -$sig "$hp" 2>/dev/null && echo "sent $sig"; done
		kill -KILL "-$hp" 2>/dev/null && echo "sent to the group"
		exit 7'
	# The command's own status came back: agent-sandbox outlived the attempt.
	expect_status 7
	expect_out ""
}

test_kill_minus_one_reaches_no_host_process()
{
	sleep 60 &
	host_sleep=$!
	echo "$host_sleep" >>"$T/pids"
	# kill(-1) spares the caller and the namespace's init; a sleep inside
	# shows the signal went out.
	sbx sh -c 'sleep 30 & kill -KILL -1; wait $!; echo "inside: $?"'
	expect_status 0
	expect_out "inside: 137"
	sleep 0.2
	kill -0 "$host_sleep" 2>/dev/null || fail "a host process died"
}

test_setuid_binaries_gain_no_privileges()
{
	sbx sh -c 'su -s /bin/sh -c "touch /etc/agent-sandbox-su" root </dev/null 2>/dev/null && echo "su ran"
		/usr/bin/mount -t tmpfs none "$HOME" 2>/dev/null && echo "mount ran"
		grep -q "^NoNewPrivs:.*1" /proc/self/status || echo "privileges can be gained"
		grep "^CapEff" /proc/self/status; true'
	expect_status 0
	expect_out "CapEff:	0000000000000000"
	expect_no_file /etc/agent-sandbox-su
}

test_run_agent_sandbox_cannot_be_replaced()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'r=/run/agent-sandbox
		printf "#!/bin/sh\nexit 0\n" >/tmp/fake && chmod +x /tmp/fake
		mv $r /run/old 2>/dev/null && echo "moved the directory"
		rm -f $r/agent-sandbox 2>/dev/null; [ -e $r/agent-sandbox ] || echo "removed the launcher"
		cp /tmp/fake $r/agent-sandbox 2>/dev/null && echo "replaced the launcher"
		cp /tmp/fake $r/bin/git 2>/dev/null && echo "replaced the real git"
		rm -f $r/presets/git 2>/dev/null; [ -e $r/presets/git ] || echo "removed the marker"
		touch $r/blocked/git 2>/dev/null && echo "added a marker"
		chmod 755 $r 2>/dev/null && echo "chmod"
		mount --bind /tmp $r 2>/dev/null && echo "mounted over"
		cp /tmp/fake /usr/bin/git 2>/dev/null && echo "replaced /usr/bin/git"
		git reset --hard 2>/dev/null && echo "reset ran"; true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
}


# Descriptors the caller leaves open reach nothing inside: a directory's
# (through /proc/self/fd/N every file beneath it is there, past the masks)
# and a connection to a host unix socket. The caller here is a program that
# keeps them open across exec, as a shell's "exec 3<dir" does.
test_descriptors_the_caller_left_open_do_not_reach_the_command()
{
	mkdir -p "$HOME/.ssh" "$HOME/svc"
	echo "$SECRET_VALUE" >"$HOME/.ssh/id_ed25519"
	"$PY" -c '
import os, socket, subprocess, sys
home, as_bin, out, err, heard = sys.argv[1:6]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(home + "/svc/s.sock")
server.listen(1)
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(home + "/svc/s.sock")
peer = server.accept()[0]
peer.settimeout(3)
d = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
script = ("cat /proc/self/fd/%d/.ssh/id_ed25519; ls /proc/self/fd/%d/.ssh; "
          "echo reached >&%d; true") % (d, d, conn.fileno())
with open(out, "w") as o, open(err, "w") as e:
    subprocess.run([as_bin, "sh", "-c", script], stdout=o, stderr=e,
                   stdin=subprocess.DEVNULL, pass_fds=(d, conn.fileno()))
try:
    data = peer.recv(100)
except OSError:
    data = b""
open(heard, "wb").write(data)
' "$HOME" "$AS" "$T/out" "$T/err" "$T/heard"
	expect_out_lacks "$SECRET_VALUE"
	expect_out_lacks id_ed25519
	[ ! -s "$T/heard" ] || fail "the host socket got: $(cat "$T/heard")"
}

run_tests
