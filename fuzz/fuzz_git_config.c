/* libFuzzer target for the git config reader: any bytes must be read to the
 * end or to a refusal without a crash, and every reported key must have a
 * section and a non-empty name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const char *key, const char *value, void *unused)
{
	(void)value;
	(void)unused;
	const char *dot = strrchr(key, '.');
	if (!dot || dot == key || !dot[1])
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	git_config_parse((const char *)data, size, check, NULL);
	return 0;
}
