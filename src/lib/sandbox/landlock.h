/* Landlock: the kernel's own limit on what the command may write and which
 * TCP ports it may connect to, beneath the mounts and independent of them.
 * If the mounts were wrong or bwrap were bypassed, these rules still hold. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* The lowest ABI for each part. */
#define LANDLOCK_ABI_FS 1
#define LANDLOCK_ABI_NET 4
#define LANDLOCK_ABI_SCOPE 6	    /* abstract unix sockets of the host out of reach */
#define LANDLOCK_ABI_RESOLVE_UNIX 9 /* pathname sockets: only the listed ones */

/* The kernel's Landlock ABI version, or 0 when it has none (not built in,
 * or not enabled among the LSMs). */
int landlock_abi(void);

struct landlock_plan {
	char *const *writable; /* paths beneath which writes stay allowed */
	size_t writable_len;
	/* Writable too, except that no directory beneath them may be removed
	 * or renamed (hardening_keep_dirs). */
	char *const *keep_dirs;
	size_t keep_dirs_len;
	bool restrict_tcp; /* limit TCP: connect only to these ports, bind none */
	const uint16_t *tcp_connect;
	size_t tcp_connect_len;
	char *const *sockets; /* unix sockets made outside the command it may connect to */
	size_t sockets_len;
	/* No signals to processes outside the command's domain (ABI 6): a
	 * nested run's command and the outer sandbox's processes. */
	bool scope_signals;
};

/* What a ruleset handles and grants on a kernel of ABI abi: a pure
 * function, so that each ABI's ruleset can be checked without that kernel. */
struct landlock_masks {
	uint64_t fs;	   /* handled file system rights */
	uint64_t writable; /* granted beneath a writable path */
	uint64_t socket;   /* granted on a listed socket (0: not handled) */
	uint64_t net;	   /* handled network rights */
	uint64_t scoped;   /* scopes */
	size_t attr_size;  /* of the ruleset attribute the kernel knows */
};
void landlock_masks_for(int abi, bool restrict_tcp, struct landlock_masks *m);

/* Restricts the calling thread (and what it execs) to the plan. Missing
 * paths are skipped (the mounts skipped them too). Returns 0, or -1 with
 * err set: nothing is half-applied that the caller could run on with. */
int landlock_apply(const struct landlock_plan *plan, struct error *err);

/* What a nested run takes away beneath a path (landlock_apply_denials). */
#define LANDLOCK_DENY_WRITE (1U << 0)
#define LANDLOCK_DENY_READ (1U << 1) /* reading files; names stay listable */
#define LANDLOCK_DENY_EXECUTE (1U << 2)

struct landlock_denial {
	const char *path; /* resolved */
	unsigned what;	  /* LANDLOCK_DENY_* */
};

/* Stacks a second ruleset that grants everything it handles except what
 * the denials take away beneath their paths. Landlock only grants, so the
 * tree is split along each path: every sibling of every ancestor gets
 * its rights whole, the ancestors themselves only the rights that are
 * taken away nowhere beneath them. A directory that cannot be listed is
 * searched for probe_names instead. Returns 0, or -1 with err set. */
int landlock_apply_denials(const struct landlock_denial *denials, size_t len,
			   char *const *probe_names, size_t probe_names_len, struct error *err);

/* The paths the sandbox's own private mounts make writable: a fresh /dev
 * (terminals, /dev/null, /dev/shm), /tmp, /run, and /proc for a process's
 * own settings (writes through /proc/self/fd are checked against the file
 * they reach, not against /proc). */
extern const char *const landlock_private_writable[];
extern const size_t landlock_private_writable_len;
