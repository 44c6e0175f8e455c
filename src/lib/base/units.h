/* Quantities written by people: durations such as "90s" or "7d". */
#pragma once

#include "base/error.h"

/* Parses a duration: a whole number and a unit, ms, s, m, h or d ("7d",
 * "90m"). *ms receives milliseconds. what names the input in the error
 * ("--older-than"). An ERROR_USAGE error says the expected form. */
int duration_parse(const char *text, const char *what, unsigned long long *ms, struct error *err);
