/* libFuzzer target for the credential endpoint's parsers: the request head
 * the sandbox sends (rewritten for a fixed upstream, with the key's header)
 * and the response head the upstream sends back (rewritten for
 * Connection: close). The first input byte picks which. A rewritten request
 * names only the fixed upstream, carries the key's header exactly once and
 * no header line the client could have split; nothing may crash, leak or
 * read past the bytes it was given. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strcasestr(p, needle)); p++)
		n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	bool response = data[0] & 1;
	data++, size--;
	/* An exact-size copy, so that a read past the end is caught. */
	char *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	if (response) {
		struct http_response resp;
		int r = http_response_close(copy, size, &resp);
		if (r == 1) {
			if (resp.head_len > size || strlen(resp.head) != resp.len ||
			    resp.status < 100 || resp.status > 599 ||
			    count(resp.head, "\r\nConnection:") != 1)
				abort();
			free(resp.head);
		}
		free(copy);
		return 0;
	}
	struct http_origin_rewrite rw = {
	    .host = "api.example.com",
	    .add_header = "x-api-key: THE-KEY",
	    .drop_header = "x-api-key",
	};
	struct http_request req;
	struct http_error e = {0};
	int r = http_request_parse_origin(copy, size, &rw, &req, &e);
	if (r < 0 && (e.status < 400 || e.status > 599 || !e.reason))
		abort();
	if (r == 1) {
		const char *h = req.forward_head;
		if (req.head_len > size || !h || strlen(h) != req.forward_len || h[0] == '\0')
			abort();
		/* One Host, the fixed one; one key header, the proxy's; no
		 * bare CR or LF inside a line. */
		if (count(h, "\nHost:") != 1 || !strstr(h, "\r\nHost: api.example.com\r\n") ||
		    count(h, "\nx-api-key:") != 1 || !strstr(h, "\r\nx-api-key: THE-KEY\r\n") ||
		    count(h, "\nauthorization:") != 0 || count(h, "\nproxy-") != 0)
			abort();
		for (size_t i = 0; i < req.forward_len; i++)
			if ((h[i] == '\r') != (i + 1 < req.forward_len && h[i + 1] == '\n') ||
			    (h[i] == '\n' && (i == 0 || h[i - 1] != '\r')))
				abort();
		if (h[strcspn(h, " ") + 1] != '/')
			abort();
		http_request_release(&req);
	}
	free(copy);
	return 0;
}
