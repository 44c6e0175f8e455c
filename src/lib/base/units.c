/* Sizes, durations and CPU counts as users write them for limits: one
 * strict grammar each, shared by the config file and the flags, so that a
 * value means the same in both and a typo is an error, never a guess. */
#include "base/units.h"

#include <limits.h>

#include "base/term_escape.h"
#include "base/xalloc.h"

/* Leading decimal digits into *n; false on none or overflow. */
static bool digits(const char **p, unsigned long long *n, const char **why)
{
	const char *s = *p;
	if (*s < '0' || *s > '9') {
		*why = *s == '-' ? "it is negative" : "it does not start with a number";
		return false;
	}
	unsigned long long v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned long long d = (unsigned long long)(*s - '0');
		if (v > ULLONG_MAX / 10 || (v == ULLONG_MAX / 10 && d > ULLONG_MAX % 10)) {
			*why = "it is too large";
			return false;
		}
		v = v * 10 + d;
	}
	*p = s;
	*n = v;
	return true;
}

bool size_parse(const char *text, unsigned long long *bytes, const char **why)
{
	const char *p = text;
	unsigned long long n = 0;
	if (!digits(&p, &n, why))
		return false;
	if (*p == '.') {
		*why = "it has a fraction (write 1536m, not 1.5g)";
		return false;
	}
	unsigned shift = 0;
	switch (*p) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	}
	if (shift) {
		p++;
		if (*p == 'i' || *p == 'I')
			p++;
	}
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p) {
		*why = "the unit is not one of k, m, g or t";
		return false;
	}
	if (shift && n > (ULLONG_MAX >> shift)) {
		*why = "it is too large";
		return false;
	}
	*bytes = n << shift;
	return true;
}

bool duration_parse(const char *text, unsigned long long *ms, const char **why)
{
	const char *p = text;
	unsigned long long n = 0;
	if (!digits(&p, &n, why))
		return false;
	unsigned long long scale;
	if (*p == '.') {
		*why = "it has a fraction (write 1500ms, not 1.5s)";
		return false;
	} else if (!*p) {
		*why = "it has no unit (ms, s, m, h or d)";
		return false;
	} else if (p[0] == 'm' && p[1] == 's' && !p[2])
		scale = 1;
	else if (p[0] == 's' && !p[1])
		scale = 1000;
	else if (p[0] == 'm' && !p[1])
		scale = 60 * 1000;
	else if (p[0] == 'h' && !p[1])
		scale = 3600 * 1000;
	else if (p[0] == 'd' && !p[1])
		scale = 24 * 3600 * 1000;
	else {
		*why = "the unit is not one of ms, s, m, h or d";
		return false;
	}
	if (n > ULLONG_MAX / scale) {
		*why = "it is too large";
		return false;
	}
	*ms = n * scale;
	return true;
}

bool cpus_parse(const char *text, unsigned *milli, const char **why)
{
	const char *p = text;
	unsigned long long n = 0;
	if (!digits(&p, &n, why))
		return false;
	if (n > UINT_MAX / 1000 - 1) {
		*why = "it is too large";
		return false;
	}
	unsigned frac = 0, scale = 100;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9') {
			*why = "a digit must follow the decimal point";
			return false;
		}
		for (; *p >= '0' && *p <= '9'; p++, scale /= 10) {
			if (!scale) {
				*why = "it has more than three decimals";
				return false;
			}
			frac += (unsigned)(*p - '0') * scale;
		}
	}
	if (*p) {
		*why = "it is not a number like 2 or 0.5";
		return false;
	}
	unsigned v = (unsigned)n * 1000 + frac;
	if (!v) {
		*why = "it is zero";
		return false;
	}
	*milli = v;
	return true;
}

char *duration_format(unsigned long long ms)
{
	if (ms && ms % (3600 * 1000) == 0)
		return xasprintf("%lluh", ms / (3600 * 1000));
	if (ms && ms % (60 * 1000) == 0)
		return xasprintf("%llum", ms / (60 * 1000));
	if (ms % 1000 == 0)
		return xasprintf("%llus", ms / 1000);
	return xasprintf("%llums", ms);
}

char *cpus_format(unsigned milli)
{
	if (milli % 1000 == 0)
		return xasprintf("%u", milli / 1000);
	char *s = xasprintf("%u.%03u", milli / 1000, milli % 1000);
	/* Trailing zeros of the fraction say nothing. */
	size_t len = 0;
	while (s[len])
		len++;
	while (s[len - 1] == '0')
		s[--len] = '\0';
	return s;
}

int duration_read(const char *text, const char *what, unsigned long long *ms, struct error *err)
{
	const char *why = NULL;
	if (duration_parse(text, ms, &why))
		return 0;
	_cleanup_free_ char *shown = term_escape(text);
	error_set(err, ERROR_USAGE, "%s: invalid duration \"%s\": %s", what, shown, why);
	error_hint(err, "expected a whole number and a unit: ms, s, m, h or d (e.g. 90s, 7d)");
	return -1;
}
