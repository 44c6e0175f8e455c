/* The executor API's client: one connection to `agent-sandbox serve` (a unix
 * socket, or a descriptor pair to `serve --stdio`), JSON-RPC 2.0 framed by
 * lines. Calls are synchronous; notifications that arrive meanwhile wait in
 * a queue, in order. It never prints and never touches signal dispositions. */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/error.h"

/* The client holds the daemon to SERVE_LINE_MAX, the line cap both sides
 * share. */
#include "serve/rpc.h"

struct agent_sandbox_client;

/* The daemon's default socket for this environment: api.sock in
 * rundir_base($XDG_RUNTIME_DIR of envp). */
char *agent_sandbox_client_default_socket(char *const *envp);

/* Connects to the daemon listening on path. */
int agent_sandbox_client_connect(const char *path, struct agent_sandbox_client **out,
				 struct error *err);

/* Connects to the default socket, and refuses a daemon there that does not
 * run as this user: without a runtime directory the default is under /tmp,
 * whose name another user could have taken first, and a client tells its
 * daemon its files and commands. (A daemon of another user, serving this
 * one through --allow-uid, is reached with agent_sandbox_client_connect.) */
int agent_sandbox_client_connect_default(char *const *envp, struct agent_sandbox_client **out,
					 struct error *err);

/* Over descriptors already connected to a daemon (a pipe pair to `serve
 * --stdio`, a socket): messages are read from in_fd and written to out_fd.
 * The client owns both from here on, also when this fails. */
int agent_sandbox_client_open_fds(int in_fd, int out_fd, struct agent_sandbox_client **out,
				  struct error *err);

/* Sends {"jsonrpc":"2.0","id":N,"method":method,"params":params} (params
 * is taken, and may be NULL) and waits for the response with that id;
 * notifications and other responses arriving meanwhile are queued in
 * order. *response is the whole response object (it has "result" or
 * "error": see agent_sandbox_client_response_error). 0, or -1 with err: I/O,
 * the daemon closing the connection, a line over SERVE_LINE_MAX, or a line
 * that is not a JSON object. After such an error the connection is broken:
 * every later call fails. */
int agent_sandbox_client_call(struct agent_sandbox_client *c, const char *method,
			      struct json_object *params, struct json_object **response,
			      struct error *err);

/* The next queued or arriving notification (a message that is not a
 * response); timeout_ms -1 waits as long as it takes. 1 with *note set (a
 * new reference), 0 on timeout, -1 with err (the daemon closing the
 * connection is ERROR_SETUP "the daemon closed the connection"). */
int agent_sandbox_client_next(struct agent_sandbox_client *c, int timeout_ms,
			      struct json_object **note, struct error *err);

/* How many notifications wait in the queue: those that arrived during
 * calls. That many agent_sandbox_client_next calls return them without
 * reading from the connection (what arrived after a response stays after
 * it). */
size_t agent_sandbox_client_queued(const struct agent_sandbox_client *c);

/* For a response: 0 when it carries a result; -1 with err when it carries
 * an error, its kind from error.data.kind (or from the code when the
 * daemon did not say) and its message from error.data.detail (or
 * error.message). A response with neither is an ERROR_INTERNAL. */
int agent_sandbox_client_response_error(struct json_object *response, struct error *err);

/* The descriptor messages are read from, for a caller's own poll(). Data
 * may already wait in the client's buffer: call agent_sandbox_client_next
 * with timeout 0 before polling. */
int agent_sandbox_client_fd(const struct agent_sandbox_client *c);

/* True once the daemon has closed the connection cleanly (between
 * messages), as against a broken stream. */
bool agent_sandbox_client_closed(const struct agent_sandbox_client *c);

void agent_sandbox_client_close(struct agent_sandbox_client *c);

DEFINE_CLEANUP_PTR_FUNC(struct agent_sandbox_client *, agent_sandbox_client_close)
#define _cleanup_client_ _cleanup_(agent_sandbox_client_closep)
