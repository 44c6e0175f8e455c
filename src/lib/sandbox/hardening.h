/* The protection layers of a run beside the mounts: seccomp and Landlock.
 * Decided before anything starts, so that a run never goes ahead with less
 * than it should have without the user's --allow-degraded. */
#pragma once

#include <stdbool.h>

#include "base/error.h"
#include "policy/policy.h"
#include "base/strbuf.h"
#include "base/strv.h"

struct layers {
	int landlock_abi;      /* 0: the kernel has no Landlock */
	bool landlock_fs;      /* writes limited to `writable` */
	bool landlock_net;     /* TCP limited to the forwarder's ports */
	struct strv writable;  /* the policy's rw paths and the private mounts */
	struct strv degraded;  /* each layer left out under --allow-degraded */
	bool filtered_network; /* the command gets no new unix sockets */
};

/* Fills L for POLICY. A layer the kernel cannot give is an error naming
 * the fix, unless ALLOW_DEGRADED: then it is left out and listed in
 * L->degraded. */
int layers_plan(struct layers *l, const struct policy *policy, bool filtered_network,
		bool allow_degraded, struct error *err);
/* One line per layer, for `policy` and --debug. */
void layers_describe(const struct layers *l, struct strbuf *out);
void layers_release(struct layers *l);

static inline void cleanup_layersp(struct layers *l)
{
	layers_release(l);
}
#define _cleanup_layers_ __attribute__((cleanup(cleanup_layersp)))
