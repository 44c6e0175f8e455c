/* Glob syntax checks and single-segment matching. Matching is fnmatch(3)
 * without FNM_PERIOD (hidden names match `*`) and without FNM_PATHNAME (a
 * segment never holds a slash). */
#include "policy/pattern.h"

#include <fnmatch.h>
#include <string.h>

#include "base/xalloc.h"

bool pattern_has_glob(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\') {
			if (!s[1])
				return false;
			s++;
		} else if (*s == '*' || *s == '?' || *s == '[') {
			return true;
		}
	}
	return false;
}

/* Returns the index just past the `]` closing the class that opens at
 * p[0] == '[', or 0 when it is not closed within the segment. */
static size_t class_end(const char *p)
{
	size_t i = 1;
	if (p[i] == '!' || p[i] == '^')
		i++;
	if (p[i] == ']')
		i++; /* a leading `]` is a member, not the end */
	for (; p[i] && p[i] != '/'; i++) {
		if (p[i] == '\\' && p[i + 1] && p[i + 1] != '/')
			i++;
		else if (p[i] == ']')
			return i + 1;
	}
	return 0;
}

int pattern_validate(const char *pattern, struct error *err)
{
	if (!*pattern)
		return error_set(err, ERROR_CONFIG, "empty path");
	for (size_t i = 0; pattern[i];) {
		char c = pattern[i];
		if (c == '\\') {
			if (!pattern[i + 1])
				return error_set(err, ERROR_CONFIG,
						 "invalid glob \"%s\": trailing backslash",
						 pattern);
			i += 2;
		} else if (c == '*' && pattern[i + 1] == '*') {
			return error_set(
			    err, ERROR_CONFIG,
			    "invalid glob \"%s\": \"**\" is not supported (globs match "
			    "within one path segment: use \"*\" per segment)",
			    pattern);
		} else if (c == '[') {
			size_t end = class_end(pattern + i);
			if (!end)
				return error_set(
				    err, ERROR_CONFIG,
				    "invalid glob \"%s\": \"[\" at offset %zu is not "
				    "closed by \"]\" within its path segment (write \"\\[\" "
				    "for a literal bracket)",
				    pattern, i);
			i += end;
		} else {
			i++;
		}
	}
	return 0;
}

bool pattern_match_segment(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0;
}

char *pattern_unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1);
	char *o = out;
	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

char *pattern_escape(const char *s)
{
	char *out = xmalloc(2 * strlen(s) + 1);
	char *o = out;
	for (; *s; s++) {
		if (strchr("*?[]\\", *s))
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}
