/* The agent's stdout (Claude Code's stream-json, Codex's `exec --json`)
 * turned into the normalized events of agent/event: untrusted bytes in,
 * whole JSON objects out, one per event, in order. The stream also keeps
 * what agent/completed needs (the result line's usage and cost). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/command.h"

/* A line longer than this is dropped with an `error` event. */
#define AGENT_LINE_MAX ((size_t)16 << 20)
/* A tool_result's text is cut to this many bytes (at a character). */
#define AGENT_TOOL_TEXT_MAX ((size_t)64 << 10)

struct agent_stream;

/* Takes ownership of event: {"type": ..., fields as API.md "Agent events"}. */
typedef void (*agent_emit_fn)(void *ctx, struct json_object *event);

/* include_partial: text deltas become `text` events with partial true;
 * raw: lines not understood become `raw` events instead of being dropped. */
struct agent_stream *agent_stream_new(enum agent_kind kind, bool include_partial, bool raw);
void agent_stream_free(struct agent_stream *st);

/* Bytes as they come, split anywhere; each complete line is mapped. */
void agent_stream_feed(struct agent_stream *st, const char *buf, size_t n, agent_emit_fn emit,
		       void *ctx);

/* The end of the output: maps a last line without newline and, when no
 * result came, emits an error `result` saying why (timeout, interrupt,
 * exit status or signal, the last line of stderr_tail). wait_status is
 * waitpid's status, or -1 when unknown. Call once. */
void agent_stream_finish(struct agent_stream *st, int wait_status, bool timed_out, bool interrupted,
			 const char *stderr_tail, agent_emit_fn emit, void *ctx);

/* The fields of agent/completed: {isError, result, usage{input, output,
 * cacheRead, cacheCreation}, totalCostUsd, numTurns, durationMs, exitCode,
 * terminalReason} (and costKnown false when the agent reports no cost).
 * Usage and cost come only from the result; isError is the result's or a
 * non-zero exit. A new object owned by the caller. */
struct json_object *agent_stream_completion(const struct agent_stream *st, int wait_status);

/* The agent's session (Claude) or thread (Codex) id once `started` came,
 * for a later `resume`; else NULL. */
const char *agent_stream_session_id(const struct agent_stream *st);
