#!/bin/sh
# Everyday git work inside the sandbox, with @git protecting the control
# files: commits, branches, merges, rebases, stashes, fetch and push to a
# bare remote, linked worktrees and submodule updates all work, and their
# results are on the host, while the session runs and after it.
. "$(dirname "$0")/../lib.sh"

export GIT_CONFIG_NOSYSTEM=1

# A repository with one commit, an author in its config (the environment
# filter may not pass GIT_AUTHOR_*), and a bare remote in $T/remote.git
# that has main.
make_repo_with_remote()
{
	git init -q -b main . &&
		git config user.name tester && git config user.email tester@example.com &&
		echo initial >file && git add file && git commit -qm initial &&
		git init -q --bare "$T/remote.git" && git remote add origin "$T/remote.git" &&
		git push -q origin main || fail "could not make the repository"
}

test_commit_branch_switch_merge_rebase_stash_fetch_push_work_inside()
{
	make_repo_with_remote
	sbx --rw "$T/remote.git" sh -c 'set -e
		echo a >a && git add a && git commit -qm "a on main"
		git branch feature && git switch -q feature
		echo b >b && git add b && git commit -qm "b on feature"
		git switch -q main
		echo c >c && git add c && git commit -qm "c on main"
		git merge -q --no-edit feature
		git switch -q feature && git rebase -q main && git switch -q main
		echo d >d && git add d && git stash -q && [ ! -e d ] && git stash apply -q
		git commit -qm "d on main"
		git fetch -q origin
		git push -q origin main feature
		echo done'
	expect_status 0
	expect_out "done"
	[ "$(git log --format=%s main | head -1)" = "d on main" ] || fail "main lacks the last commit"
	[ "$(git -C "$T/remote.git" rev-parse main)" = "$(git rev-parse main)" ] ||
		fail "the remote's main is not the pushed one"
	[ "$(git -C "$T/remote.git" rev-parse feature)" = "$(git rev-parse feature)" ] ||
		fail "the remote lacks the pushed feature branch"
	git merge-base --is-ancestor feature main || fail "the merge and rebase are not in main"
	[ "$(git stash list | wc -l)" -eq 1 ] || fail "the stash is not on the host"
}

test_git_worktree_add_inside_the_project_works()
{
	make_repo_with_remote
	sbx sh -c 'git worktree add -q wt -b topic && cd wt && echo w >w && git add w &&
		git commit -qm "in the worktree" && echo done'
	expect_status 0
	expect_out "done"
	[ "$(git log --format=%s topic | head -1)" = "in the worktree" ] ||
		fail "the worktree's commit is not on the host"
	git worktree list | grep -q "$T/work/wt" || fail "the host does not list the worktree"
	[ "$(git -C wt status --porcelain)" = "" ] || fail "the worktree is not clean on the host"
}

make_project_with_submodule()
{
	git init -q -b main "$T/upstream" &&
		git -C "$T/upstream" -c user.name=t -c user.email=t@e commit -q --allow-empty -m one &&
		git -C "$T/upstream" -c user.name=t -c user.email=t@e commit -q --allow-empty -m two ||
		fail "upstream setup failed"
	make_repo_with_remote
	git -c protocol.file.allow=always submodule add -q "$T/upstream" sub >/dev/null 2>&1 &&
		git commit -qm "sub at two" || fail "submodule setup failed"
	recorded=$(git -C sub rev-parse HEAD)
}

# A known limit, not run: the guard moves a new gitfile at a gitlink's path
# aside (a planted one would point the host's git status at a repository
# of the agent's making), and with it the one this clone writes.
pending_git_submodule_update_clones_an_initialised_submodule_inside()
{
	make_project_with_submodule
	# A fresh clone of the project, whose submodule is not there yet. The
	# url is registered in .git/config from outside: that file is
	# read-only inside, so "update --init" cannot do it there.
	git clone -q . "$T/work/clone" || fail "clone failed"
	cd clone || fail "no clone"
	git submodule init -q || fail "submodule init failed"
	# The upstream lies outside the project (and /tmp is private inside).
	sbx --ro "$T/upstream" sh -c 'git -c protocol.file.allow=always submodule update -q &&
		git -C sub rev-parse HEAD'
	expect_status 0
	expect_out "$recorded"
	[ "$(git -C sub rev-parse HEAD)" = "$recorded" ] || fail "the host sees no submodule"
	[ -z "$(git status --porcelain)" ] || fail "the clone is not clean: $(git status --porcelain)"
}

test_a_cloned_submodule_can_be_moved_to_the_recorded_commit_inside()
{
	make_project_with_submodule
	git -C sub checkout -q HEAD~1 || fail "could not move the submodule"
	sbx sh -c 'git -C sub switch -q --detach "$(git rev-parse HEAD:sub)" && git -C sub rev-parse HEAD'
	expect_status 0
	expect_out "$recorded"
	[ "$(git -C sub rev-parse HEAD)" = "$recorded" ] || fail "the host sees the old commit"
	[ -z "$(git status --porcelain)" ] || fail "the superproject is not clean: $(git status --porcelain)"
}

# git submodule update rewrites core.worktree in .git/modules/<name>/config
# on every run (the same value), by renaming a new file over the old one: a
# read-only mount would refuse that, so the guard keeps the file's bytes
# instead, and the update works.
test_git_submodule_update_moves_a_cloned_submodule_to_the_recorded_commit()
{
	make_project_with_submodule
	git -C sub checkout -q HEAD~1 || fail "could not move the submodule"
	before=$(cat .git/modules/sub/config)
	sbx sh -c 'git submodule update -q && git -C sub rev-parse HEAD'
	expect_status 0
	expect_out "$recorded"
	[ "$(git -C sub rev-parse HEAD)" = "$recorded" ] || fail "the host sees the old commit"
	[ "$(cat .git/modules/sub/config)" = "$before" ] || fail "the submodule's config changed"
	expect_err_lacks "moved aside"
}

test_a_commit_made_inside_is_visible_on_the_host_while_the_session_runs()
{
	make_repo_with_remote
	rc=0
	"$AS" sh -c 'echo x >x && git add x && git commit -qm "made inside" && touch committed
		i=0; while [ ! -e seen ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		[ -e seen ] && echo "still running"' >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	i=0
	while [ ! -e committed ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -e committed ] || fail "the commit inside did not happen"
	subject=$(git log --format=%s -1)
	touch seen
	wait $pid || rc=$?
	[ "$subject" = "made inside" ] || fail "the host saw '$subject' while the session ran"
	expect_status 0
	expect_out "still running"
}

test_protecting_git_control_files_leaves_nothing_new_on_the_host()
{
	make_project_with_submodule
	git worktree add -q wt 2>/dev/null || fail "worktree setup failed"
	mkdir -p tools && git init -q tools/x
	git config core.hooksPath .githooks
	git config include.path ../missing.cfg
	snapshot "$T/work" >"$T/before"
	sbx true
	expect_status 0
	snapshot "$T/work" >"$T/after"
	cmp -s "$T/before" "$T/after" ||
		fail "the run left files behind: $(diff "$T/before" "$T/after" | head -5)"
}

run_tests
