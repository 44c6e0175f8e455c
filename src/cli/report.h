/* What agent-sandbox tells the user: errors, --debug lines, the policy
 * table and the --dry-run listing. Only run.c calls these. */
#pragma once

#include <stdbool.h>

#include "config/config.h"
#include "base/error.h"
#include "policy/env.h"
#include "sandbox/guard.h"
#include "policy/policy.h"
#include "policy/secrets.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "policy/wrappers.h"

struct debug {
	bool enabled;
	int fd;
};

void debug_line(const struct debug *dbg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints "agent-sandbox: <message>" and the hint; returns the exit code. */
int report_error(int fd, const struct error *err);

struct policy_summary {
	const struct config *cfg;
	const char *presets; /* "@base @git ..." */
	const char *cwd;
	const char *docker_socket; /* NULL when there is none */
	const struct secrets *secrets;
	const struct env_result *env;
};

/* The access table, as `policy` prints it and --debug repeats it. */
void report_policy(int fd, const struct policy *policy, const struct policy_summary *summary);

/* --debug: skipped and overridden rules. */
void report_policy_notes(const struct debug *dbg, const struct policy *policy);

/* The network mode and, when filtered, its lists with where each entry
 * came from: part of `policy`, and --dry-run repeats it on stderr. */
void report_network(struct strbuf *sb, const struct network_config *net);

/* --dry-run: "bwrap" and then one argument per line. */
void report_dry_run(int fd, const struct strv *args);

/* --debug: the bwrap command on one line, shell-quoted. */
void report_bwrap_args(const struct debug *dbg, const struct strv *args);

/* --debug: what the secret scan looked at and what it masked, by pattern. */
void report_secrets_debug(const struct debug *dbg, const struct secrets *secrets);

/* --debug: which variables were dropped and why, and which were set (names
 * only, never values). */
void report_env_debug(const struct debug *dbg, const struct env_result *env);
/* The command wrappers, as `policy` prints them. */
void report_wrappers(int fd, const struct command_table *commands, const struct wrapper_plan *p);

/* --debug: each wrapper, what it covers and what was skipped. */
void report_wrappers_debug(const struct debug *dbg, const struct command_table *commands,
			   const struct wrapper_plan *p);

/* `policy`: how many protected paths the guard holds; all of them with
 * their rules when all is set. */
void report_guard_plan(int fd, const struct guard_plan *plan, bool all);

/* --debug: every path the guard holds, with its rule. */
void report_guard_debug(const struct debug *dbg, const struct guard_plan *plan);

/* After the command: what the guard moved aside, and where to. */
void report_quarantine(int fd, const struct guard *g);
