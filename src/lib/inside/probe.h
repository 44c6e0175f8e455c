/* The doctor's probes inside a sandbox (inside/probe.c). */
#pragma once

/* The hidden first argument that runs the probes inside a sandbox. */
#define DOCTOR_PROBE_ARG "--doctor-probe"

/* The host name the proxy probe asks for: on no allow list. */
#define DOCTOR_UNLISTED_HOST "agent-sandbox-doctor.invalid"

/* Inside the sandbox: argv is SELF DOCTOR_PROBE_ARG SPEC...; prints one
 * "ok NAME: ..." or "FAIL NAME: ..." line per spec and exits. */
__attribute__((noreturn)) void doctor_probe_main(int argc, char **argv);
