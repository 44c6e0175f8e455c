/* What agent-sandbox tells the user: errors, --debug lines, the policy
 * table and the --dry-run listing. Only src/cli/ calls these. */
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
#include "spec/spec.h"

/* Sends the library's --debug lines and notes to *fd (stderr), escaped. */
void report_install_output(const int *fd, bool debug);

/* The writers to a caller's descriptor return 0 or -errno: output that
 * cannot be written (a full disk, a closed pipe) is an error. */

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
int report_policy(int fd, const struct policy *policy, const struct policy_summary *summary);

/* The network mode and, when filtered, its lists with where each entry
 * came from: part of `policy`, and --dry-run repeats it on stderr. */
void report_network(struct strbuf *sb, const struct network_config *net);

/* --dry-run: "bwrap" and then one argument per line. */
int report_dry_run(int fd, const struct strv *args);

/* After "command not found": the program is at host_path on the host, a
 * place the sandbox does not show. */
void report_hidden_command(int fd, const char *name, const struct hidden_command *h);

/* Before the command starts: the agent's key variables (names) that the
 * secret filter dropped, and the flags that inject or pass them; nothing
 * when there are none. One line. */
void report_dropped_keys(int fd, const struct strv *names, const char *credential);

/* One line per variable naming a host loopback port the sandbox does not
 * reach (sandbox_spec.unreached_loopback). */
void report_unreached_loopback(int fd, const struct strv *entries);

/* `policy` and --debug's text of the agent profile (see
 * sandbox_spec_describe_profile), escaped. */
int report_text(int fd, const struct strbuf *text);

/* The binds the init makes instead of bwrap (source, dest, mode
 * triples), for --dry-run's stderr: one "dest <- source, mode" line each,
 * escaped. */
void report_init_binds(struct strbuf *sb, const struct strv *binds);

/* The command wrappers, as `policy` prints them. */
int report_wrappers(int fd, const struct command_table *commands, const struct wrapper_plan *p);

/* `policy`: how many protected paths the guard holds; all of them with
 * their rules when all is set. */
int report_guard_plan(int fd, const struct guard_plan *plan, bool all);

/* After the command: what the guard moved aside, and where to. */
void report_quarantine(int fd, const struct guard *g);

/* After the command: the masked files it tried to read, on one line
 * (relative to cwd when inside it; the first few, and how many more). */
void report_secret_reads(int fd, const struct strv *paths, const char *cwd);
