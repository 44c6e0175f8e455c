/* A session: everything decided before the sandbox starts. It joins the
 * stages (config layers, presets, policy) so that `policy`, --dry-run and a
 * real run all see the same decisions. */
#pragma once

#include <stdbool.h>

#include "cli/flags.h"
#include "config/config.h"
#include "policy/env.h"
#include "base/error.h"
#include "policy/policy.h"
#include "cli/report.h"
#include "policy/rule.h"
#include "policy/secrets.h"
#include "policy/trust.h"
#include "policy/wrappers.h"

struct session {
	char *cwd;	     /* effective working directory, resolved */
	char *home;	     /* NULL when unknown */
	char *global_dir;    /* $XDG_CONFIG_HOME/agent-sandbox */
	char *docker_socket; /* where the Docker socket would be, or NULL */
	struct config cfg;
	unsigned presets;
	char *presets_text;
	struct rule_list rules; /* built-in, preset and config rules together */
	struct policy policy;
	struct secrets secrets; /* secret files found under cwd */
	struct env_result env;	/* the command's environment, and what was dropped */
	char *audit_dir;	/* where the audit log lives (hidden inside), or NULL */
	bool audit;		/* this run writes the audit log */
	bool nested;		/* this run is inside a sandbox already */
	struct wrapper_plan wrappers;
	struct trust_check trust;      /* may the project config apply? */
	const char *claude_config_dir; /* the host's CLAUDE_CONFIG_DIR (in envp), or NULL */
	bool seed_claude;	       /* Claude Code inside uses ~/.claude/.claude.json */
};

int session_build(struct session *s, const struct cli *cli, char *const *envp,
		  const struct debug *dbg, struct error *err);
void session_release(struct session *s);

static inline void cleanup_sessionp(struct session *s)
{
	session_release(s);
}
#define _cleanup_session_ __attribute__((cleanup(cleanup_sessionp)))
