/* Glob patterns that match within one path segment: `*`, `?`, `[...]`, with
 * backslash escapes. `*` also matches names that start with a dot, so that
 * excluding every entry of a directory hides its dotfiles too. */
#pragma once

#include <stdbool.h>

#include "base/error.h"

/* True when s contains an unescaped `*`, `?` or `[`. */
bool pattern_has_glob(const char *s);

/* Checks a whole path pattern: brackets closed within their segment, no `**`,
 * no trailing backslash. The message says what is wrong (the caller adds
 * where). */
int pattern_validate(const char *pattern, struct error *err);

/* Matches one segment pattern (no `/`) against one name. */
bool pattern_match_segment(const char *pattern, const char *name);

/* Copies s with a backslash before every glob character and backslash, so
 * that a literal path can be embedded in a pattern. */
char *pattern_escape(const char *s);

/* Copies s with backslash escapes removed (for segments without globs). */
char *pattern_unescape(const char *s);
