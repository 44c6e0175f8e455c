#!/bin/sh
# The executor API's clients against the real daemon: `agent-sandbox rpc`
# (one call, every message a JSON line, --follow to a process's end, exit
# status from the response) and examples/serve_client.py (a session, a
# streamed command, a file round trip). What they report is checked against
# the host.
. "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EXAMPLE=$ROOT/examples/serve_client.py
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

# The daemon on this test's private runtime directory's default socket;
# the teardown stops it.
start_daemon()
{
	use_private_rundir
	SOCK="$XDG_RUNTIME_DIR/agent-sandbox/api.sock"
	"$AS" serve >"$T/serve.out" 2>"$T/serve.err" </dev/null &
	daemon_pid=$!
	echo "$daemon_pid" >>"$T/pids"
	for _ in $(seq 300); do
		[ -S "$SOCK" ] && return 0
		kill -0 "$daemon_pid" 2>/dev/null || fail "serve exited: $(cat "$T/serve.err")"
		sleep 0.03
	done
	fail "serve did not listen on $SOCK: $(cat "$T/serve.err")"
}

# Prints the value of the Python expression $1 over the JSON line $2 of
# stdout (1-based; "$" is the last), as `m` (the message).
json_at()
{
	"$PY" -c '
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
m = json.loads(lines[-1] if sys.argv[2] == "$" else lines[int(sys.argv[2]) - 1])
print(eval(sys.argv[3]))
' "$T/out" "$2" "$1" || fail "stdout line $2 is not the JSON expected: $(head -c 600 "$T/out")"
}

# Every stdout line is a JSON object.
expect_json_lines()
{
	"$PY" -c '
import json, sys
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    if not isinstance(json.loads(line), dict):
        sys.exit(f"line {n} is not an object")
' "$T/out" || fail "stdout is not JSON lines: $(head -c 600 "$T/out")"
}

# A session for user u1 and chat $1; its id in $session.
create_session()
{
	sbx rpc session/create "{\"key\": {\"user\": \"u1\", \"chat\": \"$1\"}}"
	expect_status 0
	session=$(json_at 'm["result"]["sessionId"]' '$')
}

test_rpc_help_prints_usage()
{
	sbx rpc --help
	expect_status 0
	expect_out_contains "agent-sandbox rpc [--socket PATH] [--owner NAME] [--follow] METHOD [JSON]"
}

test_rpc_refuses_bad_arguments_with_status_2()
{
	use_private_rundir
	sbx rpc
	expect_status 2
	expect_err_contains "which method?"
	sbx rpc session/list '[1]'
	expect_status 2
	expect_err_contains "must be an object"
	sbx rpc session/list '{"a": 1,
  "b": tru}'
	expect_status 2
	expect_err_contains "line 2 column"
	sbx rpc --bogus session/list
	expect_status 2
	expect_err_contains 'unknown flag "--bogus"'
	sbx rpc session/list '{}' extra
	expect_status 2
	sbx rpc session/list --socket
	expect_status 2
	expect_err_contains "--socket needs a value"
}

test_rpc_without_a_daemon_exits_1_and_says_how_to_start_one()
{
	use_private_rundir
	sbx rpc session/list
	expect_status 1
	expect_err_contains "api.sock"
	expect_err_contains "agent-sandbox serve"
	sbx rpc --socket "$T/none.sock" session/list
	expect_status 1
	expect_err_contains "$T/none.sock"
}

# Without a runtime directory the default socket is under /tmp, where
# another user may have been first: rpc and the Python example talk to no
# daemon of another uid there, and send it nothing.
test_rpc_refuses_a_default_socket_another_user_listens_on()
{
	[ "$(id -u)" -eq 0 ] || skip "listening as another user needs root"
	other=${TEST_USER:-agent-sandbox-test}
	id "$other" >/dev/null 2>&1 || skip "no user $other"
	use_private_rundir
	mkdir -m 700 "$XDG_RUNTIME_DIR/agent-sandbox"
	chmod 755 "$T"
	mkdir -m 777 "$T/other"
	setpriv --reuid="$other" --regid="$other" --clear-groups "$PY" -c '
import os, socket, sys
d = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
s.bind(d + "/api.sock")
s.listen(1)
open(d + "/ready", "w").close()
got = b""
for _ in range(2):
    c, _ = s.accept()
    c.settimeout(2)
    try:
        while True:
            b = c.recv(4096)
            if not b:
                break
            got += b
    except socket.timeout:
        pass
open(d + "/got.tmp", "wb").write(got)
os.rename(d + "/got.tmp", d + "/got")
' "$T/other" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	wait_file "$T/other/ready"
	mv "$T/other/api.sock" "$XDG_RUNTIME_DIR/agent-sandbox/api.sock"
	sbx rpc session/list
	expect_status 2
	expect_err_contains "runs as uid $(id -u "$other"), not as this user"
	# So does the Python example.
	rc=0
	"$PY" "$EXAMPLE" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 1
	expect_err_contains "runs as uid $(id -u "$other"), not as us"
	wait_file "$T/other/got"
	[ ! -s "$T/other/got" ] || fail "a client sent the other user's daemon: $(cat "$T/other/got")"
}

test_rpc_prints_the_result_as_one_json_line()
{
	start_daemon
	sbx rpc session/list
	expect_status 0
	[ "$(wc -l <"$T/out")" -eq 1 ] || fail "expected one line: $(out)"
	expect_json_lines
	[ "$(json_at 'm["jsonrpc"], type(m["result"]["sessions"]).__name__' 1)" = "('2.0', 'list')" ] ||
		fail "not a session/list result: $(out)"
	# --socket names the same daemon.
	sbx rpc --socket "$SOCK" session/list
	expect_status 0
	expect_out_contains '"sessions"'
}

test_rpc_sends_a_callers_initialize_alone()
{
	start_daemon
	sbx rpc initialize '{"clientInfo": {"name": "t", "version": "1"}, "protocolVersion": "1"}'
	expect_status 0
	[ "$(json_at 'm["result"]["protocolVersion"]' '$')" = 1 ] || fail "no initialize result: $(out)"
}

# Params longer than one argument may be (128 KiB) come on stdin: here
# 600 kB for a process's stdin. (Detached: a process dies with the
# connection that started it, and rpc's ends with the call.)
test_rpc_reads_params_from_stdin()
{
	start_daemon
	create_session stdin
	sbx rpc process/start "{\"sessionId\": \"$session\", \"argv\": [\"sh\", \"-c\", \"cat >big; mv big done\"], \"stdin\": true, \"detached\": true}"
	expect_status 0
	process=$(json_at 'm["result"]["processId"]' '$')
	"$PY" -c '
import base64, json, sys
print(json.dumps({"processId": sys.argv[1], "eof": True,
                  "dataBase64": base64.b64encode(b"y" * 600000).decode()}))
' "$process" >"$T/params"
	rc=0
	"$AS" rpc process/write - <"$T/params" >"$T/out" 2>"$T/err" || rc=$?
	expect_status 0
	for _ in $(seq 100); do
		sbx rpc process/exec "{\"sessionId\": \"$session\", \"argv\": [\"sh\", \"-c\", \"wc -c <done\"]}"
		[ "$(json_at 'm["result"]["exitCode"]' '$')" = 0 ] && break
		sleep 0.05
	done
	[ "$(json_at 'm["result"]["stdoutBase64"]' '$')" = "$(echo 600000 | base64)" ] ||
		fail "not every byte arrived: $(out)"
}

test_rpc_exits_1_with_the_error_line_for_an_error_response()
{
	start_daemon
	sbx rpc session/get '{"sessionId": "no-such-session"}'
	expect_status 1
	expect_json_lines
	[ "$(json_at 'm["error"]["code"], m["error"]["data"]["kind"]' '$')" = "(-32002, 'not_found')" ] ||
		fail "expected a not-found error line: $(out)"
	expect_err_contains "agent-sandbox: session/get: "
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "expected one line on stderr: $(err)"
}

test_rpc_follow_prints_output_until_the_process_exits()
{
	start_daemon
	create_session follow
	sbx rpc --follow process/start "{\"sessionId\": \"$session\", \"argv\": [\"sh\", \"-c\", \"echo one; sleep 0.3; echo two; echo err >&2; exit 3\"]}"
	expect_status 0
	expect_json_lines
	# The response first, then output, and the exit last.
	pid=$(json_at 'm["result"]["processId"]' 1)
	[ "$(json_at 'm["method"], m["params"]["processId"], m["params"]["exitCode"]' '$')" = "('process/exited', '$pid', 3)" ] ||
		fail "the last line is not the process's exit: $(tail -1 "$T/out")"
	"$PY" -c '
import base64, json, sys
out = {"stdout": b"", "stderr": b""}
seqs = []
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("method") == "process/output":
        out[m["params"]["stream"]] += base64.b64decode(m["params"]["dataBase64"])
        seqs.append(m["params"]["seq"])
assert out == {"stdout": b"one\ntwo\n", "stderr": b"err\n"}, out
assert seqs == list(range(1, len(seqs) + 1)), seqs
' "$T/out" || fail "output not intact and in order: $(out)"
	# Without --follow the call returns at once, with the response.
	sbx rpc process/start "{\"sessionId\": \"$session\", \"argv\": [\"sleep\", \"5\"]}"
	expect_status 0
	expect_out_lacks process/exited
}

test_rpc_follow_fails_when_the_daemon_goes_away()
{
	start_daemon
	create_session gone
	"$AS" rpc --follow process/start "{\"sessionId\": \"$session\", \"argv\": [\"sh\", \"-c\", \"echo started; exec sleep 30\"]}" \
		>"$T/out" 2>"$T/err" </dev/null &
	client=$!
	for _ in $(seq 300); do
		grep -q process/output "$T/out" && break
		sleep 0.03
	done
	kill -KILL "$daemon_pid"
	rc=0
	wait "$client" || rc=$?
	expect_status 1
	expect_err_contains "the daemon closed the connection"
	expect_out_lacks process/exited
}

test_rpc_owner_names_whose_sessions_a_call_sees()
{
	start_daemon
	sbx rpc --owner alice session/create '{"key": {"user": "u1", "chat": "c1"}}'
	expect_status 0
	alice=$(json_at 'm["result"]["sessionId"]' '$')
	sbx rpc --owner bob session/list
	expect_status 0
	expect_out_lacks "$alice"
	sbx rpc --owner bob session/get "{\"sessionId\": \"$alice\"}"
	[ "$rc" -eq 1 ] || fail "bob reached alice's session: $(out)"
	sbx rpc --owner alice session/list
	expect_status 0
	expect_out_contains "$alice"
}

# Strings the daemon echoes reach rpc's stdout: escape, bidirectional and
# invisible characters, DEL, and a byte that is not UTF-8 arrive as JSON
# escapes, never raw, and each line is still the same JSON (json-c escapes
# C0 controls itself, but passes DEL, U+202E and 0xff through raw). The strings
# come back in process/list's argv, and in fs/list's names of files made
# inside the sandbox (what an agent controls).
hostile='a\033]0;x\007b\342\200\256c\342\200\213d\177e'

expect_no_raw_controls()
{
	LC_ALL=C grep -q "$(printf '\033')" "$T/out" && fail "a raw ESC reached stdout"
	LC_ALL=C grep -q "$(printf '\007')" "$T/out" && fail "a raw BEL reached stdout"
	LC_ALL=C grep -q "$(printf '\342\200\256')" "$T/out" && fail "a raw U+202E reached stdout"
	LC_ALL=C grep -q "$(printf '\342\200\213')" "$T/out" && fail "a raw U+200B reached stdout"
	LC_ALL=C grep -q "$(printf '\177')" "$T/out" && fail "a raw DEL reached stdout"
	LC_ALL=C grep -q "$(printf '\377')" "$T/out" && fail "a byte that is not UTF-8 reached stdout"
	expect_out_contains '\u001b]0;x\u0007b\u202ec\u200bd\u007fe'
	expect_out_contains 'bad\ufffd'
	expect_json_lines
}

test_rpc_escapes_terminal_controls_in_what_the_daemon_sends()
{
	start_daemon
	create_session names
	# Raw bytes in the JSON text: json-c takes them as they are. (printf
	# turns the octal escapes of $hostile into those bytes.)
	# shellcheck disable=SC2059
	sbx rpc process/start "{\"sessionId\": \"$session\", \"argv\": [\"sh\", \"-c\", \"sleep 10\", \"$(printf "$hostile")\", \"$(printf 'bad\377')\"]}"
	expect_status 0
	sbx rpc process/list "{\"sessionId\": \"$session\"}"
	expect_status 0
	expect_no_raw_controls
	[ "$(json_at '[a for p in m["result"]["processes"] for a in p["argv"] if a.startswith("a")]' '$')" = \
		"['a\\x1b]0;x\\x07b\\u202ec\\u200bd\\x7fe']" ] || fail "the string's meaning changed: $(out)"

	# Names of files an agent made.
	cat >"$T/params" <<'EOF'
{"sessionId": "SESSION", "argv": ["sh", "-c", "touch \"$(printf \"$1\")\" \"$(printf \"$2\")\"", "sh", "a\\033]0;x\\007b\\342\\200\\256c\\342\\200\\213d\\177e", "bad\\377"]}
EOF
	sbx rpc process/exec "$(sed "s/SESSION/$session/" "$T/params")"
	expect_status 0
	[ "$(json_at 'm["result"]["exitCode"]' '$')" = 0 ] || fail "touch failed: $(out)"
	sbx rpc fs/list "{\"sessionId\": \"$session\", \"path\": \".\"}"
	expect_status 0
	expect_no_raw_controls
	[ "$(json_at '[e["name"] for e in m["result"]["entries"] if e["name"].startswith("a")]' '$')" = \
		"['a\\x1b]0;x\\x07b\\u202ec\\u200bd\\x7fe']" ] || fail "the name's meaning changed: $(out)"
}

test_python_example_runs_a_session_streams_output_and_reads_a_file()
{
	start_daemon
	rc=0
	"$PY" "$EXAMPLE" --user ex --chat c1 >"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	expect_out_contains "connected to agent-sandbox"
	expect_out_contains "[stdout #1] line 1"
	expect_out_contains "line 3"
	expect_out_contains "] done"
	expect_out_contains "exit code 0"
	expect_out_contains "read back 24 bytes: written by the platform"
	expect_out_contains "session closed, workspace kept"
	# The file is in the workspace on the host, after the close.
	host=$(sed -n 's/.*(on the host: \(.*\))$/\1/p' "$T/out")
	[ -n "$host" ] || fail "no host workspace in the output: $(out)"
	expect_content "$host/notes/hello.txt" "written by the platform"
	# The same user and chat find the same workspace again.
	rc=0
	"$PY" "$EXAMPLE" --user ex --chat c1 >"$T/out2" 2>"$T/err" </dev/null || rc=$?
	expect_status 0
	grep -qF "(on the host: $host)" "$T/out2" || fail "another workspace: $(cat "$T/out2")"
	# No sandbox process is left behind after the close.
	sbx rpc session/list
	expect_status 0
	[ "$(json_at 'sum(s["processes"] for s in m["result"]["sessions"] if s["state"] != "closed")' '$')" = 0 ] ||
		fail "processes left: $(out)"
}

# contrib/agent-sandbox.socket's way of starting the daemon: a listening
# socket passed at the first connection (LISTEN_FDS, LISTEN_PID).
test_serve_started_by_socket_activation_answers_rpc()
{
	command -v systemd-socket-activate >/dev/null || skip "no systemd-socket-activate"
	use_private_rundir
	mkdir -m 700 "$XDG_RUNTIME_DIR/agent-sandbox"
	SOCK="$XDG_RUNTIME_DIR/agent-sandbox/api.sock"
	systemd-socket-activate -l "$SOCK" "$AS" serve >"$T/serve.out" 2>"$T/serve.err" </dev/null &
	echo $! >>"$T/pids"
	wait_file "$SOCK"
	sbx rpc session/list
	expect_status 0
	expect_out_contains '"sessions"'
	create_session activated
	sbx rpc process/exec "{\"sessionId\": \"$session\", \"argv\": [\"echo\", \"via activation\"]}"
	expect_status 0
	[ "$(json_at 'm["result"]["stdoutBase64"]' '$')" = "$(echo 'via activation' | base64)" ] ||
		fail "unexpected exec result: $(out)"
}

# The unit files as systemd reads them, with ExecStart found.
test_contrib_units_pass_systemd_verify()
{
	command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
	use_private_rundir
	mkdir -p "$HOME/.local/bin"
	ln -s "$AS" "$HOME/.local/bin/agent-sandbox"
	cp "$ROOT/contrib/agent-sandbox.service" "$ROOT/contrib/agent-sandbox.socket" "$T/"
	rc=0
	systemd-analyze verify --user "$T/agent-sandbox.service" "$T/agent-sandbox.socket" \
		>"$T/out" 2>"$T/err" || rc=$?
	expect_status 0
	[ ! -s "$T/err" ] || fail "systemd-analyze: $(err)"
	# Without the binary, systemd says so: the check looks at ExecStart.
	rm "$HOME/.local/bin/agent-sandbox"
	rc=0
	systemd-analyze verify --user "$T/agent-sandbox.service" >"$T/out" 2>"$T/err" || rc=$?
	expect_err_contains "$HOME/.local/bin/agent-sandbox"
}

test_python_example_exits_1_on_an_error()
{
	use_private_rundir
	rc=0
	"$PY" "$EXAMPLE" --socket "$T/none.sock" >"$T/out" 2>"$T/err" </dev/null || rc=$?
	expect_status 1
	expect_err_contains "serve_client.py: "
}

run_tests
