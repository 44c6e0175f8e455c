/* JSON-RPC 2.0 framing and parameters (rpc.h). */
#include "serve/rpc.h"

#include <string.h>

#include "base/json_limit.h"
#include "base/xalloc.h"

static const char *const jsonrpc_version = "2.0";

int rpc_decode(const char *line, size_t len, struct rpc_request *req, int *code, struct error *err)
{
	*req = (struct rpc_request){0};
	*code = RPC_PARSE_ERROR;
	if (len > SERVE_LINE_MAX || len > INT32_MAX)
		return error_set(err, ERROR_LIMIT, "the message is longer than %u bytes",
				 SERVE_LINE_MAX);
	/* json-c stops at a NUL byte and would read the text before it as
	 * the whole message. */
	if (memchr(line, '\0', len))
		return error_set(err, ERROR_USAGE, "the message holds a NUL byte");
	if (!json_values_within(line, len, JSON_CONTAINERS_MAX, JSON_COMMAS_MAX))
		return error_set(err, ERROR_LIMIT,
				 "the message holds more than %u objects and arrays or %u commas",
				 JSON_CONTAINERS_MAX, JSON_COMMAS_MAX);
	struct json_tokener *tok = json_tokener_new_ex(RPC_DEPTH_MAX);
	if (!tok)
		return error_set(err, ERROR_SETUP, "out of memory");
	struct json_object *msg = json_tokener_parse_ex(tok, line, (int)len);
	enum json_tokener_error te = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	if (!msg && te == json_tokener_continue) {
		/* A bare number ends only where the text does: say so. */
		msg = json_tokener_parse_ex(tok, "", 1);
		te = json_tokener_get_error(tok);
		used = len;
	}
	json_tokener_free(tok);
	if (!msg || te != json_tokener_success) {
		json_object_put(msg);
		return error_set(err, ERROR_USAGE, "not JSON: %s",
				 te == json_tokener_continue ? "the message ends early"
							     : json_tokener_error_desc(te));
	}
	/* One message a line: nothing but blanks after it. */
	for (size_t i = used; i < len; i++)
		if (!strchr(" \t\r", line[i])) {
			json_object_put(msg);
			return error_set(err, ERROR_USAGE,
					 "not JSON: text after the message at byte %zu", i + 1);
		}
	req->msg = msg;
	*code = RPC_INVALID_REQUEST;
	if (!json_object_is_type(msg, json_type_object))
		return error_set(err, ERROR_USAGE,
				 json_object_is_type(msg, json_type_array)
				     ? "batches are not supported: send one request a line"
				     : "a request is a JSON object");
	struct json_object *id = NULL, *v = NULL, *m = NULL, *p = NULL;
	if (json_object_object_get_ex(msg, "id", &id)) {
		if (!json_object_is_type(id, json_type_string) &&
		    !json_object_is_type(id, json_type_int) &&
		    !json_object_is_type(id, json_type_null))
			return error_set(err, ERROR_USAGE,
					 "\"id\" must be a string, an integer or null");
		req->id = id;
		req->has_id = true;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), jsonrpc_version) != 0)
		return error_set(err, ERROR_USAGE, "\"jsonrpc\" must be \"2.0\"");
	if (!json_object_object_get_ex(msg, "method", &m) ||
	    !json_object_is_type(m, json_type_string) || !json_object_get_string_len(m))
		return error_set(err, ERROR_USAGE, "\"method\" must be a non-empty string");
	req->method = json_object_get_string(m);
	if (json_object_object_get_ex(msg, "params", &p) &&
	    !json_object_is_type(p, json_type_null)) {
		if (!json_object_is_type(p, json_type_object))
			return error_set(err, ERROR_USAGE, "\"params\" must be an object");
		req->params = p;
	} else {
		req->params = json_object_new_object();
		json_object_object_add(msg, "params", req->params);
	}
	*code = 0;
	return 0;
}

void rpc_request_release(struct rpc_request *req)
{
	json_object_put(req->msg);
	*req = (struct rpc_request){0};
}

int rpc_code_for(enum error_kind kind)
{
	switch (kind) {
	case ERROR_USAGE:
	case ERROR_CONFIG:
		return RPC_INVALID_PARAMS;
	case ERROR_DENIED:
		return RPC_DENIED;
	case ERROR_NOT_FOUND:
		return RPC_NOT_FOUND;
	case ERROR_LIMIT:
		return RPC_LIMIT;
	case ERROR_BUSY:
		return RPC_OVERLOADED;
	case ERROR_POLICY:
		return RPC_POLICY;
	case ERROR_NONE:
	case ERROR_SETUP:
	case ERROR_INTERNAL:
	case ERROR_EXEC:
		break;
	}
	return RPC_INTERNAL_ERROR;
}

static char *line_of(struct json_object *msg, size_t *len)
{
	const char *text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(text);
	char *line = xmalloc(n + 2);
	memcpy(line, text, n);
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	json_object_put(msg);
	return line;
}

static struct json_object *message(struct json_object *id)
{
	struct json_object *msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string(jsonrpc_version));
	json_object_object_add(msg, "id", id ? json_object_get(id) : NULL);
	return msg;
}

char *rpc_result_line(struct json_object *id, struct json_object *result, size_t *len)
{
	struct json_object *msg = message(id);
	json_object_object_add(msg, "result", result ? result : json_object_new_object());
	return line_of(msg, len);
}

static const char *code_message(int code)
{
	switch (code) {
	case RPC_PARSE_ERROR:
		return "Parse error";
	case RPC_INVALID_REQUEST:
		return "Invalid request";
	case RPC_METHOD_NOT_FOUND:
		return "Method not found";
	case RPC_INVALID_PARAMS:
		return "Invalid params";
	case RPC_OVERLOADED:
		return "Overloaded";
	case RPC_NOT_FOUND:
		return "Not found";
	case RPC_DENIED:
		return "Permission denied";
	case RPC_LIMIT:
		return "Limit reached";
	case RPC_POLICY:
		return "Policy refused";
	}
	return "Internal error";
}

char *rpc_error_line(struct json_object *id, int code, const struct error *err, size_t *len)
{
	return rpc_error_line_with(id, code, err, NULL, len);
}

char *rpc_error_line_with(struct json_object *id, int code, const struct error *err,
			  struct json_object *extra, size_t *len)
{
	struct json_object *msg = message(id);
	struct json_object *e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(code_message(code)));
	struct json_object *data = json_object_new_object();
	json_object_object_add(data, "kind", json_object_new_string(error_kind_name(err->kind)));
	json_object_object_add(data, "detail",
			       json_object_new_string(err->msg ? err->msg : code_message(code)));
	if (err->hint)
		json_object_object_add(data, "hint", json_object_new_string(err->hint));
	if (extra) {
		json_object_object_foreach(extra, k, v)
		    json_object_object_add(data, k, json_object_get(v));
		json_object_put(extra);
	}
	json_object_object_add(e, "data", data);
	json_object_object_add(msg, "error", e);
	return line_of(msg, len);
}

char *rpc_notification_line(const char *method, struct json_object *params, size_t *len)
{
	struct json_object *msg = json_object_new_object();
	json_object_object_add(msg, "jsonrpc", json_object_new_string(jsonrpc_version));
	json_object_object_add(msg, "method", json_object_new_string(method));
	json_object_object_add(msg, "params", params ? params : json_object_new_object());
	return line_of(msg, len);
}

static struct json_object *get(struct json_object *params, const char *name)
{
	struct json_object *v = NULL;
	if (!params || !json_object_object_get_ex(params, name, &v) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

static int missing(const char *name, const char *form, struct error *err)
{
	return error_set(err, ERROR_USAGE, "missing the parameter \"%s\" (%s)", name, form);
}

static int wrong(const char *name, const char *form, struct error *err)
{
	return error_set(err, ERROR_USAGE, "the parameter \"%s\" must be %s", name, form);
}

int rpc_param_string(struct json_object *params, const char *name, bool required, const char **out,
		     struct error *err)
{
	static const char form[] = "a string without NUL bytes";
	struct json_object *v = get(params, name);
	if (!v)
		return required ? missing(name, form, err) : 0;
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return wrong(name, form, err);
	*out = json_object_get_string(v);
	return 0;
}

int rpc_param_bool(struct json_object *params, const char *name, bool *out, struct error *err)
{
	struct json_object *v = get(params, name);
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return wrong(name, "true or false", err);
	*out = json_object_get_boolean(v);
	return 0;
}

int rpc_param_int(struct json_object *params, const char *name, bool required, int64_t min,
		  int64_t max, int64_t *out, struct error *err)
{
	struct json_object *v = get(params, name);
	if (!v) {
		if (!required)
			return 0;
		return error_set(err, ERROR_USAGE,
				 "missing the parameter \"%s\" (an integer from %lld to %lld)",
				 name, (long long)min, (long long)max);
	}
	/* json-c clamps what does not fit int64 (then out of range here
	 * unless max is INT64_MAX); a double may be integral. */
	int64_t n;
	if (json_object_is_type(v, json_type_int)) {
		n = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);
		if (d != d || d < (double)min || d > (double)max || d != (double)(int64_t)d)
			goto bad;
		n = (int64_t)d;
	} else {
		goto bad;
	}
	if (n < min || n > max)
		goto bad;
	*out = n;
	return 0;
bad:
	return error_set(err, ERROR_USAGE,
			 "the parameter \"%s\" must be an integer from %lld to %lld", name,
			 (long long)min, (long long)max);
}

int rpc_param_object(struct json_object *params, const char *name, struct json_object **out,
		     struct error *err)
{
	struct json_object *v = get(params, name);
	*out = NULL;
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return wrong(name, "an object", err);
	*out = v;
	return 0;
}

int rpc_param_argv(struct json_object *params, const char *name, bool required, struct strv *out,
		   struct error *err)
{
	static const char form[] = "a non-empty array of strings without NUL bytes";
	struct json_object *v = get(params, name);
	if (!v)
		return required ? missing(name, form, err) : 0;
	if (!json_object_is_type(v, json_type_array) || !json_object_array_length(v))
		return wrong(name, form, err);
	size_t n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(v, i);
		if (!json_object_is_type(s, json_type_string) ||
		    strlen(json_object_get_string(s)) != (size_t)json_object_get_string_len(s))
			return wrong(name, form, err);
	}
	for (size_t i = 0; i < n; i++)
		strv_push(out, json_object_get_string(json_object_array_get_idx(v, i)));
	return 0;
}
