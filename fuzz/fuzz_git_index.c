/* libFuzzer target for reading gitlinks out of git's index, which the
 * sandbox writes: every length in it comes from the input. A gitlink it
 * reports must be a non-empty path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strv links = STRV_INIT;
	int r = git_index_gitlinks(data, size, &links);
	if (r < 0 && links.len)
		abort();
	for (size_t i = 0; i < links.len; i++)
		if (!links.items[i][0] || strlen(links.items[i]) >= size)
			abort();
	strv_release(&links);
	return 0;
}
