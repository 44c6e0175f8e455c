/* A cgroup for one sandbox, holding its memory, CPU and process limits
 * where the caller may make one: cgroup v1 (a hierarchy per controller;
 * root on a hybrid layout) or v2 (unified, a subtree the caller may write).
 * Where none can be had the init's rlimits are all there is (limits_*). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "spec/spec.h"

/* Tasks of the sandbox beyond the command's own: bwrap, its monitor and
 * the init. */
#define SANDBOX_CGROUP_OVERHEAD 4

/* What this caller can have a cgroup enforce, found without making one. */
struct cgroup_support {
	int version; /* 1 or 2; 0: no cgroup can be made */
	bool pids, memory, cpu;
};

void sandbox_cgroup_probe(struct cgroup_support *out);

/* Which limits of l go to a cgroup and which to the init's rlimits:
 * memory to RLIMIT_AS without a memory cgroup, pids to RLIMIT_NPROC always
 * (inside the user namespace it counts the sandbox's processes only).
 * cpus have no rlimit: RLIMIT_CPU bounds CPU time, not a share of CPUs,
 * and would kill a long build instead of slowing it. */
struct limit_plan {
	struct cgroup_support cgroup;
	bool memory_rlimit; /* memory as RLIMIT_AS */
	bool cpus_unenforced;
	bool pids_unenforced; /* root without a pids cgroup: the kernel exempts uid 0 */
};

void sandbox_limits_plan(const struct sandbox_limits *l, struct limit_plan *out);

enum limit_kind { LIMIT_MEMORY, LIMIT_CPUS, LIMIT_PIDS };

/* How a limit of this kind is held for this caller, as `policy` and
 * `doctor` say it: "memory cgroup (v1)", "RLIMIT_AS per process (weaker:
 * ...)", "not enforced: ...". Static text. */
const char *sandbox_limit_mechanism(const struct cgroup_support *c, enum limit_kind kind);

#define SANDBOX_CGROUP_MAX 3

struct sandbox_cgroup {
	char *dirs[SANDBOX_CGROUP_MAX]; /* made: one per v1 hierarchy, or the v2 one */
	int procs_fds[SANDBOX_CGROUP_MAX];
	size_t len;
	char *memory_dir; /* the one holding the memory limit, or NULL */
	int version;
};

#define SANDBOX_CGROUP_INIT                                                                        \
	{                                                                                          \
		.procs_fds = { -1, -1, -1 }                                                        \
	}

/* Makes the cgroups the plan asks for, named after the supervising process
 * (which outlives every process in them and removes them), and sets their
 * limits. Nothing to make: returns 0 with cg empty. */
int sandbox_cgroup_create(struct sandbox_cgroup *cg, const struct sandbox_limits *l,
			  const struct limit_plan *plan, struct error *err);

/* In the child about to exec bwrap: moves the calling process into each
 * (everything it starts follows). Async-signal-safe. */
int sandbox_cgroup_enter(const int *procs_fds, size_t len);

/* Whether the kernel's OOM killer ended a process of the sandbox for its
 * memory limit. */
bool sandbox_cgroup_oom(const struct sandbox_cgroup *cg);

/* Removes the cgroups once their processes are gone, waiting a little for
 * the ones the kernel is still taking down. */
void sandbox_cgroup_remove(struct sandbox_cgroup *cg);

DEFINE_CLEANUP_FUNC(struct sandbox_cgroup, sandbox_cgroup_remove)
#define _cleanup_sandbox_cgroup_ _cleanup_(sandbox_cgroup_removep)
