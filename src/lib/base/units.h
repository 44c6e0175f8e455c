/* Parsers for the quantities a user writes for resource limits: sizes
 * ("512m", "4g", "1048576"), durations ("90s", "10m") and CPU counts
 * ("2", "0.5"). Pure text in, a number or the reason it is not one out. */
#pragma once

#include <stdbool.h>

#include "base/error.h"

/* A size: a whole number with an optional k, m, g or t (binary units, either
 * case, optionally followed by "b" or "ib"); without a unit, bytes.
 * Fractions ("1.5g") are refused: write "1536m". On failure returns false
 * and sets *why to what is wrong. */
bool size_parse(const char *text, unsigned long long *bytes, const char **why);

/* A duration: a whole number followed by ms, s, m, h or d (a unit is
 * required: a bare "10" could mean any of them). */
bool duration_parse(const char *text, unsigned long long *ms, const char **why);

/* The same, with an ERROR_USAGE error naming what ("--older-than") and the
 * expected form. */
int duration_read(const char *text, const char *what, unsigned long long *ms, struct error *err);

/* A number of CPUs, with up to three decimals ("2", "0.5", "1.25"), in
 * thousandths; more than zero. */
bool cpus_parse(const char *text, unsigned *milli, const char **why);

/* "1500ms", "90s", "10m", "2h": the largest unit that is exact. */
char *duration_format(unsigned long long ms);
/* "2", "0.5", "1.25". */
char *cpus_format(unsigned milli);
