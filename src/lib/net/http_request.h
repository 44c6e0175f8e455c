/* The head of an HTTP/1.x request sent to the proxy: CONNECT host:port, or
 * an absolute-form request (GET http://host/path) for plain http. Parsing
 * only; the proxy decides and connects. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Request heads larger than this are refused with 431. */
#define HTTP_HEAD_MAX (16 * 1024)

enum http_kind {
	HTTP_CONNECT, /* a tunnel: relay bytes once connected */
	HTTP_FORWARD, /* plain http: send `forward_head` to the origin, then relay */
};

struct http_request {
	enum http_kind kind;
	char *host; /* as sent, without brackets; not yet normalised */
	uint16_t port;
	size_t head_len;    /* bytes of the buffer the head took */
	char *forward_head; /* HTTP_FORWARD: the head rewritten for the origin server */
	size_t forward_len;
	uint64_t body_len; /* HTTP_FORWARD: the request body's Content-Length (0 without) */
};

struct http_error {
	int status;	    /* 400, 411, 414, 431, 505 */
	const char *reason; /* one line, for the response body */
};

/* Parses buf[0..len). Returns 1 with *req filled, 0 when the head is
 * incomplete (read more), or -1 with *e set. */
int http_request_parse(const char *buf, size_t len, struct http_request *req, struct http_error *e);

void http_request_release(struct http_request *req);

/* "Forbidden" for 403 and so on. */
const char *http_status_text(int status);
