/* libFuzzer target for glob patterns: the input is a pattern, a newline and
 * a name. Validation must finish without a crash; for every pattern it
 * accepts, the compiled form (with its literal fast paths) must agree with
 * path-segment matching, and so must the case-blind fast paths with
 * fnmatch(3) under FNM_CASEFOLD. ASan catches any read past the input. */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "policy/pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *newline = memchr(data, '\n', size);
	size_t pattern_len = newline ? (size_t)(newline - (const char *)data) : size;
	_cleanup_free_ char *text = xstrndup((const char *)data, pattern_len);
	_cleanup_free_ char *name =
	    newline ? xstrndup(newline + 1, size - pattern_len - 1) : xstrdup("");
	_cleanup_error_ struct error err = ERROR_INIT;
	if (pattern_validate(text, &err) < 0 || strchr(text, '/')) {
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
