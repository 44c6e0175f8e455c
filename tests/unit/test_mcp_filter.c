/* Unit tests for the MCP bridge's filter (serve/mcp_filter.c): a tools/call
 * of a tool not allowed is answered here and never forwarded, whatever its
 * spelling; batches and lines that are not one object end the bridge;
 * tools lists lose the tools not allowed; a request id cannot be reused
 * while pending. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "serve/mcp_filter.h"
#include "unit.h"

static const char *const allow_echo[] = {"echo", NULL};

static void with_filter(struct mcp_filter *f, struct strv *allow)
{
	*allow = (struct strv)STRV_INIT;
	for (size_t i = 0; allow_echo[i]; i++)
		strv_push(allow, allow_echo[i]);
	mcp_filter_init(f, "demo", allow);
}

static void mcp_filter_client_decides_each_line(void **state)
{
	static const struct {
		const char *line;
		enum mcp_verdict verdict;
		bool is_call, allowed;
		const char *out_has; /* in what is sent, or NULL */
	} cases[] = {
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", MCP_FORWARD,
	     false, false, "\"initialize\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
	     "call\",\"params\":{\"name\":\"echo\"}}",
	     MCP_FORWARD, true, true, "\"echo\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"secret\"}}",
	     MCP_REPLY, true, false, "not allowed for server demo"},
	    /* Spellings of "echo" that are not it. */
	    {"{\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"Echo\"}}", MCP_REPLY, true,
	     false, "-32602"},
	    {"{\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo \"}}", MCP_REPLY,
	     true, false, "-32602"},
	    {"{\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\\u0000\"}}",
	     MCP_REPLY, true, false, "-32602"},
	    {"{\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"\\u0435cho\"}}", MCP_REPLY,
	     true, false, "-32602"},
	    {"{\"id\":8,\"method\":\"tools/call\",\"params\":{}}", MCP_REPLY, true, false,
	     "params.name"},
	    {"{\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":[\"echo\"]}}", MCP_REPLY,
	     true, false, "params.name"},
	    /* Duplicate keys: we decide on the value we forward. */
	    {"{\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"name\":"
	     "\"secret\"}}",
	     MCP_REPLY, true, false, "secret"},
	    /* A notification refused gets no answer. */
	    {"{\"method\":\"tools/call\",\"params\":{\"name\":\"secret\"}}", MCP_DROP, true, false,
	     NULL},
	    /* Batches, text, trailing text, odd ids. */
	    {"[{\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"secret\"}}]", MCP_CLOSE,
	     false, false, NULL},
	    {"hello", MCP_CLOSE, false, false, NULL},
	    {"{\"id\":12,\"method\":\"ping\"} {\"id\":13,\"method\":\"tools/call\"}", MCP_CLOSE,
	     false, false, NULL},
	    {"{\"id\":{\"a\":1},\"method\":\"ping\"}", MCP_CLOSE, false, false, NULL},
	    {"{\"id\":14,\"method\":1}", MCP_CLOSE, false, false, NULL},
	    {"", MCP_CLOSE, false, false, NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct mcp_filter f;
		struct strv allow;
		with_filter(&f, &allow);
		struct strbuf out = STRBUF_INIT;
		struct mcp_call call;
		enum mcp_verdict v =
		    mcp_filter_client(&f, cases[i].line, strlen(cases[i].line), &out, &call);
		if (v != cases[i].verdict || call.is_call != cases[i].is_call ||
		    call.allowed != cases[i].allowed ||
		    (cases[i].out_has && !strstr(strbuf_str(&out), cases[i].out_has)))
			fail_msg("case %zu (%s): verdict %d, call %d allowed %d, out %s", i,
				 cases[i].line, v, call.is_call, call.allowed, strbuf_str(&out));
		if (v == MCP_CLOSE)
			assert_non_null(call.why);
		mcp_call_release(&call);
		strbuf_release(&out);
		mcp_filter_release(&f);
		strv_release(&allow);
	}
}

static void mcp_filter_server_keeps_only_allowed_tools(void **state)
{
	struct mcp_filter f;
	struct strv allow;
	with_filter(&f, &allow);
	const char *line =
	    "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"tools\":[{\"name\":\"echo\"},"
	    "{\"name\":\"secret\"},{\"name\":\"echo \"},7],\"nextCursor\":\"c\"}}";
	struct strbuf out = STRBUF_INIT;
	assert_int_equal(mcp_filter_server(&f, line, strlen(line), &out), MCP_FORWARD);
	const char *s = strbuf_str(&out);
	assert_non_null(strstr(s, "\"echo\""));
	assert_null(strstr(s, "secret"));
	assert_null(strstr(s, "\"echo \""));
	assert_non_null(strstr(s, "\"nextCursor\":\"c\""));
	/* A batch is filtered element by element. */
	strbuf_reset(&out);
	const char *batch = "[{\"id\":1,\"result\":{\"tools\":[{\"name\":\"secret\"}]}}]";
	assert_int_equal(mcp_filter_server(&f, batch, strlen(batch), &out), MCP_FORWARD);
	assert_null(strstr(strbuf_str(&out), "secret"));
	/* Not JSON: dropped. */
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_server(&f, "oops", 4, &out), MCP_DROP);
	strbuf_release(&out);
	mcp_filter_release(&f);
	strv_release(&allow);
}

static void mcp_filter_refuses_an_id_still_pending(void **state)
{
	struct mcp_filter f;
	struct strv allow;
	with_filter(&f, &allow);
	struct strbuf out = STRBUF_INIT;
	struct mcp_call call;
	const char *list = "{\"id\":7,\"method\":\"tools/list\"}";
	const char *other = "{\"id\":7,\"method\":\"ping\"}";
	assert_int_equal(mcp_filter_client(&f, list, strlen(list), &out, &call), MCP_FORWARD);
	mcp_call_release(&call);
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_client(&f, other, strlen(other), &out, &call), MCP_REPLY);
	mcp_call_release(&call);
	/* Answered: the id is free again. */
	const char *answer = "{\"id\":7,\"result\":{\"tools\":[]}}";
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_server(&f, answer, strlen(answer), &out), MCP_FORWARD);
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_client(&f, other, strlen(other), &out, &call), MCP_FORWARD);
	mcp_call_release(&call);
	strbuf_release(&out);
	mcp_filter_release(&f);
	strv_release(&allow);
}

static void mcp_filter_with_a_list_passes_only_what_tools_need(void **state)
{
	static const struct {
		const char *line;
		enum mcp_verdict verdict;
		const char *out_has;
	} cases[] = {
	    {"{\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///x\"}}",
	     MCP_REPLY, "-32601"},
	    {"{\"id\":2,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\"}}", MCP_REPLY,
	     "-32601"},
	    {"{\"id\":3,\"method\":\"completion/complete\"}", MCP_REPLY, "-32601"},
	    {"{\"id\":4,\"method\":\"x/exec\"}", MCP_REPLY, "-32601"},
	    {"{\"id\":5,\"method\":\"resources/list\"}", MCP_REPLY, "\"resources\":[]"},
	    {"{\"id\":6,\"method\":\"prompts/list\"}", MCP_REPLY, "\"prompts\":[]"},
	    {"{\"method\":\"x/exec\"}", MCP_DROP, NULL},
	    {"{\"id\":11,\"method\":\"ping\\u0000resources/read\"}", MCP_CLOSE, NULL},
	    /* Not UTF-8. */
	    {"{\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"x\377y\"}}", MCP_CLOSE,
	     NULL},
	    /* A call of an allowed tool without an id: no answer, so none. */
	    {"{\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}", MCP_DROP, NULL},
	    {"{\"method\":\"notifications/initialized\"}", MCP_FORWARD, "initialized"},
	    /* With an id it is a request, of a method not on the list. */
	    {"{\"id\":13,\"method\":\"notifications/initialized\"}", MCP_REPLY, "-32601"},
	    {"{\"id\":7,\"method\":\"ping\"}", MCP_FORWARD, "ping"},
	    {"{\"id\":8,\"method\":\"logging/setLevel\"}", MCP_FORWARD, "setLevel"},
	};
	struct mcp_filter f;
	struct strv allow;
	with_filter(&f, &allow);
	struct strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct mcp_call call;
		strbuf_reset(&out);
		enum mcp_verdict v =
		    mcp_filter_client(&f, cases[i].line, strlen(cases[i].line), &out, &call);
		if (v != cases[i].verdict ||
		    (cases[i].out_has && !strstr(strbuf_str(&out), cases[i].out_has)))
			fail_msg("case %zu: verdict %d, out %s", i, (int)v, strbuf_str(&out));
		mcp_call_release(&call);
	}
	/* The server's initialize answer loses what the client may not use. */
	const char *init = "{\"id\":9,\"result\":{\"capabilities\":{\"tools\":{},\"resources\":{},"
			   "\"prompts\":{},\"completions\":{},\"tasks\":{}}}}";
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_server(&f, init, strlen(init), &out), MCP_FORWARD);
	assert_non_null(strstr(strbuf_str(&out), "\"tools\""));
	assert_null(strstr(strbuf_str(&out), "resources"));
	assert_null(strstr(strbuf_str(&out), "prompts"));
	assert_null(strstr(strbuf_str(&out), "completions"));
	assert_null(strstr(strbuf_str(&out), "tasks"));
	/* Its requests of the client: ping and notifications pass; sampling
	 * is answered back to it; in a batch, left out. */
	const char *sampling = "{\"id\":\"s\",\"method\":\"sampling/createMessage\"}";
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_server(&f, sampling, strlen(sampling), &out), MCP_REPLY);
	assert_non_null(strstr(strbuf_str(&out), "-32601"));
	const char *batch =
	    "[{\"id\":\"r\",\"method\":\"roots/list\"},{\"id\":\"p\",\"method\":\"ping\"}]";
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_server(&f, batch, strlen(batch), &out), MCP_FORWARD);
	assert_null(strstr(strbuf_str(&out), "roots"));
	assert_non_null(strstr(strbuf_str(&out), "ping"));
	const char *note = "{\"method\":\"notifications/message\"}";
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_server(&f, note, strlen(note), &out), MCP_FORWARD);
	/* The client's initialize does not offer what it may not do. */
	struct mcp_call call;
	const char *cinit = "{\"id\":10,\"method\":\"initialize\",\"params\":{\"capabilities\":{"
			    "\"sampling\":{},\"roots\":{},\"elicitation\":{}}}}";
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_client(&f, cinit, strlen(cinit), &out, &call), MCP_FORWARD);
	mcp_call_release(&call);
	assert_non_null(strstr(strbuf_str(&out), "\"capabilities\":{}"));
	strbuf_release(&out);
	mcp_filter_release(&f);
	strv_release(&allow);
}

/* A line of more values than json-c should build is not parsed: refused
 * from the agent, dropped from the server. Commas in strings count for
 * nothing. */
static void mcp_filter_refuses_a_line_of_too_many_values(void **state)
{
	struct mcp_filter f;
	struct strv allow;
	with_filter(&f, &allow);
	struct strbuf line = STRBUF_INIT, out = STRBUF_INIT;
	struct mcp_call call;
	strbuf_addstr(&line, "{\"id\":1,\"method\":\"ping\",\"params\":{\"a\":[");
	for (int i = 0; i < 70000; i++)
		strbuf_addstr(&line, "{},");
	strbuf_addstr(&line, "{}]}}");
	assert_int_equal(mcp_filter_client(&f, line.buf, line.len, &out, &call), MCP_CLOSE);
	mcp_call_release(&call);
	assert_int_equal(mcp_filter_server(&f, line.buf, line.len, &out), MCP_DROP);
	strbuf_reset(&line);
	strbuf_addstr(&line, "{\"id\":2,\"method\":\"ping\",\"params\":{\"a\":\"");
	for (int i = 0; i < 300000; i++)
		strbuf_addstr(&line, "{[,");
	strbuf_addstr(&line, "\\\"\"}}");
	strbuf_reset(&out);
	assert_int_equal(mcp_filter_client(&f, line.buf, line.len, &out, &call), MCP_FORWARD);
	mcp_call_release(&call);
	strbuf_release(&line);
	strbuf_release(&out);
	mcp_filter_release(&f);
	strv_release(&allow);
}

static void mcp_filter_without_a_list_allows_every_tool(void **state)
{
	struct mcp_filter f;
	mcp_filter_init(&f, "demo", NULL);
	struct strbuf out = STRBUF_INIT;
	struct mcp_call call;
	const char *line = "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"secret\"}}";
	assert_int_equal(mcp_filter_client(&f, line, strlen(line), &out, &call), MCP_FORWARD);
	assert_true(call.is_call && call.allowed);
	mcp_call_release(&call);
	strbuf_release(&out);
	mcp_filter_release(&f);
}

static void mcp_name_ok_takes_only_names_claude_can_prefix(void **state)
{
	assert_true(mcp_name_ok("demo"));
	assert_true(mcp_name_ok("a-b_c9"));
	assert_false(mcp_name_ok(""));
	assert_false(mcp_name_ok("a__b"));
	assert_false(mcp_name_ok("a.b"));
	assert_false(mcp_name_ok("../x"));
	assert_false(
	    mcp_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mcp_filter_client_decides_each_line),
	    cmocka_unit_test(mcp_filter_server_keeps_only_allowed_tools),
	    cmocka_unit_test(mcp_filter_refuses_an_id_still_pending),
	    cmocka_unit_test(mcp_filter_with_a_list_passes_only_what_tools_need),
	    cmocka_unit_test(mcp_filter_refuses_a_line_of_too_many_values),
	    cmocka_unit_test(mcp_filter_without_a_list_allows_every_tool),
	    cmocka_unit_test(mcp_name_ok_takes_only_names_claude_can_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
