/* Unit tests for the command line: verbs, flags and where the sandboxed
 * command starts; every usage error names what was wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "cli/flags.h"
#include "base/strbuf.h"
#include "unit.h"

#define MAX_ARGS 10

static int argc_of(char *const *argv)
{
	int n = 0;
	while (argv[n])
		n++;
	return n;
}

/* "a b c" for messages and comparisons; "" for an empty command. */
static char *joined(char *const *words)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; words[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", words[i]);
	return strbuf_detach(&sb);
}

static const char *verb_name(enum verb v)
{
	static const char *const names[] = {"run",   "check", "policy",	 "doctor",
					    "trust", "log",   "version", "help"};
	return (size_t)v < ARRAY_SIZE(names) ? names[v] : "?";
}

static void cli_parses_verbs_and_finds_the_command(void **state)
{
	static const struct {
		char *argv[MAX_ARGS];
		enum verb verb;
		const char *command;
	} cases[] = {
	    {{"bash"}, VERB_RUN, "bash"},
	    {{"npm", "install", "--help"}, VERB_RUN, "npm install --help"},
	    {{"ls", "--docker", "-C", "/x"}, VERB_RUN, "ls --docker -C /x"},
	    {{"exec", "ls", "-l"}, VERB_RUN, "ls -l"},
	    {{"exec", "--", "check"}, VERB_RUN, "check"},
	    {{"exec", "policy"}, VERB_RUN, "policy"},
	    {{"--", "exec"}, VERB_RUN, "exec"},
	    {{"--", "policy", "x"}, VERB_RUN, "policy x"},
	    {{"--", "--help"}, VERB_RUN, "--help"},
	    {{"-", "x"}, VERB_RUN, "- x"},
	    {{"check"}, VERB_CHECK, ""},
	    {{"--check"}, VERB_CHECK, ""},
	    {{"policy"}, VERB_POLICY, ""},
	    {{"--ro", "/a", "policy", "--rw", "/b"}, VERB_POLICY, ""},
	    {{"version"}, VERB_VERSION, ""},
	    {{"--version"}, VERB_VERSION, ""},
	    {{"-v"}, VERB_VERSION, ""},
	    {{"help"}, VERB_HELP, ""},
	    {{"--help"}, VERB_HELP, ""},
	    {{"-h"}, VERB_HELP, ""},
	    {{"--debug", "-h"}, VERB_HELP, ""},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[MAX_ARGS + 2] = {"agent-sandbox"};
		memcpy(argv + 1, cases[i].argv, sizeof(cases[i].argv));
		_cleanup_(cli_release) struct cli cli;
		_cleanup_error_ struct error err = ERROR_INIT;
		_cleanup_free_ char *args = joined(argv + 1);
		if (cli_parse(argc_of(argv), argv, &cli, &err) != 0)
			unit_fail("case %zu <%s>: %s", i, args, err.msg);
		_cleanup_free_ char *command = joined(cli.command);
		if (cli.verb != cases[i].verb)
			unit_fail("case %zu <%s>: verb %s, expected %s", i, args,
				  verb_name(cli.verb), verb_name(cases[i].verb));
		if (strcmp(command, cases[i].command) != 0)
			unit_fail("case %zu <%s>: command <%s>, expected <%s>", i, args, command,
				  cases[i].command);
	}
}

static void cli_parses_flag_values_in_every_spelling(void **state)
{
	static const struct {
		char *argv[MAX_ARGS];
		const char *cwd;
		const char *config;
		enum tristate network, docker, read_only;
		bool dry_run, debug;
	} cases[] = {
	    {{"ls"}, NULL, NULL, UNSET, UNSET, UNSET, false, false},
	    {{"-C", "/w", "ls"}, "/w", NULL, UNSET, UNSET, UNSET, false, false},
	    {{"--cwd", "/w", "ls"}, "/w", NULL, UNSET, UNSET, UNSET, false, false},
	    {{"--cwd=/w", "ls"}, "/w", NULL, UNSET, UNSET, UNSET, false, false},
	    {{"-C/w", "ls"}, "/w", NULL, UNSET, UNSET, UNSET, false, false},
	    {{"-C", "/a", "-C", "/b", "ls"}, "/b", NULL, UNSET, UNSET, UNSET, false, false},
	    {{"-c", "my.jsonc", "ls"}, NULL, "my.jsonc", UNSET, UNSET, UNSET, false, false},
	    {{"--config=x.json", "ls"}, NULL, "x.json", UNSET, UNSET, UNSET, false, false},
	    {{"--network=false", "ls"}, NULL, NULL, NO, UNSET, UNSET, false, false},
	    {{"--network=true", "ls"}, NULL, NULL, YES, UNSET, UNSET, false, false},
	    {{"--network=0", "ls"}, NULL, NULL, NO, UNSET, UNSET, false, false},
	    {{"--network=1", "ls"}, NULL, NULL, YES, UNSET, UNSET, false, false},
	    {{"--docker", "ls"}, NULL, NULL, UNSET, YES, UNSET, false, false},
	    {{"--docker=false", "ls"}, NULL, NULL, UNSET, NO, UNSET, false, false},
	    {{"--docker=true", "--docker=0", "ls"}, NULL, NULL, UNSET, NO, UNSET, false, false},
	    {{"--read-only", "ls"}, NULL, NULL, UNSET, UNSET, YES, false, false},
	    {{"--read-only=0", "ls"}, NULL, NULL, UNSET, UNSET, NO, false, false},
	    {{"--read-only=1", "ls"}, NULL, NULL, UNSET, UNSET, YES, false, false},
	    {{"--dry-run", "--debug", "ls"}, NULL, NULL, UNSET, UNSET, UNSET, true, true},
	    {{"--dry-run=true", "--debug=false", "ls"},
	     NULL,
	     NULL,
	     UNSET,
	     UNSET,
	     UNSET,
	     true,
	     false},
	    /* A bool flag does not take the next word: that is the command. */
	    {{"--docker", "false"}, NULL, NULL, UNSET, YES, UNSET, false, false},
	    {{"exec", "--read-only", "-C", "/w", "ls"},
	     "/w",
	     NULL,
	     UNSET,
	     UNSET,
	     YES,
	     false,
	     false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[MAX_ARGS + 2] = {"agent-sandbox"};
		memcpy(argv + 1, cases[i].argv, sizeof(cases[i].argv));
		_cleanup_(cli_release) struct cli cli;
		_cleanup_error_ struct error err = ERROR_INIT;
		_cleanup_free_ char *args = joined(argv + 1);
		if (cli_parse(argc_of(argv), argv, &cli, &err) != 0)
			unit_fail("case %zu <%s>: %s", i, args, err.msg);
		if ((cli.cwd == NULL) != (cases[i].cwd == NULL) ||
		    (cli.cwd && strcmp(cli.cwd, cases[i].cwd)))
			unit_fail("case %zu <%s>: cwd <%s>", i, args, cli.cwd);
		if ((cli.config_path == NULL) != (cases[i].config == NULL) ||
		    (cli.config_path && strcmp(cli.config_path, cases[i].config)))
			unit_fail("case %zu <%s>: config <%s>", i, args, cli.config_path);
		if (cli.network != cases[i].network || cli.docker != cases[i].docker ||
		    cli.read_only != cases[i].read_only)
			unit_fail("case %zu <%s>: network %d docker %d read-only %d", i, args,
				  cli.network, cli.docker, cli.read_only);
		if (cli.dry_run != cases[i].dry_run || cli.debug != cases[i].debug)
			unit_fail("case %zu <%s>: dry-run %d debug %d", i, args, cli.dry_run,
				  cli.debug);
		if (cli.rules.len != 0)
			unit_fail("case %zu <%s>: %zu rules", i, args, cli.rules.len);
	}
}

static void cli_collects_repeated_path_rules_in_order(void **state)
{
	char *argv[] = {
	    "agent-sandbox", "--ro", "a", "--rw", "b",	  "--exclude", "~/.kube", "--ro=src/*.c",
	    "--exclude=c",   "--rw", "d", "ls",	  "--ro", "x",	       NULL};
	static const struct {
		const char *pattern;
		enum access_level level;
		const char *origin;
	} expected[] = {
	    {"a", ACCESS_RO, "--ro"},
	    {"b", ACCESS_RW, "--rw"},
	    {"~/.kube", ACCESS_EXCLUDE, "--exclude"},
	    {"src/*.c", ACCESS_RO, "--ro"},
	    {"c", ACCESS_EXCLUDE, "--exclude"},
	    {"d", ACCESS_RW, "--rw"},
	};
	_cleanup_(cli_release) struct cli cli;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (cli_parse(argc_of(argv), argv, &cli, &err) != 0)
		unit_fail("%s", err.msg);
	assert_int_equal(cli.rules.len, ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		const struct rule *r = &cli.rules.items[i];
		if (strcmp(r->pattern, expected[i].pattern) || r->level != expected[i].level ||
		    r->layer != LAYER_CLI || strcmp(r->origin, expected[i].origin))
			unit_fail("rule %zu: %s %s (%s, %s), expected %s %s (cli, %s)", i,
				  access_level_name(r->level), r->pattern, layer_name(r->layer),
				  r->origin, access_level_name(expected[i].level),
				  expected[i].pattern, expected[i].origin);
	}
	_cleanup_free_ char *command = joined(cli.command);
	assert_string_equal(command, "ls --ro x");
}

static void cli_rejects_bad_usage_naming_the_problem(void **state)
{
	static const struct {
		char *argv[MAX_ARGS];
		const char *message;
		const char *hint; /* NULL: not checked */
	} cases[] = {
	    {{NULL}, "missing the command to run", NULL},
	    {{"--debug"}, "missing the command to run", NULL},
	    {{"exec"}, "exec: missing the command to run", NULL},
	    {{"exec", "--"}, "exec: missing the command to run", NULL},
	    {{"--frobnicate", "ls"}, "unknown flag \"--frobnicate\"", NULL},
	    {{"--netwrk=false", "ls"},
	     "unknown flag \"--netwrk=false\"",
	     "did you mean --network?"},
	    {{"--exlcude", "x", "ls"}, "unknown flag \"--exlcude\"", "did you mean --exclude?"},
	    {{"-x", "ls"}, "unknown flag \"-x\"", NULL},
	    {{"-vx"}, "unknown flag \"-vx\"", NULL},
	    {{"exec", "--bogus", "ls"}, "unknown flag \"--bogus\"", NULL},
	    {{"--network", "ls"}, "flag --network needs a value: --network=", NULL},
	    {{"--network", "false", "ls"}, "flag --network needs a value: --network=", NULL},
	    {{"--network=maybe", "ls"},
	     "flag --network: invalid value \"maybe\" (expected true, false, 1 or 0)",
	     NULL},
	    {{"--network=", "ls"}, "flag --network: invalid value \"\"", NULL},
	    {{"--docker=yes", "ls"}, "flag --docker: invalid value \"yes\"", NULL},
	    {{"--read-only=", "ls"}, "flag --read-only: invalid value \"\"", NULL},
	    {{"--read-only=strictly", "ls"},
	     "flag --read-only: invalid value \"strictly\"",
	     "--read-only=strict also makes the agent's state read-only"},
	    {{"--agent"}, "flag --agent needs a value (an agent profile name, or none)", NULL},
	    {{"--agent=", "ls"}, "flag --agent: the value must not be empty", NULL},
	    {{"--check=true"}, "flag --check does not take a value", NULL},
	    {{"--help=1"}, "flag --help does not take a value", NULL},
	    {{"--ro"}, "flag --ro needs a value (a path)", NULL},
	    {{"-C"}, "flag -C needs a value (a directory)", NULL},
	    {{"--config"}, "flag --config needs a value (a config file)", NULL},
	    {{"--rw", "", "ls"}, "flag --rw: the value must not be empty", NULL},
	    {{"--cwd=", "ls"}, "flag --cwd: the value must not be empty", NULL},
	    {{"--exclude", "a/**", "ls"}, "flag --exclude: invalid glob \"a/**\"", NULL},
	    {{"--ro", "[x", "ls"}, "flag --ro: invalid glob \"[x\"", NULL},
	    {{"--cmd", "git", "ls"}, "flag --cmd: \"git\" is not NAME=VALUE", NULL},
	    {{"--allow-host", "a.*.com", "ls"},
	     "flag --allow-host: host pattern \"a.*.com\": \"*\" may only stand alone or as the "
	     "first label",
	     NULL},
	    {{"--allow-host", "@agent", "ls"},
	     "flag --allow-host: unknown host group \"@agent\"",
	     NULL},
	    {{"--allow-host=x.com", "--network=true", "ls"},
	     "--allow-host cannot be combined with --network=true",
	     "drop --network"},
	    {{"policy", "ls"}, "policy takes only flags, not \"ls\"", NULL},
	    {{"check", "x"}, "unexpected argument \"x\"", NULL},
	    {{"--version", "x"}, "unexpected argument \"x\"", NULL},
	    {{"doctor", "x"}, "doctor takes no arguments, not \"x\"", NULL},
	    {{"trust", "a", "b"}, "trust takes one config file or directory, not \"b\" too", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[MAX_ARGS + 2] = {"agent-sandbox"};
		memcpy(argv + 1, cases[i].argv, sizeof(cases[i].argv));
		_cleanup_(cli_release) struct cli cli;
		_cleanup_error_ struct error err = ERROR_INIT;
		_cleanup_free_ char *args = joined(argv + 1);
		char what[128];
		snprintf(what, sizeof(what), "case %zu <%s>", i, args);
		if (cli_parse(argc_of(argv), argv, &cli, &err) != -1)
			unit_fail("%s: accepted", what);
		if (err.kind != ERROR_USAGE && err.kind != ERROR_CONFIG)
			unit_fail("%s: code %d, expected %d", what, (int)err.kind,
				  (int)ERROR_USAGE);
		unit_assert_starts_with(err.msg, cases[i].message, "%s", what);
		if (cases[i].hint)
			unit_assert_contains(err.hint, cases[i].hint, "%s", what);
	}
}

static void cli_takes_an_agent_and_strict_read_only(void **state)
{
	char *argv[] = {"agent-sandbox", "--read-only=strict", "--agent", "codex", "ls", NULL};
	_cleanup_(cli_release) struct cli cli;
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(cli_parse(argc_of(argv), argv, &cli, &err), 0);
	assert_int_equal(cli.read_only, YES);
	assert_true(cli.read_only_strict);
	assert_string_equal(cli.agent, "codex");
	assert_string_equal(cli.command[0], "ls");

	/* A later --read-only takes the strictness back. */
	char *again[] = {"agent-sandbox", "--read-only=strict", "--read-only", "ls", NULL};
	_cleanup_(cli_release) struct cli cli2;
	assert_int_equal(cli_parse(argc_of(again), again, &cli2, &err), 0);
	assert_int_equal(cli2.read_only, YES);
	assert_false(cli2.read_only_strict);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(cli_parses_verbs_and_finds_the_command),
	    cmocka_unit_test(cli_parses_flag_values_in_every_spelling),
	    cmocka_unit_test(cli_collects_repeated_path_rules_in_order),
	    cmocka_unit_test(cli_rejects_bad_usage_naming_the_problem),
	    cmocka_unit_test(cli_takes_an_agent_and_strict_read_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
