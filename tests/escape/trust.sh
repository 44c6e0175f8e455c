#!/bin/sh
# Escape attempts against the trust rule: a project config meant to loosen
# the next run, spelled so that the rule might not see it. Where it can, the
# test plays the agent and writes it inside, in a subdirectory it makes (the
# project's own config is read-only inside), and the user then runs from
# there; each checks that the run is refused (exit 2, the entry named) and
# that nothing the config aimed at leaked or changed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# A secret name spelled with glob escapes: "\.env" and ".en\v.local" match
# .env and .env.local exactly as the plain names do, so unmasking them is a
# loosening however they are spelled.
test_escaped_secret_allow_is_refused_on_the_next_run()
{
	make_guarded_project
	# printf turns each \134 into one backslash: JSON "\\.env" is \.env.
	sbx sh -c 'mkdir sub && echo API_KEY=sub-secret-value >sub/.env &&
		echo LOCAL_KEY=local-secret-value >sub/.env.local &&
		printf "{\"secrets\": {\"allow\": [\"\134\134.env\", \".en\134\134v.local\"]}}\n" \
			>sub/.agent-sandbox.json'
	expect_status 0
	grep -qF '"\\.env"' sub/.agent-sandbox.json || fail "the config was not written: $(cat sub/.agent-sandbox.json)"
	cd sub || fail "no sub"
	sbx sh -c 'cat .env .env.local'
	expect_status 2
	expect_out_lacks sub-secret-value
	expect_out_lacks local-secret-value
	expect_err_contains '"secrets.allow": "\\.env" unmasks secret files'
	expect_err_contains '"secrets.allow": ".en\\v.local" unmasks secret files'
}

# The same spelling in env.allow: "DEPLOY_TO\KEN" passes DEPLOY_TOKEN, which
# the secret filter drops ("*_TOKEN" does not match the escaped text).
test_escaped_env_allow_is_refused_on_the_next_run()
{
	make_guarded_project
	sbx sh -c 'mkdir sub &&
		printf "{\"env\": {\"allow\": [\"DEPLOY_TO\134\134KEN\"]}}\n" >sub/.agent-sandbox.json'
	expect_status 0
	cd sub || fail "no sub"
	DEPLOY_TOKEN=deploy-token-value sbx sh -c 'echo "token=$DEPLOY_TOKEN"'
	expect_status 2
	expect_out_lacks deploy-token-value
	expect_err_contains '"env.allow": "DEPLOY_TO\\KEN" passes'
}

# The variables that choose git's config files are the @git guard's
# baseline: set by a project config (one that comes with the repository,
# from a branch the agent pushed), they point git at a config of the agent's
# making that switches the hooks off, and every commit of the run skips the
# pre-commit hook. Each is a loosening.
test_env_set_of_git_config_variables_is_refused()
{
	make_guarded_project
	mkdir -p cfg/git
	printf '[core]\n\thooksPath = /dev/null\n' >cfg/git/config
	for var in GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM XDG_CONFIG_HOME; do
		value=$T/work/cfg/git/config
		[ "$var" = XDG_CONFIG_HOME ] && value=$T/work/cfg
		printf '{"env": {"set": {"%s": "%s"}}}\n' "$var" "$value" >.agent-sandbox.json
		head_before=$(git rev-parse HEAD)
		sbx sh -c 'echo change >>tracked && git commit -qam bypass'
		[ "$rc" -eq 2 ] || fail "$var: expected status 2, got $rc: $(err)"
		expect_err_contains "\"env.set\": \"$var\" chooses the config files git reads"
		[ "$(git rev-parse HEAD)" = "$head_before" ] || fail "$var: a commit skipped the hook"
		git checkout -q tracked
	done
}

# Inside a sandbox the trust rule is not enforced (the outer sandbox bounds
# the inner run), but `policy` still has to say what a project config
# loosens: an agent that writes a loosening config in a subdirectory and
# shows the user the nested `policy` output would otherwise have it called
# harmless. The verdict there is "not checked", with every loosening.
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
