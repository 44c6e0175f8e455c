#!/bin/sh
# Escape attempts against the trust rule: playing the agent inside, each test
# writes a project config meant to loosen the NEXT run, spelled so that the
# rule might not see it, in a subdirectory it makes (the project's own
# config is read-only inside), then the user runs from that subdirectory
# and the test checks that the run is refused (exit 2, the entry named) and
# that nothing it aimed at leaked.
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

run_tests
