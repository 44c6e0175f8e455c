/* Unit tests for the agent event stream (agent/events.c) over real
 * transcripts of Claude Code 2.1.331 and Codex 0.169.0 (tests/fixtures/
 * agent/, recorded against tests/agents/standin.py): the events each gives,
 * in order; usage and cost from the result only; the same events whatever
 * the split of the bytes; a synthesized result when the stream is cut; raw
 * lines on and off; and lines of the wrong shape, which never stop it. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "agent/events.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "unit.h"

#define FIXTURES "tests/fixtures/agent/"
#define EXITED(code) ((code) << 8)

/* Every event emitted, each as one line of JSON, and their types. */
struct collected {
	struct strbuf lines;
	struct strbuf types;
	struct json_object *events; /* array */
};

static void collect(void *ctx, struct json_object *event)
{
	struct collected *c = ctx;
	strbuf_addstr(&c->lines, json_object_to_json_string_ext(event, JSON_C_TO_STRING_PLAIN));
	strbuf_addch(&c->lines, '\n');
	struct json_object *t = NULL;
	if (!json_object_object_get_ex(event, "type", &t) ||
	    !json_object_is_type(t, json_type_string))
		fail_msg("an event without a type: %s", json_object_to_json_string(event));
	if (c->types.len)
		strbuf_addch(&c->types, ' ');
	strbuf_addstr(&c->types, json_object_get_string(t));
	json_object_array_add(c->events, event);
}

static void collected_init(struct collected *c)
{
	c->lines = (struct strbuf)STRBUF_INIT;
	c->types = (struct strbuf)STRBUF_INIT;
	c->events = json_object_new_array();
}

static void collected_release(struct collected *c)
{
	strbuf_release(&c->lines);
	strbuf_release(&c->types);
	json_object_put(c->events);
}

static char *fixture(const char *name, size_t *len)
{
	char *path = xasprintf(FIXTURES "%s", name);
	char *text = NULL;
	if (read_file(path, 1 << 24, &text, len) < 0)
		fail_msg("cannot read %s (run from the top of the tree)", path);
	free(path);
	return text;
}

/* The first event of that type, or fails. */
static struct json_object *find(struct collected *c, const char *type)
{
	for (size_t i = 0; i < json_object_array_length(c->events); i++) {
		struct json_object *e = json_object_array_get_idx(c->events, i);
		struct json_object *t = json_object_object_get(e, "type");
		if (strcmp(json_object_get_string(t), type) == 0)
			return e;
	}
	fail_msg("no %s event in: %s", type, strbuf_str(&c->types));
	return NULL;
}

static const char *str_at(struct json_object *o, const char *path)
{
	/* "a.b" */
	char *copy = xstrdup(path);
	struct json_object *v = o;
	for (char *save = NULL, *k = strtok_r(copy, ".", &save); k; k = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(v, k, &v))
			fail_msg("no %s in %s", path, json_object_to_json_string(o));
	free(copy);
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

static const struct fixture_case {
	const char *file;
	enum agent_kind kind;
	bool partial;
	const char *types;
	int wait_status;
	/* In the completion, as JSON text. */
	const char *is_error, *cost, *input, *output, *terminal;
} cases[] = {
    {"claude-text.jsonl", AGENT_CLAUDE, false, "started text result", EXITED(0), "false",
     "0.000105", "10", "5", "\"completed\""},
    {"claude-partial.jsonl", AGENT_CLAUDE, true, "started text text result", EXITED(0), "false",
     "0.000105", "10", "5", "\"completed\""},
    {"claude-partial.jsonl", AGENT_CLAUDE, false, "started text result", EXITED(0), "false",
     "0.000105", "10", "5", "\"completed\""},
    {"claude-thinking.jsonl", AGENT_CLAUDE, false, "started thinking text result", EXITED(0),
     "false", "0.000105", "10", "5", "\"completed\""},
    {"claude-bash.jsonl", AGENT_CLAUDE, false, "started tool_call tool_result text result",
     EXITED(0), "false", "0.00021", "20", "10", "\"completed\""},
    {"claude-bash-denied.jsonl", AGENT_CLAUDE, false,
     "started tool_call error tool_result text result", EXITED(0), "false", "0.00021", "20", "10",
     "\"completed\""},
    {"claude-write-disallowed.jsonl", AGENT_CLAUDE, false,
     "started tool_call tool_result text result", EXITED(0), "false", "0.00021", "20", "10",
     "\"completed\""},
    {"claude-mcp.jsonl", AGENT_CLAUDE, false,
     "started tool_call tool_result tool_call tool_result text result", EXITED(0), "false",
     "0.000315", "30", "15", "\"completed\""},
    /* An outage: subtype "success" but is_error, and exit 1. */
    {"claude-outage.jsonl", AGENT_CLAUDE, false, "started retry error result", EXITED(1), "true",
     "0", "0", "0", "\"api_error\""},
    /* Killed while the stand-in never answered: no result line. */
    {"claude-hang.jsonl", AGENT_CLAUDE, false, "started result", SIGKILL, "true", "null", "0", "0",
     "\"signal\""},
    /* SIGINT: the CLI's own error result, exit 0. */
    {"claude-interrupt.jsonl", AGENT_CLAUDE, false, "started error result", EXITED(0), "true", "0",
     "0", "0", "\"aborted_streaming\""},
    {"codex-hang.jsonl", AGENT_CODEX, false, "started result", SIGKILL, "true", "null", "0", "0",
     "\"signal\""},
    {"codex-text.jsonl", AGENT_CODEX, false, "started text result", EXITED(0), "false", "null",
     "10", "5", "\"completed\""},
    {"codex-command.jsonl", AGENT_CODEX, false, "started tool_call tool_result text result",
     EXITED(0), "false", "null", "20", "10", "\"completed\""},
    {"codex-mcp.jsonl", AGENT_CODEX, false, "started tool_call tool_result text result", EXITED(0),
     "false", "null", "20", "10", "\"completed\""},
    {"codex-outage.jsonl", AGENT_CODEX, false,
     "started retry retry retry retry retry error error result", EXITED(1), "true", "null", "0",
     "0", "\"turn_failed\""},
};

/* Feeds text in pieces of at most step bytes (0: whole), then finishes. */
static struct json_object *run(const struct fixture_case *fc, const char *text, size_t len,
			       size_t first, size_t step, bool raw, struct collected *c)
{
	struct agent_stream *st = agent_stream_new(fc->kind, fc->partial, raw);
	size_t off = 0;
	if (first) {
		agent_stream_feed(st, text, first, collect, c);
		off = first;
	}
	while (off < len) {
		size_t n = step && len - off > step ? step : len - off;
		agent_stream_feed(st, text + off, n, collect, c);
		off += n;
	}
	agent_stream_finish(st, fc->wait_status, false, false, NULL, collect, c);
	struct json_object *done = agent_stream_completion(st, fc->wait_status);
	agent_stream_free(st);
	return done;
}

static void agent_stream_maps_each_real_transcript(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct fixture_case *fc = &cases[i];
		size_t len;
		_cleanup_free_ char *text = fixture(fc->file, &len);
		struct collected c;
		collected_init(&c);
		struct json_object *done = run(fc, text, len, 0, 0, false, &c);
		if (strcmp(strbuf_str(&c.types), fc->types) != 0)
			fail_msg("%s: events <%s>, wanted <%s>", fc->file, strbuf_str(&c.types),
				 fc->types);
		struct {
			const char *key, *want;
		} fields[] = {{"isError", fc->is_error},
			      {"totalCostUsd", fc->cost},
			      {"usage.input", fc->input},
			      {"usage.output", fc->output},
			      {"terminalReason", fc->terminal}};
		for (size_t k = 0; k < ARRAY_SIZE(fields); k++) {
			const char *got = str_at(done, fields[k].key);
			/* Costs are doubles: compare the leading digits. */
			if (strncmp(got, fields[k].want, strlen(fields[k].want)) != 0)
				fail_msg("%s: completion %s is %s, wanted %s", fc->file,
					 fields[k].key, got, fields[k].want);
		}
		/* Every run, failed or not, says something in its result. */
		if (!json_object_is_type(json_object_object_get(done, "result"), json_type_string))
			fail_msg("%s: completion result %s", fc->file, str_at(done, "result"));
		/* The result event and the completion agree on the money. */
		struct json_object *result = find(&c, "result");
		assert_string_equal(str_at(result, "usage"), str_at(done, "usage"));
		json_object_put(done);
		collected_release(&c);
	}
}

/* Streamed assistant messages carry usage too (output 1 each); only the
 * result's counts may reach the completion. */
static void agent_stream_takes_usage_from_the_result_only(void **state)
{
	const struct fixture_case fc = {.file = "claude-bash.jsonl", .kind = AGENT_CLAUDE};
	size_t len;
	_cleanup_free_ char *text = fixture(fc.file, &len);
	/* Everything but the result line. */
	char *last = memrchr(text, '\n', len - 1);
	assert_non_null(last);
	struct collected c;
	collected_init(&c);
	struct json_object *done = run(&fc, text, (size_t)(last - text) + 1, 0, 0, false, &c);
	assert_string_equal(str_at(done, "usage"),
			    "{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheCreation\":0}");
	assert_string_equal(str_at(done, "totalCostUsd"), "null");
	json_object_put(done);
	collected_release(&c);
}

static void agent_stream_gives_the_same_events_however_it_is_split(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct fixture_case *fc = &cases[i];
		size_t len;
		_cleanup_free_ char *text = fixture(fc->file, &len);
		struct collected whole;
		collected_init(&whole);
		json_object_put(run(fc, text, len, 0, 0, true, &whole));
		/* Two pieces, cut near every line's end, inside every multi-byte
		 * character and every 61st byte besides (a cut elsewhere in a
		 * line is the same to the stream); then one byte at a time,
		 * which passes every boundary. */
		for (size_t cut = 0; cut <= len; cut += 1) {
			bool near_end = false;
			for (size_t k = cut > 3 ? cut - 3 : 0; k < len && k <= cut + 3; k++)
				near_end |= text[k] == '\n';
			if (!near_end && cut % 61 && !(cut < len && (text[cut] & 0x80)))
				continue;
			struct collected c;
			collected_init(&c);
			json_object_put(run(fc, text, len, cut, 0, true, &c));
			if (strcmp(strbuf_str(&c.lines), strbuf_str(&whole.lines)) != 0)
				fail_msg("%s: cut at %zu gives other events", fc->file, cut);
			collected_release(&c);
		}
		struct collected bytes;
		collected_init(&bytes);
		json_object_put(run(fc, text, len, 0, 1, true, &bytes));
		assert_string_equal(strbuf_str(&bytes.lines), strbuf_str(&whole.lines));
		collected_release(&bytes);
		collected_release(&whole);
	}
}

static void agent_stream_synthesizes_a_result_when_none_came(void **state)
{
	static const struct {
		int wait_status;
		bool timed_out, interrupted;
		const char *stderr_tail;
		const char *reason, *says, *exit_code;
	} ends[] = {
	    {EXITED(1), false, false, "warming up\nFATAL: \"quoted\" \x01 end\n\n", "no_result",
	     "status 1 without a result: FATAL: \"quoted\" \x01 end", "1"},
	    {EXITED(0), false, false, NULL, "no_result", "status 0 without a result", "0"},
	    {SIGKILL, false, false, "", "signal", "signal 9 (KILL)", "null"},
	    {SIGKILL, true, false, "", "timeout", "timed out", "null"},
	    {EXITED(130), false, true, "bad \xff byte", "interrupted",
	     "interrupted: bad \xef\xbf\xbd", "130"},
	    {-1, false, false, NULL, "no_result", "ended without a result", "null"},
	};
	size_t len;
	_cleanup_free_ char *text = fixture("claude-bash.jsonl", &len);
	char *last = memrchr(text, '\n', len - 1);
	for (size_t i = 0; i < ARRAY_SIZE(ends); i++) {
		struct collected c;
		collected_init(&c);
		struct agent_stream *st = agent_stream_new(AGENT_CLAUDE, false, false);
		/* Cut inside the result line: the part without newline is
		 * flushed at the end and is not JSON. */
		agent_stream_feed(st, text, (size_t)(last - text) + 40, collect, &c);
		agent_stream_finish(st, ends[i].wait_status, ends[i].timed_out, ends[i].interrupted,
				    ends[i].stderr_tail, collect, &c);
		assert_string_equal(strbuf_str(&c.types),
				    "started tool_call tool_result text result");
		struct json_object *r = find(&c, "result");
		assert_string_equal(str_at(r, "isError"), "true");
		const char *msg = json_object_get_string(json_object_object_get(r, "result"));
		unit_assert_contains(msg, ends[i].says, "end %zu", i);
		assert_string_equal(
		    json_object_get_string(json_object_object_get(r, "terminalReason")),
		    ends[i].reason);
		struct json_object *done = agent_stream_completion(st, ends[i].wait_status);
		assert_string_equal(str_at(done, "isError"), "true");
		assert_string_equal(str_at(done, "exitCode"), ends[i].exit_code);
		/* The session id known from started is kept for a resume. */
		assert_string_equal(agent_stream_session_id(st),
				    "657a3b44-8a78-46f9-b057-f7143c81cb3d");
		json_object_put(done);
		agent_stream_free(st);
		collected_release(&c);
	}
}

/* A result that says success with a failed exit is a failure. */
static void agent_stream_completion_fails_on_a_nonzero_exit(void **state)
{
	const struct fixture_case fc = {.file = "claude-text.jsonl", .wait_status = EXITED(3)};
	size_t len;
	_cleanup_free_ char *text = fixture(fc.file, &len);
	struct collected c;
	collected_init(&c);
	struct json_object *done = run(&fc, text, len, 0, 0, false, &c);
	assert_string_equal(str_at(find(&c, "result"), "isError"), "false");
	assert_string_equal(str_at(done, "isError"), "true");
	assert_string_equal(str_at(done, "exitCode"), "3");
	json_object_put(done);
	collected_release(&c);
}

/* Lines that are not JSON objects, unknown types and known types whose
 * fields have the wrong types: raw events only when asked, never a crash,
 * and the stream goes on. */
static void agent_stream_survives_lines_of_the_wrong_shape(void **state)
{
	static const struct {
		enum agent_kind kind;
		const char *line;
		const char *types;     /* with raw off */
		const char *raw_types; /* with raw on */
	} lines[] = {
	    {AGENT_CLAUDE, "not json", "", "raw"},
	    {AGENT_CLAUDE, "[1,2]", "", "raw"},
	    {AGENT_CLAUDE, "{\"a\":1} trailing", "", "raw"},
	    {AGENT_CLAUDE, "{\"type\":\"control_request\"}", "", "raw"},
	    {AGENT_CLAUDE, "{\"type\":5}", "", "raw"},
	    {AGENT_CLAUDE, "{\"type\":\"system\",\"subtype\":\"status\"}", "", "raw"},
	    {AGENT_CLAUDE,
	     "{\"type\":\"system\",\"subtype\":\"init\",\"tools\":\"x\","
	     "\"mcp_servers\":[5,{\"name\":7},{\"name\":\"s\",\"status\":[]}]}",
	     "started", "started"},
	    {AGENT_CLAUDE, "{\"type\":\"assistant\",\"message\":\"x\"}", "", "raw"},
	    {AGENT_CLAUDE,
	     "{\"type\":\"assistant\",\"message\":{\"content\":[5,{\"type\":\"text\","
	     "\"text\":5},{\"type\":\"tool_use\",\"name\":\"mcp__\"},{\"type\":"
	     "\"tool_use\",\"name\":\"mcp__a__\"},{\"type\":\"image\"}]}}",
	     "tool_call tool_call", "raw tool_call tool_call raw"},
	    {AGENT_CLAUDE,
	     "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\","
	     "\"content\":{\"x\":1},\"is_error\":\"yes\"}]}}",
	     "tool_result", "tool_result"},
	    {AGENT_CLAUDE,
	     "{\"type\":\"stream_event\",\"event\":{\"delta\":{\"type\":\"text_delta\","
	     "\"text\":\"hi\"}}}",
	     "", "raw"},
	    {AGENT_CLAUDE,
	     "{\"type\":\"result\",\"usage\":[],\"total_cost_usd\":\"1\","
	     "\"errors\":[\"e1\",5],\"permission_denials\":[1,{}],\"modelUsage\":3}",
	     "error result", "error result"},
	    {AGENT_CODEX, "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\"}}", "",
	     "raw"},
	    {AGENT_CODEX,
	     "{\"type\":\"item.completed\",\"item\":{\"type\":\"mcp_tool_call\","
	     "\"id\":\"i\",\"server\":\"s\",\"tool\":\"t\",\"arguments\":{},"
	     "\"error\":{\"message\":\"no\"},\"status\":\"failed\"}}",
	     "tool_call tool_result", "tool_call tool_result"},
	    {AGENT_CODEX, "{\"type\":\"turn.completed\",\"usage\":5}", "result", "result"},
	    {AGENT_CODEX, "{\"type\":\"error\",\"message\":\"Reconnecting... x/y\"}", "error",
	     "error"},
	    {AGENT_CODEX, "{\"type\":\"thread.started\",\"thread_id\":[]}", "", "raw"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		for (int raw = 0; raw < 2; raw++) {
			struct collected c;
			collected_init(&c);
			struct agent_stream *st = agent_stream_new(lines[i].kind, false, raw);
			agent_stream_feed(st, lines[i].line, strlen(lines[i].line), collect, &c);
			agent_stream_feed(st, "\n", 1, collect, &c);
			const char *want = raw ? lines[i].raw_types : lines[i].types;
			if (strcmp(strbuf_str(&c.types), want) != 0)
				fail_msg("line %zu raw %d: events <%s>, wanted <%s>", i, raw,
					 strbuf_str(&c.types), want);
			agent_stream_free(st);
			collected_release(&c);
		}
	}
}

static void agent_stream_splits_mcp_tool_names(void **state)
{
	/* Codex names the server and the tool itself. */
	size_t codex_len;
	_cleanup_free_ char *codex = fixture("codex-mcp.jsonl", &codex_len);
	const struct fixture_case codex_fc = {.file = "codex-mcp.jsonl", .kind = AGENT_CODEX};
	struct collected cc;
	collected_init(&cc);
	json_object_put(run(&codex_fc, codex, codex_len, 0, 0, false, &cc));
	unit_assert_contains(strbuf_str(&cc.lines),
			     "{\"type\":\"tool_call\",\"callId\":\"item_0\",\"name\":\"echo\","
			     "\"server\":\"tiny\",\"input\":{\"text\":\"hi\"}}",
			     "codex mcp call");
	unit_assert_contains(strbuf_str(&cc.lines),
			     "\"callId\":\"item_0\",\"isError\":false,\"text\":\"echo: "
			     "{\\\"text\\\": \\\"hi\\\"}\"",
			     "codex mcp result");
	collected_release(&cc);

	size_t len;
	_cleanup_free_ char *text = fixture("claude-mcp.jsonl", &len);
	const struct fixture_case fc = {.file = "claude-mcp.jsonl", .kind = AGENT_CLAUDE};
	struct collected c;
	collected_init(&c);
	json_object_put(run(&fc, text, len, 0, 0, false, &c));
	unit_assert_contains(strbuf_str(&c.lines),
			     "{\"type\":\"tool_call\",\"callId\":\"toolu_standin01\",\"name\":"
			     "\"echo\",\"server\":\"tiny\",\"input\":{\"text\":\"hi\"}}",
			     "mcp call");
	unit_assert_contains(strbuf_str(&c.lines),
			     "\"mcpServers\":[{\"name\":\"tiny\",\"status\":"
			     "\"connected\"}]",
			     "mcp servers");
	collected_release(&c);
}

/* Every blocked attempt is visible: a disallowed tool's tool_result is an
 * error marked denied; a permission refusal is an error event, a denied
 * tool_result and a permissionDenials entry of the result. */
static void agent_stream_shows_each_blocked_tool_use(void **state)
{
	static const struct {
		const char *file, *needles[3];
	} blocked[] = {
	    {"claude-write-disallowed.jsonl",
	     {"\"type\":\"tool_result\",\"callId\":\"toolu_standin01\",\"isError\":true,\"text\":"
	      "\"<tool_use_error>Error: No such tool available: Write.",
	      "\"truncated\":false,\"denied\":true}", "\"permissionDenials\":[]"}},
	    {"claude-bash-denied.jsonl",
	     {"{\"type\":\"error\",\"kind\":\"permission_denied\",\"message\":\"touch in",
	      "\"callId\":\"toolu_standin01\",\"name\":\"Bash\"}",
	      "\"permissionDenials\":[{\"name\":\"Bash\",\"callId\":\"toolu_standin01\",\"input\":{"
	      "\"command\":\"touch denied.txt\""}},
	};
	for (size_t i = 0; i < ARRAY_SIZE(blocked); i++) {
		size_t len;
		_cleanup_free_ char *text = fixture(blocked[i].file, &len);
		const struct fixture_case fc = {.file = blocked[i].file, .kind = AGENT_CLAUDE};
		struct collected c;
		collected_init(&c);
		json_object_put(run(&fc, text, len, 0, 0, false, &c));
		for (size_t k = 0; k < 3; k++)
			unit_assert_contains(strbuf_str(&c.lines), blocked[i].needles[k], "%s",
					     blocked[i].file);
		if (i == 1)
			unit_assert_contains(strbuf_str(&c.lines),
					     "\"isError\":true,\"text\":\"touch in", "denied bash");
		collected_release(&c);
	}
}

static void agent_stream_drops_an_overlong_line_and_resyncs(void **state)
{
	struct collected c;
	collected_init(&c);
	struct agent_stream *st = agent_stream_new(AGENT_CODEX, false, true);
	static const char start[] = "{\"type\":\"error\",\"message\":\"";
	agent_stream_feed(st, start, sizeof(start) - 1, collect, &c);
	char *chunk = xmalloc(1 << 20);
	memset(chunk, 'a', 1 << 20);
	for (int i = 0; i < 17; i++)
		agent_stream_feed(st, chunk, 1 << 20, collect, &c);
	free(chunk);
	static const char rest[] = "\"}\n{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n";
	agent_stream_feed(st, rest, sizeof(rest) - 1, collect, &c);
	assert_string_equal(strbuf_str(&c.types), "error started");
	unit_assert_contains(strbuf_str(&c.lines), "\"kind\":\"protocol\"", "overlong");
	agent_stream_free(st);
	collected_release(&c);
}

static void agent_stream_skips_a_line_of_too_many_values(void **state)
{
	struct collected c;
	collected_init(&c);
	struct agent_stream *st = agent_stream_new(AGENT_CLAUDE, false, true);
	/* Small, but a million values for json-c to build. */
	static const char head[] = "{\"type\":\"assistant\",\"x\":[";
	agent_stream_feed(st, head, sizeof(head) - 1, collect, &c);
	for (int i = 0; i < 300000; i++)
		agent_stream_feed(st, "{},", 3, collect, &c);
	static const char rest[] = "{}]}\n{\"type\":\"system\",\"subtype\":\"init\","
				   "\"session_id\":\"s\"}\n";
	agent_stream_feed(st, rest, sizeof(rest) - 1, collect, &c);
	assert_string_equal(strbuf_str(&c.types), "error started");
	unit_assert_contains(strbuf_str(&c.lines), "\"kind\":\"protocol\"", "values");
	agent_stream_free(st);
	collected_release(&c);
}

static void agent_stream_cuts_long_tool_output_at_a_character(void **state)
{
	struct strbuf line = STRBUF_INIT;
	strbuf_addstr(&line,
		      "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\","
		      "\"tool_use_id\":\"t\",\"content\":\"x");
	/* U+00E9 (2 bytes) across the cut at 64 KiB. */
	for (size_t i = 1; i < AGENT_TOOL_TEXT_MAX + 10; i += 2)
		strbuf_addstr(&line, "\xc3\xa9");
	strbuf_addstr(&line, "\"}]}}\n");
	struct collected c;
	collected_init(&c);
	struct agent_stream *st = agent_stream_new(AGENT_CLAUDE, false, false);
	agent_stream_feed(st, strbuf_str(&line), line.len, collect, &c);
	struct json_object *r = find(&c, "tool_result");
	assert_string_equal(str_at(r, "truncated"), "true");
	const char *text = json_object_get_string(json_object_object_get(r, "text"));
	size_t n = strlen(text);
	assert_true(n <= AGENT_TOOL_TEXT_MAX && n >= AGENT_TOOL_TEXT_MAX - 1);
	assert_true((unsigned char)text[n - 1] == 0xa9);
	agent_stream_free(st);
	collected_release(&c);
	strbuf_release(&line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(agent_stream_maps_each_real_transcript),
	    cmocka_unit_test(agent_stream_takes_usage_from_the_result_only),
	    cmocka_unit_test(agent_stream_gives_the_same_events_however_it_is_split),
	    cmocka_unit_test(agent_stream_synthesizes_a_result_when_none_came),
	    cmocka_unit_test(agent_stream_completion_fails_on_a_nonzero_exit),
	    cmocka_unit_test(agent_stream_survives_lines_of_the_wrong_shape),
	    cmocka_unit_test(agent_stream_splits_mcp_tool_names),
	    cmocka_unit_test(agent_stream_shows_each_blocked_tool_use),
	    cmocka_unit_test(agent_stream_drops_an_overlong_line_and_resyncs),
	    cmocka_unit_test(agent_stream_skips_a_line_of_too_many_values),
	    cmocka_unit_test(agent_stream_cuts_long_tool_output_at_a_character),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
