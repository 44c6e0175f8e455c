#!/bin/sh
# Escape attempts against the git guardrails: the pre-commit hook of the
# guarded project refuses every commit, and no attempt inside may get a
# commit past it or leave the host's hooks or config changed:
#
#   git config core.hooksPath (wrapped git and the real binary)
#   git -c core.hooksPath=... commit
#   GIT_CONFIG_COUNT/GIT_CONFIG_KEY_0/GIT_CONFIG_VALUE_0 with git commit
#   GIT_CONFIG_PARAMETERS with git commit
#   .git/config.worktree: rewriting it, or creating it and enabling it
#   HUSKY=0: persisting it in ~/.config/husky/init.sh or .husky
#   renaming .git/hooks or .git/config away
#   LD_PRELOAD of a library into the git launcher
#   the real git at /run/agent-sandbox/bin/git, which the guard does not
#   see: it may skip the hook for its own invocation, but cannot make that
#   last beyond it
#   include.path / includeIf.*.path pointing at a config of the agent's
#   making, through -c, --config-env and the environment
#   HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL/SYSTEM/NOSYSTEM, GIT_CONFIG
#   pointing git at such a config, and rewriting the start values the
#   guard compares them with
#   clean.requireForce=false (also in a repository of the agent's making
#   with the project as work tree), update-ref -d / a null value /
#   --stdin, read-tree --reset, checkout-index -f, reset --merge,
#   branch -M / -C, worktree remove --force
#
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# Fails unless the host's hook still refuses a commit made outside.
expect_hook_still_guards_the_host()
{
	git commit -q --allow-empty -m outside 2>"$T/host-commit" &&
		fail "a commit on the host got past the pre-commit hook"
	grep -q "pre-commit hook ran" "$T/host-commit" || fail "the host's hook did not run"
}

test_git_config_core_hookspath_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'for git in git /run/agent-sandbox/bin/git; do
		$git config core.hooksPath "$PWD/evil-hooks" 2>/dev/null && echo "$git config"
		$git config --local core.hooksPath "$PWD/evil-hooks" 2>/dev/null && echo "$git config --local"
		$git config --worktree core.hooksPath "$PWD/evil-hooks" 2>/dev/null && echo "$git config --worktree"
	done; true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
	expect_hook_still_guards_the_host
}

test_git_dash_c_core_hookspath_commit_is_refused()
{
	make_guarded_project
	before=$(host_state)
	for form in "-c core.hooksPath=/dev/null" "-c core.hookspath=/dev/null" \
		"--config-env=core.hooksPath=EVIL_HOOKS"; do
		# shellcheck disable=SC2086
		EVIL_HOOKS=/dev/null sbx git $form commit -q --allow-empty -m skipped
		expect_status 126
		expect_err_contains "is blocked by the sandbox policy"
	done
	expect_host_unchanged "$before"
}

test_git_config_count_environment_is_refused()
{
	make_guarded_project
	before=$(host_state)
	GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null \
		sbx git commit -q --allow-empty -m skipped
	expect_status 126
	expect_err_contains "is blocked by the sandbox policy"
	# Set inside rather than passed in.
	sbx sh -c 'export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=x \
		GIT_CONFIG_KEY_1=Core.HooksPath GIT_CONFIG_VALUE_1=/dev/null
		git commit -q --allow-empty -m skipped'
	expect_status 126
	expect_host_unchanged "$before"
}

test_git_config_parameters_environment_is_refused()
{
	make_guarded_project
	before=$(host_state)
	GIT_CONFIG_PARAMETERS="'core.hooksPath'='/dev/null'" sbx git commit -q --allow-empty -m skipped
	expect_status 126
	expect_err_contains "is blocked by the sandbox policy"
	sbx sh -c "GIT_CONFIG_PARAMETERS=\"'user.name'='x' 'core.hookspath'='/dev/null'\" git commit -q --allow-empty -m skipped"
	expect_status 126
	expect_host_unchanged "$before"
}

test_an_existing_config_worktree_cannot_be_rewritten()
{
	make_guarded_project
	git config extensions.worktreeConfig true
	printf '[user]\n\tname = tester\n' >.git/config.worktree
	before=$(host_state)
	cp .git/config.worktree "$T/config.worktree.before"
	sbx sh -c 'printf "[core]\n\thooksPath = /dev/null\n" 2>/dev/null >>.git/config.worktree && echo "appended"
		/run/agent-sandbox/bin/git config --worktree core.hooksPath /dev/null 2>/dev/null && echo "git config --worktree"
		mv -f .git/config.worktree .git/cw 2>/dev/null && echo "moved"
		git commit -q --allow-empty -m skipped 2>/dev/null && echo "committed"; true'
	expect_status 0
	expect_out ""
	cmp -s .git/config.worktree "$T/config.worktree.before" || fail "config.worktree changed"
	expect_host_unchanged "$before"
	expect_hook_still_guards_the_host
}

test_a_new_config_worktree_cannot_be_enabled()
{
	make_guarded_project
	before=$(host_state)
	# Without extensions.worktreeConfig in the read-only .git/config, git
	# ignores the file, and the extension cannot be switched on.
	sbx sh -c 'printf "[core]\n\thooksPath = /dev/null\n" >.git/config.worktree || exit 9
		/run/agent-sandbox/bin/git config extensions.worktreeConfig true 2>/dev/null && echo "enabled"
		git commit -q --allow-empty -m skipped 2>/dev/null && echo "committed"; true'
	expect_status 0
	expect_out ""
	rm .git/config.worktree
	expect_host_unchanged "$before"
}

test_husky_zero_cannot_be_persisted_and_hooks_stay_read_only()
{
	make_guarded_project
	mkdir .husky
	printf 'npm test\n' >.husky/pre-commit
	before=$(host_state)
	# HUSKY=0 in the sandbox's own environment only skips husky for the
	# commands run there; husky v9 reads ~/.config/husky/init.sh before
	# each hook, so writing it there (or into .husky) would outlast the
	# run. Neither is writable. A plain git hook ignores HUSKY anyway.
	sbx sh -c 'mkdir -p "$HOME/.config/husky" 2>/dev/null && echo "mkdir"
		echo "export HUSKY=0" 2>/dev/null >"$HOME/.config/husky/init.sh" && echo "init.sh"
		echo "export HUSKY=0" 2>/dev/null >"$HOME/.huskyrc" && echo "huskyrc"
		echo "exit 0" 2>/dev/null >.husky/pre-commit && echo ".husky/pre-commit"
		mkdir .husky/_ 2>/dev/null && echo ".husky/_"
		echo "exit 0" 2>/dev/null >.git/hooks/pre-commit && echo "hook"
		HUSKY=0 git commit -q --allow-empty -m skipped 2>/dev/null && echo "committed"; true'
	expect_status 0
	expect_out ""
	expect_no_file "$HOME/.config/husky"
	expect_host_unchanged "$before"
	HUSKY=0 expect_hook_still_guards_the_host
}

test_renaming_git_hooks_or_config_away_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'mv .git/hooks .git/hooks-old 2>/dev/null && echo "moved hooks"
		rm -rf .git/hooks 2>/dev/null; [ -e .git/hooks/pre-commit ] || echo "removed the hook"
		mv .git/config .git/config-old 2>/dev/null && echo "moved config"
		rm -f .git/config 2>/dev/null; [ -e .git/config ] || echo "removed config"
		mkdir -p sub && ln -s ../.git/hooks sub/hooks && mv sub/hooks/pre-commit x 2>/dev/null && echo "moved via link"
		git commit -q --allow-empty -m skipped 2>/dev/null && echo "committed"; true'
	expect_status 0
	expect_out ""
	rm -rf sub x
	expect_host_unchanged "$before"
}

test_ld_preload_into_the_git_launcher_gains_nothing()
{
	make_guarded_project
	# A constructor runs before the launcher's main: it tries to rewrite
	# the hook and the config, then lets the guard run.
	cat >preload.c <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void attempt(void)
{
	const char *targets[] = {".git/hooks/pre-commit", ".git/config", ".agent-sandbox.json"};
	for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
		int fd = open(targets[i], O_WRONLY | O_TRUNC);
		if (fd >= 0) {
			dprintf(2, "preload: wrote %s\n", targets[i]);
			close(fd);
		}
	}
	dprintf(2, "preload: ran\n");
}
C
	cc -shared -fPIC -o preload.so preload.c || fail "cc failed"
	before=$(host_state)
	# Set inside, where the launcher is the first thing to load it. (The
	# ASan build refuses foreign preloads unless told to allow them.)
	for form in "push --force origin main" "-c core.hooksPath=/dev/null commit -q --allow-empty -m skipped"; do
		sbx sh -c 'LD_PRELOAD="$PWD/preload.so" ASAN_OPTIONS=verify_asan_link_order=0 exec git '"$form"
		expect_status 126
		expect_err_contains "preload: ran"
		expect_err_contains "is blocked by the sandbox policy"
		! grep -q "preload: wrote" "$T/err" || fail "the preloaded library wrote: $(err)"
	done
	expect_host_unchanged "$before"
}

test_the_real_git_binary_skips_the_guard_but_cannot_change_hooks_or_config()
{
	make_guarded_project
	before=$(host_state)
	# Wrappers deter; they are not the boundary. The real git is mounted
	# at /run/agent-sandbox/bin/git, and with -c core.hooksPath it skips
	# the hook for this one commit. What must hold: nothing it does
	# outlives the invocation in the hooks or the config.
	sbx sh -c '/run/agent-sandbox/bin/git -c core.hooksPath=/dev/null commit -q --allow-empty -m inside &&
		echo "committed past the hook"
		/run/agent-sandbox/bin/git config core.hooksPath /dev/null 2>/dev/null && echo "config"
		/run/agent-sandbox/bin/git config alias.ci "commit --no-verify" 2>/dev/null && echo "alias"
		echo "exit 0" 2>/dev/null >.git/hooks/pre-commit && echo "hook"
		git commit -q --allow-empty -m again 2>/dev/null && echo "wrapped commit"; true'
	expect_status 0
	expect_out "committed past the hook"
	# The commit itself is the documented bypass; undo it before comparing.
	git reset -q --soft HEAD~1
	git rm -q --cached .git/hooks/pre-commit 2>/dev/null
	expect_host_unchanged "$before"
	expect_hook_still_guards_the_host
}

test_git_include_path_of_an_agent_config_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'cfg=/tmp/evil.cfg
		printf "[core]\n\thooksPath = /dev/null\n" >$cfg
		git -c include.path=$cfg commit -q --allow-empty -m skipped 2>/dev/null && echo "-c include.path"
		git -c Include.Path=$cfg commit -q --allow-empty -m skipped 2>/dev/null && echo "-c Include.Path"
		git -c "includeIf.gitdir:/.path=$cfg" commit -q --allow-empty -m skipped 2>/dev/null && echo "-c includeIf"
		EVIL=$cfg git --config-env=include.path=EVIL commit -q --allow-empty -m skipped 2>/dev/null && echo "--config-env"
		GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=includeIf.onbranch:main.path GIT_CONFIG_VALUE_0=$cfg \
			git commit -q --allow-empty -m skipped 2>/dev/null && echo "GIT_CONFIG_KEY_0"
		GIT_CONFIG_PARAMETERS=$(printf "\047user.name\047=\047x\047 \047include.path\047=\047%s\047" $cfg) \
			git commit -q --allow-empty -m skipped 2>/dev/null && echo "GIT_CONFIG_PARAMETERS"
		true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
	expect_hook_still_guards_the_host
}

test_git_config_files_chosen_by_the_agent_cannot_skip_the_hook()
{
	make_guarded_project
	before=$(host_state)
	# Each config switches the hooks off and hides --no-verify in an alias.
	sbx sh -c 'printf "[core]\n\thooksPath = /dev/null\n[alias]\n\tci = commit --no-verify\n" >/tmp/g
		mkdir -p /tmp/h /tmp/x/git && cp /tmp/g /tmp/h/.gitconfig && cp /tmp/g /tmp/x/git/config
		HOME=/tmp/h git commit -q --allow-empty -m skipped 2>/dev/null && echo "HOME"
		HOME=/tmp/h git ci -q --allow-empty -m skipped 2>/dev/null && echo "HOME alias"
		XDG_CONFIG_HOME=/tmp/x git commit -q --allow-empty -m skipped 2>/dev/null && echo "XDG_CONFIG_HOME"
		GIT_CONFIG_GLOBAL=/tmp/g git commit -q --allow-empty -m skipped 2>/dev/null && echo "GIT_CONFIG_GLOBAL"
		GIT_CONFIG_GLOBAL=/tmp/g git ci -q --allow-empty -m skipped 2>/dev/null && echo "GIT_CONFIG_GLOBAL alias"
		env -u GIT_CONFIG_NOSYSTEM GIT_CONFIG_SYSTEM=/tmp/g git commit -q --allow-empty -m skipped 2>/dev/null && echo "GIT_CONFIG_SYSTEM"
		GIT_CONFIG=/tmp/g git commit -q --allow-empty -m skipped 2>/dev/null && echo "GIT_CONFIG"
		# The start values the guard compares with cannot be moved: not
		# the recorded HOME, nor a record planted for an unset variable.
		rec=/run/agent-sandbox/git-env
		ln -sfn =/tmp/h $rec/HOME 2>/dev/null && echo "relinked HOME"
		rm -f $rec/HOME 2>/dev/null; [ -L $rec/HOME ] || echo "removed HOME"
		ln -s =/tmp/g $rec/GIT_CONFIG_GLOBAL 2>/dev/null && echo "planted GIT_CONFIG_GLOBAL"
		mv $rec /run/agent-sandbox/x 2>/dev/null && echo "moved git-env"
		HOME=/tmp/h git commit -q --allow-empty -m skipped 2>/dev/null && echo "HOME after"
		GIT_CONFIG_GLOBAL=/tmp/g git commit -q --allow-empty -m skipped 2>/dev/null && echo "GIT_CONFIG_GLOBAL after"
		true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
	expect_hook_still_guards_the_host
}

test_git_clean_without_require_force_is_refused()
{
	make_guarded_project
	echo keep >untracked-work
	mkdir untracked-dir && echo keep >untracked-dir/file
	before=$(host_state)
	sbx sh -c 'printf "[clean]\n\trequireForce = false\n" >/tmp/cfg && mkdir -p /tmp/h && cp /tmp/cfg /tmp/h/.gitconfig
		git -c clean.requireForce=false clean -d 2>/dev/null && echo "-c false"
		git -c clean.requireforce=0x0 clean -d 2>/dev/null && echo "-c 0x0"
		git -c clean.requireForce= clean -d 2>/dev/null && echo "-c empty"
		GIT_CONFIG_PARAMETERS=$(printf "\047clean.requireForce\047=\047off\047") git clean -d 2>/dev/null && echo "GIT_CONFIG_PARAMETERS"
		GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=clean.requireForce GIT_CONFIG_VALUE_0=no git clean -d 2>/dev/null && echo "GIT_CONFIG_KEY_0"
		HOME=/tmp/h git clean -d 2>/dev/null && echo "HOME"
		GIT_CONFIG_GLOBAL=/tmp/cfg git clean -d 2>/dev/null && echo "GIT_CONFIG_GLOBAL"
		git -c include.path=/tmp/cfg clean -d 2>/dev/null && echo "include.path"
		# A repository of its own, with the project as its work tree:
		# there every file is untracked, and its config is writable.
		git init -q --bare /tmp/evil.git && git --git-dir=/tmp/evil.git config clean.requireForce false
		git --git-dir=/tmp/evil.git --work-tree=. clean -d 2>/dev/null && echo "--git-dir"
		GIT_DIR=/tmp/evil.git GIT_WORK_TREE=$PWD git clean -dx 2>/dev/null && echo "GIT_DIR"
		true'
	expect_status 0
	expect_out ""
	expect_content untracked-work keep
	expect_content untracked-dir/file keep
	expect_content tracked tracked
	expect_host_unchanged "$before"
}

test_git_plumbing_cannot_delete_refs_or_discard_changes()
{
	make_guarded_project
	git branch topic
	git worktree add -q wt 2>/dev/null && echo "work in progress" >wt/tracked ||
		fail "could not add a worktree"
	echo staged >staged && git add staged
	echo changed >tracked
	refs_before=$(git for-each-ref --format='%(refname) %(objectname)')
	index_before=$(git ls-files --stage)
	before=$(host_state)
	sbx sh -c 'git update-ref -d refs/heads/topic 2>/dev/null && echo "update-ref -d"
		git update-ref refs/heads/topic 0000000000000000000000000000000000000000 2>/dev/null && echo "update-ref zero"
		git update-ref -- refs/heads/topic 0000000000000000000000000000000000000000 2>/dev/null && echo "update-ref -- zero"
		printf "delete refs/heads/topic\n" | git update-ref --stdin 2>/dev/null && echo "update-ref --stdin"
		git read-tree --reset -u HEAD 2>/dev/null && echo "read-tree --reset -u"
		git read-tree --res HEAD 2>/dev/null && echo "read-tree --res"
		git checkout-index -a -f 2>/dev/null && echo "checkout-index -a -f"
		git checkout-index -qfa 2>/dev/null && echo "checkout-index -qfa"
		git checkout-index --force -- tracked 2>/dev/null && echo "checkout-index --force"
		git reset -q --merge HEAD 2>/dev/null && echo "reset --merge"
		git branch -M topic main 2>/dev/null && echo "branch -M"
		git branch -C topic main 2>/dev/null && echo "branch -C"
		git worktree remove --force wt 2>/dev/null && echo "worktree remove --force"
		true'
	expect_status 0
	expect_out ""
	[ "$(git for-each-ref --format='%(refname) %(objectname)')" = "$refs_before" ] ||
		fail "refs changed"
	[ "$(git ls-files --stage)" = "$index_before" ] || fail "the index changed"
	expect_content tracked changed
	expect_content staged staged
	expect_content wt/tracked "work in progress"
	expect_host_unchanged "$before"
	expect_hook_still_guards_the_host
}

# Holes found while writing this suite, fixed since; each stays as a test.


# The parent of .git/hooks can be renamed: the read-only mounts travel
# with it, and a fresh .git with writable hooks and config takes its place
# on the host.
test_moving_the_git_directory_away_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'mv .git .git-old 2>/dev/null && mkdir .git && cp -a .git-old/. .git/ &&
		echo "#!/bin/sh" >.git/hooks/pre-commit && echo "replaced .git"; true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
	expect_hook_still_guards_the_host
}

# In a linked worktree the .git file and the worktree's commondir and
# gitdir link it to its repository: rewritten, they would point the host's
# git at a repository of the agent's making.
test_a_linked_worktree_cannot_be_repointed()
{
	mkdir main
	(cd main && make_guarded_project && git worktree add -q ../wt) || fail "worktree setup failed"
	cd wt || fail "no worktree"
	before=$(cat .git ../main/.git/worktrees/wt/commondir ../main/.git/worktrees/wt/gitdir)
	sbx sh -c 'echo "gitdir: $PWD/evil" 2>/dev/null >.git && echo ".git file"
		echo "$PWD/evil" 2>/dev/null >../main/.git/worktrees/wt/commondir && echo "commondir"
		echo "$PWD/evil" 2>/dev/null >../main/.git/worktrees/wt/gitdir && echo "gitdir"
		mv .git .git-old 2>/dev/null && echo "moved"; true'
	expect_out ""
	after=$(cat .git ../main/.git/worktrees/wt/commondir ../main/.git/worktrees/wt/gitdir)
	[ "$after" = "$before" ] || fail "the worktree was repointed"
}

# With extensions.worktreeConfig on, a worktree's config.worktree that does
# not exist yet cannot be mounted over (that would create it on the host),
# so the write succeeds inside and the guard moves the file aside.
test_a_missing_config_worktree_does_not_stay_on_the_host()
{
	mkdir main
	(cd main && make_guarded_project && git config extensions.worktreeConfig true &&
		git worktree add -q ../wt) || fail "worktree setup failed"
	cd wt || fail "no worktree"
	sbx sh -c 'printf "[core]\n\thooksPath = /dev/null\n" 2>/dev/null >../main/.git/worktrees/wt/config.worktree; true'
	expect_status 0
	expect_no_file ../main/.git/worktrees/wt/config.worktree
	expect_err_contains "main/.git/worktrees/wt/config.worktree (ro by @git"
}

# A library preloaded through the config's env.set (or --env) loads into
# bwrap itself, on the host, before any namespace exists: a project config
# written from inside could run code outside the sandbox on the next run.
test_env_set_ld_preload_does_not_load_into_bwrap_on_the_host()
{
	make_guarded_project
	cat >preload.c <<'C'
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void attempt(void)
{
	close(open(".git/hooks/pre-commit", O_WRONLY | O_TRUNC));
}
C
	cc -shared -fPIC -o preload.so preload.c || fail "cc failed"
	before=$(host_state)
	echo "{\"env\": {\"set\": {\"LD_PRELOAD\": \"$T/work/preload.so\"}}}" >.agent-sandbox.json
	sbx true
	echo '{"network": false}' >.agent-sandbox.json
	expect_host_unchanged "$before"
}

run_tests
