/* `agent-sandbox doctor`: checks the host (bwrap, user namespaces, Landlock,
 * seccomp), then starts real sandboxes with this binary and proves each
 * promise of the policy by attempting to break it. */
#pragma once

#include "inside/inside.h"

/* The hidden first argument that runs the probes inside a sandbox. */
#define DOCTOR_PROBE_ARG "--doctor-probe"

/* Prints the checklist on out; returns 0 when every check holds, 1 when
 * one does not. */
int doctor_main(char **envp, int out);

/* Inside the sandbox: argv is SELF DOCTOR_PROBE_ARG SPEC...; prints one
 * "ok NAME: ..." or "FAIL NAME: ..." line per spec and exits. */
__attribute__((noreturn)) void doctor_probe_main(int argc, char **argv);
