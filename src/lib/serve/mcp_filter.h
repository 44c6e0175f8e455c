/* The MCP bridge's filter: one JSON-RPC message a line, from the agent
 * (untrusted) to a platform's MCP server and back. A tools/call of a tool
 * the session does not allow is answered here and never forwarded, and
 * every tools list the server sends is cut down to the allowed tools. Pure:
 * no I/O, the caller relays and audits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "base/strv.h"

/* Requests of the agent awaiting the server's answer, tracked by id (as
 * JSON text): an id reused while the first is pending is refused. */
#define MCP_FILTER_PENDING_MAX 256

struct mcp_filter {
	const char *server;	  /* its name, for messages */
	const struct strv *allow; /* tool names allowed; NULL: every tool */
	struct strv pending;	  /* ids of requests forwarded, not yet answered */
};

enum mcp_verdict {
	MCP_FORWARD, /* send out (the message, re-serialized) to the other side */
	MCP_REPLY,   /* send out back to the side it came from; forward nothing */
	MCP_DROP,    /* nothing to send */
	MCP_CLOSE,   /* the line breaks the protocol: end the bridge */
};

/* What a client line was, for the audit log. */
struct mcp_call {
	bool is_call; /* a tools/call */
	bool allowed;
	char *tool; /* its params.name (NULL when not a string) */
	char *why;  /* MCP_CLOSE: why */
};

void mcp_filter_init(struct mcp_filter *f, const char *server, const struct strv *allow);
void mcp_filter_release(struct mcp_filter *f);
void mcp_call_release(struct mcp_call *c);

/* A line (without its newline) from the agent. Only a single JSON object
 * passes (no batch, no trailing text): what goes on is our own
 * serialization of it, so the server never sees a spelling (a duplicate
 * key, an odd escape) that it might read differently from us. With a
 * tools list, only what running the allowed tools needs passes (other
 * requests are answered here), and initialize offers the server no
 * sampling, elicitation or roots. */
enum mcp_verdict mcp_filter_client(struct mcp_filter *f, const char *line, size_t len,
				   struct strbuf *out, struct mcp_call *call);
/* A line from the server: every result.tools array loses the tools not
 * allowed (whatever the id: a reused id cannot get a list past), a batch
 * is filtered element by element, and a line that is not JSON is
 * dropped. With a tools list, a request of the client other than ping
 * (sampling, elicitation, roots) is answered back to the server
 * (MCP_REPLY), and left out of a batch. */
enum mcp_verdict mcp_filter_server(struct mcp_filter *f, const char *line, size_t len,
				   struct strbuf *out);

/* Whether name is a valid server name: 1-64 of [A-Za-z0-9_-] without
 * "__" (Claude Code names tools mcp__NAME__TOOL). */
bool mcp_name_ok(const char *name);
