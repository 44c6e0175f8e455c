#!/bin/sh
# Escape attempts against a nested run's tightening through processes of
# the outer sandbox that the inner command can talk to: a unix socket made
# outside the inner run leads to a process without the inner rules, which
# then does the work for it.
#
#   an inner --network=false reaching the network through the outer
#   sandbox's proxy socket (/run/agent-sandbox/proxy.sock)
#   an inner --ro, --exclude or --cmd NAME=false got around by a server the
#   outer sandbox runs (a tmux server, an editor, a language server: here a
#   tiny one that writes, reads or runs what it is asked)
#   a signal to a process of the outer sandbox
#
# Each outcome is checked from outside.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# A host-side recorder of request lines on a free loopback port; sets
# $rec_port; every request line goes into $T/hits.
start_hit_recorder()
{
	: >"$T/hits"
	"$PY" -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write(self.requestline + "\n")
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
' "$T/rec.port" "$T/hits" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$T/rec.port" ] && break
		sleep 0.05
	done
	rec_port=$(cat "$T/rec.port" 2>/dev/null) || fail "the recorder did not start"
}

# Speaks to the proxy's unix socket the way the forwarder does for a
# network.localhost port: a 0x00 byte, the port, then the request.
PROXY_CLIENT='
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/run/agent-sandbox/proxy.sock")
port = int(sys.argv[1])
s.sendall(bytes([0, port >> 8, port & 255]) + b"GET /" + sys.argv[2].encode() + b" HTTP/1.0\r\n\r\n")
s.settimeout(10)
print(s.recv(200).decode("latin-1").split("\r\n")[0])
'

test_inner_network_false_cannot_reach_the_network_through_the_proxy_socket()
{
	start_hit_recorder
	printf '%s' "$PROXY_CLIENT" >client.py
	# The outer run reaches the port this way (the test could not fail
	# otherwise); the inner one, with no network, must not.
	sbx --localhost "$rec_port" sh -c "$PY client.py $rec_port outer;
		'$AS' --network=false $PY client.py $rec_port inner; true"
	grep -q "GET /outer" "$T/hits" || fail "the outer run did not reach the recorder: $(out)"
	! grep -q "GET /inner" "$T/hits" || fail "the inner run without network reached the host: $(cat "$T/hits")"
}

# A server the outer sandbox runs before the inner run, on a unix socket
# in /tmp: "W path data" writes, "R path" reads, "X prog args" runs.
HELPER_SERVER='
import os, socket, subprocess, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path + ".tmp"); os.rename(path + ".tmp", path); s.listen(8)
while True:
    c, _ = s.accept()
    req = c.recv(4096).decode().split(" ", 2)
    out = b""
    try:
        if req[0] == "W":
            open(req[1], "w").write(req[2])
        elif req[0] == "R":
            out = open(req[1], "rb").read()
        elif req[0] == "X":
            out = subprocess.run(req[1:], capture_output=True).stdout
    except OSError as e:
        out = str(e).encode()
    c.sendall(out); c.close()
'
HELPER_CLIENT='
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/tmp/helper.sock")
s.sendall(" ".join(sys.argv[1:]).encode())
s.settimeout(10)
print(s.recv(4096).decode().strip())
'

# Runs the helper in the outer sandbox, then "$1" (an inner agent-sandbox
# command line) with the client as "ask".
with_outer_helper()
{
	printf '%s' "$HELPER_SERVER" >server.py
	printf '%s' "$HELPER_CLIENT" >ask.py
	sbx sh -c "$PY server.py /tmp/helper.sock & for i in \$(seq 100); do [ -S /tmp/helper.sock ] && break; sleep 0.05; done
		$1; kill \$!; true"
}

test_inner_read_only_cannot_be_written_through_a_server_of_the_outer_sandbox()
{
	mkdir sub
	echo original >sub/f
	with_outer_helper "$PY ask.py W $T/work/control outer-wrote;
		'$AS' --ro sub $PY ask.py W $T/work/sub/f changed"
	expect_content control outer-wrote
	expect_content sub/f original
}

test_inner_exclude_cannot_be_read_through_a_server_of_the_outer_sandbox()
{
	mkdir secret
	echo hidden-value >secret/key
	echo visible >control
	with_outer_helper "$PY ask.py R $T/work/control;
		'$AS' --exclude secret $PY ask.py R $T/work/secret/key"
	expect_out_contains visible
	expect_out_lacks hidden-value
}

test_inner_blocked_command_cannot_be_run_by_a_server_of_the_outer_sandbox()
{
	echo inner-data >f
	with_outer_helper "$PY ask.py X echo outer-ran;
		'$AS' --cmd cat=false $PY ask.py X cat $T/work/f"
	expect_out_contains outer-ran
	expect_out_lacks inner-data
}

# A datagram server of the outer sandbox on /tmp/dgram.sock: each
# datagram "path data" is written to path.
DGRAM_SERVER='
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/tmp/dgram.tmp"); os.rename("/tmp/dgram.tmp", "/tmp/dgram.sock")
while True:
    path, _, data = s.recv(4096).decode().partition(" ")
    try:
        open(path, "w").write(data)
    except OSError:
        pass
'
# Sends "path data" to it from a new datagram socket, then from one end of
# a datagram socketpair (whose sendto takes any address).
DGRAM_CLIENT='
import socket, sys
msg = " ".join(sys.argv[1:]).encode()
for make in (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM),
             lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0]):
    try:
        make().sendto(msg, "/tmp/dgram.sock")
    except OSError as e:
        print(e)
'

test_inner_read_only_cannot_be_written_through_a_datagram_server_of_the_outer_sandbox()
{
	mkdir sub
	echo original >sub/f
	printf '%s' "$DGRAM_SERVER" >server.py
	printf '%s' "$DGRAM_CLIENT" >send.py
	sbx sh -c "$PY server.py & for i in \$(seq 100); do [ -S /tmp/dgram.sock ] && break; sleep 0.05; done
		$PY send.py $T/work/control outer-wrote; sleep 0.3
		'$AS' --ro sub $PY send.py $T/work/sub/f changed; sleep 0.3; kill \$!; true"
	expect_content control outer-wrote
	expect_content sub/f original
}

test_inner_command_cannot_signal_a_process_of_the_outer_sandbox()
{
	# A signal makes another process act: a handler that saves, cleans
	# up or reloads does so with the outer rights. The outer process
	# survives the inner command's kill; the outer shell can still kill it.
	sbx sh -c "sleep 30 & p=\$!
		'$AS' --ro . kill -TERM \$p; sleep 0.2
		kill -0 \$p 2>/dev/null && echo outer-alive; kill \$p"
	expect_out outer-alive
}

# A host-side server that accepts connections and never answers: an
# upstream stuck before the TLS handshake. Sets $hole_port.
start_black_hole()
{
	"$PY" -c '
import os, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1024)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    held.append(s.accept()[0])
' "$T/hole.port" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$T/hole.port" ] && break
		sleep 0.05
	done
	hole_port=$(cat "$T/hole.port" 2>/dev/null) || fail "the black hole did not start"
}

test_run_ending_with_injected_requests_in_flight_exits_with_the_command_status()
{
	# The agent leaves many injected requests starting their TLS when it
	# exits: the host process must not crash on the way out (its core
	# would hold the key, and the command's status would be lost).
	start_black_hole
	for round in 1 2 3; do
		rc=0
		ANTHROPIC_API_KEY=sk-ant-test-$$-inflight timeout 120 "$AS" --credential anthropic \
			--resolve "api.anthropic.com=127.0.0.1:$hole_port" sh -c '
			for i in $(seq 150); do
				curl -s -m 60 -o /dev/null "$ANTHROPIC_BASE_URL/v1/x" &
			done
			sleep 1; exit 7' >"$T/out" 2>"$T/err" </dev/null || rc=$?
		[ "$rc" -eq 7 ] || fail "round $round: exit status $rc, not the command's 7"
	done
}

test_key_kept_in_home_files_is_not_readable_inside()
{
	# Where users keep an API key: an export in a shell start-up file
	# (here through a dotfiles symlink), an agent's own login file. The
	# key is injected; none of these may show it inside.
	key=sk-ant-test-$$-homefiles
	mkdir -p "$HOME/.codex" "$HOME/dotfiles" "$HOME/.config/tool"
	printf 'export ANTHROPIC_API_KEY=%s\n' "$key" >"$HOME/.bashrc"
	printf 'export ANTHROPIC_API_KEY=%s\n' "$key" >"$HOME/dotfiles/zshrc"
	ln -s dotfiles/zshrc "$HOME/.zshrc"
	printf '{"OPENAI_API_KEY": null, "key": "%s"}\n' "$key" >"$HOME/.codex/auth.json"
	printf 'token = %s\n' "$key" >"$HOME/.config/tool/settings"
	echo visible >"$HOME/.config/tool/other"
	rc=0
	ANTHROPIC_API_KEY=$key timeout 60 "$AS" --credential anthropic sh -c '
		cat ~/.bashrc ~/.zshrc ~/.codex/auth.json ~/.config/tool/settings ~/.config/tool/other
		grep -rl "'"$key"'" ~ 2>/dev/null; true' >"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	expect_out_contains visible
	expect_out_lacks "$key"
	expect_out_lacks "$HOME"
	expect_content "$HOME/.bashrc" "export ANTHROPIC_API_KEY=$key"
}

run_tests
