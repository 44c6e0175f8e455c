/* Unit tests for paths: expanding `~` and relative rule text, resolving
 * symlinks in a scratch tree built for each test, glob expansion, and the
 * order and containment relations the policy relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "policy/path.h"
#include "unit.h"

static void path_expand_makes_rule_text_absolute(void **state)
{
	static const struct {
		const char *text;
		const char *home;
		const char *cwd;
		const char *expected;
	} cases[] = {
	    {"~", "/home/u", "/w", "/home/u"},
	    {"~/", "/home/u", "/w", "/home/u"},
	    {"~/.ssh", "/home/u", "/w", "/home/u/.ssh"},
	    {"~/a//b/./c/", "/home/u/", "/w", "/home/u/a/b/c"},
	    {"~", "/", "/w", "/"},
	    {"src", "/home/u", "/w/p", "/w/p/src"},
	    {"./src/", "/home/u", "/w/p", "/w/p/src"},
	    {".", "/home/u", "/w/p", "/w/p"},
	    {"a/../b", "/home/u", "/w", "/w/a/../b"}, /* ".." is left for path_resolve */
	    {"*.py", "/home/u", "/w", "/w/*.py"},
	    {"$HOME/x", "/home/u", "/w", "/w/$HOME/x"}, /* no variable expansion */
	    {"x~", "/home/u", "/w", "/w/x~"},
	    {"/abs/path/", "/home/u", "/w", "/abs/path"},
	    {"//abs///./x", "/home/u", "/w", "/abs/x"},
	    {"/", "/home/u", "/w", "/"},
	    {"/abs", NULL, "/w", "/abs"}, /* home is only needed for "~" */
	    {"rel", NULL, "/", "/rel"},
	    /* Glob characters in home or cwd are escaped, those in the text kept. */
	    {"~/*.pem", "/h[1]", "/w", "/h\\[1\\]/*.pem"},
	    {"x?", "/home/u", "/w*/p", "/w\\*/p/x?"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		_cleanup_free_ char *out = NULL;
		if (path_expand(cases[i].text, cases[i].home, cases[i].cwd, &out, &err) != 0)
			unit_fail("case %zu <%s>: failed: %s", i, cases[i].text, err.msg);
		if (strcmp(out, cases[i].expected) != 0)
			unit_fail("case %zu <%s>: expanded to <%s>, expected <%s>", i,
				  cases[i].text, out, cases[i].expected);
	}
}

static void path_expand_rejects_text_it_cannot_expand(void **state)
{
	static const struct {
		const char *text;
		const char *home;
		const char *message;
	} cases[] = {
	    {"", "/home/u", "empty path"},
	    {"~user/x", "/home/u", "\"~user/x\": only \"~\" and \"~/...\" are supported"},
	    {"~root", "/home/u", "\"~root\": only \"~\" and \"~/...\" are supported"},
	    {"~", NULL, "\"~\": the home directory is not known (HOME is unset)"},
	    {"~/.ssh", NULL, "\"~/.ssh\": the home directory is not known"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		char *out = NULL;
		char what[64];
		snprintf(what, sizeof(what), "case %zu <%s>", i, cases[i].text);
		if (path_expand(cases[i].text, cases[i].home, "/w", &out, &err) != -1)
			unit_fail("%s: accepted as <%s>", what, out);
		if (out)
			unit_fail("%s: output set on failure", what);
		if (err.kind != ERROR_CONFIG)
			unit_fail("%s: code %d", what, (int)err.kind);
		unit_assert_starts_with(err.msg, cases[i].message, "%s", what);
	}
}

/* The scratch tree:
 *   real/            directory
 *   real/f           file
 *   real/up       -> ../real
 *   link          -> real
 *   abs           -> <dir>/real
 *   chain         -> link
 *   dangling      -> missing
 *   loop1 -> loop2 -> loop1 */
static void make_tree(const char *dir)
{
	unit_mkdir(dir, "real");
	unit_write(dir, "real/f", "x");
	unit_symlink("../real", dir, "real/up");
	unit_symlink("real", dir, "link");
	_cleanup_free_ char *real = unit_path(dir, "real");
	unit_symlink(real, dir, "abs");
	unit_symlink("link", dir, "chain");
	unit_symlink("missing", dir, "dangling");
	unit_symlink("loop2", dir, "loop1");
	unit_symlink("loop1", dir, "loop2");
}

static void path_resolve_follows_symlinks_and_reports_them(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct {
		const char *path;
		const char *expected;
		bool is_dir;
		const char *links[4];
	} cases[] = {
	    {"real", "real", true, {NULL}},
	    {"real/f", "real/f", false, {NULL}},
	    {"link", "real", true, {"link"}},
	    {"link/f", "real/f", false, {"link"}},
	    {"abs/f", "real/f", false, {"abs"}},
	    {"chain/f", "real/f", false, {"chain", "link"}},
	    {"real/up/up/f", "real/f", false, {"real/up", "real/up"}},
	    {"real/../real/./f", "real/f", false, {NULL}},
	    {"link/../real", "real", true, {"link"}}, /* ".." of the target, not the link */
	    {"real//f", "real/f", false, {NULL}},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *abs = unit_path(dir, cases[i].path);
		_cleanup_free_ char *expected = unit_path(dir, cases[i].expected);
		_cleanup_free_ char *out = NULL;
		_cleanup_strv_ struct strv links = STRV_INIT;
		bool is_dir = !cases[i].is_dir;
		int r = path_resolve(abs, &out, &links, &is_dir);
		if (r != 0)
			unit_fail("case %zu <%s>: failed: %s", i, cases[i].path, strerror(-r));
		if (strcmp(out, expected) != 0)
			unit_fail("case %zu <%s>: resolved to <%s>, expected <%s>", i,
				  cases[i].path, out, expected);
		if (is_dir != cases[i].is_dir)
			unit_fail("case %zu <%s>: is_dir is %d", i, cases[i].path, is_dir);
		size_t n = 0;
		while (n < ARRAY_SIZE(cases[i].links) && cases[i].links[n])
			n++;
		if (links.len != n)
			unit_fail("case %zu <%s>: %zu links followed, expected %zu", i,
				  cases[i].path, links.len, n);
		for (size_t j = 0; j < n; j++) {
			_cleanup_free_ char *link = unit_path(dir, cases[i].links[j]);
			if (strcmp(links.items[j], link) != 0)
				unit_fail("case %zu <%s>: link %zu is <%s>, expected <%s>", i,
					  cases[i].path, j, links.items[j], link);
		}
	}
}

static void path_resolve_returns_errno_when_path_cannot_be_resolved(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct {
		const char *path;
		int error;
	} cases[] = {
	    {"missing", -ENOENT},      {"real/missing", -ENOENT}, {"dangling", -ENOENT},
	    {"link/missing", -ENOENT}, {"loop1", -ELOOP},	  {"loop2/x", -ELOOP},
	    {"real/f/x", -ENOTDIR},    {"real/f/..", -ENOTDIR},	  {"link/f/.", -ENOTDIR},
	    {"link/f/x", -ENOTDIR},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *abs = unit_path(dir, cases[i].path);
		char *out = NULL;
		int r = path_resolve(abs, &out, NULL, NULL);
		if (r != cases[i].error)
			unit_fail("case %zu <%s>: returned %d (%s), expected %d (%s)", i,
				  cases[i].path, r, strerror(-r), cases[i].error,
				  strerror(-cases[i].error));
		if (out)
			unit_fail("case %zu <%s>: output set on failure", i, cases[i].path);
	}
	char *out = NULL;
	assert_int_equal(path_resolve("relative/path", &out, NULL, NULL), -EINVAL);
	assert_null(out);
}

static void path_resolve_follows_at_most_40_symlinks(void **state)
{
	const char *dir = *state;
	/* c0 -> c1 -> ... -> c40 -> real: 41 links from c0, 40 from c1. */
	unit_mkdir(dir, "real");
	for (int i = 0; i <= 40; i++) {
		_cleanup_free_ char *name = xasprintf("c%d", i);
		_cleanup_free_ char *target = i < 40 ? xasprintf("c%d", i + 1) : xstrdup("real");
		unit_symlink(target, dir, name);
	}
	_cleanup_free_ char *c0 = unit_path(dir, "c0");
	_cleanup_free_ char *c1 = unit_path(dir, "c1");
	_cleanup_free_ char *real = unit_path(dir, "real");
	_cleanup_free_ char *out = NULL;
	_cleanup_strv_ struct strv links = STRV_INIT;
	assert_int_equal(path_resolve(c1, &out, &links, NULL), 0);
	assert_string_equal(out, real);
	assert_int_equal(links.len, 40);
	char *none = NULL;
	assert_int_equal(path_resolve(c0, &none, NULL, NULL), -ELOOP);
	assert_null(none);
}

static void path_resolve_returns_root_for_root(void **state)
{
	_cleanup_free_ char *out = NULL;
	bool is_dir = false;
	assert_int_equal(path_resolve("/", &out, NULL, &is_dir), 0);
	assert_string_equal(out, "/");
	assert_true(is_dir);
	free(out);
	out = NULL;
	assert_int_equal(path_resolve("/..//./", &out, NULL, NULL), 0);
	assert_string_equal(out, "/");
}

static void path_read_link_returns_whole_target_when_long(void **state)
{
	const char *dir = *state;
	/* Longer than the first read buffer, so the buffer has to grow. */
	char target[301];
	for (size_t i = 0; i < sizeof(target) - 1; i++)
		target[i] = i % 2 ? '/' : 'x';
	target[sizeof(target) - 1] = '\0';
	unit_symlink(target, dir, "long");
	unit_write(dir, "file", "");

	_cleanup_free_ char *link = unit_path(dir, "long");
	_cleanup_free_ char *out = NULL;
	assert_int_equal(path_read_link(link, &out), 0);
	assert_string_equal(out, target);

	_cleanup_free_ char *file = unit_path(dir, "file");
	char *none = NULL;
	assert_int_equal(path_read_link(file, &none), -EINVAL);
	assert_null(none);
}

static void path_glob_lists_existing_matches_sorted(void **state)
{
	const char *dir = *state;
	unit_write(dir, "b.json", "");
	unit_write(dir, "a.json", "");
	unit_write(dir, ".c.json", "");
	unit_write(dir, "d.txt", "");
	unit_mkdir(dir, "x");
	unit_mkdir(dir, "y");
	unit_write(dir, "x/f", "");
	unit_write(dir, "y/f", "");
	unit_mkdir(dir, "z");
	static const struct {
		const char *pattern;
		const char *expected[4];
	} cases[] = {
	    {"*.json", {".c.json", "a.json", "b.json"}},
	    {"?.txt", {"d.txt"}},
	    {"[xz]", {"x", "z"}},
	    {"*/f", {"x/f", "y/f"}},
	    {"x/f", {"x/f"}},
	    {"*.none", {NULL}},
	    {"missing/*", {NULL}},
	    {"x/missing", {NULL}},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *pattern = unit_path(dir, cases[i].pattern);
		_cleanup_strv_ struct strv out = STRV_INIT;
		path_glob(pattern, &out);
		size_t n = 0;
		while (n < ARRAY_SIZE(cases[i].expected) && cases[i].expected[n])
			n++;
		if (out.len != n)
			unit_fail("case %zu <%s>: %zu matches, expected %zu", i, cases[i].pattern,
				  out.len, n);
		for (size_t j = 0; j < n; j++) {
			_cleanup_free_ char *expected = unit_path(dir, cases[i].expected[j]);
			if (strcmp(out.items[j], expected) != 0)
				unit_fail("case %zu <%s>: match %zu is <%s>, expected <%s>", i,
					  cases[i].pattern, j, out.items[j], expected);
		}
	}
}

static void path_is_within_accepts_only_whole_segments(void **state)
{
	static const struct {
		const char *path;
		const char *dir;
		bool within;
	} cases[] = {
	    {"/a", "/a", true},
	    {"/a/b", "/a", true},
	    {"/a/b/c", "/a/b", true},
	    {"/ab", "/a", false},
	    {"/a-b/c", "/a", false},
	    {"/a", "/a/b", false},
	    {"/b/a", "/a", false},
	    {"/x", "/", true},
	    {"/", "/", true},
	    {"/home/u/.ssh", "/home/u", true},
	    {"/home/user", "/home/u", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (path_is_within(cases[i].path, cases[i].dir) != cases[i].within)
			unit_fail("case %zu: <%s> within <%s>: expected %s", i, cases[i].path,
				  cases[i].dir, cases[i].within ? "true" : "false");
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static void path_compare_sorts_directory_before_its_contents(void **state)
{
	static const struct {
		const char *a;
		const char *b;
		int order;
	} cases[] = {
	    {"/a", "/a", 0},	    {"/a", "/a/b", -1},	  {"/a/b", "/a-b", -1},
	    {"/a/b", "/a.b", -1},   {"/a-b", "/a.b", -1}, {"/a/z", "/ab", -1},
	    {"/a/b/c", "/a/b", 1},  {"/", "/a", -1},	  {"/b", "/a/z", 1},
	    {"/a/\xff", "/a0", -1}, /* high bytes compare unsigned, still after '/' */
	    {"/a\xff", "/a/b", 1},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int ab = sign(path_compare(cases[i].a, cases[i].b));
		int ba = sign(path_compare(cases[i].b, cases[i].a));
		if (ab != cases[i].order || ba != -cases[i].order)
			unit_fail("case %zu: <%s> vs <%s>: got %d/%d, expected %d", i, cases[i].a,
				  cases[i].b, ab, ba, cases[i].order);
	}
}

static int compare_for_qsort(const void *a, const void *b)
{
	return path_compare(*(char *const *)a, *(char *const *)b);
}

static void path_compare_keeps_each_subtree_contiguous_when_sorting(void **state)
{
	const char *paths[] = {"/a.b", "/a/b/c", "/a-b", "/", "/a", "/a/b", "/ab", "/a/c"};
	static const char *const expected[] = {"/",    "/a",   "/a/b", "/a/b/c",
					       "/a/c", "/a-b", "/a.b", "/ab"};
	qsort(paths, ARRAY_SIZE(paths), sizeof(paths[0]), compare_for_qsort);
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++)
		if (strcmp(paths[i], expected[i]) != 0)
			unit_fail("position %zu: <%s>, expected <%s>", i, paths[i], expected[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(path_expand_makes_rule_text_absolute),
	    cmocka_unit_test(path_expand_rejects_text_it_cannot_expand),
	    unit_tmp_test(path_resolve_follows_symlinks_and_reports_them),
	    unit_tmp_test(path_resolve_returns_errno_when_path_cannot_be_resolved),
	    unit_tmp_test(path_resolve_follows_at_most_40_symlinks),
	    cmocka_unit_test(path_resolve_returns_root_for_root),
	    unit_tmp_test(path_read_link_returns_whole_target_when_long),
	    unit_tmp_test(path_glob_lists_existing_matches_sorted),
	    cmocka_unit_test(path_is_within_accepts_only_whole_segments),
	    cmocka_unit_test(path_compare_sorts_directory_before_its_contents),
	    cmocka_unit_test(path_compare_keeps_each_subtree_contiguous_when_sorting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
