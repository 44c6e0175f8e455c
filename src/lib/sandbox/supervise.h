/* Starting bwrap and watching over it: the argument list travels through a
 * memfd (--args) so that long policies never hit ARG_MAX; signals sent to us
 * are passed into the sandbox; the command's exit status comes back out. */
#pragma once

#include <stdbool.h>

#include "base/error.h"
#include "base/strv.h"

struct supervisor {
	int ready_pipe[2];	       /* the init writes one byte once it runs */
	int stderr_pipe[2];	       /* bwrap's own stderr, so set-up errors can be explained */
	int info_pipe[2];	       /* bwrap's --info-fd: the init's host pid */
	int stderr_copy;	       /* the real stderr, handed through to the command */
	unsigned long ignored_signals; /* forwarded signals we were started with ignored */
	bool stop_requested;	       /* `stop` sent its signals (inside/init.h) */
	bool timed_out;		       /* supervisor_run: the timeout ended the sandbox */
};

/* Creates the descriptors whose numbers go into the bwrap arguments. */
int supervisor_prepare(struct supervisor *sv, int err_fd, struct error *err);

#define SUPERVISE_SOURCES_MAX 8

/* The grace between SIGTERM and SIGKILL at the timeout: enough for a
 * build tool to remove its temporaries, short for a hung one. */
#define SUPERVISE_GRACE_MS 5000
/* The exit status of a run the timeout ended, as timeout(1) has it. */
#define SUPERVISE_TIMEOUT_STATUS 124

struct supervise_source {
	int fd;
	/* Returns -1 when the sandbox must stop at once: it is killed and
	 * supervisor_run fails with ERROR_SETUP, "the sandbox was stopped". */
	int (*ready)(void *ctx);
	void *ctx;
};

struct supervise_request {
	const char *bwrap;    /* path of the bwrap binary */
	struct strv *args;    /* bwrap arguments, without "bwrap" */
	size_t command_start; /* index of the "--" before the command */
	char **envp;
	int in, out, err;
	int control_fd;	  /* the init's end of the control pair (control.h), or -1 */
	int mounts_fd;	  /* the mount plan, inherited through bwrap by the init */
	bool new_session; /* the sandbox has its own session (no terminal) */
	/* bwrap starts in these cgroups (one per hierarchy, cgroup.h) */
	const int *cgroup_procs_fds;
	size_t cgroup_procs_len;
	/* Wall-clock time the sandbox may run, from the fork of bwrap; 0: no
	 * limit. At the deadline every process inside gets SIGTERM (the
	 * init's SANDBOX_TERMINATE_SIGNAL), SUPERVISE_GRACE_MS later SIGKILL;
	 * supervisor_run then returns SUPERVISE_TIMEOUT_STATUS. */
	unsigned long long timeout_ms;
	/* The one descriptor of the caller's that the command inherits (a
	 * nested run's outer audit socket), or -1: every other one from 3 up
	 * is closed. */
	int inherited_fd;
	/* Written 'R' and closed once the init is up; 0 for none. */
	int ready_fd;
	/* Other event sources served while the sandbox runs (the network
	 * proxy, the guard): ready(ctx) when fd is readable. */
	struct supervise_source sources[SUPERVISE_SOURCES_MAX];
	size_t sources_len;
};

/* Runs bwrap and waits. Returns the command's exit status (128+N for a
 * signal), or -1 with err set when the sandbox could not be set up. */
int supervisor_run(struct supervisor *sv, const struct supervise_request *req, struct error *err);

void supervisor_release(struct supervisor *sv);
