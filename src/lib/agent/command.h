/* The agent CLI's command line for one run of agent/run: Claude Code's
 * `claude --print --output-format stream-json --verbose ... -- PROMPT` or
 * Codex's `codex exec --json ... -- PROMPT`. Pure: it validates the request
 * and builds argv, so nothing a platform sends can become an option.
 *
 * Codex cannot honour maxTurns, permissionMode, allowedTools,
 * disallowedTools, an MCP config file or partial messages: a request with
 * any of them is refused (ERROR_USAGE), never silently weakened. Its system
 * prompt and history have no flag of their own; they are folded into the
 * prompt, in front of it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strv.h"

enum agent_kind {
	AGENT_CLAUDE,
	AGENT_CODEX,
};

/* "claude" or "codex". */
const char *agent_kind_name(enum agent_kind kind);
/* -1 with ERROR_USAGE for any other name. */
int agent_kind_parse(const char *name, enum agent_kind *kind, struct error *err);

/* One earlier turn of the conversation. role is "user", "assistant" or
 * "system" (a system turn joins the system prompt). */
struct agent_message {
	const char *role;
	const char *content;
};

struct agent_run_request {
	enum agent_kind kind;
	const char *command; /* name or path; NULL: "claude" / "codex" */
	const char *prompt;
	const char *system_prompt; /* NULL: none */
	const struct agent_message *history;
	size_t history_len;
	const char *model;	     /* NULL: the CLI's default */
	int max_turns;		     /* 0: unset */
	const char *permission_mode; /* NULL: the CLI's default */
	const struct strv *allowed_tools;
	const struct strv *disallowed_tools;
	const char *resume;	/* an agent session id (UUID), or NULL */
	const char *mcp_config; /* absolute path of an MCP config file, or NULL */
	bool include_partial;
};

/* The longest --max-turns accepted. */
#define AGENT_MAX_TURNS 10000

/* Appends the CLI's argv to argv (argv[0] is the command). On an invalid
 * field: -1, ERROR_USAGE naming the field as the API does ("model",
 * "allowedTools[2]"), and argv unchanged. */
int agent_command(const struct agent_run_request *r, struct strv *argv, struct error *err);

/* The system prompt a run carries: the request's, then the system turns of
 * the history, then the other turns as "[role]: content" under
 * "## Conversation History:" (as seed 002's buildSystemPrompt). NULL when
 * all of them are empty. */
char *agent_system_prompt(const struct agent_run_request *r);
