/* The @git preset's judgement: which git invocations are refused because
 * they throw work away or skip the repository's guardrails. Pure: it reads
 * only the arguments and environment it is given. */
#pragma once

#include <stdbool.h>

#include "base/cleanup.h"
#include "base/strv.h"

struct git_decision {
	bool blocked;
	const char *subcommand;	 /* points into argv; NULL when there is none */
	char *form;		 /* the refused form, "reset --hard"; NULL when allowed */
	const char *reason;	 /* why it is refused */
	const char *alternative; /* the safe way to get there */
	/* Where git would work, for the temporary-directory exception: the
	 * -C arguments in order, and --git-dir / --work-tree when given. */
	struct strv chdirs;
	const char *git_dir;
	const char *work_tree;
};

/* The environment variables that choose which config files git reads
 * (NULL-terminated). The sandbox records their values at start, where the
 * agent cannot change them, so that the guard can tell when a command
 * points git at a config of the agent's making. */
extern const char *const git_guard_config_env[];

/* argv holds git's arguments without "git" itself (argc of them), envp
 * git's environment, start_env the git_guard_config_env variables as the
 * sandbox started ("NAME=VALUE"; an unset one is absent). */
void git_guard_classify(int argc, char *const *argv, char *const *envp, char *const *start_env,
			struct git_decision *d);
void git_decision_release(struct git_decision *d);

DEFINE_CLEANUP_FUNC(struct git_decision, git_decision_release)
#define _cleanup_git_decision_ _cleanup_(git_decision_releasep)
