#!/bin/sh
# Findings of a red-team pass over the planning that are not fixed here:
# each test fails on the current code and names the change it needs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# Inside a sandbox the trust rule is not enforced (the outer sandbox bounds
# the inner run), but `policy` still has to say what a project config
# loosens: an agent that writes a loosening config in a subdirectory and
# shows the user the nested `policy` output would otherwise have it called
# harmless. The plan skips the comparison inside (plan.c check_trust: `if
# (!inside) compare_without_project(...)`), so trust_decide never sees a
# loosening and TRUST_NOT_CHECKED is unreachable; the binary before the
# plan refactor listed the loosenings. Fix: compare inside too (the verdict
# stays TRUST_NOT_CHECKED, nothing is refused).
test_nested_policy_names_what_a_loosening_config_loosens()
{
	make_guarded_project
	mkdir sub
	echo '{"env": {"filter-secrets": false}, "secrets": {"patterns": ["!.env"]}}' \
		>sub/.agent-sandbox.json
	sbx sh -c "cd sub && '$AS' policy"
	expect_status 0
	expect_out_lacks "only tightens"
	expect_out_contains "loosens; not checked inside a sandbox"
	expect_out_contains '"filter-secrets": false passes variables that look like secrets'
	expect_out_contains '"secrets.patterns": "!.env" stops masking'
}

run_tests
