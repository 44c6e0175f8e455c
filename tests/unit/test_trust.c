/* Unit tests for the trust rule's policy comparison: which project rules
 * show more of the host than the policy without the project config did,
 * by the exposure order private < hidden < ro < rw. The scratch tree lives
 * under /tmp, which the sandbox replaces with its own: a path there that no
 * rule covers is private. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "policy/policy.h"
#include "policy/trust.h"
#include "unit.h"

struct test_rule {
	enum access_level level;
	enum layer layer;
	const char *path; /* relative to the scratch directory unless it starts with '/' */
};

/* clang-format off */
#define R(level, layer, path) {ACCESS_##level, LAYER_##layer, (path)}
/* The working directory, writable as @base makes it. */
#define COVER_CWD R(RW, PRESET, "proj")
#define END_RULES {.path = NULL}
/* clang-format on */

static void make_tree(const char *dir)
{
	static const char *const dirs[] = {"proj", "proj/src", "outside", "home", "home/.ssh"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		unit_mkdir(dir, dirs[i]);
	unit_write(dir, "outside/agent.sock", "");
}

/* Adds the rules of a table; rule i has the origin "<prefix> i". */
static void add_rules(const char *dir, const struct test_rule *r, const char *prefix,
		      struct rule_list *rules)
{
	for (size_t i = 0; r[i].path; i++) {
		_cleanup_free_ char *pattern =
		    r[i].path[0] == '/' ? xstrdup(r[i].path) : unit_path(dir, r[i].path);
		_cleanup_free_ char *origin = xasprintf("%s %zu", prefix, i);
		rule_list_add(rules, pattern, r[i].level, r[i].layer, origin);
	}
}

static void resolve(const char *dir, const struct rule_list *rules, struct policy *out,
		    size_t index)
{
	_cleanup_free_ char *cwd = unit_path(dir, "proj");
	_cleanup_free_ char *home = unit_path(dir, "home");
	const struct policy_input in = {.rules = rules, .cwd = cwd, .home = home};
	_cleanup_error_ struct error err = ERROR_INIT;
	if (policy_resolve(&in, out, &err) < 0)
		unit_fail("case %zu: %s", index, err.msg);
}

static void trust_compares_policies_by_exposure(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct {
		struct test_rule base[4];
		struct test_rule project; /* added on top of base, in the project layer */
		const char *finding;	  /* NULL: no loosening */
	} cases[] = {
	    /* Under the private /tmp: any host path shown there loosens. */
	    {{COVER_CWD}, R(RO, PROJECT, "outside"), "read-only (it was private to the sandbox"},
	    {{COVER_CWD}, R(EXCLUDE, PROJECT, "outside"), "hidden (it was private to the sandbox"},
	    /* A host socket a built-in rule hides. */
	    {{COVER_CWD, R(EXCLUDE, BUILTIN, "outside/agent.sock")},
	     R(RO, PROJECT, "outside/agent.sock"),
	     "read-only (it was hidden, by base 1)"},
	    {{COVER_CWD, R(RO, PRESET, "home"), R(EXCLUDE, PRESET, "home/.ssh")},
	     R(RO, PROJECT, "home/.ssh"),
	     "read-only (it was hidden, by base 2)"},
	    /* The host root is read-only. */
	    {{COVER_CWD}, R(RW, PROJECT, "/usr"), "writable (it was read-only, by the host root"},
	    {{COVER_CWD}, R(RO, PROJECT, "/usr"), NULL},
	    /* Tightening inside the writable project. */
	    {{COVER_CWD}, R(RO, PROJECT, "proj/src"), NULL},
	    {{COVER_CWD}, R(EXCLUDE, PROJECT, "proj/src"), NULL},
	    {{COVER_CWD}, R(RW, PROJECT, "proj/src"), NULL},
	    {{COVER_CWD, R(EXCLUDE, BUILTIN, "outside/agent.sock")},
	     R(EXCLUDE, PROJECT, "outside/agent.sock"),
	     NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_rule_list_ struct rule_list base_rules = RULE_LIST_INIT;
		_cleanup_rule_list_ struct rule_list merged_rules = RULE_LIST_INIT;
		add_rules(dir, cases[i].base, "base", &base_rules);
		add_rules(dir, cases[i].base, "base", &merged_rules);
		const struct test_rule project[] = {cases[i].project, END_RULES};
		add_rules(dir, project, "project", &merged_rules);
		_cleanup_policy_ struct policy base = {0};
		_cleanup_policy_ struct policy merged = {0};
		resolve(dir, &base_rules, &base, i);
		resolve(dir, &merged_rules, &merged, i);

		/* Both sides with the same (default) settings: only the
		 * policies differ. */
		_cleanup_config_ struct config cfg;
		config_init(&cfg);
		const struct trust_side before = {.cfg = &cfg, .policy = &base};
		const struct trust_side after = {.cfg = &cfg, .policy = &merged};
		struct trust_check tc = {.loosenings = STRV_INIT, .origins = STRV_INIT};
		trust_compare(&tc, &before, &after, "/nonexistent", "/nonexistent");
		if (!cases[i].finding && tc.loosenings.len)
			unit_fail("case %zu: unexpected loosening: %s", i, tc.loosenings.items[0]);
		if (cases[i].finding) {
			if (tc.loosenings.len != 1)
				unit_fail("case %zu: %zu loosenings, expected 1", i,
					  tc.loosenings.len);
			unit_assert_contains(tc.loosenings.items[0], cases[i].finding, "case %zu",
					     i);
			unit_assert_starts_with(tc.loosenings.items[0], "project 0: ", "case %zu",
						i);
		}
		trust_check_release(&tc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    unit_tmp_test(trust_compares_policies_by_exposure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
