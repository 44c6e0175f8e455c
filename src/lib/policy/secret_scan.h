/* The secret scan: one walk over the working directory that finds the files
 * (and, for patterns with a trailing "/", the directories) that the secret
 * patterns match, by name or by their path from the root. It is on the start-up path of every
 * run, so it reads directories with getdents64, trusts d_type instead of
 * calling stat, and allocates only for what it finds. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "policy/pattern.h"
#include "policy/scan_cache.h"
#include "base/strv.h"

struct secret_scan_options {
	const struct pattern_set *patterns; /* tree patterns to mask */
	const struct pattern_set *allow;    /* tree patterns never masked */
	const struct pattern_set *skip;	    /* directories not entered */
	/* Also mask .npmrc and .yarnrc.yml files that hold registry
	 * credentials, and id_* files that hold a private key. */
	bool check_content;
	/* What an earlier scan of this root concluded (NULL: nothing), and
	 * where this scan records what it concludes (NULL: nowhere). A
	 * directory whose device, inode and ctime are those of its record
	 * (and settled, see scan_cache.h) is not read again: its entries come
	 * from the record, and its subdirectories are visited, each judged by
	 * its own record. Not used beneath a followed symlink. */
	const struct scan_cache *cache;
	struct scan_cache_builder *record;
};

struct secret_match {
	char *path;	     /* absolute, as found (a symlink's own path) */
	const char *pattern; /* the pattern text that matched; owned by the options */
	bool is_dir;	     /* a directory masked whole, not walked */
	bool anchored;	     /* by a pattern that names a path, not a name */
};

struct secret_scan_result {
	struct secret_match *items; /* in walk order */
	size_t len, alloc;
	size_t files;	    /* entries that are not directories */
	size_t dirs;	    /* directories entered */
	size_t cached_dirs; /* of those, how many the cache answered for */
	size_t unreadable;  /* directories that could not be opened */
	/* Every ".git" directory or file met on the way (absolute, in walk
	 * order): the repositories, submodules and linked worktrees beneath
	 * the root, found without a second walk. */
	struct strv git_entries;
	/* Every unix socket file met on the way (absolute): a host process
	 * may listen on one under a name /proc/net/unix does not give (a
	 * relative one, or one since renamed). */
	struct strv sockets;
};

/* The pattern names reported for files masked for their content. */
#define SECRET_NPMRC_REASON ".npmrc holding credentials"
#define SECRET_YARNRC_REASON ".yarnrc.yml holding credentials"
#define SECRET_KEY_REASON "id_* holding a private key"
#define SECRET_UNREADABLE_REASON "a directory the scan cannot read"

/* Walks root (absolute, resolved). Patterns are matched against each
 * entry's path relative to root (a symlinked directory's entries under the
 * link's spelling); a pattern without a trailing "/" matches only what is
 * not a directory, one with it only directories, which are masked whole and
 * not walked. An allow pattern that matches wins over any mask. Symlinks are never followed out of
 * the walk: a symlinked directory is not entered, and a symlink is masked only when its own name
 * matches and it points at a regular file. Directories that cannot be read are counted and masked
 * whole (the command, their owner, could make them readable again). */
int secret_scan(const char *root, const struct secret_scan_options *opts,
		struct secret_scan_result *out, struct error *err);

void secret_scan_result_release(struct secret_scan_result *r);
