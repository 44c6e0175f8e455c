/* JSON-RPC 2.0 as the executor API speaks it: one message per line.
 * Decoding a line from a client (untrusted: fuzzed), encoding results,
 * errors and notifications, and reading typed parameters with errors that
 * name the parameter and the form it needs. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strv.h"

/* The longest line either side sends or accepts, newline excluded. */
#ifndef SERVE_LINE_MAX
#define SERVE_LINE_MAX (16u << 20)
#endif
/* How deeply a request's JSON may nest. */
#define RPC_DEPTH_MAX 64

enum rpc_code {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	RPC_OVERLOADED = -32001,
	RPC_NOT_FOUND = -32002,
	RPC_DENIED = -32003,
	RPC_LIMIT = -32004,
	RPC_POLICY = -32005,
};

struct rpc_request {
	struct json_object *msg;    /* the whole message, owned */
	struct json_object *id;	    /* borrowed; NULL for null or no id */
	bool has_id;		    /* false: a notification, answered by nothing */
	const char *method;	    /* borrowed */
	struct json_object *params; /* borrowed: an object ({} when absent) */
};

/* Decodes one line (without its newline). Returns 0, or -1 with *code
 * (RPC_PARSE_ERROR, RPC_INVALID_REQUEST) and err set; req->id is then the
 * request's id when one could be read (for the error's answer), else
 * NULL. Release req either way. */
int rpc_decode(const char *line, size_t len, struct rpc_request *req, int *code, struct error *err);
void rpc_request_release(struct rpc_request *req);

/* The code a library error answers with. */
int rpc_code_for(enum error_kind kind);

/* Lines to send, each ending in '\n'; result and params are taken. */
char *rpc_result_line(struct json_object *id, struct json_object *result, size_t *len);
char *rpc_error_line(struct json_object *id, int code, const struct error *err, size_t *len);
/* The same with extra's members added to error.data (extra taken). */
char *rpc_error_line_with(struct json_object *id, int code, const struct error *err,
			  struct json_object *extra, size_t *len);
char *rpc_notification_line(const char *method, struct json_object *params, size_t *len);

/* Typed parameters. Each returns 0 with *out set (left alone when the
 * parameter is absent and not required), or -1 with ERROR_USAGE naming
 * the parameter and its form. */
int rpc_param_string(struct json_object *params, const char *name, bool required, const char **out,
		     struct error *err);
int rpc_param_bool(struct json_object *params, const char *name, bool *out, struct error *err);
/* An integer in [min, max]. */
int rpc_param_int(struct json_object *params, const char *name, bool required, int64_t min,
		  int64_t max, int64_t *out, struct error *err);
/* An object (borrowed), or NULL when absent. */
int rpc_param_object(struct json_object *params, const char *name, struct json_object **out,
		     struct error *err);
/* A non-empty array of strings without NUL bytes, appended to out. */
int rpc_param_argv(struct json_object *params, const char *name, bool required, struct strv *out,
		   struct error *err);
