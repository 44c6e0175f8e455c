/* `agent-sandbox serve`: the executor API (API.md) for platforms that run
 * agents for many users. One process, one epoll loop: connections speak
 * JSON-RPC a line at a time (rpc.h); sessions are sandboxes planned by the
 * library like any run (session.c); their processes join them through the
 * control socket (process.c); files are reached from a descriptor of the
 * workspace (fs.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

struct serve_options {
	char *const *envp;
	const char *socket_path; /* NULL: the default (serve_default_socket) */
	int listen_fd;		 /* a listening socket handed over (systemd), or -1 */
	bool stdio;		 /* one client on stdin and stdout instead */
	const uid_t *allow_uids; /* others that may connect besides our uid */
	size_t allow_uids_len;
	bool allow_loosening; /* policies that loosen the defaults are accepted */
	unsigned max_sessions;
	size_t ring_bytes;	 /* output kept per process for process/attach */
	unsigned idle_timeout_s; /* a session's default */
	/* An agent run that prints nothing this long is interrupted; 0:
	 * never. */
	unsigned long long agent_silence_ms;
	/* Credentials every session injects (--credential), unless its env
	 * names the credential's base URL. */
	char *const *credentials;
	size_t credentials_len;
};

#define SERVE_MAX_SESSIONS_DEFAULT 256
#define SERVE_RING_DEFAULT (1u << 20)
#define SERVE_IDLE_DEFAULT (30u * 60)
#define SERVE_AGENT_SILENCE_DEFAULT (10ull * 60 * 1000)

/* The socket's path when none is given: api.sock in the runtime
 * directory (rundir.h). */
char *serve_default_socket(char *const *envp);

/* Runs until SIGTERM or SIGINT (or, with stdio, the client's end of
 * file); every session is closed on the way out. Returns 0, or -1 with
 * err set when it could not start. */
int serve_run(const struct serve_options *o, struct error *err);
