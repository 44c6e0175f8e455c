/* Unit tests for branch mode's input checks: branch names follow `git
 * check-ref-format --branch` (and a length limit) before anything is
 * created, the worktree's directory name writes '/' as "__", and durations
 * take ms, s, m, h and d and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/units.h"
#include "base/xalloc.h"
#include "workspace/shelf.h"
#include "unit.h"

static void branch_check_accepts_what_git_accepts(void **state)
{
	static const char *const good[] = {"main", "feature/login", "a-b_c.d", "v1.2",
					   "x@y",  "deep/er/name",  "UPPER",   "ünïcode"};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		if (shelf_branch_check(good[i], &err) < 0)
			unit_fail("%s refused: %s", good[i], err.msg);
	}
}

static void branch_check_refuses_what_git_refuses(void **state)
{
	static const char *const bad[] = {
	    "",	  "-x",	    "a..b",	  "a b",   "a\tb", "a\033b", "a~1",  "a^", "a:b",
	    "a?", "a*",	    "a[b",	  "a\\b",  "/a",   "a/",     "a//b", ".a", "a/.b",
	    "a.", "x.lock", "a/x.lock/b", "a@{1}", "@",	   "HEAD",   "a\x7f"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		if (shelf_branch_check(bad[i], &err) == 0)
			unit_fail("\"%s\" accepted", bad[i]);
		assert_int_equal(err.kind, ERROR_USAGE);
		assert_non_null(strstr(err.msg, "invalid branch name"));
	}
	char long_name[SHELF_BRANCH_MAX + 2];
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(shelf_branch_check(long_name, &err), -1);
}

static void branch_dir_writes_slashes_as_double_underscores(void **state)
{
	_cleanup_free_ char *a = shelf_branch_dir("feature/login/v2");
	assert_string_equal(a, "feature__login__v2");
	_cleanup_free_ char *b = shelf_branch_dir("main");
	assert_string_equal(b, "main");
}

static void duration_parse_takes_each_unit(void **state)
{
	static const struct {
		const char *text;
		unsigned long long ms;
	} cases[] = {{"0s", 0},	      {"250ms", 250},  {"90s", 90000},
		     {"15m", 900000}, {"2h", 7200000}, {"7d", 604800000}};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned long long ms = 1;
		_cleanup_error_ struct error err = ERROR_INIT;
		assert_int_equal(duration_read(cases[i].text, "t", &ms, &err), 0);
		assert_true(ms == cases[i].ms);
	}
}

static void duration_parse_refuses_malformed_and_overflowing_text(void **state)
{
	static const char *const bad[] = {"",
					  "7",
					  "d",
					  "7x",
					  "-1d",
					  "+1d",
					  " 1d",
					  "1d ",
					  "1.5h",
					  "1D",
					  "1dd",
					  "99999999999999999999d",
					  "213503982335d"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		unsigned long long ms = 0;
		_cleanup_error_ struct error err = ERROR_INIT;
		if (duration_read(bad[i], "--older-than", &ms, &err) == 0)
			unit_fail("\"%s\" accepted as %llu ms", bad[i], ms);
		assert_int_equal(err.kind, ERROR_USAGE);
		assert_non_null(strstr(err.msg, "--older-than"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(branch_check_accepts_what_git_accepts),
	    cmocka_unit_test(branch_check_refuses_what_git_refuses),
	    cmocka_unit_test(branch_dir_writes_slashes_as_double_underscores),
	    cmocka_unit_test(duration_parse_takes_each_unit),
	    cmocka_unit_test(duration_parse_refuses_malformed_and_overflowing_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
