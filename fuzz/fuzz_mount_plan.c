/* libFuzzer target for the mount plan's decoder: the bytes the init reads
 * from its memfd. Counts and lengths come from the input, so this is where
 * an overread would show; a plan that decodes must hold only absolute,
 * NUL-free paths and encode back to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/mount_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mount_plan plan;
	struct error err = ERROR_INIT;
	if (mount_plan_decode(data, size, &plan, &err) < 0) {
		if (!err.msg || plan.len)
			abort();
		error_release(&err);
		return 0;
	}
	for (size_t i = 0; i < plan.len; i++)
		if (plan.items[i].path[0] != '/')
			abort();
	struct strbuf sb = STRBUF_INIT;
	mount_plan_encode(&plan, &sb);
	if (sb.len != size || memcmp(sb.buf, data, size))
		abort();
	strbuf_release(&sb);
	mount_plan_release(&plan);
	return 0;
}
