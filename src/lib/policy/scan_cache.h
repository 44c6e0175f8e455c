/* The secret scan's cache: what a scan concluded about each directory of a
 * working directory, kept in the state directory (hidden inside every
 * sandbox) so that the next scan reads again only the directories that
 * changed. It never decides what is a secret; it only lets secret_scan.c
 * skip a readdir whose outcome it already knows, and anything it cannot
 * vouch for is scanned again. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "policy/pattern.h"

/* Bumped whenever the meaning of a record changes. */
#define SCAN_CACHE_FORMAT 1
/* A cache file larger than this is neither read nor written. */
#define SCAN_CACHE_MAX_BYTES (32u << 20)
/* Cache files kept in the state directory, one per working directory;
 * the least recently written go first. */
#define SCAN_CACHE_MAX_FILES 64
#define SCAN_CACHE_KEY_LEN 32
/* How many content rules secret_scan.c has (.npmrc, .yarnrc.yml, id_*). */
#define SCAN_CACHE_CONTENT_RULES 3

/* What the scan does with one entry of a directory. */
enum scan_action {
	SCAN_ACTION_NONE,    /* nothing beyond what flags say */
	SCAN_ACTION_MASK,    /* masked by pattern `arg` (a file, or a directory whole) */
	SCAN_ACTION_CONTENT, /* masked or not by content rule `arg`, per the file's identity */
	SCAN_ACTION_DESCEND, /* a subdirectory, walked (its own record decides) */
	SCAN_ACTION_LINK,    /* a symlink: judged anew every time */
	SCAN_ACTION_SOCKET,  /* a unix socket file */
	SCAN_ACTION_COUNT,
};

#define SCAN_FLAG_GIT 0x1 /* a ".git": a repository, submodule or worktree */

/* One entry of a directory that matters to the scan: plain files that no
 * pattern matches are only counted. */
struct scan_cache_entry {
	const char *name; /* NUL-terminated */
	uint16_t name_len;
	uint8_t type; /* DT_* */
	uint8_t flags;
	uint8_t action;
	uint32_t arg;
	/* SCAN_ACTION_CONTENT: the file's inode and ctime when the verdict was
	 * reached (ino 0: none, check again), and the verdict. */
	uint64_t ino;
	struct timespec ctime;
	bool masked;
};

/* One directory: its identity when it was read, and its entries. */
struct scan_cache_dir {
	const char *rel; /* from the root; "" for the root itself */
	size_t rel_len;
	uint64_t dev, ino;
	struct timespec ctime;
	uint32_t files; /* entries that are neither directories nor symlinks */
	bool needs_fd;	/* an entry needs the directory open (descend, link, content) */
	struct scan_cache_entry *entries;
	size_t len;
};

struct scan_cache {
	char *data; /* the file, which names and paths point into */
	size_t size;
	struct timespec scan_start; /* when the scan that wrote it started */
	struct scan_cache_dir *dirs;
	size_t len;
	struct scan_cache_entry *entries;
	size_t entries_len;
	uint32_t *table; /* open addressing on rel: index + 1, 0 empty */
	size_t table_mask;
};

/* What this scan concluded, to be written as the next cache. */
struct scan_cache_builder {
	struct strbuf body;
	size_t records, entries;
	struct timespec scan_start;
	uint8_t key[SCAN_CACHE_KEY_LEN];
	/* Something differs from the cache read (or there was none): worth
	 * writing. */
	bool changed;
};

/* Everything besides the tree that a scan's outcome depends on, as one
 * digest: the format, agent-sandbox's version and the very binary, the
 * user's credentials, the root, and the patterns, allow and skip lists. */
void scan_cache_key(const char *root, const struct pattern_set *patterns,
		    const struct pattern_set *allow, const struct pattern_set *skip,
		    bool check_content, uint8_t key[SCAN_CACHE_KEY_LEN]);

/* The racy rule: a record of an object (directory or file) is trusted only
 * when the object's ctime is at least SCAN_CACHE_SETTLE_SEC older than the
 * start of the scan that made the record (see scan_cache.c for why). */
#define SCAN_CACHE_SETTLE_SEC 2
bool scan_cache_is_settled(const struct timespec *ctime, const struct timespec *scan_start);

/* Decodes a cache file made for key, whose patterns set has
 * patterns_len items. Returns 0, or -1 with err saying why the file is not
 * used (any defect: the file is then ignored whole). Takes data. */
int scan_cache_parse(char *data, size_t size, const uint8_t key[SCAN_CACHE_KEY_LEN],
		     const struct pattern_set *patterns, struct scan_cache *out, struct error *err);

/* Reads path (a regular file of the user's, not writable by others) and
 * parses it. Returns 0, or -1 with err saying why there is no cache. */
int scan_cache_load(const char *path, const uint8_t key[SCAN_CACHE_KEY_LEN],
		    const struct pattern_set *patterns, struct scan_cache *out, struct error *err);

const struct scan_cache_dir *scan_cache_find(const struct scan_cache *c, const char *rel,
					     size_t rel_len);

void scan_cache_release(struct scan_cache *c);

/* The scan sets scan_start when it starts. */
void scan_cache_builder_init(struct scan_cache_builder *b, const uint8_t key[SCAN_CACHE_KEY_LEN]);
void scan_cache_builder_add(struct scan_cache_builder *b, const struct scan_cache_dir *dir);
/* The whole file: header and records. */
void scan_cache_builder_finish(const struct scan_cache_builder *b, struct strbuf *out);
void scan_cache_builder_release(struct scan_cache_builder *b);

/* The cache file of the working directory root in dir (the state
 * directory's "scan-cache"): named by a digest of root. */
char *scan_cache_path(const char *dir, const char *root);

/* Writes the builder's cache to path atomically (a temporary file renamed
 * over it), making its directory private if needed, and removes the
 * oldest cache files beyond SCAN_CACHE_MAX_FILES. A cache too large is not
 * written, and the old one is removed. */
int scan_cache_store(const struct scan_cache_builder *b, const char *path, struct error *err);
