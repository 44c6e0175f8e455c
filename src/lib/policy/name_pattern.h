/* Patterns for single names (file names, environment variable names):
 * `*`, `?`, `[...]` and backslash escapes, compiled once and matched many
 * times. The secret scan matches every file of a tree against these, so the
 * common shapes (exact, prefix*, *suffix, *infix*) avoid the general matcher
 * and matching never allocates. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

enum name_pattern_kind {
	NAME_EXACT,  /* "literal" */
	NAME_PREFIX, /* "literal*" */
	NAME_SUFFIX, /* "*literal" */
	NAME_INFIX,  /* "*literal*" */
	NAME_GLOB,   /* anything else */
};

struct name_pattern {
	char *text;    /* as written */
	char *literal; /* the literal part, unescaped (kinds other than NAME_GLOB) */
	size_t literal_len;
	enum name_pattern_kind kind;
	bool ignore_case; /* ASCII letters match either case */
};

/* Checks a name pattern: not empty, no `/`, brackets closed, no trailing
 * backslash. The message says what is wrong; the caller adds where. */
int name_pattern_validate(const char *text, struct error *err);

/* Compiles a pattern that name_pattern_validate accepted. */
void name_pattern_compile(struct name_pattern *p, const char *text, bool ignore_case);
void name_pattern_release(struct name_pattern *p);

bool name_pattern_match(const struct name_pattern *p, const char *name, size_t len);

/* A list of compiled patterns. */
struct name_pattern_set {
	struct name_pattern *items;
	size_t len;
};

/* Compiles texts in order; "!x" removes an earlier "x" instead of adding. */
void name_pattern_set_build(struct name_pattern_set *set, char *const *texts, size_t count,
			    bool ignore_case);
/* The first pattern that matches, or NULL. */
const struct name_pattern *name_pattern_set_match(const struct name_pattern_set *set,
						  const char *name, size_t len);
void name_pattern_set_release(struct name_pattern_set *set);
