/* libFuzzer target for branch mode's input checks: a branch name the check
 * accepts must make a worktree directory name that is one safe path
 * component (no '/', not "." or "..", no control character, within
 * NAME_MAX), and a duration it accepts must be made of digits and a unit. */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/xalloc.h"
#include "workspace/shelf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct error err = ERROR_INIT;
	if (shelf_branch_check(text, &err) == 0) {
		char *dir = shelf_branch_dir(text);
		if (strchr(dir, '/') || !strcmp(dir, ".") || !strcmp(dir, "..") || dir[0] == '.' ||
		    dir[0] == '-' || strlen(dir) > NAME_MAX)
			abort();
		for (const unsigned char *p = (const unsigned char *)dir; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				abort();
		free(dir);
	} else if (err.kind != ERROR_USAGE) {
		abort();
	}
	error_release(&err);
	unsigned long long ms;
	if (duration_read(text, "fuzz", &ms, &err) == 0 && !isdigit((unsigned char)text[0]))
		abort();
	error_release(&err);
	free(text);
	return 0;
}
