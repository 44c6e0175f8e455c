/* A reader for git's config file syntax: sections, subsections, quoting,
 * escapes, continuation lines and comments. It only turns bytes into
 * key/value pairs; what a key means is decided by the caller. The bytes come
 * from the project, so they are untrusted: any input is read to the end
 * without a crash, and a malformed line ends the reading. */
#pragma once

#include "base/strv.h"

#include <stddef.h>

/* Called once per variable. key is "section.name" or
 * "section.subsection.name", with section and name in lower case (git
 * compares them without regard to case) and the subsection as written.
 * value is NULL for a variable written without "=" (boolean true). A
 * nonzero return stops the reading and is returned. */
typedef int (*git_config_fn)(const char *key, const char *value, void *data);

/* Reads text (len bytes, NUL bytes allowed; they end a line's reading as
 * git does not accept them). Returns 0, the callback's nonzero value, or -1
 * when a line is malformed: the variables before it have been reported. */
int git_config_parse(const char *text, size_t len, git_config_fn fn, void *data);

/* The config files a git started with envp reads, in git's order: the
 * system's (GIT_CONFIG_SYSTEM, else /etc/gitconfig), the user's
 * (GIT_CONFIG_GLOBAL, else HOME/.gitconfig, and the XDG one) when home is
 * known, then the repository's (common/config) and its worktree's
 * (git_dir/config.worktree) when given. Both the @git preset and the
 * copies without URL credentials go by this one list. */
void git_config_files(char *const *envp, const char *home, const char *git_dir, const char *common,
		      struct strv *out);

/* When key names an included file (include.path, includeIf.<condition>.path;
 * conditions are not evaluated), the path git opens for value, read in
 * file: "~/" is home, a relative path is taken from file's directory, as
 * written (the kernel resolves "." and ".." when it is opened). NULL for
 * other keys, an empty value, "~user" forms, or "~/" without home. */
char *git_config_include_path(const char *key, const char *value, const char *file,
			      const char *home);
