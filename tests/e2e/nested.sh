#!/bin/sh
# Sandboxes inside sandboxes may only tighten, and what tightens applies:
# an inner --cmd NAME=false, --ro and --exclude hold for the inner command
# and everything it starts (a second Landlock ruleset, sandbox/nested.c),
# an inner rule cannot loosen the outer sandbox, and nothing of the inner
# run outlives it. Every outcome is checked from outside.
. "$(dirname "$0")/../lib.sh"

# The dynamic loader, which runs a program it can read without executing
# it: the way around an execute denial that a read denial closes.
loader()
{
	for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 /lib/ld-linux.so.2; do
		[ -x "$l" ] && echo "$l" && return
	done
}

test_nested_cmd_false_blocks_command()
{
	echo inner-data >f
	sbx sh -c "'$AS' --cmd cat=false cat f"
	expect_status 126
	expect_out ""
	expect_err_contains "cat is blocked by the sandbox policy"
}

test_nested_cmd_false_blocks_absolute_path_of_real_binary()
{
	echo inner-data >f
	real=$(realpath "$(command -v cat)")
	ld=$(loader)
	# Each line is another way to the same program: its resolved path, a
	# name through a symlinked directory, a copy, the loader, a hard link
	# beside it is the host's (not made here), execveat through /proc.
	sbx sh -c "'$AS' --cmd cat=false sh -c '
		$real f
		/bin/cat f
		/usr/bin/cat f
		cp $real ./copy && ./copy f
		[ -z \"$ld\" ] || $ld $real f
		env cat f
		exec 3<f; python3 -c \"import os; os.execv(\\\"$real\\\", [\\\"cat\\\", \\\"f\\\"])\"
		true'"
	expect_status 0
	expect_out ""
	expect_no_file copy
	expect_err_contains "Permission denied"
}

test_nested_cmd_false_holds_for_grandchildren()
{
	echo inner-data >f
	sbx sh -c "'$AS' --cmd cat=false sh -c 'sh -c \"cat f\"; env -i PATH=/usr/bin:/bin sh -c \"cat f\"; (cd / && cat $T/work/f)'"
	expect_out ""
	# An agent-sandbox started beneath it cannot lift it either.
	sbx sh -c "'$AS' --cmd cat=false '$AS' --cmd cat=true cat f"
	[ "$rc" -ne 0 ] || fail "a run inside the inner one lifted the block"
	expect_out ""
}

test_nested_ro_makes_path_read_only()
{
	mkdir -p sub/deep other
	echo original >sub/f
	echo original >sub/deep/g
	echo original >top
	sbx sh -c "'$AS' --ro sub sh -c '
		echo changed >sub/f
		echo changed >sub/deep/g
		touch sub/f.new
		rm -f sub/f
		mv sub/deep other/
		mv sub gone
		ln sub/f hard
		truncate -s 0 sub/deep/g
		python3 -c \"import os; os.truncate(\\\"sub/f\\\", 0)\"
		echo outside-sub >top
		echo in-other >other/x
		mktemp >/dev/null && echo tmp-ok'"
	expect_content sub/f original
	expect_content sub/deep/g original
	expect_no_file sub/f.new
	expect_no_file other/deep
	expect_no_file gone
	expect_no_file hard
	# Beside it the project stays writable, and so does a temporary file.
	expect_content top outside-sub
	expect_content other/x in-other
	expect_out tmp-ok
}

test_nested_exclude_hides_path()
{
	mkdir -p secret/sub
	echo hidden-content >secret/key
	echo hidden-content >secret/sub/more
	echo visible >open
	sbx sh -c "'$AS' --exclude secret sh -c '
		cat secret/key
		cat secret/sub/more
		cp secret/key copy
		echo planted >secret/new
		echo changed >secret/key
		grep -r hidden secret
		cat open'"
	expect_out visible
	expect_no_file copy
	expect_no_file secret/new
	expect_content secret/key hidden-content
	# A file alone, too.
	sbx sh -c "'$AS' --exclude open cat open"
	[ "$rc" -ne 0 ] || fail "the inner run read an excluded file"
	expect_out ""
}

test_nested_cannot_loosen_outer_ro()
{
	mkdir sub
	echo original >sub/f
	sbx --ro sub sh -c "'$AS' --rw sub sh -c 'echo changed >sub/f'; echo changed >sub/f"
	expect_content sub/f original
	expect_err_contains "cannot be made writable (--rw): it is read-only in the outer sandbox"
	# Nor can a run inside the inner one undo the inner --ro: a Landlock
	# domain only ever adds restrictions.
	sbx sh -c "'$AS' --ro sub '$AS' --rw sub sh -c 'echo changed >sub/f'"
	expect_content sub/f original
}

test_nested_tightening_does_not_outlive_inner_run()
{
	mkdir sub
	echo original >sub/f
	echo data >g
	sbx sh -c "'$AS' --ro sub --exclude g --cmd cat=false true && echo changed >sub/f && cat g"
	expect_status 0
	expect_content sub/f changed
	expect_out data
}

# An inner script or @git: a launcher first on PATH, for the inner command
# and what it starts (a deterrent like the outer wrappers: the real
# program stays reachable by its path).
test_nested_cmd_script_wraps_the_command_for_the_inner_run()
{
	echo data >f
	printf '#!/bin/sh\necho "wrapped $AGENT_SANDBOX_CMD $*" >>%s/log\nexec "$AGENT_SANDBOX_REAL" "$@"\n' \
		"$T/work" >wrap.sh
	chmod 755 wrap.sh
	sbx sh -c "'$AS' --cmd cat=./wrap.sh sh -c 'cat f; sh -c \"cat f\"'; cat f"
	expect_status 0
	expect_out "data
data
data"
	[ "$(grep -c '^wrapped cat f$' log)" -eq 2 ] || fail "the script did not wrap both: $(cat log)"
}

test_nested_cmd_git_guard_applies_inside()
{
	git init -q -b main . && echo one >tracked && git add tracked &&
		git -c user.name=t -c user.email=t@e commit -qm one || fail "no repository"
	echo uncommitted >tracked
	# The outer sandbox lifts the guard; the inner run puts it back.
	sbx --cmd git=true sh -c "'$AS' --cmd git=@git sh -c 'git status --short; git reset --hard'"
	expect_status 126
	expect_out_contains " M tracked"
	expect_err_contains "git reset --hard is blocked by the sandbox policy"
	expect_content tracked uncommitted
}

# A CLI installed under the host's /tmp (npm --prefix /tmp/x, say): one
# line names the place, why the sandbox does not show it and what does.
# --ro shows a path under the private /tmp and /run (bound over the
# tmpfs) and beneath an excluded directory; nothing shows one under /dev.
test_command_under_host_tmp_gets_private_path_hint()
{
	mkdir -p "$T/x/bin" "$HOME/bin" hid/bin
	printf '#!/bin/sh\necho claude-ran\n' >"$T/x/bin/claude"
	cp "$T/x/bin/claude" hid/bin/claude
	chmod 755 "$T" "$T/x" "$T/x/bin" "$T/x/bin/claude" hid/bin/claude
	case $T in /tmp/*) ;; *) skip "the test directory $T is not under the host's /tmp" ;; esac
	PATH="$T/x/bin:$PATH" sbx claude
	expect_status 127
	expect_err_contains "claude: command not found"
	expect_err_contains "hint: claude is $T/x/bin/claude on the host, but /tmp is private inside the sandbox (a tmpfs of its own): show it with --ro $T/x/bin, or install it elsewhere"
	[ "$(grep -c hint: "$T/err")" -eq 1 ] || fail "more than one hint: $(err)"
	# The hint works as it says.
	PATH="$T/x/bin:$PATH" sbx --ro "$T/x/bin" claude
	expect_status 0
	expect_out claude-ran
	# Through a symlink in a directory the sandbox shows.
	ln -s "$T/x/bin/claude" "$HOME/bin/claude"
	PATH="$HOME/bin:$PATH" sbx claude
	expect_status 127
	expect_err_contains "hint: claude is $T/x/bin/claude on the host, but /tmp is private"
	# Beneath an excluded directory.
	PATH="$T/work/hid/bin:$PATH" sbx --exclude hid claude
	expect_status 127
	expect_err_contains "but $T/work/hid is hidden inside the sandbox (--exclude): show it with --ro $T/work/hid/bin"
	# A program that is simply missing gets no hint.
	sbx no-such-program-here
	expect_status 127
	expect_err_lacks "hint:"
}

run_tests
