#!/bin/sh
# Escape attempts against the files a host git reads as configuration or
# runs as code: the agent inside plants a command (an fsmonitor or a hook
# that touches $T/PWN, outside the project) or points git at a repository
# of its making; afterwards the host's own `git status` and `git commit`
# run in the main repository, a linked worktree, a submodule or a nested
# repository, and nothing planted may run, and the config, hooks, common
# directory and object store must be the ones from before.
#
# The last attempts create a control path that did not exist before the
# run. Nothing can be mounted on a missing path without creating it on the
# host, so the write succeeds inside; the host-side guard moves what
# appears there aside at once, and the host's git never sees it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# A repository with a hook that does nothing and one commit. Also sets the
# printf formats of the payloads: a config whose fsmonitor, and a hook,
# touch $T/PWN on the host.
make_repo()
{
	fsmonitor_config="[core]\\n\\tfsmonitor = touch $T/PWN\\n"
	hook_text="#!/bin/sh\\ntouch $T/PWN\\n"
	git init -q -b main "${1:-.}" &&
		printf '#!/bin/sh\nexit 0\n' >"${1:-.}/.git/hooks/pre-commit" &&
		chmod +x "${1:-.}/.git/hooks/pre-commit" &&
		git -C "${1:-.}" commit -q --allow-empty -m initial ||
		fail "could not make a repository in ${1:-.}"
}

# A project with a submodule "sub" whose git directory is .git/modules/sub.
make_project_with_submodule()
{
	make_repo "$T/upstream"
	make_repo
	git -c protocol.file.allow=always submodule add -q "$T/upstream" sub >/dev/null 2>&1 &&
		git commit -qm "add sub" || fail "could not add the submodule"
	[ -d .git/modules/sub ] || fail "the submodule's git directory is not in .git/modules"
}

# What a host git in $1 reads: its git and common directories, hooks
# directory, object store and alternates, every config value with its
# origin, and the content of the hooks and config files.
git_view()
{
	(
		cd "$1" || exit 1
		git rev-parse --absolute-git-dir --git-common-dir --git-path hooks \
			--git-path objects --git-path objects/info/alternates
		git config --list --show-origin
		cat "$(git rev-parse --git-path objects/info/alternates)" 2>/dev/null
		for p in hooks config config.worktree info commondir; do
			path=$(git rev-parse --git-path "$p")
			[ -e "$path" ] && find "$path" -type f -exec md5sum {} + | LC_ALL=C sort
		done
		hooks=$(git config core.hooksPath) && [ -d "$hooks" ] &&
			find "$hooks" -type f -exec md5sum {} + | LC_ALL=C sort
		true
	) 2>&1
}

# Runs the host's git status and commit in $1 after comparing its view with
# $2; fails when a planted command ran.
expect_host_git_unchanged()
{
	after=$(git_view "$1")
	[ "$after" = "$2" ] ||
		fail "what git reads in $1 changed: $(printf '%s\n' "$2" >"$T/view.before"
			printf '%s\n' "$after" >"$T/view.after"
			diff "$T/view.before" "$T/view.after" | head -20)"
	git -C "$1" status >/dev/null 2>&1
	git -C "$1" commit -q --allow-empty -m "on the host" >/dev/null 2>&1
	[ ! -e "$T/PWN" ] || fail "a planted command ran on the host in $1"
}


test_modules_config_and_hooks_of_a_submodule_cannot_be_rewritten()
{
	make_project_with_submodule
	before=$(git_view sub)
	# The submodule's config is not a read-only mount (git renames a new
	# one over it at every update): writing it succeeds, and the guard
	# writes its bytes back at once, in place or renamed over.
	sbx sh -c "printf '$fsmonitor_config' >>.git/modules/sub/config
		cp .git/modules/sub/config cfg && printf '$fsmonitor_config' >>cfg &&
		mv cfg .git/modules/sub/config
		printf '$hook_text' 2>/dev/null >.git/modules/sub/hooks/pre-commit && echo hook
		printf '$hook_text' 2>/dev/null >.git/modules/sub/hooks/post-commit && echo new hook
		mv .git/modules/sub .git/modules/old 2>/dev/null && echo moved module
		mv .git/modules .git/m 2>/dev/null && echo moved modules
		mv sub sub-old 2>/dev/null && echo moved work tree
		echo 'gitdir: ../evil' 2>/dev/null >sub/.git && echo gitfile; true"
	expect_status 0
	expect_out ""
	expect_err_contains "$T/work/.git/modules/sub/config (ro by @git (submodule config"
	expect_host_git_unchanged sub "$before"
	git status >/dev/null 2>&1
	[ ! -e "$T/PWN" ] || fail "the superproject's git status ran a planted command"
}

test_a_linked_worktree_commondir_cannot_be_redirected()
{
	make_repo
	git worktree add -q wt 2>/dev/null || fail "worktree setup failed"
	before=$(git_view wt)
	sbx sh -c "mkdir -p evil/objects evil/refs && printf '$fsmonitor_config' >evil/config &&
		echo 'ref: refs/heads/main' >evil/HEAD
		echo \"\$PWD/evil\" 2>/dev/null >.git/worktrees/wt/commondir && echo commondir
		echo \"\$PWD/evil\" 2>/dev/null >.git/worktrees/wt/gitdir && echo gitdir
		mv .git/worktrees/wt .git/worktrees/old 2>/dev/null && echo moved admin
		mv .git/worktrees .git/w 2>/dev/null && echo moved worktrees
		mv wt wt-old 2>/dev/null && echo moved work tree
		echo \"gitdir: \$PWD/evil\" 2>/dev/null >wt/.git && echo gitfile; true"
	expect_status 0
	expect_out ""
	expect_host_git_unchanged wt "$before"
}

test_a_linked_worktree_outside_the_project_protects_its_repository()
{
	make_repo main
	git -C main worktree add -q ../wt 2>/dev/null || fail "worktree setup failed"
	cd wt || fail "no worktree"
	before_main=$(git_view ../main)
	before=$(git_view .)
	sbx sh -c "printf '$fsmonitor_config' 2>/dev/null >>../main/.git/config && echo config
		printf '$hook_text' 2>/dev/null >../main/.git/hooks/pre-commit && echo hook
		echo /evil 2>/dev/null >../main/.git/objects/info/alternates && echo alternates
		mv ../main/.git/objects ../main/.git/o 2>/dev/null && echo moved objects
		mv ../main/.git/worktrees/wt ../main/.git/worktrees/x 2>/dev/null && echo moved admin
		git commit -q --allow-empty -m inside || echo commit failed; true"
	expect_status 0
	expect_out ""
	git -C ../main log --oneline main wt 2>/dev/null | grep -q inside ||
		fail "the commit made inside is not in the repository"
	expect_host_git_unchanged . "$before"
	expect_host_git_unchanged ../main "$before_main"
}

test_objects_info_alternates_cannot_be_planted()
{
	make_repo
	make_repo "$T/other"
	before=$(git_view .)
	sbx sh -c "echo '$T/other/.git/objects' 2>/dev/null >.git/objects/info/alternates && echo alternates
		echo 'http://x/' 2>/dev/null >.git/objects/info/http-alternates && echo http
		mv .git/objects/info .git/objects/i 2>/dev/null && echo moved info
		mv .git/objects .git/o 2>/dev/null && echo moved objects; true"
	expect_status 0
	expect_out ""
	expect_no_file .git/objects/info/alternates
	expect_host_git_unchanged . "$before"
}

test_a_fake_repository_cannot_replace_the_git_directory()
{
	make_repo
	before=$(git_view .)
	# The issue's fake repository, reached by replacing .git rather
	# than through commondir (see the pending test for that).
	sbx sh -c "mkdir -p .git/x 2>/dev/null; cp -r .git/objects .git/refs .git/HEAD .git/x 2>/dev/null
		printf '$fsmonitor_config' 2>/dev/null >.git/x/config
		mv .git .git-old 2>/dev/null && echo moved
		rmdir .git/objects .git/hooks .git 2>/dev/null; [ -d .git/objects ] || echo removed
		echo 'gitdir: .git/x' 2>/dev/null >.git && echo gitfile; true"
	expect_status 0
	expect_out ""
	expect_host_git_unchanged . "$before"
}

test_an_existing_hooks_path_in_the_tree_cannot_be_rewritten()
{
	make_repo
	mkdir .githooks
	printf '#!/bin/sh\nexit 0\n' >.githooks/pre-commit
	chmod +x .githooks/pre-commit
	git config core.hooksPath .githooks
	before=$(git_view .)
	sbx sh -c "printf '$hook_text' 2>/dev/null >.githooks/pre-commit && echo rewrote
		printf '$hook_text' 2>/dev/null >.githooks/post-commit && echo created
		mv .githooks .gh 2>/dev/null && echo moved; true"
	expect_status 0
	expect_out ""
	expect_host_git_unchanged . "$before"
}

test_a_nested_hooks_path_cannot_be_moved_away_with_its_parent()
{
	make_repo
	mkdir -p tools/hooks
	printf '#!/bin/sh\nexit 0\n' >tools/hooks/pre-commit
	chmod +x tools/hooks/pre-commit
	git config core.hooksPath tools/hooks
	before=$(git_view .)
	sbx sh -c "mv tools tools-old 2>/dev/null && echo moved parent
		mkdir -p tools/hooks 2>/dev/null; printf '$hook_text' 2>/dev/null >tools/hooks/pre-commit && echo hook
		rm -rf tools 2>/dev/null; [ -e tools/hooks/pre-commit ] || echo removed; true"
	expect_status 0
	expect_out ""
	expect_host_git_unchanged . "$before"
}

test_an_existing_include_file_in_the_tree_cannot_be_rewritten()
{
	make_repo
	printf '[user]\n\tname = included\n' >x.cfg
	git config include.path ../x.cfg
	git config includeIf.gitdir:/nowhere/.path "$T/work/y.cfg"
	printf '[user]\n\temail = y@example.com\n' >y.cfg
	before=$(git_view .)
	sbx sh -c "printf '$fsmonitor_config' 2>/dev/null >>x.cfg && echo x.cfg
		printf '$fsmonitor_config' 2>/dev/null >>y.cfg && echo y.cfg
		mv x.cfg x.old 2>/dev/null && echo moved; true"
	expect_status 0
	expect_out ""
	expect_host_git_unchanged . "$before"
}

test_a_script_the_config_runs_cannot_be_rewritten()
{
	make_repo
	mkdir bin
	printf '#!/bin/sh\nexit 1\n' >bin/fsmonitor
	chmod +x bin/fsmonitor
	git config core.fsmonitor ./bin/fsmonitor
	git config alias.lint '!./bin/fsmonitor --check'
	before=$(git_view .)
	sbx sh -c "printf '$hook_text' 2>/dev/null >bin/fsmonitor && echo rewrote
		mv bin b 2>/dev/null && echo moved; true"
	expect_status 0
	expect_out ""
	expect_host_git_unchanged . "$before"
	git lint >/dev/null 2>&1
	[ ! -e "$T/PWN" ] || fail "the alias ran a planted script"
}

test_a_nested_repository_is_protected_like_the_main_one()
{
	make_repo
	mkdir -p tools
	make_repo tools/x
	before=$(git_view tools/x)
	sbx sh -c "printf '$fsmonitor_config' 2>/dev/null >>tools/x/.git/config && echo config
		printf '$hook_text' 2>/dev/null >tools/x/.git/hooks/pre-commit && echo hook
		echo /evil 2>/dev/null >tools/x/.git/objects/info/alternates && echo alternates
		mv tools/x/.git tools/x/g 2>/dev/null && echo moved git dir
		mv tools/x tools/y 2>/dev/null && echo moved repo
		mv tools tools-old 2>/dev/null && echo moved parent
		(cd tools/x && echo a >a && git add a && git commit -qm inside) || echo commit failed; true"
	expect_status 0
	expect_out ""
	git -C tools/x log --oneline | grep -q inside || fail "the nested commit is missing"
	expect_host_git_unchanged tools/x "$before"
}

test_a_nested_repository_with_a_gitfile_cannot_be_repointed()
{
	make_repo
	mkdir -p tools/x
	git init -q --separate-git-dir "$T/work/.git-x" tools/x || fail "setup failed"
	git -C tools/x commit -q --allow-empty -m initial
	before=$(git_view tools/x)
	sbx sh -c "echo 'gitdir: ../../.git' 2>/dev/null >tools/x/.git && echo gitfile
		printf '$fsmonitor_config' 2>/dev/null >>.git-x/config && echo config
		mv .git-x .gx 2>/dev/null && echo moved git dir; true"
	expect_status 0
	expect_out ""
	expect_host_git_unchanged tools/x "$before"
}

test_renaming_a_parent_cannot_replace_a_protected_directory()
{
	make_project_with_submodule
	git worktree add -q wt 2>/dev/null || fail "worktree setup failed"
	mkdir -p deep/er
	make_repo deep/er/repo
	before=$(git_view .)
	before_sub=$(git_view sub)
	before_wt=$(git_view wt)
	before_deep=$(git_view deep/er/repo)
	for dir in .git .git/hooks .git/info .git/objects .git/objects/info .git/modules \
		.git/modules/sub .git/modules/sub/hooks .git/worktrees .git/worktrees/wt \
		deep deep/er deep/er/repo deep/er/repo/.git sub wt; do
		sbx sh -c "mv $dir $dir.old 2>/dev/null && echo moved $dir; true"
		expect_out ""
	done
	expect_host_git_unchanged . "$before"
	expect_host_git_unchanged sub "$before_sub"
	expect_host_git_unchanged wt "$before_wt"
	expect_host_git_unchanged deep/er/repo "$before_deep"
}

# Fails unless the guard moved $1 aside and said so.
expect_moved_aside()
{
	expect_no_file "$1"
	expect_err_contains "moved aside"
}

# .git/commondir does not exist in a main repository.
test_a_planted_commondir_cannot_redirect_the_repository()
{
	make_repo
	before=$(git_view .)
	sbx sh -c "mkdir .git/x; cp -r .git/objects .git/refs .git/HEAD .git/x
		printf '$fsmonitor_config' >.git/x/config
		echo x 2>/dev/null >.git/commondir; true"
	expect_status 0
	expect_moved_aside .git/commondir
	expect_host_git_unchanged . "$before"
}

# config.worktree does not exist yet.
test_a_missing_config_worktree_cannot_be_created_in_any_git_directory()
{
	make_repo
	git config extensions.worktreeConfig true
	git worktree add -q wt 2>/dev/null || fail "worktree setup failed"
	before=$(git_view .)
	before_wt=$(git_view wt)
	sbx sh -c "printf '$fsmonitor_config' 2>/dev/null >.git/config.worktree
		printf '$fsmonitor_config' 2>/dev/null >.git/worktrees/wt/config.worktree; true"
	expect_status 0
	expect_moved_aside .git/config.worktree
	expect_moved_aside .git/worktrees/wt/config.worktree
	expect_host_git_unchanged . "$before"
	expect_host_git_unchanged wt "$before_wt"
}

# The hooks directory the config names does not exist.
test_a_missing_hooks_path_cannot_be_created()
{
	make_repo
	git config core.hooksPath .githooks
	before=$(git_view .)
	sbx sh -c "mkdir .githooks 2>/dev/null && printf '$hook_text' 2>/dev/null >.githooks/pre-commit &&
		chmod +x .githooks/pre-commit 2>/dev/null; true"
	expect_status 0
	expect_moved_aside .githooks
	expect_host_git_unchanged . "$before"
}

# The include file the config names does not exist.
test_a_missing_include_file_cannot_be_created()
{
	make_repo
	git config include.path ../x.cfg
	before=$(git_view .)
	sbx sh -c "printf '$fsmonitor_config' 2>/dev/null >x.cfg; true"
	expect_status 0
	expect_moved_aside x.cfg
	expect_host_git_unchanged . "$before"
}

# A repository without .git/hooks.
test_a_repository_without_hooks_cannot_get_them()
{
	make_repo
	rm -rf .git/hooks
	before=$(git_view .)
	sbx sh -c "mkdir .git/hooks 2>/dev/null && printf '$hook_text' 2>/dev/null >.git/hooks/pre-commit &&
		chmod +x .git/hooks/pre-commit 2>/dev/null; true"
	expect_status 0
	expect_moved_aside .git/hooks
	expect_host_git_unchanged . "$before"
}

run_tests
