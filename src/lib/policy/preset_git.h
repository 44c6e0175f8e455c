/* The @git preset: every file a host git reads as configuration or runs as
 * code, in every repository the sandbox can write to, stays as it was. */
#pragma once

#include <stdbool.h>

#include "policy/preset.h"
#include "policy/rule.h"

/* Appends @git's rules (and @git-strict's when strict) for the repository
 * of ctx->cwd, its linked worktrees and submodules, and the repositories
 * whose .git entries ctx->git_entries lists. */
void preset_git_expand(bool strict, const struct preset_context *ctx, struct rule_list *out);

/* Whether rel ('/'-separated, relative to any directory) names what git
 * reads as configuration or code in a git directory named .git, or lies
 * beneath it (".git/hooks/pre-commit", "sub/.git/config"). For writers
 * that make files where no plan has looked yet: a repository made after
 * @git was expanded has no rules. */
bool preset_git_is_control(const char *rel);
