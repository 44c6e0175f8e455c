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

#include "base/cleanup.h"
#include "inside/git_guard.h"
#include "base/strv.h"
#include "base/xalloc.h"

struct git_case {
	const char *args; /* space-separated, after "git" */
	const char *form; /* the refused form, or NULL when allowed */
};

/* Classifies args with git's environment envp, the sandbox having started
 * with start_env. */
static void classify_in(const char *args, char *const *envp, char *const *start_env,
			struct git_decision *d, struct strv *argv)
{
	_cleanup_free_ char *copy = xstrdup(args);
	for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		strv_push(argv, w);
	git_guard_classify((int)argv->len, strv_array(argv), envp, start_env, d);
}

/* The environment is the sandbox's own: nothing in it has changed. */
static void classify(const char *args, char *const *envp, struct git_decision *d, struct strv *argv)
{
	classify_in(args, envp, envp, d, argv);
}

static void check_case(const struct git_case *c, char *const *envp, char *const *start_env)
{
	_cleanup_strv_ struct strv argv = STRV_INIT;
	_cleanup_git_decision_ struct git_decision d;
	classify_in(c->args, envp, start_env, &d, &argv);
	if (!c->form) {
		if (d.blocked)
			print_error("git %s: refused as \"%s\", expected allowed\n", c->args,
				    d.form);
		assert_false(d.blocked);
		return;
	}
	if (!d.blocked)
		print_error("git %s: allowed, expected refused as \"%s\"\n", c->args, c->form);
	assert_true(d.blocked);
	if (strcmp(d.form, c->form))
		print_error("git %s: refused as \"%s\", expected \"%s\"\n", c->args, d.form,
			    c->form);
	assert_string_equal(d.form, c->form);
	assert_non_null(d.reason);
	assert_non_null(d.alternative);
}

static void check_cases(const struct git_case *cases, size_t n)
{
	char *no_env[] = {NULL};
	for (size_t i = 0; i < n; i++)
		check_case(&cases[i], no_env, no_env);
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
	    {"clean", "clean"},
	    {"clean -d", "clean"},
	    {"clean -xd -- dir", "clean"},
	    {"clean -e -n", "clean"},
	    {"clean -- -n", "clean"},
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
	    {"clean -dn", NULL},
	    {"clean -d --dry-run -x", NULL},
	    {"clean --dry", NULL},
	    {"log --oneline -n 3", NULL},
	    {"--version", NULL},
	    {"--help reset --hard", NULL},
	    {"-c user.name=x commit -m msg", NULL},
	    {"-c core.editor=true commit", NULL},
	    {"merge topic", NULL},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

static void git_guard_refuses_config_that_reaches_around_the_guard(void **state)
{
	static const struct git_case cases[] = {
	    {"-c include.path=/tmp/evil commit -m msg", "-c include.path=..."},
	    {"-c include.path=/tmp/evil status", "-c include.path=..."},
	    {"-c INCLUDE.PATH=/tmp/evil log", "-c include.path=..."},
	    {"-c Include.Path ls-files", "-c include.path=..."},
	    {"-c includeIf.gitdir:/x/.path=/tmp/evil status", "-c includeIf.*.path=..."},
	    {"-c includeif.onbranch:main.path=/tmp/evil commit", "-c includeIf.*.path=..."},
	    {"-c INCLUDEIF.hasconfig:remote.*.url:x.PATH=/e status", "-c includeIf.*.path=..."},
	    {"--config-env=include.path=EVIL status", "-c include.path=..."},
	    {"--config-env includeIf.gitdir:x.path=EVIL commit", "-c includeIf.*.path=..."},
	    {"--config-env=includeIf.gitdir:a=b.path=EVIL status", "-c includeIf.*.path=..."},
	    {"-c clean.requireForce=false clean -d", "-c clean.requireForce=false"},
	    {"-c clean.requireforce=no clean", "-c clean.requireForce=false"},
	    {"-c CLEAN.REQUIREFORCE=Off clean -dx", "-c clean.requireForce=false"},
	    {"-c clean.requireForce=0 clean", "-c clean.requireForce=false"},
	    {"-c clean.requireForce= clean", "-c clean.requireForce=false"},
	    {"-c clean.requireForce=FALSE clean", "-c clean.requireForce=false"},
	    {"-c clean.requireForce=0x0 clean", "-c clean.requireForce=false"},
	    {"-c clean.requireForce=0k status", "-c clean.requireForce=false"},
	    {"-c core.hooksPath=/dev/null push origin main", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null merge topic", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null rebase main", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null am x.patch", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null pull", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null switch main", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null checkout -b new", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null cherry-pick abc", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null revert abc", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null gc", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null co", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null config user.name x", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null branch new", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null branch -a new", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null branch -d topic", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null branch -m old new", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null branch --list -D topic", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null branch --show-curr", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null branch -- new", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null tag v1", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null tag -l -d v1", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null tag -m -l v1", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null symbolic-ref HEAD refs/heads/x", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null symbolic-ref -d HEAD", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null remote -v add x url", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null remote add x url", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null worktree add ../x", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null stash", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null stash -q list", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null reflog expire --all", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null -c core.fsmonitor= commit -m msg",
	     "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/tmp/hooks status", "-c core.hooksPath=..."},
	    {"-c core.hooksPath= ls-files", "-c core.hooksPath=..."},
	    {"-c core.hooksPath ls-files", "-c core.hooksPath=..."},
	    {"-c core.hooksPath=/dev/null/ status", "-c core.hooksPath=..."},
	    {"-c core.fsmonitor status", "-c core.fsmonitor=..."},
	    {"-c core.fsmonitor=true status", "-c core.fsmonitor=..."},
	    {"-c core.fsmonitor=1 commit -m msg", "-c core.fsmonitor=..."},
	    {"-c core.fsmonitor=/tmp/hook ls-files", "-c core.fsmonitor=..."},
	    {"-c core.hooksPath=/dev/null -c alias.st=status st", "-c alias.*=..."},
	    {"-c core.fsmonitor=false -c alias.x=!sh x", "-c alias.*=..."},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

static void git_guard_refuses_plumbing_that_discards_work(void **state)
{
	static const struct git_case cases[] = {
	    {"update-ref -d refs/heads/topic", "update-ref -d"},
	    {"update-ref --delete refs/heads/topic", "update-ref -d"},
	    {"update-ref --del refs/heads/topic", "update-ref -d"},
	    {"update-ref refs/heads/topic -d", "update-ref -d"},
	    {"update-ref -m why -d refs/heads/topic", "update-ref -d"},
	    {"update-ref --no-deref -d HEAD", "update-ref -d"},
	    {"update-ref refs/heads/topic 0000000000000000000000000000000000000000",
	     "update-ref -d"},
	    {"update-ref -- refs/heads/topic 0000000000000000000000000000000000000000",
	     "update-ref -d"},
	    {"update-ref -m -d refs/heads/topic "
	     "0000000000000000000000000000000000000000000000000000000000000000",
	     "update-ref -d"},
	    {"update-ref --stdin", "update-ref --stdin"},
	    {"update-ref -z --stdin", "update-ref --stdin"},
	    {"update-ref --std", "update-ref --stdin"},
	    {"read-tree --reset HEAD", "read-tree --reset"},
	    {"read-tree --reset -u HEAD", "read-tree --reset"},
	    {"read-tree -u --reset HEAD", "read-tree --reset"},
	    {"read-tree --res -u HEAD", "read-tree --reset"},
	    {"read-tree -m -u --exclude-per-directory=.gitignore HEAD",
	     "read-tree -u --exclude-per-directory"},
	    {"read-tree -mu --exclude-per-directory .gitignore HEAD",
	     "read-tree -u --exclude-per-directory"},
	    {"read-tree -um --ex=.gitignore HEAD", "read-tree -u --exclude-per-directory"},
	    {"checkout-index -f -a", "checkout-index -f"},
	    {"checkout-index -af", "checkout-index -f"},
	    {"checkout-index -fa", "checkout-index -f"},
	    {"checkout-index -qfa", "checkout-index -f"},
	    {"checkout-index --force --all", "checkout-index -f"},
	    {"checkout-index --all --forc", "checkout-index -f"},
	    {"checkout-index -u -f -- tracked", "checkout-index -f"},
	    {"checkout-index --prefix=x/ -a -f", "checkout-index -f"},
	    {"checkout-index --stdin -f", "checkout-index -f"},
	    {"reset --merge HEAD", "reset --merge"},
	    {"branch -M topic main", "branch -M"},
	    {"branch -m -f topic main", "branch -M"},
	    {"branch -mf topic main", "branch -M"},
	    {"branch --mo --force topic main", "branch -M"},
	    {"branch -C topic main", "branch -M"},
	    {"branch --copy --force topic main", "branch -M"},
	    {"worktree remove --force ../wt", "worktree remove --force"},
	    {"worktree remove -f -f ../wt", "worktree remove --force"},
	    {"worktree remove ../wt --forc", "worktree remove --force"},
	    {"reset -q --me HEAD~1", "reset --merge"},
	    {"-C dir --no-pager update-ref -d refs/heads/topic", "update-ref -d"},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

/* The command lines agents run for workspace metadata, verbatim, and the
 * forms next to them. */
static void git_guard_allows_hook_free_queries_and_fsmonitor_off(void **state)
{
	static const struct git_case cases[] = {
	    {"-c core.hooksPath=/dev/null -c core.fsmonitor= ls-files", NULL},
	    {"-c core.hooksPath=/dev/null -c core.fsmonitor= --no-optional-locks ls-files "
	     "--cached --others --exclude-standard",
	     NULL},
	    {"-c core.fsmonitor=false status --porcelain", NULL},
	    {"-c core.fsmonitor=false commit -m msg", NULL},
	    {"-c core.fsmonitor=off push origin main", NULL},
	    {"-c core.fsmonitor=no merge topic", NULL},
	    {"-c core.fsmonitor=0 rebase main", NULL},
	    {"-c core.fsmonitor=FALSE status", NULL},
	    {"-c Core.FSMonitor= commit -m msg", NULL},
	    {"-c core.hooksPath=/dev/null status", NULL},
	    {"-c core.hooksPath=/dev/null diff --cached", NULL},
	    {"-c core.hooksPath=/dev/null log --oneline", NULL},
	    {"-c core.hooksPath=/dev/null show HEAD", NULL},
	    {"-c core.hooksPath=/dev/null rev-parse --show-toplevel", NULL},
	    {"-c core.hooksPath=/dev/null cat-file -p HEAD", NULL},
	    {"-c core.hooksPath=/dev/null ls-tree -r HEAD", NULL},
	    {"-c core.hooksPath=/dev/null for-each-ref refs/heads", NULL},
	    {"-c core.hooksPath=/dev/null blame tracked", NULL},
	    {"-c core.hooksPath=/dev/null grep -n x", NULL},
	    {"-c core.hooksPath=/dev/null rev-list --count HEAD", NULL},
	    {"-c core.hooksPath=/dev/null describe --tags", NULL},
	    {"-c core.hooksPath=/dev/null config --get user.name", NULL},
	    {"-c core.hooksPath=/dev/null config --get-regexp ^remote", NULL},
	    {"-c core.hooksPath=/dev/null config -l", NULL},
	    {"-c core.hooksPath=/dev/null config --list --show-origin", NULL},
	    {"-c core.hooksPath=/dev/null config get user.name", NULL},
	    {"-c core.hooksPath=/dev/null --version", NULL},
	    {"-c core.hooksPath=/dev/null branch --show-current", NULL},
	    {"-c core.hooksPath=/dev/null branch", NULL},
	    {"-c core.hooksPath=/dev/null branch -a -vv", NULL},
	    {"-c core.hooksPath=/dev/null branch --list feat*", NULL},
	    {"-c core.hooksPath=/dev/null branch --contains HEAD", NULL},
	    {"-c core.hooksPath=/dev/null branch --format=%(refname) --sort -committerdate", NULL},
	    {"-c core.hooksPath=/dev/null tag", NULL},
	    {"-c core.hooksPath=/dev/null tag -l v1.* -n3", NULL},
	    {"-c core.hooksPath=/dev/null symbolic-ref --short HEAD", NULL},
	    {"-c core.hooksPath=/dev/null symbolic-ref -q refs/remotes/origin/HEAD", NULL},
	    {"-c core.hooksPath=/dev/null remote", NULL},
	    {"-c core.hooksPath=/dev/null remote -v", NULL},
	    {"-c core.hooksPath=/dev/null remote get-url origin", NULL},
	    {"-c core.hooksPath=/dev/null worktree list --porcelain", NULL},
	    {"-c core.hooksPath=/dev/null stash list", NULL},
	    {"-c core.hooksPath=/dev/null stash show -p", NULL},
	    {"-c core.hooksPath=/dev/null reflog", NULL},
	    {"-c core.hooksPath=/dev/null reflog show main", NULL},
	    {"-c CORE.HOOKSPATH=/dev/null -C dir status", NULL},
	    {"-c clean.requireForce=true clean -n", NULL},
	    {"-c clean.requireForce clean -n", NULL},
	    {"-c clean.requireforce=YES clean -n", NULL},
	    {"update-ref refs/heads/topic HEAD", NULL},
	    {"update-ref -m -d refs/heads/topic HEAD", NULL},
	    {"update-ref refs/heads/new HEAD 0000000000000000000000000000000000000000", NULL},
	    {"update-ref refs/heads/topic 0000", NULL},
	    {"read-tree HEAD", NULL},
	    {"read-tree -m HEAD", NULL},
	    {"read-tree -m -u HEAD", NULL},
	    {"read-tree --prefix=sub/ -u HEAD", NULL},
	    {"read-tree --prefix --reset HEAD", NULL},
	    {"read-tree --no-reset -m HEAD", NULL},
	    {"checkout-index -a", NULL},
	    {"checkout-index -u -- tracked", NULL},
	    {"checkout-index --temp tracked", NULL},
	    {"checkout-index -a --prefix -f/", NULL},
	    {"checkout-index -- -f", NULL},
	    {"reset --keep HEAD~1", NULL},
	    {"branch -m topic renamed", NULL},
	    {"branch -c topic copied", NULL},
	    {"branch --move topic renamed", NULL},
	    {"worktree remove ../wt", NULL},
	    {"worktree add -b f ../f", NULL},
	    {"worktree add -f ../f", NULL},
	    {"worktree list", NULL},
	};
	check_cases(cases, ARRAY_SIZE(cases));
}

/* git reads settings from the environment as well: GIT_CONFIG_KEY_<n>
 * with GIT_CONFIG_VALUE_<n>, GIT_CONFIG_PARAMETERS (quoted as git quotes
 * it), and --config-env's variables. */
static void git_guard_reads_config_from_the_environment(void **state)
{
	static const struct {
		char *env[4];
		const char *args;
		const char *form;
	} cases[] = {
	    {{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", NULL},
	     "status",
	     "-c core.hooksPath=..."},
	    {{"GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/dev/null", NULL},
	     "status",
	     NULL},
	    {{"GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/dev/null", NULL},
	     "commit -m x",
	     "-c core.hooksPath=..."},
	    {{"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false", NULL},
	     "commit -m x",
	     NULL},
	    {{"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=x",
	      "GIT_CONFIG_KEY_1=include.path"},
	     "status",
	     "-c include.path=..."},
	    {{"GIT_CONFIG_KEY_12=clean.requireForce", "GIT_CONFIG_VALUE_12=off", NULL},
	     "clean -d",
	     "-c clean.requireForce=false"},
	    {{"GIT_CONFIG_KEY_0=user.name", NULL, NULL}, "status", NULL},
	    {{"GIT_CONFIG_PARAMETERS='core.fsmonitor'='x'", NULL, NULL},
	     "status",
	     "-c core.fsmonitor=..."},
	    {{"GIT_CONFIG_PARAMETERS='user.name'='x'", NULL, NULL}, "status", NULL},
	    {{"GIT_CONFIG_PARAMETERS='core.hooksPath'='/dev/null'", NULL, NULL}, "ls-files", NULL},
	    {{"GIT_CONFIG_PARAMETERS='core.hooksPath'='/dev/null'", NULL, NULL},
	     "commit -m x",
	     "-c core.hooksPath=..."},
	    {{"GIT_CONFIG_PARAMETERS='core.fsmonitor'=''", NULL, NULL}, "commit -m x", NULL},
	    {{"GIT_CONFIG_PARAMETERS='core.fsmonitor'=", NULL, NULL},
	     "status",
	     "-c core.fsmonitor=..."},
	    {{"GIT_CONFIG_PARAMETERS='core.fsmonitor=false'", NULL, NULL}, "commit -m x", NULL},
	    {{"GIT_CONFIG_PARAMETERS=' core.hooksPath =/x'", NULL, NULL},
	     "status",
	     "-c core.hooksPath=..."},
	    {{"GIT_CONFIG_PARAMETERS='user.name'='a'  'Include.Path'='/x'", NULL, NULL},
	     "status",
	     "-c include.path=..."},
	    {{"GIT_CONFIG_PARAMETERS='user.name'='it'\\''s' 'alias.x'='y'", NULL, NULL},
	     "status",
	     "-c alias.*=..."},
	    {{"GIT_CONFIG_PARAMETERS='user.name'='a'\\!'b' 'core.hooksPath'='/e'", NULL, NULL},
	     "status",
	     "-c core.hooksPath=..."},
	    {{"GIT_CONFIG_PARAMETERS='core.hooksPath", NULL, NULL},
	     "status",
	     "GIT_CONFIG_PARAMETERS=..."},
	    {{"GIT_CONFIG_PARAMETERS=core.hooksPath=/x", NULL, NULL},
	     "status",
	     "GIT_CONFIG_PARAMETERS=..."},
	    {{"GIT_CONFIG_PARAMETERS='a.b'x", NULL, NULL}, "status", "GIT_CONFIG_PARAMETERS=..."},
	    {{"GIT_CONFIG_PARAMETERS='a.b'='c'd", NULL, NULL},
	     "status",
	     "GIT_CONFIG_PARAMETERS=..."},
	    {{"GIT_CONFIG_PARAMETERS=", NULL, NULL}, "commit -m x", NULL},
	    {{"H=/dev/null", NULL, NULL}, "--config-env=core.hooksPath=H status", NULL},
	    {{"H=/dev/null", NULL, NULL},
	     "--config-env=core.hooksPath=H commit -m x",
	     "-c core.hooksPath=..."},
	    {{"F=false", NULL, NULL}, "--config-env core.fsmonitor=F commit -m x", NULL},
	    {{"F=/tmp/hook", NULL, NULL},
	     "--config-env core.fsmonitor=F status",
	     "-c core.fsmonitor=..."},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct git_case c = {cases[i].args, cases[i].form};
		check_case(&c, (char *const *)cases[i].env, (char *const *)cases[i].env);
	}
}

/* Another HOME or GIT_CONFIG_GLOBAL points git at config files the agent
 * may have written (hooksPath, aliases, includes): only queries pass. */
static void git_guard_refuses_changed_config_files_except_for_queries(void **state)
{
	static const struct {
		char *env[3];
		char *start[3];
		const char *args;
		const char *form;
	} cases[] = {
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "commit -m x", "commit with HOME changed"},
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "status", NULL},
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "ls-files", NULL},
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "config --get user.name", NULL},
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "config user.name x", "config with HOME changed"},
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "co -- tracked", "co with HOME changed"},
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "--version", NULL},
	    {{"HOME=/tmp/h"}, {"HOME=/home/u"}, "", NULL},
	    {{NULL}, {"HOME=/home/u"}, "commit -m x", "commit with HOME changed"},
	    {{"HOME="}, {"HOME=/home/u"}, "commit -m x", "commit with HOME changed"},
	    {{"GIT_CONFIG_GLOBAL=/tmp/g", "HOME=/h"},
	     {"HOME=/h"},
	     "push origin main",
	     "push with GIT_CONFIG_GLOBAL changed"},
	    {{"XDG_CONFIG_HOME=/tmp/x"},
	     {NULL},
	     "merge topic",
	     "merge with XDG_CONFIG_HOME changed"},
	    {{"GIT_CONFIG_SYSTEM=/tmp/s"},
	     {NULL},
	     "rebase main",
	     "rebase with GIT_CONFIG_SYSTEM changed"},
	    {{NULL},
	     {"GIT_CONFIG_NOSYSTEM=1"},
	     "am x.patch",
	     "am with GIT_CONFIG_NOSYSTEM changed"},
	    {{"GIT_CONFIG=/tmp/c"},
	     {NULL},
	     "cherry-pick abc",
	     "cherry-pick with GIT_CONFIG changed"},
	    {{"GIT_CONFIG_GLOBAL=/tmp/g"},
	     {"GIT_CONFIG_GLOBAL=/tmp/f"},
	     "switch main",
	     "switch with GIT_CONFIG_GLOBAL changed"},
	    {{"HOME=/h", "GIT_CONFIG_NOSYSTEM=1"},
	     {"GIT_CONFIG_NOSYSTEM=1", "HOME=/h"},
	     "commit -m x",
	     NULL},
	    {{"HOME=/h", "USER=other"}, {"HOME=/h"}, "commit -m x", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct git_case c = {cases[i].args, cases[i].form};
		check_case(&c, (char *const *)cases[i].env, (char *const *)cases[i].start);
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
	    cmocka_unit_test(git_guard_refuses_config_that_reaches_around_the_guard),
	    cmocka_unit_test(git_guard_refuses_plumbing_that_discards_work),
	    cmocka_unit_test(git_guard_allows_hook_free_queries_and_fsmonitor_off),
	    cmocka_unit_test(git_guard_reads_config_from_the_environment),
	    cmocka_unit_test(git_guard_refuses_changed_config_files_except_for_queries),
	    cmocka_unit_test(git_guard_reports_where_git_would_work),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
