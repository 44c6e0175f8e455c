#!/bin/sh
# Exit status and signals: the command's own status comes back out, a signal
# becomes 128+N, and set-up failures never run the command.
. "$(dirname "$0")/../lib.sh"

test_exit_status_is_the_commands_own()
{
	for code in 0 1 3 42 125 255; do
		sbx sh -c "exit $code"
		expect_status "$code"
	done
}

test_command_killed_by_a_signal_exits_128_plus_the_signal()
{
	for sig in TERM KILL SEGV; do
		sbx sh -c "kill -$sig \$\$"
		n=$(kill -l "$sig" 2>/dev/null || true)
		case $sig in TERM) n=15 ;; KILL) n=9 ;; SEGV) n=11 ;; esac
		expect_status $((128 + n))
	done
}

test_missing_program_exits_127_and_names_it()
{
	sbx no-such-program-anywhere
	expect_status 127
	expect_err_contains no-such-program-anywhere
}

test_non_executable_program_exits_126()
{
	printf 'echo hi\n' >script
	chmod 644 script
	sbx ./script
	expect_status 126
}

# Waits at most 10 s for the sandboxed command to touch "started".
wait_for_started()
{
	i=0
	while [ ! -e started ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -e started ] || fail "the command did not start"
}

# Starts a run in the background whose command records that it started and
# then waits; prints the pid of agent-sandbox.
start_waiting_run()
{
	# Background jobs of a script start with SIGINT ignored; the
	# sandbox keeps ignored signals ignored, so reset them for this run.
	env --default-signal "$AS" sh -c 'trap "echo got-$1 > got; exit 7" '"$1"'; touch started; while :; do sleep 0.05; done' sh "$1" \
		>"$T/out" 2>"$T/err" </dev/null &
	bg=$!
	wait_for_started
}

# Waits at most 10 s for the background run; sets rc to its status.
wait_bg()
{
	i=0
	while kill -0 $bg 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if kill -0 $bg 2>/dev/null; then
		kill -KILL $bg
		fail "agent-sandbox did not exit after the signal"
	fi
	rc=0
	wait $bg || rc=$?
}

test_term_int_hup_are_forwarded_to_the_command()
{
	for sig in TERM INT HUP; do
		rm -f started got
		start_waiting_run $sig
		kill -$sig $bg
		wait_bg
		expect_status 7
		expect_content got "got-$sig"
	done
}

test_unhandled_term_exits_143()
{
	"$AS" sh -c 'touch started; exec sleep 30' >"$T/out" 2>"$T/err" </dev/null &
	bg=$!
	wait_for_started
	sleep 0.2
	kill -TERM $bg
	wait_bg
	expect_status 143
}

test_killing_agent_sandbox_takes_the_sandbox_down()
{
	marker="$T/marker"
	"$AS" sh -c 'touch started; while :; do sleep 0.1; done' "$marker" \
		>"$T/out" 2>"$T/err" </dev/null &
	bg=$!
	wait_for_started
	pgrep -f "$marker" >/dev/null || fail "the command is not running"
	kill -KILL $bg
	wait $bg 2>/dev/null
	i=0
	while pgrep -f "$marker" >/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	if pgrep -f "$marker" >/dev/null; then
		pkill -KILL -f "$marker"
		fail "the sandboxed command outlived agent-sandbox"
	fi
}

test_missing_bwrap_fails_with_an_install_hint_and_runs_nothing()
{
	mkdir bin
	ln -s "$(command -v sh)" bin/sh
	PATH="$T/work/bin" sbx sh -c 'touch ran'
	expect_status 1
	expect_err_contains bwrap
	expect_err_contains "apt"
	expect_no_file ran
}

test_failing_bwrap_is_reported_and_nothing_runs()
{
	mkdir bin
	printf '#!/bin/sh\necho "bwrap: Creating new namespace failed: Operation not permitted" >&2\nexit 1\n' >bin/bwrap
	chmod +x bin/bwrap
	PATH="$T/work/bin:$PATH" sbx sh -c 'touch ran'
	expect_status 1
	expect_err_contains "cannot set up the sandbox"
	expect_err_contains "Creating new namespace failed"
	expect_no_file ran
}

test_config_error_exits_2_and_runs_nothing()
{
	echo '{"filesystem": {"ro": 5}}' >.agent-sandbox.json
	sbx sh -c 'touch ran'
	expect_status 2
	expect_no_file ran
}

# /tmp is private inside: a program installed under the host's /tmp is not
# found there, and the user is told where it is and how to show it.
test_missing_program_under_the_hosts_tmp_says_tmp_is_private()
{
	dir=$(mktemp -d /tmp/as-hidden.XXXXXX) || fail "mktemp"
	printf '#!/bin/sh\necho hello-from-tmp\n' >"$dir/hellotmp"
	chmod 755 "$dir" "$dir/hellotmp"
	PATH="$dir:$PATH" sbx -- hellotmp
	cp "$T/err" "$T/err.hidden"
	first=$rc
	PATH="$dir:$PATH" sbx --ro "$dir" -- hellotmp
	rm -rf "$dir"
	[ "$first" -eq 127 ] || fail "expected 127 without --ro, got $first"
	grep -qF "hellotmp: command not found" "$T/err.hidden" || fail "no 'command not found'"
	grep -qF "hint: hellotmp is $dir/hellotmp on the host, but /tmp is private inside the sandbox" \
		"$T/err.hidden" || fail "no hint: $(cat "$T/err.hidden")"
	grep -qF -- "--ro $dir" "$T/err.hidden" || fail "the hint does not name --ro $dir"
	expect_status 0
	expect_out "hello-from-tmp"
}

test_missing_program_nowhere_on_the_host_gets_no_hint()
{
	sbx -- no-such-program-xyz
	expect_status 127
	expect_err_lacks "hint:"
}

run_tests
