/* libFuzzer target for the MCP bridge's filter (serve/mcp_filter.c): lines
 * from either side, in any order. Whatever comes, a tools/call forwarded is
 * of an allowed tool, no request goes out but those a tools list lets
 * through (either way), and nothing forwarded to the agent lists a tool
 * not allowed.
 * Input: lines; a first byte of 's' sends one from the server. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "serve/mcp_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* With a tools list, what a forwarded request may ask of the server. */
static void check_forwarded_method(struct json_object *msg, struct json_object *method)
{
	static const char *const pass[] = {"initialize", "ping", "tools/list", "tools/call",
					   "logging/setLevel"};
	const char *m = json_object_get_string(method);
	if (strlen(m) != (size_t)json_object_get_string_len(method))
		abort();
	for (size_t i = 0; i < sizeof(pass) / sizeof(*pass); i++)
		if (!strcmp(m, pass[i]))
			return;
	if (strncmp(m, "notifications/", strlen("notifications/")) ||
	    json_object_object_get_ex(msg, "id", NULL))
		abort();
}

/* A forwarded client line that calls a tool must call "echo", with an id,
 * and ask nothing a tools list keeps out. */
static void check_forwarded_call(const char *s)
{
	struct json_object *m = json_tokener_parse(s), *method, *params, *name;
	if (!m)
		abort(); /* we only forward our own serialization */
	if (json_object_object_get_ex(m, "method", &method))
		check_forwarded_method(m, method);
	if (json_object_object_get_ex(m, "method", &method) &&
	    !strcmp(json_object_get_string(method), "tools/call") &&
	    !json_object_object_get_ex(m, "id", NULL))
		abort();
	if (json_object_object_get_ex(m, "method", &method) &&
	    !strcmp(json_object_get_string(method), "tools/call") &&
	    (!json_object_object_get_ex(m, "params", &params) ||
	     !json_object_object_get_ex(params, "name", &name) ||
	     strcmp(json_object_get_string(name), "echo") != 0))
		abort();
	json_object_put(m);
}

/* A request of the server's that reaches the agent is a ping. */
static void check_server_request(struct json_object *m)
{
	struct json_object *method;
	if (!json_object_is_type(m, json_type_object) ||
	    !json_object_object_get_ex(m, "method", &method))
		return;
	const char *s = json_object_get_string(method);
	if (!json_object_is_type(method, json_type_string) ||
	    strlen(s) != (size_t)json_object_get_string_len(method) ||
	    (strcmp(s, "ping") && (strncmp(s, "notifications/", strlen("notifications/")) ||
				   json_object_object_get_ex(m, "id", NULL))))
		abort();
}

static void check_list(struct json_object *m)
{
	struct json_object *result, *tools, *name;
	check_server_request(m);
	if (!json_object_is_type(m, json_type_object) ||
	    !json_object_object_get_ex(m, "result", &result) ||
	    !json_object_object_get_ex(result, "tools", &tools) ||
	    !json_object_is_type(tools, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(tools); i++)
		if (!json_object_object_get_ex(json_object_array_get_idx(tools, i), "name",
					       &name) ||
		    strcmp(json_object_get_string(name), "echo") != 0)
			abort();
}

/* A tools list forwarded to the agent names "echo" only, and the server
 * asks it nothing but ping. */
static void check_forwarded_list(const char *s)
{
	struct json_object *m = json_tokener_parse(s);
	if (!m)
		abort();
	if (json_object_is_type(m, json_type_array))
		for (size_t i = 0; i < json_object_array_length(m); i++)
			check_list(json_object_array_get_idx(m, i));
	else
		check_list(m);
	json_object_put(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strv allow = STRV_INIT;
	strv_push(&allow, "echo");
	struct mcp_filter f;
	mcp_filter_init(&f, "fuzz", &allow);
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct strbuf out = STRBUF_INIT;
		if (len && p[0] == 's') {
			if (mcp_filter_server(&f, p + 1, len - 1, &out) == MCP_FORWARD)
				check_forwarded_list(strbuf_str(&out));
		} else {
			struct mcp_call call;
			enum mcp_verdict v = mcp_filter_client(&f, p, len, &out, &call);
			if (v == MCP_FORWARD) {
				if (call.is_call && !call.allowed)
					abort();
				check_forwarded_call(strbuf_str(&out));
			}
			mcp_call_release(&call);
		}
		strbuf_release(&out);
		p += len + (nl ? 1 : 0);
	}
	mcp_filter_release(&f);
	strv_release(&allow);
	return 0;
}
