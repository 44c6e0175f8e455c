#!/bin/sh
# Escape attempts from inside a branch sandbox (--branch NAME): the agent
# writes the host checkout, plants hooks, config, commondir and gitdir
# files in the shelf's repository and in the host's .git, moves a branch
# ref the host has checked out, and plays symlink and rename games on the
# shelf. Afterwards, from outside, the host's own git and agent-sandbox's
# host-side git (checkout, branches, gc) run, and nothing planted may run
# ($T/PWN stays absent) or be written outside the shelf.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

make_host()
{
	unset XDG_DATA_HOME XDG_STATE_HOME
	make_guarded_project
	rm -f .env
	hook_text="#!/bin/sh\\ntouch $T/PWN\\n"
	wt=$("$AS" checkout agent 2>"$T/err") || fail "checkout failed: $(cat "$T/err")"
	shelf=${wt%/worktrees/agent}
}

# The guarded files of the host, without the shelf (which runs write).
host_view() { host_state | grep -v '/.local/share/agent-sandbox/'; }

# The host-side git of agent-sandbox, then the host's own, must run
# nothing planted.
expect_nothing_ran()
{
	"$AS" checkout second >/dev/null 2>&1 || fail "a later checkout failed"
	"$AS" branches >/dev/null 2>&1
	touch -d '10 days ago' "$wt"
	"$AS" gc --dry-run >/dev/null 2>&1
	git status >/dev/null 2>&1
	git -c core.hooksPath=/dev/null commit -q --allow-empty -m host >/dev/null 2>&1
	[ ! -e "$T/PWN" ] || fail "a planted command ran on the host"
}

test_the_host_checkout_is_read_only_inside()
{
	make_host
	before=$(host_view)
	sbx --branch agent sh -c "
		echo evil 2>/dev/null >$T/work/tracked && echo wrote tracked
		touch $T/work/new 2>/dev/null && echo created
		rm -f $T/work/tracked 2>/dev/null; [ -e $T/work/tracked ] || echo removed
		mv $T/work/ruff.toml $T/work/r 2>/dev/null && echo moved
		git -C $T/work checkout -q -b hijack 2>/dev/null && echo switched
		git -C $T/work commit -q --allow-empty -m x 2>/dev/null && echo committed
		echo ref: refs/heads/agent 2>/dev/null >$T/work/.git/HEAD && echo head; true"
	expect_status 0
	expect_out ""
	after=$(host_view)
	[ "$after" = "$before" ] || fail "the host changed: $(printf '%s\n' "$before" >"$T/b"
		printf '%s\n' "$after" >"$T/a"; diff "$T/b" "$T/a" | head -20)"
}

test_secrets_of_the_host_checkout_stay_hidden()
{
	make_host
	echo 'API_KEY=host-secret-value' >.env
	sbx --branch agent sh -c "cat $T/work/.env 2>/dev/null;
		cat $T/work/tracked"
	expect_out_lacks host-secret-value
	expect_out_contains tracked
}

test_control_files_of_the_shelf_repository_cannot_be_planted()
{
	make_host
	sbx --branch agent sh -c "
		common=\$(git rev-parse --path-format=absolute --git-common-dir)
		admin=\$(git rev-parse --path-format=absolute --git-dir)
		printf '$hook_text' 2>/dev/null >\$common/hooks/post-checkout && echo hook
		git config core.fsmonitor 'touch $T/PWN' 2>/dev/null && echo config
		git config --worktree core.fsmonitor 'touch $T/PWN' 2>/dev/null && echo worktree config
		echo '* filter=x' 2>/dev/null >\$common/info/attributes && echo attributes
		mkdir -p evil && echo \"\$PWD/evil\" 2>/dev/null >\$admin/commondir && echo commondir
		echo /tmp/x 2>/dev/null >\$admin/gitdir && echo gitdir
		echo 'gitdir: /tmp/evil' 2>/dev/null >.git && echo gitfile
		echo /tmp 2>/dev/null >\$common/objects/info/alternates && echo alternates
		mv \$admin \$common/worktrees/moved 2>/dev/null && echo moved admin
		mv \$common/hooks \$common/h 2>/dev/null && echo moved hooks
		ln -sf $T/PWN \$common/hooks/pre-commit 2>/dev/null && echo linked hook; true"
	expect_status 0
	expect_out ""
	[ "$(git -C "$shelf/repo" config core.fsmonitor)" = "" ] || fail "the shelf config changed"
	expect_nothing_ran
}

test_host_side_git_obeys_no_hook_or_command_planted_in_the_shelf()
{
	make_host
	# As if a protection had failed: hooks in the shelf's repository,
	# then config naming commands; checkout, branches and gc run git
	# there on the host.
	mkdir -p "$shelf/repo/.git/hooks"
	for hook in post-checkout reference-transaction pre-auto-gc; do
		printf "$hook_text" >"$shelf/repo/.git/hooks/$hook"
	done
	chmod +x "$shelf/repo/.git/hooks/"*
	sbx checkout third
	expect_status 0
	[ ! -e "$T/PWN" ] || fail "a hook in the shelf ran on checkout"
	cp "$shelf/repo/.git/config" "$T/config.good"
	for planted in "core.fsmonitor=touch $T/PWN" "remote.host.uploadpack=touch $T/PWN" \
		"core.hooksPath=$shelf/repo/.git/hooks" "diff.external=touch $T/PWN" \
		"include.path=$T/evil.config" "filter.x.smudge=touch $T/PWN"; do
		cp "$T/config.good" "$shelf/repo/.git/config"
		git -C "$shelf/repo" config "${planted%%=*}" "${planted#*=}"
		sbx checkout "fourth"
		[ "$rc" -ne 0 ] || fail "checkout ran git on a shelf whose config sets ${planted%%=*}"
		expect_err_contains "which agent-sandbox never writes there"
		touch -d '10 days ago' "$wt"
		sbx gc --force
		expect_out_contains "kept	agent"
		[ -d "$wt" ] || fail "gc ran git on a shelf whose config sets ${planted%%=*}"
		[ ! -e "$T/PWN" ] || fail "a command planted in the shelf's config ran: $planted"
	done
}

test_control_files_and_checked_out_branch_of_the_host_git_are_protected()
{
	make_host
	before=$(host_view)
	main_before=$(git rev-parse main)
	sbx --branch agent sh -c "
		echo x >x && git add x && git commit -qm x
		printf '$hook_text' 2>/dev/null >$T/work/.git/hooks/post-commit && echo hook
		printf '[core]\\n\\tfsmonitor = touch $T/PWN\\n' 2>/dev/null >>$T/work/.git/config && echo config
		echo '* filter=x' 2>/dev/null >$T/work/.git/info/attributes && echo attributes
		echo /tmp 2>/dev/null >$T/work/.git/objects/info/alternates && echo alternates
		git rev-parse HEAD 2>/dev/null >$T/work/.git/refs/heads/main && echo ref
		mv $T/work/.git/refs/heads $T/work/.git/refs/h 2>/dev/null && echo moved heads
		mv $T/work/.git/objects/info $T/work/.git/objects/i 2>/dev/null && echo moved info
		git push -q host HEAD:agent 2>/dev/null || echo push failed
		git push -q host HEAD:refs/replace/$main_before 2>/dev/null; true"
	expect_status 0
	expect_out ""
	[ -z "$(git for-each-ref refs/replace)" ] || fail "a replace ref reached the host"
	[ "$(git log -1 --format=%s main)" = initial ] || fail "the host's main shows other content"
	[ "$(git rev-parse main)" = "$main_before" ] || fail "the host's main moved"
	git rev-parse -q --verify agent >/dev/null || fail "the legitimate push did not arrive"
	# The push added a branch and objects; the guarded files are as before.
	git branch -q -D agent
	after=$(host_view)
	[ "$after" = "$before" ] || fail "the host changed: $(printf '%s\n' "$before" >"$T/b"
		printf '%s\n' "$after" >"$T/a"; diff "$T/b" "$T/a" | head -20)"
	expect_nothing_ran
}

test_symlinks_in_a_worktree_do_not_make_gc_remove_outside_it()
{
	make_host
	world_dir victim
	echo keep >"$victim/file"
	sbx --branch agent sh -c "ln -s $victim victim-link && ln -s $T/work host-link &&
		mkdir -p deep && ln -s / deep/root"
	expect_status 0
	touch -d '10 days ago' "$wt" "$shelf/worktrees/second" 2>/dev/null
	sbx gc --force
	expect_status 0
	expect_out_contains "removed	agent"
	[ "$(cat "$victim/file")" = keep ] || fail "gc followed a symlink out of the worktree"
	[ -f "$T/work/tracked" ] || fail "gc removed the host checkout"
}

test_a_shelf_path_replaced_by_a_symlink_is_refused()
{
	make_host
	mkdir "$T/elsewhere"
	rm -rf "$shelf/worktrees"
	ln -s "$T/elsewhere" "$shelf/worktrees"
	sbx checkout other
	expect_status 1
	expect_err_contains "symlink is refused"
	[ -z "$(ls -A "$T/elsewhere")" ] || fail "provisioning wrote through the symlink"
	rm -rf "$shelf"
	ln -s "$T/elsewhere" "$shelf"
	sbx --branch other true
	expect_status 1
	[ -z "$(ls -A "$T/elsewhere")" ] || fail "provisioning wrote through the symlinked shelf"
}

run_tests
