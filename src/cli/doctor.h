/* `agent-sandbox doctor`: checks the host (bwrap, user namespaces, Landlock,
 * seccomp), then starts real sandboxes with this binary and proves each
 * promise of the policy by attempting to break it. */
#pragma once

#include "inside/probe.h"

/* Prints the checklist on out; returns 0 when every check holds, 1 when
 * one does not. */
int doctor_main(char **envp, int out);
