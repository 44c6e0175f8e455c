#!/bin/sh
# Escape attempts against the terminal agent-sandbox was started from.
# script(1) gives each run a real pseudo-terminal, so the kernel would
# honour the requests if nothing stopped them (dev.tty.legacy_tiocsti
# permitting):
#
#   TIOCSTI on stdin, on a reopened /dev/tty and through /proc/self/fd/0
#   TIOCSTI with high bits set in the request number (the filter must
#   compare the 32 bits the kernel uses)
#   TIOCLINUX
#   opening the controlling terminal when stdin is not a terminal (the
#   command is then in a new session and has none)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# script(1) runs its command with $SHELL, which for the test user is
# nologin.
export SHELL=/bin/sh

# Runs ARGS under agent-sandbox on a fresh pseudo-terminal; stdout and
# stderr of the run end up in $T/out.
sbx_on_a_terminal()
{
	rc=0
	# script runs its argument with sh -c; quote each word.
	quoted=
	for word in "$@"; do
		quoted="$quoted '$(printf '%s' "$word" | sed "s/'/'\\\\''/g")'"
	done
	script -qec "'$AS'$quoted" /dev/null </dev/null >"$T/out" 2>"$T/err" || rc=$?
	tr -d '\r' <"$T/out" >"$T/out.clean" && mv "$T/out.clean" "$T/out"
}

# injector: for each way of reaching the terminal, TIOCSTI one byte and
# print the errno; then print whatever arrived on the terminal's input.
write_injector()
{
	cat >inject.c <<'C'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static void try(const char *what, int fd, unsigned long request)
{
	char c = 'X';
	long r = syscall(SYS_ioctl, fd, request, &c);
	printf("%s %d\n", what, r == 0 ? 0 : errno);
}

int main(void)
{
	struct termios raw;
	tcgetattr(0, &raw);
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 2;
	tcsetattr(0, TCSANOW, &raw);

	try("stdin", 0, TIOCSTI);
	try("high-bits", 0, 0xdead00000000UL | TIOCSTI);
	int tty = open("/dev/tty", O_RDWR);
	if (tty >= 0)
		try("dev-tty", tty, TIOCSTI);
	int proc = open("/proc/self/fd/0", O_RDWR);
	if (proc >= 0)
		try("proc-fd", proc, TIOCSTI);
	else
		printf("proc-fd 1\n"); /* not even reopened (Landlock) */
	char sel[2] = {2, 0}; /* TIOCL_SETSEL */
	long r = syscall(SYS_ioctl, 0, TIOCLINUX, sel);
	printf("tioclinux %d\n", r == 0 ? 0 : errno);

	/* script(1) itself may pass an end-of-file character along; count
	 * only the bytes pushed above. */
	char buf[64];
	ssize_t n = read(0, buf, sizeof buf), injected = 0;
	for (ssize_t i = 0; i < n; i++)
		injected += buf[i] == 'X';
	printf("injected %zd\n", injected);
	return 0;
}
C
	cc -o inject inject.c || fail "cc failed"
}

test_tiocsti_and_tioclinux_on_a_real_terminal_are_refused()
{
	write_injector
	sbx_on_a_terminal ./inject
	expect_status 0
	expect_out "stdin 1
high-bits 1
dev-tty 1
proc-fd 1
tioclinux 1
injected 0"
}

test_the_same_injection_works_outside_so_the_refusal_is_the_sandboxs()
{
	# The same program outside, as a check that the terminal and the
	# kernel would take the bytes: the sandbox is what refuses them.
	[ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" = 1 ] || return 0
	write_injector
	script -qec ./inject /dev/null </dev/null | tr -d '\r' >"$T/out"
	expect_out_contains "stdin 0"
	expect_out_contains "high-bits 0"
	expect_out_contains "injected 4"
}

test_without_a_terminal_the_command_has_no_controlling_terminal()
{
	# agent-sandbox's stdin is not the terminal here, so the command runs
	# in a new session: /dev/tty cannot be opened, and the terminal the
	# user sits at cannot be reached through it.
	write_injector
	script -qec "'$AS' sh -c './inject; readlink /proc/self/fd/0' </dev/null" /dev/null </dev/null |
		tr -d '\r' >"$T/out"
	expect_out_lacks "dev-tty"
	expect_out_contains "/dev/null"
	# Outside the sandbox the same shell on the same terminal opens it.
	script -qec "sh -c 'exec 3<>/dev/tty && echo opened' </dev/null" /dev/null </dev/null |
		tr -d '\r' >"$T/out"
	expect_out_contains opened
}

run_tests
