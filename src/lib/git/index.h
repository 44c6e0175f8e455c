/* Git's index, read only for its gitlinks: the paths where `git status`
 * runs git again, in a submodule, with that repository's configuration. */
#pragma once

#include <stddef.h>

#include "base/strv.h"

/* Reported in place of a path for a gitlink whose name is in the shared
 * index of a split index (an entry there turned into a gitlink): "*" is
 * no path git would write. */
#define GIT_INDEX_UNNAMED_GITLINK "*"

/* Appends the path of every gitlink entry in the index held in buf.
 * Returns 0, or -1 (appending nothing) when it is not a readable index. */
int git_index_gitlinks(const void *buf, size_t len, struct strv *out);

/* The same, and when the index is split (a "link" extension), the name of
 * its shared index in shared (hex, up to 64 digits and a NUL; empty when
 * not split): git reads the rest of the entries from
 * $GIT_DIR/sharedindex.<name>. */
int git_index_read(const void *buf, size_t len, struct strv *out, char *shared);
