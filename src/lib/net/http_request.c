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

int http_request_parse(const char *buf, size_t len, struct http_request *req, struct http_error *e)
{
	*req = (struct http_request){0};
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
	const char *p = eol + 1;
	const char *end = buf + head_len;
	unsigned count = 0;
	bool have_length = false;
	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)(nl - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (n == 0)
			break;
		if (++count > MAX_HEADERS) {
			http_request_release(req);
			return fail(e, 431, "more than 100 header fields");
		}
		const char *colon = memchr(p, ':', n);
		if (p[0] == ' ' || p[0] == '\t' || !colon || !all_tchars(p, (size_t)(colon - p))) {
			http_request_release(req);
			return fail(e, 400, "malformed header field");
		}
		for (const char *c = colon + 1; c < p + n; c++)
			if (((unsigned char)*c < ' ' && *c != '\t') || *c == 0x7f) {
				http_request_release(req);
				return fail(e, 400, "control character in a header field");
			}
		size_t name_len = (size_t)(colon - p);
		if (!connect && header_is(p, name_len, "transfer-encoding")) {
			http_request_release(req);
			return fail(e, 411,
				    "plain-http request bodies need a Content-Length; chunked "
				    "uploads are not forwarded (use https)");
		}
		if (!connect && header_is(p, name_len, "content-length")) {
			uint64_t v = 0;
			if (!parse_length(colon + 1, (size_t)(p + n - colon - 1), &v) ||
			    (have_length && v != req->body_len)) {
				http_request_release(req);
				return fail(e, 400, "malformed or conflicting Content-Length");
			}
			have_length = true;
			req->body_len = v;
		}
		if (!connect && !drop_header(p, name_len)) {
			strbuf_add(&out, p, n);
			strbuf_addstr(&out, "\r\n");
		}
		p = nl + 1;
	}
	if (!connect) {
		strbuf_addstr(&out, "Connection: close\r\n\r\n");
		req->forward_len = out.len;
		req->forward_head = strbuf_detach(&out);
	}
	req->head_len = head_len;
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
