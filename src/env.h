/* The environment, as a NULL-terminated array passed in (never environ). */
#pragma once

/* The value of name in envp, or NULL. */
const char *env_get(char *const *envp, const char *name);
