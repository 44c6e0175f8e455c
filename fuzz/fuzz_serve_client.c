/* libFuzzer target for what the executor API's client reads from a daemon
 * (serve/client.h): any bytes, then the end of the connection. A call gets
 * a response object with its own id or an error, notifications come back as
 * objects without an id, and nothing is read past what arrived. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Below a unix socket's buffer: the write never blocks. */
#define FUZZ_INPUT_MAX 65536

static void check_note(struct json_object *note)
{
	if (!json_object_is_type(note, json_type_object))
		abort();
	if (json_object_object_get_ex(note, "id", NULL) &&
	    !json_object_object_get_ex(note, "method", NULL))
		abort();
	json_object_put(note);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_INPUT_MAX)
		return 0;
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
		return 0;
	if (size && write(pair[1], data, size) != (ssize_t)size)
		abort();
	shutdown(pair[1], SHUT_WR);
	struct agent_sandbox_client *c = NULL;
	struct error err = ERROR_INIT;
	if (agent_sandbox_client_open_fds(pair[0], pair[0], &c, &err) < 0)
		abort();
	struct json_object *response = NULL;
	if (agent_sandbox_client_call(c, "m", NULL, &response, &err) == 0) {
		struct json_object *id;
		if (!json_object_object_get_ex(response, "id", &id) ||
		    json_object_get_int64(id) != 1 ||
		    json_object_object_get_ex(response, "method", NULL))
			abort();
		agent_sandbox_client_response_error(response, &err);
		json_object_put(response);
	}
	error_release(&err);
	for (;;) {
		struct json_object *note = NULL;
		int r = agent_sandbox_client_next(c, 0, &note, &err);
		error_release(&err);
		if (r <= 0)
			break;
		check_note(note);
	}
	agent_sandbox_client_close(c);
	close(pair[1]);
	return 0;
}
