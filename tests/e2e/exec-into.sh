#!/bin/sh
# exec-into: a second command in a running sandbox sees what the first one
# sees (files, processes, secrets masked, network refused) and nothing
# more; only the sandbox's owner on the host can start one.
. "$(dirname "$0")/../lib.sh"

# A sandbox named $1 running the shell text $2 (then sleeping); waits until
# it has made ./ready.
start_sandbox()
{
	bg_sbx "$1" --name "$1" sh -c "$2; touch ready; exec sleep 3301"
	wait_file ready
}

test_exec_into_sees_the_same_files_and_processes()
{
	use_private_rundir
	start_sandbox one 'echo inside >/tmp/marker'
	sbx exec-into one sh -c 'cat /tmp/marker; ps -o comm= -p 1 2>/dev/null || cat /proc/1/comm'
	expect_status 0
	expect_out_contains inside
	[ -e /tmp/marker ] && [ "$(cat /tmp/marker)" = inside ] && fail "the sandbox's /tmp is the host's"
	# The first command's sleep is in the same pid namespace.
	sbx exec-into one sh -c 'for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr "\0" " "; echo; done'
	expect_out_contains "sleep 3301"
}

test_exec_into_keeps_secrets_masked_and_the_project_writable()
{
	use_private_rundir
	echo 'API_KEY=sk-live-0123456789abcdef0123' >.env
	start_sandbox masked true
	sbx exec-into masked cat .env
	expect_out_lacks sk-live
	sbx exec-into masked sh -c 'echo made >from-exec'
	expect_status 0
	expect_content from-exec made
	sbx exec-into masked sh -c 'echo x >"$HOME/outside-project"'
	[ "$rc" -ne 0 ] || fail "wrote outside the project"
	[ -e "$HOME/outside-project" ] && fail "the file exists on the host"
	return 0
}

test_exec_into_gets_the_same_network_refusal()
{
	use_private_rundir
	start_sandbox net true
	sbx exec-into net curl -s --max-time 10 -w '\n%{http_code}' http://other.example/
	expect_out_contains "other.example is not in network.allow"
	[ "$(tail -1 "$T/out")" = 403 ] || fail "expected status 403: $(out)"
}

test_exec_into_passes_stdio_and_the_exit_status()
{
	use_private_rundir
	start_sandbox io true
	echo "from stdin" | "$AS" exec-into io sh -c 'cat; echo to-stderr >&2; exit 7' \
		>"$T/out" 2>"$T/err"
	rc=$?
	expect_status 7
	expect_out "from stdin"
	expect_err_contains to-stderr
	sbx exec-into io no-such-command-here
	expect_status 127
	expect_err_contains "no-such-command-here: command not found"
}

test_exec_into_passes_signals_to_the_command()
{
	use_private_rundir
	start_sandbox sig true
	"$AS" exec-into sig sh -c 'trap "echo caught; exit 3" TERM; touch sig-ready; while :; do sleep 0.05; done' \
		>"$T/out" 2>"$T/err" &
	client=$!
	wait_file sig-ready
	kill -TERM "$client"
	rc=0
	wait "$client" || rc=$?
	expect_status 3
	expect_out caught
}

test_exec_into_ends_with_the_sandbox()
{
	use_private_rundir
	start_sandbox ending true
	"$AS" exec-into ending sh -c 'touch long-ready; exec sleep 3302' >"$T/out" 2>"$T/err" &
	client=$!
	wait_file long-ready
	sbx stop ending --timeout 2
	rc=0
	wait "$client" || rc=$?
	# SIGTERM from stop ends it (143), or the sandbox's end does first.
	[ "$rc" -eq 143 ] || grep -q "the sandbox ended" "$T/err" ||
		fail "exec-into: status $rc after its sandbox was stopped: $(cat "$T/err")"
	wait_gone "$client"
	for p in /proc/[0-9]*; do
		cat "$p/cmdline" 2>/dev/null | tr '\0' ' ' | grep -q '^sleep 3302' &&
			fail "exec-into's command outlived the sandbox"
	done
	return 0
}

test_exec_into_unknown_name_or_no_command_exits_2()
{
	use_private_rundir
	start_sandbox known true
	sbx exec-into nosuch true
	expect_status 2
	expect_err_contains 'no running sandbox named "nosuch"'
	expect_err_contains "known"
	sbx exec-into known
	expect_status 2
	expect_err_contains "missing the command"
	sbx exec-into '../x' true
	expect_status 2
}

test_exec_into_is_refused_from_inside_another_sandbox()
{
	use_private_rundir
	start_sandbox target true
	sock="$STATE/target.sock"
	[ -S "$sock" ] || fail "no control socket at $sock"
	# Even a policy that shows the owner's state directory to a second
	# sandbox does not let it start commands in the first: the request,
	# well formed, comes from another pid namespace.
	sbx --rw "$XDG_RUNTIME_DIR" python3 -c '
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
argv = [b"sh", b"-c", ("touch " + sys.argv[2]).encode()]
payload = b"".join(a + b"\0" for a in argv)
head = struct.pack("<IHHIi", 0x58425341, 1, 1, 0, len(argv))
s.sendmsg([head + payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))])
reply = s.recv(64)
print("reply", len(reply))
sys.exit(0 if reply else 1)
' "$sock" "$T/work/planted"
	[ "$rc" -ne 0 ] || fail "exec-into from inside a sandbox got an answer: $(out)"
	sleep 0.2
	[ -e planted ] && fail "the command ran in the target sandbox"
	# The same request from the host works: the test can fail.
	sbx exec-into target sh -c "touch $T/work/planted"
	expect_status 0
	expect_file planted
}

run_tests
