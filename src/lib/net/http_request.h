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

/* The credential endpoint's request: origin-form only (POST /v1/messages),
 * rewritten for its one upstream. Host is set to `host`; every
 * authentication header the client sent (Authorization, x-api-key,
 * Proxy-*, and `drop_header`) is dropped and `add_header` (a whole line
 * without CRLF, or NULL) added; the body is framed by Content-Length only
 * (a chunked body is refused with 411), and Connection: close ends the
 * head. On 1, forward_head/forward_len hold the new head, head_len the
 * bytes of buf it took, body_len the body's length. Returns 1, 0
 * (incomplete) or -1 with *e set. */
struct http_origin_rewrite {
	const char *host;
	const char *add_header;
	const char *drop_header;
};
int http_request_parse_origin(const char *buf, size_t len, const struct http_origin_rewrite *rw,
			      struct http_request *req, struct http_error *e);

/* A response head from an upstream, rewritten so that the client does not
 * keep the connection: Connection and Keep-Alive are dropped and
 * Connection: close added. */
#define HTTP_RESPONSE_HEAD_MAX (64 * 1024)
struct http_response {
	int status;
	size_t head_len; /* bytes of buf the head took */
	char *head;	 /* the rewritten head (free it) */
	size_t len;
};
/* Returns 1 with *resp filled, 0 when incomplete, -1 when it is not a
 * plain HTTP/1.x response head of at most HTTP_RESPONSE_HEAD_MAX bytes. */
int http_response_close(const char *buf, size_t len, struct http_response *resp);

/* "Forbidden" for 403 and so on. */
const char *http_status_text(int status);
