/* libFuzzer target for the @git guard's classifier. The input is split on
 * NUL bytes; leading fields that start with "GIT_" or "HOME" and hold a
 * "=" are git's environment (GIT_CONFIG_PARAMETERS, GIT_CONFIG_KEY_0, ...),
 * the rest its arguments. Every input must be classified without a crash,
 * and a refusal must always carry a form, a reason and an alternative. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "inside/git_guard.h"
#include "base/strv.h"
#include "base/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_strv_ struct strv argv = STRV_INIT, envp = STRV_INIT;
	size_t start = 0;
	for (size_t i = 0; i <= size; i++) {
		if (i == size || data[i] == 0) {
			char *field = xstrndup((const char *)data + start, i - start);
			bool is_env = !argv.len && strchr(field, '=') &&
				      (!strncmp(field, "GIT_", 4) || !strncmp(field, "HOME", 4));
			strv_push_owned(is_env ? &envp : &argv, field);
			start = i + 1;
		}
	}
	char *start_env[] = {NULL};
	_cleanup_git_decision_ struct git_decision d;
	git_guard_classify((int)argv.len, strv_array(&argv), strv_array(&envp), start_env, &d);
	if (d.blocked && (!d.form || !d.reason || !d.alternative))
		abort();
	return 0;
}
