/* Durations from text, checked for range: a malformed or overflowing value
 * is an error that names the input, never a silent zero. */
#include "base/units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

int duration_parse(const char *text, const char *what, unsigned long long *ms, struct error *err)
{
	static const struct {
		const char *suffix;
		unsigned long long ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
	if (text[0] >= '0' && text[0] <= '9') {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(text, &end, 10);
		for (size_t i = 0; errno == 0 && end != text && i < ARRAY_SIZE(units); i++)
			if (!strcmp(end, units[i].suffix) && v <= ~0ULL / units[i].ms) {
				*ms = v * units[i].ms;
				return 0;
			}
	}
	error_set(err, ERROR_USAGE, "%s: invalid duration \"%s\"", what, text);
	error_hint(err, "expected a whole number and a unit: ms, s, m, h or d (e.g. 90s, 7d)");
	return -1;
}
