/* The one glob engine: syntax checks, single-segment matching for path
 * rules, compiled name patterns for the environment filter, and compiled
 * tree patterns (names, or segments anchored at a root, with "**") for the
 * secret scan. Matching is fnmatch(3) without FNM_PERIOD (hidden names match `*`)
 * and without FNM_PATHNAME (a segment never holds a slash); the program never
 * calls setlocale(3), so fnmatch works on bytes in the C locale. */
#include "policy/pattern.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
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

static bool is_class_name(const char *name, size_t len)
{
	static const char *const classes[] = {"alnum", "alpha", "blank", "cntrl",
					      "digit", "graph", "lower", "print",
					      "punct", "space", "upper", "xdigit"};
	for (size_t i = 0; i < ARRAY_SIZE(classes); i++)
		if (strlen(classes[i]) == len && !memcmp(classes[i], name, len))
			return true;
	return false;
}

/* Reads the bracket expression that opens at p[0] == '[' the way glibc's
 * fnmatch(3) does, so that validation and matching agree on where it ends.
 * Returns the length up to and past its closing `]`, or 0 when it is not
 * closed within the segment. *bad is set to the offset of a `[:name:]` with
 * an unknown name or of a `[.` or `[=` (collating elements, which fnmatch
 * reads its own way), and left alone otherwise. */
static size_t bracket_len(const char *p, size_t *bad)
{
	size_t i = 1;
	if (p[i] == '!' || p[i] == '^')
		i++;
	if (p[i] == ']')
		i++; /* a leading `]` is a member, not the end */
	for (; p[i] && p[i] != '/'; i++) {
		if (p[i] == '\\' && p[i + 1] && p[i + 1] != '/') {
			i++;
		} else if (p[i] == ']') {
			return i + 1;
		} else if (p[i] == '[' && (p[i + 1] == '.' || p[i + 1] == '=')) {
			*bad = i;
		} else if (p[i] == '[' && p[i + 1] == ':') {
			/* fnmatch takes `[:` for a class only when lower-case
			 * letters and `:]` follow; otherwise `[` is a member. */
			size_t j = i + 2;
			while (p[j] >= 'a' && p[j] < 'z')
				j++;
			if (p[j] != ':' || p[j + 1] != ']')
				continue;
			if (!is_class_name(p + i + 2, j - i - 2))
				*bad = i;
			i = j + 1;
		}
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
			size_t bad = 0;
			size_t end = bracket_len(pattern + i, &bad);
			if (!end)
				return error_set(
				    err, ERROR_CONFIG,
				    "invalid glob \"%s\": \"[\" at offset %zu is not "
				    "closed by \"]\" within its path segment (write \"\\[\" "
				    "for a literal bracket)",
				    pattern, i);
			if (bad && pattern[i + bad + 1] == ':')
				return error_set(
				    err, ERROR_CONFIG,
				    "invalid glob \"%s\": unknown character class at offset "
				    "%zu (the classes are alnum, alpha, blank, cntrl, digit, "
				    "graph, lower, print, punct, space, upper, xdigit)",
				    pattern, i + bad);
			if (bad)
				return error_set(
				    err, ERROR_CONFIG,
				    "invalid glob \"%s\": \"[%c\" at offset %zu inside brackets "
				    "is not supported (write \"\\[\" for a literal bracket)",
				    pattern, pattern[i + bad + 1], i + bad);
			i += end;
		} else {
			i++;
		}
	}
	return 0;
}

int pattern_validate_name(const char *text, struct error *err)
{
	if (!*text)
		return error_set(err, ERROR_CONFIG, "empty pattern");
	if (strchr(text, '/'))
		return error_set(err, ERROR_CONFIG,
				 "invalid pattern \"%s\": patterns match single names, so they "
				 "cannot contain \"/\"",
				 text);
	return pattern_validate(text, err);
}

/* Whether a segment holds an unescaped "**". */
static bool has_double_star(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '*' && s[i + 1] == '*')
			return true;
	}
	return false;
}

#define TREE_FORMS                                                                                 \
	"expected a name such as \"*.pem\" (any depth), a directory such as \"certs/\", or "       \
	"a path from the working directory such as \"config/prod.pem\", \"/secrets/*.key\" or "    \
	"\"config/**/*.pem\""

int pattern_validate_tree(const char *text, struct error *err)
{
	size_t len = strlen(text);
	size_t start = text[0] == '/';
	size_t end = len > start && text[len - 1] == '/' ? len - 1 : len;
	if (!memchr(text, '/', len))
		/* A bare name: what it always was. */
		return pattern_validate_name(text, err);
	if (end == start)
		return error_set(err, ERROR_CONFIG, "invalid pattern \"%s\": it names no file (%s)",
				 text, TREE_FORMS);
	size_t segments = 0;
	for (size_t i = start; i <= end; i++) {
		size_t n = strcspn(text + i, "/");
		if (i + n > end)
			n = end - i;
		const char *seg = text + i;
		if (n == 0)
			return error_set(
			    err, ERROR_CONFIG,
			    "invalid pattern \"%s\": empty segment at offset %zu (write "
			    "one \"/\" between names; %s)",
			    text, i, TREE_FORMS);
		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return error_set(err, ERROR_CONFIG,
					 "invalid pattern \"%s\": \"%.*s\" segment at offset %zu "
					 "(patterns are paths below the working directory, without "
					 "\".\" or \"..\"; %s)",
					 text, (int)n, seg, i, TREE_FORMS);
		if (++segments > PATTERN_MAX_SEGMENTS)
			return error_set(err, ERROR_CONFIG,
					 "invalid pattern \"%s\": more than %d segments", text,
					 PATTERN_MAX_SEGMENTS);
		if (n == 2 && seg[0] == '*' && seg[1] == '*') {
			i += n;
			continue;
		}
		if (has_double_star(seg, n))
			return error_set(
			    err, ERROR_CONFIG,
			    "invalid pattern \"%s\": \"**\" at offset %zu is not a whole "
			    "segment (it spans directories as in \"**/.env*\", "
			    "\"config/**/*.pem\" or \"build/**\"; write \"*\" within a "
			    "name)",
			    text, i);
		_cleanup_free_ char *copy = xstrndup(seg, n);
		_cleanup_error_ struct error perr = ERROR_INIT;
		if (pattern_validate(copy, &perr) < 0)
			return error_set(err, ERROR_CONFIG,
					 "invalid pattern \"%s\": segment at "
					 "offset %zu: %s",
					 text, i, perr.msg);
		i += n;
	}
	return 0;
}

/* Copies pattern with every bracket negation spelled `[!`: glibc's fnmatch
 * stops reading `[^` as a negation when POSIXLY_CORRECT is set, and a rule
 * must not change meaning with the user's environment. */
static char *portable_glob(const char *pattern)
{
	char *out = xstrdup(pattern);
	for (size_t i = 0; out[i];) {
		if (out[i] == '\\' && out[i + 1]) {
			i += 2;
		} else if (out[i] == '[') {
			size_t bad = 0;
			size_t len = bracket_len(out + i, &bad);
			if (len && out[i + 1] == '^')
				out[i + 1] = '!';
			i += len ? len : 1;
		} else {
			i++;
		}
	}
	return out;
}

bool pattern_match_segment(const char *pattern, const char *name)
{
	if (!strchr(pattern, '^'))
		return fnmatch(pattern, name, 0) == 0;
	_cleanup_free_ char *glob = portable_glob(pattern);
	return fnmatch(glob, name, 0) == 0;
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

/* Compiles a name pattern into p, whose text the caller sets. */
static void compile_name(struct pattern *p, const char *text)
{
	size_t len = strlen(text);
	bool lead = len > 0 && text[0] == '*';
	bool trail = len > 1 && text[len - 1] == '*' && text[len - 2] != '\\';
	_cleanup_free_ char *middle = xstrndup(text + lead, len - lead - (trail ? 1 : 0));
	if (pattern_has_glob(middle) || strchr(middle, '\\') || (lead && len == 1)) {
		p->kind = PATTERN_GLOB;
		p->literal = portable_glob(text);
		return;
	}
	p->literal = xstrdup(middle);
	p->literal_len = strlen(p->literal);
	p->kind = lead && trail ? PATTERN_INFIX
		  : lead	? PATTERN_SUFFIX
		  : trail	? PATTERN_PREFIX
				: PATTERN_EXACT;
}

/* An anchored tree pattern: one compiled pattern per segment, runs of "**"
 * folded into one (they mean the same and would only add states). */
static void compile_segments(struct pattern *p, const char *body, bool ignore_case)
{
	size_t n = 1;
	for (const char *c = body; *c; c++)
		n += *c == '/';
	p->segments = xcalloc(n, sizeof(*p->segments));
	for (const char *c = body;;) {
		size_t len = strcspn(c, "/");
		_cleanup_free_ char *seg = xstrndup(c, len);
		bool dirs = !strcmp(seg, "**");
		size_t k = p->segments_len;
		if (!dirs || !k || p->segments[k - 1].kind != PATTERN_DIRS) {
			struct pattern *q = &p->segments[p->segments_len++];
			*q = (struct pattern){.text = xstrdup(seg), .ignore_case = ignore_case};
			if (dirs)
				q->kind = PATTERN_DIRS;
			else
				compile_name(q, seg);
		}
		if (!c[len])
			break;
		c += len + 1;
	}
	p->kind = PATTERN_GLOB;
}

void pattern_compile(struct pattern *p, const char *text, bool ignore_case)
{
	size_t len = strlen(text);
	*p = (struct pattern){.text = xstrdup(text), .ignore_case = ignore_case};
	if (!memchr(text, '/', len)) {
		compile_name(p, text);
		return;
	}
	p->dir_only = text[len - 1] == '/';
	bool anchored = text[0] == '/';
	_cleanup_free_ char *body = xstrndup(text + anchored, len - anchored - p->dir_only);
	/* "**\/x" is "x" at any depth: a name, on the fast path. */
	const char *rest = body;
	while (!anchored && !strncmp(rest, "**/", 3))
		rest += 3;
	if (!anchored && !strchr(rest, '/'))
		compile_name(p, rest);
	else
		compile_segments(p, body, ignore_case);
}

void pattern_release(struct pattern *p)
{
	for (size_t i = 0; i < p->segments_len; i++)
		pattern_release(&p->segments[i]);
	free(p->segments);
	free(p->text);
	free(p->literal);
	*p = (struct pattern){0};
}

static bool same(const char *a, const char *b, size_t len, bool ignore_case)
{
	return ignore_case ? strncasecmp(a, b, len) == 0 : memcmp(a, b, len) == 0;
}

static bool match_len(const struct pattern *p, const char *name, size_t len)
{
	size_t l = p->literal_len;
	switch (p->kind) {
	case PATTERN_EXACT:
		return len == l && same(name, p->literal, l, p->ignore_case);
	case PATTERN_PREFIX:
		return len >= l && same(name, p->literal, l, p->ignore_case);
	case PATTERN_SUFFIX:
		return len >= l && same(name + len - l, p->literal, l, p->ignore_case);
	case PATTERN_INFIX:
		if (len < l)
			return false;
		for (size_t i = 0; i + l <= len; i++)
			if (same(name + i, p->literal, l, p->ignore_case))
				return true;
		return false;
	case PATTERN_GLOB:
		return fnmatch(p->literal, name, p->ignore_case ? FNM_CASEFOLD : 0) == 0;
	case PATTERN_DIRS:
		return false;
	}
	return false;
}

/* Matches the segment s[0..len), which a "/" or the end of the string
 * follows. */
static bool match_segment_len(const struct pattern *p, const char *s, size_t len)
{
	if (p->kind != PATTERN_GLOB || !s[len])
		return match_len(p, s, len);
	/* fnmatch wants the segment on its own; names are at most 255 bytes. */
	char buf[256];
	if (len < sizeof(buf)) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		return match_len(p, buf, len);
	}
	_cleanup_free_ char *copy = xstrndup(s, len);
	return match_len(p, copy, len);
}

/* Adds the states reached without reading a segment: past a "**" that
 * matches none. A trailing "**" matches at least one, so that "build/" then
 * "**" matches what is inside build, not build itself. */
static uint64_t skip_empty_dirs(const struct pattern *segs, size_t n, uint64_t states)
{
	for (size_t i = 0; i + 1 < n; i++)
		if ((states >> i & 1) && segs[i].kind == PATTERN_DIRS)
			states |= UINT64_C(1) << (i + 1);
	return states;
}

/* Segments against the path, as a set of states (bit i: the first i
 * segments matched what was read), so that any number of "**" costs one
 * pass over the path, never backtracking. */
static uint64_t run_segments(const struct pattern *segs, size_t n, const char *rel)
{
	uint64_t states = skip_empty_dirs(segs, n, 1);
	for (const char *s = rel;;) {
		size_t len = strcspn(s, "/");
		uint64_t next = 0;
		for (size_t i = 0; i < n; i++) {
			if (!(states >> i & 1))
				continue;
			if (segs[i].kind == PATTERN_DIRS)
				next |= UINT64_C(1) << i | (i + 1 == n ? UINT64_C(1) << n : 0);
			else if (match_segment_len(&segs[i], s, len))
				next |= UINT64_C(1) << (i + 1);
		}
		states = skip_empty_dirs(segs, n, next);
		if (!states || !s[len])
			return states;
		s += len + 1;
	}
}

static bool match_segments(const struct pattern *segs, size_t n, const char *rel)
{
	return run_segments(segs, n, rel) >> n & 1;
}

bool pattern_match(const struct pattern *p, const char *name)
{
	if (p->segments)
		return match_segments(p->segments, p->segments_len, name);
	return match_len(p, name, strlen(name));
}

bool pattern_match_path(const struct pattern *p, const char *rel, const char *name, bool is_dir)
{
	if (p->dir_only != is_dir)
		return false;
	if (p->segments)
		return match_segments(p->segments, p->segments_len, rel);
	return match_len(p, name, strlen(name));
}

void pattern_set_build(struct pattern_set *set, char *const *texts, size_t count, bool ignore_case)
{
	*set = (struct pattern_set){.items = xcalloc(count ? count : 1, sizeof(*set->items))};
	for (size_t i = 0; i < count; i++) {
		const char *t = texts[i];
		if (t[0] != '!') {
			pattern_compile(&set->items[set->len++], t, ignore_case);
			continue;
		}
		for (size_t j = 0; j < set->len;) {
			if (strcmp(set->items[j].text, t + 1) != 0) {
				j++;
				continue;
			}
			pattern_release(&set->items[j]);
			memmove(&set->items[j], &set->items[j + 1],
				(set->len - j - 1) * sizeof(*set->items));
			set->len--;
		}
	}
	for (size_t i = 0; i < set->len; i++)
		set->dir_only += set->items[i].dir_only;
}

const struct pattern *pattern_set_match(const struct pattern_set *set, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < set->len; i++)
		if (!set->items[i].segments && !set->items[i].dir_only &&
		    match_len(&set->items[i], name, len))
			return &set->items[i];
	return NULL;
}

bool pattern_set_reaches_below(const struct pattern_set *set, const char *rel)
{
	for (size_t i = 0; i < set->len; i++) {
		const struct pattern *p = &set->items[i];
		/* A state short of the last segment: more to match below. */
		if (p->segments && run_segments(p->segments, p->segments_len, rel) &
				       ((UINT64_C(1) << p->segments_len) - 1))
			return true;
	}
	return false;
}

const struct pattern *pattern_set_match_path(const struct pattern_set *set, const char *rel,
					     const char *name, bool is_dir)
{
	if (is_dir && !set->dir_only)
		return NULL;
	size_t len = strlen(name);
	for (size_t i = 0; i < set->len; i++) {
		const struct pattern *p = &set->items[i];
		if (p->dir_only != is_dir)
			continue;
		if (p->segments ? match_segments(p->segments, p->segments_len, rel)
				: match_len(p, name, len))
			return p;
	}
	return NULL;
}

void pattern_set_release(struct pattern_set *set)
{
	for (size_t i = 0; i < set->len; i++)
		pattern_release(&set->items[i]);
	free(set->items);
	*set = (struct pattern_set){0};
}
