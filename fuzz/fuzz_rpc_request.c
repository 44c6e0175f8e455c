/* libFuzzer target for the executor API's request decoder (serve/rpc.c)
 * and the base64 the API carries data in: any line either decodes or is an
 * error with a code; a decoded request's parameters are read as every
 * method reads them; the answers built from it are one line of JSON; and
 * whatever base64 decodes encodes back to the same text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/cleanup.h"
#include "base/strv.h"
#include "serve/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(char *line, size_t len)
{
	if (!len || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
		abort();
	struct json_object *o = json_tokener_parse(line);
	if (!o)
		abort();
	json_object_put(o);
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_request req;
	int code = 0;
	struct error err = ERROR_INIT;
	size_t len;
	if (rpc_decode((const char *)data, size, &req, &code, &err) < 0) {
		if (!err.msg || (code != RPC_PARSE_ERROR && code != RPC_INVALID_REQUEST))
			abort();
		check_line(rpc_error_line(req.id, code, &err, &len), len);
	} else {
		if (!req.method || !req.params ||
		    !json_object_is_type(req.params, json_type_object))
			abort();
		static const char *const names[] = {"sessionId", "argv", "cwd",	      "timeoutMs",
						    "detached",	 "key",	 "dataBase64"};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			const char *s = NULL;
			bool b = false;
			int64_t n = 0;
			struct json_object *o = NULL;
			struct strv v = STRV_INIT;
			error_release(&err);
			(void)rpc_param_string(req.params, names[i], i & 1, &s, &err);
			error_release(&err);
			(void)rpc_param_bool(req.params, names[i], &b, &err);
			error_release(&err);
			(void)rpc_param_int(req.params, names[i], false, -5, 1ll << 40, &n, &err);
			if (!err.msg && (n < -5 || n > (1ll << 40)))
				abort();
			error_release(&err);
			(void)rpc_param_object(req.params, names[i], &o, &err);
			error_release(&err);
			(void)rpc_param_argv(req.params, names[i], false, &v, &err);
			strv_release(&v);
		}
		check_line(rpc_result_line(req.id, json_object_get(req.params), &len), len);
		check_line(rpc_notification_line(req.method, json_object_get(req.params), &len),
			   len);
	}
	rpc_request_release(&req);
	error_release(&err);

	size_t n = 0;
	_cleanup_free_ unsigned char *bytes = base64_decode((const char *)data, size, &n);
	if (bytes) {
		size_t back_len = 0;
		char *back = base64_encode(bytes, n, &back_len);
		free(back);
		/* Padding bits aside, the text is the canonical encoding. */
		if (back_len != size)
			abort();
	}
	return 0;
}
