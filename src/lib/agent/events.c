/* Maps the agent CLIs' JSON lines to the normalized event stream (see
 * events.h). The input is the agent's stdout, so anything may come: every
 * field is read with its type checked, a value of the wrong type is taken
 * as absent, and nothing in a line can stop the stream. */
#include "agent/events.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/json_limit.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "base/utf8.h"
#include "base/xalloc.h"

/* Tool call ids remembered (denied calls, Codex calls already announced);
 * past this many the oldest are forgotten, which only costs a repeat. */
#define AGENT_IDS_MAX 4096

struct agent_stream {
	enum agent_kind kind;
	bool include_partial;
	bool raw;
	bool dropping; /* inside a line over AGENT_LINE_MAX */
	bool finished;
	struct strbuf line;
	struct json_object *result; /* the last result event, or NULL */
	char *session_id;
	struct strv denied;    /* Claude: tool_use ids refused by permission */
	struct strv announced; /* Codex: item ids already sent as tool_call */
	char *last_text;       /* Codex: the last agent message, the result */
	int turns;	       /* Codex: turn.started count */
	int64_t usage[4];      /* Codex: input, output, cacheRead, cacheCreation */
};

/* --- typed reads: a wrong type is absent ------------------------------- */

static struct json_object *get(struct json_object *o, const char *key, enum json_type t)
{
	struct json_object *v = NULL;
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_is_type(v, t) ? v : NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key, json_type_string);
	return v ? json_object_get_string(v) : NULL;
}

static struct json_object *get_obj(struct json_object *o, const char *key)
{
	return get(o, key, json_type_object);
}

static struct json_object *get_arr(struct json_object *o, const char *key)
{
	return get(o, key, json_type_array);
}

static bool get_bool(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key, json_type_boolean);
	return v && json_object_get_boolean(v);
}

/* An integer or a number: a copy of the value; NULL (JSON null) otherwise. */
static struct json_object *copy_number(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key, json_type_int);
	if (v)
		return json_object_new_int64(json_object_get_int64(v));
	v = get(o, key, json_type_double);
	return v ? json_object_new_double(json_object_get_double(v)) : NULL;
}

static int64_t get_int(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key, json_type_int);
	return v ? json_object_get_int64(v) : 0;
}

static struct json_object *copy_str(struct json_object *o, const char *key)
{
	const char *s = get_str(o, key);
	return s ? json_object_new_string(s) : NULL;
}

/* A deep copy, so an event never shares a node with the parsed line. */
static struct json_object *copy(struct json_object *v)
{
	struct json_object *out = NULL;
	if (!v || json_object_deep_copy(v, &out, NULL) != 0)
		return NULL;
	return out;
}

static void add(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static struct json_object *event_new(const char *type)
{
	struct json_object *e = json_object_new_object();
	add(e, "type", json_object_new_string(type));
	return e;
}

/* Text that is valid UTF-8: each ill-formed byte becomes U+FFFD. */
static char *utf8_clean(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = (unsigned char)s[i] < 0x80
			       ? 1
			       : utf8_decode((const unsigned char *)s + i, len - i, &cp);
		if (n == 0) {
			strbuf_addstr(&sb, "\xef\xbf\xbd");
			i++;
		} else {
			strbuf_add(&sb, s + i, n);
			i += n;
		}
	}
	return strbuf_detach(&sb);
}

static void ids_add(struct strv *ids, const char *id)
{
	if (!id || strv_contains(ids, id))
		return;
	if (ids->len >= AGENT_IDS_MAX) {
		free(ids->items[0]);
		memmove(ids->items, ids->items + 1, (ids->len - 1) * sizeof(ids->items[0]));
		ids->len--;
		ids->items[ids->len] = NULL;
	}
	strv_push(ids, id);
}

static void emit_error(const char *kind, const char *message, agent_emit_fn emit, void *ctx)
{
	struct json_object *e = event_new("error");
	add(e, "kind", json_object_new_string(kind));
	add(e, "message", json_object_new_string(message ? message : ""));
	emit(ctx, e);
}

static void emit_raw(struct agent_stream *st, const char *line, size_t len, agent_emit_fn emit,
		     void *ctx)
{
	if (!st->raw)
		return;
	struct json_object *e = event_new("raw");
	char *clean = utf8_clean(line, len);
	add(e, "line", json_object_new_string(clean));
	free(clean);
	emit(ctx, e);
}

/* The tool result text: cut at AGENT_TOOL_TEXT_MAX, on a character
 * boundary, saying so. */
static void add_tool_text(struct json_object *e, const char *text, size_t len)
{
	bool cut = len > AGENT_TOOL_TEXT_MAX;
	if (cut) {
		len = AGENT_TOOL_TEXT_MAX;
		while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--;
	}
	add(e, "text", json_object_new_string_len(text, (int)len));
	add(e, "truncated", json_object_new_boolean(cut));
}

/* {input, output, cacheRead, cacheCreation} */
static struct json_object *usage_new(int64_t input, int64_t output, int64_t cache_read,
				     int64_t cache_creation)
{
	struct json_object *u = json_object_new_object();
	add(u, "input", json_object_new_int64(input));
	add(u, "output", json_object_new_int64(output));
	add(u, "cacheRead", json_object_new_int64(cache_read));
	add(u, "cacheCreation", json_object_new_int64(cache_creation));
	return u;
}

/* A list of the strings in arr (other values skipped). */
static struct json_object *strings_of(struct json_object *arr)
{
	struct json_object *out = json_object_new_array();
	size_t n = arr ? json_object_array_length(arr) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(arr, i);
		if (json_object_is_type(v, json_type_string))
			json_object_array_add(out,
					      json_object_new_string(json_object_get_string(v)));
	}
	return out;
}

static void keep_result(struct agent_stream *st, struct json_object *e)
{
	json_object_put(st->result);
	st->result = json_object_get(e);
}

/* --- Claude Code stream-json ------------------------------------------ */

static void claude_started(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
			   void *ctx)
{
	const char *sid = get_str(j, "session_id");
	if (sid) {
		free(st->session_id);
		st->session_id = xstrdup(sid);
	}
	struct json_object *e = event_new("started");
	add(e, "agentSessionId", copy_str(j, "session_id"));
	add(e, "model", copy_str(j, "model"));
	add(e, "tools", strings_of(get_arr(j, "tools")));
	struct json_object *servers = json_object_new_array();
	struct json_object *arr = get_arr(j, "mcp_servers");
	size_t n = arr ? json_object_array_length(arr) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(arr, i);
		if (!get_str(s, "name"))
			continue;
		struct json_object *o = json_object_new_object();
		add(o, "name", copy_str(s, "name"));
		add(o, "status", copy_str(s, "status"));
		json_object_array_add(servers, o);
	}
	add(e, "mcpServers", servers);
	add(e, "skills", strings_of(get_arr(j, "skills")));
	emit(ctx, e);
}

static bool claude_system(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
			  void *ctx)
{
	const char *sub = get_str(j, "subtype");
	if (!sub)
		return false;
	if (strcmp(sub, "init") == 0) {
		claude_started(st, j, emit, ctx);
		return true;
	}
	if (strcmp(sub, "api_retry") == 0) {
		struct json_object *e = event_new("retry");
		add(e, "attempt", copy_number(j, "attempt"));
		add(e, "maxRetries", copy_number(j, "max_retries"));
		add(e, "errorStatus", copy_number(j, "error_status"));
		add(e, "error", copy_str(j, "error"));
		add(e, "retryDelayMs", copy_number(j, "retry_delay_ms"));
		emit(ctx, e);
		return true;
	}
	if (strcmp(sub, "permission_denied") == 0) {
		/* A tool use the CLI's permission rules refused: made visible
		 * so that every blocked attempt can be audited. */
		ids_add(&st->denied, get_str(j, "tool_use_id"));
		struct json_object *e = event_new("error");
		add(e, "kind", json_object_new_string("permission_denied"));
		add(e, "message", json_object_new_string(get_str(j, "message") ?: ""));
		add(e, "callId", copy_str(j, "tool_use_id"));
		add(e, "name", copy_str(j, "tool_name"));
		emit(ctx, e);
		return true;
	}
	return false;
}

/* "mcp__SERVER__TOOL" -> server and name; other names as they are. */
static void add_tool_name(struct json_object *e, const char *name)
{
	const char *sep = NULL;
	if (strncmp(name, "mcp__", 5) == 0)
		sep = strstr(name + 5, "__");
	if (sep && sep > name + 5 && sep[2]) {
		add(e, "name", json_object_new_string(sep + 2));
		add(e, "server", json_object_new_string_len(name + 5, (int)(sep - (name + 5))));
	} else {
		add(e, "name", json_object_new_string(name));
	}
}

static void join_texts(struct strbuf *sb, struct json_object *blocks)
{
	size_t n = json_object_array_length(blocks);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		struct json_object *b = json_object_array_get_idx(blocks, i);
		const char *type = get_str(b, "type");
		const char *text = get_str(b, "text");
		if (!type || strcmp(type, "text") != 0 || !text)
			continue;
		if (!first)
			strbuf_addch(sb, '\n');
		strbuf_addstr(sb, text);
		first = false;
	}
}

static bool claude_assistant(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
			     void *ctx)
{
	struct json_object *msg = get_obj(j, "message");
	struct json_object *content = get_arr(msg, "content");
	if (!content)
		return false;
	const char *error = get_str(j, "error");
	if (error) {
		/* The CLI's own message about a failed API call (an outage):
		 * an error, not the model's text. */
		struct strbuf sb = STRBUF_INIT;
		join_texts(&sb, content);
		struct json_object *e = event_new("error");
		add(e, "kind", json_object_new_string(error));
		add(e, "message", json_object_new_string(strbuf_str(&sb)));
		add(e, "status", copy_number(j, "api_error_status"));
		strbuf_release(&sb);
		emit(ctx, e);
		return true;
	}
	size_t n = json_object_array_length(content);
	for (size_t i = 0; i < n; i++) {
		struct json_object *b = json_object_array_get_idx(content, i);
		const char *type = get_str(b, "type");
		if (!type)
			continue;
		if (strcmp(type, "text") == 0 && get_str(b, "text")) {
			struct json_object *e = event_new("text");
			add(e, "text", copy_str(b, "text"));
			add(e, "messageId", copy_str(msg, "id"));
			emit(ctx, e);
		} else if (strcmp(type, "thinking") == 0 && get_str(b, "thinking")) {
			struct json_object *e = event_new("thinking");
			add(e, "text", copy_str(b, "thinking"));
			emit(ctx, e);
		} else if (strcmp(type, "tool_use") == 0 && get_str(b, "name")) {
			struct json_object *e = event_new("tool_call");
			add(e, "callId", copy_str(b, "id"));
			add_tool_name(e, get_str(b, "name"));
			struct json_object *input = NULL;
			json_object_object_get_ex(b, "input", &input);
			add(e, "input", copy(input));
			emit(ctx, e);
		} else {
			const char *text =
			    json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);
			emit_raw(st, text, strlen(text), emit, ctx);
		}
	}
	return true;
}

/* The CLI's text for a tool it does not offer (--disallowedTools). */
static const char no_such_tool[] = "<tool_use_error>Error: No such tool available:";

static bool claude_user(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
			void *ctx)
{
	struct json_object *content = get_arr(get_obj(j, "message"), "content");
	if (!content)
		return false;
	bool any = false;
	size_t n = json_object_array_length(content);
	for (size_t i = 0; i < n; i++) {
		struct json_object *b = json_object_array_get_idx(content, i);
		const char *type = get_str(b, "type");
		if (!type || strcmp(type, "tool_result") != 0)
			continue;
		struct strbuf sb = STRBUF_INIT;
		const char *text = get_str(b, "content");
		if (text)
			strbuf_addstr(&sb, text);
		else if (get_arr(b, "content"))
			join_texts(&sb, get_arr(b, "content"));
		const char *id = get_str(b, "tool_use_id");
		struct json_object *e = event_new("tool_result");
		add(e, "callId", copy_str(b, "tool_use_id"));
		add(e, "isError", json_object_new_boolean(get_bool(b, "is_error")));
		add_tool_text(e, strbuf_str(&sb), sb.len);
		if ((id && strv_contains(&st->denied, id)) ||
		    strncmp(strbuf_str(&sb), no_such_tool, sizeof(no_such_tool) - 1) == 0)
			add(e, "denied", json_object_new_boolean(true));
		strbuf_release(&sb);
		emit(ctx, e);
		any = true;
	}
	return any;
}

static bool claude_stream_event(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
				void *ctx)
{
	struct json_object *delta = get_obj(get_obj(j, "event"), "delta");
	const char *type = get_str(delta, "type");
	if (!st->include_partial || !type)
		return false;
	if (strcmp(type, "text_delta") == 0 && get_str(delta, "text")) {
		struct json_object *e = event_new("text");
		add(e, "text", copy_str(delta, "text"));
		add(e, "messageId", copy_str(j, "api_message_id"));
		add(e, "partial", json_object_new_boolean(true));
		emit(ctx, e);
		return true;
	}
	if (strcmp(type, "thinking_delta") == 0 && get_str(delta, "thinking")) {
		struct json_object *e = event_new("thinking");
		add(e, "text", copy_str(delta, "thinking"));
		add(e, "partial", json_object_new_boolean(true));
		emit(ctx, e);
		return true;
	}
	return false;
}

static struct json_object *claude_usage(struct json_object *u)
{
	return usage_new(get_int(u, "input_tokens"), get_int(u, "output_tokens"),
			 get_int(u, "cache_read_input_tokens"),
			 get_int(u, "cache_creation_input_tokens"));
}

static bool claude_result(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
			  void *ctx)
{
	struct json_object *errors = get_arr(j, "errors");
	size_t n = errors ? json_object_array_length(errors) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(errors, i);
		if (json_object_is_type(v, json_type_string))
			emit_error("result", json_object_get_string(v), emit, ctx);
	}
	struct json_object *e = event_new("result");
	add(e, "isError", json_object_new_boolean(get_bool(j, "is_error")));
	/* An interrupted run has no result text: its first error says why. */
	struct json_object *text = copy_str(j, "result");
	struct json_object *first = errors ? json_object_array_get_idx(errors, 0) : NULL;
	if (!text && json_object_is_type(first, json_type_string))
		text = json_object_new_string(json_object_get_string(first));
	add(e, "result", text);
	add(e, "numTurns", copy_number(j, "num_turns"));
	add(e, "totalCostUsd", copy_number(j, "total_cost_usd"));
	add(e, "usage", claude_usage(get_obj(j, "usage")));
	struct json_object *model_usage = copy(get_obj(j, "modelUsage"));
	add(e, "modelUsage", model_usage ? model_usage : json_object_new_object());
	struct json_object *denials = json_object_new_array();
	struct json_object *arr = get_arr(j, "permission_denials");
	n = arr ? json_object_array_length(arr) : 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(d, json_type_object))
			continue;
		struct json_object *o = json_object_new_object();
		add(o, "name", copy_str(d, "tool_name"));
		add(o, "callId", copy_str(d, "tool_use_id"));
		add(o, "input", copy(get_obj(d, "tool_input")));
		json_object_array_add(denials, o);
	}
	add(e, "permissionDenials", denials);
	add(e, "durationMs", copy_number(j, "duration_ms"));
	add(e, "durationApiMs", copy_number(j, "duration_api_ms"));
	add(e, "terminalReason", copy_str(j, "terminal_reason"));
	add(e, "agentSessionId", copy_str(j, "session_id"));
	keep_result(st, e);
	emit(ctx, e);
	return true;
}

static bool claude_line(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
			void *ctx)
{
	const char *type = get_str(j, "type");
	if (!type)
		return false;
	if (strcmp(type, "system") == 0)
		return claude_system(st, j, emit, ctx);
	if (strcmp(type, "assistant") == 0)
		return claude_assistant(st, j, emit, ctx);
	if (strcmp(type, "user") == 0)
		return claude_user(st, j, emit, ctx);
	if (strcmp(type, "stream_event") == 0)
		return claude_stream_event(st, j, emit, ctx);
	if (strcmp(type, "result") == 0)
		return claude_result(st, j, emit, ctx);
	return false;
}

/* --- Codex exec --json ------------------------------------------------ */

static void codex_tool_call(struct agent_stream *st, struct json_object *item, const char *name,
			    const char *server, struct json_object *input, agent_emit_fn emit,
			    void *ctx)
{
	const char *id = get_str(item, "id");
	if (id && strv_contains(&st->announced, id)) {
		json_object_put(input);
		return;
	}
	ids_add(&st->announced, id);
	struct json_object *e = event_new("tool_call");
	add(e, "callId", copy_str(item, "id"));
	add(e, "name", json_object_new_string(name));
	if (server)
		add(e, "server", json_object_new_string(server));
	add(e, "input", input);
	emit(ctx, e);
}

static void codex_tool_result(struct json_object *item, bool is_error, const char *text,
			      agent_emit_fn emit, void *ctx)
{
	struct json_object *e = event_new("tool_result");
	add(e, "callId", copy_str(item, "id"));
	add(e, "isError", json_object_new_boolean(is_error));
	add_tool_text(e, text ? text : "", text ? strlen(text) : 0);
	struct json_object *code = copy_number(item, "exit_code");
	if (code)
		add(e, "exitCode", code);
	emit(ctx, e);
}

static bool status_is(struct json_object *item, const char *status)
{
	const char *s = get_str(item, "status");
	return s && strcmp(s, status) == 0;
}

static bool codex_item(struct agent_stream *st, struct json_object *j, bool completed,
		       agent_emit_fn emit, void *ctx)
{
	struct json_object *item = get_obj(j, "item");
	const char *type = get_str(item, "type");
	if (!type)
		return false;
	if (strcmp(type, "agent_message") == 0 || strcmp(type, "reasoning") == 0) {
		const char *text = get_str(item, "text");
		if (!completed || !text)
			return false;
		bool message = type[0] == 'a';
		struct json_object *e = event_new(message ? "text" : "thinking");
		add(e, "text", json_object_new_string(text));
		if (message) {
			add(e, "messageId", copy_str(item, "id"));
			free(st->last_text);
			st->last_text = xstrdup(text);
		}
		emit(ctx, e);
		return true;
	}
	if (strcmp(type, "command_execution") == 0) {
		struct json_object *input = json_object_new_object();
		add(input, "command", copy_str(item, "command"));
		codex_tool_call(st, item, "command_execution", NULL, input, emit, ctx);
		if (completed) {
			struct json_object *code = get(item, "exit_code", json_type_int);
			bool failed = status_is(item, "failed") || status_is(item, "declined") ||
				      (code && json_object_get_int64(code) != 0);
			codex_tool_result(item, failed, get_str(item, "aggregated_output"), emit,
					  ctx);
		}
		return true;
	}
	if (strcmp(type, "mcp_tool_call") == 0 && get_str(item, "tool")) {
		struct json_object *args = NULL;
		json_object_object_get_ex(item, "arguments", &args);
		codex_tool_call(st, item, get_str(item, "tool"), get_str(item, "server"),
				copy(args), emit, ctx);
		if (completed) {
			struct strbuf sb = STRBUF_INIT;
			struct json_object *content = get_arr(get_obj(item, "result"), "content");
			const char *err = get_str(get_obj(item, "error"), "message");
			if (content)
				join_texts(&sb, content);
			else if (err)
				strbuf_addstr(&sb, err);
			codex_tool_result(item, status_is(item, "failed") || err, strbuf_str(&sb),
					  emit, ctx);
			strbuf_release(&sb);
		}
		return true;
	}
	if (strcmp(type, "file_change") == 0 || strcmp(type, "web_search") == 0) {
		bool change = type[0] == 'f';
		struct json_object *input = json_object_new_object();
		add(input, change ? "changes" : "query",
		    change ? copy(get_arr(item, "changes")) : copy_str(item, "query"));
		codex_tool_call(st, item, type, NULL, input, emit, ctx);
		if (completed)
			codex_tool_result(item, status_is(item, "failed"), "", emit, ctx);
		return true;
	}
	if (strcmp(type, "error") == 0 && completed) {
		emit_error("agent", get_str(item, "message"), emit, ctx);
		return true;
	}
	return false;
}

static void codex_result(struct agent_stream *st, bool is_error, const char *text,
			 const char *reason, agent_emit_fn emit, void *ctx)
{
	struct json_object *e = event_new("result");
	add(e, "isError", json_object_new_boolean(is_error));
	add(e, "result", text ? json_object_new_string(text) : NULL);
	add(e, "numTurns", json_object_new_int(st->turns));
	add(e, "totalCostUsd", NULL);
	/* Codex reports tokens, never a price. */
	add(e, "costKnown", json_object_new_boolean(false));
	add(e, "usage", usage_new(st->usage[0], st->usage[1], st->usage[2], st->usage[3]));
	add(e, "modelUsage", json_object_new_object());
	add(e, "permissionDenials", json_object_new_array());
	add(e, "durationMs", NULL);
	add(e, "durationApiMs", NULL);
	add(e, "terminalReason", json_object_new_string(reason));
	add(e, "agentSessionId", st->session_id ? json_object_new_string(st->session_id) : NULL);
	keep_result(st, e);
	emit(ctx, e);
}

static bool codex_line(struct agent_stream *st, struct json_object *j, agent_emit_fn emit,
		       void *ctx)
{
	const char *type = get_str(j, "type");
	if (!type)
		return false;
	if (strcmp(type, "thread.started") == 0 && get_str(j, "thread_id")) {
		free(st->session_id);
		st->session_id = xstrdup(get_str(j, "thread_id"));
		struct json_object *e = event_new("started");
		add(e, "agentSessionId", copy_str(j, "thread_id"));
		add(e, "model", NULL);
		add(e, "tools", json_object_new_array());
		add(e, "mcpServers", json_object_new_array());
		add(e, "skills", json_object_new_array());
		emit(ctx, e);
		return true;
	}
	if (strcmp(type, "turn.started") == 0) {
		st->turns++;
		return false;
	}
	if (strcmp(type, "item.started") == 0 || strcmp(type, "item.updated") == 0)
		return codex_item(st, j, false, emit, ctx);
	if (strcmp(type, "item.completed") == 0)
		return codex_item(st, j, true, emit, ctx);
	if (strcmp(type, "turn.completed") == 0) {
		struct json_object *u = get_obj(j, "usage");
		st->usage[0] += get_int(u, "input_tokens");
		st->usage[1] += get_int(u, "output_tokens");
		st->usage[2] += get_int(u, "cached_input_tokens");
		st->usage[3] += get_int(u, "cache_write_input_tokens");
		codex_result(st, false, st->last_text, "completed", emit, ctx);
		return true;
	}
	if (strcmp(type, "turn.failed") == 0) {
		const char *msg = get_str(get_obj(j, "error"), "message");
		emit_error("turn_failed", msg, emit, ctx);
		codex_result(st, true, msg ? msg : "the turn failed", "turn_failed", emit, ctx);
		return true;
	}
	if (strcmp(type, "error") == 0) {
		const char *msg = get_str(j, "message");
		int attempt = 0, max = 0, end = 0;
		/* How Codex reports a retried request: "Reconnecting... 2/5 (why)". */
		if (msg && sscanf(msg, "Reconnecting... %d/%d %n", &attempt, &max, &end) == 2 &&
		    end > 0) {
			struct json_object *e = event_new("retry");
			add(e, "attempt", json_object_new_int(attempt));
			add(e, "maxRetries", json_object_new_int(max));
			add(e, "errorStatus", NULL);
			add(e, "error", json_object_new_string(msg));
			emit(ctx, e);
		} else {
			emit_error("agent", msg, emit, ctx);
		}
		return true;
	}
	return false;
}

/* --- lines ---------------------------------------------------------- */

static void map_line(struct agent_stream *st, const char *line, size_t len, agent_emit_fn emit,
		     void *ctx)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	size_t start = 0;
	while (start < len && (line[start] == ' ' || line[start] == '\t'))
		start++;
	if (start == len)
		return;
	if (!json_values_within(line + start, len - start, JSON_CONTAINERS_MAX, JSON_COMMAS_MAX)) {
		struct json_object *e = event_new("error");
		add(e, "kind", json_object_new_string("protocol"));
		add(e, "message",
		    json_object_new_string("a line of the agent's output with more than 65536 "
					   "objects and arrays or 262144 commas was not read"));
		emit(ctx, e);
		return;
	}
	/* Deeper than json-c's default of 32, so that a deeply nested tool
	 * input cannot hide a tool call. */
	struct json_tokener *tok = json_tokener_new_ex(1024);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *j = json_tokener_parse_ex(tok, line + start, (int)(len - start));
	bool whole = j && json_tokener_get_error(tok) == json_tokener_success &&
		     json_tokener_get_parse_end(tok) == len - start;
	json_tokener_free(tok);
	bool mapped = false;
	if (whole && json_object_is_type(j, json_type_object))
		mapped = st->kind == AGENT_CODEX ? codex_line(st, j, emit, ctx)
						 : claude_line(st, j, emit, ctx);
	json_object_put(j);
	if (!mapped)
		emit_raw(st, line + start, len - start, emit, ctx);
}

struct agent_stream *agent_stream_new(enum agent_kind kind, bool include_partial, bool raw)
{
	struct agent_stream *st = xcalloc(1, sizeof(*st));
	st->kind = kind;
	st->include_partial = include_partial;
	st->raw = raw;
	st->line = (struct strbuf)STRBUF_INIT;
	st->denied = (struct strv)STRV_INIT;
	st->announced = (struct strv)STRV_INIT;
	return st;
}

void agent_stream_free(struct agent_stream *st)
{
	if (!st)
		return;
	strbuf_release(&st->line);
	json_object_put(st->result);
	free(st->session_id);
	strv_release(&st->denied);
	strv_release(&st->announced);
	free(st->last_text);
	free(st);
}

static void drop_line(struct agent_stream *st, agent_emit_fn emit, void *ctx)
{
	strbuf_release(&st->line);
	st->line = (struct strbuf)STRBUF_INIT;
	st->dropping = true;
	char *msg =
	    xasprintf("a line of the agent's output over %zu bytes was dropped", AGENT_LINE_MAX);
	emit_error("protocol", msg, emit, ctx);
	free(msg);
}

void agent_stream_feed(struct agent_stream *st, const char *buf, size_t n, agent_emit_fn emit,
		       void *ctx)
{
	while (n) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;
		if (!st->dropping) {
			if (st->line.len + take > AGENT_LINE_MAX) {
				drop_line(st, emit, ctx);
			} else if (nl && st->line.len == 0) {
				map_line(st, buf, take, emit, ctx);
			} else {
				strbuf_add(&st->line, buf, take);
				if (nl) {
					map_line(st, strbuf_str(&st->line), st->line.len, emit,
						 ctx);
					strbuf_reset(&st->line);
				}
			}
		}
		if (nl) {
			st->dropping = false;
			take++;
		}
		buf += take;
		n -= take;
	}
}

static const char *last_line(const char *text, size_t *len)
{
	size_t n = text ? strlen(text) : 0;
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		n--;
	size_t start = n;
	while (start && text[start - 1] != '\n')
		start--;
	*len = n - start;
	return text ? text + start : "";
}

void agent_stream_finish(struct agent_stream *st, int wait_status, bool timed_out, bool interrupted,
			 const char *stderr_tail, agent_emit_fn emit, void *ctx)
{
	if (st->finished)
		return;
	st->finished = true;
	if (!st->dropping && st->line.len)
		map_line(st, strbuf_str(&st->line), st->line.len, emit, ctx);
	strbuf_reset(&st->line);
	if (st->result)
		return;
	struct strbuf why = STRBUF_INIT;
	const char *reason;
	if (timed_out) {
		reason = "timeout";
		strbuf_addstr(&why, "the agent timed out");
	} else if (interrupted) {
		reason = "interrupted";
		strbuf_addstr(&why, "the agent was interrupted");
	} else if (wait_status != -1 && WIFSIGNALED(wait_status)) {
		reason = "signal";
		strbuf_addf(&why, "the agent was killed by signal %d (%s)", WTERMSIG(wait_status),
			    sigabbrev_np(WTERMSIG(wait_status)) ?: "?");
	} else if (wait_status != -1 && WIFEXITED(wait_status)) {
		reason = "no_result";
		strbuf_addf(&why, "the agent exited with status %d without a result",
			    WEXITSTATUS(wait_status));
	} else {
		reason = "no_result";
		strbuf_addstr(&why, "the agent ended without a result");
	}
	size_t len;
	const char *tail = last_line(stderr_tail, &len);
	if (len) {
		char *clean = utf8_clean(tail, len);
		strbuf_addf(&why, ": %s", clean);
		free(clean);
	}
	struct json_object *e = event_new("result");
	add(e, "isError", json_object_new_boolean(true));
	add(e, "result", json_object_new_string(strbuf_str(&why)));
	add(e, "numTurns", json_object_new_int(st->kind == AGENT_CODEX ? st->turns : 0));
	add(e, "totalCostUsd", NULL);
	add(e, "usage", usage_new(0, 0, 0, 0));
	add(e, "modelUsage", json_object_new_object());
	add(e, "permissionDenials", json_object_new_array());
	add(e, "durationMs", NULL);
	add(e, "durationApiMs", NULL);
	add(e, "terminalReason", json_object_new_string(reason));
	add(e, "agentSessionId", st->session_id ? json_object_new_string(st->session_id) : NULL);
	add(e, "synthesized", json_object_new_boolean(true));
	strbuf_release(&why);
	keep_result(st, e);
	emit(ctx, e);
}

static struct json_object *result_field(const struct agent_stream *st, const char *key)
{
	struct json_object *v = NULL;
	if (!st->result || !json_object_object_get_ex(st->result, key, &v))
		return NULL;
	return copy(v);
}

struct json_object *agent_stream_completion(const struct agent_stream *st, int wait_status)
{
	struct json_object *c = json_object_new_object();
	bool exit_failed =
	    wait_status != -1 && !(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
	bool is_error = !st->result || get_bool(st->result, "isError") || exit_failed;
	add(c, "isError", json_object_new_boolean(is_error));
	struct json_object *result = result_field(st, "result");
	add(c, "result",
	    result || st->result ? result : json_object_new_string("the agent gave no result"));
	struct json_object *usage = result_field(st, "usage");
	add(c, "usage", usage ? usage : usage_new(0, 0, 0, 0));
	add(c, "totalCostUsd", result_field(st, "totalCostUsd"));
	if (st->kind == AGENT_CODEX)
		add(c, "costKnown", json_object_new_boolean(false));
	add(c, "numTurns", result_field(st, "numTurns"));
	add(c, "durationMs", result_field(st, "durationMs"));
	if (wait_status != -1 && WIFEXITED(wait_status)) {
		add(c, "exitCode", json_object_new_int(WEXITSTATUS(wait_status)));
	} else {
		add(c, "exitCode", NULL);
		if (wait_status != -1 && WIFSIGNALED(wait_status))
			add(c, "signal", json_object_new_int(WTERMSIG(wait_status)));
	}
	struct json_object *reason = result_field(st, "terminalReason");
	add(c, "terminalReason", reason ? reason : json_object_new_string("no_result"));
	return c;
}

const char *agent_stream_session_id(const struct agent_stream *st)
{
	return st->session_id;
}
