/* Name matching for the secret scan and the environment filter. It works on
 * bytes (no locale, unlike fnmatch(3)), never allocates while matching, and
 * a `*` also matches a leading dot, as everywhere else in agent-sandbox. */
#include "policy/name_pattern.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "policy/pattern.h"
#include "base/xalloc.h"

static inline unsigned char fold(unsigned char c, bool ignore_case)
{
	return ignore_case && c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

int name_pattern_validate(const char *text, struct error *err)
{
	if (!*text)
		return error_set(err, ERROR_CONFIG, "empty pattern");
	if (strchr(text, '/'))
		return error_set(err, ERROR_CONFIG,
				 "invalid pattern \"%s\": patterns match single names, so they "
				 "cannot contain \"/\"",
				 text);
	_cleanup_error_ struct error perr = ERROR_INIT;
	if (pattern_validate(text, &perr) < 0)
		return error_set(err, ERROR_CONFIG, "%s", perr.msg);
	return 0;
}

/* Matches the bracket expression at p[0] == '[' against c; sets *len to its
 * length. Validation guarantees that it is closed. */
static bool class_match(const char *p, unsigned char c, bool ignore_case, size_t *len)
{
	size_t i = 1;
	bool negate = false, found = false;
	if (p[i] == '!' || p[i] == '^') {
		negate = true;
		i++;
	}
	for (bool first = true; p[i] && (first || p[i] != ']'); first = false) {
		unsigned char lo = (unsigned char)p[i];
		if (lo == '\\' && p[i + 1])
			lo = (unsigned char)p[++i];
		i++;
		unsigned char hi = lo;
		if (p[i] == '-' && p[i + 1] && p[i + 1] != ']') {
			hi = (unsigned char)p[i + 1];
			if (hi == '\\' && p[i + 2])
				hi = (unsigned char)p[++i + 1];
			i += 2;
		}
		unsigned char fc = fold(c, ignore_case);
		if ((c >= lo && c <= hi) ||
		    (fc >= fold(lo, ignore_case) && fc <= fold(hi, ignore_case)))
			found = true;
	}
	*len = p[i] == ']' ? i + 1 : i;
	return found != negate;
}

/* The general matcher: iterative, backtracking only to the last `*`. */
static bool glob_match(const char *p, const char *name, size_t len, bool ignore_case)
{
	const char *star_p = NULL;
	size_t star_n = 0, n = 0;
	while (n < len || *p) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			star_p = p;
			star_n = n;
			continue;
		}
		if (n < len && *p) {
			unsigned char c = (unsigned char)name[n];
			size_t step = 1;
			bool ok;
			if (*p == '?') {
				ok = true;
			} else if (*p == '[') {
				ok = class_match(p, c, ignore_case, &step);
			} else {
				const char *lit = p;
				if (*lit == '\\' && lit[1])
					lit++, step = 2;
				ok = fold((unsigned char)*lit, ignore_case) == fold(c, ignore_case);
			}
			if (ok) {
				p += step;
				n++;
				continue;
			}
		}
		if (!star_p || star_n >= len)
			return false;
		p = star_p;
		n = ++star_n;
	}
	return true;
}

void name_pattern_compile(struct name_pattern *p, const char *text, bool ignore_case)
{
	size_t len = strlen(text);
	bool lead = len > 0 && text[0] == '*';
	bool trail = len > 1 && text[len - 1] == '*' && text[len - 2] != '\\';
	_cleanup_free_ char *middle = xstrndup(text + lead, len - lead - (trail ? 1 : 0));
	*p = (struct name_pattern){.text = xstrdup(text), .ignore_case = ignore_case};
	if (pattern_has_glob(middle) || strchr(middle, '\\') || (lead && len == 1)) {
		p->kind = NAME_GLOB;
		return;
	}
	p->literal = pattern_unescape(middle);
	p->literal_len = strlen(p->literal);
	p->kind = lead && trail ? NAME_INFIX
		  : lead	? NAME_SUFFIX
		  : trail	? NAME_PREFIX
				: NAME_EXACT;
}

void name_pattern_release(struct name_pattern *p)
{
	free(p->text);
	free(p->literal);
	*p = (struct name_pattern){0};
}

static bool same(const char *a, const char *b, size_t len, bool ignore_case)
{
	return ignore_case ? strncasecmp(a, b, len) == 0 : memcmp(a, b, len) == 0;
}

bool name_pattern_match(const struct name_pattern *p, const char *name, size_t len)
{
	size_t l = p->literal_len;
	switch (p->kind) {
	case NAME_EXACT:
		return len == l && same(name, p->literal, l, p->ignore_case);
	case NAME_PREFIX:
		return len >= l && same(name, p->literal, l, p->ignore_case);
	case NAME_SUFFIX:
		return len >= l && same(name + len - l, p->literal, l, p->ignore_case);
	case NAME_INFIX:
		if (len < l)
			return false;
		for (size_t i = 0; i + l <= len; i++)
			if (same(name + i, p->literal, l, p->ignore_case))
				return true;
		return false;
	case NAME_GLOB:
		return glob_match(p->text, name, len, p->ignore_case);
	}
	return false;
}

void name_pattern_set_build(struct name_pattern_set *set, char *const *texts, size_t count,
			    bool ignore_case)
{
	*set = (struct name_pattern_set){.items = xcalloc(count ? count : 1, sizeof(*set->items))};
	for (size_t i = 0; i < count; i++) {
		const char *t = texts[i];
		if (t[0] != '!') {
			name_pattern_compile(&set->items[set->len++], t, ignore_case);
			continue;
		}
		for (size_t j = 0; j < set->len;) {
			if (strcmp(set->items[j].text, t + 1) != 0) {
				j++;
				continue;
			}
			name_pattern_release(&set->items[j]);
			memmove(&set->items[j], &set->items[j + 1],
				(set->len - j - 1) * sizeof(*set->items));
			set->len--;
		}
	}
}

const struct name_pattern *name_pattern_set_match(const struct name_pattern_set *set,
						  const char *name, size_t len)
{
	for (size_t i = 0; i < set->len; i++)
		if (name_pattern_match(&set->items[i], name, len))
			return &set->items[i];
	return NULL;
}

void name_pattern_set_release(struct name_pattern_set *set)
{
	for (size_t i = 0; i < set->len; i++)
		name_pattern_release(&set->items[i]);
	free(set->items);
	*set = (struct name_pattern_set){0};
}
