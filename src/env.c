/* Environment lookups. */
#include "env.h"

#include <string.h>

const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}
