#!/bin/sh
# Environment filtering: secret-looking names are dropped unless allowed,
# env.block and --env-block always drop, env.set and --env NAME=VALUE set,
# and `policy` names what was dropped without ever printing a value.
. "$(dirname "$0")/../lib.sh"

# Prints NAME=value for each name given, "NAME unset" when it is not set.
show='for n in "$@"; do eval "v=\${$n-unset}"; echo "$n=$v"; done'

test_secret_looking_names_are_dropped()
{
	# variable name (each set to "v")
	for name in ANTHROPIC_API_KEY MY_SECRET NPM_TOKEN DB_PASSWORD_FILE MY_CREDENTIALS \
		AWS_REGION GITHUB_ACTOR github_token; do
		env "$name=v" "$AS" sh -c "$show" sh "$name" >"$T/out" 2>"$T/err" </dev/null
		expect_out "$name=unset"
	done
}

test_password_key_auth_and_dsn_names_are_dropped()
{
	for name in DATABASE_URL DB_PASS SMTP_PASSWD OPENAI_APIKEY MYAPIKEYVALUE BASIC_AUTH \
		DOCKER_AUTH_CONFIG NPM_CONFIG__AUTH NGROK_AUTHTOKEN SECRET SECRETS_FILE TOKEN \
		token SENTRY_DSN; do
		env "$name=v" "$AS" sh -c "$show" sh "$name" >"$T/out" 2>"$T/err" </dev/null
		expect_out "$name=unset"
	done
}

test_url_variables_are_dropped_only_when_they_carry_a_password()
{
	REDIS_URL='redis://user:hunter2@cache:6379/0' \
		MIRROR_URL='https://deploy:tok@git.example/repo.git?x=1' \
		API_URL='https://api.example/v1' GIT_URL='ssh://git@github.com/o/r.git' \
		DOCS_URL='https://docs.example/a:b@c' QUERY_URL='https://h.example/?u=a:b@c' \
		sbx sh -c "$show" sh REDIS_URL MIRROR_URL API_URL GIT_URL DOCS_URL QUERY_URL
	expect_status 0
	expect_out "REDIS_URL=unset
MIRROR_URL=unset
API_URL=https://api.example/v1
GIT_URL=ssh://git@github.com/o/r.git
DOCS_URL=https://docs.example/a:b@c
QUERY_URL=https://h.example/?u=a:b@c"
	REDIS_URL='redis://user:hunter2@cache:6379/0' sbx --debug true
	expect_err_contains "env: dropped REDIS_URL: looks like a secret (*_URL with user:password@)"
	! grep -q hunter2 "$T/err" || fail "the value was printed"
}

test_new_secret_names_are_kept_when_allowed()
{
	echo '{"env": {"allow": ["DATABASE_URL", "REDIS_URL"]}}' >.agent-sandbox.json
	approve_config
	DATABASE_URL=postgres://u:p@db/x REDIS_URL=redis://u:p@c/0 \
		sbx sh -c "$show" sh DATABASE_URL REDIS_URL
	expect_status 0
	expect_out "DATABASE_URL=postgres://u:p@db/x
REDIS_URL=redis://u:p@c/0"
}

test_ordinary_names_pass_through()
{
	# GIT_AUTHOR_* must reach commits inside: "*_AUTH*" is not a pattern.
	TERM=xterm LANG=C.UTF-8 MY_VAR=m KEYBOARD=k TOKENIZER_PATH=t GIT_AUTHOR_NAME=a \
		PASSAGE=p SSH_ASKPASS=/bin/true sbx sh -c "$show" sh HOME PATH TERM LANG MY_VAR \
		KEYBOARD TOKENIZER_PATH GIT_AUTHOR_NAME PASSAGE SSH_ASKPASS
	expect_status 0
	expect_out "HOME=$HOME
PATH=$PATH
TERM=xterm
LANG=C.UTF-8
MY_VAR=m
KEYBOARD=k
TOKENIZER_PATH=t
GIT_AUTHOR_NAME=a
PASSAGE=p
SSH_ASKPASS=/bin/true"
}

test_allowed_names_are_kept()
{
	echo '{"env": {"allow": ["ANTHROPIC_*"]}}' >.agent-sandbox.json
	approve_config
	ANTHROPIC_API_KEY=k OPENAI_API_KEY=o sbx sh -c "$show" sh ANTHROPIC_API_KEY OPENAI_API_KEY
	expect_status 0
	expect_out "ANTHROPIC_API_KEY=k
OPENAI_API_KEY=unset"
	OPENAI_API_KEY=o sbx --env OPENAI_API_KEY sh -c "$show" sh OPENAI_API_KEY
	expect_out "OPENAI_API_KEY=o"
}

test_block_beats_allow_and_the_filter()
{
	echo '{"env": {"allow": ["GITHUB_TOKEN"], "block": ["CI_*"]}}' >.agent-sandbox.json
	approve_config
	GITHUB_TOKEN=g CI_JOB=1 PLAIN=p sbx --env-block PLAIN --env-block GITHUB_TOKEN \
		sh -c "$show" sh GITHUB_TOKEN CI_JOB PLAIN
	expect_status 0
	expect_out "GITHUB_TOKEN=unset
CI_JOB=unset
PLAIN=unset"
}

test_filter_can_be_turned_off()
{
	echo '{"env": {"filter-secrets": false}}' >.agent-sandbox.json
	approve_config
	NPM_TOKEN=n sbx sh -c "$show" sh NPM_TOKEN
	expect_out "NPM_TOKEN=n"
}

test_set_values_are_applied_and_the_command_line_wins()
{
	echo '{"env": {"set": {"FOO": "from config", "BAR": "b"}}}' >.agent-sandbox.json
	FOO=host sbx --env FOO=from-flag --env NEW_TOKEN=t sh -c "$show" sh FOO BAR NEW_TOKEN
	expect_status 0
	expect_out "FOO=from-flag
BAR=b
NEW_TOKEN=t"
}

test_agent_sandbox_is_set_inside()
{
	sbx sh -c "$show" sh AGENT_SANDBOX
	expect_out "AGENT_SANDBOX=1"
}

test_policy_lists_dropped_names_but_never_values()
{
	MY_API_KEY=hunter2-value GITHUB_TOKEN=ghp-value sbx policy --env-block 'LC_*'
	expect_status 0
	expect_out_contains "dropped          MY_API_KEY  (looks like a secret (*_KEY))"
	expect_out_contains "dropped          GITHUB_TOKEN"
	expect_out_lacks "hunter2-value"
	expect_out_lacks "ghp-value"
}

test_debug_names_dropped_variables_without_values()
{
	MY_SECRET=s3cr3t-value sbx --debug true
	expect_status 0
	expect_err_contains "env: dropped MY_SECRET: looks like a secret"
	! grep -q s3cr3t-value "$T/err" || fail "the value was printed"
}

test_bad_env_flags_are_usage_errors()
{
	# flag | value | what the message mentions
	while IFS='|' read -r flag value want; do
		sbx "$flag" "$value" true
		expect_status 2
		expect_err_contains "$want"
	done <<'CASES'
--env|A-B=1|not a variable name
--env|=1|not a variable name
--env|X[|not closed
--env-block|A=1|not an assignment
--env-block|a/b|cannot contain "/"
CASES
}

run_tests
