/* Unit tests for the policy: which rule decides a path when several cover
 * it, read-only mode, and the working directories and rules it refuses.
 * Rules resolve real paths, so each test builds a scratch tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "policy/path.h"
#include "policy/policy.h"
#include "unit.h"

/* A rule in a test table; a path that does not start with '/' or '~' is
 * taken relative to the scratch directory. A rule without a path ends a
 * list. */
struct test_rule {
	enum access_level level;
	enum layer layer;
	const char *path;
};

/* clang-format off */
#define R(level, layer, path) {ACCESS_##level, LAYER_##layer, (path)}
#define SRC(level, layer) R(level, layer, "proj/src")
/* Makes the usual working directory, proj, visible. */
#define COVER_CWD R(RW, PRESET, "proj")
#define END_RULES {.path = NULL}
/* clang-format on */

static void make_tree(const char *dir)
{
	static const char *const dirs[] = {
	    "proj", "proj/src", "proj/docs", "proj/secret", "home", "home/.ssh",
	};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		unit_mkdir(dir, dirs[i]);
	unit_write(dir, "proj/src/a.txt", "a");
	unit_write(dir, "proj/src/b.txt", "b");
	unit_symlink("src", dir, "proj/link");
	unit_symlink("../home/.ssh", dir, "proj/keys");
}

/* One policy_resolve call and everything it leaves to release. */
struct run {
	struct rule_list rules;
	struct policy policy;
	struct error err;
};

static void run_release(struct run *run)
{
	rule_list_release(&run->rules);
	policy_release(&run->policy);
	error_release(&run->err);
}

#define _cleanup_run_ _cleanup_(run_release) struct run

/* Resolves the rules with the working directory dir/cwd_rel and the home
 * directory dir/home; rule i has the origin "rule i". */
static int resolve(const char *dir, const struct test_rule *r, const char *cwd_rel, bool read_only,
		   struct run *run)
{
	*run = (struct run){.rules = RULE_LIST_INIT, .err = ERROR_INIT};
	for (size_t i = 0; r[i].path; i++) {
		_cleanup_free_ char *pattern =
		    strchr("/~", r[i].path[0]) ? xstrdup(r[i].path) : unit_path(dir, r[i].path);
		_cleanup_free_ char *origin = xasprintf("rule %zu", i);
		rule_list_add(&run->rules, pattern, r[i].level, r[i].layer, origin);
	}
	_cleanup_free_ char *cwd = unit_path(dir, cwd_rel);
	_cleanup_free_ char *home = unit_path(dir, "home");
	const struct policy_input in = {
	    .rules = &run->rules, .cwd = cwd, .home = home, .read_only = read_only};
	return policy_resolve(&in, &run->policy, &run->err);
}

static const struct policy *resolve_ok(const char *dir, const struct test_rule *r,
				       const char *cwd_rel, bool read_only, struct run *run,
				       size_t index)
{
	if (resolve(dir, r, cwd_rel, read_only, run) < 0)
		unit_fail("case %zu: %s", index, run->err.msg);
	return &run->policy;
}

static const struct access_entry *find_entry(const struct policy *p, const char *dir,
					     const char *rel)
{
	_cleanup_free_ char *path = unit_path(dir, rel);
	for (size_t i = 0; i < p->len; i++)
		if (!strcmp(p->entries[i].path, path))
			return &p->entries[i];
	return NULL;
}

static const struct access_entry *assert_level(const struct policy *p, const char *dir,
					       const char *rel, enum access_level level,
					       size_t index)
{
	const struct access_entry *e = find_entry(p, dir, rel);
	if (!e)
		unit_fail("case %zu: no entry for %s", index, rel);
	if (e->level != level)
		unit_fail("case %zu: %s is %s, expected %s (decided by %s)", index, rel,
			  access_level_name(e->level), access_level_name(level), e->rule->origin);
	return e;
}

static void assert_overridden(const struct policy *p, size_t count, const char *reason,
			      size_t index)
{
	if (p->overridden_len != count)
		unit_fail("case %zu: %zu overridden rules, expected %zu", index, p->overridden_len,
			  count);
	for (size_t j = 0; j < count; j++)
		unit_assert_contains(p->overridden[j].reason, reason, "case %zu, note %zu", index,
				     j);
}

static void policy_prefers_exact_path_when_glob_matches_same_path(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	/* The globs come from later layers with stricter levels: they still lose. */
	static const struct {
		enum access_level exact, glob;
		struct test_rule rules[4];
	} cases[] = {
	    {ACCESS_RW,
	     ACCESS_RO,
	     {COVER_CWD, R(RO, CLI, "proj/src/*"), R(RW, PRESET, "proj/src/a.txt")}},
	    {ACCESS_RO,
	     ACCESS_EXCLUDE,
	     {COVER_CWD, R(RO, PRESET, "proj/src/a.txt"), R(EXCLUDE, PROJECT, "proj/src/?.txt")}},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_run_ run;
		const struct policy *p = resolve_ok(dir, cases[i].rules, "proj", false, &run, i);
		if (assert_level(p, dir, "proj/src/a.txt", cases[i].exact, i)->from_glob)
			unit_fail("case %zu: a.txt decided by a glob", i);
		if (!assert_level(p, dir, "proj/src/b.txt", cases[i].glob, i)->from_glob)
			unit_fail("case %zu: b.txt not decided by the glob", i);
		assert_overridden(p, 1, "an exact path beats a glob", i);
	}
}

static void policy_prefers_deeper_path_when_rules_nest(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	/* The shallower rules come from later layers: depth still wins. */
	static const struct test_rule rules[] = {R(RW, CLI, "proj"), R(RO, PRESET, "proj/src"),
						 R(EXCLUDE, CLI, "proj/secret"),
						 R(RW, GLOBAL, "proj/src/b.txt"), END_RULES};
	static const struct {
		const char *path;
		const char *decided_by; /* NULL: only the base layout applies */
		enum access_level level;
	} cases[] = {
	    {"proj", "proj", ACCESS_RW},
	    {"proj/docs", "proj", ACCESS_RW},
	    {"proj/src", "proj/src", ACCESS_RO},
	    {"proj/src/a.txt", "proj/src", ACCESS_RO},
	    {"proj/src/b.txt", "proj/src/b.txt", ACCESS_RW},
	    {"proj/secret/x", "proj/secret", ACCESS_EXCLUDE},
	    {"proj-other", NULL, ACCESS_RW},
	};
	_cleanup_run_ run;
	const struct policy *p = resolve_ok(dir, rules, "proj", false, &run, 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *path = unit_path(dir, cases[i].path);
		const struct access_entry *e = policy_entry_for(p, path);
		_cleanup_free_ char *want =
		    cases[i].decided_by ? unit_path(dir, cases[i].decided_by) : NULL;
		if (!want && e)
			unit_fail("case %zu: %s decided by %s, expected none", i, path, e->path);
		if (want && (!e || strcmp(e->path, want) || e->level != cases[i].level))
			unit_fail("case %zu: %s decided by %s, expected %s %s", i, path,
				  e ? e->path : "nothing", access_level_name(cases[i].level), want);
	}
	for (size_t i = 1; i < p->len; i++)
		if (path_compare(p->entries[i - 1].path, p->entries[i].path) >= 0)
			unit_fail("entries %zu and %zu out of order: %s, %s", i - 1, i,
				  p->entries[i - 1].path, p->entries[i].path);
}

/* Up to three rules for proj/src after COVER_CWD, and the level that wins. */
struct same_path_case {
	struct test_rule rules[5];
	enum access_level expected;
};

static void check_same_path_cases(const char *dir, const struct same_path_case *cases, size_t n,
				  const char *reason)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_run_ run;
		const struct policy *p = resolve_ok(dir, cases[i].rules, "proj", false, &run, i);
		assert_level(p, dir, "proj/src", cases[i].expected, i);
		size_t losers = 0;
		while (cases[i].rules[losers + 2].path)
			losers++;
		assert_overridden(p, losers, reason, i);
	}
}

static void policy_prefers_later_layer_when_rules_name_same_path(void **state)
{
	make_tree(*state);
	static const struct same_path_case cases[] = {
	    {{COVER_CWD, SRC(RO, GLOBAL), SRC(RW, PROJECT)}, ACCESS_RW},
	    {{COVER_CWD, SRC(RW, CLI), SRC(EXCLUDE, GLOBAL)}, ACCESS_RW},
	    {{COVER_CWD, SRC(EXCLUDE, PRESET), SRC(RO, PROJECT)}, ACCESS_RO},
	    {{COVER_CWD, SRC(RW, PRESET), SRC(RO, GLOBAL)}, ACCESS_RO},
	    {{COVER_CWD, SRC(EXCLUDE, CLI), SRC(RW, PROJECT), SRC(RO, GLOBAL)}, ACCESS_EXCLUDE},
	};
	check_same_path_cases(*state, cases, ARRAY_SIZE(cases), "layer comes after");
}

static void policy_prefers_stricter_level_when_same_path_and_layer(void **state)
{
	make_tree(*state);
	static const struct same_path_case cases[] = {
	    {{COVER_CWD, SRC(RW, PROJECT), SRC(RO, PROJECT)}, ACCESS_RO},
	    {{COVER_CWD, SRC(RO, PROJECT), SRC(RW, PROJECT)}, ACCESS_RO},
	    {{COVER_CWD, SRC(EXCLUDE, CLI), SRC(RW, CLI)}, ACCESS_EXCLUDE},
	    {{COVER_CWD, SRC(RW, CLI), SRC(EXCLUDE, CLI)}, ACCESS_EXCLUDE},
	    {{COVER_CWD, SRC(RO, GLOBAL), SRC(EXCLUDE, GLOBAL)}, ACCESS_EXCLUDE},
	    {{COVER_CWD, SRC(RW, PRESET), SRC(RO, PRESET), SRC(EXCLUDE, PRESET)}, ACCESS_EXCLUDE},
	    /* The same path through a symlink is the same path. */
	    {{COVER_CWD, R(EXCLUDE, CLI, "proj/link"), SRC(RW, CLI)}, ACCESS_EXCLUDE},
	};
	check_same_path_cases(*state, cases, ARRAY_SIZE(cases), "in the same layer");
}

static void policy_downgrades_rw_to_ro_when_read_only(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct test_rule rules[] = {R(RW, PRESET, "proj"), R(RW, CLI, "proj/src"),
						 R(RO, PROJECT, "proj/docs"),
						 R(EXCLUDE, CLI, "proj/secret"), END_RULES};
	static const struct {
		bool read_only;
		const char *path;
		enum access_level level;
		bool downgraded;
	} cases[] = {
	    {true, "proj", ACCESS_RO, true},	    {true, "proj/src", ACCESS_RO, true},
	    {true, "proj/docs", ACCESS_RO, false},  {true, "proj/secret", ACCESS_EXCLUDE, false},
	    {false, "proj", ACCESS_RW, false},	    {false, "proj/src", ACCESS_RW, false},
	    {false, "proj/docs", ACCESS_RO, false}, {false, "proj/secret", ACCESS_EXCLUDE, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_run_ run;
		const struct policy *p =
		    resolve_ok(dir, rules, "proj", cases[i].read_only, &run, i);
		if (assert_level(p, dir, cases[i].path, cases[i].level, i)->downgraded !=
		    cases[i].downgraded)
			unit_fail("case %zu: %s downgraded is wrong", i, cases[i].path);
	}
}

static void policy_refuses_cwd_when_inside_excluded_path(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct {
		struct test_rule rules[3];
		const char *cwd;
		const char *excluded; /* NULL when the working directory is allowed */
	} cases[] = {
	    {{R(EXCLUDE, CLI, "proj")}, "proj", "proj"},
	    {{R(EXCLUDE, CLI, "proj")}, "proj/src", "proj"},
	    {{R(EXCLUDE, CLI, "pro*")}, "proj/src", "proj"},
	    {{R(EXCLUDE, CLI, "proj/link")}, "proj/src", "proj/src"},
	    {{R(EXCLUDE, CLI, "proj"), R(RW, PRESET, "proj/src")}, "proj/src", NULL},
	    {{R(RW, PRESET, "proj"), R(EXCLUDE, CLI, "proj/src")}, "proj", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_run_ run;
		if (!cases[i].excluded) {
			resolve_ok(dir, cases[i].rules, cases[i].cwd, false, &run, i);
			continue;
		}
		if (resolve(dir, cases[i].rules, cases[i].cwd, false, &run) != -1)
			unit_fail("case %zu: working directory %s accepted", i, cases[i].cwd);
		assert_int_equal(run.err.kind, ERROR_DENIED);
		assert_int_equal(run.policy.len, 0);
		_cleanup_free_ char *cwd = unit_path(dir, cases[i].cwd);
		_cleanup_free_ char *excluded = unit_path(dir, cases[i].excluded);
		_cleanup_free_ char *expected = xasprintf(
		    "the working directory %s is inside %s, which is excluded by", cwd, excluded);
		unit_assert_starts_with(run.err.msg, expected, "case %zu", i);
		assert_non_null(run.err.hint);
	}
}

static void policy_skips_missing_paths_and_empty_globs(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct test_rule rules[] = {COVER_CWD, R(RO, CLI, "proj/missing"),
						 R(EXCLUDE, CLI, "proj/*.none"),
						 R(RO, CLI, "proj/link/missing"), END_RULES};
	static const struct {
		const char *path;
		const char *reason;
	} expected[] = {
	    {"proj/missing", "does not exist"},
	    {"proj/*.none", "glob matches nothing"},
	    {"proj/link/missing", "does not exist"},
	};
	_cleanup_run_ run;
	const struct policy *p = resolve_ok(dir, rules, "proj", false, &run, 0);
	assert_int_equal(p->len, 1);
	assert_int_equal(p->skipped_len, ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		_cleanup_free_ char *path = unit_path(dir, expected[i].path);
		if (strcmp(p->skipped[i].path, path) ||
		    strcmp(p->skipped[i].reason, expected[i].reason))
			unit_fail("skipped %zu: <%s>: %s, expected <%s>: %s", i, p->skipped[i].path,
				  p->skipped[i].reason, path, expected[i].reason);
	}
}

/* Missing paths are kept as absent entries where they would appear (through
 * the symlink proj/link -> src), decided by the same specificity, and globs
 * in the last segment as watches. */
static void policy_keeps_missing_paths_as_absent_entries(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct test_rule rules[] = {COVER_CWD,
						 R(RO, PRESET, "proj/missing"),
						 R(RW, CLI, "proj/missing"),
						 R(EXCLUDE, CLI, "proj/link/gone"),
						 R(RO, CLI, "proj/*.cfg"),
						 R(RW, CLI, "proj/a/*/x"),
						 END_RULES};
	_cleanup_run_ run;
	const struct policy *p = resolve_ok(dir, rules, "proj", false, &run, 0);
	assert_int_equal(p->absent_len, 2);
	_cleanup_free_ char *missing = unit_path(dir, "proj/missing");
	_cleanup_free_ char *gone = unit_path(dir, "proj/src/gone");
	assert_string_equal(p->absent[0].path, missing);
	assert_int_equal(p->absent[0].level, ACCESS_RW); /* the later layer */
	assert_string_equal(p->absent[1].path, gone);
	assert_int_equal(p->absent[1].level, ACCESS_EXCLUDE);
	/* Only a glob in the last segment is watched. */
	assert_int_equal(p->globs_len, 1);
	_cleanup_free_ char *proj = unit_path(dir, "proj");
	assert_string_equal(p->globs[0].dir, proj);
	assert_string_equal(p->globs[0].segment, "*.cfg");
}

/* A path that appears later is decided as if it had been there: an exact
 * rule beats a glob, then the later layer. */
static void policy_decides_a_new_path_like_an_existing_one(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct test_rule rules[] = {COVER_CWD, R(RO, PRESET, "proj/*.cfg"),
						 R(RW, PRESET, "proj/free.cfg"),
						 R(EXCLUDE, CLI, "proj/*.key"), END_RULES};
	_cleanup_run_ run;
	const struct policy *p = resolve_ok(dir, rules, "proj", false, &run, 0);
	static const struct {
		const char *path;
		bool named;
		enum access_level level;
	} cases[] = {
	    {"proj/new.cfg", true, ACCESS_RO},	    {"proj/free.cfg", true, ACCESS_RW},
	    {"proj/x.key", true, ACCESS_EXCLUDE},   {"proj/other", false, ACCESS_RW},
	    {"proj/src/new.cfg", false, ACCESS_RW},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *path = unit_path(dir, cases[i].path);
		const struct rule *rule = NULL;
		bool named = policy_rule_for_new(p, path, &rule);
		if (named != cases[i].named || (named && rule->level != cases[i].level))
			unit_fail("case %zu (%s): named %d level %d", i, cases[i].path, named,
				  named ? (int)rule->level : -1);
	}
}

static void policy_rejects_rules_it_cannot_enforce(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct {
		struct test_rule rule;
		const char *message;
	} cases[] = {
	    {R(RO, CLI, "/proc"), "/proc is under /proc, which the sandbox mounts fresh"},
	    {R(RW, GLOBAL, "/dev"), "/dev is under /dev, which the sandbox mounts fresh"},
	    {R(EXCLUDE, CLI, "/"), "the root directory cannot be excluded"},
	    {R(RO, CLI, "~root/x"), "only \"~\" and \"~/...\" are supported"},
	    /* A symlink planted in a writable directory must not loosen its target. */
	    {R(RW, CLI, "proj/keys"), "resolves through the symlink"},
	    {R(RO, CLI, "proj/keys"), "resolves through the symlink"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct test_rule rules[] = {COVER_CWD, R(EXCLUDE, PRESET, "home/.ssh"),
						  cases[i].rule, END_RULES};
		_cleanup_run_ run;
		if (resolve(dir, rules, "proj", false, &run) != -1)
			unit_fail("case %zu: rule %s accepted", i, cases[i].rule.path);
		assert_int_equal(run.err.kind, ERROR_DENIED);
		_cleanup_free_ char *prefix = xasprintf(
		    "%s rule \"%s\" (from rule 2): ", access_level_name(cases[i].rule.level),
		    run.rules.items[2].pattern);
		unit_assert_starts_with(run.err.msg, prefix, "case %zu", i);
		unit_assert_contains(run.err.msg, cases[i].message, "case %zu", i);
	}
}

static void policy_follows_symlink_outside_writable_dirs_and_tightening_ones(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	static const struct {
		struct test_rule rules[5];
		enum access_level level; /* of home/.ssh */
	} cases[] = {
	    {{R(RO, PRESET, "proj"), R(EXCLUDE, PRESET, "home/.ssh"), R(RW, CLI, "proj/keys")},
	     ACCESS_RW},
	    {{COVER_CWD, R(RW, PRESET, "home/.ssh"), R(EXCLUDE, CLI, "proj/keys")}, ACCESS_EXCLUDE},
	    {{COVER_CWD, R(RO, PRESET, "~"), R(RW, PRESET, "~/.ssh"), R(RO, CLI, "proj/keys")},
	     ACCESS_RO},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_run_ run;
		const struct policy *p = resolve_ok(dir, cases[i].rules, "proj", false, &run, i);
		assert_level(p, dir, "home/.ssh", cases[i].level, i);
		if (find_entry(p, dir, "proj/keys"))
			unit_fail("case %zu: an entry for the symlink itself", i);
	}
}

/* A tightening rule never opens a read-only or hidden tree: an rw one (a
 * pin, a mount point and nothing more) takes the level of what covers it,
 * an ro one stays hidden inside a hidden tree. */
static void policy_never_loosens_with_a_tightening_rule(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	unit_mkdir(dir, "proj/secret/inner");
	static const struct {
		struct test_rule rules[3];
		const char *pin;
		enum access_level pin_level;
		bool read_only;
		int level; /* -1: no entry (inside a hidden tree) */
	} cases[] = {
	    {{COVER_CWD, END_RULES}, "proj/src", ACCESS_RW, false, ACCESS_RW},
	    {{COVER_CWD, R(RO, CLI, "proj"), END_RULES}, "proj/src", ACCESS_RW, false, ACCESS_RO},
	    {{COVER_CWD, R(RO, CLI, "proj/src"), END_RULES},
	     "proj/src",
	     ACCESS_RW,
	     false,
	     ACCESS_RO},
	    {{COVER_CWD, R(EXCLUDE, CLI, "proj/secret"), END_RULES},
	     "proj/secret/inner",
	     ACCESS_RW,
	     false,
	     -1},
	    {{COVER_CWD, R(EXCLUDE, CLI, "proj/secret"), END_RULES},
	     "proj/secret/inner",
	     ACCESS_RO,
	     false,
	     -1},
	    {{COVER_CWD, END_RULES}, "proj/src", ACCESS_RO, false, ACCESS_RO},
	    {{COVER_CWD, END_RULES}, "proj/src", ACCESS_RW, true, ACCESS_RO},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_run_ run = {.rules = RULE_LIST_INIT, .err = ERROR_INIT};
		for (size_t j = 0; cases[i].rules[j].path; j++) {
			_cleanup_free_ char *pattern = unit_path(dir, cases[i].rules[j].path);
			rule_list_add(&run.rules, pattern, cases[i].rules[j].level,
				      cases[i].rules[j].layer, "rule");
		}
		_cleanup_free_ char *pin = unit_path(dir, cases[i].pin);
		rule_list_add_tightening(&run.rules, pin, cases[i].pin_level, LAYER_PRESET, "pin");
		_cleanup_free_ char *cwd = unit_path(dir, "proj");
		const struct policy_input in = {
		    .rules = &run.rules, .cwd = cwd, .read_only = cases[i].read_only};
		if (policy_resolve(&in, &run.policy, &run.err) < 0)
			unit_fail("case %zu: %s", i, run.err.msg);
		if (cases[i].level < 0) {
			if (find_entry(&run.policy, dir, cases[i].pin))
				unit_fail("case %zu: the pin shows inside a hidden tree", i);
			continue;
		}
		assert_level(&run.policy, dir, cases[i].pin, (enum access_level)cases[i].level, i);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    unit_tmp_test(policy_prefers_exact_path_when_glob_matches_same_path),
	    unit_tmp_test(policy_prefers_deeper_path_when_rules_nest),
	    unit_tmp_test(policy_prefers_later_layer_when_rules_name_same_path),
	    unit_tmp_test(policy_prefers_stricter_level_when_same_path_and_layer),
	    unit_tmp_test(policy_downgrades_rw_to_ro_when_read_only),
	    unit_tmp_test(policy_refuses_cwd_when_inside_excluded_path),
	    unit_tmp_test(policy_skips_missing_paths_and_empty_globs),
	    unit_tmp_test(policy_keeps_missing_paths_as_absent_entries),
	    unit_tmp_test(policy_decides_a_new_path_like_an_existing_one),
	    unit_tmp_test(policy_rejects_rules_it_cannot_enforce),
	    unit_tmp_test(policy_follows_symlink_outside_writable_dirs_and_tightening_ones),
	    unit_tmp_test(policy_never_loosens_with_a_tightening_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
