/* "Did you mean ...?" for misspelled keys, presets and verbs. */
#pragma once

#include <stddef.h>

/* The candidate closest to word by edit distance, if it is close enough to
 * be a plausible typo; NULL otherwise. */
const char *suggest_nearest(const char *word, const char *const *candidates, size_t count);
