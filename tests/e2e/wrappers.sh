#!/bin/sh
# Command wrappers: blocked commands, wrapper scripts, the @git guard in a
# real repository (with a local bare remote), the launcher's visibility in
# --dry-run, --debug and policy, and sandboxes inside sandboxes.
. "$(dirname "$0")/../lib.sh"

# HOME is a fresh directory, so git's identity comes from the environment.
export GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.com
export GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.com
export GIT_CONFIG_NOSYSTEM=1

# A repository in the working directory: main pushed to a bare remote, an
# unmerged branch "topic", a merged branch "merged", one stash entry, an
# uncommitted change to "tracked" and an untracked file.
make_repo()
{
	git init -q -b main . &&
		echo v1 >tracked && echo o1 >other && git add tracked other && git commit -qm c1 &&
		git init -q --bare "$T/remote.git" && git remote add origin "$T/remote.git" &&
		git push -q origin main &&
		git branch merged &&
		git switch -q -c topic && echo t >topic-file && git add topic-file &&
		git commit -qm topic && git switch -q main &&
		echo stashed >other && git stash -q &&
		echo v2 >tracked && echo u >untracked ||
		fail "could not make the test repository"
}

# Everything a refused form could have changed, read from outside.
repo_state()
{
	git status --porcelain=v1 --untracked-files=all
	git log --all --format='%H %s'
	git for-each-ref --format='%(refname) %(objectname)'
	git stash list
	git -C "$T/remote.git" for-each-ref --format='%(refname) %(objectname)'
	git config --get core.hooksPath
	cat tracked other untracked
}

test_git_guard_refuses_dangerous_forms_and_leaves_the_repository_unchanged()
{
	make_repo
	before=$(repo_state)
	while IFS='|' read -r args form; do
		# shellcheck disable=SC2086
		sbx git $args
		[ "$rc" -eq 126 ] || fail "git $args: expected status 126, got $rc"
		grep -qF "git $form is blocked by the sandbox policy" "$T/err" ||
			fail "git $args: stderr lacks 'git $form is blocked': $(err)"
		grep -qF "hint: " "$T/err" || fail "git $args: no hint naming the alternative"
		[ "$(repo_state)" = "$before" ] || fail "git $args changed the repository"
	done <<CASES
checkout -- tracked|checkout
checkout .|checkout
checkout -f topic|checkout
checkout HEAD tracked|checkout
restore tracked|restore
restore --worktree --staged tracked|restore
reset --hard|reset --hard
reset --hard HEAD~0|reset --hard
reset -q --har|reset --hard
clean -f|clean -f
clean -xdf|clean -f
clean --force -d|clean -f
commit -a --no-verify -m skipped|commit --no-verify
commit -a -n -m skipped|commit --no-verify
commit -anm skipped|commit --no-verify
-C $T/work -c x.y=z commit -a --no-verify -m skipped|commit --no-verify
--no-pager -C . commit -nam skipped|commit --no-verify
stash drop|stash drop
stash pop|stash pop
stash clear|stash clear
branch -D topic|branch -D
branch -d --force topic|branch -D
branch -df topic|branch -D
push --force origin main|push --force
push -f origin main|push --force
push origin +main|push --force
push origin +topic:main|push --force
push --mirror origin|push --mirror
push --no-verify origin main|push --no-verify
-c core.hooksPath=/dev/null commit -am skipped|-c core.hooksPath=...
-c core.fsmonitor=/bin/true status|-c core.fsmonitor=...
-c alias.co=checkout co -- tracked|-c alias.*=...
switch --discard-changes topic|switch --discard-changes
-c include.path=$T/evil.cfg commit -am skipped|-c include.path=...
-c includeIf.gitdir:/.path=$T/evil.cfg status|-c includeIf.*.path=...
-c core.hooksPath=/dev/null commit -am skipped|-c core.hooksPath=...
-c core.hooksPath=/dev/null -c core.fsmonitor= merge topic|-c core.hooksPath=...
-c clean.requireForce=false clean -d|-c clean.requireForce=false
-c clean.requireForce=0 clean|-c clean.requireForce=false
clean -d|clean
--git-dir=$T/remote.git --work-tree=. clean -d|clean
update-ref -d refs/heads/topic|update-ref -d
update-ref --delete refs/heads/merged|update-ref -d
update-ref refs/heads/topic 0000000000000000000000000000000000000000|update-ref -d
update-ref --stdin|update-ref --stdin
read-tree --reset -u HEAD|read-tree --reset
read-tree --reset HEAD|read-tree --reset
read-tree -m -u --exclude-per-directory=.gitignore HEAD|read-tree -u --exclude-per-directory
checkout-index -a -f|checkout-index -f
checkout-index -qfa|checkout-index -f
checkout-index --force -- tracked|checkout-index -f
reset --merge HEAD|reset --merge
branch -M topic merged|branch -M
branch -c -f topic merged|branch -M
CASES
}

# The command lines coding agents run for workspace metadata, verbatim:
# they switch hooks and fsmonitor off for read-only queries.
test_git_guard_allows_the_agents_hook_free_queries()
{
	make_repo
	before=$(repo_state)
	sbx git -c core.hooksPath=/dev/null -c core.fsmonitor= ls-files
	expect_status 0
	expect_out "other
tracked"
	sbx git -c core.hooksPath=/dev/null -c core.fsmonitor= --no-optional-locks ls-files \
		--others --exclude-standard
	expect_status 0
	expect_out "untracked"
	sbx git -c core.fsmonitor=false status --porcelain
	expect_status 0
	expect_out " M tracked
?? untracked"
	sbx git -c core.hooksPath=/dev/null rev-parse --abbrev-ref HEAD
	expect_status 0
	expect_out "main"
	sbx git -c core.hooksPath=/dev/null -c core.fsmonitor=false branch --show-current
	expect_status 0
	expect_out "main"
	sbx git -c core.hooksPath=/dev/null stash list
	expect_status 0
	expect_out_contains "stash@{0}"
	sbx git -c core.hooksPath=/dev/null branch created
	expect_status 126
	[ "$(repo_state)" = "$before" ] || fail "a query changed the repository"
	# fsmonitor off is fine for any command, one that runs hooks too.
	sbx git -c core.fsmonitor=false commit -qam c2
	expect_status 0
	[ "$(git log -1 --format=%s)" = c2 ] || fail "commit did not happen"
}

# HOME, XDG_CONFIG_HOME and GIT_CONFIG_* choose git's config files: set
# inside, they could point git at a config of the agent's making.
test_git_guard_refuses_hook_running_commands_when_config_files_change()
{
	make_repo
	before=$(repo_state)
	for var in HOME=/tmp XDG_CONFIG_HOME=/tmp GIT_CONFIG_GLOBAL=/tmp/g GIT_CONFIG_SYSTEM=/tmp/s \
		GIT_CONFIG=/tmp/c; do
		sbx env "$var" git commit -qam skipped
		expect_status 126
		expect_err_contains "git commit with ${var%%=*} changed is blocked by the sandbox policy"
	done
	sbx env -u GIT_CONFIG_NOSYSTEM git merge topic
	expect_status 126
	expect_err_contains "git merge with GIT_CONFIG_NOSYSTEM changed is blocked"
	[ "$(repo_state)" = "$before" ] || fail "the repository changed"
	sbx env HOME=/tmp git status --short
	expect_status 0
	expect_out_contains " M tracked"
}

# What the sandbox starts with is the baseline, not the host's usual
# values: a HOME or GIT_CONFIG_GLOBAL given to agent-sandbox stays usable.
test_git_guard_compares_with_the_values_the_sandbox_started_with()
{
	make_repo
	mkdir "$T/home2"
	printf '[user]\n\tname = other\n' >"$T/global.cfg"
	HOME=$T/home2 GIT_CONFIG_GLOBAL=$T/global.cfg sbx sh -c \
		'readlink /run/agent-sandbox/git-env/HOME /run/agent-sandbox/git-env/GIT_CONFIG_GLOBAL
		git commit -qam c2 && echo committed'
	expect_status 0
	expect_out "=$T/home2
=$T/global.cfg
committed"
	sbx sh -c 'readlink /run/agent-sandbox/git-env/GIT_CONFIG_GLOBAL || echo unset'
	expect_out "unset"
}

test_git_guard_catches_every_path_to_git()
{
	make_repo
	before=$(repo_state)
	for git in git /usr/bin/git /bin/git; do
		sbx sh -c "$git reset --hard"
		expect_status 126
		expect_err_contains "git reset --hard is blocked"
	done
	[ "$(repo_state)" = "$before" ] || fail "the repository changed"
}

test_git_guard_allows_safe_forms()
{
	make_repo
	sbx git status --short
	expect_status 0
	expect_out_contains " M tracked"

	sbx git commit -qam c2
	expect_status 0
	[ "$(git log -1 --format=%s)" = c2 ] || fail "commit did not happen"
	[ -z "$(git status --porcelain --untracked-files=no)" ] || fail "changes left after commit"

	git push -q origin main
	sbx git commit -q --amend -m c2-amended
	expect_status 0
	# The remote is outside the private /tmp only when made writable.
	sbx --rw "$T/remote.git" git push -q --force-with-lease origin main
	expect_status 0
	[ "$(git -C "$T/remote.git" rev-parse main)" = "$(git rev-parse main)" ] ||
		fail "push --force-with-lease did not update the remote"

	sbx git switch -q topic
	expect_status 0
	[ "$(git branch --show-current)" = topic ] || fail "switch did not happen"
	sbx git switch -q main
	expect_status 0

	sbx git checkout -q -b created
	expect_status 0
	git rev-parse -q --verify created >/dev/null || fail "checkout -b did not create a branch"
	git switch -q main

	sbx git branch -d merged
	expect_status 0
	! git rev-parse -q --verify merged >/dev/null || fail "branch -d did not delete"

	sbx git stash apply -q
	expect_status 0
	expect_content other stashed
	[ "$(git stash list | wc -l)" -eq 1 ] || fail "stash apply dropped the stash"

	head=$(git rev-parse HEAD~1)
	sbx git reset -q --soft HEAD~1
	expect_status 0
	[ "$(git rev-parse HEAD)" = "$head" ] || fail "reset --soft did not move HEAD"

	sbx git restore --staged tracked
	expect_status 0
}

test_git_guard_does_not_apply_in_the_private_tmp()
{
	sbx sh -c 'cd /tmp && git init -q scratch && cd scratch && echo a > f && git add f &&
		git commit -qm one && echo b > f && git reset -q --hard && cat f &&
		git -C /tmp/scratch clean -fq && git commit -q --allow-empty -nm two && echo done'
	expect_status 0
	expect_out "a
done"
}

test_git_guard_still_applies_to_a_project_under_tmp_from_the_private_tmp()
{
	make_repo
	before=$(repo_state)
	sbx sh -c "cd /tmp && git -C '$T/work' reset --hard"
	expect_status 126
	sbx sh -c "cd /tmp && git --git-dir='$T/work/.git' --work-tree='$T/work' reset --hard"
	expect_status 126
	[ "$(repo_state)" = "$before" ] || fail "the repository changed"
}

test_git_true_removes_the_default_wrapper()
{
	make_repo
	sbx --cmd git=true git reset -q --hard
	expect_status 0
	expect_content tracked v1
	sbx --dry-run --cmd git=true true
	expect_out_lacks "/run/agent-sandbox/presets/git"
}

test_false_blocks_every_path_of_a_command()
{
	before=$(snapshot "$T/work")
	sbx --cmd touch=false sh -c 'for t in touch /usr/bin/touch /bin/touch; do
		$t made-by-$(basename $t)-$$; echo $?; done'
	expect_status 0
	expect_out "126
126
126"
	expect_err_contains "touch is blocked by the sandbox policy"
	expect_err_contains "--cmd touch=true"
	[ "$(snapshot "$T/work")" = "$before" ] || fail "files appeared: $(ls "$T/work")"
}

test_blocked_command_run_directly_exits_126()
{
	sbx --cmd touch=false touch x
	expect_status 126
	expect_err_contains "touch is blocked"
	expect_no_file x
}

test_commands_from_config_layers_merge_by_key()
{
	echo '{"commands": {"touch": false, "mkdir": false}}' >.agent-sandbox.json
	sbx touch a
	expect_status 126
	sbx --cmd touch=true touch a
	expect_status 0
	expect_file a
	sbx --cmd touch=true mkdir d
	expect_status 126
	expect_no_file d
}

test_comma_separated_cmd_flags()
{
	sbx --cmd touch=false,mkdir=false sh -c 'touch a; mkdir d; echo $?'
	expect_out 126
	expect_no_file a
	expect_no_file d
}

test_wrapper_script_gets_the_arguments_and_environment()
{
	cat >"$T/wrap.sh" <<'SCRIPT'
#!/bin/sh
printf 'cmd=%s real=%s n=%s\n' "$AGENT_SANDBOX_CMD" "$AGENT_SANDBOX_REAL" "$#"
for a in "$@"; do printf '[%s]\n' "$a"; done
exec "$AGENT_SANDBOX_REAL" "$@"
SCRIPT
	chmod +x "$T/wrap.sh"
	sbx --cmd printf="$T/wrap.sh" printf '%s-%s\n' "a b" '$c'
	expect_status 0
	expect_out 'cmd=printf real=/run/agent-sandbox/bin/printf n=3
[%s-%s\n]
[a b]
[$c]
a b-$c'
}

test_wrapper_script_like_the_npm_example_refuses_one_subcommand()
{
	mkdir bin
	printf '#!/bin/sh\necho "fake-npm $*"\n' >bin/fake-npm
	chmod +x bin/fake-npm
	cat >"$T/npm-wrapper.sh" <<'SCRIPT'
#!/bin/sh
case "$1" in
publish | unpublish)
	echo "npm $1 is not allowed in the sandbox" >&2
	exit 1
	;;
esac
exec "$AGENT_SANDBOX_REAL" "$@"
SCRIPT
	chmod +x "$T/npm-wrapper.sh"
	echo '{"commands": {"fake-npm": "../npm-wrapper.sh"}}' >.agent-sandbox.json
	PATH="$T/work/bin:$PATH" sbx fake-npm publish
	expect_status 1
	expect_err_contains "npm publish is not allowed"
	PATH="$T/work/bin:$PATH" sbx fake-npm install left-pad
	expect_status 0
	expect_out "fake-npm install left-pad"
}

test_missing_or_non_executable_script_is_a_config_error()
{
	sbx --cmd npm="$T/nope.sh" true
	expect_status 2
	expect_err_contains "$T/nope.sh"
	echo 'exit 0' >"$T/plain.sh"
	echo '{"commands": {"npm": "../plain.sh"}}' >.agent-sandbox.json
	sbx true
	expect_status 2
	expect_err_contains "plain.sh is not executable"
	expect_err_contains ".agent-sandbox.json:1:22"
}

test_wrapper_directories_cannot_be_listed()
{
	for d in /run/agent-sandbox /run/agent-sandbox/bin /run/agent-sandbox/wrappers \
		/run/agent-sandbox/presets /run/agent-sandbox/blocked /run/agent-sandbox/git-env; do
		sbx ls "$d"
		[ "$rc" -ne 0 ] || fail "could list $d: $(out)"
	done
}

test_wrappers_leave_nothing_on_the_host_for_commands_not_on_path()
{
	mkdir bin
	before=$(snapshot "$T/work")
	PATH="$T/work/bin:$PATH" sbx --cmd no-such-command-xyz=false --dry-run true
	expect_status 0
	expect_out_lacks "no-such-command-xyz"
	PATH="$T/work/bin:$PATH" sbx --cmd no-such-command-xyz=false true
	expect_status 0
	[ "$(snapshot "$T/work")" = "$before" ] || fail "the run left files behind"
}

test_wrappers_show_in_dry_run_debug_and_policy()
{
	sbx --dry-run --cmd touch=false true
	expect_status 0
	expect_out_contains "/run/agent-sandbox/presets/git"
	expect_out_contains "/run/agent-sandbox/bin/git"
	expect_out_contains "/usr/bin/touch"
	sbx --debug --cmd touch=false true
	expect_status 0
	expect_err_contains "wrappers: git: @git (built-in default), covers /usr/bin/git"
	expect_err_contains "wrappers: touch: blocked (cli --cmd), covers /usr/bin/touch"
	sbx policy --cmd touch=false
	expect_status 0
	expect_out_contains "git: @git (built-in default)"
	expect_out_contains "touch: blocked (cli --cmd)"
}

# A sandbox inside a sandbox. The inner agent-sandbox creates no namespaces
# (the outer seccomp filter refuses them): it runs the command within the
# outer sandbox, so the outer wrappers stay, for root and other users alike.
test_nested_sandbox_cannot_unwrap_git()
{
	make_repo
	before=$(repo_state)
	sbx sh -c "'$AS' --cmd git=true -- git reset --hard"
	[ "$(repo_state)" = "$before" ] || fail "the repository changed"
	expect_status 126
	expect_err_contains "git reset --hard is blocked"
}

test_nested_sandbox_keeps_blocked_commands_blocked()
{
	sbx --cmd touch=false sh -c "'$AS' --cmd touch=true -- touch made-inside"
	[ "$rc" -ne 0 ] || fail "the inner sandbox ran a blocked command"
	expect_no_file made-inside
}

test_nested_sandbox_cannot_make_a_read_only_path_writable()
{
	mkdir sub
	echo original >sub/f
	sbx --ro sub sh -c "'$AS' --rw sub -- sh -c 'echo changed > sub/f'"
	expect_status 2
	expect_content sub/f original
	expect_err_contains "sub cannot be made writable (--rw): it is read-only in the outer sandbox"
}

test_nested_sandbox_cannot_reenable_the_network()
{
	sbx --network=false sh -c "'$AS' --network=true -- cat /proc/net/dev"
	expect_status 2
	expect_err_contains "the host network (--network=true) cannot be turned on"
	! grep -v -e '^ *lo:' -e '|' "$T/out" | grep -q ':' ||
		fail "the inner sandbox sees host interfaces: $(out)"
}

test_nested_sandbox_runs_and_reports_inherited_wrappers()
{
	sbx sh -c "'$AS' --debug --cmd touch=false --cmd ls=@git --cmd git=true -- echo inner"
	expect_status 0
	expect_out inner
	expect_err_contains "inherited from the outer sandbox"
	expect_err_contains "touch: blocked (cli --cmd), covers"
	expect_err_contains "ls: @git (cli --cmd), a launcher first on PATH"
	expect_err_contains "git: raw (--cmd) not applied: a nested run cannot unwrap a command"
}

run_tests
