/* The MCP bridge's filter (mcp_filter.h). It decides from the parsed
 * message only and forwards its own serialization of it: the bytes the
 * agent wrote never reach the server. It never does I/O. */
#include "serve/mcp_filter.h"

#include <json-c/json.h>
#include <string.h>
#include <sys/types.h>

#include "base/cleanup.h"
#include "base/json_limit.h"
#include "base/xalloc.h"

/* JSON-RPC: invalid request, invalid params. */
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define MCP_DEPTH_MAX 64

DEFINE_CLEANUP_PTR_FUNC(struct json_object *, json_object_put)
#define _cleanup_json_ _cleanup_(json_object_putp)

void mcp_filter_init(struct mcp_filter *f, const char *server, const struct strv *allow)
{
	*f = (struct mcp_filter){.server = server, .allow = allow, .pending = STRV_INIT};
}

void mcp_filter_release(struct mcp_filter *f)
{
	strv_release(&f->pending);
}

void mcp_call_release(struct mcp_call *c)
{
	free(c->tool);
	free(c->why);
	*c = (struct mcp_call){0};
}

bool mcp_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n < 1 || n > 64 || strstr(name, "__"))
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && *p != '_' && *p != '-')
			return false;
	return true;
}

/* One JSON value filling the whole line, or NULL. */
static struct json_object *parse_line(const char *line, size_t len)
{
	if (memchr(line, '\0', len) ||
	    !json_values_within(line, len, JSON_CONTAINERS_MAX, JSON_COMMAS_MAX))
		return NULL;
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return NULL;
	struct json_tokener *tok = json_tokener_new_ex(MCP_DEPTH_MAX);
	/* UTF-8 as MCP says: a byte that is not would reach the audit log
	 * and whatever reads it as text. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *v = json_tokener_parse_ex(tok, line, (int)len);
	bool whole = v && json_tokener_get_error(tok) == json_tokener_success &&
		     json_tokener_get_parse_end(tok) == len;
	json_tokener_free(tok);
	if (!whole) {
		json_object_put(v);
		return NULL;
	}
	return v;
}

static void put_json(struct strbuf *out, struct json_object *v)
{
	strbuf_addstr(out, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
}

static bool allowed(const struct mcp_filter *f, const char *name, size_t len)
{
	if (!f->allow)
		return true;
	for (size_t i = 0; i < f->allow->len; i++)
		if (strlen(f->allow->items[i]) == len && !memcmp(f->allow->items[i], name, len))
			return true;
	return false;
}

static void reply_error(struct strbuf *out, struct json_object *id, int code, const char *msg)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", json_object_get(id));
	struct json_object *e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(r, "error", e);
	put_json(out, r);
	json_object_put(r);
}

static enum mcp_verdict refuse(struct strbuf *out, struct json_object *id, int code,
			       const char *msg)
{
	if (!id)
		return MCP_DROP; /* a notification gets no answer */
	reply_error(out, id, code, msg);
	return MCP_REPLY;
}

static enum mcp_verdict close_with(struct mcp_call *call, const char *why)
{
	call->why = xstrdup(why);
	return MCP_CLOSE;
}

/* The id as text, to compare what the server answers with. */
static char *id_text(struct json_object *id)
{
	return xstrdup(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN));
}

static ssize_t pending_index(const struct mcp_filter *f, const char *id)
{
	for (size_t i = 0; i < f->pending.len; i++)
		if (!strcmp(f->pending.items[i], id))
			return (ssize_t)i;
	return -1;
}

static void pending_remove(struct mcp_filter *f, size_t i)
{
	free(f->pending.items[i]);
	memmove(&f->pending.items[i], &f->pending.items[i + 1],
		(f->pending.len - i - 1) * sizeof(*f->pending.items));
	f->pending.items[--f->pending.len] = NULL;
}

static enum mcp_verdict check_call(struct mcp_filter *f, struct json_object *msg,
				   struct json_object *id, struct strbuf *out,
				   struct mcp_call *call)
{
	call->is_call = true;
	struct json_object *params = NULL, *name = NULL;
	if (!json_object_object_get_ex(msg, "params", &params) ||
	    !json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return refuse(out, id, RPC_INVALID_PARAMS,
			      "tools/call needs params.name, a string");
	const char *s = json_object_get_string(name);
	size_t len = (size_t)json_object_get_string_len(name);
	call->tool = xstrndup(s, len);
	/* Without an id it asks for no answer: the agent could send them
	 * without waiting, each a record, and a server runs none. */
	if (!id)
		return MCP_DROP;
	call->allowed = allowed(f, s, len) && strlen(call->tool) == len;
	if (!call->allowed) {
		_cleanup_free_ char *m =
		    xasprintf("tool %s is not allowed for server %s", call->tool, f->server);
		return refuse(out, id, RPC_INVALID_PARAMS, m);
	}
	return MCP_FORWARD;
}

/* A notification: a notifications/ method without an id (with one it
 * would be a request, by whatever name). */
static bool is_notification(const char *method, bool has_id)
{
	return !has_id && !strncmp(method, "notifications/", strlen("notifications/"));
}

/* With a tools list, the session allows those tools and nothing else of
 * the server's: its resources (a file server's files), prompts and
 * completions, and any method MCP may add or a server invent, stay out.
 * What a client needs to run the tools passes, and notifications. */
static bool method_passes(const char *method, bool has_id)
{
	static const char *const pass[] = {"initialize", "ping", "tools/list", "tools/call",
					   "logging/setLevel"};
	for (size_t i = 0; i < sizeof(pass) / sizeof(*pass); i++)
		if (!strcmp(method, pass[i]))
			return true;
	return is_notification(method, has_id);
}

/* The lists a client asks for on connecting, answered empty here; any
 * other method refused. */
static enum mcp_verdict refuse_method(const struct mcp_filter *f, const char *method,
				      struct json_object *id, struct strbuf *out)
{
	static const struct {
		const char *method, *key;
	} empty[] = {{"resources/list", "resources"},
		     {"resources/templates/list", "resourceTemplates"},
		     {"prompts/list", "prompts"}};
	if (!id)
		return MCP_DROP;
	for (size_t i = 0; i < sizeof(empty) / sizeof(*empty); i++) {
		if (strcmp(method, empty[i].method))
			continue;
		struct json_object *r = json_object_new_object(), *res = json_object_new_object();
		json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
		json_object_object_add(r, "id", json_object_get(id));
		json_object_object_add(res, empty[i].key, json_object_new_array());
		json_object_object_add(r, "result", res);
		put_json(out, r);
		json_object_put(r);
		return MCP_REPLY;
	}
	_cleanup_free_ char *m =
	    xasprintf("%s is not allowed for server %s: only its tools are", method, f->server);
	return refuse(out, id, RPC_METHOD_NOT_FOUND, m);
}

/* The server is not told of what the client would do for it that a
 * tools list keeps out (server_request_refused). */
static void client_capabilities(struct json_object *msg)
{
	struct json_object *params = NULL, *caps = NULL;
	if (!json_object_object_get_ex(msg, "params", &params) ||
	    !json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "capabilities", &caps) ||
	    !json_object_is_type(caps, json_type_object))
		return;
	json_object_object_del(caps, "sampling");
	json_object_object_del(caps, "elicitation");
	json_object_object_del(caps, "roots");
}

enum mcp_verdict mcp_filter_client(struct mcp_filter *f, const char *line, size_t len,
				   struct strbuf *out, struct mcp_call *call)
{
	*call = (struct mcp_call){0};
	_cleanup_json_ struct json_object *msg = parse_line(line, len);
	if (!msg)
		return close_with(call, "a line that is not one JSON value");
	if (!json_object_is_type(msg, json_type_object))
		/* A batch (an array) would carry calls past a check made
		 * message by message; MCP's stdio transport has none. */
		return close_with(call, "a message that is not a JSON object (a batch?)");
	struct json_object *method = NULL, *id = NULL;
	bool has_method = json_object_object_get_ex(msg, "method", &method);
	bool has_id = json_object_object_get_ex(msg, "id", &id);
	if (has_method && !json_object_is_type(method, json_type_string))
		return close_with(call, "a method that is not a string");
	/* "ping\u0000..." is ping to us and may be something else to the
	 * server. */
	if (has_method &&
	    strlen(json_object_get_string(method)) != (size_t)json_object_get_string_len(method))
		return close_with(call, "a method with a NUL in it");
	if (has_id && !json_object_is_type(id, json_type_string) &&
	    !json_object_is_type(id, json_type_int) && !json_object_is_type(id, json_type_null))
		return close_with(call, "an id that is neither a string nor an integer");
	if (has_method && f->allow && !method_passes(json_object_get_string(method), has_id))
		return refuse_method(f, json_object_get_string(method), has_id ? id : NULL, out);
	if (has_method && f->allow && !strcmp(json_object_get_string(method), "initialize"))
		client_capabilities(msg);
	if (has_method) {
		if (!strcmp(json_object_get_string(method), "tools/call")) {
			enum mcp_verdict v = check_call(f, msg, has_id ? id : NULL, out, call);
			if (v != MCP_FORWARD)
				return v;
		}
		if (has_id) {
			_cleanup_free_ char *key = id_text(id);
			/* Two requests by one id: the answer to one could
			 * pass for the other's. */
			if (pending_index(f, key) >= 0) {
				call->allowed = false;
				return refuse(out, id, RPC_INVALID_REQUEST,
					      "the id of a request still pending");
			}
			if (f->pending.len >= MCP_FILTER_PENDING_MAX) {
				call->allowed = false;
				return refuse(out, id, RPC_INVALID_REQUEST,
					      "too many requests pending");
			}
			strv_push(&f->pending, key);
		}
	}
	put_json(out, msg);
	return MCP_FORWARD;
}

/* Drops the tools not allowed from a response's result.tools. */
static void filter_message(struct mcp_filter *f, struct json_object *msg)
{
	struct json_object *method = NULL, *id = NULL, *result = NULL, *tools = NULL;
	if (!json_object_is_type(msg, json_type_object))
		return;
	if (!json_object_object_get_ex(msg, "method", &method) &&
	    json_object_object_get_ex(msg, "id", &id)) {
		_cleanup_free_ char *key = id_text(id);
		ssize_t i = pending_index(f, key);
		if (i >= 0)
			pending_remove(f, (size_t)i);
	}
	if (!f->allow || !json_object_object_get_ex(msg, "result", &result) ||
	    !json_object_is_type(result, json_type_object))
		return;
	/* An initialize answer: what the client may not use, it is not told
	 * of. */
	struct json_object *caps = NULL;
	if (json_object_object_get_ex(result, "capabilities", &caps) &&
	    json_object_is_type(caps, json_type_object)) {
		json_object_object_del(caps, "resources");
		json_object_object_del(caps, "prompts");
		json_object_object_del(caps, "completions");
		/* Tasks (a call run in the background) are fetched with
		 * the tasks/ methods, which a list keeps out: calls stay plain. */
		json_object_object_del(caps, "tasks");
	}
	if (!json_object_object_get_ex(result, "tools", &tools))
		return;
	struct json_object *kept = json_object_new_array();
	size_t n =
	    json_object_is_type(tools, json_type_array) ? json_object_array_length(tools) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(tools, i), *name = NULL;
		if (json_object_is_type(t, json_type_object) &&
		    json_object_object_get_ex(t, "name", &name) &&
		    json_object_is_type(name, json_type_string) &&
		    allowed(f, json_object_get_string(name),
			    (size_t)json_object_get_string_len(name)))
			json_object_array_add(kept, json_object_get(t));
	}
	json_object_object_add(result, "tools", kept);
}

/* With a tools list, a request of the server's to the client other than
 * ping: sampling (the agent's model, on the platform's key, at the
 * server's word), elicitation, roots. NULL when it may pass. */
static const char *server_request_refused(const struct mcp_filter *f, struct json_object *msg)
{
	struct json_object *method = NULL;
	if (!f->allow || !json_object_is_type(msg, json_type_object) ||
	    !json_object_object_get_ex(msg, "method", &method))
		return NULL;
	if (!json_object_is_type(method, json_type_string))
		return "";
	const char *m = json_object_get_string(method);
	if (strlen(m) != (size_t)json_object_get_string_len(method))
		return "";
	if (!strcmp(m, "ping") || is_notification(m, json_object_object_get_ex(msg, "id", NULL)))
		return NULL;
	return m;
}

enum mcp_verdict mcp_filter_server(struct mcp_filter *f, const char *line, size_t len,
				   struct strbuf *out)
{
	_cleanup_json_ struct json_object *msg = parse_line(line, len);
	if (!msg)
		return MCP_DROP;
	if (json_object_is_type(msg, json_type_array)) {
		/* No batch in MCP now: a request in one just goes. */
		struct json_object *kept = json_object_new_array();
		for (size_t i = 0; i < json_object_array_length(msg); i++) {
			struct json_object *m = json_object_array_get_idx(msg, i);
			if (server_request_refused(f, m))
				continue;
			filter_message(f, m);
			json_object_array_add(kept, json_object_get(m));
		}
		json_object_put(msg);
		msg = kept;
	} else if (json_object_is_type(msg, json_type_object)) {
		const char *refused = server_request_refused(f, msg);
		if (refused) {
			struct json_object *id = NULL;
			if (!*refused || !json_object_object_get_ex(msg, "id", &id))
				return MCP_DROP;
			_cleanup_free_ char *m =
			    xasprintf("%s is not allowed for server %s: only its tools are",
				      refused, f->server);
			reply_error(out, id, RPC_METHOD_NOT_FOUND, m);
			return MCP_REPLY;
		}
		filter_message(f, msg);
	} else {
		return MCP_DROP;
	}
	put_json(out, msg);
	return MCP_FORWARD;
}
