/* libFuzzer target for the proxy's HTTP request parser. Every input is
 * accepted, found incomplete, or refused with a status and a reason; an
 * accepted request names a host and a port, and nothing may crash, leak or
 * read past the bytes it was given. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that a read past the end is caught. */
	char *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	struct http_request req;
	struct http_error e = {0};
	int r = http_request_parse(copy, size, &req, &e);
	if (r < 0 && (e.status < 400 || e.status > 599 || !e.reason))
		abort();
	if (r == 1) {
		if (!req.host || !*req.host || req.port == 0 || req.head_len > size)
			abort();
		if (req.kind == HTTP_FORWARD &&
		    (!req.forward_head || strlen(req.forward_head) != req.forward_len))
			abort();
		http_request_release(&req);
	}
	free(copy);
	return 0;
}
