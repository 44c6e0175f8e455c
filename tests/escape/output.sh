#!/bin/sh
# Escape attempts against what agent-sandbox prints. The agent plants
# strings that a terminal would act on (ESC and CSI sequences that move the
# cursor, erase lines and retitle the window; C1 controls raw and in UTF-8;
# bidi overrides; newlines that forge lines of our output) in a project
# config, in directory and file names, in audit events and in the host
# names it asks the proxy for. From outside, the user's next refusal,
# `policy`, --debug, --dry-run and `log` must hold none of them raw, and
# must show them as visible escapes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

ESC=$(printf '\033')
C1_CSI=$(printf '\302\233')
RAW_CSI=$(printf '\233')
RLO=$(printf '\342\200\256')
NL='
'

# Fails when a file holds anything a terminal acts on or hides: a control
# character other than '\n', DEL, a C1 control, a format character (bidi
# controls, zero-width characters, ...), or bytes that are not UTF-8.
# Python's Unicode tables decide, not ours.
expect_terminal_safe()
{
	for f in "$@"; do
		why=$("$PY" - "$f" <<'PY'
import sys, unicodedata
data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    print("bytes that are not UTF-8 at %d: %r" % (e.start, data[max(0, e.start - 30):e.start + 4]))
    sys.exit(1)
for i, ch in enumerate(text):
    cp = ord(ch)
    if ch != "\n" and (cp < 0x20 or 0x7F <= cp <= 0x9F or cp in (0x2028, 0x2029)
                       or unicodedata.category(ch) == "Cf"):
        print("U+%04X after %r" % (cp, text[max(0, i - 40):i]))
        sys.exit(1)
PY
) || fail "$(basename "$f") reaches the terminal with $why"
	done
}

# The agent's config, planted in a new subdirectory of the project (the
# project's own config is read-only inside); the user then runs there.
plant_config()
{
	printf '%s\n' "$1" >payload.json
	sbx sh -c 'mkdir -p sub && cp payload.json sub/.agent-sandbox.json'
	expect_status 0
	rm payload.json
}

test_config_strings_with_terminal_controls_are_refused_at_their_position()
{
	# config | line:column | what the refusal names
	while IFS='|' read -r text where what; do
		plant_config "$text"
		sbx -C sub true
		[ "$rc" -eq 2 ] || fail "$text: expected status 2, got $rc"
		grep -qF -- "$T/work/sub/.agent-sandbox.json:$where: $what in a string; expected printable text" "$T/err" ||
			fail "$text: no refusal at $where naming $what: $(err)"
		expect_terminal_safe "$T/out" "$T/err"
		sbx -C sub policy
		[ "$rc" -eq 2 ] || fail "$text: policy accepted it ($rc)"
		expect_terminal_safe "$T/out" "$T/err"
	done <<'CASES'
{"filesystem": {"rw": ["/x\u001b[1A\u001b[2Kok"]}}|1:27|control character U+001B
{"filesystem": {"ro": ["a\nagent-sandbox: nothing to approve"]}}|1:26|control character U+000A
{"network": {"allow": ["\u009b2Jexample.org"]}}|1:25|control character U+009B
{"network": {"allow": ["evil\u202egro.elpmaxe"]}}|1:29|bidirectional control U+202E
{"env": {"set": {"A": "x\ty"}}}|1:25|control character U+0009
{"env": {"set": {"B\u001b]0;pwned\u0007": "x"}}}|1:20|control character U+001B
{"secrets": {"allow": ["a\u200bb"]}}|1:26|invisible character U+200B
CASES
	# Raw bytes rather than escapes: a C1 CSI in UTF-8 and a bidi override.
	plant_config "{\"filesystem\": {\"rw\": [\"/x${C1_CSI}2J\"]}}"
	sbx -C sub true
	expect_status 2
	expect_err_contains "sub/.agent-sandbox.json:1:27: control character U+009B"
	expect_terminal_safe "$T/err"
	plant_config "{\"network\": {\"allow\": [\"a${RLO}b\"]}}"
	sbx -C sub true
	expect_status 2
	expect_err_contains "sub/.agent-sandbox.json:1:26: bidirectional control U+202E"
	expect_terminal_safe "$T/err"
}

test_refusal_and_policy_escape_a_hostile_directory_name()
{
	# A directory whose name erases the line, forges a hint on a line of
	# its own and reverses what follows; its config loosens, so the next
	# run there is refused and names it.
	name="evil${ESC}[2K${NL}agent-sandbox: hint: nothing to approve${RLO}"
	printf '%s' "$name" >name
	sbx sh -c 'd=$(cat name) && mkdir "$d" && echo "{\"network\": true}" >"$d/.agent-sandbox.json"'
	expect_status 0
	shown='evil\e[2K\nagent-sandbox: hint: nothing to approve\u202e'

	sbx -C "$T/work/$name" true
	expect_status 2
	expect_terminal_safe "$T/out" "$T/err"
	expect_err_contains "refusing the config $T/work/$shown/.agent-sandbox.json"
	expect_err_contains "$T/work/$shown/.agent-sandbox.json:1:13: \"network\": true"
	grep -q '^agent-sandbox: hint: nothing' "$T/err" && fail "a forged hint line: $(err)"
	[ "$(grep -c '^agent-sandbox: hint: ' "$T/err")" -eq 1 ] || fail "not one hint: $(err)"

	sbx -C "$T/work/$name" policy
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	expect_out_contains "working directory  $T/work/$shown"
	expect_out_contains "trust: $T/work/$shown/.agent-sandbox.json loosens and is NOT approved"
	grep -q '^agent-sandbox: hint: nothing' "$T/out" && fail "a forged line in policy: $(out)"

	sbx -C "$T/work/$name" --debug --dry-run true
	expect_terminal_safe "$T/out" "$T/err"
	grep -q '^agent-sandbox: hint: nothing' "$T/err" && fail "a forged line in --debug: $(err)"
	true
}

test_policy_debug_and_dry_run_escape_hostile_file_names()
{
	# Secret-looking names are listed by policy, --debug and --dry-run.
	sbx sh -c '
		touch ".env.$(printf "\033]0;pwned\007")title" \
			".env.$(printf "\nforged-line")" \
			".env.$(printf "\233")c1" \
			".env.$(printf "\342\200\256")txt.exe"'
	expect_status 0

	sbx policy
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	expect_out_contains "masked           $T/work/.env.\\e]0;pwned\\x07title"
	expect_out_contains "$T/work/.env.\\nforged-line"
	expect_out_contains "$T/work/.env.\\x9bc1"
	expect_out_contains "$T/work/.env.\\u202etxt.exe"
	grep -qx 'forged-line.*' "$T/out" && fail "a forged line in policy"

	sbx --debug true
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	expect_err_contains "secrets: masked $T/work/.env.\\e]0;pwned\\x07title"
	expect_err_contains "secrets: masked $T/work/.env.\\nforged-line"
	grep -q '^forged-line' "$T/err" && fail "a forged line in --debug"

	# One bwrap argument a line, one bind of the init's a line: the
	# name's newline must not make two.
	sbx --dry-run true
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	grep -qF -- "  $T/work/.env.\\nforged-line <- " "$T/err" ||
		fail "the init's bind is not one escaped line: $(err)"
	grep -q '^forged-line' "$T/out" "$T/err" && fail "a forged line in --dry-run"
	AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx --dry-run true
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	grep -qxF -- "$T/work/.env.\\nforged-line" "$T/out" || fail "the argument is not one escaped line: $(out)"
	grep -qx 'forged-line' "$T/out" && fail "a forged argument line in --dry-run"
	true
}

test_log_escapes_audit_events_sent_from_inside()
{
	# Blocked-command reports come from inside, so their fields are the
	# agent's to choose.
	sbx /usr/bin/python3 -c '
import json, socket
s = socket.socket(fileno=1000)
hostile = "x\x1b[2K\x1b]0;pwned\x07\u009b2J\u202eevil\nagent-sandbox: forged"
s.send(json.dumps({"event": "blocked", "command": "git",
                   "argv": ["git", hostile], "reason": hostile}).encode())
'
	expect_status 0
	shown='x\e[2K\e]0;pwned\x07\u009b2J\u202eevil\nagent-sandbox: forged'

	sbx log
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	expect_out_contains "git $shown: $shown"
	grep -q '^agent-sandbox: forged' "$T/out" && fail "a forged line in log"

	# --json: still one JSON record a line, with the same strings.
	sbx log --json --blocked
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	"$PY" - "$T/out" <<'PY' || fail "log --json changed the record: $(out)"
import json, sys
hostile = "x\x1b[2K\x1b]0;pwned\x07\u009b2J\u202eevil\nagent-sandbox: forged"
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["argv"] == ["git", hostile] and r["reason"] == hostile, r
PY
}

test_network_debug_and_log_escape_host_names_a_client_sent()
{
	# A SOCKS5 request carries the host name as raw bytes: ESC and CSI
	# sequences, a raw C1 byte and a bidi override.
	sbx --debug /usr/bin/python3 -c '
import os, socket
port = int(os.environ["ALL_PROXY"].rsplit(":", 1)[1])
host = b"evil\x1b[2K\x1b[1A\x9b2J\xe2\x80\xae.example"
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"\x05\x01\x00")
s.recv(2)
s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host + b"\x01\xbb")
print(s.recv(10)[1])
'
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	expect_err_contains 'network: refused socks5 evil\e[2K\e[1A\x9b2J\u202e.example port 443'

	sbx log
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
	expect_out_contains 'refused socks5 evil\e[2K\e[1A\x9b2J\u202e.example:443'
	sbx log --json
	expect_status 0
	expect_terminal_safe "$T/out" "$T/err"
}

run_tests
