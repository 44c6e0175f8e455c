/* From rule text to host paths: `~` and relative paths become absolute,
 * globs expand to existing paths, and symlinks are resolved before any
 * decision is made about a path. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/strv.h"

/* `~` and `~/x` name the home directory; relative paths are taken from cwd.
 * The result is an absolute pattern, with `//`, `/./` and a trailing slash
 * removed (`..` is left for path_resolve) and glob characters of home or cwd
 * escaped; pattern_unescape() turns a glob-free result into the path.
 * `$VARS` are not expanded. */
int path_expand(const char *text, const char *home, const char *cwd, char **out, struct error *err);

/* Resolves every symlink in the absolute path `abs`, component by component.
 * Returns 0, or -errno (-ENOENT when something is missing, -ELOOP after 40
 * links). When `links` is not NULL, the location of every symlink followed is
 * appended to it, so callers can ask who could have planted it. When is_dir
 * is not NULL, it tells whether the result is a directory. */
int path_resolve(const char *abs, char **out, struct strv *links, bool *is_dir);
/* The same, with the lstat(2) of the result taken during the walk: the
 * identity of the object the caller decides on, which a mount made later
 * must still show (see mount_plan.h). */
int path_resolve_stat(const char *abs, char **out, struct strv *links, struct stat *final);

/* Reads a symlink's target. Returns 0 or -errno. */
int path_read_link(const char *path, char **out);

/* Appends to `out` the existing paths (unresolved, sorted) that the absolute
 * pattern names; segments without globs are taken literally. */
void path_glob(const char *pattern, struct strv *out);

/* True when path is dir itself or lies beneath it. Both must be normalized. */
bool path_is_within(const char *path, const char *dir);

/* Byte order in which every directory sorts before everything beneath it. */
int path_compare(const char *a, const char *b);

/* path_resolve, and when it returns -ENOENT, *missing is set as by
 * path_resolve_missing (unless the rest climbs with "..": then -EINVAL). */
int path_resolve_or_locate(const char *abs, char **out, struct strv *links, struct stat *final,
			   char **missing);

/* For a path that does not exist: resolves its deepest existing ancestor
 * and appends the missing components, which is where the path would appear.
 * Returns 0, -EEXIST when the path exists, -EINVAL when a missing component
 * is "..", or another -errno as path_resolve returns it. */
int path_resolve_missing(const char *abs, char **out);
