/* The daemon's sessions, inside the sandbox: the first command that keeps
 * a session's sandbox up while nothing else runs, and the small launcher
 * that gives a later process its own working directory and variables
 * (the control socket carries an argv only). */
#pragma once

#define SESSION_HOLD_ARG "--session-hold"
#define SESSION_EXEC_ARG "--session-exec"
#define SESSION_EXEC_CWD "--cwd="
#define SESSION_EXEC_ENV "--env="
#define SESSION_EXEC_NO_PTRACE "--no-ptrace"

/* Waits until a signal ends it. */
_Noreturn void session_hold_main(void);

/* agent-sandbox --session-exec [--no-ptrace] [--cwd=DIR] [--env=NAME=VALUE]...
 * -- CMD...: --no-ptrace stacks the command filter that keeps CMD and
 * what it starts from reaching into other processes
 * (SECCOMP_COMMAND_NO_PTRACE); exits 127 when CMD is not found, 126 when it cannot run or DIR is
 * not there. */
_Noreturn void session_exec_main(int argc, char **argv);
