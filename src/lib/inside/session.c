/* The daemon's helpers inside a session's sandbox (session.h). They run
 * under the sandbox's every layer, so they can do nothing its processes
 * could not do themselves. */
#include "inside/session.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/term_escape.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp.h"

_Noreturn void session_hold_main(void)
{
	for (;;)
		pause();
}

static _Noreturn void fail(const char *what, const char *name, int e, int status)
{
	char *shown = term_escape(name); /* freed by _exit */
	fprintf(stderr, "agent-sandbox: %s%s: %s\n", what, shown,
		e == ENOENT && status == 127 ? "command not found" : strerror(e));
	_exit(status);
}

/* --no-ptrace: nothing the process starts reaches into another process
 * of the sandbox. The calls are refused by a seccomp filter; the agent
 * CLI's memory through /proc/PID/mem (the same kernel check as ptrace,
 * on a path) by a Landlock layer under which nothing beneath /proc is
 * written. Without Landlock in the kernel the sandbox has none either,
 * and the filter stands alone. */
static void no_ptrace(void)
{
	struct error err = ERROR_INIT;
	if (seccomp_filter_load_command(SECCOMP_COMMAND_NO_PTRACE, &err) < 0)
		fail("", err.msg ? err.msg : "seccomp", EPERM, 126);
	static const struct landlock_denial proc = {"/proc", LANDLOCK_DENY_WRITE};
	if (landlock_abi() >= LANDLOCK_ABI_FS &&
	    landlock_apply_denials(&proc, 1, NULL, 0, &err) < 0)
		fail("", err.msg ? err.msg : "landlock", EPERM, 126);
}

_Noreturn void session_exec_main(int argc, char **argv)
{
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (!strncmp(argv[i], SESSION_EXEC_CWD, strlen(SESSION_EXEC_CWD))) {
			const char *dir = argv[i] + strlen(SESSION_EXEC_CWD);
			if (chdir(dir) < 0)
				fail("working directory ", dir, errno, 126);
		} else if (!strcmp(argv[i], SESSION_EXEC_NO_PTRACE)) {
			no_ptrace();
		} else if (!strncmp(argv[i], SESSION_EXEC_ENV, strlen(SESSION_EXEC_ENV))) {
			char *kv = argv[i] + strlen(SESSION_EXEC_ENV);
			char *eq = strchr(kv, '=');
			if (!eq || eq == kv)
				fail("bad variable ", kv, EINVAL, 126);
			*eq = '\0';
			if (setenv(kv, eq + 1, 1) < 0)
				fail("variable ", kv, errno, 126);
		} else {
			fail("", "--session-exec is internal to agent-sandbox", EINVAL, 126);
		}
	}
	if (i + 1 >= argc)
		fail("", "--session-exec: no command", EINVAL, 126);
	execvp(argv[i + 1], argv + i + 1);
	fail("", argv[i + 1], errno, errno == ENOENT ? 127 : 126);
}
