/* The bwrap backend: a spec rendered as bwrap arguments and run. Rendering
 * takes the resources a launch needs (the runtime directory's empty file,
 * the seccomp filter, the pipes the supervisor reads) and stops before
 * anything starts, for --dry-run; launching goes on to the audit record of the run,
 * the proxy, the guard, bwrap and the supervision of the command. */
#pragma once

#include "base/cleanup.h"
#include "base/error.h"
#include "base/strv.h"
#include "sandbox/guard.h"
#include "spec/spec.h"

struct sandbox_io {
	int in, out, err;
	/* Where the running sandbox takes requests from its owner (exec-into),
	 * or NULL for none. */
	const char *control_socket;
	/* Written one byte and closed once the sandbox is up (the daemon's
	 * sessions wait for it); 0 for none (stdio is never it). */
	int ready_fd;
	/* The audit log's id for the run (16 hex digits), or NULL for a new
	 * one. */
	const char *run_id;
};

/* What --dry-run shows. */
struct sandbox_rendering {
	bool nested;	  /* a sandbox inside a sandbox: no bwrap */
	struct strv args; /* bwrap's arguments; nested: the paths Landlock keeps writable */
	size_t mounts;	  /* how many mounts the init would check */
	/* The binds the init makes itself: source, dest, "read-only" or
	 * "writable", and again, as the sandbox sees them. */
	struct strv init_binds;
};

void sandbox_rendering_release(struct sandbox_rendering *r);

DEFINE_CLEANUP_FUNC(struct sandbox_rendering, sandbox_rendering_release)
#define _cleanup_sandbox_rendering_ _cleanup_(sandbox_rendering_releasep)

int sandbox_render(const struct sandbox_spec *spec, const struct sandbox_io *io,
		   struct sandbox_rendering *out, struct error *err);

/* What a launch leaves for the front end: the guard's findings and the
 * masked files the command tried to read, to report after the command. */
struct sandbox_result {
	struct guard *guard;	  /* NULL when none ran */
	struct strv secret_reads; /* masked paths opened, as the sandbox sees them */
	bool stopped;		  /* `agent-sandbox stop` ended it */
};

void sandbox_result_release(struct sandbox_result *r);

DEFINE_CLEANUP_FUNC(struct sandbox_result, sandbox_result_release)
#define _cleanup_sandbox_result_ _cleanup_(sandbox_result_releasep)

/* Runs the spec's command in a sandbox and returns its exit status (a
 * nested run returns only on error: the process becomes the command), or
 * -1 with err set. */
int sandbox_launch(const struct sandbox_spec *spec, const struct sandbox_io *io,
		   struct sandbox_result *result, struct error *err);
