/* libFuzzer target for the agent event stream (agent/events.c), the parser
 * of an agent CLI's stdout: the first byte picks Claude Code or Codex,
 * partial and raw, the second how the rest is split. Every event is an
 * object with a string type that serializes to valid UTF-8 JSON; the
 * events are the same for the whole input fed at once and fed in pieces;
 * finishing always leaves a result, and the completion has its fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/events.h"
#include "base/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void collect(void *ctx, struct json_object *event)
{
	struct strbuf *sb = ctx;
	struct json_object *type = NULL;
	if (!json_object_is_type(event, json_type_object) ||
	    !json_object_object_get_ex(event, "type", &type) ||
	    !json_object_is_type(type, json_type_string))
		abort();
	const char *text = json_object_to_json_string_ext(event, JSON_C_TO_STRING_PLAIN);
	struct json_tokener *tok = json_tokener_new_ex(2048);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *back = json_tokener_parse_ex(tok, text, (int)strlen(text));
	if (!back)
		abort();
	json_object_put(back);
	json_tokener_free(tok);
	strbuf_addstr(sb, text);
	strbuf_addch(sb, '\n');
	json_object_put(event);
}

static struct json_object *run(const uint8_t *data, size_t size, uint8_t flags, uint8_t split,
			       struct strbuf *out)
{
	struct agent_stream *st =
	    agent_stream_new((flags & 1) ? AGENT_CODEX : AGENT_CLAUDE, flags & 2, flags & 4);
	size_t off = 0, step = split ? split : size;
	while (off < size) {
		size_t n = size - off < step ? size - off : step;
		agent_stream_feed(st, (const char *)data + off, n, collect, out);
		off += n;
		/* Vary the piece sizes. */
		step = split ? (step * 7 + 3) % 61 + 1 : step;
	}
	agent_stream_finish(st, (flags & 8) ? 256 : 0, flags & 16, flags & 32, "tail\n", collect,
			    out);
	struct json_object *done = agent_stream_completion(st, (flags & 8) ? 256 : 0);
	agent_stream_free(st);
	return done;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint8_t flags = data[0], split = data[1];
	data += 2;
	size -= 2;
	struct strbuf whole = STRBUF_INIT, pieces = STRBUF_INIT;
	struct json_object *a = run(data, size, flags, 0, &whole);
	struct json_object *b = run(data, size, flags, split, &pieces);
	if (strcmp(strbuf_str(&whole), strbuf_str(&pieces)) != 0)
		abort();
	if (!strstr(strbuf_str(&whole), "{\"type\":\"result\""))
		abort();
	static const char *const keys[] = {"isError",  "result",     "usage",	 "totalCostUsd",
					   "numTurns", "durationMs", "exitCode", "terminalReason"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!json_object_object_get_ex(a, keys[i], NULL))
			abort();
	if (strcmp(json_object_to_json_string(a), json_object_to_json_string(b)) != 0)
		abort();
	/* A non-zero exit is a failure whatever the result said. */
	if ((flags & 8) && !json_object_get_boolean(json_object_object_get(a, "isError")))
		abort();
	json_object_put(a);
	json_object_put(b);
	strbuf_release(&whole);
	strbuf_release(&pieces);
	return 0;
}
