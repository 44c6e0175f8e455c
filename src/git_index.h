/* Git's index, read only for its gitlinks: the paths where `git status`
 * runs git again, in a submodule, with that repository's configuration. */
#pragma once

#include <stddef.h>

#include "strv.h"

/* Appends the path of every gitlink entry in the index held in buf.
 * Returns 0, or -1 (appending nothing) when it is not a readable index. */
int git_index_gitlinks(const void *buf, size_t len, struct strv *out);

/* Finds the repository a git started in cwd would use, as git does (the
 * nearest .git directory or gitfile above): its work tree and the path of
 * its index. Returns 0, or -1 when there is none. */
int git_index_find(const char *cwd, char **toplevel, char **index);
