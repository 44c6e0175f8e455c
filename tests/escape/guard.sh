#!/bin/sh
# Escape attempts against protected paths that do not exist when the
# sandbox starts. The mounts cannot hold them (bwrap would create the path
# on the host), so the guard moves whatever appears there into quarantine.
# Each attempt plays the agent inside and checks from outside that the
# host never keeps what it wrote:
#
#   creating the file, renaming it into place, moving a whole directory
#   holding it into place, a symlink in place of a directory on the way,
#   a new name matching a protected glob, a path re-created in a loop,
#   a repository without .git/hooks gaining a hook
#
# and that the guard leaves alone what the policy lets the sandbox write.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

quarantine_root()
{
	echo "$HOME/.local/state/agent-sandbox/quarantine"
}

# Fails unless exactly one file in the quarantine holds $1.
expect_quarantined_content()
{
	found=$(grep -rlx -- "$1" "$(quarantine_root)" 2>/dev/null | wc -l)
	[ "$found" -ge 1 ] || fail "nothing in the quarantine holds '$1'"
}

test_protected_file_created_inside_is_moved_to_quarantine()
{
	sbx --ro .vscode/tasks.json sh -c 'mkdir .vscode && echo planted-task >.vscode/tasks.json'
	expect_status 0
	expect_no_file "$T/work/.vscode/tasks.json"
	expect_quarantined_content planted-task
	expect_err_contains ".vscode/tasks.json (ro by --ro) -> $(quarantine_root)/"
}

test_protected_file_renamed_into_place_is_moved()
{
	mkdir .vscode
	sbx --ro .vscode/tasks.json sh -c 'echo renamed-task >staged && mv staged .vscode/tasks.json'
	expect_status 0
	expect_no_file "$T/work/.vscode/tasks.json"
	expect_quarantined_content renamed-task
}

test_directory_holding_a_protected_file_moved_into_place_is_caught()
{
	sbx --ro .vscode/tasks.json sh -c 'mkdir stage && echo staged-task >stage/tasks.json &&
		mv stage .vscode'
	expect_status 0
	expect_no_file "$T/work/.vscode/tasks.json"
	expect_quarantined_content staged-task
}

test_symlink_in_place_of_a_directory_on_the_way_is_moved()
{
	sbx --ro .vscode/tasks.json sh -c 'mkdir elsewhere && echo linked-task >elsewhere/tasks.json &&
		ln -s elsewhere .vscode'
	expect_status 0
	[ -L "$T/work/.vscode" ] && fail "the symlink .vscode is still there"
	expect_no_file "$T/work/.vscode/tasks.json"
	# @agent-configs protects other files in .vscode too: the report may
	# name any of them.
	expect_err_contains "a symlink on the way to $T/work/.vscode/"
}

test_new_name_matching_a_protected_glob_is_moved_and_old_ones_stay()
{
	echo original >hook-a.sh
	sbx --ro 'hook-*.sh' sh -c 'echo new-hook >hook-b.sh; echo changed >hook-a.sh 2>/dev/null; true'
	expect_status 0
	expect_content "$T/work/hook-a.sh" original
	expect_no_file "$T/work/hook-b.sh"
	expect_quarantined_content new-hook
}

test_the_summary_escapes_a_hostile_name()
{
	sbx --ro 'hook-*' sh -c 'echo x >"hook-$(printf "\033[2J\033[1A")forged"'
	expect_status 0
	grep -q "$(printf '\033')" "$T/err" && fail "a raw ESC reached stderr"
	expect_err_contains 'hook-\e[2J\e[1Aforged'
}

test_a_more_specific_rw_rule_keeps_what_it_allows()
{
	sbx --ro '.vscode/*.json' --rw .vscode/extensions.json sh -c 'mkdir .vscode &&
		echo allowed >.vscode/extensions.json && echo refused >.vscode/launch.json'
	expect_status 0
	expect_content "$T/work/.vscode/extensions.json" allowed
	expect_no_file "$T/work/.vscode/launch.json"
}

test_a_path_that_keeps_coming_back_stops_the_sandbox()
{
	sbx --ro .envrc sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		echo "export PWN=$i" >.envrc; sleep 0.05; done; echo survived'
	expect_status 1
	expect_err_contains "appeared again and again"
	expect_out_lacks survived
	expect_no_file "$T/work/.envrc"
}

test_what_appears_is_gone_within_moments_inside_too()
{
	sbx --ro .mcp.json sh -c 'echo "{}" >.mcp.json; i=0
		while [ -e .mcp.json ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
		[ -e .mcp.json ] && echo still-there; true'
	expect_status 0
	expect_out_lacks still-there
}

test_quarantine_reaches_the_audit_log()
{
	sbx --ro .envrc sh -c 'echo "export PWN=1" >.envrc'
	expect_status 0
	sbx log --blocked
	expect_status 0
	expect_out_contains "$T/work/.envrc moved to $(quarantine_root)/"
}

test_the_quarantine_is_hidden_inside()
{
	sbx --ro .envrc sh -c 'echo first >.envrc'
	expect_status 0
	sbx --ro .envrc sh -c "ls -A '$(quarantine_root)' 2>/dev/null; cat '$(quarantine_root)'/*/* 2>/dev/null; true"
	expect_status 0
	expect_out ""
}

test_nothing_is_left_on_the_host_when_nothing_appears()
{
	mkdir -p "$HOME/.local/state/agent-sandbox"
	chmod 700 "$HOME/.local/state/agent-sandbox"
	before=$(snapshot "$T/work"; snapshot "$HOME")
	sbx --ro .vscode/tasks.json --ro '.eslintrc.*' --ro .envrc true
	expect_status 0
	after=$(snapshot "$T/work"; snapshot "$HOME")
	# The audit log is the host's own record; everything else is as it was.
	[ "$(echo "$before" | grep -v agent-sandbox/audit.jsonl)" = \
		"$(echo "$after" | grep -v agent-sandbox/audit.jsonl)" ] ||
		fail "the run left something behind"
	[ -e "$(quarantine_root)" ] && fail "a quarantine directory was created for nothing"
	true
}

test_a_hook_created_where_the_repository_has_no_hooks_does_not_run_on_the_host()
{
	make_guarded_project
	rm -rf .git/hooks
	# Built outside the hooks directory and moved in whole, so that the
	# hook is complete the moment .git/hooks appears.
	sbx sh -c 'mkdir stage &&
		printf "#!/bin/sh\necho planted >%s/planted-hook-ran\n" "$HOME" >stage/pre-commit &&
		chmod +x stage/pre-commit && mv stage .git/hooks; true'
	expect_status 0
	expect_no_file "$T/work/.git/hooks/pre-commit"
	git commit -q --allow-empty -m outside || fail "the commit on the host failed"
	expect_no_file "$HOME/planted-hook-ran"
}

# A repository with fsmonitor set to leave a mark on the host, built in
# directory $1 by the real git (the agent would not use the guarded one).
plant_repository()
{
	printf 'cd %s && /run/agent-sandbox/bin/git init -q && /run/agent-sandbox/bin/git -c user.name=a -c user.email=a@b commit -q --allow-empty -m planted && /run/agent-sandbox/bin/git config core.fsmonitor "touch %s/fsmonitor-ran; false"' \
		"$1" "$HOME"
}

test_a_repository_planted_at_a_new_gitlink_does_not_run_on_the_host()
{
	make_guarded_project
	sbx sh -c "mkdir sub && ( $(plant_repository sub) ) && /run/agent-sandbox/bin/git add sub 2>/dev/null; true"
	expect_status 0
	git status >/dev/null 2>&1
	expect_no_file "$HOME/fsmonitor-ran"
	expect_no_file "$T/work/sub/.git"
	expect_err_contains "$T/work/sub/.git (ro by @git (a gitlink"
}

test_a_repository_planted_in_a_submodule_not_checked_out_does_not_run_on_the_host()
{
	make_guarded_project
	git update-index --add --cacheinfo "160000,$(git rev-parse HEAD),libs/sub" &&
		git -c core.hooksPath=/dev/null commit -qm "a submodule" || fail "setting up failed"
	mkdir -p libs/sub
	sbx sh -c "$(plant_repository libs/sub); true"
	expect_status 0
	git status >/dev/null 2>&1
	expect_no_file "$HOME/fsmonitor-ran"
	expect_no_file "$T/work/libs/sub/.git"
}

# A project with a checked-out submodule, its upstream outside the project.
make_submodule_project()
{
	make_guarded_project
	mkdir "$T/upstream" && git -C "$T/upstream" init -q -b main &&
		git -C "$T/upstream" commit -q --allow-empty -m up &&
		git -c protocol.file.allow=always submodule add -q "$T/upstream" sub >/dev/null 2>&1 &&
		git -c core.hooksPath=/dev/null commit -qm "add sub" || fail "could not add the submodule"
}

test_a_gitlink_hidden_in_a_split_index_is_still_found()
{
	make_guarded_project
	sbx sh -c "mkdir evil && ( $(plant_repository evil) ) && G=/run/agent-sandbox/bin/git &&
		cp .git/index .git/idx2 && GIT_INDEX_FILE=.git/idx2 \$G add evil 2>/dev/null &&
		GIT_INDEX_FILE=.git/idx2 \$G update-index --split-index && mv .git/idx2 .git/index; true"
	expect_status 0
	git status >/dev/null 2>&1
	expect_no_file "$HOME/fsmonitor-ran"
	expect_no_file "$T/work/evil/.git"
}

test_an_index_rewritten_with_its_old_times_is_read_again()
{
	make_guarded_project
	echo data >a && git add a && git -c core.hooksPath=/dev/null commit -qm a
	# Turn the entry for a into a gitlink in place, same size, and put
	# the index's old modification time back.
	sbx sh -c "rm a && mkdir a && ( $(plant_repository a) ) && $PY -c '
import os, sys
p = \".git/index\"
st = os.stat(p)
data = bytearray(open(p, \"rb\").read())
i = data.find(b\"a\\0\")
mode = i - 2 - 20 - 16
data[mode:mode + 4] = (0o160000).to_bytes(4, \"big\")
fd = os.open(p, os.O_WRONLY)
os.write(fd, bytes(data))
os.close(fd)
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
'; sleep 1; true"
	git status >/dev/null 2>&1
	expect_no_file "$HOME/fsmonitor-ran"
}

test_a_pinned_config_written_in_place_is_restored_while_the_writer_waits()
{
	make_submodule_project
	before=$(cat .git/modules/sub/config)
	sbx $PY -c '
import os, time
p = ".git/modules/sub/config"
fd = os.open(p, os.O_WRONLY | os.O_APPEND)
os.write(fd, b"[core]\n\tfsmonitor = touch planted\n")
time.sleep(1.5)
print("planted" if b"fsmonitor" in open(p, "rb").read() else "restored")
'
	expect_status 0
	expect_out restored
	[ "$(cat .git/modules/sub/config)" = "$before" ] || fail "the submodule's config changed"
}

test_a_pinned_config_with_a_second_name_is_restored()
{
	make_submodule_project
	before=$(cat .git/modules/sub/config)
	sbx sh -c 'ln .git/modules/sub/config .git/refs/linked && sleep 1 &&
		printf "[core]\n\tfsmonitor = touch planted\n" >>.git/refs/linked; sleep 1; true'
	expect_status 0
	[ "$(cat .git/modules/sub/config)" = "$before" ] || fail "the submodule's config changed"
	[ "$(stat -c %h .git/modules/sub/config)" = 1 ] || fail "the config still has a second name"
}

test_using_up_the_inotify_watches_does_not_blind_the_guard()
{
	limit=$(cat /proc/sys/fs/inotify/max_user_watches)
	# Each watch needs a file to watch: beyond this the test would take
	# minutes, so a machine with a larger limit does not run it.
	[ "$limit" -le 300000 ] || return 0
	sbx $PY -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
os.makedirs("/tmp/w", exist_ok=True)
for i in range(400000):
    p = "/tmp/w/%d" % i
    open(p, "w").close()
    if libc.inotify_add_watch(fd, p.encode(), 2) < 0:
        break
os.mkdir(".claude")
open(".claude/settings.json", "w").write("{\"hooks\": {}}")
import time; time.sleep(3)
print("survived")
'
	# The kernel frees the used-up watches some time after the sandbox is
	# gone: wait for that, so that the tests after this one have theirs.
	mkdir "$T/probe" && $PY -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
paths = []
for i in range(2000):
    p = os.path.join(sys.argv[1], str(i))
    open(p, "w").close()
    paths.append(p.encode())
for _ in range(600):
    fd = libc.inotify_init1(0)
    ok = all(libc.inotify_add_watch(fd, p, 2) >= 0 for p in paths)
    os.close(fd)
    if ok:
        break
    time.sleep(0.1)
' "$T/probe"
	# Stopped for want of a watch; or, when another process freed one
	# meanwhile, the file was moved aside as usual. It never stays.
	if [ "$rc" -eq 0 ]; then
		expect_err_contains ".claude/settings.json"
	else
		expect_status 1
		expect_err_contains "cannot watch"
		expect_out_lacks survived
	fi
	expect_no_file "$T/work/.claude/settings.json"
}

test_a_repository_planted_in_a_subdirectory_does_not_run_on_the_host()
{
	make_guarded_project
	mkdir src && echo x >src/f && git add src && git -c core.hooksPath=/dev/null commit -qm src
	# A bare repository hidden in the object store, and a gitfile in src/
	# pointing at it: git status at the top looks the same, but any git
	# started in src/ (a shell prompt) reads the planted config.
	sbx sh -c "G=/run/agent-sandbox/bin/git && \$G init -q --bare .git/objects/pack/.e &&
		printf '[core]\n\tfsmonitor = \"touch %s/fsmonitor-ran; false\"\n\trepositoryformatversion = 0\n' \"\$HOME\" >.git/objects/pack/.e/config &&
		echo 'gitdir: ../.git/objects/pack/.e' >src/.git && sleep 2.5; true"
	expect_status 0
	expect_no_file "$T/work/src/.git"
	(cd src && git status >/dev/null 2>&1)
	expect_no_file "$HOME/fsmonitor-ran"
	expect_err_contains "src/.git (ro by @git (a repository that appeared"
}

# A directory made during the run with a name the secret scan masks whole
# (.ssh, .aws, .gnupg) is still swept: a repository planted beneath it
# would run its fsmonitor at the user's next git status there.
test_a_repository_planted_under_a_secret_named_directory_is_moved()
{
	make_guarded_project
	sbx sh -c "mkdir -p lib/.aws && cd lib/.aws && /run/agent-sandbox/bin/git init -q . &&
		printf '[core]\n\tfsmonitor = \"touch %s/fsmonitor-ran; false\"\n\trepositoryformatversion = 0\n' \"\$HOME\" >.git/config; true"
	expect_status 0
	expect_no_file "$T/work/lib/.aws/.git"
	(cd lib/.aws && git status >/dev/null 2>&1)
	expect_no_file "$HOME/fsmonitor-ran"
}

test_a_plain_clone_and_a_new_worktree_inside_the_project_stay()
{
	make_guarded_project
	mkdir "$T/upstream" && git -C "$T/upstream" init -q && git -C "$T/upstream" commit -q --allow-empty -m up
	sbx --ro "$T/upstream" sh -c "git clone -q '$T/upstream' vendor/lib && git worktree add -q wt 2>&1 && sleep 1.5; ls -d vendor/lib/.git wt/.git"
	expect_status 0
	expect_file "$T/work/vendor/lib/.git"
	expect_file "$T/work/wt/.git"
	expect_err_lacks "moved aside"
}

test_a_repository_made_inside_that_later_gains_a_hook_is_moved()
{
	make_guarded_project
	sbx sh -c 'mkdir tool && cd tool && /run/agent-sandbox/bin/git init -q && sleep 1.5 &&
		printf "#!/bin/sh\ntouch planted\n" >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && sleep 2; true'
	expect_status 0
	expect_no_file "$T/work/tool/.git"
}

# An index entry written by hand: mode 160000 at the given path, with a
# name git itself would refuse to write.
add_raw_gitlink()
{
	printf 'G=/run/agent-sandbox/bin/git && $G update-index --add --cacheinfo "160000,$($G rev-parse HEAD),QQQQ" && %s -c "
import sys
p = \".git/index\"
d = open(p, \"rb\").read()
open(p, \"wb\").write(d.replace(b\"QQQQ\", sys.argv[1].encode()))
" %s' "$PY" "$1"
}

test_a_gitlink_named_through_dot_dot_cannot_move_the_repository_away()
{
	make_guarded_project
	mkdir d
	before=$(git rev-parse --absolute-git-dir)
	sbx sh -c "$(add_raw_gitlink 'd/..'); sleep 1.5; true"
	expect_status 0
	[ -d "$T/work/.git/objects" ] || fail "the repository's .git was moved"
	expect_err_lacks "d/../.git"
	git -C "$T/work" checkout -q -- . 2>/dev/null
}

test_a_gitlink_out_of_the_project_cannot_move_another_repository()
{
	make_guarded_project
	mkdir "$T/victim" && git -C "$T/victim" init -q
	sbx sh -c "$(add_raw_gitlink '../victim'); sleep 1.5; true"
	expect_status 0
	[ -d "$T/victim/.git" ] || fail "the repository beside the project was moved"
}

test_a_gitlink_added_for_an_existing_nested_repository_leaves_it_alone()
{
	make_guarded_project
	mkdir -p tools/x && git -C tools/x init -q && git -C tools/x commit -q --allow-empty -m mine
	sbx sh -c "G=/run/agent-sandbox/bin/git && \$G update-index --add --cacheinfo \"160000,\$(\$G rev-parse HEAD),tools/x\" && sleep 1.5 && \$G update-index --force-remove tools/x; true"
	expect_status 0
	[ -d "$T/work/tools/x/.git" ] || fail "the nested repository's .git was moved"
	[ "$(git -C tools/x log --format=%s -1)" = mine ] || fail "the nested repository lost its commit"
}

test_a_gitfile_with_a_line_break_in_its_target_is_moved()
{
	make_guarded_project
	mkdir src
	sbx sh -c 'D="$(printf "src/nope\nr")"; G=/run/agent-sandbox/bin/git && $G init -q --bare "$D" &&
		$G --git-dir="$D" config core.bare false &&
		$G --git-dir="$D" config core.fsmonitor "touch $HOME/fsmonitor-ran; false" &&
		printf "gitdir: nope\nr\n" >src/.git && sleep 2.5; true'
	expect_status 0
	expect_no_file "$T/work/src/.git"
	(cd src && git status >/dev/null 2>&1)
	expect_no_file "$HOME/fsmonitor-ran"
}

test_a_clone_pushing_to_a_repository_inside_the_project_is_moved()
{
	make_guarded_project
	sbx sh -c 'G=/run/agent-sandbox/bin/git && $G init -q --bare assets/cache.bin &&
		$G clone -q .git sub 2>/dev/null && $G -C sub config remote.origin.pushurl "$PWD/assets/cache.bin" &&
		sleep 2.5; true'
	expect_status 0
	expect_no_file "$T/work/sub/.git"
}

test_a_gitlink_in_a_submodules_index_is_guarded_too()
{
	make_submodule_project
	sbx sh -c "mkdir -p sub/node_modules/evil && ( $(plant_repository sub/node_modules/evil) ) &&
		cd sub && /run/agent-sandbox/bin/git update-index --add --cacheinfo \"160000,\$(/run/agent-sandbox/bin/git rev-parse HEAD),node_modules/evil\"; sleep 1; true"
	expect_status 0
	git status >/dev/null 2>&1
	expect_no_file "$HOME/fsmonitor-ran"
	expect_no_file "$T/work/sub/node_modules/evil/.git"
}

test_a_new_worktree_whose_commondir_git_reads_differently_is_moved()
{
	make_guarded_project
	# git reads commondir whole: "../..\nevil" names a directory planted
	# in .git, with a config of the agent's; cut at the line end it would
	# name the repository itself.
	sbx sh -c 'G=/run/agent-sandbox/bin/git && $G worktree add -q wt2 2>/dev/null &&
		D="$(printf ".git/..\nevil")" && mkdir -p "$D" && cp -r .git/objects .git/refs .git/HEAD "$D"/ &&
		printf "[core]\n\tfsmonitor = \"touch $HOME/fsmonitor-ran; false\"\n" >"$D/config" &&
		printf "../..\nevil\n" >.git/worktrees/wt2/commondir && sleep 2.5; true'
	expect_status 0
	expect_no_file "$T/work/wt2/.git"
	(cd wt2 2>/dev/null && git status >/dev/null 2>&1)
	expect_no_file "$HOME/fsmonitor-ran"
}

run_tests
