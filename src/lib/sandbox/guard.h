/* The guard: what the mounts cannot hold. A read-only or excluded path that
 * does not exist when the sandbox starts, in a directory the sandbox may
 * write, cannot be mounted over (bwrap would create it on the host), yet a
 * host program would read or run whatever appears there: a git hook or
 * commondir, .vscode/tasks.json, .mcp.json. The host side watches the
 * directories on the way and moves such a path, the moment it appears, into
 * a quarantine directory outside the project. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "policy/pattern.h"
#include "policy/policy.h"
#include "base/strbuf.h"
#include "base/strv.h"

/* One path the guard holds: where it would appear, and the rule behind it. */
struct guard_target {
	char *root;    /* a writable entry: a mount point inside, never moved */
	char *rest;    /* the components below root; the last may be a glob */
	bool glob;     /* the last component is a glob */
	char *display; /* root/rest, as the user reads it */
	const struct rule *rule;
	char **present; /* glob: matching names that existed at start */
	size_t present_len;
	/* A file that git rewrites itself (a submodule's config), so it cannot
	 * be mounted read-only: its bytes must stay these, and whatever else
	 * appears there is moved aside and these bytes written back. */
	bool pinned;
	char *content;
	size_t content_len;
	mode_t mode;
};

struct guard_plan {
	struct guard_target *targets;
	size_t len;
};

/* Which absent entries and globs of the policy need the guard: those with
 * level ro or exclude whose directory lies under a writable entry; and the
 * policy's pinned files, whose content it reads. Reads the filesystem only
 * for that and to list what a glob matches at start. */
void guard_plan_build(const struct policy *p, struct guard_plan *out);
void guard_plan_release(struct guard_plan *plan);

DEFINE_CLEANUP_FUNC(struct guard_plan, guard_plan_release)
#define _cleanup_guard_plan_ _cleanup_(guard_plan_releasep)

/* Something that appeared where a target is, and where it went. */
struct guard_event {
	char *path;	/* where it appeared */
	char *moved_to; /* its path now, or NULL when it could not be moved */
	const struct rule *rule;
	/* A symlink that appeared in place of a directory on the way to this
	 * protected path, or NULL when the path itself appeared. */
	const char *symlink_to;
	char *error;   /* why it could not be moved, or NULL */
	bool restored; /* a pinned file: its bytes were written back */
};

typedef void (*guard_report_fn)(void *ctx, const struct guard_event *event);

struct guard;

/* Opens the roots, sets up the watches and checks every target once. The
 * quarantine directory (a private directory outside every project) is
 * created on first use, under quarantine_base/<run id>. */
int guard_start(struct guard **out, const struct guard_plan *plan, const struct policy *policy,
		const char *quarantine_base, const char *run_id, guard_report_fn report, void *ctx,
		struct error *err);

/* Guards the gitlinks of the repository whose work tree is toplevel and
 * whose index is index: `git status` there runs git in every gitlink that
 * holds a .git, with the configuration found there. A .git that appears
 * at a gitlink not checked out at start, or together with a gitlink the
 * index did not have, is moved aside. */
void guard_watch_repository(struct guard *g, const char *toplevel, const char *index);

/* Sweeps root (the working directory) for .git entries that were not among
 * known at start, skipping directories that match skip, at most once a
 * second and at the end: a repository that appears there with
 * configuration or hooks that run (a host git started in that directory
 * would run them) is moved aside. Plain repositories (git init, git clone)
 * and linked worktrees of the repository whose common directory is common
 * stay, and their indexes are watched like those of the repositories in
 * known. A directory that becomes unreadable (more than unreadable at
 * start) stops the sandbox: the sweep cannot look into it. */
void guard_watch_tree(struct guard *g, const char *root, const char *common,
		      const struct pattern_set *skip, const struct strv *known, size_t unreadable);

/* The descriptor to wait on. */
int guard_fd(const struct guard *g);

/* Reads the pending events and checks every target again. Returns -1 when
 * the sandbox must stop (a path kept coming back, or could not be moved);
 * guard_stop_reason says why. */
int guard_dispatch(struct guard *g);

/* A last check after the sandbox is gone. */
void guard_finish(struct guard *g);

const char *guard_stop_reason(const struct guard *g);

/* What was quarantined, for the summary at the end of the run. */
size_t guard_events(const struct guard *g, const struct guard_event **events);
const char *guard_quarantine_dir(const struct guard *g);

void guard_free(struct guard *g);
