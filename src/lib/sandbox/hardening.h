/* The protection layers of a run beside the mounts: seccomp and Landlock.
 * Decided before anything starts, so that a run never goes ahead with less
 * than it should have without the user's --allow-degraded. */
#pragma once

#include <stdbool.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "policy/policy.h"
#include "base/strbuf.h"
#include "base/strv.h"

struct hardening {
	int landlock_abi;      /* 0: the kernel has no Landlock */
	bool landlock_fs;      /* writes limited to `writable` */
	bool landlock_net;     /* TCP limited to the forwarder's ports */
	struct strv writable;  /* the policy's rw paths and the private mounts */
	struct strv keep_dirs; /* writable, but no directory in them removed or renamed */
	struct strv sockets;   /* unix sockets made outside the command it may reach */
	struct strv degraded;  /* each layer the kernel cannot give, left out */
	char *refusal;	       /* why a run without --allow-degraded stops, or NULL */
	bool filtered_network; /* TCP only to the forwarder's ports */
	bool host_network;     /* --network=true: no network namespace of its own */
};

/* Fills L for POLICY, as far as this kernel allows. A layer the kernel
 * cannot give is left out and listed in L->degraded. */
void hardening_plan(struct hardening *l, const struct policy *policy, bool filtered_network);
/* A unix socket made outside the command that it may connect to: Landlock
 * ABI 9 refuses every other (the inside paths of the listed sockets and
 * of our own audit socket). */
void hardening_add_socket(struct hardening *l, const char *path);
/* PATH, one of the writable paths, keeps the directories in it: the command
 * may write files there and make directories, but not remove or rename a
 * directory beneath PATH. Branch mode's host objects: a fan-out directory
 * renamed away and made again could hold a forged object under the name
 * of one of the user's. */
void hardening_keep_dirs(struct hardening *l, const char *path);
/* A run goes on without a layer only when the user allowed it: otherwise
 * an error naming the fix. */
int hardening_require(const struct hardening *l, bool allow_degraded, struct error *err);
/* One line per layer, for `policy` and --debug. */
void hardening_describe(const struct hardening *l, struct strbuf *out);
void hardening_release(struct hardening *l);

DEFINE_CLEANUP_FUNC(struct hardening, hardening_release)
#define _cleanup_hardening_ _cleanup_(hardening_releasep)
