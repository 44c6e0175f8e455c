/* Glob patterns, with one meaning wherever they are written: path rules
 * match them one segment at a time, the environment filter matches single
 * names, and the secret scan matches gitignore-style tree patterns (a name
 * at any depth, or segments anchored at the root, with `**`). `*`, `?`, `[...]` (ranges, `!` or `^`
 * negation, POSIX classes such as `[[:alpha:]]`) and backslash escapes; `*` and `?` also match a
 * leading dot, so that excluding every entry of a directory hides its dotfiles too. Matching is
 * byte-wise, never by locale. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* True when s contains an unescaped `*`, `?` or `[`. */
bool pattern_has_glob(const char *s);

/* Checks a whole path pattern: brackets closed within their segment, known
 * class names, no `**`, no trailing backslash. The message says what is
 * wrong (the caller adds where). */
int pattern_validate(const char *pattern, struct error *err);

/* Checks a single-name pattern: what pattern_validate checks, and neither
 * empty nor holding a `/`. */
int pattern_validate_name(const char *text, struct error *err);

/* Checks a tree pattern (the secret scan's), gitignore-style: a name
 * without "/" matches at any depth; a "/" before the end (or a leading one)
 * anchors the pattern at the root; a "**" segment spans zero or more
 * directories; a trailing "/" matches directories only. Refused: empty
 * segments ("a//b"), "." and ".." segments, "**" inside a segment, more than
 * PATTERN_MAX_SEGMENTS segments, and what pattern_validate refuses in a
 * segment. The message says what is wrong and the expected form. */
#define PATTERN_MAX_SEGMENTS 63
int pattern_validate_tree(const char *text, struct error *err);

/* Matches one segment pattern (no `/`) against one name. */
bool pattern_match_segment(const char *pattern, const char *name);

/* Copies s with a backslash before every glob character and backslash, so
 * that a literal path can be embedded in a pattern. */
char *pattern_escape(const char *s);

/* Copies s with backslash escapes removed (for segments without globs). */
char *pattern_unescape(const char *s);

/* A name pattern compiled once and matched many times. The secret scan
 * matches every file of a tree against these, so the common shapes (exact,
 * prefix*, *suffix, *infix*) skip the general matcher and matching never
 * allocates. */
enum pattern_kind {
	PATTERN_EXACT,	/* "literal" */
	PATTERN_PREFIX, /* "literal*" */
	PATTERN_SUFFIX, /* "*literal" */
	PATTERN_INFIX,	/* "*literal*" */
	PATTERN_GLOB,	/* anything else */
	PATTERN_DIRS,	/* a "**" segment of a tree pattern */
};

struct pattern {
	char *text; /* as written */
	/* PATTERN_GLOB: the glob as the matcher takes it; other kinds: the
	 * literal part, unescaped. */
	char *literal;
	size_t literal_len;
	enum pattern_kind kind;
	bool ignore_case; /* ASCII letters match either case */
	/* Tree patterns only. dir_only: written with a trailing "/", matches
	 * directories, and a pattern without it matches everything else.
	 * segments: anchored patterns, one compiled pattern per segment;
	 * NULL for a name pattern, which takes the fast path above ("**\/x"
	 * is compiled as the name "x"). */
	bool dir_only;
	struct pattern *segments;
	size_t segments_len;
};

/* Compiles a pattern that pattern_validate_name or pattern_validate_tree
 * accepted. */
void pattern_compile(struct pattern *p, const char *text, bool ignore_case);
void pattern_release(struct pattern *p);

bool pattern_match(const struct pattern *p, const char *name);

/* Matches a tree pattern against rel, a path relative to the root (no
 * leading "/", no empty, "." or ".." segments), whose last segment is name,
 * a directory when is_dir. */
bool pattern_match_path(const struct pattern *p, const char *rel, const char *name, bool is_dir);

/* A list of compiled patterns. */
struct pattern_set {
	struct pattern *items;
	size_t len;
	size_t dir_only; /* how many items match directories only */
};

/* Compiles texts in order; "!x" removes an earlier "x" instead of adding. */
void pattern_set_build(struct pattern_set *set, char *const *texts, size_t count, bool ignore_case);
/* The first name pattern that matches name, or NULL (tree-only forms, with
 * a "/", never match here). */
const struct pattern *pattern_set_match(const struct pattern_set *set, const char *name);
/* True when an anchored pattern of set could match a path beneath the
 * directory rel: a walk that meets rel as another spelling (a link) of a
 * directory it walks must walk it under this spelling too. */
bool pattern_set_reaches_below(const struct pattern_set *set, const char *rel);
/* The first pattern that matches rel (see pattern_match_path), or NULL. */
const struct pattern *pattern_set_match_path(const struct pattern_set *set, const char *rel,
					     const char *name, bool is_dir);
void pattern_set_release(struct pattern_set *set);
