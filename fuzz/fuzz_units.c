/* libFuzzer target for the limit parsers (sizes, durations, CPU counts).
 * Any text either parses or gives a reason; what parses formats back to
 * text that parses to the same value. ASan catches reads past the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/units.h"
#include "base/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	const char *why = NULL;
	unsigned long long bytes = 0, ms = 0;
	unsigned milli = 0;
	if (!size_parse(text, &bytes, &why) && !why)
		abort();
	why = NULL;
	if (duration_parse(text, &ms, &why)) {
		_cleanup_free_ char *back = duration_format(ms);
		unsigned long long again = 0;
		if (!duration_parse(back, &again, &why) || again != ms)
			abort();
	} else if (!why) {
		abort();
	}
	why = NULL;
	if (cpus_parse(text, &milli, &why)) {
		if (!milli)
			abort();
		_cleanup_free_ char *back = cpus_format(milli);
		unsigned again = 0;
		if (!cpus_parse(back, &again, &why) || again != milli)
			abort();
	} else if (!why) {
		abort();
	}
	return 0;
}
