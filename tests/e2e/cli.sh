#!/bin/sh
# The command line: verbs, flag parsing, usage errors and their exit codes.
. "$(dirname "$0")/../lib.sh"

test_version_prints_name_and_version()
{
	for form in version --version -v; do
		sbx $form
		expect_status 0
		out | grep -q '^agent-sandbox [0-9]' || fail "$form printed '$(out)'"
	done
}

test_help_lists_verbs_and_flags()
{
	for form in help --help -h; do
		sbx $form
		expect_status 0
		for word in exec check policy --cwd --config --ro --rw --exclude \
			--network --docker --read-only --dry-run --debug; do
			expect_out_contains "$word"
		done
	done
}

test_check_says_outside_when_run_on_the_host()
{
	for form in check --check; do
		sbx $form
		expect_status 1
		expect_out "outside sandbox"
	done
}

test_check_says_inside_when_run_in_the_sandbox()
{
	sbx -- "$AS" check
	expect_status 0
	expect_out "inside sandbox"
	sbx sh -c '"$0" --check' "$AS"
	expect_status 0
	expect_out "inside sandbox"
}

test_check_cannot_be_faked_from_inside()
{
	# The marker is a read-only mount in a search-only directory: it can be
	# neither created, removed, replaced nor listed.
	sbx sh -c 'ls /run/agent-sandbox'
	[ "$rc" -ne 0 ] || fail "/run/agent-sandbox could be listed"
	for attempt in 'touch /run/agent-sandbox/x' 'rm -f /run/agent-sandbox/agent-sandbox' \
		'echo x > /run/agent-sandbox/agent-sandbox' 'rmdir /run/agent-sandbox' \
		'mv /run/agent-sandbox /run/moved'; do
		sbx sh -c "$attempt"
		[ "$rc" -ne 0 ] || fail "'$attempt' succeeded"
	done
	sbx -- "$AS" check
	expect_out "inside sandbox"
}

test_implicit_run_and_exec_run_the_command()
{
	sbx sh -c 'echo hello'
	expect_status 0
	expect_out hello
	sbx exec sh -c 'echo hello'
	expect_status 0
	expect_out hello
}

test_flags_stop_at_the_first_non_flag_word()
{
	sbx sh -c 'echo "$@"' sh --help --read-only -v
	expect_status 0
	expect_out "--help --read-only -v"
}

test_double_dash_forces_a_program_named_like_a_verb()
{
	mkdir bin
	printf '#!/bin/sh\necho program-named-policy\n' >bin/policy
	chmod +x bin/policy
	PATH="$PWD/bin:$PATH" sbx -- policy
	expect_status 0
	expect_out program-named-policy
}

test_unknown_flag_is_a_usage_error_naming_the_flag()
{
	sbx --frobnicate sh -c 'touch ran'
	expect_status 2
	expect_err_contains '"--frobnicate"'
	expect_no_file ran
}

test_flag_errors_name_the_flag()
{
	# arguments (a command follows unless the flag is last) | text the error names
	while IFS='|' read -r args last want; do
		if [ "$last" = last ]; then
			# shellcheck disable=SC2086
			sbx $args
		else
			# shellcheck disable=SC2086
			sbx $args sh -c 'touch ran'
		fi
		[ "$rc" -eq 2 ] || fail "'$args': expected status 2, got $rc"
		grep -qF -- "$want" "$T/err" || fail "'$args': stderr lacks '$want': $(err)"
		expect_no_file ran
	done <<'CASES'
--network|last|--network
--network=maybe||--network
--network false||--network
--docker=perhaps||--docker
--read-only=2||--read-only
--cwd|last|--cwd
-C /nonexistent/dir||/nonexistent/dir
--config /nonexistent/file.json||/nonexistent/file.json
--ro|last|--ro
--rw|last|--rw
--exclude|last|--exclude
--ro [abc||--ro
--cmd git||--cmd
--cmd git=@nope||@nope
--cmd a/b=false||a/b
--allow-host a.*.example.com||--allow-host
--allow-host @nope||unknown host group
--allow-host x.com --network=false||--allow-host cannot be combined
CASES
}

test_missing_command_is_a_usage_error()
{
	sbx
	expect_status 2
	sbx --read-only
	expect_status 2
	expect_err_contains "command"
}

test_help_flag_wins_over_other_verbs()
{
	sbx policy --help
	expect_status 0
	expect_out_contains "usage: agent-sandbox"
}

test_conflicting_verbs_are_a_usage_error()
{
	sbx exec --version sh -c 'touch ran'
	expect_status 2
	expect_err_contains "cannot be combined"
	expect_no_file ran
	sbx --check policy
	expect_status 2
}

test_boolean_flags_accept_true_false_one_zero()
{
	for v in true 1; do
		sbx --read-only=$v sh -c 'touch f'
		[ "$rc" -ne 0 ] || fail "--read-only=$v left the directory writable"
	done
	for v in false 0; do
		sbx --read-only=$v sh -c 'touch f'
		expect_status 0
	done
}

test_cwd_flag_changes_the_working_directory()
{
	mkdir -p other/sub
	sbx -C other sh -c 'pwd; touch made-here'
	expect_status 0
	expect_out "$T/work/other"
	expect_file other/made-here
	sbx --cwd="$T/work/other/sub" pwd
	expect_out "$T/work/other/sub"
}

run_tests
