/* Unit tests for the @git guard's classifier: every refused form, the
 * allowed forms next to them, and the places an option can hide (global
 * options before the subcommand, clusters of short flags, abbreviated long
 * options, values that look like flags). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cleanup.h"
#include "git_guard.h"
#include "strv.h"
#include "xalloc.h"

struct git_case {
	const char *args; /* space-separated, after "git" */
	const char *form; /* the refused form, or NULL when allowed */
};

static void classify(const char *args, char *const *envp, struct git_decision *d, struct strv *argv)
{
	_cleanup_free_ char *copy = xstrdup(args);
	for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		strv_push(argv, w);
	git_guard_classify((int)argv->len, strv_array(argv), envp, envp, d);
}

static void check_cases(const struct git_case *cases, size_t n)
{
	char *no_env[] = {NULL};
	for (size_t i = 0; i < n; i++) {
		_cleanup_strv_ struct strv argv = STRV_INIT;
		_cleanup_git_decision_ struct git_decision d;
		classify(cases[i].args, no_env, &d, &argv);
		if (!cases[i].form) {
			if (d.blocked)
				print_error("git %s: refused as \"%s\", expected allowed\n",
					    cases[i].args, d.form);
			assert_false(d.blocked);
			continue;
		}
		if (!d.blocked)
			print_error("git %s: allowed, expected refused as \"%s\"\n", cases[i].args,
				    cases[i].form);
		assert_true(d.blocked);
		assert_string_equal(d.form, cases[i].form);
		assert_non_null(d.reason);
		assert_non_null(d.alternative);
	}
}

static void git_guard_refuses_forms_that_discard_work(void **state)
{
	static const struct git_case cases[] = {
	    {"checkout -- file.txt", "checkout"},
	    {"checkout .", "checkout"},
	    {"checkout HEAD -- file.txt", "checkout"},
	    {"checkout main", "checkout"},
	    {"checkout -f main", "checkout"},
	    {"checkout -b new -- file.txt", "checkout"},
	    {"checkout -b new --force", "checkout"},
	    {"checkout -p", "checkout"},
	    {"restore file.txt", "restore"},
	    {"restore --worktree --staged file.txt", "restore"},
	    {"restore -SW file.txt", "restore"},
	    {"restore --source=HEAD~1 file.txt", "restore"},
	    {"reset --hard", "reset --hard"},
	    {"reset --hard HEAD~1", "reset --hard"},
	    {"reset -q --har", "reset --hard"},
	    {"reset HEAD~1 --hard", "reset --hard"},
	    {"clean -f", "clean -f"},
	    {"clean -fd", "clean -f"},
	    {"clean -xdf", "clean -f"},
	    {"clean --force", "clean -f"},
	    {"clean -i", "clean -f"},
	    {"stash drop", "stash drop"},
	    {"stash drop stash@{1}", "stash drop"},
	    {"stash clear", "stash clear"},
	    {"stash pop", "stash pop"},
	    {"stash -q pop", "stash pop"},
	    {"branch -D topic", "branch -D"},
	    {"branch -d --force topic", "branch -D"},
	    {"branch -df topic", "branch -D"},
	    {"branch --delete -f topic", "branch -D"},
	    {"switch --discard-changes main", "switch --discard-changes"},
	    {"switch -f main", "switch --discard-changes"},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

static void git_guard_refuses_forms_that_skip_hooks_or_overwrite_remotes(void **state)
{
	static const struct git_case cases[] = {
	    {"commit --no-verify -m msg", "commit --no-verify"},
	    {"commit -n -m msg", "commit --no-verify"},
	    {"commit -nm msg", "commit --no-verify"},
	    {"commit -anm msg", "commit --no-verify"},
	    {"commit -m msg --no-verif", "commit --no-verify"},
	    {"commit --no-v -m msg", "commit --no-verify"},
	    {"commit -m msg -n", "commit --no-verify"},
	    {"merge --no-verify topic", "merge --no-verify"},
	    {"push --force", "push --force"},
	    {"push -f origin main", "push --force"},
	    {"push -uf origin main", "push --force"},
	    {"push origin +main", "push --force"},
	    {"push origin +refs/heads/main:refs/heads/main", "push --force"},
	    {"push --forc origin main", "push --force"},
	    {"push --mirror origin", "push --mirror"},
	    {"push --no-verify origin main", "push --no-verify"},
	    {"-c core.hooksPath=/dev/null commit -m msg", "-c core.hooksPath=..."},
	    {"-c core.hookspath=/tmp status", "-c core.hooksPath=..."},
	    {"-c CORE.HOOKSPATH status", "-c core.hooksPath=..."},
	    {"-c core.fsmonitor=/tmp/x status", "-c core.fsmonitor=..."},
	    {"--config-env=core.hooksPath=HOOKS commit -m msg", "-c core.hooksPath=..."},
	    {"--config-env core.hooksPath=HOOKS commit -m msg", "-c core.hooksPath=..."},
	    {"-c alias.co=checkout co -- file", "-c alias.*=..."},
	    {"--no-such-option commit", "--no-such-option"},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

static void git_guard_finds_the_subcommand_after_global_options(void **state)
{
	static const struct git_case cases[] = {
	    {"-C dir commit --no-verify -m msg", "commit --no-verify"},
	    {"-C dir -c x.y=z commit --no-verify -m msg", "commit --no-verify"},
	    {"-C a -C b reset --hard", "reset --hard"},
	    {"--no-pager -P -p reset --hard", "reset --hard"},
	    {"--git-dir=.git --work-tree=. reset --hard", "reset --hard"},
	    {"--git-dir .git --work-tree . clean -fd", "clean -f"},
	    {"--bare --namespace ns push --force", "push --force"},
	    {"--literal-pathspecs --no-optional-locks checkout -- f", "checkout"},
	    {"-c user.name=a -c user.email=b commit -nm msg", "commit --no-verify"},
	    {"--attr-source HEAD stash drop", "stash drop"},
	    {"--exec-path=/usr/lib/git-core reset --hard", "reset --hard"},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

static void git_guard_allows_everything_else(void **state)
{
	static const struct git_case cases[] = {
	    {"status", NULL},
	    {"", NULL},
	    {"-C dir status", NULL},
	    {"commit -m msg", NULL},
	    {"commit -am msg", NULL},
	    {"commit -mn", NULL},
	    {"commit -m -n", NULL},
	    {"commit --message=--no-verify", NULL},
	    {"commit -F -n", NULL},
	    {"commit -Sn -m msg", NULL},
	    {"commit --verify -m msg", NULL},
	    {"commit -- -n", NULL},
	    {"push --force-with-lease origin main", NULL},
	    {"push --force-with-lease=main:abc origin main", NULL},
	    {"push --force-with-lease --force-if-includes origin main", NULL},
	    {"push -o +x origin main", NULL},
	    {"push origin main", NULL},
	    {"push -n origin main", NULL},
	    {"switch main", NULL},
	    {"switch -c topic", NULL},
	    {"checkout -b topic", NULL},
	    {"checkout -b topic main", NULL},
	    {"checkout -B topic origin/main", NULL},
	    {"checkout -q -b topic --track origin/main", NULL},
	    {"checkout --orphan pages", NULL},
	    {"checkout --help", NULL},
	    {"branch -d topic", NULL},
	    {"branch --delete topic", NULL},
	    {"branch -u origin/x topic", NULL},
	    {"branch -f topic main", NULL},
	    {"stash", NULL},
	    {"stash apply", NULL},
	    {"stash list", NULL},
	    {"stash push -m pop", NULL},
	    {"stash show -p", NULL},
	    {"reset --soft HEAD~1", NULL},
	    {"reset --mixed HEAD~1", NULL},
	    {"reset -- file.txt", NULL},
	    {"reset -- --hard", NULL},
	    {"restore --staged file.txt", NULL},
	    {"restore -S file.txt", NULL},
	    {"clean -n", NULL},
	    {"clean -e -f -n", NULL},
	    {"log --oneline -n 3", NULL},
	    {"--version", NULL},
	    {"--help reset --hard", NULL},
	    {"-c user.name=x commit -m msg", NULL},
	    {"-c core.editor=true commit", NULL},
	    {"merge topic", NULL},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

static void git_guard_reads_config_from_the_environment(void **state)
{
	static const struct {
		char *env[3];
		bool blocked;
	} cases[] = {
	    {{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", NULL}, true},
	    {{"GIT_CONFIG_PARAMETERS='core.fsmonitor'='x'", NULL, NULL}, true},
	    {{"GIT_CONFIG_PARAMETERS='user.name'='x'", NULL, NULL}, false},
	    {{"GIT_CONFIG_KEY_0=user.name", NULL, NULL}, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_strv_ struct strv argv = STRV_INIT;
		_cleanup_git_decision_ struct git_decision d;
		classify("status", (char *const *)cases[i].env, &d, &argv);
		assert_int_equal(d.blocked, cases[i].blocked);
	}
}

static void git_guard_reports_where_git_would_work(void **state)
{
	char *no_env[] = {NULL};
	_cleanup_strv_ struct strv argv = STRV_INIT;
	_cleanup_git_decision_ struct git_decision d;
	classify("-C a -C b --git-dir=g --work-tree w reset --hard", no_env, &d, &argv);
	assert_true(d.blocked);
	assert_string_equal(d.subcommand, "reset");
	assert_int_equal(d.chdirs.len, 2);
	assert_string_equal(d.chdirs.items[0], "a");
	assert_string_equal(d.chdirs.items[1], "b");
	assert_string_equal(d.git_dir, "g");
	assert_string_equal(d.work_tree, "w");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(git_guard_refuses_forms_that_discard_work),
	    cmocka_unit_test(git_guard_refuses_forms_that_skip_hooks_or_overwrite_remotes),
	    cmocka_unit_test(git_guard_finds_the_subcommand_after_global_options),
	    cmocka_unit_test(git_guard_allows_everything_else),
	    cmocka_unit_test(git_guard_reads_config_from_the_environment),
	    cmocka_unit_test(git_guard_reports_where_git_would_work),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
