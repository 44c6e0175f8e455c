/* The repo shelf: where branch mode keeps a host repository's worktrees,
 * $XDG_DATA_HOME/agent-sandbox/shelves/<name>-<hash>/ with repo/ (the
 * primary repository, remote "host") and worktrees/<branch>/. Everything
 * here runs on the host and treats the shelf's content as written by a
 * hostile sandbox: git runs without a shell, without the system and global
 * config, with hooks and config-named programs switched off. */
#pragma once

#include <stdbool.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/strv.h"

/* Longest branch name taken: with '/' written "__" it must still be a file
 * name. */
#define SHELF_BRANCH_MAX 120

struct shelf {
	char *host_top;	 /* the host repository's working tree, resolved */
	char *host_git;	 /* its common git directory, resolved */
	char *dir;	 /* the shelf */
	char *repo;	 /* dir/repo */
	char *worktrees; /* dir/worktrees */
};

/* 0 when name is a valid new branch name (`git check-ref-format --branch`
 * rules, plus a length limit); else an ERROR_USAGE naming it and the
 * expected form. Runs nothing. */
int shelf_branch_check(const char *name, struct error *err);

/* The directory name of a branch's worktree: '/' becomes "__". */
char *shelf_branch_dir(const char *branch);

/* Where the shelf of the repository holding cwd is; creates nothing. */
int shelf_locate(char *const *envp, const char *cwd, struct shelf *out, struct error *err);

/* The shelf of every host repository, by shelf directory (for gc). */
void shelf_list_all(char *const *envp, struct strv *dirs);

/* The path of branch's worktree in the shelf (existing or not). */
char *shelf_worktree_path(const struct shelf *s, const char *branch);

/* Creates the shelf, its repository and branch's worktree as needed, under
 * an exclusive lock on the shelf; idempotent. from: the host ref to start
 * a new branch at, or NULL (origin/<branch> when the host has it, else the
 * host's HEAD). *worktree receives the worktree's path; with hold, *hold
 * the worktree held for a run (shelf_hold), taken under the shelf's lock. */
int shelf_provision(char *const *envp, const struct shelf *s, const char *branch, const char *from,
		    char **worktree, int *hold, struct error *err);

/* Marks a worktree in use for a run: a shared lock on the directory (on a
 * close-on-exec descriptor, so nothing in the sandbox holds it) and its
 * modification time set to now, the "last use". Returns the descriptor. */
int shelf_hold(const char *worktree, struct error *err);
/* Sets the last use again and releases the lock. */
void shelf_release_hold(int fd);

/* After a run: removes the empty quarantine directories that `git push
 * host` leaves in the host's objects directory (the sandbox may not remove
 * a directory there: hardening_keep_dirs). Only empty directories are
 * removed, never through a symlink; anything else stays. */
void shelf_tidy_host_objects(const struct shelf *s);

/* One worktree of a shelf, as `branches` and gc see it. */
struct shelf_worktree {
	char *branch; /* from its HEAD; the directory name when unreadable */
	char *path;
	time_t last_use; /* the directory's modification time */
	bool in_use;	 /* a run holds it */
};

/* The worktrees of the shelf at dir, sorted by path. */
int shelf_worktrees(const char *dir, struct shelf_worktree **out, size_t *len, struct error *err);
void shelf_worktrees_release(struct shelf_worktree *items, size_t len);

/* Whether the worktree has uncommitted changes (or untracked files), by a
 * host git that obeys nothing the sandbox wrote; an error counts as dirty. */
bool shelf_worktree_dirty(char *const *envp, const char *shelf_dir, const char *worktree);

/* Removes a worktree (never following a symlink in it) and its admin
 * entry; its branch stays in repo/. ERROR_DENIED when a run holds it. When
 * no worktree is left, removes the shelf too (*shelf_removed), unless a
 * branch has commits the host lacks (*unpushed) and force is not set. */
int shelf_remove_worktree(char *const *envp, const char *shelf_dir, const char *worktree,
			  bool force, bool *shelf_removed, bool *unpushed, struct error *err);

/* The same for a shelf with no worktree (left by an earlier gc for its
 * unpushed commits): removed when it has none, or with force. */
int shelf_remove_if_idle(char *const *envp, const char *shelf_dir, bool force, bool *shelf_removed,
			 bool *unpushed, struct error *err);

void shelf_release(struct shelf *s);

DEFINE_CLEANUP_FUNC(struct shelf, shelf_release)
#define _cleanup_shelf_ _cleanup_(shelf_releasep)
