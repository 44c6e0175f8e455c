/* Unit tests for the executor API's framing (serve/rpc.c), its output ring
 * (serve/ring.c) and base64 (base/base64.c): each request line decodes to
 * what it says or to the right error code; parameters are read with their
 * bounds; the ring keeps the newest chunks, numbered without gaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base64.h"
#include "base/cleanup.h"
#include "serve/ring.h"
#include "base/strbuf.h"
#include "serve/rpc.h"
#include "unit.h"

static void rpc_decode_gives_the_right_code_for_each_line(void **state)
{
	static const struct {
		const char *line;
		int code; /* 0: decodes */
		bool has_id;
	} cases[] = {
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", 0, true},
	    {"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"a\",\"params\":{}}  \r", 0, true},
	    {"{\"jsonrpc\":\"2.0\",\"method\":\"note\"}", 0, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"a\"}", 0, true},
	    {"", RPC_PARSE_ERROR, false},
	    {"{", RPC_PARSE_ERROR, false},
	    {"{\"jsonrpc\":\"2.0\"} x", RPC_PARSE_ERROR, false},
	    {"{} {}", RPC_PARSE_ERROR, false},
	    {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}]", RPC_INVALID_REQUEST, false},
	    {"7", RPC_INVALID_REQUEST, false},
	    {"{\"id\":1,\"method\":\"a\"}", RPC_INVALID_REQUEST, true},
	    {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}", RPC_INVALID_REQUEST, true},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1}", RPC_INVALID_REQUEST, true},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", RPC_INVALID_REQUEST, true},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", RPC_INVALID_REQUEST, true},
	    {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"a\"}", RPC_INVALID_REQUEST, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"a\"}", RPC_INVALID_REQUEST, false},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":[1]}", RPC_INVALID_REQUEST,
	     true},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rpc_request req;
		int code = -1;
		_cleanup_error_ struct error err = ERROR_INIT;
		int r = rpc_decode(cases[i].line, strlen(cases[i].line), &req, &code, &err);
		if ((r == 0) != (cases[i].code == 0) || (r < 0 && code != cases[i].code))
			unit_fail("%s: got %d (code %d), wanted code %d", cases[i].line, r, code,
				  cases[i].code);
		if (req.has_id != cases[i].has_id)
			unit_fail("%s: id %s", cases[i].line, req.id ? "read" : "not read");
		if (r == 0 && !json_object_is_type(req.params, json_type_object))
			unit_fail("%s: params not an object", cases[i].line);
		rpc_request_release(&req);
	}
}

static void rpc_decode_refuses_a_nul_byte_inside_the_line(void **state)
{
	static const char line[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\0garbage";
	struct rpc_request req;
	int code;
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(rpc_decode(line, sizeof(line) - 1, &req, &code, &err), -1);
	assert_int_equal(code, RPC_PARSE_ERROR);
	rpc_request_release(&req);
}

static void rpc_decode_refuses_a_line_of_too_many_values(void **state)
{
	/* 300,000 empty objects: small text, a GiB of json-c's. */
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"x\":[");
	for (int i = 0; i < 300000; i++)
		strbuf_addstr(&sb, "{},");
	strbuf_addstr(&sb, "{}]}}");
	struct rpc_request req;
	int code;
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(rpc_decode(sb.buf, sb.len, &req, &code, &err), -1);
	assert_int_equal(err.kind, ERROR_LIMIT);
	rpc_request_release(&req);
	strbuf_release(&sb);
}

static void rpc_param_int_holds_its_bounds(void **state)
{
	struct json_object *p = json_tokener_parse("{\"a\":5,\"b\":-1,\"c\":2.5,\"d\":\"7\",\"e\":"
						   "1e300,\"f\":99999999999999999999,\"g\":3.0}");
	static const struct {
		const char *name;
		bool ok;
		int64_t value;
	} cases[] = {{"a", true, 5},  {"b", false, 0}, {"c", false, 0}, {"d", false, 0},
		     {"e", false, 0}, {"f", false, 0}, {"g", true, 3},	{"missing", true, 42}};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int64_t v = 42;
		_cleanup_error_ struct error err = ERROR_INIT;
		int r = rpc_param_int(p, cases[i].name, false, 0, 1000, &v, &err);
		if ((r == 0) != cases[i].ok || (r == 0 && v != cases[i].value))
			unit_fail("%s: r %d v %lld", cases[i].name, r, (long long)v);
		if (r < 0 && (err.kind != ERROR_USAGE || !strstr(err.msg, cases[i].name)))
			unit_fail("%s: the error does not name the parameter", cases[i].name);
	}
	json_object_put(p);
}

static void rpc_param_argv_refuses_empty_and_non_strings(void **state)
{
	static const char *const bad[] = {"{\"argv\":[]}", "{\"argv\":[1]}", "{\"argv\":\"sh\"}",
					  "{\"argv\":[\"a\\u0000b\"]}"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct json_object *p = json_tokener_parse(bad[i]);
		struct strv v = STRV_INIT;
		_cleanup_error_ struct error err = ERROR_INIT;
		if (rpc_param_argv(p, "argv", true, &v, &err) == 0)
			unit_fail("accepted %s", bad[i]);
		strv_release(&v);
		json_object_put(p);
	}
}

static void ring_keeps_the_newest_chunks_numbered_without_gaps(void **state)
{
	struct ring r;
	ring_init(&r, 10);
	assert_int_equal(ring_first_seq(&r), 1);
	for (int i = 0; i < 7; i++)
		assert_int_equal(ring_push(&r, i % 3, "abcd", 4), (uint64_t)i + 1);
	/* 10 bytes hold two chunks of 4: the 6th and 7th. */
	assert_int_equal(ring_first_seq(&r), 6);
	assert_null(ring_get(&r, 5));
	assert_null(ring_get(&r, 8));
	const struct ring_chunk *c = ring_get(&r, 7);
	assert_non_null(c);
	assert_int_equal(c->seq, 7);
	assert_int_equal(c->stream, 0);
	assert_memory_equal(c->data, "abcd", 4);
	/* One chunk larger than the ring is kept whole, alone. */
	assert_int_equal(ring_push(&r, 1, "0123456789abcdef", 16), 8);
	assert_int_equal(ring_first_seq(&r), 8);
	assert_int_equal(r.bytes, 16);
	for (int i = 0; i < 100; i++)
		ring_push(&r, 0, "x", 1);
	assert_int_equal(ring_first_seq(&r), 99);
	assert_int_equal(r.next_seq, 109);
	ring_release(&r);
}

static void base64_round_trips_and_refuses_what_is_not_base64(void **state)
{
	static const struct {
		const char *text, *plain;
	} good[] = {
	    {"", ""}, {"Zg==", "f"}, {"Zm8=", "fo"}, {"Zm9v", "foo"}, {"Zm9vYmFy", "foobar"}};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		size_t n;
		_cleanup_free_ unsigned char *d =
		    base64_decode(good[i].text, strlen(good[i].text), &n);
		assert_non_null(d);
		assert_int_equal(n, strlen(good[i].plain));
		assert_memory_equal(d, good[i].plain, n);
		_cleanup_free_ char *e = base64_encode(good[i].plain, n, NULL);
		assert_string_equal(e, good[i].text);
	}
	static const char *const bad[] = {"Zg",	  "Zg=",      "Z===", "Zm9v\n",
					  "Zm 9", "Zm9v====", "Z=g="};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		size_t n;
		unsigned char *d = base64_decode(bad[i], strlen(bad[i]), &n);
		if (d)
			unit_fail("accepted %s", bad[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rpc_decode_gives_the_right_code_for_each_line),
	    cmocka_unit_test(rpc_decode_refuses_a_nul_byte_inside_the_line),
	    cmocka_unit_test(rpc_decode_refuses_a_line_of_too_many_values),
	    cmocka_unit_test(rpc_param_int_holds_its_bounds),
	    cmocka_unit_test(rpc_param_argv_refuses_empty_and_non_strings),
	    cmocka_unit_test(ring_keeps_the_newest_chunks_numbered_without_gaps),
	    cmocka_unit_test(base64_round_trips_and_refuses_what_is_not_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
