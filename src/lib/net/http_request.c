/* This file parses what clients send to the HTTP proxy. It is fed bytes from
 * inside the sandbox, so it trusts nothing: lengths are bounded, every
 * token is checked, and a head that is not plainly valid is refused rather
 * than guessed at. Plain-http requests are rewritten so that the origin sees
 * the host that was allowed (Host is replaced from the URL, so a request
 * cannot name a different virtual host on the same server) and one request
 * per connection (Connection: close), since later requests on a kept-alive
 * connection would never pass through the policy. The body's length is
 * read from Content-Length so that the proxy forwards that one request and
 * nothing after it; a chunked body, whose end only a parser of the body
 * would find, is refused. */
#include "net/http_request.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#define MAX_HEADERS 100

static int fail(struct http_error *e, int status, const char *reason)
{
	e->status = status;
	e->reason = reason;
	return -1;
}

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool all_tchars(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return n > 0;
}

/* Finds the end of the head: the empty line. Bare LF line ends are
 * accepted, as RFC 9112 allows. */
static const char *find_head_end(const char *buf, size_t len, size_t *head_len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n') {
			*head_len = i + 2;
			return buf + i;
		}
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n') {
			*head_len = i + 3;
			return buf + i;
		}
	}
	return NULL;
}

/* strcspn for a buffer that is not NUL-terminated. */
static size_t span_until(const char *s, size_t n, const char *stop)
{
	size_t i = 0;
	while (i < n && !strchr(stop, s[i]))
		i++;
	return i;
}

/* Splits "host:port" or "[v6]:port". The port is required when need_port. */
static int split_authority(const char *a, size_t n, bool need_port, uint16_t default_port,
			   char **host, uint16_t *port)
{
	const char *colon = NULL;
	size_t host_start = 0, host_len;
	if (n && a[0] == '[') {
		const char *close = memchr(a, ']', n);
		if (!close)
			return -1;
		host_start = 1;
		host_len = (size_t)(close - a) - 1;
		if ((size_t)(close - a) + 1 < n) {
			if (close[1] != ':')
				return -1;
			colon = close + 1;
		}
	} else {
		colon = memrchr(a, ':', n);
		host_len = colon ? (size_t)(colon - a) : n;
		if (colon && memchr(a, ':', host_len))
			return -1; /* an unbracketed IPv6 address */
	}
	if (host_len == 0 || memchr(a, '@', n))
		return -1;
	if (colon) {
		size_t plen = n - (size_t)(colon + 1 - a);
		unsigned long v = 0;
		if (plen == 0 || plen > 5)
			return -1;
		for (size_t i = 0; i < plen; i++) {
			char c = colon[1 + i];
			if (c < '0' || c > '9')
				return -1;
			v = v * 10 + (unsigned long)(c - '0');
		}
		if (v == 0 || v > 65535)
			return -1;
		*port = (uint16_t)v;
	} else if (need_port) {
		return -1;
	} else {
		*port = default_port;
	}
	*host = xstrndup(a + host_start, host_len);
	return 0;
}

static bool header_is(const char *name, size_t n, const char *want)
{
	return strlen(want) == n && !strncasecmp(name, want, n);
}

/* A Content-Length value: digits only, optional surrounding blanks. */
static bool parse_length(const char *v, size_t n, uint64_t *out)
{
	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (!n || n > 15)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return true;
}

static bool drop_header(const char *name, size_t n)
{
	static const char *const hop[] = {"connection", "proxy-connection", "proxy-authorization",
					  "keep-alive", "host"};
	for (size_t i = 0; i < ARRAY_SIZE(hop); i++)
		if (strlen(hop[i]) == n && !strncasecmp(name, hop[i], n))
			return true;
	return false;
}

/* The request line and the end of the head, checked alike for the proxy
 * and the credential endpoint. Returns 1, 0 (incomplete) or -1. */
struct request_line {
	size_t head_len;
	const char *method, *target, *eol;
	size_t method_len, target_len;
};

static int parse_request_line(const char *buf, size_t len, struct request_line *rl,
			      struct http_error *e)
{
	size_t head_len = 0;
	if (!find_head_end(buf, len, &head_len)) {
		if (len < HTTP_HEAD_MAX)
			return memchr(buf, '\0', len)
				   ? fail(e, 400, "the request contains a NUL byte")
				   : 0;
		return memchr(buf, '\n', len)
			   ? fail(e, 431, "the request head is larger than 16 KiB")
			   : fail(e, 414, "the request line is longer than 16 KiB");
	}
	if (head_len > HTTP_HEAD_MAX)
		return fail(e, 431, "the request head is larger than 16 KiB");
	if (memchr(buf, '\0', head_len))
		return fail(e, 400, "the request contains a NUL byte");

	/* Request line: METHOD SP TARGET SP HTTP/1.x */
	const char *line = buf;
	const char *eol = memchr(line, '\n', head_len);
	size_t line_len = (size_t)(eol - line);
	if (line_len && line[line_len - 1] == '\r')
		line_len--;
	const char *sp1 = memchr(line, ' ', line_len);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', line_len - (size_t)(sp1 + 1 - line)) : NULL;
	if (!sp1 || !sp2)
		return fail(e, 400, "malformed request line (expected METHOD TARGET HTTP/1.1)");
	size_t method_len = (size_t)(sp1 - line);
	const char *target = sp1 + 1;
	size_t target_len = (size_t)(sp2 - target);
	const char *version = sp2 + 1;
	size_t version_len = line_len - (size_t)(version - line);
	if (!all_tchars(line, method_len))
		return fail(e, 400, "malformed request method");
	for (size_t i = 0; i < target_len; i++)
		if ((unsigned char)target[i] <= ' ' || target[i] == 0x7f)
			return fail(e, 400, "malformed request target");
	if (target_len == 0)
		return fail(e, 400, "empty request target");
	if (version_len != 8 || strncmp(version, "HTTP/1.", 7) ||
	    (version[7] != '0' && version[7] != '1'))
		return fail(e, 505, "only HTTP/1.0 and HTTP/1.1 are supported");
	*rl = (struct request_line){
	    .head_len = head_len,
	    .method = line,
	    .method_len = method_len,
	    .target = target,
	    .target_len = target_len,
	    .eol = eol,
	};
	return 1;
}

/* One header field, p[0..n) without its line end: a name of token
 * characters, a colon, a value without control characters. A line that
 * starts with a blank (obs-fold) is refused: a continuation would be read
 * one way here and another way by the server. */
static int check_field(const char *p, size_t n, struct http_error *e)
{
	const char *colon = memchr(p, ':', n);
	if (p[0] == ' ' || p[0] == '\t' || !colon || !all_tchars(p, (size_t)(colon - p)))
		return fail(e, 400, "malformed header field");
	for (const char *c = colon + 1; c < p + n; c++)
		if (((unsigned char)*c < ' ' && *c != '\t') || *c == 0x7f)
			return fail(e, 400, "control character in a header field");
	return 0;
}

/* The next header field from *p, or 0 at the empty line. */
static size_t next_field(const char **p, const char *end, const char **field)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t n = (size_t)(nl - *p);
	*field = *p;
	*p = nl + 1;
	if (n && (*field)[n - 1] == '\r')
		n--;
	return n;
}

int http_request_parse(const char *buf, size_t len, struct http_request *req, struct http_error *e)
{
	*req = (struct http_request){0};
	struct request_line rl;
	int lr = parse_request_line(buf, len, &rl, e);
	if (lr <= 0)
		return lr;
	const char *line = rl.method, *target = rl.target;
	size_t method_len = rl.method_len, target_len = rl.target_len;

	bool connect = method_len == 7 && !strncmp(line, "CONNECT", 7);
	const char *path = NULL;
	size_t path_len = 0;
	if (connect) {
		req->kind = HTTP_CONNECT;
		if (split_authority(target, target_len, true, 0, &req->host, &req->port) < 0)
			return fail(e, 400, "CONNECT needs host:port");
	} else {
		req->kind = HTTP_FORWARD;
		if (target_len < 7 || strncasecmp(target, "http://", 7)) {
			http_request_release(req);
			if (target_len >= 8 && !strncasecmp(target, "https://", 8))
				return fail(e, 400, "https through this proxy needs CONNECT");
			return fail(e, 400,
				    "this is a proxy: send absolute-form requests "
				    "(GET http://host/path) or CONNECT host:port");
		}
		const char *auth = target + 7;
		size_t rest = target_len - 7;
		size_t auth_len = span_until(auth, rest, "/?#");
		if (split_authority(auth, auth_len, false, 80, &req->host, &req->port) < 0)
			return fail(e, 400, "malformed host in the request URL");
		path = auth + auth_len;
		path_len = rest - auth_len;
	}

	/* Header fields. */
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	if (!connect) {
		strbuf_add(&out, line, method_len);
		strbuf_addch(&out, ' ');
		if (path_len == 0 || path[0] != '/')
			strbuf_addch(&out, '/');
		/* A fragment is never sent to a server. */
		strbuf_add(&out, path, span_until(path, path_len, "#"));
		strbuf_addstr(&out, " HTTP/1.1\r\n");
		const char *h = req->host;
		bool v6 = strchr(h, ':') != NULL;
		if (req->port == 80)
			strbuf_addf(&out, "Host: %s%s%s\r\n", v6 ? "[" : "", h, v6 ? "]" : "");
		else
			strbuf_addf(&out, "Host: %s%s%s:%u\r\n", v6 ? "[" : "", h, v6 ? "]" : "",
				    req->port);
	}
	const char *p = rl.eol + 1;
	const char *end = buf + rl.head_len;
	unsigned count = 0;
	bool have_length = false;
	for (;;) {
		const char *field;
		size_t n = next_field(&p, end, &field);
		if (n == 0)
			break;
		if (++count > MAX_HEADERS) {
			http_request_release(req);
			return fail(e, 431, "more than 100 header fields");
		}
		if (check_field(field, n, e) < 0) {
			http_request_release(req);
			return -1;
		}
		const char *colon = memchr(field, ':', n);
		size_t name_len = (size_t)(colon - field);
		if (!connect && header_is(field, name_len, "transfer-encoding")) {
			http_request_release(req);
			return fail(e, 411,
				    "plain-http request bodies need a Content-Length; chunked "
				    "uploads are not forwarded (use https)");
		}
		if (!connect && header_is(field, name_len, "content-length")) {
			uint64_t v = 0;
			if (!parse_length(colon + 1, (size_t)(field + n - colon - 1), &v) ||
			    (have_length && v != req->body_len)) {
				http_request_release(req);
				return fail(e, 400, "malformed or conflicting Content-Length");
			}
			have_length = true;
			req->body_len = v;
		}
		if (!connect && !drop_header(field, name_len)) {
			strbuf_add(&out, field, n);
			strbuf_addstr(&out, "\r\n");
		}
	}
	if (!connect) {
		strbuf_addstr(&out, "Connection: close\r\n\r\n");
		req->forward_len = out.len;
		req->forward_head = strbuf_detach(&out);
	}
	req->head_len = rl.head_len;
	return 1;
}

/* Request headers the credential endpoint never passes on: the agent's own
 * credentials (whatever it holds is a placeholder, and a header it made up
 * must not reach the upstream beside the real one), hop-by-hop fields,
 * and the framing, which is written anew. */
static bool origin_drops(const char *name, size_t n, const char *also)
{
	static const char *const drop[] = {
	    "host",
	    "connection",
	    "keep-alive",
	    "proxy-authorization",
	    "proxy-connection",
	    "authorization",
	    "x-api-key",
	    "api-key",
	    "x-goog-api-key",
	    "cookie",
	    "te",
	    "upgrade",
	    "expect",
	    "content-length",
	    "trailer",
	};
	for (size_t i = 0; i < ARRAY_SIZE(drop); i++)
		if (header_is(name, n, drop[i]))
			return true;
	if (n >= 6 && !strncasecmp(name, "proxy-", 6))
		return true;
	return also && header_is(name, n, also);
}

int http_request_parse_origin(const char *buf, size_t len, const struct http_origin_rewrite *rw,
			      struct http_request *req, struct http_error *e)
{
	*req = (struct http_request){.kind = HTTP_FORWARD};
	struct request_line rl;
	int lr = parse_request_line(buf, len, &rl, e);
	if (lr <= 0)
		return lr;
	/* Origin-form only: an absolute URL, an authority (CONNECT) or "*"
	 * could name another server, and this endpoint has one upstream. */
	if (rl.target[0] != '/')
		return fail(e, 400,
			    "this endpoint takes origin-form requests (POST /v1/path); it always "
			    "goes to its one upstream");
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	strbuf_add(&out, rl.method, rl.method_len);
	strbuf_addch(&out, ' ');
	strbuf_add(&out, rl.target, span_until(rl.target, rl.target_len, "#"));
	strbuf_addf(&out, " HTTP/1.1\r\nHost: %s\r\n", rw->host);
	const char *p = rl.eol + 1;
	const char *end = buf + rl.head_len;
	unsigned count = 0;
	bool have_length = false;
	for (;;) {
		const char *field;
		size_t n = next_field(&p, end, &field);
		if (n == 0)
			break;
		if (++count > MAX_HEADERS)
			return fail(e, 431, "more than 100 header fields");
		if (check_field(field, n, e) < 0)
			return -1;
		const char *colon = memchr(field, ':', n);
		size_t name_len = (size_t)(colon - field);
		/* The body's end must be known here, so that nothing after
		 * it reaches the upstream as a second request. */
		if (header_is(field, name_len, "transfer-encoding"))
			return fail(e, 411,
				    "request bodies need a Content-Length; chunked uploads are "
				    "not forwarded");
		if (header_is(field, name_len, "content-length")) {
			uint64_t v = 0;
			if (!parse_length(colon + 1, (size_t)(field + n - colon - 1), &v) ||
			    (have_length && v != req->body_len))
				return fail(e, 400, "malformed or conflicting Content-Length");
			have_length = true;
			req->body_len = v;
		}
		if (!origin_drops(field, name_len, rw->drop_header)) {
			strbuf_add(&out, field, n);
			strbuf_addstr(&out, "\r\n");
		}
	}
	if (have_length)
		strbuf_addf(&out, "Content-Length: %llu\r\n", (unsigned long long)req->body_len);
	if (rw->add_header)
		strbuf_addf(&out, "%s\r\n", rw->add_header);
	strbuf_addstr(&out, "Connection: close\r\n\r\n");
	req->host = xstrdup(rw->host);
	req->port = 443;
	req->head_len = rl.head_len;
	req->forward_len = out.len;
	req->forward_head = strbuf_detach(&out);
	return 1;
}

int http_response_close(const char *buf, size_t len, struct http_response *resp)
{
	*resp = (struct http_response){0};
	size_t head_len = 0;
	if (!find_head_end(buf, len, &head_len))
		return len < HTTP_RESPONSE_HEAD_MAX ? 0 : -1;
	if (head_len > HTTP_RESPONSE_HEAD_MAX)
		return -1;
	const char *eol = memchr(buf, '\n', head_len);
	size_t line_len = (size_t)(eol - buf);
	if (line_len && buf[line_len - 1] == '\r')
		line_len--;
	/* HTTP/1.x NNN[ reason] */
	if (line_len < 12 || strncmp(buf, "HTTP/1.", 7) || (buf[7] != '0' && buf[7] != '1') ||
	    buf[8] != ' ' || buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' ||
	    buf[11] < '0' || buf[11] > '9' || (line_len > 12 && buf[12] != ' '))
		return -1;
	for (size_t i = 0; i < line_len; i++)
		if (((unsigned char)buf[i] < ' ' && buf[i] != '\t') || buf[i] == 0x7f)
			return -1;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	strbuf_add(&out, buf, line_len);
	strbuf_addstr(&out, "\r\n");
	const char *p = eol + 1;
	const char *end = buf + head_len;
	for (;;) {
		const char *field;
		size_t n = next_field(&p, end, &field);
		if (n == 0)
			break;
		struct http_error e;
		if (check_field(field, n, &e) < 0)
			return -1;
		size_t name_len = (size_t)((const char *)memchr(field, ':', n) - field);
		if (header_is(field, name_len, "connection") ||
		    header_is(field, name_len, "keep-alive") ||
		    header_is(field, name_len, "proxy-connection"))
			continue;
		strbuf_add(&out, field, n);
		strbuf_addstr(&out, "\r\n");
	}
	strbuf_addstr(&out, "Connection: close\r\n\r\n");
	resp->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	resp->head_len = head_len;
	resp->len = out.len;
	resp->head = strbuf_detach(&out);
	return 1;
}

void http_request_release(struct http_request *req)
{
	free(req->host);
	free(req->forward_head);
	*req = (struct http_request){0};
}

const char *http_status_text(int status)
{
	switch (status) {
	case 200:
		return "Connection established";
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 408:
		return "Request Timeout";
	case 411:
		return "Length Required";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Error";
}
