/* The command line: verbs and flags. Parsing stops at the first word that is
 * not a flag; that word and everything after it belong to the sandboxed
 * command, unless the word is a verb. `--` forces a program name. */
#pragma once

#include <stdbool.h>

#include "config/commands.h"
#include "config/config.h"
#include "base/error.h"
#include "policy/rule.h"
#include "base/strv.h"

enum verb {
	VERB_RUN, /* implicit run or `exec` */
	VERB_CHECK,
	VERB_POLICY,
	VERB_DOCTOR,
	VERB_TRUST,
	VERB_LOG,
	VERB_VERSION,
	VERB_HELP,
	VERB_LIST,
	VERB_STOP,
	VERB_EXEC_INTO,
	VERB_CHECKOUT, /* branch mode: provision a worktree */
	VERB_BRANCHES,
	VERB_GC,
	VERB_SERVE,	 /* the executor API daemon */
	VERB_RPC,	 /* one call to it */
	VERB_MCP_BRIDGE, /* inside a session: stdio to its MCP server */
};

enum tristate {
	UNSET = -1,
	NO = 0,
	YES = 1,
};

struct cli {
	enum verb verb;
	char *cwd;		       /* -C, as given */
	char *config_path;	       /* -c, as given */
	struct rule_list rules;	       /* --ro, --rw, --exclude, at LAYER_CLI */
	struct command_table commands; /* --cmd, at LAYER_CLI */
	enum tristate network;
	struct strv allow_hosts;  /* --allow-host, validated */
	struct rule_list sockets; /* --socket, validated */
	enum tristate docker;
	enum tristate read_only;
	bool read_only_strict; /* --read-only=strict */
	char *agent;	       /* --agent NAME, as given */
	bool dry_run;
	bool debug;
	bool allow_degraded;	 /* run without layers the kernel lacks */
	char **command;		 /* points into argv; NULL-terminated; may be empty */
	struct strv env_allow;	 /* --env NAME (a name glob) */
	struct strv env_set;	 /* --env NAME=VALUE */
	struct strv env_block;	 /* --env-block PATTERN */
	struct strv credentials; /* --credential NAME */
	struct strv localhost;	 /* --localhost PORT, as a number's text */
	struct strv resolve;	 /* --resolve NAME=ADDR[:PORT], validated */
	bool log_json;		 /* log --json */
	bool log_blocked;	 /* log --blocked */
	long log_limit;		 /* log -n N; -1 for all */
	char *name;		 /* --name NAME, validated */
	/* Branch mode and its verbs (checkout, branches, gc). */
	char *branch;	    /* --branch NAME, or checkout's NAME */
	char *from;	    /* --from REF */
	char *older_than;   /* gc --older-than DURATION, as given */
	bool force;	    /* gc --force */
	bool branches_json; /* branches --json */
	/* --memory, --cpus, --pids, --timeout, --tmp-size, checked */
	struct limit_request limits;
};

int cli_parse(int argc, char **argv, struct cli *cli, struct error *err);
void cli_release(struct cli *cli);

/* The help text. */
extern const char cli_usage[];
