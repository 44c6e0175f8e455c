#!/bin/sh
# The network modes: filtered (the default: only allowed host names, through
# the proxy), none, and the host network. A test HTTP server on the host's
# loopback stands in for the world; names reach it through network.resolve,
# so nothing leaves the machine; a pin names the server's port, the only one
# it opens.
. "$(dirname "$0")/../lib.sh"

# A served directory and a project config that allows test.example,
# pinned to the server's address.
serve()
{
	mkdir -p "$T/srv"
	echo hello >"$T/srv/hello.txt"
	start_http_server "$T/srv"
	cat >.agent-sandbox.json <<JSON
{"network": {"allow": ["test.example", "*.wild.example"], "deny": ["no.wild.example"],
             "resolve": {"test.example": "127.0.0.1:$http_port", "a.wild.example": "127.0.0.1:$http_port",
                         "no.wild.example": "127.0.0.1:$http_port"}}}
JSON
	approve_config
}

test_an_allowed_name_is_tunnelled_with_connect()
{
	serve
	sbx curl -sS --max-time 10 -p "http://test.example:$http_port/hello.txt"
	expect_status 0
	expect_out hello
}

test_plain_http_goes_through_the_proxy_in_absolute_form()
{
	serve
	sbx curl -sS --max-time 10 "http://TEST.example.:$http_port/hello.txt"
	expect_status 0
	expect_out hello
}

test_a_name_not_allowed_gets_403_naming_the_host_and_the_config_key()
{
	serve
	sbx curl -s --max-time 10 -w '\n%{http_code}' "http://other.example:$http_port/hello.txt"
	expect_out_contains "agent-sandbox: other.example is not in network.allow; allow it with --allow-host other.example"
	[ "$(tail -1 "$T/out")" = 403 ] || fail "expected status 403: $(out)"
	sbx curl -sS --max-time 10 -p "http://other.example:$http_port/hello.txt"
	expect_status 56
	expect_err_contains "403"
}

test_a_pinned_name_allowed_by_exact_name_may_point_at_loopback()
{
	serve
	echo "{\"network\": {\"resolve\": {\"mirror.test\": \"127.0.0.1:$http_port\"}}}" >.agent-sandbox.json
	approve_config
	sbx curl -s --max-time 10 "http://mirror.test:$http_port/hello.txt"
	expect_out_contains "mirror.test is not in network.allow"
	sbx --allow-host mirror.test curl -sS --max-time 10 "http://mirror.test:$http_port/hello.txt"
	expect_status 0
	expect_out hello
}

test_a_denied_name_is_refused_naming_the_deny_entry()
{
	serve
	sbx curl -s --max-time 10 "http://no.wild.example:$http_port/hello.txt"
	expect_out_contains 'no.wild.example is denied by network.deny entry "no.wild.example"'
}

test_an_ip_literal_is_refused_unless_listed()
{
	serve
	sbx curl -s --noproxy '' --max-time 10 "http://127.0.0.1:$http_port/hello.txt"
	expect_out_contains "127.0.0.1 is an IP address; addresses are refused unless network.allow lists them exactly"
	sbx --allow-host 127.0.0.1 curl -sS --noproxy '' --max-time 10 "http://127.0.0.1:$http_port/hello.txt"
	expect_out hello
}

test_a_wildcard_name_cannot_reach_loopback()
{
	serve
	sbx curl -s --max-time 10 "http://a.wild.example:$http_port/hello.txt"
	expect_out_contains "a.wild.example resolves to 127.0.0.1, a loopback address"
}

test_socks5_carries_allowed_names_and_refuses_others()
{
	serve
	sbx sh -c 'curl -sS --max-time 10 --socks5-hostname "${ALL_PROXY#socks5h://}" "$1"' sh \
		"http://test.example:$http_port/hello.txt"
	expect_status 0
	expect_out hello
	sbx sh -c 'curl -sS --max-time 10 --socks5-hostname "${ALL_PROXY#socks5h://}" "$1"' sh \
		"http://other.example:$http_port/hello.txt"
	expect_status 97
}

test_git_clones_over_http_through_the_proxy()
{
	serve
	git init -q --bare "$T/srv/repo.git"
	git init -q "$T/src"
	echo content >"$T/src/file"
	git -C "$T/src" add file
	git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm one
	git -C "$T/src" push -q "$T/srv/repo.git" HEAD:refs/heads/main
	git -C "$T/srv/repo.git" symbolic-ref HEAD refs/heads/main
	git -C "$T/srv/repo.git" update-server-info
	sbx git clone -q "http://test.example:$http_port/repo.git" clone
	expect_status 0
	expect_content clone/file content
}

test_listed_localhost_ports_reach_the_host_and_others_do_not()
{
	serve
	listed=$http_port
	mkdir "$T/srv2"
	start_http_server "$T/srv2"
	unlisted=$http_port
	echo "{\"network\": {\"localhost\": [$listed]}}" >.agent-sandbox.json
	approve_config
	sbx curl -sS --max-time 10 "http://127.0.0.1:$listed/hello.txt"
	expect_status 0
	expect_out hello
	sbx curl -sS --max-time 10 "http://localhost:$listed/hello.txt"
	expect_out hello
	sbx curl -sS --max-time 10 "http://127.0.0.1:$unlisted/"
	expect_status 7
}

test_network_false_reaches_nothing()
{
	serve
	sbx --network=false sh -c 'echo "proxy=${HTTPS_PROXY:-none}"; curl -sS --max-time 5 "$1"' sh \
		"http://127.0.0.1:$http_port/hello.txt"
	expect_status 7
	expect_out "proxy=none"
}

test_network_true_reaches_the_host_loopback()
{
	serve
	sbx --network=true curl -sS --max-time 10 "http://127.0.0.1:$http_port/hello.txt"
	expect_status 0
	expect_out hello
}

test_proxy_variables_are_set_in_both_cases()
{
	sbx sh -c 'echo $HTTP_PROXY $http_proxy $HTTPS_PROXY $https_proxy $ALL_PROXY $all_proxy $NO_PROXY $no_proxy'
	expect_status 0
	expect_out "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 socks5h://127.0.0.1:1080 socks5h://127.0.0.1:1080 localhost,127.0.0.1,::1 localhost,127.0.0.1,::1"
}

test_bad_requests_get_clean_errors_and_the_proxy_keeps_working()
{
	serve
	cat >probe.py <<'PY'
import socket, sys
def ask(port, data, want=4096):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    out = b""
    while True:
        chunk = s.recv(want)
        if not chunk:
            break
        out += chunk
    s.close()
    return out
print(ask(3128, b"garbage\r\n\r\n").split(b"\r\n")[0].decode())
print(ask(3128, b"GET /local HTTP/1.1\r\n\r\n").split(b"\r\n")[0].decode())
print(ask(3128, b"GET http://test.example/ HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n").split(b"\r\n")[0].decode())
print(ask(3128, b"CONNECT test.example HTTP/1.1\r\n\r\n").split(b"\r\n")[0].decode())
print(ask(3128, b"GET http://test.example/ HTTP/2.0\r\n\r\n").split(b"\r\n")[0].decode())
print(repr(ask(1080, b"\x05")))
print(repr(ask(1080, b"\x05\x01\x00\x05\x01")))
print(repr(ask(1080, b"\x05\x01\x00\x05\x02\x00\x01\x01\x02\x03\x04\x00\x50")))
print(repr(ask(1080, b"\x05\x01\x00\x05\x01\x00\x09\x01\x02")))
print(ask(1080, b"\x04\x01\x00\x50\x01\x02\x03\x04\x00").split(b"\r\n")[0].decode())
print(repr(ask(1080, b"\x05\x01\x02")))
PY
	sbx sh -c 'python3 probe.py && curl -sS --max-time 10 -p "$1"' sh "http://test.example:$http_port/hello.txt"
	expect_status 0
	cat >expected <<'OUT'
HTTP/1.1 400 Bad Request
HTTP/1.1 400 Bad Request
HTTP/1.1 431 Request Header Fields Too Large
HTTP/1.1 400 Bad Request
HTTP/1.1 505 HTTP Version Not Supported
b''
b'\x05\x00'
b'\x05\x00\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00'
b'\x05\x00\x05\x08\x00\x01\x00\x00\x00\x00\x00\x00'
HTTP/1.1 400 Bad Request
b'\x05\xff'
hello
OUT
	[ "$(out)" = "$(cat expected)" ] || fail "unexpected answers: $(out)"
}

test_debug_reports_each_decision()
{
	serve
	sbx --debug sh -c 'curl -s -p "$1" >/dev/null; curl -s http://other.example/ >/dev/null' sh \
		"http://test.example:$http_port/hello.txt"
	expect_status 0
	grep -qE "debug: network: allowed connect test.example port $http_port \(by [^;]+; 127.0.0.1\): [0-9]+ bytes out, [0-9]+ bytes in, [0-9]+ ms" "$T/err" ||
		fail "no allowed decision with bytes and duration"
	expect_err_contains "debug: network: refused http other.example port 80: other.example is not in network.allow"
}

test_audit_log_records_each_decision()
{
	serve
	sbx sh -c 'curl -s -p "$1" >/dev/null; curl -s http://other.example/ >/dev/null' sh \
		"http://test.example:$http_port/hello.txt"
	expect_status 0
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	grep '"event":"network"' "$log" | grep '"decision":"allowed"' | grep '"host":"test.example"' |
		grep -q '"bytes_in":[1-9]' || fail "no allowed record with bytes: $(cat "$log")"
	grep '"event":"network"' "$log" | grep '"decision":"refused"' |
		grep -q '"host":"other.example"' || fail "no refused record: $(cat "$log")"
	grep '"event":"start"' "$log" | grep -q '"network":"filtered"' || fail "start record lacks the mode"
	sbx log --blocked
	expect_out_contains "refused http other.example:80"
	expect_out_lacks "test.example"
}

test_the_proxy_socket_and_its_directory_are_removed_afterwards()
{
	sbx --debug true
	expect_status 0
	sock=$(sed -n 's/.*network: proxy listening on \([^;]*\);.*/\1/p' "$T/err")
	[ -n "$sock" ] || fail "no proxy socket in --debug"
	expect_no_file "$sock"
	expect_no_file "$(dirname "$sock")"
}

# A connection the policy allowed that then failed (the name does not
# resolve) must not read like a success: not in `log`, not in --debug, and
# the JSON record says so in a field of its own.
test_log_says_failed_for_allowed_connect_that_failed()
{
	sbx --debug --allow-host nowhere.invalid curl -sS --max-time 20 https://nowhere.invalid/
	[ "$rc" -ne 0 ] || fail "curl reached nowhere.invalid"
	expect_err_contains "network: failed connect nowhere.invalid port 443 (allowed by --allow-host) after"
	expect_err_lacks "network: allowed connect nowhere.invalid"
	sbx log
	expect_status 0
	expect_out_contains "failed connect nowhere.invalid:443 (allowed by --allow-host): cannot resolve nowhere.invalid"
	expect_out_lacks "allowed connect nowhere.invalid"
	sbx log --json
	grep '"host":"nowhere.invalid"' "$T/out" | grep -q '"outcome":"failed"' ||
		fail "the record lacks outcome failed: $(out)"
}

run_tests
