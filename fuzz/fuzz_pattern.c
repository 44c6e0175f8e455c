/* libFuzzer target for glob patterns: the input is a pattern, a newline and
 * a name (a relative path for tree patterns). Validation must finish without
 * a crash; for every name pattern it accepts, the compiled form (with its
 * literal fast paths) must agree with path-segment matching, and so must the
 * case-blind fast paths with fnmatch(3) under FNM_CASEFOLD. For every tree
 * pattern (one with a "/"), the compiled form (names on the fast path,
 * anchored segments matched as a set of states) must agree with a plain
 * backtracking matcher over segments. ASan catches any read past the
 * input. */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "policy/pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference: pattern segments against path segments, "**" trying every
 * split, a trailing "**" taking at least one segment. */
static bool reference_match(const char *pat, const char *path)
{
	size_t pl = strcspn(pat, "/");
	const char *pat_rest = pat[pl] ? pat + pl + 1 : NULL;
	size_t sl = strcspn(path, "/");
	const char *path_rest = path[sl] ? path + sl + 1 : NULL;
	if (pl == 2 && pat[0] == '*' && pat[1] == '*') {
		if (!pat_rest)
			return true; /* path holds at least this segment */
		if (reference_match(pat_rest, path))
			return true;
		return path_rest && reference_match(pat, path_rest);
	}
	_cleanup_free_ char *ps = xstrndup(pat, pl);
	_cleanup_free_ char *ss = xstrndup(path, sl);
	if (!pattern_match_segment(ps, ss))
		return false;
	if (!pat_rest || !path_rest)
		return !pat_rest && !path_rest;
	return reference_match(pat_rest, path_rest);
}

static void check_tree(const char *text, const char *path)
{
	size_t len = strlen(text);
	size_t stars = 0, segments = 1;
	for (const char *s = text; (s = strstr(s, "**")); s += 2)
		stars++;
	for (const char *s = path; *s; s++)
		segments += *s == '/';
	if (!*path || stars > 2 || segments > 64) /* the reference backtracks */
		return;
	bool dir_only = text[len - 1] == '/';
	bool anchored = text[0] == '/';
	_cleanup_free_ char *body = xstrndup(text + anchored, len - anchored - dir_only);
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	bool want = !anchored && !strchr(body, '/') ? pattern_match_segment(body, name)
						    : reference_match(body, path);
	struct pattern p;
	pattern_compile(&p, text, false);
	if (pattern_match_path(&p, path, name, dir_only) != want ||
	    pattern_match_path(&p, path, name, !dir_only))
		abort();
	pattern_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *newline = memchr(data, '\n', size);
	size_t pattern_len = newline ? (size_t)(newline - (const char *)data) : size;
	_cleanup_free_ char *text = xstrndup((const char *)data, pattern_len);
	_cleanup_free_ char *name =
	    newline ? xstrndup(newline + 1, size - pattern_len - 1) : xstrdup("");
	_cleanup_error_ struct error err = ERROR_INIT;
	if (strchr(text, '/')) {
		if (pattern_validate_tree(text, &err) == 0)
			check_tree(text, name);
		return 0;
	}
	if (pattern_validate(text, &err) < 0) {
		if (pattern_validate_name(text, &err) == 0)
			abort();
		return 0;
	}

	struct pattern exact, blind;
	pattern_compile(&exact, text, false);
	pattern_compile(&blind, text, true);
	bool segment = pattern_match_segment(text, name);
	if (pattern_match(&exact, name) != segment)
		abort();
	if (blind.kind != PATTERN_GLOB &&
	    pattern_match(&blind, name) != (fnmatch(text, name, FNM_CASEFOLD) == 0))
		abort();
	pattern_release(&exact);
	pattern_release(&blind);
	return 0;
}
