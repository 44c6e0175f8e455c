/* The environment, as a NULL-terminated array passed in (never environ). */
#pragma once

/* The value of name in envp, or NULL. */
const char *env_get(char *const *envp, const char *name);

/* The first executable regular file NAME in the absolute directories of
 * envp's PATH (a standard PATH when unset), or NULL. */
char *env_find_program(char *const *envp, const char *name);

#include <stdbool.h>

#include "base/strv.h"

/* Sets entry ("NAME=VALUE") in envp: in place of NAME's entry, or added. */
void env_put(struct strv *envp, const char *entry);

/* What the sandboxed command's environment is made of. */
struct env_rules {
	bool filter_secrets;	  /* drop names that look like secrets */
	const struct strv *allow; /* name globs always kept */
	const struct strv *block; /* name globs always dropped; beats allow */
	const struct strv *set;	  /* NAME=VALUE, applied last; a later NAME wins */
};

struct env_result {
	struct strv envp;    /* the environment to hand on */
	struct strv dropped; /* names only, never values */
	struct strv reasons; /* why each name was dropped, in the same order */
	struct strv set;     /* names set by env.set, --env NAME=VALUE or a preset */
};

/* The default pattern a name matches when it looks like a secret, or NULL. */
const char *env_secret_pattern(const char *name);

/* Whether a URL value carries a password in its authority
 * ("https://user:password@host/"); *_URL variables that do are dropped. */
bool env_url_has_password(const char *value);

void env_filter(const struct env_rules *rules, char *const *envp, struct env_result *out);

/* Splits ENVP for starting bwrap: variables the dynamic loader or libc act
 * on at start-up (LD_PRELOAD, GCONV_PATH, ...) go to LOADER, the rest to
 * HOST. bwrap runs on the host before the sandbox exists, so the loader's
 * variables must reach only the inside (as --setenv). */
void env_split_loader(char *const *envp, struct strv *host, struct strv *loader);
void env_result_release(struct env_result *r);
