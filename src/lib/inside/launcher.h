/* The multicall launcher: inside a sandbox, the agent-sandbox binary is
 * mounted over every copy of a wrapped command and, started under that
 * command's name, decides what runs. */
#pragma once

#include <stdbool.h>

/* True when this process runs inside a sandbox and argv[0] names a
 * command that the sandbox wraps. */
bool launcher_applies(int argc, char **argv);

/* Runs the wrapper for argv[0]'s name: the script, the @git guard and then
 * the real program, or the refusal. Returns only an exit status when
 * nothing could be executed (126 for a refusal). */
int launcher_main(int argc, char **argv, char **envp, int err_fd);
