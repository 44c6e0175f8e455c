/* Where a git started in a directory finds its repository: the nearest
 * .git above (a directory, a gitfile, or a symlink to either, as git
 * follows it), its git directory and its common directory. Shared by the
 * @git preset and the guard, so both see the repository git would. */
#pragma once

#include <stdbool.h>

struct git_repo {
	char *toplevel; /* the working tree holding .git */
	char *git_dir;	/* .git, or .git/worktrees/<name> for a linked worktree */
	char *common;	/* the shared repository: equal to git_dir unless linked */
};

/* Finds the repository of dir (absolute) as git does. False when there is
 * none, or its gitfile cannot be followed. */
bool git_repo_find(const char *dir, struct git_repo *out);

void git_repo_release(struct git_repo *r);

/* Reads a one-line file such as ".git" ("gitdir: X") or "commondir" and
 * returns its path, resolved, taken relative to base when it is relative;
 * NULL when it cannot be read, lacks the prefix or leads nowhere. */
char *git_repo_read_path_file(const char *file, const char *prefix, const char *base);

/* The path a gitfile or commondir value names, relative to base unless
 * absolute, resolved; NULL when empty or when it leads nowhere. */
char *git_repo_pointer_target(const char *value, const char *base);
