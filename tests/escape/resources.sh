#!/bin/sh
# Escape attempts against the host's resources. Inside, the command may
# fill what it is given, never more; each outcome is read from outside:
#
#   filling /tmp past limits.tmp, /dev/shm, /run (ENOSPC at the size)
#   a tmpfs left at the kernel's default (half of the host's memory)
#   writing into /dev itself, which bwrap cannot size
#   a fork bomb past limits.pids
#   leaving or raising the memory cgroup from inside (writing its files,
#   remounting them writable), then allocating past the limit
#   a project 1,100 directories deep with a secret at the bottom, under a
#   soft limit of 1,024 descriptors (the secret scan ran out of them)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

MARK="299.$$"

# Runs the sandbox in the background; the command ($1) does its part, then
# touches `ready` and waits in `sleep $MARK`, a process found from outside
# by its command line. Sets $pid to it (host pid).
sbx_until_ready()
{
	rm -f ready
	"$AS" sh -c "$1"'; touch ready; exec sleep '"$MARK" >"$T/out" 2>"$T/err" </dev/null &
	as_pid=$!
	for _ in $(seq 200); do
		[ -e ready ] && break
		sleep 0.05
	done
	[ -e ready ] || fail "the sandbox did not get ready"
	pid=
	for _ in $(seq 100); do
		for p in /proc/[0-9]*; do
			if [ "$(tr '\0' ' ' <"$p/cmdline")" = "sleep $MARK " ]; then
				pid=${p#/proc/}
			fi
		done 2>/dev/null
		[ -n "$pid" ] && break
		sleep 0.05
	done
	[ -n "$pid" ] || fail "the command's process is not found from outside"
}

# Ends the command started by sbx_until_ready and waits for agent-sandbox.
end_sandbox()
{
	kill "$pid" 2>/dev/null
	rc=0
	wait "$as_pid" || rc=$?
}

# From outside: the size in bytes of the filesystem at $1 inside, and
# "ro" or "rw".
fs_inside()
{
	$PY -c '
import os, sys
st = os.statvfs("/proc/%s/root%s" % (sys.argv[1], sys.argv[2]))
print(st.f_blocks * st.f_frsize, "ro" if st.f_flag & os.ST_RDONLY else "rw",
      (st.f_blocks - st.f_bfree) * st.f_frsize)
' "$pid" "$1"
}

test_filling_tmp_stops_at_limits_tmp_and_the_host_sees_no_more_used()
{
	echo '{"limits": {"tmp": "32M"}}' >.agent-sandbox.json
	sbx_until_ready 'dd if=/dev/zero of=/tmp/fill bs=1M count=100 2>dd.err; echo $? >dd.rc'
	set -- $(fs_inside /tmp)
	end_sandbox
	[ "$(cat dd.rc)" != 0 ] || fail "100 MiB fitted into a 32 MiB /tmp"
	grep -q "No space left on device" dd.err || fail "dd failed otherwise: $(cat dd.err)"
	[ "$1" = $((32 << 20)) ] || fail "/tmp inside is $1 bytes, not 32 MiB"
	[ "$2" = rw ] || fail "/tmp inside is not writable"
	[ "$3" -le $((32 << 20)) ] && [ "$3" -ge $((31 << 20)) ] ||
		fail "/tmp inside holds $3 bytes: the write was not stopped at the size"
}

test_every_writable_tmpfs_inside_has_a_size_and_dev_is_read_only()
{
	sbx_until_ready 'touch /dev/planted 2>/dev/null && echo planted-in-dev
		dd if=/dev/zero of=/dev/shm/fill bs=1M count=100 2>/dev/null && echo shm-took-100M
		dd if=/dev/zero of=/run/fill bs=1M count=100 2>/dev/null && echo run-took-100M
		true'
	# Every tmpfs mount point the sandbox has, as its own /proc lists
	# them, looked at through the command's root from outside.
	points=$(awk '{ split($0, a, " - "); split(a[2], b, " "); if (b[1] == "tmpfs") print $5 }' \
		"/proc/$pid/mountinfo" | sort -u)
	[ -n "$points" ] || fail "no tmpfs found inside"
	report=
	for m in $points; do
		report="$report
$m $(fs_inside "$m")"
	done
	end_sandbox
	expect_out ""
	echo "$report" | grep -q '^/tmp 1073741824 rw' || fail "/tmp is not 1 GiB by default:$report"
	echo "$report" | grep -q '^/dev/shm 67108864 rw' || fail "/dev/shm is not 64 MiB:$report"
	echo "$report" | grep -q '^/dev [0-9]* ro' || fail "/dev is writable:$report"
	echo "$report" | while read -r m size mode used; do
		[ -n "$m" ] || continue
		if [ "$mode" = rw ] && [ "$size" -gt $((1 << 30)) ]; then
			fail "$m is a writable tmpfs of $size bytes:$report"
		fi
	done || exit 1
}

test_fork_bomb_stops_at_limits_pids()
{
	# The kernel exempts root from RLIMIT_NPROC: root's limit is a cgroup
	# v1 pids hierarchy, which a host with only cgroup v2 does not have.
	if [ "$(id -u)" -eq 0 ] && ! [ -w /sys/fs/cgroup/pids ]; then
		skip "root without a writable cgroup v1 pids hierarchy has no process limit"
	fi
	echo '{"limits": {"pids": 64}}' >.agent-sandbox.json
	# Children wait on a pipe that closes when the parent exits, so that
	# none outlives the test; at most 2,000 are tried.
	cat >bomb.py <<'PY'
import os, sys
r, w = os.pipe()
made = 0
for _ in range(2000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    made += 1
print(made, flush=True)
# Alive, with every child, until the sandbox ends.
os.read(r, 1)
PY
	sbx_until_ready "$PY bomb.py >made & while [ ! -s made ]; do sleep 0.05; done"
	# From outside: the processes in the sandbox's pid namespace.
	ns=$(readlink "/proc/$pid/ns/pid")
	inside=0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] && inside=$((inside + 1))
	done 2>/dev/null
	end_sandbox
	made=$(cat made)
	[ "$made" -lt 64 ] || fail "$made processes made under a limit of 64 ($inside inside)"
	[ "$made" -ge 50 ] || fail "only $made processes made: the limit is not the one set"
	[ "$inside" -le 72 ] || fail "$inside processes in the sandbox under a limit of 64"
}

test_default_pids_limit_is_1024_and_a_project_cannot_raise_it_unapproved()
{
	sbx $PY -c 'import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[1])'
	expect_status 0
	n=$(out)
	# 1,024 on top of the processes there at the start (the init and
	# the command).
	[ "$n" -ge 1024 ] && [ "$n" -le 1030 ] || fail "the process limit inside is $n"
	echo '{"limits": {"pids": 100000}}' >.agent-sandbox.json
	sbx true
	expect_status 2
	expect_err_contains '"limits.pids" raises the process limit to 100000'
}

test_a_1100_deep_project_is_scanned_within_1024_descriptors_and_its_secret_masked()
{
	(for _ in $(seq 1100); do mkdir d && cd d || exit 1; done
		echo 'API_KEY=deep-secret-value' >.env) || fail "could not make the tree"
	deep=$(printf 'd/%.0s' $(seq 1100)).env
	grep -q deep-secret-value "$deep" || fail "the secret is not there to be had"
	# Twice: a run must leave nothing that breaks the next.
	for _ in 1 2; do
		rc=0
		(ulimit -n 1024 && exec "$AS" cat "$deep") >"$T/out" 2>"$T/err" </dev/null || rc=$?
		expect_status 0
		expect_out ""
	done
	grep -q deep-secret-value "$deep" || fail "the secret on the host changed"
}

test_a_cgroup_left_by_a_killed_run_of_the_same_pid_does_not_stop_the_next()
{
	if [ "$(id -u)" -ne 0 ] || ! [ -w /sys/fs/cgroup/pids ]; then
		skip "only root's runs use a pids cgroup"
	fi
	# exec keeps the shell's pid: the run finds the cgroup a killed run
	# with that pid would have left.
	sh -c 'own=$(sed -n "s/^[0-9]*:pids://p" /proc/self/cgroup)
		dir=/sys/fs/cgroup/pids${own%/}/agent-sandbox-$$
		echo "$dir" >"$1"
		mkdir "$dir" && exec "$0" true' "$AS" "$T/dir" >"$T/out" 2>"$T/err"
	rc=$?
	expect_status 0
	dir=$(cat "$T/dir")
	! [ -d "$dir" ] || fail "the run left $dir"
}

test_command_cannot_leave_or_raise_its_memory_cgroup()
{
	own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
	[ -n "$own" ] && [ -w "/sys/fs/cgroup/memory${own%/}" ] ||
		skip "no memory cgroup for this user (the rlimit holds memory per process)"
	rc=0
	"$AS" --memory 64m sh -c '
		for d in /sys/fs/cgroup/memory /sys/fs/cgroup/memory/..; do
			echo $$ >"$d/cgroup.procs"
			echo -1 >"$d/memory.limit_in_bytes"
			echo -1 >"$d/memory.memsw.limit_in_bytes"
		done 2>/dev/null
		mount -o remount,rw /sys/fs/cgroup/memory 2>/dev/null && echo remounted
		mount -t cgroup -o memory none /mnt 2>/dev/null && echo mounted
		exec '"$PY"' -c "b = bytearray(300 << 20); print(\"survived\")"' \
		>"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 137
	expect_out ""
	expect_err_contains "the sandbox ran out of memory (limit 64 MiB"
}

run_tests
