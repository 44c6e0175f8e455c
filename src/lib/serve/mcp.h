/* The daemon's end of the MCP bridge (API.md "Hooks, skills, MCP"): a
 * session's mcpServers, one listening socket each in a private directory
 * that the sandbox sees read-only at /run/agent-sandbox/mcp, and for each
 * connection from inside its own upstream (the configured socket, or the
 * command started on the host), relayed through mcp_filter.h. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "base/error.h"
#include "base/strv.h"

struct server;
struct session;
struct mcp_session;

/* Where the directory appears inside, under /run/agent-sandbox. */
#define MCP_RUN_NAME "mcp"
#define MCP_SERVERS_MAX 16
/* A message (a line) either way; a longer one ends that bridge. */
#define MCP_LINE_MAX (4u << 20)

/* session/create's mcpServers (absent or null: *out NULL). A command runs
 * on the host and a socket may be any the daemon's user reaches, so both
 * are for a trusted connection only (ERROR_POLICY otherwise). */
int mcp_param(struct json_object *params, bool trusted, struct mcp_session **out,
	      struct error *err);
/* Makes state_dir/mcp-<id>/ (0700) with a listening NAME.sock per server,
 * and names it in *dirs / *names for sandbox_request.run_bind_dirs/names
 * (empty lists when m is NULL). */
int mcp_session_open(struct mcp_session *m, const char *state_dir, const char *session_id,
		     struct error *err);
void mcp_session_binds(const struct mcp_session *m, const struct strv **dirs,
		       const struct strv **names);
/* The listeners join the daemon's loop (the session is s->mcp's). */
int mcp_session_start(struct server *srv, struct session *s, struct error *err);
/* The sandbox has ended: listeners and bridges close, commands are
 * killed (reaped through their pidfds), the directory goes. */
void mcp_session_end(struct server *srv, struct session *s);
/* Frees what is left (killing and waiting for any command not reaped). */
void mcp_session_free(struct mcp_session *m);
/* Frees the bridges ended during the events at hand. */
void mcp_reap(struct server *srv);

/* Writes the workspace's .mcp.json: an entry per server running
 * `agent-sandbox mcp-bridge NAME` inside, merged into the "mcpServers" of
 * an existing one (ours win), atomically and never through a symlink the
 * agent planted. Nothing to do without servers, or when the file says that
 * already. session/create calls it before the sandbox starts: .mcp.json is
 * an agent config, read-only inside as the sandbox found it at its start
 * (and one appearing later is taken away by the guard). */
int mcp_write_config(struct session *s, int workspace_fd, struct error *err);
/* {"NAME": {"tools": [...] or null}, ...} for events; NULL without servers. */
struct json_object *mcp_servers_json(const struct session *s);
