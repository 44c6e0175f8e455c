/* Unit tests for what the proxy reads from inside the sandbox: HTTP request
 * heads (CONNECT and absolute-form), including their rewriting for the
 * origin server, and SOCKS5 greetings and requests, complete, incomplete
 * and malformed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "net/http_request.h"
#include "net/socks5.h"
#include "unit.h"

static void http_request_parse_accepts_connect_and_absolute_form(void **state)
{
	static const struct {
		const char *text;
		enum http_kind kind;
		const char *host;
		unsigned port;
		const char *forward; /* the rewritten head, for HTTP_FORWARD */
	} cases[] = {
	    {"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", HTTP_CONNECT,
	     "example.com", 443, NULL},
	    {"CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", HTTP_CONNECT, "2001:db8::1", 8443,
	     NULL},
	    {"CONNECT a.test:1 HTTP/1.0\n\n", HTTP_CONNECT, "a.test", 1, NULL},
	    {"GET http://example.com/a?b=c HTTP/1.1\r\nHost: evil.example\r\nAccept: */*\r\n"
	     "Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\n\r\n",
	     HTTP_FORWARD, "example.com", 80,
	     "GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: "
	     "close\r\n\r\n"},
	    {"POST HTTP://Example.com:8080 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", HTTP_FORWARD,
	     "Example.com", 8080,
	     "POST / HTTP/1.1\r\nHost: Example.com:8080\r\nContent-Length: 3\r\nConnection: "
	     "close\r\n\r\n"},
	    {"GET http://[::1]:81/x#frag HTTP/1.1\r\n\r\n", HTTP_FORWARD, "::1", 81,
	     "GET /x HTTP/1.1\r\nHost: [::1]:81\r\nConnection: close\r\n\r\n"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct http_request req;
		struct http_error e = {0};
		size_t len = strlen(cases[i].text);
		int r = http_request_parse(cases[i].text, len, &req, &e);
		if (r != 1)
			unit_fail("case %zu: result %d (%d %s)", i, r, e.status,
				  e.reason ? e.reason : "");
		if (req.kind != cases[i].kind || strcmp(req.host, cases[i].host) ||
		    req.port != cases[i].port)
			unit_fail("case %zu: got %d %s:%u", i, req.kind, req.host, req.port);
		if (cases[i].forward &&
		    (req.forward_len != strlen(cases[i].forward) ||
		     memcmp(req.forward_head, cases[i].forward, req.forward_len)))
			unit_fail("case %zu: forward head <%.*s>", i, (int)req.forward_len,
				  req.forward_head);
		if (cases[i].kind == HTTP_FORWARD && strstr(cases[i].text, "abc"))
			assert_int_equal(req.head_len, len - 3);
		http_request_release(&req);
	}
}

static void http_request_parse_refuses_bad_heads_with_a_status(void **state)
{
	static char huge_line[HTTP_HEAD_MAX + 10];
	static char huge_head[HTTP_HEAD_MAX + 10];
	memset(huge_line, 'a', sizeof(huge_line) - 1);
	memcpy(huge_head, "GET http://a/ HTTP/1.1\r\nX: ", 27);
	memset(huge_head + 27, 'b', sizeof(huge_head) - 28);
	static const struct {
		const char *text;
		int status; /* 0: incomplete */
		const char *reason;
	} cases[] = {
	    {"CONNECT example.com:443 HTTP/1.1\r\n", 0, NULL},
	    {"GET", 0, NULL},
	    {"garbage\r\n\r\n", 400, "malformed request line"},
	    {"GET /path HTTP/1.1\r\n\r\n", 400, "this is a proxy"},
	    {"GET https://a.test/ HTTP/1.1\r\n\r\n", 400, "https through this proxy needs CONNECT"},
	    {"CONNECT example.com HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port"},
	    {"CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port"},
	    {"CONNECT example.com:65536 HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port"},
	    {"CONNECT ::1:443 HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port"},
	    {"CONNECT user@a.test:443 HTTP/1.1\r\n\r\n", 400, "CONNECT needs host:port"},
	    {"GET http://a.test/ HTTP/2.0\r\n\r\n", 505, "only HTTP/1.0 and HTTP/1.1"},
	    {"GET http://a.test/ HTTP/1.1\r\n folded\r\n\r\n", 400, "malformed header field"},
	    {"GET http://a.test/ HTTP/1.1\r\nNo colon\r\n\r\n", 400, "malformed header field"},
	    {"GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n", 400, "control character"},
	    {"G(T http://a.test/ HTTP/1.1\r\n\r\n", 400, "malformed request method"},
	    {"GET http://a.test/\x7f HTTP/1.1\r\n\r\n", 400, "malformed request target"},
	    {"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411,
	     "plain-http request bodies need a Content-Length"},
	    {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400,
	     "malformed or conflicting Content-Length"},
	    {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400,
	     "malformed or conflicting Content-Length"},
	    {"POST http://a.test/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400,
	     "malformed or conflicting Content-Length"},
	    {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 1234567890123456\r\n\r\n", 400,
	     "malformed or conflicting Content-Length"},
	    {huge_line, 414, "the request line is longer than 16 KiB"},
	    {huge_head, 431, "the request head is larger than 16 KiB"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct http_request req;
		struct http_error e = {0};
		int r = http_request_parse(cases[i].text, strlen(cases[i].text), &req, &e);
		if (cases[i].status == 0) {
			if (r != 0)
				unit_fail("case %zu: expected incomplete, got %d", i, r);
			continue;
		}
		if (r != -1 || e.status != cases[i].status)
			unit_fail("case %zu: result %d status %d (%s)", i, r, e.status,
				  e.reason ? e.reason : "");
		unit_assert_starts_with(e.reason, cases[i].reason, "case %zu", i);
	}
	struct http_request req;
	struct http_error e = {0};
	assert_int_equal(http_request_parse("GET http://a/ HTTP/1.1\r\n\0\r\n\r\n", 29, &req, &e),
			 -1);
	assert_int_equal(e.status, 400);
}

/* The proxy forwards the head and exactly this many bytes: a pipelined
 * request after them must not count as body. */
static void http_request_parse_reads_the_body_length(void **state)
{
	static const struct {
		const char *text;
		uint64_t body_len;
	} cases[] = {
	    {"GET http://a.test/ HTTP/1.1\r\n\r\nGET http://b.test/ HTTP/1.1\r\n\r\n", 0},
	    {"POST http://a.test/ HTTP/1.1\r\ncontent-length:  5 \r\n\r\nhello", 5},
	    {"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 5},
	    /* A tunnel's bytes are not HTTP: no length applies. */
	    {"CONNECT a.test:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 0},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct http_request req;
		struct http_error e = {0};
		int r = http_request_parse(cases[i].text, strlen(cases[i].text), &req, &e);
		if (r != 1 || req.body_len != cases[i].body_len)
			unit_fail("case %zu: result %d body %llu (%s)", i, r,
				  (unsigned long long)req.body_len, e.reason ? e.reason : "");
		http_request_release(&req);
	}
}

static void socks5_parses_greetings_and_requests(void **state)
{
	int no_auth = -1;
	assert_int_equal(socks5_parse_greeting((const uint8_t *)"", 0, &no_auth), 0);
	assert_int_equal(socks5_parse_greeting((const uint8_t *)"\x05", 1, &no_auth), 0);
	assert_int_equal(socks5_parse_greeting((const uint8_t *)"\x05\x02\x02", 3, &no_auth), 0);
	assert_int_equal(socks5_parse_greeting((const uint8_t *)"\x05\x02\x02\x00", 4, &no_auth),
			 4);
	assert_int_equal(no_auth, 1);
	assert_int_equal(socks5_parse_greeting((const uint8_t *)"\x05\x01\x02", 3, &no_auth), 3);
	assert_int_equal(no_auth, 0);
	assert_int_equal(socks5_parse_greeting((const uint8_t *)"\x04\x01\x00", 3, &no_auth), -1);
	assert_int_equal(socks5_parse_greeting((const uint8_t *)"\x05\x00", 2, &no_auth), -1);

	static const struct {
		const char *bytes;
		size_t len;
		int result; /* > 0: the length taken */
		const char *host;
		unsigned port;
		int reply;
	} cases[] = {
	    {"\x05\x01\x00\x03\x0b"
	     "example.com\x01\xbb",
	     18, 18, "example.com", 443, 0},
	    {"\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50", 10, 10, "127.0.0.1", 80, 0},
	    {"\x05\x01\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
	     "\x00\x16",
	     22, 22, "::1", 22, 0},
	    {"\x05\x01\x00\x03\x0b"
	     "example",
	     12, 0, NULL, 0, 0},
	    {"\x05\x01\x00", 3, 0, NULL, 0, 0},
	    {"\x05\x02\x00\x01\x01\x02\x03\x04\x00\x50", 10, -1, NULL, 0,
	     SOCKS5_REPLY_COMMAND_UNSUPPORTED},
	    {"\x05\x03\x00\x01\x01\x02\x03\x04\x00\x50", 10, -1, NULL, 0,
	     SOCKS5_REPLY_COMMAND_UNSUPPORTED},
	    {"\x05\x01\x00\x09\x01\x02", 6, -1, NULL, 0, SOCKS5_REPLY_ADDRESS_UNSUPPORTED},
	    {"\x04\x01\x00\x01\x01\x02\x03\x04\x00\x50", 10, -1, NULL, 0, SOCKS5_REPLY_FAILURE},
	    {"\x05\x01\x00\x03\x00\x00\x50", 7, -1, NULL, 0, SOCKS5_REPLY_FAILURE},
	    {"\x05\x01\x00\x03\x03"
	     "a\0b\x00\x50",
	     10, -1, NULL, 0, SOCKS5_REPLY_FAILURE},
	    {"\x05\x01\x00\x01\x01\x02\x03\x04\x00\x00", 10, -1, NULL, 0, SOCKS5_REPLY_FAILURE},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct socks5_request req;
		int reply = -1;
		int r = socks5_parse_request((const uint8_t *)cases[i].bytes, cases[i].len, &req,
					     &reply);
		if (r != cases[i].result)
			unit_fail("case %zu: result %d, expected %d", i, r, cases[i].result);
		if (r > 0 && (strcmp(req.host, cases[i].host) || req.port != cases[i].port))
			unit_fail("case %zu: got %s:%u", i, req.host, req.port);
		if (r < 0 && reply != cases[i].reply)
			unit_fail("case %zu: reply %d, expected %d", i, reply, cases[i].reply);
	}
	uint8_t out[10];
	socks5_reply(SOCKS5_REPLY_NOT_ALLOWED, out);
	assert_memory_equal(out, "\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(http_request_parse_accepts_connect_and_absolute_form),
	    cmocka_unit_test(http_request_parse_refuses_bad_heads_with_a_status),
	    cmocka_unit_test(http_request_parse_reads_the_body_length),
	    cmocka_unit_test(socks5_parses_greetings_and_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
