#!/bin/sh
# Escape attempts against what a nested run takes away (an inner --ro,
# --exclude, --cmd NAME=false, enforced by a second Landlock ruleset):
#
#   another name for a blocked program: a hard link beside it, a symlink
#   writing to a read-only file through a symlink, /proc/self/fd or
#   /proc/self/root, or after renaming a directory above it
#   moving a file out of an excluded directory, or the directory itself
#   a run inside the inner run asking for the rights back
#   a hand-set AGENT_SANDBOX_NESTED_WRAPPERS passing /usr/bin off as a
#   nested run's launcher directory, to take git away from the outer guard
#
# Each outcome is checked from outside.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

test_a_hard_link_or_symlink_to_a_blocked_program_is_blocked_too()
{
	mkdir bin
	printf '#!/bin/sh\necho tool-ran\n' >bin/tool
	chmod 755 bin/tool
	ln bin/tool bin/tool-again
	ln -s tool bin/tool-link
	sbx sh -c "PATH=$T/work/bin:\$PATH; '$AS' --cmd tool=false sh -c 'tool; tool-again; tool-link; sh bin/tool; cat bin/tool-again; true'"
	expect_status 0
	expect_out ""
}

test_a_read_only_file_cannot_be_written_another_way()
{
	mkdir -p a/b other
	echo original >a/b/f
	sbx sh -c "'$AS' --ro a/b sh -c '
		ln -s ../a/b/f other/link; echo changed >other/link
		exec 3<a/b/f; echo changed >/proc/self/fd/3
		echo changed >/proc/self/root$T/work/a/b/f
		mv a gone; echo changed >gone/b/f
		mv a/b a/c; echo changed >a/c/f
		$PY -c \"import os; fd = os.open(\\\"a/b/f\\\", os.O_WRONLY); os.write(fd, b\\\"changed\\\")\"
		true'"
	expect_content a/b/f original
	expect_no_file gone
	expect_no_file a/c
}

test_an_excluded_file_cannot_be_moved_out_or_read_another_way()
{
	mkdir -p secret other
	echo hidden-value >secret/key
	sbx sh -c "'$AS' --exclude secret sh -c '
		mv secret/key other/key
		mv secret other/secret
		ln secret/key other/hard
		cat /proc/self/root$T/work/secret/key
		ln -s ../secret/key other/link; cat other/link
		$PY -c \"import mmap, os; print(open(\\\"secret/key\\\").read())\"
		true'"
	expect_out ""
	expect_content secret/key hidden-value
	expect_no_file other/key
	expect_no_file other/secret
	expect_no_file other/hard
}

test_a_run_inside_the_inner_run_cannot_take_rights_back()
{
	mkdir sub
	echo original >sub/f
	echo data >g
	sbx sh -c "'$AS' --ro sub --exclude g --cmd cat=false '$AS' --rw sub --cmd cat=true sh -c 'echo changed >sub/f; cat g; head g'"
	expect_content sub/f original
	expect_out ""
}

test_a_hand_set_nested_wrappers_variable_cannot_unwrap_an_outer_launcher()
{
	make_guarded_project
	echo changed >tracked
	gitdir=$(dirname "$(realpath "$(command -v git)")")
	sbx sh -c "mkdir -p /tmp/fake && ln -s '$gitdir' /tmp/fake/path &&
		AGENT_SANDBOX_NESTED_WRAPPERS=/tmp/fake git reset --hard"
	expect_status 126
	expect_err_contains "git reset --hard is blocked"
	expect_content tracked changed
}

run_tests
