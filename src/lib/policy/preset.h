/* Built-in presets: named bundles of path rules. Users cannot define new
 * ones. @all (the default) is @base @caches @agents @git @agent-configs
 * @lint/all. */
#pragma once

#include <stdbool.h>

#include "base/error.h"
#include "policy/rule.h"
#include "base/strbuf.h"
#include "base/strv.h"

/* The set of presets named by "@name" (a group names several); 0 when the
 * name is unknown. */
unsigned preset_lookup(const char *name);

/* Appends "@base, @caches, ..." to sb. */
void preset_list_names(struct strbuf *sb);

/* The known name closest to a misspelled one, or NULL. */
const char *preset_suggest(const char *name);

/* Applies "@x" (add) and "!@x" (remove) operations in order, starting from
 * the default @all. The operations must already be validated. */
unsigned preset_select(const struct strv *ops);

/* Appends the names of the presets in the set to sb ("@base @git ..."). */
void preset_describe(unsigned set, struct strbuf *sb);

struct preset_context {
	const char *cwd;		 /* effective working directory, resolved */
	const char *home;		 /* home directory, or NULL */
	const char *global_config_dir;	 /* e.g. ~/.config/agent-sandbox */
	const struct strv *config_files; /* every config file that was loaded */
	const struct strv *git_entries;	 /* .git entries beneath cwd, or NULL */
	char *const *envp;		 /* where git's config files are, or NULL */
	const char *claude_config_dir;	 /* the host's CLAUDE_CONFIG_DIR, or NULL */
	/* Branch mode: the host repository's top and common git directory,
	 * whose objects and refs `git push host` writes; NULL otherwise. */
	const char *branch_host_top;
	const char *branch_host_git;
};

/* Appends the rules of every preset in the set, at LAYER_PRESET. */
void preset_expand(unsigned set, const struct preset_context *ctx, struct rule_list *out);
