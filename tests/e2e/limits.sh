#!/bin/sh
# Resource limits: the "limits" key and the --memory, --cpus, --pids,
# --timeout and --tmp-size flags. Outcomes are read from outside: the exit
# status, the processes left on the host, the audit log. Root holds memory,
# cpus and pids in cgroups where it can make them; a user without a cgroup
# gets rlimits and a note naming what is weaker.
. "$(dirname "$0")/../lib.sh"

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
MARK="297.$$"

# Host processes whose command line is exactly "sleep $1".
count_sleepers()
{
	n=0
	for p in /proc/[0-9]*; do
		[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "sleep $1 " ] && n=$((n + 1))
	done
	echo "$n"
}

test_timeout_ends_sleep_10_with_124_in_about_a_second()
{
	start=$(date +%s)
	sbx --timeout 1s sleep 10
	took=$(($(date +%s) - start))
	expect_status 124
	[ "$took" -lt 5 ] || fail "the 1s timeout took ${took}s"
	expect_err_contains "agent-sandbox: the command ran out of time (--timeout 1s)"
	sbx log --json -n 1
	expect_out_contains '"event":"end","status":124,"error":"the command ran out of time'
}

test_timeout_kills_background_children_and_ones_that_ignore_sigterm()
{
	# One child in the background, one that ignores SIGTERM: the first
	# goes at the deadline, the second at the end of the grace.
	sbx --timeout 500ms sh -c "sleep $MARK & (trap '' TERM; sleep $MARK) & wait"
	expect_status 124
	[ "$(count_sleepers "$MARK")" = 0 ] ||
		fail "$(count_sleepers "$MARK") sleepers outlived the timeout"
}

test_timeout_kills_a_command_that_ignores_sigterm_after_the_grace()
{
	# The grace (5 s) is the one wait of this file: a command that
	# ignores SIGTERM ends only with the SIGKILL after it.
	start=$(date +%s)
	sbx --timeout 200ms sh -c "trap '' TERM; sleep $MARK & sleep $MARK"
	took=$(($(date +%s) - start))
	expect_status 124
	[ "$took" -ge 4 ] && [ "$took" -lt 10 ] || fail "ended after ${took}s, not after the grace"
	[ "$(count_sleepers "$MARK")" = 0 ] ||
		fail "$(count_sleepers "$MARK") sleepers outlived the SIGKILL"
}

test_timeout_from_the_config_names_its_file()
{
	echo '{"limits": {"timeout": "500ms"}}' >.agent-sandbox.json
	sbx sleep 10
	expect_status 124
	expect_err_contains "the command ran out of time (500ms, limits.timeout at $PWD/.agent-sandbox.json:1:24)"
}

test_a_command_within_its_limits_runs_untouched()
{
	sbx --timeout 10s --memory 256m --pids 64 --cpus 1 sh -c 'echo fine'
	expect_status 0
	expect_out fine
	expect_err_lacks "ran out"
}

test_memory_hog_is_killed_with_137_and_a_message_when_a_cgroup_holds_it()
{
	memory_cgroup || skip "no memory cgroup for this user (the rlimit test covers it)"
	sbx --memory 64m $PY -c 'b = bytearray(300 << 20); print("survived")'
	expect_status 137
	expect_out ""
	expect_err_contains "agent-sandbox: the sandbox ran out of memory (limit 64 MiB, --memory)"
	sbx log --json -n 1
	expect_out_contains '"status":137,'
	expect_out_contains '"error":"the sandbox ran out of memory (limit 64 MiB'
	# The supervisor lived to say it; the next sandbox is unaffected.
	sbx sh -c 'echo next'
	expect_status 0
	expect_out next
}

test_memory_hog_fails_its_allocation_under_the_rlimit_without_a_cgroup()
{
	! memory_cgroup || skip "a memory cgroup holds the limit for this user"
	sbx --memory 64m $PY -c '
try:
    b = bytearray(300 << 20)
    print("allocated")
except MemoryError:
    print("MemoryError")'
	expect_status 0
	expect_out MemoryError
	expect_err_contains "memory limit enforced as address-space limit (RLIMIT_AS): 64 MiB per process"
}

test_cpus_without_a_cgroup_are_named_as_not_enforced()
{
	if [ "$(id -u)" -eq 0 ] && [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
		sbx --cpus 0.5 sh -c 'echo ok'
		expect_status 0
		expect_err_lacks "cpus not enforced"
		return
	fi
	sbx --cpus 0.5 sh -c 'echo ok'
	expect_status 0
	expect_err_contains "cpus not enforced"
}

test_cpus_quota_is_written_to_the_cpu_cgroup()
{
	[ "$(id -u)" -eq 0 ] && [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] ||
		skip "no cpu cgroup v1 for this user"
	# From outside while it runs: the quota of the cgroup the command is in.
	rm -f ready
	"$AS" --cpus 0.5 sh -c "touch ready; exec sleep $MARK" >/dev/null 2>&1 </dev/null &
	as_pid=$!
	for _ in $(seq 100); do [ -e ready ] && break; sleep 0.05; done
	pid=
	for _ in $(seq 100); do
		for p in /proc/[0-9]*; do
			[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "sleep $MARK " ] && pid=${p#/proc/}
		done
		[ -n "$pid" ] && break
		sleep 0.05
	done
	[ -n "$pid" ] || { kill $as_pid; fail "the command is not found from outside"; }
	cg=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3 }' "/proc/$pid/cgroup")
	quota=$(cat "/sys/fs/cgroup/cpu$cg/cpu.cfs_quota_us")
	period=$(cat "/sys/fs/cgroup/cpu$cg/cpu.cfs_period_us")
	kill "$pid"
	wait "$as_pid"
	[ "$quota" = 50000 ] && [ "$period" = 100000 ] ||
		fail "cgroup $cg has quota $quota per $period"
}

test_fork_bomb_is_contained_by_pids_32_and_the_host_keeps_no_process()
{
	if [ "$(id -u)" -eq 0 ] && ! [ -w /sys/fs/cgroup/pids ]; then
		skip "root without a pids cgroup has no process limit"
	fi
	# Sleepers until a fork fails (at most 200), counted from outside
	# while they live. A shell would exit at its first failed fork.
	"$AS" --pids 32 $PY -c '
import os, sys
made = 0
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execvp("sleep", ["sleep", sys.argv[1]])
    made += 1
open("made", "w").write(str(made))
open("ready", "w").close()
while True:
    try:
        os.wait()
    except ChildProcessError:
        break' "$MARK" >"$T/out" 2>"$T/err" </dev/null &
	as_pid=$!
	for _ in $(seq 200); do [ -e ready ] && break; sleep 0.05; done
	inside=$(count_sleepers "$MARK")
	for p in /proc/[0-9]*; do
		[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "sleep $MARK " ] && kill "${p#/proc/}"
	done 2>/dev/null
	wait "$as_pid"
	[ -e ready ] || fail "the bomb did not finish"
	# The command and the sandbox's own processes (SANDBOX_CGROUP_OVERHEAD)
	# come on top of the 32.
	[ "$inside" -le 36 ] || fail "$inside sleepers alive under --pids 32"
	[ "$inside" -ge 20 ] || fail "only $inside sleepers: the limit is not the one set"
	[ "$(count_sleepers "$MARK")" = 0 ] || fail "sleepers outlived the sandbox"
}

test_project_config_raising_memory_is_refused_lowering_it_applies()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	echo '{"limits": {"memory": "1g", "timeout": "1m"}}' >"$HOME/.config/agent-sandbox/config.jsonc"
	echo '{"limits": {"memory": "2g"}}' >.agent-sandbox.json
	sbx sh -c 'touch ran'
	expect_status 2
	expect_err_contains '"limits.memory" raises memory to 2 GiB (1 GiB by'
	expect_no_file ran
	echo '{"limits": {"timeout": "5m"}}' >.agent-sandbox.json
	sbx sh -c 'touch ran'
	expect_status 2
	expect_err_contains '"limits.timeout" raises the timeout to 5m (1m by'
	echo '{"limits": {"memory": "512m", "timeout": "30s", "cpus": 2}}' >.agent-sandbox.json
	sbx policy
	expect_status 0
	expect_out_contains "  memory           512 MiB ($PWD/.agent-sandbox.json:1:23)"
	expect_out_contains "  timeout          30s ($PWD/.agent-sandbox.json:1:42)"
	expect_out_contains "  cpus             2 ($PWD/.agent-sandbox.json:1:57)"
}

test_malformed_sizes_and_durations_exit_2_naming_the_input()
{
	for args in "--memory 1.5g" "--memory 12q" "--memory 1m" "--timeout 10" "--timeout 5w" \
		"--cpus -1" "--cpus 0" "--pids abc" "--tmp-size lots"; do
		# shellcheck disable=SC2086
		sbx $args sh -c 'touch ran'
		expect_status 2
		expect_err_contains "flag ${args% *}: invalid value \"${args#* }\""
		expect_err_contains "(expected "
		expect_no_file ran
	done
	echo '{"limits": {"memory": "lots"}}' >.agent-sandbox.json
	sbx sh -c 'touch ran'
	expect_status 2
	expect_err_contains "$PWD/.agent-sandbox.json:1:23: expected a size like"
	expect_no_file ran
}

test_policy_and_doctor_show_the_limits_and_how_they_are_held()
{
	sbx --memory 128m --cpus 0.5 --timeout 2m policy
	expect_status 0
	expect_out_contains "  memory           128 MiB (--memory): "
	expect_out_contains "  cpus             0.5 (--cpus): "
	expect_out_contains "  timeout          2m (--timeout): SIGTERM to every process"
	expect_out_contains "  processes        1024 (default): "
	if memory_cgroup; then
		expect_out_contains "(--memory): memory cgroup"
	else
		expect_out_contains "(--memory): RLIMIT_AS, weaker"
	fi
	sbx doctor
	expect_out_contains "memory limit: "
	expect_out_contains "cpus limit: "
	expect_out_contains "pids limit: "
	expect_out_contains "timeout: "
}

run_tests
