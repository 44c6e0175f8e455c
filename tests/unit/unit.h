/* Helpers shared by the unit tests: scratch directories that are removed
 * even when a test fails (through cmocka's teardown), and assertions whose
 * failure messages say which table case broke. Include after <cmocka.h>. */
#pragma once

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xalloc.h"

/* Fails the current test with a message naming the case. */
#define unit_fail(...) fail_msg(__VA_ARGS__)

/* The assertions below name the case with a printf-style fmt. */
static inline void unit_assert_contains(const char *haystack, const char *needle, const char *fmt,
					...) __attribute__((format(printf, 3, 4)));
static inline void unit_assert_contains(const char *haystack, const char *needle, const char *fmt,
					...)
{
	if (haystack && strstr(haystack, needle))
		return;
	va_list ap;
	va_start(ap, fmt);
	char *what = xvasprintf(fmt, ap);
	va_end(ap);
	unit_fail("%s: <%s> does not contain <%s>", what, haystack ? haystack : "(null)", needle);
}

static inline void unit_assert_starts_with(const char *s, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void unit_assert_starts_with(const char *s, const char *prefix, const char *fmt, ...)
{
	if (s && strncmp(s, prefix, strlen(prefix)) == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *what = xvasprintf(fmt, ap);
	va_end(ap);
	unit_fail("%s: <%s> does not start with <%s>", what, s ? s : "(null)", prefix);
}

/* A fresh directory under /tmp, returned with every symlink resolved so
 * that tests can compare it with resolved paths. */
static inline char *unit_tmpdir(const char *name)
{
	char *template = xasprintf("/tmp/as-unit-%s.XXXXXX", name);
	if (!mkdtemp(template))
		unit_fail("mkdtemp %s: %s", template, strerror(errno));
	char *resolved = realpath(template, NULL);
	if (!resolved)
		unit_fail("realpath %s: %s", template, strerror(errno));
	free(template);
	return resolved;
}

static inline int unit_remove_entry(const char *path, const struct stat *st, int flag,
				    struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	if (remove(path) < 0 && errno != ENOENT)
		fprintf(stderr, "cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

/* Removes dir and everything beneath it without following symlinks. */
static inline void unit_rmtree(const char *dir)
{
	if (dir && strncmp(dir, "/tmp/", 5) == 0)
		nftw(dir, unit_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *unit_path(const char *dir, const char *rel)
{
	return xasprintf("%s/%s", dir, rel);
}

static inline void unit_mkdir(const char *dir, const char *rel)
{
	char *p = unit_path(dir, rel);
	if (mkdir(p, 0755) < 0)
		unit_fail("mkdir %s: %s", p, strerror(errno));
	free(p);
}

static inline void unit_write(const char *dir, const char *rel, const char *text)
{
	char *p = unit_path(dir, rel);
	FILE *f = fopen(p, "w");
	if (!f)
		unit_fail("creating %s: %s", p, strerror(errno));
	if (fputs(text, f) == EOF || fclose(f) != 0)
		unit_fail("writing %s: %s", p, strerror(errno));
	free(p);
}

static inline void unit_symlink(const char *target, const char *dir, const char *rel)
{
	char *p = unit_path(dir, rel);
	if (symlink(target, p) < 0)
		unit_fail("symlink %s -> %s: %s", p, target, strerror(errno));
	free(p);
}

/* cmocka setup and teardown that give each test its own scratch directory
 * in *state; unit_tmp_test(f) registers a test with them. */
static inline int unit_setup_tmpdir(void **state)
{
	*state = unit_tmpdir("unit");
	return 0;
}

static inline int unit_teardown_tmpdir(void **state)
{
	unit_rmtree(*state);
	free(*state);
	*state = NULL;
	return 0;
}

#define unit_tmp_test(f) cmocka_unit_test_setup_teardown(f, unit_setup_tmpdir, unit_teardown_tmpdir)
