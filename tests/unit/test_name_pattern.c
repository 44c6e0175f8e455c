/* Unit tests for name patterns (the secret scan's and the env filter's
 * matcher) and for the environment filter's decisions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "policy/pattern.h"

struct match_case {
	const char *pattern;
	const char *name;
	bool ignore_case;
	bool want;
};

static void name_pattern_matches_like_a_segment_glob(void **state)
{
	static const struct match_case cases[] = {
	    {".env", ".env", false, true},
	    {".env", ".env.local", false, false},
	    {".env", ".ENV", true, true},
	    {".env", ".ENV", false, false},
	    {".env.*", ".env.local", false, true},
	    {".env.*", ".env.", false, true},
	    {".env.*", ".env", false, false},
	    {"*.pem", "prod.pem", false, true},
	    {"*.pem", ".pem", false, true},
	    {"*.pem", "prod.pem.txt", false, false},
	    {"*.key", "server.KEY", true, true},
	    {"*secret*", "secret", false, true},
	    {"*secret*", "db-secrets.yaml", false, true},
	    {"*secret*", "db-Secrets.yaml", true, true},
	    {"*secret*", "secre", false, false},
	    {"id_rsa*", "id_rsa.pub", false, true},
	    {"id_rsa*", "xid_rsa", false, false},
	    {"*", ".hidden", false, true},
	    {"a?c", "abc", false, true},
	    {"a?c", "ac", false, false},
	    {"[ab]*.txt", "b1.txt", false, true},
	    {"[!ab]*.txt", "b1.txt", false, false},
	    {"[a-c]x", "Bx", true, true},
	    {"[a-c]x", "Bx", false, false},
	    {"*.p[0-9][0-9]", "cert.p12", false, true},
	    {"a*b*c", "aXbYbZc", false, true},
	    {"a*b*c", "aXbYbZ", false, false},
	    {"\\*lit", "*lit", false, true},
	    {"\\*lit", "xlit", false, false},
	    {"lit\\*", "lit*", false, true},
	    {"lit\\*", "litx", false, false},
	    {"AWS_*", "aws_region", true, true},
	    {"*_TOKEN", "NPM_TOKEN", false, true},
	    {"*PASSWORD*", "DB_PASSWORD_FILE", false, true},
	    {"[[:alpha:]]x", "ax", false, true},
	    {"[[:alpha:]]x", "1x", false, false},
	    {"[[:digit:]]*.KEY", "1prod.key", true, true},
	    {"[^[:alnum:]]env", ".ENV", true, true},
	    {"[^[:alnum:]]env", "xenv", true, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct match_case *c = &cases[i];
		struct pattern p;
		pattern_compile(&p, c->pattern, c->ignore_case);
		bool got = pattern_match(&p, c->name);
		if (got != c->want)
			print_error("pattern <%s> name <%s> ignore_case=%d: got %d\n", c->pattern,
				    c->name, c->ignore_case, got);
		assert_int_equal(got, c->want);
		pattern_release(&p);
	}
}

static void name_pattern_rejects_paths_and_bad_globs(void **state)
{
	static const struct {
		const char *text;
		const char *message;
	} cases[] = {
	    {"", "empty pattern"},	   {"a/b", "cannot contain \"/\""},
	    {"[abc", "not closed"},	   {"a**", "\"**\" is not supported"},
	    {"x\\", "trailing backslash"}, {"[[:alhpa:]]", "unknown character class"},
	    {"[[:alpha:]", "not closed"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		assert_int_equal(pattern_validate_name(cases[i].text, &err), -1);
		assert_int_equal(err.kind, ERROR_CONFIG);
		assert_non_null(strstr(err.msg, cases[i].message));
	}
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(pattern_validate_name("*.pem", &err), 0);
}

static void name_pattern_set_removes_with_bang(void **state)
{
	char *texts[] = {"*.pem", "*secret*", ".env", "!*secret*", "!nothing"};
	struct pattern_set set;
	pattern_set_build(&set, texts, ARRAY_SIZE(texts), false);
	assert_int_equal(set.len, 2);
	assert_null(pattern_set_match(&set, "my-secret"));
	const struct pattern *p = pattern_set_match(&set, "a.pem");
	assert_non_null(p);
	assert_string_equal(p->text, "*.pem");
	pattern_set_release(&set);
}

static struct strv strv_of(const char *const *items)
{
	struct strv v = STRV_INIT;
	for (; *items; items++)
		strv_push(&v, *items);
	return v;
}

static void env_filter_drops_secret_names_unless_allowed_and_block_wins(void **state)
{
	char *envp[] = {
	    "HOME=/h",	"PATH=/bin", "ANTHROPIC_API_KEY=a", "NPM_TOKEN=n", "GITHUB_SHA=g",
	    "CI_JOB=c", "FOO=host",  "KEYBOARD=k",	    "WEIRD",	   "aws_secret_key=x",
	    NULL};
	_cleanup_strv_ struct strv allow =
	    strv_of((const char *const[]){"ANTHROPIC_*", "CI_*", NULL});
	_cleanup_strv_ struct strv block = strv_of((const char *const[]){"CI_*", NULL});
	_cleanup_strv_ struct strv set =
	    strv_of((const char *const[]){"FOO=set", "NEW=1", "FOO=last", NULL});
	struct env_rules rules = {
	    .filter_secrets = true, .allow = &allow, .block = &block, .set = &set};
	struct env_result r;
	env_filter(&rules, envp, &r);

	static const char *const want_env[] = {"HOME=/h",    "PATH=/bin", "ANTHROPIC_API_KEY=a",
					       "KEYBOARD=k", "WEIRD",	  "NEW=1",
					       "FOO=last"};
	assert_int_equal(r.envp.len, ARRAY_SIZE(want_env));
	for (size_t i = 0; i < ARRAY_SIZE(want_env); i++)
		assert_string_equal(r.envp.items[i], want_env[i]);

	static const char *const want_dropped[] = {"NPM_TOKEN", "GITHUB_SHA", "CI_JOB",
						   "aws_secret_key"};
	assert_int_equal(r.dropped.len, ARRAY_SIZE(want_dropped));
	for (size_t i = 0; i < ARRAY_SIZE(want_dropped); i++)
		assert_string_equal(r.dropped.items[i], want_dropped[i]);
	assert_string_equal(r.reasons.items[2], "env.block \"CI_*\"");
	assert_string_equal(r.reasons.items[0], "looks like a secret (*_TOKEN)");
	/* Reasons never carry values. */
	for (size_t i = 0; i < r.reasons.len; i++)
		assert_null(strchr(r.reasons.items[i], '='));
	assert_int_equal(r.set.len, 2);
	env_result_release(&r);
}

static void env_filter_keeps_everything_when_filter_is_off(void **state)
{
	char *envp[] = {"NPM_TOKEN=n", "AWS_REGION=r", NULL};
	struct env_rules rules = {.filter_secrets = false};
	struct env_result r;
	env_filter(&rules, envp, &r);
	assert_int_equal(r.envp.len, 2);
	assert_int_equal(r.dropped.len, 0);
	env_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(name_pattern_matches_like_a_segment_glob),
	    cmocka_unit_test(name_pattern_rejects_paths_and_bad_globs),
	    cmocka_unit_test(name_pattern_set_removes_with_bang),
	    cmocka_unit_test(env_filter_drops_secret_names_unless_allowed_and_block_wins),
	    cmocka_unit_test(env_filter_keeps_everything_when_filter_is_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
