#!/bin/sh
# Branch mode: `--branch NAME` runs in a worktree of the current repository
# kept in the repo shelf under $XDG_DATA_HOME; `git push host NAME` from
# inside delivers the branch; `checkout` provisions, `branches` lists and
# `gc` removes worktrees nobody used for a while, never a dirty one or one
# a run holds.
. "$(dirname "$0")/../lib.sh"

# A host repository in $T/work with one commit, and a git identity.
make_host_repo()
{
	unset XDG_DATA_HOME XDG_STATE_HOME
	git config --global user.email agent@example.com &&
		git config --global user.name agent &&
		git init -q -b main . && echo base >base.txt && git add base.txt &&
		git commit -qm base || fail "could not make the host repository"
}

shelves() { echo "$HOME/.local/share/agent-sandbox/shelves"; }

# The worktree path of branch $1, made by checkout.
checkout_path()
{
	sbx checkout "$1"
	expect_status 0
	out
}

# Waits up to 10 s for file $1.
wait_for()
{
	for _ in $(seq 200); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	fail "timed out waiting for $1"
}

# Runs in the background a branch sandbox that marks "started" in its
# worktree, waits for "go" there, then runs $2.
start_waiting_sandbox()
{
	"$AS" --branch "$1" sh -c "touch started; while [ ! -e go ]; do sleep 0.05; done; $2" \
		>"$T/out.$3" 2>"$T/err.$3" </dev/null &
	echo $! >"$T/pid.$3"
}

test_two_branch_sandboxes_at_once_each_push_their_branch_to_the_host()
{
	make_host_repo
	a=$(checkout_path feature/a)
	b=$(checkout_path feature/b)
	commit='echo "$0" >work.txt && git add work.txt && git commit -qm work && git push -q host HEAD'
	start_waiting_sandbox feature/a "sh -c '$commit' from-a" a
	start_waiting_sandbox feature/b "sh -c '$commit' from-b" b
	wait_for "$a/started"
	wait_for "$b/started"
	# Both run at once: each is still waiting for its go.
	kill -0 "$(cat "$T/pid.a")" && kill -0 "$(cat "$T/pid.b")" ||
		fail "the two sandboxes did not run at the same time"
	touch "$a/go" "$b/go"
	wait "$(cat "$T/pid.a")" || fail "sandbox a failed: $(cat "$T/err.a")"
	wait "$(cat "$T/pid.b")" || fail "sandbox b failed: $(cat "$T/err.b")"
	[ "$(git show feature/a:work.txt)" = from-a ] || fail "feature/a did not reach the host"
	[ "$(git show feature/b:work.txt)" = from-b ] || fail "feature/b did not reach the host"
	[ "$(git rev-parse main)" = "$(git rev-parse feature/a~1)" ] ||
		fail "feature/a does not start at the host's HEAD"
	[ ! -e work.txt ] || fail "the host's working tree changed"
}

test_pushing_the_hosts_checked_out_branch_is_refused()
{
	make_host_repo
	before=$(git rev-parse main)
	sbx --branch topic sh -c 'echo x >x && git add x && git commit -qm x &&
		git push host HEAD:main; echo "push=$?"
		git push -q host HEAD:topic; echo "topic=$?"'
	expect_status 0
	expect_out_contains "push=1"
	expect_out_contains "topic=0"
	expect_err_contains "branch is currently checked out"
	[ "$(git rev-parse main)" = "$before" ] || fail "the host's main moved"
	git rev-parse -q --verify topic >/dev/null || fail "the topic branch was not delivered"
}

test_runs_racing_on_first_provisioning_make_one_shelf()
{
	make_host_repo
	"$AS" --branch one true >"$T/o1" 2>"$T/e1" </dev/null &
	p1=$!
	"$AS" --branch two true >"$T/o2" 2>"$T/e2" </dev/null &
	p2=$!
	"$AS" checkout three >"$T/o3" 2>"$T/e3" </dev/null &
	p3=$!
	wait $p1 || fail "the first run failed: $(cat "$T/e1")"
	wait $p2 || fail "the second run failed: $(cat "$T/e2")"
	wait $p3 || fail "checkout failed: $(cat "$T/e3")"
	[ "$(ls "$(shelves)" | wc -l)" -eq 1 ] || fail "not one shelf: $(ls "$(shelves)")"
	[ "$(ls "$(shelves)"/*/worktrees | LC_ALL=C sort | tr '\n' ' ')" = "one three two " ] ||
		fail "worktrees: $(ls "$(shelves)"/*/worktrees)"
}

test_checkout_is_idempotent_and_keeps_the_work()
{
	make_host_repo
	first=$(checkout_path feature/x)
	[ -f "$first/base.txt" ] || fail "the worktree lacks the host's files"
	echo mine >"$first/mine.txt"
	second=$(checkout_path feature/x)
	[ "$first" = "$second" ] || fail "checkout moved: $first then $second"
	[ "$(cat "$second/mine.txt")" = mine ] || fail "a second checkout lost the work"
	case $first in
	"$(shelves)"/work-*/worktrees/feature__x) ;;
	*) fail "unexpected worktree path $first" ;;
	esac
	[ "$(git -C "$first" rev-parse --abbrev-ref HEAD)" = feature/x ] ||
		fail "the worktree is not on feature/x"
}

test_branches_lists_both_worktrees_with_last_use()
{
	make_host_repo
	checkout_path alpha >/dev/null
	checkout_path beta/one >/dev/null
	sbx branches
	expect_status 0
	expect_out_contains "alpha	"
	expect_out_contains "beta/one	"
	expect_out_contains "/worktrees/beta__one"
	sbx branches --json
	expect_status 0
	out | python3 -c '
import json, sys
items = json.load(sys.stdin)
assert [i["branch"] for i in items] == ["alpha", "beta/one"], items
assert all(i["in_use"] is False and i["last_use"].endswith("Z") for i in items), items
' || fail "branches --json: $(out)"
}

test_a_run_marks_the_worktree_used_and_holds_it()
{
	make_host_repo
	wt=$(checkout_path held)
	touch -d '2000-01-01' "$wt"
	start_waiting_sandbox held true h
	wait_for "$wt/started"
	sbx branches --json
	expect_out_contains '"in_use":true'
	touch "$wt/go"
	wait "$(cat "$T/pid.h")" || fail "the run failed: $(cat "$T/err.h")"
	[ "$(stat -c %Y "$wt")" -gt "$(date -d '2001-01-01' +%s)" ] ||
		fail "the run did not mark the worktree's last use"
	sbx branches --json
	expect_out_contains '"in_use":false'
}

test_gc_removes_an_old_worktree_and_keeps_a_dirty_one_and_one_in_use()
{
	make_host_repo
	old=$(checkout_path old)
	dirty=$(checkout_path dirty)
	busy=$(checkout_path busy)
	recent=$(checkout_path recent)
	echo change >"$dirty/base.txt"
	start_waiting_sandbox busy true b
	wait_for "$busy/started"
	touch -d '10 days ago' "$old" "$dirty" "$busy"
	sbx gc --dry-run
	expect_status 0
	expect_out_contains "would remove	old	"
	[ -d "$old" ] || fail "gc --dry-run removed a worktree"
	sbx gc
	expect_status 0
	expect_out_contains "removed	old	$old"
	expect_out_contains "kept	dirty	$dirty (uncommitted changes"
	expect_out_contains "kept	busy	$busy (in use"
	[ ! -e "$old" ] || fail "gc kept the old worktree"
	[ -d "$dirty" ] && [ -d "$busy" ] && [ -d "$recent" ] || fail "gc removed too much"
	[ "$(cat "$dirty/base.txt")" = change ] || fail "gc touched the dirty worktree"
	grep -q '"event":"gc_remove".*"branch":"old"' "$HOME/.local/state/agent-sandbox/audit.jsonl" ||
		fail "no audit record of the removal"
	touch "$busy/go"
	wait "$(cat "$T/pid.b")" || fail "the held run failed: $(cat "$T/err.b")"
	# The branch stays in the shelf: checking it out again finds it.
	sbx checkout old
	expect_status 0
}

test_gc_force_removes_a_dirty_worktree_and_the_last_removal_the_shelf()
{
	make_host_repo
	wt=$(checkout_path only)
	echo untracked >"$wt/new.txt"
	touch -d '3 hours ago' "$wt"
	sbx gc --older-than 2h
	expect_out_contains "kept	only"
	sbx gc --older-than 2h --force
	expect_status 0
	expect_out_contains "removed	only	$wt (uncommitted changes, --force)"
	expect_out_contains "removed	the shelf"
	[ -z "$(ls "$(shelves)")" ] || fail "the empty shelf stayed: $(ls "$(shelves)")"
	[ "$(git status --porcelain)" = "" ] || fail "gc touched the host checkout"
}

test_gc_keeps_the_shelf_while_a_branch_has_unpushed_commits()
{
	make_host_repo
	sbx --branch unpushed sh -c 'echo new >new.txt && git add new.txt && git commit -qm new'
	expect_status 0
	wt=$(checkout_path unpushed)
	touch -d '10 days ago' "$wt"
	sbx gc
	expect_status 0
	expect_out_contains "removed	unpushed	$wt"
	expect_out_contains "kept	the shelf"
	sbx gc
	expect_out_contains "kept	the shelf"
	wt=$(checkout_path unpushed)
	[ "$(cat "$wt/new.txt")" = new ] || fail "the unpushed commit was lost"
	sbx --branch unpushed git push -q host unpushed
	expect_status 0
	touch -d '10 days ago' "$wt"
	sbx gc
	expect_out_contains "removed	the shelf"
	[ -z "$(ls "$(shelves)")" ] || fail "the shelf stayed after its branch was pushed"
}

test_gc_force_gives_up_a_shelf_kept_for_unpushed_commits()
{
	make_host_repo
	sbx --branch lost sh -c 'echo new >new.txt && git add new.txt && git commit -qm new'
	wt=$(checkout_path lost)
	touch -d '10 days ago' "$wt"
	sbx gc
	expect_out_contains "kept	the shelf"
	sbx gc --force
	expect_status 0
	expect_out_contains "removed	the shelf"
	[ -z "$(ls "$(shelves)")" ] || fail "gc --force kept the shelf"
}

test_gc_takes_its_default_from_the_global_retention()
{
	make_host_repo
	wt=$(checkout_path aging)
	touch -d '2 hours ago' "$wt"
	sbx gc
	expect_out_lacks "removed"
	mkdir -p "$HOME/.config/agent-sandbox"
	echo '{"retention": "1h"}' >"$HOME/.config/agent-sandbox/config.jsonc"
	sbx gc
	expect_status 0
	expect_out_contains "removed	aging"
	echo '{"retention": "soon"}' >"$HOME/.config/agent-sandbox/config.jsonc"
	sbx gc
	expect_status 2
	expect_err_contains '"retention": expected a duration'
}

test_a_branch_tracks_origin_when_the_host_has_it_and_from_overrides()
{
	make_host_repo
	git init -q --bare "$T/origin.git" && git remote add origin "$T/origin.git" &&
		git checkout -q -b shared && echo remote >remote.txt && git add remote.txt &&
		git commit -qm remote && git push -q origin shared && git checkout -q main ||
		fail "could not set up origin"
	git tag v1 main
	echo later >later.txt && git add later.txt && git commit -qm later
	wt=$(checkout_path shared)
	[ "$(git -C "$wt" rev-parse --abbrev-ref '@{upstream}')" = origin/shared ] ||
		fail "shared does not track origin/shared"
	[ -f "$wt/remote.txt" ] || fail "shared does not start at origin/shared"
	sbx checkout fresh --from v1
	expect_status 0
	[ -f "$(out)/base.txt" ] && [ ! -e "$(out)/later.txt" ] || fail "--from v1 was not used"
	sbx checkout other --from no-such-ref
	expect_status 2
	expect_err_contains "--from no-such-ref: no such commit"
}

test_bad_branch_names_exit_2_and_create_nothing()
{
	make_host_repo
	for name in 'a..b' '-x' 'a b' 'x.lock' 'a//b' '/a' 'a/' '.hidden' 'a@{1}' 'a~1' 'a:b' \
		'HEAD' "$(printf 'a\tb')" "$(printf 'a\033b')"; do
		sbx --branch "$name" true
		expect_status 2
		expect_err_contains "invalid branch name"
		sbx checkout "$name"
		expect_status 2
	done
	sbx gc --older-than 7x
	expect_status 2
	expect_err_contains 'invalid duration "7x"'
	[ ! -e "$HOME/.local/share/agent-sandbox" ] || fail "bad input created the shelf"
}

test_dry_run_and_policy_say_what_would_be_created()
{
	make_host_repo
	sbx --dry-run --branch later true
	expect_status 0
	expect_err_contains "a run would create the worktree"
	sbx policy --branch later
	expect_status 0
	[ ! -e "$HOME/.local/share/agent-sandbox" ] || fail "--dry-run or policy created the shelf"
}

run_tests
