/* Unit tests for tree patterns, the secret scan's gitignore-style forms:
 * names at any depth, paths anchored at the root, "**", directories, and
 * what validation refuses. Each row is pattern, path, directory or not, and
 * the expected answer, so a reader sees the whole meaning in one table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "policy/pattern.h"

struct tree_case {
	const char *pattern;
	const char *path;
	bool is_dir;
	bool want;
};

static bool match(const char *pattern, const char *path, bool is_dir, bool ignore_case)
{
	const char *slash = strrchr(path, '/');
	struct pattern p;
	pattern_compile(&p, pattern, ignore_case);
	bool got = pattern_match_path(&p, path, slash ? slash + 1 : path, is_dir);
	pattern_release(&p);
	return got;
}

static void tree_pattern_matches_names_paths_and_directories(void **state)
{
	static const struct tree_case cases[] = {
	    /* A name matches at any depth; never a directory. */
	    {"prod.pem", "prod.pem", false, true},
	    {"prod.pem", "config/prod.pem", false, true},
	    {"prod.pem", "a/b/c/prod.pem", false, true},
	    {"prod.pem", "prod.pem", true, false},
	    {"*.pem", "x/y.pem", false, true},
	    /* A "/" inside anchors at the root. */
	    {"config/prod.pem", "config/prod.pem", false, true},
	    {"config/prod.pem", "other/prod.pem", false, false},
	    {"config/prod.pem", "x/config/prod.pem", false, false},
	    {"config/prod.pem", "config/prod.pem.bak", false, false},
	    {"config/*.pem", "config/a.pem", false, true},
	    {"config/*.pem", "config/sub/a.pem", false, false},
	    {"*/prod.pem", "config/prod.pem", false, true},
	    {"*/prod.pem", "a/config/prod.pem", false, false},
	    /* A leading "/" anchors a single name. */
	    {"/secrets/*.key", "secrets/a.key", false, true},
	    {"/secrets/*.key", "x/secrets/a.key", false, false},
	    {"/.env", ".env", false, true},
	    {"/.env", "sub/.env", false, false},
	    /* "**" at the start: any depth, zero directories included. */
	    {"**/.env*", ".env", false, true},
	    {"**/.env*", ".env.local", false, true},
	    {"**/.env*", "a/b/.env.prod", false, true},
	    {"**/.env*", "a/b/x.env", false, false},
	    {"**/*.pem", "deep/er/k.pem", false, true},
	    {"**/credentials*", "aws/credentials", false, true},
	    {"**/config/*.pem", "config/a.pem", false, true},
	    {"**/config/*.pem", "x/y/config/a.pem", false, true},
	    {"**/config/*.pem", "x/config/y/a.pem", false, false},
	    /* "**" in the middle: zero or more directories. */
	    {"a/**/b", "a/b", false, true},
	    {"a/**/b", "a/x/b", false, true},
	    {"a/**/b", "a/x/y/z/b", false, true},
	    {"a/**/b", "a/x/y/z/c", false, false},
	    {"a/**/b", "x/a/b", false, false},
	    {"config/**/*.pem", "config/k.pem", false, true},
	    {"config/**/*.pem", "config/a/b/k.pem", false, true},
	    {"config/**/*.pem", "configs/k.pem", false, false},
	    {"a/**/**/b", "a/b", false, true},
	    {"a/**/b/**/c", "a/x/b/y/b/z/c", false, true},
	    {"a/**/b/**/c", "a/x/b/y/z", false, false},
	    /* "**" at the end: everything inside, not the directory itself. */
	    {"build/**", "build/a", false, true},
	    {"build/**", "build/a/b/c", false, true},
	    {"build/**", "build", false, false},
	    {"build/**", "build", true, false},
	    {"build/**/", "build/a/b", true, true},
	    /* A trailing "/" matches directories only. */
	    {"certs/", "certs", true, true},
	    {"certs/", "x/y/certs", true, true},
	    {"certs/", "certs", false, false},
	    {".aws/", "home/.aws", true, true},
	    {"/certs/", "certs", true, true},
	    {"/certs/", "x/certs", true, false},
	    {"a/certs/", "a/certs", true, true},
	    {"a/certs/", "a/certs", false, false},
	    {"**/certs/", "p/q/certs", true, true},
	    /* A pattern without it matches only what is not a directory. */
	    {"config/prod.pem", "config/prod.pem", true, false},
	    /* Escapes keep globs literal in every segment. */
	    {"a/\\*.pem", "a/*.pem", false, true},
	    {"a/\\*.pem", "a/x.pem", false, false},
	    {"\\[x]/k", "[x]/k", false, true},
	    {"\\[x]/k", "x/k", false, false},
	    {"a/\\*\\*/b", "a/**/b", false, true},
	    {"a/\\*\\*/b", "a/x/b", false, false},
	    /* Brackets and "?" within segments. */
	    {"k[0-9]/?.pem", "k1/a.pem", false, true},
	    {"k[0-9]/?.pem", "kx/a.pem", false, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct tree_case *c = &cases[i];
		_cleanup_error_ struct error err = ERROR_INIT;
		if (pattern_validate_tree(c->pattern, &err) < 0)
			print_error("pattern <%s> refused: %s\n", c->pattern, err.msg);
		assert_null(err.msg);
		bool got = match(c->pattern, c->path, c->is_dir, false);
		if (got != c->want)
			print_error("pattern <%s> path <%s> is_dir=%d: got %d\n", c->pattern,
				    c->path, c->is_dir, got);
		assert_int_equal(got, c->want);
	}
}

static void tree_pattern_ignores_case_in_every_segment_when_asked(void **state)
{
	assert_true(match("config/**/*.pem", "Config/A/K.PEM", false, true));
	assert_false(match("config/**/*.pem", "Config/A/K.PEM", false, false));
	assert_true(match("Certs/", "x/CERTS", true, true));
}

static void tree_pattern_compiles_names_to_the_fast_path(void **state)
{
	static const struct {
		const char *text;
		enum pattern_kind kind;
		bool dir_only;
	} cases[] = {
	    {"**/.env*", PATTERN_PREFIX, false},
	    {"**/*.pem", PATTERN_SUFFIX, false},
	    {"**/**/credentials*", PATTERN_PREFIX, false},
	    {".aws/", PATTERN_EXACT, true},
	    {"**/certs/", PATTERN_EXACT, true},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct pattern p;
		pattern_compile(&p, cases[i].text, true);
		assert_null(p.segments);
		assert_int_equal(p.kind, cases[i].kind);
		assert_int_equal(p.dir_only, cases[i].dir_only);
		assert_string_equal(p.text, cases[i].text);
		pattern_release(&p);
	}
	/* Anchored: one compiled pattern per segment, "**" runs folded. */
	struct pattern p;
	pattern_compile(&p, "/a/**/**/b*", false);
	assert_int_equal(p.segments_len, 3);
	assert_int_equal(p.segments[1].kind, PATTERN_DIRS);
	assert_int_equal(p.segments[2].kind, PATTERN_PREFIX);
	pattern_release(&p);
}

static void tree_pattern_rejects_malformed_forms_with_the_expected_form(void **state)
{
	static const struct {
		const char *text;
		const char *message;
	} cases[] = {
	    {"", "empty pattern"},
	    {"/", "it names no file"},
	    {"//", "it names no file"},
	    {"a//b", "empty segment at offset 2"},
	    {"//a", "empty segment at offset 1"},
	    {"a/b//", "empty segment at offset 4"},
	    {"./config/prod.pem", "\".\" segment at offset 0"},
	    {"config/./prod.pem", "\".\" segment at offset 7"},
	    {"config/../prod.pem", "\"..\" segment at offset 7"},
	    {"/..", "\"..\" segment at offset 1"},
	    {"a**/b", "not a whole segment"},
	    {"a/**b", "not a whole segment"},
	    {"a/***/b", "not a whole segment"},
	    {"a**", "\"**\" is not supported"},
	    {"a/[bc", "segment at offset 2"},
	    {"a\\/b", "trailing backslash"},
	    {"a/[[:alhpa:]]", "unknown character class"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		assert_int_equal(pattern_validate_tree(cases[i].text, &err), -1);
		assert_int_equal(err.kind, ERROR_CONFIG);
		if (!strstr(err.msg, cases[i].message))
			print_error("<%s>: %s\n", cases[i].text, err.msg);
		assert_non_null(strstr(err.msg, cases[i].message));
	}
	/* Errors about the form say which forms there are. */
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(pattern_validate_tree("a//b", &err), -1);
	assert_non_null(strstr(err.msg, "\"config/prod.pem\""));
	/* Sixty-three segments are accepted, sixty-four are not. */
	_cleanup_free_ char *deep = xstrdup("a");
	for (int n = 1; n < PATTERN_MAX_SEGMENTS; n++) {
		char *longer = xasprintf("%s/a", deep);
		free(deep);
		deep = longer;
	}
	_cleanup_error_ struct error ok = ERROR_INIT;
	assert_int_equal(pattern_validate_tree(deep, &ok), 0);
	_cleanup_free_ char *deeper = xasprintf("%s/a", deep);
	_cleanup_error_ struct error too = ERROR_INIT;
	assert_int_equal(pattern_validate_tree(deeper, &too), -1);
	assert_non_null(strstr(too.msg, "more than 63 segments"));
}

static void tree_pattern_set_matches_by_kind_and_name_lookups_skip_tree_forms(void **state)
{
	char *texts[] = {"config/prod.pem", "certs/", "*.pem", "!*.pem"};
	struct pattern_set set;
	pattern_set_build(&set, texts, ARRAY_SIZE(texts), false);
	assert_int_equal(set.len, 2);
	assert_int_equal(set.dir_only, 1);
	assert_null(pattern_set_match_path(&set, "other/prod.pem", "prod.pem", false));
	const struct pattern *p =
	    pattern_set_match_path(&set, "config/prod.pem", "prod.pem", false);
	assert_non_null(p);
	assert_string_equal(p->text, "config/prod.pem");
	p = pattern_set_match_path(&set, "a/certs", "certs", true);
	assert_non_null(p);
	assert_string_equal(p->text, "certs/");
	/* Name-only lookups (env, skip) never see tree forms. */
	assert_null(pattern_set_match(&set, "certs"));
	assert_null(pattern_set_match(&set, "config/prod.pem"));
	pattern_set_release(&set);
}

static void tree_pattern_set_says_when_an_anchored_pattern_reaches_below(void **state)
{
	static const struct {
		const char *pattern;
		const char *dir;
		bool want;
	} cases[] = {
	    {"config/prod.pem", "config", true},
	    {"config/prod.pem", "other", false},
	    {"config/prod.pem", "config/prod.pem", false},
	    {"a/**/b/*.pem", "a", true},
	    {"a/**/b/*.pem", "a/x/y", true},
	    {"a/**/b/*.pem", "z", false},
	    {"build/**", "build/deep", true},
	    {"/x/**/y/", "x/q", true},
	    /* Names match at any depth: the walk meets them anyway. */
	    {"**/.env*", "config", false},
	    {"certs/", "certs", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *texts[] = {(char *)cases[i].pattern};
		struct pattern_set set;
		pattern_set_build(&set, texts, 1, false);
		bool got = pattern_set_reaches_below(&set, cases[i].dir);
		if (got != cases[i].want)
			print_error("pattern <%s> dir <%s>: got %d\n", cases[i].pattern,
				    cases[i].dir, got);
		assert_int_equal(got, cases[i].want);
		pattern_set_release(&set);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(tree_pattern_matches_names_paths_and_directories),
	    cmocka_unit_test(tree_pattern_ignores_case_in_every_segment_when_asked),
	    cmocka_unit_test(tree_pattern_compiles_names_to_the_fast_path),
	    cmocka_unit_test(tree_pattern_rejects_malformed_forms_with_the_expected_form),
	    cmocka_unit_test(tree_pattern_set_matches_by_kind_and_name_lookups_skip_tree_forms),
	    cmocka_unit_test(tree_pattern_set_says_when_an_anchored_pattern_reaches_below),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
