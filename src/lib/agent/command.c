/* Builds and validates the agent CLI's argv for agent/run (see command.h).
 * Every value is its own argv element after its flag, and the prompt comes
 * after `--`; the checks below keep values that the CLIs' option parsers
 * could split or read as options out. */
#include "agent/command.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/xalloc.h"

const char *agent_kind_name(enum agent_kind kind)
{
	return kind == AGENT_CODEX ? "codex" : "claude";
}

int agent_kind_parse(const char *name, enum agent_kind *kind, struct error *err)
{
	if (name && strcmp(name, "claude") == 0)
		*kind = AGENT_CLAUDE;
	else if (name && strcmp(name, "codex") == 0)
		*kind = AGENT_CODEX;
	else
		return error_set(err, ERROR_USAGE, "agent: must be \"claude\" or \"codex\"");
	return 0;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* A model name: letters, digits and ._:@/[]- (Bedrock and Vertex ids
 * carry ':' '@' '/'; Claude Code's "sonnet[1m]" carries brackets), not
 * starting with '-'. */
static bool model_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 200 || s[0] == '-')
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._:@/[]-", c)))
			return false;
	}
	return true;
}

/* A session id as both CLIs print them: a UUID, 8-4-4-4-12 hex digits. */
static bool uuid_ok(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char c = s[i];
		if (dash ? c != '-'
			 : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			     (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

/* A tool name or rule ("Bash", "mcp__srv__tool", "Bash(git log *)"): the
 * list is passed comma-joined and Claude Code splits it on commas and on
 * spaces outside parentheses, so neither may appear where it would split
 * one name into two; no control bytes; no leading '-'. */
static bool tool_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 512 || s[0] == '-' || has_control(s))
		return false;
	int depth = 0;
	for (; *s; s++) {
		if (*s == ',')
			return false;
		if (*s == '(')
			depth++;
		else if (*s == ')' && --depth < 0)
			return false;
		else if (*s == ' ' && depth == 0)
			return false;
	}
	return depth == 0;
}

static const char *const permission_modes[] = {
    "acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan",
};

static bool permission_mode_ok(const char *s)
{
	for (size_t i = 0; i < sizeof(permission_modes) / sizeof(permission_modes[0]); i++)
		if (strcmp(s, permission_modes[i]) == 0)
			return true;
	return false;
}

static int check_tools(const struct strv *tools, const char *field, struct error *err)
{
	if (!tools)
		return 0;
	for (size_t i = 0; i < tools->len; i++)
		if (!tool_ok(tools->items[i]))
			return error_set(err, ERROR_USAGE,
					 "%s[%zu]: not a tool name (no commas, control bytes, "
					 "leading '-' or spaces outside parentheses)",
					 field, i);
	return 0;
}

/* The fields Codex has no way to honour. */
static int check_codex(const struct agent_run_request *r, struct error *err)
{
	const char *field = NULL;
	if (r->max_turns)
		field = "maxTurns";
	else if (r->permission_mode)
		field = "permissionMode";
	else if (r->allowed_tools && r->allowed_tools->len)
		field = "allowedTools";
	else if (r->disallowed_tools && r->disallowed_tools->len)
		field = "disallowedTools";
	else if (r->mcp_config)
		field = "mcpServers";
	else if (r->include_partial)
		field = "includePartial";
	if (field)
		return error_set(err, ERROR_USAGE, "%s: not supported by codex", field);
	return 0;
}

static int check_request(const struct agent_run_request *r, struct error *err)
{
	if (r->command && (!r->command[0] || r->command[0] == '-' || has_control(r->command)))
		return error_set(err, ERROR_USAGE, "command: not an executable name or path");
	if (!r->prompt || !r->prompt[0])
		return error_set(err, ERROR_USAGE, "prompt: must not be empty");
	if (r->model && !model_ok(r->model))
		return error_set(err, ERROR_USAGE,
				 "model: not a model name (letters, digits and ._:@/[]-)");
	if (r->max_turns < 0 || r->max_turns > AGENT_MAX_TURNS)
		return error_set(err, ERROR_USAGE, "maxTurns: must be 1 to %d", AGENT_MAX_TURNS);
	if (r->permission_mode && !permission_mode_ok(r->permission_mode))
		return error_set(err, ERROR_USAGE,
				 "permissionMode: must be one of acceptEdits, auto, "
				 "bypassPermissions, manual, dontAsk, plan");
	if (check_tools(r->allowed_tools, "allowedTools", err) < 0 ||
	    check_tools(r->disallowed_tools, "disallowedTools", err) < 0)
		return -1;
	if (r->resume && !uuid_ok(r->resume))
		return error_set(err, ERROR_USAGE, "resume: not an agent session id (a UUID)");
	if (r->mcp_config && (r->mcp_config[0] != '/' || has_control(r->mcp_config)))
		return error_set(err, ERROR_USAGE, "mcpConfig: must be an absolute path");
	for (size_t i = 0; i < r->history_len; i++) {
		const struct agent_message *m = &r->history[i];
		if (!m->role ||
		    (strcmp(m->role, "user") != 0 && strcmp(m->role, "assistant") != 0 &&
		     strcmp(m->role, "system") != 0))
			return error_set(err, ERROR_USAGE,
					 "history[%zu].role: must be user, assistant or system", i);
		if (!m->content)
			return error_set(err, ERROR_USAGE, "history[%zu].content: missing", i);
	}
	if (r->kind == AGENT_CODEX)
		return check_codex(r, err);
	return 0;
}

char *agent_system_prompt(const struct agent_run_request *r)
{
	struct strbuf sb = STRBUF_INIT;
	bool any = false;
	if (r->system_prompt && r->system_prompt[0]) {
		strbuf_addstr(&sb, r->system_prompt);
		any = true;
	}
	for (size_t i = 0; i < r->history_len; i++) {
		const struct agent_message *m = &r->history[i];
		if (strcmp(m->role, "system") != 0 || !m->content[0])
			continue;
		if (any)
			strbuf_addch(&sb, '\n');
		strbuf_addstr(&sb, m->content);
		any = true;
	}
	bool turns = false;
	for (size_t i = 0; i < r->history_len; i++) {
		const struct agent_message *m = &r->history[i];
		if (strcmp(m->role, "system") == 0)
			continue;
		if (!turns) {
			if (any)
				strbuf_addch(&sb, '\n');
			strbuf_addstr(&sb, "\n## Conversation History:\n");
			turns = any = true;
		} else {
			strbuf_addstr(&sb, "\n\n");
		}
		strbuf_addf(&sb, "[%s]: %s", m->role, m->content);
	}
	if (!any) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

static char *join_tools(const struct strv *tools)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < tools->len; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		strbuf_addstr(&sb, tools->items[i]);
	}
	return strbuf_detach(&sb);
}

static void claude_argv(const struct agent_run_request *r, struct strv *argv)
{
	strv_push(argv, r->command ? r->command : "claude");
	strv_push(argv, "--print");
	strv_push(argv, "--output-format");
	strv_push(argv, "stream-json");
	strv_push(argv, "--verbose");
	if (r->model) {
		strv_push(argv, "--model");
		strv_push(argv, r->model);
	}
	if (r->max_turns) {
		strv_push(argv, "--max-turns");
		strv_pushf(argv, "%d", r->max_turns);
	}
	if (r->permission_mode) {
		strv_push(argv, "--permission-mode");
		strv_push(argv, r->permission_mode);
	}
	/* Both lists take several values: one comma-joined element each,
	 * ended by the next flag or by `--`. */
	if (r->allowed_tools && r->allowed_tools->len) {
		strv_push(argv, "--allowedTools");
		strv_push_owned(argv, join_tools(r->allowed_tools));
	}
	if (r->disallowed_tools && r->disallowed_tools->len) {
		strv_push(argv, "--disallowedTools");
		strv_push_owned(argv, join_tools(r->disallowed_tools));
	}
	if (r->mcp_config) {
		strv_push(argv, "--mcp-config");
		strv_push(argv, r->mcp_config);
	}
	char *system = agent_system_prompt(r);
	if (system) {
		/* A required option value is taken whole, even one that
		 * starts with '-'. */
		strv_push(argv, "--system-prompt");
		strv_push_owned(argv, system);
	}
	if (r->resume) {
		strv_push(argv, "--resume");
		strv_push(argv, r->resume);
	}
	if (r->include_partial)
		strv_push(argv, "--include-partial-messages");
	strv_push(argv, "--");
	strv_push(argv, r->prompt);
}

static void codex_argv(const struct agent_run_request *r, struct strv *argv)
{
	strv_push(argv, r->command ? r->command : "codex");
	strv_push(argv, "exec");
	strv_push(argv, "--json");
	if (r->model) {
		strv_push(argv, "--model");
		strv_push(argv, r->model);
	}
	if (r->resume) {
		strv_push(argv, "resume");
		strv_push(argv, r->resume);
	}
	strv_push(argv, "--");
	char *system = agent_system_prompt(r);
	if (system) {
		strv_push_owned(argv, xasprintf("%s\n\n## Request:\n%s", system, r->prompt));
		free(system);
	} else {
		strv_push(argv, r->prompt);
	}
}

int agent_command(const struct agent_run_request *r, struct strv *argv, struct error *err)
{
	if (check_request(r, err) < 0)
		return -1;
	if (r->kind == AGENT_CODEX)
		codex_argv(r, argv);
	else
		claude_argv(r, argv);
	return 0;
}
