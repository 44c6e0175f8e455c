#!/bin/sh
# Escape attempts against workspaces from a hostile agent in a branch
# sandbox: the host repository's object store, which `git push host`
# writes, poisoned so that the user's own later git (checkout, reset,
# status) writes the agent's content into the host checkout. Git trusts
# an object's file to hold what its name says and reads a pack before a
# loose object: a replaced object file, or a new pack that holds other
# content under an existing object's name, changes what the host's
# commits contain. Each outcome is checked from outside.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

make_host()
{
	unset XDG_DATA_HOME XDG_STATE_HOME
	make_guarded_project
	rm -f .env
	blob=$(git rev-parse HEAD:tracked)
	objects=$T/work/.git/objects
}

# Zlib-deflated loose object text of a blob with content $2 into file $1.
FORGE='
import sys, zlib
c = sys.argv[2].encode() + b"\n"
open(sys.argv[1], "wb").write(zlib.compress(b"blob %d\0" % len(c) + c))
'

expect_host_content_unchanged()
{
	[ "$(git cat-file -p "$blob")" = tracked ] ||
		fail "the host's object $blob now holds: $(git cat-file -p "$blob" | head -3)"
	rm -f tracked
	git checkout -q -- tracked 2>/dev/null
	[ "$(cat tracked)" = tracked ] || fail "the host's git checked out: $(head -3 tracked)"
}

test_a_branch_sandbox_cannot_replace_an_object_of_the_host()
{
	make_host
	printf '%s' "$FORGE" >"$T/forge.py"
	cp "$T/forge.py" forge.py
	sbx --branch agent sh -c "
		f=$objects/\$(echo $blob | cut -c1-2)/\$(echo $blob | cut -c3-)
		$PY forge.py \$f.new pwned 2>/dev/null && mv -f \$f.new \$f 2>/dev/null && echo replaced
		chmod u+w \$f 2>/dev/null && $PY forge.py \$f pwned 2>/dev/null && echo rewrote
		rm -f \$f 2>/dev/null && $PY forge.py \$f pwned 2>/dev/null && echo recreated; true"
	expect_status 0
	expect_out ""
	expect_host_content_unchanged
}

test_a_branch_sandbox_cannot_add_a_pack_to_the_host()
{
	make_host
	git repack -q -a -d
	[ -n "$(ls "$objects/pack/"*.pack 2>/dev/null)" ] || fail "no pack to start from"
	sbx --branch agent sh -c "
		for p in $objects/pack/*.pack; do
			cp \$p $objects/pack/pack-0000000000000000000000000000000000000000.pack 2>/dev/null &&
				echo added pack
			mv -f \$p \$p.x 2>/dev/null && echo moved pack
			chmod u+w \$p 2>/dev/null && echo x >>\$p 2>/dev/null && echo appended
		done
		mkdir -p $objects/pack/sub 2>/dev/null && echo made dir; true"
	expect_status 0
	expect_out ""
	expect_host_content_unchanged
}

test_a_branch_sandbox_still_pushes_a_new_branch_to_the_host()
{
	make_host
	# Loose objects in (nearly) every fan-out directory: git moves a
	# pushed object into one with link(2) from its quarantine, which a
	# mount on that directory would refuse.
	mkdir "$T/blobs"
	(cd "$T/blobs" && seq 1500 | xargs touch && for f in *; do echo "$f" >"$f"; done &&
		ls | sed "s|^|$T/blobs/|" | git -C "$T/work" hash-object -w --stdin-paths >/dev/null) ||
		fail "could not fill the host's objects"
	# More objects than git keeps loose by default (receive.unpackLimit).
	sbx --branch agent sh -c 'echo new >new.txt && seq 120 | xargs -n1 sh -c "echo \$0 >f\$0" &&
		git add . && git commit -qm new && git push -q host HEAD'
	expect_status 0
	[ "$(git show agent:new.txt)" = new ] || fail "the push did not arrive: $(err)"
	expect_host_content_unchanged
}

test_a_branch_sandbox_cannot_rewrite_the_hosts_objects_through_the_shelf()
{
	make_host
	printf '%s' "$FORGE" >forge.py
	# The shelf's copy of the host's object, made writable (the sandbox
	# owns it) and rewritten in place: with a hardlink, the host's too.
	sbx --branch agent sh -c "
		f=\$(git rev-parse --git-common-dir)/objects/\$(echo $blob | cut -c1-2)/\$(echo $blob | cut -c3-)
		[ -f \$f ] || echo no shelf copy
		chmod u+w \$f && $PY -c '
import sys, zlib
c = b\"pwned\\n\"
open(sys.argv[1], \"r+b\").write(zlib.compress(b\"blob %d\\0\" % len(c) + c))
' \$f"
	expect_status 0
	expect_out ""
	[ "$(stat -c %h "$objects/$(echo "$blob" | cut -c1-2)/$(echo "$blob" | cut -c3-)")" = 1 ] ||
		fail "the host's object file has another link"
	expect_host_content_unchanged
}

test_a_branch_sandbox_cannot_move_another_sandboxs_branch_in_the_shelf()
{
	make_host
	wt=$("$AS" checkout other 2>"$T/err") || fail "checkout failed: $(cat "$T/err")"
	other_before=$(git -C "$wt" rev-parse HEAD)
	sbx --branch agent sh -c '
		echo planted >tracked && git commit -qam planted
		common=$(git rev-parse --git-common-dir)
		git rev-parse HEAD 2>/dev/null >"$common/refs/heads/other" && echo wrote ref
		git branch -f other HEAD 2>/dev/null && echo forced
		git update-ref refs/heads/other HEAD 2>/dev/null && echo updated; true'
	expect_status 0
	expect_out ""
	[ "$(git -C "$wt" rev-parse HEAD)" = "$other_before" ] ||
		fail "the other sandbox's branch moved to $(git -C "$wt" log --oneline -1)"
}

test_a_branch_checked_out_in_a_host_linked_worktree_cannot_be_moved()
{
	make_host
	git worktree add -q "$T/linked" -b feat || fail "could not add a linked worktree"
	feat_before=$(git rev-parse feat)
	sbx --branch agent sh -c "
		echo x >x && git add x && git commit -qm x
		git push -q host HEAD:feat 2>/dev/null && echo pushed
		git rev-parse HEAD 2>/dev/null >$T/work/.git/refs/heads/feat && echo wrote ref
		echo 'ref: refs/heads/agent' 2>/dev/null >$T/work/.git/worktrees/linked/HEAD && echo head; true"
	expect_status 0
	expect_out ""
	[ "$(git rev-parse feat)" = "$feat_before" ] || fail "the linked worktree's branch moved"
	[ "$(git -C "$T/linked" rev-parse HEAD)" = "$feat_before" ] ||
		fail "the linked worktree's HEAD moved"
}

test_a_branch_sandbox_cannot_replace_the_hosts_stash_tags_or_remote_branches()
{
	make_host
	git tag v1
	git update-ref refs/remotes/origin/main HEAD
	echo "the user's work" >>tracked
	git stash -q || fail "could not stash"
	before=$(git for-each-ref --format='%(refname) %(objectname)' | grep -v refs/heads/)
	stash_log=$(cat .git/logs/refs/stash)
	# A stash of the agent's, pushed for its objects, then made the
	# user's newest stash; tags and origin/main moved to it.
	sbx --branch agent sh -c "
		echo agent-content >tracked && git stash -q && s=\$(git rev-parse refs/stash)
		git push -q host \$s:refs/heads/carrier 2>/dev/null
		g=$T/work/.git; old=\$(cat \$g/refs/stash)
		echo \$s 2>/dev/null >\$g/refs/stash && echo stash
		printf '%s %s u <u@e> 1 +0000\tWIP on main: x\n' \$old \$s 2>/dev/null >>\$g/logs/refs/stash &&
			echo stash log
		echo \$s 2>/dev/null >\$g/refs/tags/v1 && echo tag
		echo \$s 2>/dev/null >\$g/refs/remotes/origin/main && echo remote
		echo \$s 2>/dev/null >\$g/refs/notes/commits && echo notes; true"
	expect_status 0
	expect_out ""
	after=$(git for-each-ref --format='%(refname) %(objectname)' | grep -v refs/heads/)
	[ "$after" = "$before" ] || fail "the host's refs changed: $after"
	[ "$(cat .git/logs/refs/stash)" = "$stash_log" ] || fail "the host's stash log changed"
	git stash pop -q 2>/dev/null
	grep -q agent-content tracked && fail "git stash pop wrote the agent's content"
	grep -q "the user's work" tracked || fail "the user's stash was lost"
}

test_exec_into_past_the_limit_is_refused_with_the_reason()
{
	use_private_rundir
	bg_sbx full --name full sh -c 'touch ready; exec sleep 3301'
	wait_file ready
	# A duration of its own, to count this test's commands only.
	dur=4.$$
	for _ in $(seq 64); do
		"$AS" exec-into full sleep "$dur" </dev/null >/dev/null 2>&1 &
	done
	for _ in $(seq 100); do
		[ "$(pgrep -xc -f "sleep $dur" 2>/dev/null)" -ge 64 ] && break
		sleep 0.05
	done
	sbx exec-into full echo one-more
	expect_status 1
	expect_err_contains "already runs 64 commands started from outside"
	expect_err_lacks "sandbox ended"
	sbx list
	expect_out_contains full
}

# Outside /tmp: the sandbox's own /tmp is writable beneath it, which would
# hide what the host's objects directory itself allows.
test_a_branch_sandbox_cannot_rename_a_fan_out_directory_of_the_host()
{
	repo=$(mktemp -d /var/tmp/as-branch.XXXXXX) || fail "mktemp"
	trap 'rm -rf "$repo"' EXIT
	cd "$repo" && make_host
	objects=$repo/.git/objects
	fan=$(echo "$blob" | cut -c1-2)
	printf '%s' "$FORGE" >forge.py
	sbx --branch agent sh -c "
		wt=\$PWD
		cd $objects || exit 9
		mv $fan $fan.away 2>/dev/null && echo renamed
		mkdir -p $fan.new && $PY $repo/forge.py $fan.new/\$(echo $blob | cut -c3-) pwned &&
			mv -T $fan.new $fan 2>/dev/null && echo swapped
		rmdir $fan.new 2>/dev/null && echo removed
		cd \$wt && echo new >new-file && git add new-file &&
			git -c user.email=a@b -c user.name=a commit -qm c &&
			git push -q host agent 2>&1 && echo pushed"
	expect_status 0
	expect_out pushed
	[ -d "$objects/$fan" ] || fail "the fan-out directory $fan is gone"
	expect_host_content_unchanged
	git rev-parse -q --verify refs/heads/agent >/dev/null || fail "the push did not arrive"
	ls -d "$objects"/tmp_objdir-incoming-* 2>/dev/null && fail "the push's quarantine was left behind"
	return 0
}

run_tests
