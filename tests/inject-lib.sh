# Shared by tests/e2e/inject.sh and tests/escape/inject.sh, on top of
# tests/lib.sh: a test CA and server certificate made with the openssl CLI,
# the loopback TLS stand-in for an API upstream (tests/e2e/tls-standin.py)
# that records the request heads it receives, a plain-HTTP recorder, and a
# global config whose built-in credentials trust the test CA only.

STANDIN=$(cd "$(dirname "$0")/../e2e" && pwd)/tls-standin.py
KEY=sk-ant-test-$$-k3y9Zq7
OKEY=sk-openai-test-$$-Xy41
GKEY=ghp_test$$Token77

py()
{
	if [ -x /usr/bin/python3 ]; then /usr/bin/python3 "$@"; else python3 "$@"; fi
}

# A CA (ca.pem) and, signed by it, a server certificate for the upstreams
# (srv.pem, srv.key); with "other", a second CA signs it instead, which the
# sandbox's config does not trust.
make_certs()
{
	d=$T/pki
	mkdir -p "$d"
	(
		cd "$d" || exit 1
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
			-subj "/CN=agent-sandbox test CA" 2>/dev/null &&
			openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem \
				-days 2 -subj "/CN=another CA" 2>/dev/null &&
			openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr \
				-subj "/CN=api.anthropic.com" 2>/dev/null &&
			printf 'subjectAltName=DNS:api.anthropic.com,DNS:api.openai.com,DNS:github.com,DNS:api.github.com\n' >ext ||
			exit 1
		signer=ca
		[ "${1:-}" = other ] && signer=other
		openssl x509 -req -in srv.csr -CA "$signer.pem" -CAkey "$signer.key" \
			-CAcreateserial -out srv.pem -days 2 -extfile ext 2>/dev/null
	) || fail "openssl could not make the test certificates"
}

# Starts the stand-in in MODE and sets $up_port; its log is $T/upstream.log.
start_standin()
{
	: >"$T/upstream.log"
	py "$STANDIN" "$T/pki/srv.pem" "$T/pki/srv.key" "$T/up.port" "$T/upstream.log" "$@" \
		>/dev/null 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$T/up.port" ] && break
		sleep 0.05
	done
	up_port=$(cat "$T/up.port" 2>/dev/null) || fail "the TLS stand-in did not start"
}

# The global config: every built-in credential trusts the test CA only.
global_config()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	cat >"$HOME/.config/agent-sandbox/config.json" <<EOF
{"credentials": {"anthropic": {"ca": "$T/pki/ca.pem"},
                 "openai": {"ca": "$T/pki/ca.pem"},
                 "github": {"ca": "$T/pki/ca.pem"}}}
EOF
}

setup_upstream()
{
	make_certs "${2:-}"
	global_config
	start_standin "$1" "${3:-}"
}

# Runs ARGS in the sandbox with the anthropic credential on and the
# upstream pinned to the stand-in.
sbx_anthropic()
{
	rc=0
	ANTHROPIC_API_KEY=$KEY timeout 60 "$AS" --credential anthropic \
		--resolve "api.anthropic.com=127.0.0.1:$up_port" "$@" >"$T/out" 2>"$T/err" \
		</dev/null || rc=$?
}

expect_upstream_has()
{
	grep -qF -- "$1" "$T/upstream.log" || fail "the upstream did not receive '$1': $(head -c 800 "$T/upstream.log")"
}

expect_upstream_lacks()
{
	! grep -qiF -- "$1" "$T/upstream.log" || fail "the upstream received '$1': $(head -c 800 "$T/upstream.log")"
}

# A tiny HTTP server on the host's loopback that appends every POST body
# to $T/traffic; sets $rec_port.
start_recorder()
{
	: >"$T/traffic"
	py -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        with open(sys.argv[2], "ab") as f:
            f.write(bytes(self.requestline, "latin-1") + b"\n" + bytes(str(self.headers), "latin-1") + self.rfile.read(n))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
' "$T/rec.port" "$T/traffic" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$T/rec.port" ] && break
		sleep 0.05
	done
	rec_port=$(cat "$T/rec.port" 2>/dev/null) || fail "the recorder did not start"
}

