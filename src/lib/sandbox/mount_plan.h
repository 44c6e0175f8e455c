/* What must be mounted where: every mount bwrap_render asks bwrap for is
 * recorded here with the identity of the object that must appear at its
 * destination, and the sandbox's init checks the finished sandbox against
 * that list before the command runs (a host path may change between the
 * policy's decision and bwrap's mount). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/file_id.h"
#include "base/strbuf.h"
#include "base/strv.h"

/* A host file given to the sandbox by path, with its identity. */
struct host_file {
	const char *path;
	struct file_id id;
};

enum mount_kind {
	MOUNT_BIND = 1, /* a host object, identified by its file_id */
	MOUNT_TMPFS,	/* a fresh tmpfs (also bwrap's --dev) */
	MOUNT_PROC,	/* procfs, fresh or bound from the host's */
};

enum {
	MOUNT_READ_ONLY = 1, /* the mount must be read-only */
	/* Nothing there is fine too. Only for sources the sandbox cannot
	 * touch (parts of /proc), and for the init's masks of host sockets,
	 * which it never makes through a symlink: a bwrap mount's path
	 * missing at the check may mean it went through a symlink swapped in
	 * and out, to land elsewhere. */
	MOUNT_OPTIONAL = 2,
	/* Rendered as -try: bwrap skips the mount, instead of creating a
	 * mount point on the host, when the source is gone. The check still
	 * requires it unless MOUNT_OPTIONAL. */
	MOUNT_TRY = 4,
	/* Made by the sandbox's init rather than bwrap (mount_plan_init_bind):
	 * a clone of source, a path inside the sandbox, with the new mount
	 * API, which costs the same for the thousandth bind as for the first
	 * (bwrap 0.8 reads the whole mount table again for each). */
	MOUNT_BY_INIT = 8,
	/* Only carries sources for the init's binds (mount_plan_stage): the
	 * init covers it once they are made, and nothing checks it. */
	MOUNT_STAGING = 16,
};

struct mount_expectation {
	char *path; /* destination inside the sandbox */
	enum mount_kind kind;
	unsigned flags;
	struct file_id id; /* MOUNT_BIND only */
	char *source;	   /* MOUNT_BY_INIT: the path inside the sandbox to clone */
};

struct mount_plan {
	struct mount_expectation *items;
	size_t len, alloc;
};

/* Where rendering goes: the bwrap arguments and, unless NULL, the plan
 * the init checks. Each helper below emits the arguments and records the
 * expectation together, so no mount can be rendered without one. */
struct mount_sink {
	struct strv *args;
	struct mount_plan *plan; /* NULL: arguments only (tests) */
	/* The init makes the binds of masked files (mount_plan_init_bind);
	 * needs a plan. */
	bool init_binds;
};

/* --bind, --ro-bind, --bind-try or --ro-bind-try, from flags
 * (MOUNT_READ_ONLY, MOUNT_TRY). */
void mount_plan_bind(struct mount_sink *s, unsigned flags, const char *source,
		     const struct file_id *id, const char *dest);
/* --tmpfs of at most size bytes (bwrap's --size), --dev (a tmpfs with
 * device nodes bound in, which bwrap cannot size) and --proc. */
void mount_plan_tmpfs(struct mount_sink *s, const char *dest, unsigned long long size);
void mount_plan_dev(struct mount_sink *s, const char *dest);
void mount_plan_proc(struct mount_sink *s, const char *dest);
/* procfs bound from the host (-try), to cover a part of a fresh /proc. */
void mount_plan_proc_cover(struct mount_sink *s, const char *path);
/* --remount-ro: the mount at dest must then be read-only. */
void mount_plan_remount_ro(struct mount_sink *s, const char *dest);

/* bwrap 0.8 reads the whole of /proc/self/mountinfo again for every bind
 * it makes, so a sandbox with hundreds of masked files spends most of its
 * start-up there. Their binds are left to the init instead: a read-only
 * bind of host_source at dest (a directory or file under agent-sandbox's
 * own directory) carries their sources in, and the init clones each one
 * onto its destination, then covers the staging binds. */
void mount_plan_stage(struct mount_sink *s, const char *host_source, const char *dest);
/* A bind the init makes (read-only with MOUNT_READ_ONLY; skipped and
 * not required when nothing is there with MOUNT_OPTIONAL): a clone of
 * source, a path inside the sandbox (staged, or dest itself), with the
 * mounts beneath it, at dest, which must then hold the object id names.
 * Recorded only: no bwrap argument. */
void mount_plan_init_bind(struct mount_sink *s, unsigned flags, const char *source,
			  const struct file_id *id, const char *dest);
/* How many binds the plan leaves to the init. */
size_t mount_plan_init_binds(const struct mount_plan *p);

/* The plan as bytes for the init, and back. Decoding checks every length
 * and field: it is our own output, but it crosses a process boundary. */
void mount_plan_encode(const struct mount_plan *p, struct strbuf *out);
int mount_plan_decode(const void *data, size_t len, struct mount_plan *out, struct error *err);

/* The plan travels to the init in a memfd whose number is rendered into
 * the init's arguments: created empty before rendering, filled and sealed
 * after. Both return the descriptor or 0, and -1 with err set. */
int mount_plan_memfd_create(struct error *err);
int mount_plan_memfd_seal(int fd, const struct mount_plan *p, struct error *err);
/* Reads and decodes the plan from a sealed memfd (the init's side). */
int mount_plan_read_fd(int fd, struct mount_plan *out, struct error *err);

/* The init's side: in a mount namespace of its own (which needs
 * CAP_SYS_ADMIN in its user namespace), makes the plan's MOUNT_BY_INIT
 * binds in plan order and covers the staging binds. Neither end of a bind
 * is reached through a symlink.
 * Returns 0 or -1 with err set; mount_plan_verify checks the result. */
int mount_plan_apply(const struct mount_plan *p, struct error *err);

/* Checks every expectation in the current mount namespace: the destination
 * is reached without following a symlink, is the root of a mount, holds
 * the expected object and is read-only where the plan says so. Returns 0,
 * or -1 with err naming the first path that differs. */
int mount_plan_verify(const struct mount_plan *p, struct error *err);

void mount_plan_release(struct mount_plan *p);

DEFINE_CLEANUP_FUNC(struct mount_plan, mount_plan_release)
#define _cleanup_mount_plan_ _cleanup_(mount_plan_releasep)
