/* libFuzzer target for the @git guard's classifier. The input is split on
 * NUL bytes into git's arguments; every input must be classified without a
 * crash, and a refusal must always carry a form, a reason and an
 * alternative. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "git_guard.h"
#include "strv.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_strv_ struct strv argv = STRV_INIT;
	size_t start = 0;
	for (size_t i = 0; i <= size; i++) {
		if (i == size || data[i] == 0) {
			strv_push_owned(&argv, xstrndup((const char *)data + start, i - start));
			start = i + 1;
		}
	}
	char *no_env[] = {NULL};
	_cleanup_git_decision_ struct git_decision d;
	git_guard_classify((int)argv.len, strv_array(&argv), no_env, &d);
	if (d.blocked && (!d.form || !d.reason || !d.alternative))
		abort();
	return 0;
}
