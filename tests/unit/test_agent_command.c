/* Unit tests for the agent CLI command lines (agent/command.c): the argv
 * each request gives for Claude Code and Codex, the system prompt carrying
 * the history, and the refusal of every value that could become an option
 * or that Codex cannot honour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/command.h"
#include "base/cleanup.h"
#include "base/strbuf.h"
#include "unit.h"

/* argv joined with '|', for comparing with a table. */
static char *joined(const struct strv *v)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < v->len; i++) {
		if (i)
			strbuf_addch(&sb, '|');
		strbuf_addstr(&sb, v->items[i]);
	}
	return strbuf_detach(&sb);
}

static struct strv tools_a = STRV_INIT, tools_d = STRV_INIT;

static void agent_command_builds_each_cli_line(void **state)
{
	strv_push(&tools_a, "Bash(git log *)");
	strv_push(&tools_a, "mcp__srv__tool");
	strv_push(&tools_d, "Write");
	strv_push(&tools_d, "Edit");
	static const struct agent_message hist[] = {
	    {"system", "Be brief."}, {"user", "hi"}, {"assistant", "hello"}};
	const struct {
		struct agent_run_request r;
		const char *argv;
	} cases[] = {
	    {{.kind = AGENT_CLAUDE, .prompt = "say hi"},
	     "claude|--print|--output-format|stream-json|--verbose|--|say hi"},
	    {{.kind = AGENT_CLAUDE,
	      .command = "/opt/claude",
	      .prompt = "--help",
	      .model = "claude-sonnet-4-5",
	      .max_turns = 3,
	      .permission_mode = "acceptEdits",
	      .allowed_tools = &tools_a,
	      .disallowed_tools = &tools_d,
	      .mcp_config = "/run/mcp.json",
	      .system_prompt = "-You are terse.",
	      .resume = "ef71fbdb-db32-486b-9d92-5da5f7aa71c0",
	      .include_partial = true},
	     "/opt/claude|--print|--output-format|stream-json|--verbose|--model|claude-sonnet-4-5|"
	     "--max-turns|3|--permission-mode|acceptEdits|--allowedTools|Bash(git log "
	     "*),mcp__srv__tool|--disallowedTools|Write,Edit|--mcp-config|/run/mcp.json|"
	     "--system-prompt|-You are terse.|--resume|ef71fbdb-db32-486b-9d92-5da5f7aa71c0|"
	     "--include-partial-messages|--|--help"},
	    {{.kind = AGENT_CLAUDE, .prompt = "p", .history = hist, .history_len = 3},
	     "claude|--print|--output-format|stream-json|--verbose|--system-prompt|Be brief.\n\n## "
	     "Conversation History:\n[user]: hi\n\n[assistant]: hello|--|p"},
	    {{.kind = AGENT_CODEX, .prompt = "say hi"}, "codex|exec|--json|--|say hi"},
	    {{.kind = AGENT_CODEX,
	      .prompt = "-x",
	      .model = "gpt-5",
	      .system_prompt = "S",
	      .resume = "01a20ffa-1490-7a71-80ad-57c3a75d6df3"},
	     "codex|exec|--json|--model|gpt-5|resume|01a20ffa-1490-7a71-80ad-57c3a75d6df3|--|S\n\n#"
	     "# "
	     "Request:\n-x"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_strv_ struct strv argv = STRV_INIT;
		_cleanup_error_ struct error err = ERROR_INIT;
		if (agent_command(&cases[i].r, &argv, &err) < 0)
			fail_msg("case %zu refused: %s", i, err.msg);
		_cleanup_free_ char *got = joined(&argv);
		if (strcmp(got, cases[i].argv) != 0)
			fail_msg("case %zu:\n got  %s\n want %s", i, got, cases[i].argv);
	}
	strv_release(&tools_a);
	strv_release(&tools_d);
}

static void agent_system_prompt_renders_the_history_as_seed_002(void **state)
{
	static const struct agent_message only_turns[] = {{"user", "a"}, {"assistant", "b"}};
	static const struct agent_message only_system[] = {{"system", "x"}, {"system", ""}};
	const struct {
		struct agent_run_request r;
		const char *want; /* NULL: none */
	} cases[] = {
	    {{.prompt = "p"}, NULL},
	    {{.prompt = "p", .system_prompt = ""}, NULL},
	    {{.prompt = "p", .system_prompt = "base"}, "base"},
	    {{.prompt = "p", .history = only_turns, .history_len = 2},
	     "\n## Conversation History:\n[user]: a\n\n[assistant]: b"},
	    {{.prompt = "p", .system_prompt = "base", .history = only_system, .history_len = 2},
	     "base\nx"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *got = agent_system_prompt(&cases[i].r);
		if (!cases[i].want ? got != NULL : !got || strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu: got <%s>", i, got ? got : "(none)");
	}
}

static void agent_command_refuses_what_could_become_an_option(void **state)
{
	struct strv bad_tools[] = {STRV_INIT, STRV_INIT, STRV_INIT, STRV_INIT,
				   STRV_INIT, STRV_INIT, STRV_INIT};
	strv_push(&bad_tools[0], "Bash,Write");
	strv_push(&bad_tools[1], "--dangerously-skip-permissions");
	strv_push(&bad_tools[2], "Bash Write");
	strv_push(&bad_tools[3], "Bash\nWrite");
	strv_push(&bad_tools[4], "");
	strv_push(&bad_tools[5], "Bash(x))");
	strv_push(&bad_tools[6], "Read");
	strv_push(&bad_tools[6], "Bash(x");
	static const struct agent_message bad_role[] = {{"tool", "x"}};
	static const struct agent_message no_content[] = {{"user", NULL}};
	const struct {
		struct agent_run_request r;
		const char *field;
	} cases[] = {
	    {{.prompt = NULL}, "prompt"},
	    {{.prompt = ""}, "prompt"},
	    {{.prompt = "p", .command = "--x"}, "command"},
	    {{.prompt = "p", .command = ""}, "command"},
	    {{.prompt = "p", .model = "-m"}, "model"},
	    {{.prompt = "p", .model = "a b"}, "model"},
	    {{.prompt = "p", .model = ""}, "model"},
	    {{.prompt = "p", .max_turns = -1}, "maxTurns"},
	    {{.prompt = "p", .max_turns = AGENT_MAX_TURNS + 1}, "maxTurns"},
	    {{.prompt = "p", .permission_mode = "yolo"}, "permissionMode"},
	    {{.prompt = "p", .permission_mode = "--print"}, "permissionMode"},
	    {{.prompt = "p", .allowed_tools = &bad_tools[0]}, "allowedTools[0]"},
	    {{.prompt = "p", .allowed_tools = &bad_tools[1]}, "allowedTools[0]"},
	    {{.prompt = "p", .disallowed_tools = &bad_tools[2]}, "disallowedTools[0]"},
	    {{.prompt = "p", .disallowed_tools = &bad_tools[3]}, "disallowedTools[0]"},
	    {{.prompt = "p", .disallowed_tools = &bad_tools[4]}, "disallowedTools[0]"},
	    {{.prompt = "p", .disallowed_tools = &bad_tools[5]}, "disallowedTools[0]"},
	    {{.prompt = "p", .allowed_tools = &bad_tools[6]}, "allowedTools[1]"},
	    {{.prompt = "p", .resume = "--continue"}, "resume"},
	    {{.prompt = "p", .resume = "ef71fbdb-db32-486b-9d92-5da5f7aa71cZ"}, "resume"},
	    {{.prompt = "p", .resume = "ef71fbdb-db32-486b-9d92-5da5f7aa71c0x"}, "resume"},
	    {{.prompt = "p", .mcp_config = "-x.json"}, "mcpConfig"},
	    {{.prompt = "p", .history = bad_role, .history_len = 1}, "history[0].role"},
	    {{.prompt = "p", .history = no_content, .history_len = 1}, "history[0].content"},
	    /* What Codex cannot honour is refused, not ignored. */
	    {{.kind = AGENT_CODEX, .prompt = "p", .max_turns = 2}, "maxTurns"},
	    {{.kind = AGENT_CODEX, .prompt = "p", .permission_mode = "plan"}, "permissionMode"},
	    {{.kind = AGENT_CODEX, .prompt = "p", .allowed_tools = &bad_tools[6]}, "allowedTools"},
	    {{.kind = AGENT_CODEX, .prompt = "p", .disallowed_tools = &bad_tools[6]},
	     "disallowedTools"},
	    {{.kind = AGENT_CODEX, .prompt = "p", .mcp_config = "/m.json"}, "mcpServers"},
	    {{.kind = AGENT_CODEX, .prompt = "p", .include_partial = true}, "includePartial"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strv argv = STRV_INIT;
		_cleanup_error_ struct error err = ERROR_INIT;
		if (agent_command(&cases[i].r, &argv, &err) == 0)
			fail_msg("case %zu (%s) accepted", i, cases[i].field);
		assert_int_equal(err.kind, ERROR_USAGE);
		unit_assert_starts_with(err.msg, cases[i].field, "case %zu", i);
		assert_int_equal(argv.len, 0);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad_tools); i++)
		strv_release(&bad_tools[i]);
}

static void agent_kind_parse_knows_two_agents(void **state)
{
	enum agent_kind k;
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(agent_kind_parse("codex", &k, &err), 0);
	assert_int_equal(k, AGENT_CODEX);
	assert_string_equal(agent_kind_name(k), "codex");
	assert_int_equal(agent_kind_parse("claude", &k, &err), 0);
	assert_int_equal(k, AGENT_CLAUDE);
	assert_int_equal(agent_kind_parse("Claude", &k, &err), -1);
	assert_int_equal(err.kind, ERROR_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(agent_command_builds_each_cli_line),
	    cmocka_unit_test(agent_system_prompt_renders_the_history_as_seed_002),
	    cmocka_unit_test(agent_command_refuses_what_could_become_an_option),
	    cmocka_unit_test(agent_kind_parse_knows_two_agents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
