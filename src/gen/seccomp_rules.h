/* The seccomp rules as libseccomp code. Used at build time only: the
 * generator compiles them into the BPF programs agent-sandbox carries, and
 * the unit tests compile them again to prove the carried programs match.
 * Never linked into agent-sandbox, which has no libseccomp at run time. */
#pragma once

#include <seccomp.h>
#include <stddef.h>

/* Each returns 0 or a negative errno, with *what naming the step that
 * failed. The filter is released on failure. */

/* The sandbox filter: loaded by bwrap, or by the sandbox's init. */
int seccomp_rules_sandbox(scmp_filter_ctx *out, const char **what);

/* The command filter with the rules FLAGS (SECCOMP_COMMAND_*) select. */
int seccomp_rules_command(unsigned flags, scmp_filter_ctx *out, const char **what);

/* The compiled BPF program of CTX, as the kernel takes it (an array of
 * struct sock_filter): a malloc'd buffer the caller frees. */
int seccomp_rules_export(scmp_filter_ctx ctx, unsigned char **out, size_t *len, const char **what);
