/* What the agents need before a run besides path rules: Claude Code's own
 * copy of its global config, and the directories that sessions on the host
 * write and source from. The only host writes are those. */
#pragma once

#include <stdbool.h>

#include "base/error.h"

/* The CLAUDE_CONFIG_DIR=HOME/.claude entry that points Claude Code inside at
 * a global config of its own (HOME/.claude/.claude.json), or NULL when the
 * host's environment names a directory already or home is unknown. */
char *agent_state_claude_env(char *const *envp, const char *home);

/* The CLAUDE_CONFIG_DIR the user chose (a pointer into envp), or NULL.
 * Inside a sandbox, HOME/.claude is the outer sandbox's own setting, not
 * the user's. */
const char *agent_state_users_claude_dir(char *const *envp, const char *home, bool inside);

/* Copies HOME/.claude.json to HOME/.claude/.claude.json when the copy does
 * not exist yet and both the file and the directory do. Returns 1 when it
 * copied, 0 when there was nothing to do, -1 with err set. */
int agent_state_seed_claude(const char *home, struct error *err);

/* Makes the directories that agent sessions write and then source from
 * (Claude Code's shell-snapshots and session-env, in HOME/.claude and in
 * claude_dir when not NULL; Codex's shell_snapshots), and Claude Code's
 * plugins and Codex's skills, which they write at every start, empty, where their agent's
 * directory exists and they do not. Returns how many it made, or
 * -1 with err set. */
int agent_state_make_sourced_dirs(const char *home, const char *claude_dir, struct error *err);

/* Whether agent_state_make_sourced_dirs would make any: the plan asks, a
 * run makes them. */
bool agent_state_sourced_dirs_missing(const char *home, const char *claude_dir);

/* Creates an agent's state directory, path ("~/.codex",
 * "~/.local/share/goose") under home, and its missing parents, mode 0700,
 * following no symlink on the way: what a sandbox could plant there
 * cannot send the host's mkdir elsewhere. Returns how many directories
 * it made, or -1 with err set. */
int agent_state_make_state_dir(const char *home, const char *path, struct error *err);
