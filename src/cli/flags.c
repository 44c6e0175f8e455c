/* This file decides what the command line means. It only parses: paths are
 * checked later, when the configuration is resolved. */
#include "cli/flags.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "config/config.h"
#include "net/host_groups.h"
#include "net/host_match.h"
#include "policy/pattern.h"
#include "base/suggest.h"
#include "base/xalloc.h"
#include "workspace/instance.h"
#include "workspace/shelf.h"

const char cli_usage[] =
    "usage: agent-sandbox [flags] [--] CMD [ARGS...]   run CMD in the sandbox\n"
    "       agent-sandbox exec [flags] [--] CMD...     the same, explicitly\n"
    "       agent-sandbox check | --check              tell whether this runs inside a sandbox\n"
    "       agent-sandbox policy [flags]               print the resolved access table\n"
    "       agent-sandbox log [--json] [--blocked] [-n N]   read the audit log\n"
    "       agent-sandbox trust [PATH]                 approve a project config that loosens\n"
    "       agent-sandbox doctor                       check the host and prove the policy\n"
    "       agent-sandbox list [--json]                the running sandboxes of this user\n"
    "       agent-sandbox stop NAME...|--all [--timeout SECONDS]\n"
    "                                                  end sandboxes: SIGTERM to every process,\n"
    "                                                  SIGKILL after the grace (default 10 s)\n"
    "       agent-sandbox exec-into NAME [--] CMD...   run CMD inside the running sandbox NAME\n"
    "       agent-sandbox serve [--socket PATH|--stdio]   the executor API for platforms\n"
    "       agent-sandbox rpc [--socket PATH] [--owner NAME] [--follow] METHOD [JSON|-]\n"
    "                                           one call to the executor API\n"
    "       agent-sandbox mcp-bridge NAME              inside a session: its MCP server NAME\n"
    "       agent-sandbox --branch NAME [--from REF] CMD...   run CMD in a worktree of\n"
    "                                                  this repository for branch NAME\n"
    "       agent-sandbox checkout NAME [--from REF]   make that worktree; print its path\n"
    "       agent-sandbox branches [--json]            this repository's worktrees, last use\n"
    "       agent-sandbox gc [--older-than 7d] [--dry-run] [--force]\n"
    "                                                  remove worktrees unused for that long\n"
    "       agent-sandbox version | --version | -v\n"
    "       agent-sandbox help | --help | -h\n"
    "\n"
    "flags:\n"
    "  -C, --cwd PATH          run as if started in PATH\n"
    "  -c, --config PATH       use this config file instead of the project config\n"
    "      --ro PATH           make PATH read-only (repeatable; globs allowed)\n"
    "      --rw PATH           make PATH writable (repeatable; globs allowed)\n"
    "      --exclude PATH      hide the contents of PATH (repeatable; globs allowed)\n"
    "      --cmd NAME=VALUE    wrap a command: true (raw), false (blocked), @git, or a\n"
    "                          script path (repeatable, or comma-separated)\n"
    "      --network=MODE      true: host network; false: no network; default: filtered\n"
    "      --allow-host HOST   let the filtered network reach HOST (repeatable;\n"
    "                          \"*.example.com\" for subdomains, @group for a group)\n"
    "      --docker            expose the Docker socket (hidden by default)\n"
    "      --socket PATH       let the command reach the host's unix socket at PATH\n"
    "                          (repeatable; every other is hidden)\n"
    "      --read-only[=strict]\n"
    "                          nothing is writable except private temp dirs and the\n"
    "                          agent profile's state (strict: not even that)\n"
    "      --agent NAME        apply the agent profile NAME (claude, codex, gemini,\n"
    "                          opencode, aider, goose, pi), or none; by default the\n"
    "                          command's name picks one\n"
    "      --dry-run           print the bwrap command, one argument per line, and exit\n"
    "      --debug             explain every decision on stderr\n"
    "      --allow-degraded    run even when a protection layer the kernel lacks\n"
    "                          (Landlock) cannot be applied; recorded in the audit log\n"
    "      --env NAME[=VALUE]  pass NAME through (a glob), or set it (repeatable)\n"
    "      --env-block PATTERN drop variables whose names match (repeatable)\n"
    "      --credential NAME   inject the key of credential NAME (anthropic, openai,\n"
    "                          github, or one in \"credentials\"): the command gets a\n"
    "                          placeholder and a local endpoint, never the key (repeatable)\n"
    "      --localhost PORT    let the command reach the host's loopback PORT\n"
    "                          (repeatable; like network.localhost)\n"
    "      --resolve NAME=ADDR[:PORT]  pin NAME to ADDR (repeatable; like network.resolve)\n"
    "      --name NAME         name the running sandbox for list and stop (default: the\n"
    "                          project directory's name, made unique)\n"
    "\n"
    "limits (they only tighten what the config allows):\n"
    "      --memory SIZE       memory of the whole sandbox (512m, 4g; k, m, g, t)\n"
    "      --cpus N            CPU time as a number of CPUs (2, 0.5)\n"
    "      --pids N            processes and threads at once\n"
    "      --timeout DURATION  end the sandbox after DURATION (90s, 10m; ms, s, m, h):\n"
    "                          SIGTERM to every process, SIGKILL 5s later, exit 124\n"
    "      --tmp-size SIZE     size of the private /tmp\n"
    "\n"
    "log flags (agent-sandbox log [--json] [--blocked] [-n N]):\n"
    "      --json              print the audit records as they are stored\n"
    "      --blocked           only denials\n"
    "  -n N                    only the last N records\n"
    "\n"
    "Flags stop at the first word that is not a flag: `agent-sandbox npm test --help`\n"
    "passes --help to npm. Config: ~/.config/agent-sandbox/config.jsonc (global) and\n"
    ".agent-sandbox.jsonc in the working directory (project).\n";

enum flag_id {
	F_CWD,
	F_CONFIG,
	F_RO,
	F_RW,
	F_EXCLUDE,
	F_CMD,
	F_NETWORK,
	F_ALLOW_DEGRADED,
	F_ALLOW_HOST,
	F_DOCKER,
	F_SOCKET,
	F_READ_ONLY,
	F_AGENT,
	F_DRY_RUN,
	F_DEBUG,
	F_CHECK,
	F_VERSION,
	F_HELP,
	F_ENV,
	F_ENV_BLOCK,
	F_JSON,
	F_BLOCKED,
	F_LAST,
	F_CREDENTIAL,
	F_LOCALHOST,
	F_RESOLVE,
	F_NAME,
	F_BRANCH,
	F_FROM,
	F_OLDER_THAN,
	F_FORCE,
	F_MEMORY,
	F_CPUS,
	F_PIDS,
	F_TIMEOUT,
	F_TMP_SIZE,
};

enum flag_arg {
	ARG_NONE,     /* --check */
	ARG_BOOL,     /* --docker, --docker=false */
	ARG_REQUIRED, /* --ro PATH, --ro=PATH */
	ARG_ATTACHED, /* --network=MODE only */
};

static const struct flag {
	const char *name;
	char short_name;
	enum flag_arg arg;
	enum flag_id id;
	const char *value_name;
} flags[] = {
    {"cwd", 'C', ARG_REQUIRED, F_CWD, "a directory"},
    {"config", 'c', ARG_REQUIRED, F_CONFIG, "a config file"},
    {"ro", 0, ARG_REQUIRED, F_RO, "a path"},
    {"rw", 0, ARG_REQUIRED, F_RW, "a path"},
    {"exclude", 0, ARG_REQUIRED, F_EXCLUDE, "a path"},
    {"cmd", 0, ARG_REQUIRED, F_CMD, "NAME=VALUE"},
    {"network", 0, ARG_ATTACHED, F_NETWORK, "true or false"},
    {"allow-host", 0, ARG_REQUIRED, F_ALLOW_HOST, "a host name"},
    {"docker", 0, ARG_BOOL, F_DOCKER, NULL},
    {"socket", 0, ARG_REQUIRED, F_SOCKET, "a socket path"},
    {"read-only", 0, ARG_BOOL, F_READ_ONLY, NULL},
    {"agent", 0, ARG_REQUIRED, F_AGENT, "an agent profile name, or none"},
    {"dry-run", 0, ARG_BOOL, F_DRY_RUN, NULL},
    {"debug", 0, ARG_BOOL, F_DEBUG, NULL},
    {"allow-degraded", 0, ARG_BOOL, F_ALLOW_DEGRADED, NULL},
    {"check", 0, ARG_NONE, F_CHECK, NULL},
    {"version", 'v', ARG_NONE, F_VERSION, NULL},
    {"help", 'h', ARG_NONE, F_HELP, NULL},
    {"env", 0, ARG_REQUIRED, F_ENV, "NAME or NAME=VALUE"},
    {"env-block", 0, ARG_REQUIRED, F_ENV_BLOCK, "a name pattern"},
    {"json", 0, ARG_NONE, F_JSON, NULL},
    {"blocked", 0, ARG_NONE, F_BLOCKED, NULL},
    {"last", 'n', ARG_REQUIRED, F_LAST, "a number of records"},
    {"credential", 0, ARG_REQUIRED, F_CREDENTIAL, "a credential name"},
    {"localhost", 0, ARG_REQUIRED, F_LOCALHOST, "a port number"},
    {"resolve", 0, ARG_REQUIRED, F_RESOLVE, "NAME=ADDR[:PORT]"},
    {"name", 0, ARG_REQUIRED, F_NAME, "a sandbox name"},
    {"branch", 0, ARG_REQUIRED, F_BRANCH, "a branch name"},
    {"from", 0, ARG_REQUIRED, F_FROM, "a branch, tag or commit"},
    {"older-than", 0, ARG_REQUIRED, F_OLDER_THAN, "a duration such as 7d"},
    {"force", 0, ARG_NONE, F_FORCE, NULL},
    {"memory", 0, ARG_REQUIRED, F_MEMORY, "a size like 512m"},
    {"cpus", 0, ARG_REQUIRED, F_CPUS, "a number of CPUs like 2 or 0.5"},
    {"pids", 0, ARG_REQUIRED, F_PIDS, "a number of processes"},
    {"timeout", 0, ARG_REQUIRED, F_TIMEOUT, "a duration like 90s"},
    {"tmp-size", 0, ARG_REQUIRED, F_TMP_SIZE, "a size like 2g"},
};

static const struct {
	const char *word;
	enum verb verb;
	bool takes_flags; /* flags may follow the verb */
} verbs[] = {
    {"exec", VERB_RUN, true},
    {"check", VERB_CHECK, false},
    {"policy", VERB_POLICY, true},
    {"doctor", VERB_DOCTOR, false},
    {"log", VERB_LOG, true},
    {"version", VERB_VERSION, false},
    {"help", VERB_HELP, false},
    {"trust", VERB_TRUST, false},
    /* list and stop read their own arguments (cli->command). */
    {"list", VERB_LIST, false},
    {"stop", VERB_STOP, false},
    {"exec-into", VERB_EXEC_INTO, false},
    {"checkout", VERB_CHECKOUT, true},
    {"branches", VERB_BRANCHES, true},
    {"gc", VERB_GC, true},
    /* serve and rpc read their own arguments (cli->command). */
    {"serve", VERB_SERVE, false},
    {"rpc", VERB_RPC, false},
    {"mcp-bridge", VERB_MCP_BRIDGE, false},
};

static int parse_bool(const char *flag, const char *value, bool *out, struct error *err)
{
	if (!strcmp(value, "true") || !strcmp(value, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(value, "false") || !strcmp(value, "0")) {
		*out = false;
		return 0;
	}
	return error_set(err, ERROR_USAGE,
			 "flag %s: invalid value \"%s\" (expected true, false, 1 or 0)", flag,
			 value);
}

static const struct flag *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len))
			return &flags[i];
	return NULL;
}

static const struct flag *find_short(char c)
{
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if (flags[i].short_name && flags[i].short_name == c)
			return &flags[i];
	return NULL;
}

static int unknown_flag(const char *arg, struct error *err)
{
	const char *names[ARRAY_SIZE(flags)];
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		names[i] = flags[i].name;
	const char *bare = arg + strspn(arg, "-");
	_cleanup_free_ char *name = xstrndup(bare, strcspn(bare, "="));
	const char *nearest = suggest_nearest(name, names, ARRAY_SIZE(names));
	error_set(err, ERROR_USAGE, "unknown flag \"%s\"", arg);
	if (nearest)
		error_hint(err,
			   "did you mean --%s? (agent-sandbox --help lists the flags; to pass "
			   "a flag to a program, put it after the program's name)",
			   nearest);
	else
		error_hint(err,
			   "agent-sandbox --help lists the flags; to pass a flag to a program, "
			   "put it after the program's name");
	return -1;
}

static const char *verb_name(enum verb verb)
{
	for (size_t v = 0; v < ARRAY_SIZE(verbs); v++)
		if (verbs[v].verb == verb)
			return verbs[v].word;
	return "?";
}

/* Help wins over everything (`agent-sandbox policy --help`); two other
 * verbs cannot be combined. */
static int set_verb(struct cli *cli, bool *verb_set, enum verb verb, struct error *err)
{
	if (*verb_set && cli->verb != verb && cli->verb != VERB_HELP && verb != VERB_HELP) {
		error_set(err, ERROR_USAGE, "%s cannot be combined with %s", verb_name(verb),
			  verb_name(cli->verb));
		error_hint(err, "give one of them; to pass a flag to a program, put it after "
				"the program's name");
		return -1;
	}
	if (!*verb_set || verb == VERB_HELP)
		cli->verb = verb;
	*verb_set = true;
	return 0;
}

static int add_rule(struct cli *cli, const char *flag, const char *value, enum access_level level,
		    struct error *err)
{
	_cleanup_error_ struct error perr = ERROR_INIT;
	if (pattern_validate(value, &perr) < 0)
		return error_set(err, ERROR_USAGE, "flag %s: %s", flag, perr.msg);
	rule_list_add(&cli->rules, value, level, LAYER_CLI, flag);
	return 0;
}

static int add_env(struct cli *cli, const char *flag, const char *value, struct error *err)
{
	const char *eq = strchr(value, '=');
	_cleanup_free_ char *name = xstrndup(value, eq ? (size_t)(eq - value) : strlen(value));
	_cleanup_error_ struct error perr = ERROR_INIT;
	if (eq && (!*name || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					  "0123456789_") != strlen(name)))
		return error_set(err, ERROR_USAGE,
				 "flag %s %s: \"%s\" is not a variable name (letters, digits "
				 "and \"_\")",
				 flag, value, name);
	if (!eq && pattern_validate_name(name, &perr) < 0)
		return error_set(err, ERROR_USAGE, "flag %s: %s", flag, perr.msg);
	if (eq)
		strv_push(&cli->env_set, value);
	else if (!strcmp(flag, "--env"))
		strv_push(&cli->env_allow, value);
	else
		strv_push(&cli->env_block, value);
	return 0;
}

static int parse_count(const char *flag, const char *value, long *out, struct error *err)
{
	char *end = NULL;
	errno = 0;
	long n = strtol(value, &end, 10);
	if (errno || end == value || *end || n < 0)
		return error_set(err, ERROR_USAGE,
				 "flag %s: invalid value \"%s\" (expected a number of records, "
				 "0 or more)",
				 flag, value);
	*out = n;
	return 0;
}

/* --memory, --cpus, --pids, --timeout, --tmp-size: the config's grammar
 * and bounds, an error naming the flag otherwise. */
static int parse_limit(struct cli *cli, enum flag_id id, const char *flag, const char *value,
		       struct error *err)
{
	static const struct {
		enum flag_id id;
		const char *key;
		size_t offset;
	} map[] = {
	    {F_MEMORY, "memory", offsetof(struct limit_request, memory)},
	    {F_CPUS, "cpus", offsetof(struct limit_request, cpus)},
	    {F_PIDS, "pids", offsetof(struct limit_request, pids)},
	    {F_TIMEOUT, "timeout", offsetof(struct limit_request, timeout)},
	    {F_TMP_SIZE, "tmp", offsetof(struct limit_request, tmp)},
	};
	size_t i = 0;
	while (map[i].id != id)
		i++;
	unsigned long long v = 0;
	const char *why = NULL, *expected = NULL;
	if (!config_limit_parse(map[i].key, value, &v, &why, &expected))
		return error_set(err, ERROR_USAGE,
				 "flag %s: invalid value \"%s\": %s (expected %s)", flag, value,
				 why, expected);
	*(unsigned long long *)((char *)&cli->limits + map[i].offset) = v;
	return 0;
}

static int add_allow_host(struct cli *cli, const char *value, struct error *err)
{
	_cleanup_error_ struct error herr = ERROR_INIT;
	if (value[0] == '@' ? !host_group_lookup(value) : host_pattern_validate(value, &herr) < 0) {
		if (value[0] == '@')
			return error_set(err, ERROR_USAGE,
					 "flag --allow-host: unknown host group \"%s\" (known "
					 "groups: @agents, @registries, @git-hosts)",
					 value);
		return error_set(err, ERROR_USAGE, "flag --allow-host: %s", herr.msg);
	}
	strv_push(&cli->allow_hosts, value);
	return 0;
}

/* --credential, --localhost and --resolve: the network flags of the user's
 * own, needing no trust. Values are checked here, so a typo is a usage
 * error naming the expected form. */
static int add_network_flag(struct cli *cli, enum flag_id id, const char *value, struct error *err)
{
	if (id == F_CREDENTIAL) {
		if (strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(value) ||
		    strlen(value) > 32)
			return error_set(
			    err, ERROR_USAGE,
			    "flag --credential %s: expected a credential name "
			    "(anthropic, openai, github, or a name from \"credentials\" "
			    "in your global config)",
			    value);
		strv_push(&cli->credentials, value);
		return 0;
	}
	if (id == F_LOCALHOST) {
		char *end = NULL;
		errno = 0;
		long port = strtol(value, &end, 10);
		if (errno || end == value || *end || port < 1 || port > 65535)
			return error_set(err, ERROR_USAGE,
					 "flag --localhost %s: expected a port number from 1 to "
					 "65535, like --localhost 5432",
					 value);
		strv_pushf(&cli->localhost, "%ld", port);
		return 0;
	}
	_cleanup_free_ char *name = NULL, *pin = NULL;
	unsigned port = 0;
	if (!config_parse_resolve_flag(value, &name, &pin, &port))
		return error_set(
		    err, ERROR_USAGE,
		    "flag --resolve %s: expected NAME=ADDR[:PORT] with a host name and "
		    "an IPv4 or IPv6 address, like --resolve api.example.com=127.0.0.1:8443 "
		    "or --resolve db.internal=[::1]:5432",
		    value);
	strv_push(&cli->resolve, value);
	return 0;
}

static int apply_flag(struct cli *cli, const struct flag *f, const char *shown, const char *value,
		      bool *verb_set, struct error *err)
{
	bool b = true;
	/* --read-only=strict: read-only, agents' state included. */
	bool strict = f->id == F_READ_ONLY && value && !strcmp(value, "strict");
	if (f->arg == ARG_BOOL && value && !strict && parse_bool(shown, value, &b, err) < 0) {
		if (f->id == F_READ_ONLY)
			error_hint(err,
				   "--read-only=strict also makes the agent's state read-only");
		return -1;
	}
	if (f->arg == ARG_REQUIRED && !*value)
		return error_set(err, ERROR_USAGE, "flag %s: the value must not be empty", shown);

	switch (f->id) {
	case F_CWD:
		free(cli->cwd);
		cli->cwd = xstrdup(value);
		return 0;
	case F_CONFIG:
		free(cli->config_path);
		cli->config_path = xstrdup(value);
		return 0;
	case F_RO:
		return add_rule(cli, "--ro", value, ACCESS_RO, err);
	case F_RW:
		return add_rule(cli, "--rw", value, ACCESS_RW, err);
	case F_EXCLUDE:
		return add_rule(cli, "--exclude", value, ACCESS_EXCLUDE, err);
	case F_CMD:
		return command_table_parse_flag(&cli->commands, value, err);
	case F_ALLOW_HOST:
		return add_allow_host(cli, value, err);
	case F_NETWORK:
		if (parse_bool(shown, value, &b, err) < 0) {
			error_hint(err, "--network=true is the host network, --network=false none");
			return -1;
		}
		cli->network = b ? YES : NO;
		return 0;
	case F_DOCKER:
		cli->docker = b ? YES : NO;
		return 0;
	case F_SOCKET: {
		_cleanup_error_ struct error serr = ERROR_INIT;
		if (config_socket_validate(value, &serr) < 0)
			return error_set(err, ERROR_USAGE, "flag --socket: %s", serr.msg);
		rule_list_add(&cli->sockets, value, ACCESS_RO, LAYER_CLI, "--socket");
		return 0;
	}
	case F_READ_ONLY:
		cli->read_only = b ? YES : NO;
		cli->read_only_strict = strict;
		return 0;
	case F_AGENT:
		/* The name is checked with the plan, which knows the table. */
		free(cli->agent);
		cli->agent = xstrdup(value);
		return 0;
	case F_DRY_RUN:
		cli->dry_run = b;
		return 0;
	case F_DEBUG:
		cli->debug = b;
		return 0;
	case F_ALLOW_DEGRADED:
		cli->allow_degraded = b;
		return 0;
	case F_CHECK:
		return set_verb(cli, verb_set, VERB_CHECK, err);
	case F_VERSION:
		return set_verb(cli, verb_set, VERB_VERSION, err);
	case F_HELP:
		return set_verb(cli, verb_set, VERB_HELP, err);
	case F_ENV:
		return add_env(cli, "--env", value, err);
	case F_ENV_BLOCK:
		if (strchr(value, '='))
			return error_set(err, ERROR_USAGE,
					 "flag --env-block %s: expected a name pattern, not an "
					 "assignment",
					 value);
		return add_env(cli, "--env-block", value, err);
	case F_JSON:
		cli->log_json = true;
		return 0;
	case F_BLOCKED:
		cli->log_blocked = true;
		return 0;
	case F_LAST:
		return parse_count(shown, value, &cli->log_limit, err);
	case F_CREDENTIAL:
	case F_LOCALHOST:
	case F_RESOLVE:
		return add_network_flag(cli, f->id, value, err);
	case F_NAME:
		if (instance_check_name(value, err) < 0)
			return error_prefix(err, "flag --name");
		free(cli->name);
		cli->name = xstrdup(value);
		return 0;
	case F_BRANCH:
		free(cli->branch);
		cli->branch = xstrdup(value);
		return 0;
	case F_FROM:
		free(cli->from);
		cli->from = xstrdup(value);
		return 0;
	case F_OLDER_THAN:
		free(cli->older_than);
		cli->older_than = xstrdup(value);
		return 0;
	case F_FORCE:
		cli->force = true;
		return 0;
	case F_MEMORY:
	case F_CPUS:
	case F_PIDS:
	case F_TIMEOUT:
	case F_TMP_SIZE:
		return parse_limit(cli, f->id, shown, value, err);
	}
	return 0;
}

/* Which verbs the branch flags belong to; a bad branch name stops here,
 * before anything is created. */
static int branch_flags_check(const struct cli *cli, struct error *err)
{
	bool branch_verb =
	    cli->verb == VERB_RUN || cli->verb == VERB_POLICY || cli->verb == VERB_CHECKOUT;
	if (cli->branch && !branch_verb)
		return error_set(err, ERROR_USAGE,
				 "--branch is for running a command, policy "
				 "and checkout");
	if (cli->from && !(branch_verb && cli->branch))
		return error_set(err, ERROR_USAGE,
				 "--from goes with a branch: agent-sandbox --branch NAME --from "
				 "REF CMD, or agent-sandbox checkout NAME --from REF");
	if ((cli->older_than || cli->force) && cli->verb != VERB_GC)
		return error_set(err, ERROR_USAGE, "--older-than and --force are for the gc verb");
	if (cli->from && (!*cli->from || cli->from[0] == '-'))
		return error_set(err, ERROR_USAGE,
				 "--from \"%s\": expected a branch, tag or commit of the host "
				 "repository",
				 cli->from);
	return cli->branch ? shelf_branch_check(cli->branch, err) : 0;
}

/* Parses the flag at argv[*i]; advances *i past it and its value. */
static int parse_flag(int argc, char **argv, int *i, struct cli *cli, bool *verb_set,
		      struct error *err)
{
	const char *arg = argv[*i];
	const struct flag *f;
	const char *value = NULL;
	_cleanup_free_ char *shown = NULL;

	if (arg[1] == '-') {
		const char *name = arg + 2;
		const char *eq = strchr(name, '=');
		f = find_long(name, eq ? (size_t)(eq - name) : strlen(name));
		if (!f)
			return unknown_flag(arg, err);
		shown = xasprintf("--%s", f->name);
		if (eq) {
			if (f->arg == ARG_NONE)
				return error_set(err, ERROR_USAGE, "flag %s does not take a value",
						 shown);
			value = eq + 1;
		}
	} else {
		f = find_short(arg[1]);
		if (!f)
			return unknown_flag(arg, err);
		shown = xasprintf("-%c", f->short_name);
		if (arg[2]) {
			if (f->arg != ARG_REQUIRED)
				return unknown_flag(arg, err);
			value = arg + 2;
		}
	}
	(*i)++;

	if (f->arg == ARG_ATTACHED && !value)
		return error_set(err, ERROR_USAGE, "flag %s needs a value: %s", shown,
				 "--network=true (host network) or --network=false (no network)");
	if (f->arg == ARG_REQUIRED && !value) {
		if (*i >= argc)
			return error_set(err, ERROR_USAGE, "flag %s needs a value (%s)", shown,
					 f->value_name);
		value = argv[(*i)++];
	}
	return apply_flag(cli, f, shown, value, verb_set, err);
}

int cli_parse(int argc, char **argv, struct cli *cli, struct error *err)
{
	*cli = (struct cli){
	    .verb = VERB_RUN,
	    .rules = RULE_LIST_INIT,
	    .sockets = RULE_LIST_INIT,
	    .commands = COMMAND_TABLE_INIT,
	    .network = UNSET,
	    .allow_hosts = STRV_INIT,
	    .docker = UNSET,
	    .read_only = UNSET,
	    .env_allow = STRV_INIT,
	    .env_set = STRV_INIT,
	    .env_block = STRV_INIT,
	    .credentials = STRV_INIT,
	    .localhost = STRV_INIT,
	    .resolve = STRV_INIT,
	    .log_limit = -1,
	};
	bool verb_set = false, verb_word_seen = false, forced = false;
	int i = 1;

	for (;;) {
		while (i < argc && argv[i][0] == '-' && argv[i][1] && !forced) {
			if (!strcmp(argv[i], "--")) {
				forced = true;
				i++;
				break;
			}
			if (parse_flag(argc, argv, &i, cli, &verb_set, err) < 0)
				return -1;
		}
		if (forced || verb_word_seen || i >= argc)
			break;
		size_t v = 0;
		while (v < ARRAY_SIZE(verbs) && strcmp(verbs[v].word, argv[i]) != 0)
			v++;
		if (v == ARRAY_SIZE(verbs))
			break;
		verb_word_seen = true;
		i++;
		if (set_verb(cli, &verb_set, verbs[v].verb, err) < 0)
			return -1;
		if (!verbs[v].takes_flags)
			break;
	}
	cli->command = argv + i;
	/* checkout NAME [--from REF]: the flags may follow the name. */
	if (cli->verb == VERB_CHECKOUT && i < argc && !forced) {
		free(cli->branch);
		cli->branch = xstrdup(argv[i++]);
		while (i < argc && argv[i][0] == '-' && argv[i][1])
			if (parse_flag(argc, argv, &i, cli, &verb_set, err) < 0)
				return -1;
		cli->command = argv + i;
	}
	if (branch_flags_check(cli, err) < 0)
		return -1;

	if (cli->verb == VERB_BRANCHES && cli->log_json && !cli->log_blocked && cli->log_limit < 0)
		cli->log_json = false, cli->branches_json = true;
	if (cli->verb != VERB_LOG && (cli->log_json || cli->log_blocked || cli->log_limit >= 0))
		return error_set(err, ERROR_USAGE,
				 "flags --json, --blocked and -n are for the log "
				 "verb: agent-sandbox log [--json] [--blocked] [-n N]");
	if (cli->allow_hosts.len && cli->network != UNSET) {
		error_set(err, ERROR_USAGE, "--allow-host cannot be combined with --network=%s",
			  cli->network == YES ? "true" : "false");
		error_hint(err, "--allow-host adds to the filtered network, which is the default; "
				"drop --network");
		return -1;
	}
	if ((cli->credentials.len || cli->localhost.len || cli->resolve.len) &&
	    cli->network != UNSET) {
		error_set(err, ERROR_USAGE, "%s cannot be combined with --network=%s",
			  cli->credentials.len ? "--credential"
			  : cli->localhost.len ? "--localhost"
					       : "--resolve",
			  cli->network == YES ? "true" : "false");
		error_hint(err, "it works through the filtered network, which is the default; "
				"drop --network");
		return -1;
	}

	if (cli->name && cli->verb != VERB_RUN)
		return error_set(err, ERROR_USAGE,
				 "flag --name is for running a command: "
				 "agent-sandbox --name NAME CMD...");
	switch (cli->verb) {
	case VERB_LIST:
	case VERB_STOP:
	case VERB_EXEC_INTO:
	case VERB_SERVE:
	case VERB_RPC:
	case VERB_MCP_BRIDGE:
		return 0;
	case VERB_RUN:
		if (!cli->command[0] && !verb_set) {
			error_set(err, ERROR_USAGE, "missing the command to run");
			error_hint(err,
				   "agent-sandbox [flags] CMD [ARGS...], e.g. agent-sandbox bash; "
				   "agent-sandbox --help for more");
			return -1;
		}
		if (!cli->command[0])
			return error_set(err, ERROR_USAGE, "exec: missing the command to run");
		return 0;
	case VERB_POLICY:
		if (cli->command[0])
			return error_set(err, ERROR_USAGE,
					 "policy takes only flags, not \"%s\" (the policy does not "
					 "depend on the command)",
					 cli->command[0]);
		return 0;
	case VERB_CHECK:
	case VERB_VERSION:
	case VERB_HELP:
		if (cli->command[0])
			return error_set(err, ERROR_USAGE, "unexpected argument \"%s\"",
					 cli->command[0]);
		return 0;
	case VERB_LOG:
		if (cli->command[0])
			return error_set(err, ERROR_USAGE,
					 "log takes only --json, --blocked and -n N, not \"%s\"",
					 cli->command[0]);
		return 0;
	case VERB_DOCTOR:
		if (cli->command[0])
			return error_set(err, ERROR_USAGE, "doctor takes no arguments, not \"%s\"",
					 cli->command[0]);
		return 0;
	case VERB_CHECKOUT:
	case VERB_BRANCHES:
	case VERB_GC:
		if (cli->command[0])
			return error_set(err, ERROR_USAGE, "%s: unexpected argument \"%s\"",
					 verb_name(cli->verb), cli->command[0]);
		if (cli->verb == VERB_CHECKOUT && !cli->branch)
			return error_set(err, ERROR_USAGE,
					 "checkout: missing the branch name (agent-sandbox "
					 "checkout NAME [--from REF])");
		return 0;
	case VERB_TRUST:
		if (cli->command[0] && cli->command[1])
			return error_set(err, ERROR_USAGE,
					 "trust takes one config file or directory, not \"%s\" too",
					 cli->command[1]);
		return 0;
	}
	return 0;
}

void cli_release(struct cli *cli)
{
	free(cli->cwd);
	free(cli->config_path);
	free(cli->agent);
	cli->agent = NULL;
	free(cli->name);
	cli->name = NULL;
	free(cli->branch);
	free(cli->from);
	free(cli->older_than);
	cli->branch = cli->from = cli->older_than = NULL;
	rule_list_release(&cli->rules);
	rule_list_release(&cli->sockets);
	strv_release(&cli->env_allow);
	strv_release(&cli->env_set);
	strv_release(&cli->env_block);
	command_table_release(&cli->commands);
	strv_release(&cli->allow_hosts);
	strv_release(&cli->credentials);
	strv_release(&cli->localhost);
	strv_release(&cli->resolve);
	cli->cwd = cli->config_path = NULL;
}
