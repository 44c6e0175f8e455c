/* libFuzzer target for removing credentials from git config text: any
 * bytes give an output no longer than the input, unchanged when nothing was
 * removed, and stripping that output again removes nothing more. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/url_credentials.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf once = STRBUF_INIT, twice = STRBUF_INIT;
	size_t n = git_strip_url_credentials((const char *)data, size, &once);
	if (once.len > size || (n == 0 && (once.len != size || memcmp(once.buf, data, size))))
		abort();
	if (git_strip_url_credentials(once.buf, once.len, &twice) != 0)
		abort();
	strbuf_release(&once);
	strbuf_release(&twice);
	return 0;
}
