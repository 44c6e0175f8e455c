/* Damerau-free Levenshtein distance over short words. */
#include "base/suggest.h"

#include <string.h>

#include "base/cleanup.h"
#include "base/xalloc.h"

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	_cleanup_free_ size_t *row = xcalloc(lb + 1, sizeof(size_t));
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diagonal = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t above = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = diagonal + cost;
			if (above + 1 < best)
				best = above + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diagonal = above;
		}
	}
	return row[lb];
}

const char *suggest_nearest(const char *word, const char *const *candidates, size_t count)
{
	if (strlen(word) > 64)
		return NULL;
	const char *best = NULL;
	size_t best_distance = (size_t)-1;
	for (size_t i = 0; i < count; i++) {
		size_t d = edit_distance(word, candidates[i]);
		if (d < best_distance) {
			best_distance = d;
			best = candidates[i];
		}
	}
	size_t limit = strlen(word) <= 3 ? 1 : 2;
	return best_distance <= limit ? best : NULL;
}
