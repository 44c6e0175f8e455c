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

run_tests
