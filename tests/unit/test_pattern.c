/* Unit tests for glob patterns: which texts count as globs, which globs are
 * rejected and why, how one segment matches a name, and escaping a literal
 * path so that it can sit inside a pattern. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "policy/pattern.h"
#include "unit.h"

static void pattern_has_glob_detects_only_unescaped_glob_characters(void **state)
{
	static const struct {
		const char *text;
		bool glob;
	} cases[] = {
	    {"", false},	   {"/plain/path", false},
	    {"~/.ssh", false},	   {"a]b", false}, /* a lone "]" is literal */
	    {"*", true},	   {"src/*.c", true},
	    {"file?.txt", true},   {"[abc]", true},
	    {"dir/[", true},	   {"a\\*b", false},
	    {"a\\?b", false},	   {"a\\[b]", false},
	    {"a\\\\*", true}, /* an escaped backslash, then a real star */
	    {"a\\", false},   /* a trailing backslash escapes nothing */
	    {"\\*\\?\\[x", false}, {"\\**", true},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (pattern_has_glob(cases[i].text) != cases[i].glob)
			unit_fail("case %zu <%s>: expected %s", i, cases[i].text,
				  cases[i].glob ? "a glob" : "no glob");
}

static void pattern_validate_accepts_well_formed_patterns(void **state)
{
	static const char *const cases[] = {
	    "/",
	    "src/auth/",
	    "config/*/secrets.json",
	    "*.pem",
	    ".env.*",
	    "file?.txt",
	    "[abc]",
	    "[!abc]x",
	    "[^a-z]",
	    "[]]",
	    "[!]]",
	    "[a\\]]",
	    "a\\*\\*",
	    "\\**",
	    "*x*",
	    "a\\[b",
	    "dir/[ab]/c",
	    "~/.config/gh",
	    "a]b",
	    "[[:alpha:]]x",
	    "[![:digit:]]*",
	    "[^[:space:][:punct:]]",
	    "[[:]", /* "[:" without a name is two members */
	    "[a[]",
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		if (pattern_validate(cases[i], &err) != 0)
			unit_fail("case %zu <%s>: rejected: %s", i, cases[i], err.msg);
		if (err.msg || err.kind)
			unit_fail("case %zu <%s>: error set on success", i, cases[i]);
	}
}

static void pattern_validate_rejects_malformed_patterns_with_reason(void **state)
{
	static const struct {
		const char *pattern;
		const char *message;
	} cases[] = {
	    {"", "empty path"},
	    {"a/**", "invalid glob \"a/**\": \"**\" is not supported (globs match within one "
		     "path segment: use \"*\" per segment)"},
	    {"**/x", "invalid glob \"**/x\": \"**\" is not supported"},
	    {"a***", "invalid glob \"a***\": \"**\" is not supported"},
	    {"abc\\", "invalid glob \"abc\\\": trailing backslash"},
	    {"[abc", "invalid glob \"[abc\": \"[\" at offset 0 is not closed by \"]\" within its "
		     "path segment (write \"\\[\" for a literal bracket)"},
	    {"ab/[c", "invalid glob \"ab/[c\": \"[\" at offset 3 is not closed"},
	    {"a[b/c]", "invalid glob \"a[b/c]\": \"[\" at offset 1 is not closed"},
	    {"[]", "invalid glob \"[]\": \"[\" at offset 0 is not closed"},
	    {"[!]", "invalid glob \"[!]\": \"[\" at offset 0 is not closed"},
	    {"x[a\\]", "invalid glob \"x[a\\]\": \"[\" at offset 1 is not closed"},
	    {"ok/[a]/[b", "invalid glob \"ok/[a]/[b\": \"[\" at offset 7 is not closed"},
	    /* The class's own "]" does not close the brackets around it. */
	    {"[[:alpha:]", "invalid glob \"[[:alpha:]\": \"[\" at offset 0 is not closed"},
	    {"x[[:alhpa:]]", "invalid glob \"x[[:alhpa:]]\": unknown character class at "
			     "offset 2 (the classes are alnum, alpha,"},
	    {"[[::]]", "invalid glob \"[[::]]\": unknown character class at offset 1"},
	    {"[[.a.]]", "invalid glob \"[[.a.]]\": \"[.\" at offset 1 inside brackets is not "
			"supported (write \"\\[\" for a literal bracket)"},
	    {"[[=a=]]", "invalid glob \"[[=a=]]\": \"[=\" at offset 1 inside brackets"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		char what[64];
		snprintf(what, sizeof(what), "case %zu <%s>", i, cases[i].pattern);
		if (pattern_validate(cases[i].pattern, &err) != -1)
			unit_fail("%s: accepted", what);
		if (err.kind != ERROR_CONFIG)
			unit_fail("%s: code %d, expected %d", what, (int)err.kind,
				  (int)ERROR_CONFIG);
		unit_assert_starts_with(err.msg, cases[i].message, "%s", what);
	}
}

static void pattern_match_segment_matches_one_name(void **state)
{
	static const struct {
		const char *pattern;
		const char *name;
		bool match;
	} cases[] = {
	    {"*", "file", true},
	    {"*", ".hidden", true}, /* dotfiles are not special */
	    {".*", ".env", true},
	    {"*.json", "a.json", true},
	    {"*.json", "a.jsonc", false},
	    {"*.json", ".json", true},
	    {".env.*", ".env.local", true},
	    {".env.*", ".env", false},
	    {"*secret*", "my-secret-file", true},
	    {"*secret*", "SECRET", false}, /* case matters */
	    {"file?.txt", "file1.txt", true},
	    {"file?.txt", "file.txt", false},
	    {"file?.txt", "file12.txt", false},
	    {"[ab]x", "ax", true},
	    {"[ab]x", "cx", false},
	    {"[!a]x", "bx", true},
	    {"[!a]x", "ax", false},
	    {"[a-c]", "b", true},
	    {"[a-c]", "d", false},
	    {"[]]", "]", true},
	    {"\\*", "*", true},
	    {"\\*", "x", false},
	    {"a\\?", "a?", true},
	    {"a\\?", "ab", false},
	    {"\\[x]", "[x]", true},
	    {"\\[x]", "x", false},
	    {"plain", "plain", true},
	    {"plain", "plainer", false},
	    {"", "", true},
	    {"", "a", false},
	    {"[[:alpha:]]x", "ax", true},
	    {"[[:alpha:]]x", "1x", false},
	    {"[[:alpha:]]x", "[x", false},
	    {"[^a]x", "bx", true},
	    {"[^a]x", "ax", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (pattern_match_segment(cases[i].pattern, cases[i].name) != cases[i].match)
			unit_fail("case %zu: <%s> against <%s>: expected %s", i, cases[i].pattern,
				  cases[i].name, cases[i].match ? "a match" : "no match");
}

static void pattern_escape_puts_backslash_before_glob_characters(void **state)
{
	static const struct {
		const char *text;
		const char *escaped;
	} cases[] = {
	    {"", ""},
	    {"/home/user", "/home/user"},
	    {"a*b", "a\\*b"},
	    {"a?b", "a\\?b"},
	    {"[x]", "\\[x\\]"},
	    {"back\\slash", "back\\\\slash"},
	    {"/srv/a[1]/*?", "/srv/a\\[1\\]/\\*\\?"},
	    {"$HOME/~x", "$HOME/~x"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *escaped = pattern_escape(cases[i].text);
		if (strcmp(escaped, cases[i].escaped) != 0)
			unit_fail("case %zu <%s>: escaped to <%s>, expected <%s>", i, cases[i].text,
				  escaped, cases[i].escaped);
	}
}

static void pattern_escape_makes_literal_names_match_only_themselves(void **state)
{
	static const char *const names[] = {"plain", "a*b", "q?", "[x]", "a\\b", "*", "]["};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *escaped = pattern_escape(names[i]);
		_cleanup_free_ char *back = pattern_unescape(escaped);
		_cleanup_error_ struct error err = ERROR_INIT;
		if (pattern_has_glob(escaped))
			unit_fail("case %zu <%s>: escaped <%s> still has a glob", i, names[i],
				  escaped);
		if (pattern_validate(escaped, &err) != 0)
			unit_fail("case %zu <%s>: escaped <%s> is invalid: %s", i, names[i],
				  escaped, err.msg);
		if (!pattern_match_segment(escaped, names[i]))
			unit_fail("case %zu <%s>: escaped <%s> does not match it", i, names[i],
				  escaped);
		if (pattern_match_segment(escaped, "other"))
			unit_fail("case %zu <%s>: escaped <%s> matches \"other\"", i, names[i],
				  escaped);
		if (strcmp(back, names[i]) != 0)
			unit_fail("case %zu <%s>: round trip gave <%s>", i, names[i], back);
	}
}

static void pattern_unescape_removes_one_level_of_backslashes(void **state)
{
	static const struct {
		const char *text;
		const char *unescaped;
	} cases[] = {
	    {"", ""},
	    {"plain", "plain"},
	    {"a\\b", "ab"},
	    {"a\\\\b", "a\\b"},
	    {"\\*\\?\\[", "*?["},
	    {"trailing\\", "trailing\\"},
	    {"\\\\\\\\", "\\\\"},
	    {"/x\\ y/z", "/x y/z"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *out = pattern_unescape(cases[i].text);
		if (strcmp(out, cases[i].unescaped) != 0)
			unit_fail("case %zu <%s>: unescaped to <%s>, expected <%s>", i,
				  cases[i].text, out, cases[i].unescaped);
	}
}

/* One table, two callers: a path rule's segment and a compiled name pattern
 * (as "secrets" and "env" use them) must read every pattern alike. */
static void path_rules_and_name_patterns_mean_the_same(void **state)
{
	static const struct {
		const char *pattern;
		const char *name;
		bool match;
	} cases[] = {
	    {"[[:alpha:]]x", "ax", true},
	    {"[[:alpha:]]x", "Qx", true},
	    {"[[:alpha:]]x", "1x", false},
	    {"[[:alpha:]]x", ":x", false},
	    {"*[[:digit:]].pem", "cert2.pem", true},
	    {"*[[:digit:]].pem", "certs.pem", false},
	    {"[![:upper:]]*", "abc", true},
	    {"[![:upper:]]*", "Abc", false},
	    {"[^.]*", ".env", false},
	    {"[^.]*", "env", true},
	    {"[[:]x", ":x", true},
	    {"[a-c]x", "bx", true},
	    {"[]]", "]", true},
	    {"*", ".hidden", true},
	    {"?env", ".env", true},
	    {"[.]env", ".env", true},
	    {".env.*", ".env.local", true},
	    {"*secret*", "my-secret", true},
	    {"\\*x", "*x", true},
	    {"\\*x", "ax", false},
	    {"a\\?", "a?", true},
	    {"a\\?", "ab", false},
	    /* Bytes, not characters: "\xc3\xa9" is two bytes, one letter. */
	    {"?", "\xc3\xa9", false},
	    {"??", "\xc3\xa9", true},
	    {"[[:alpha:]]", "\xc3", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct pattern p;
		pattern_compile(&p, cases[i].pattern, false);
		bool as_name = pattern_match(&p, cases[i].name);
		bool as_segment = pattern_match_segment(cases[i].pattern, cases[i].name);
		pattern_release(&p);
		if (as_name != cases[i].match || as_segment != cases[i].match)
			unit_fail("case %zu: <%s> against <%s>: expected %s, got %d as a name and "
				  "%d as a path segment",
				  i, cases[i].pattern, cases[i].name,
				  cases[i].match ? "a match" : "no match", as_name, as_segment);
	}
}

int main(void)
{
	/* glibc's fnmatch stops reading "[^" as a negation under
	 * POSIXLY_CORRECT (it reads the variable once, on the first call):
	 * every "[^" row above must hold all the same. */
	setenv("POSIXLY_CORRECT", "1", 1);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pattern_has_glob_detects_only_unescaped_glob_characters),
	    cmocka_unit_test(pattern_validate_accepts_well_formed_patterns),
	    cmocka_unit_test(pattern_validate_rejects_malformed_patterns_with_reason),
	    cmocka_unit_test(pattern_match_segment_matches_one_name),
	    cmocka_unit_test(pattern_escape_puts_backslash_before_glob_characters),
	    cmocka_unit_test(pattern_escape_makes_literal_names_match_only_themselves),
	    cmocka_unit_test(pattern_unescape_removes_one_level_of_backslashes),
	    cmocka_unit_test(path_rules_and_name_patterns_mean_the_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
