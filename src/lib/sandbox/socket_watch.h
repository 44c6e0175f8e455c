/* The host sockets masked one by one, watched while the sandbox runs: a
 * service that restarts removes its socket and binds a new one, which
 * detaches the mask in every mount namespace and would leave the new
 * socket reachable inside. Such a socket stops the run. */
#pragma once

#include "base/strv.h"
#include "policy/policy.h"

struct socket_watch;

/* Watches the directory of each path of `sockets` (canonical paths of host
 * sockets) that the policy masks as a file. *out is NULL when there is
 * nothing to watch. Returns 0, or -1 when a watch could not be set up (the
 * run must not start: the masks could not be kept). */
int socket_watch_start(struct socket_watch **out, const struct policy *policy,
		       const struct strv *sockets, struct error *err);

/* The inotify descriptor to serve, or -1 with nothing to watch. */
int socket_watch_fd(const struct socket_watch *w);

/* Reads the pending events. Returns -1 when a watched socket was bound
 * again: the sandbox must stop (socket_watch_stop_reason says why). */
int socket_watch_dispatch(void *ctx);

const char *socket_watch_stop_reason(const struct socket_watch *w);

void socket_watch_free(struct socket_watch *w);
