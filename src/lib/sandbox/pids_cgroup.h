/* A pids cgroup for one sandbox, where the kernel does not apply
 * RLIMIT_NPROC: to processes of the host's uid 0. Only a cgroup v1 pids
 * hierarchy that the caller may write to is used (root on a hybrid
 * layout); elsewhere there is none and the rlimit is all there is. */
#pragma once

#include <stdbool.h>

#include "base/cleanup.h"
#include "base/error.h"

struct pids_cgroup {
	char *dir;    /* the cgroup made, or NULL */
	int procs_fd; /* its cgroup.procs, open for writing, or -1 */
};

#define PIDS_CGROUP_INIT                                                                           \
	{                                                                                          \
		.dir = NULL, .procs_fd = -1                                                        \
	}

/* Tasks of the sandbox beyond the command's own: bwrap, its monitor and
 * the init. */
#define PIDS_CGROUP_OVERHEAD 4

/* Makes a cgroup beneath the caller's own in the pids hierarchy, allowing
 * at most max tasks. Without a usable hierarchy returns 0 and leaves cg
 * empty; -1 with err set when making it failed half-way. */
int pids_cgroup_create(struct pids_cgroup *cg, unsigned max, struct error *err);

/* In the child about to exec bwrap: moves the calling process into the
 * cgroup (everything it starts follows). Async-signal-safe. */
int pids_cgroup_enter(int procs_fd);

/* Removes the cgroup once its processes are gone, waiting a little for
 * the ones the kernel is still taking down. */
void pids_cgroup_remove(struct pids_cgroup *cg);

DEFINE_CLEANUP_FUNC(struct pids_cgroup, pids_cgroup_remove)
#define _cleanup_pids_cgroup_ _cleanup_(pids_cgroup_removep)
