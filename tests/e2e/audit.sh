#!/bin/sh
# The audit log: a start and an end record per run with the real exit
# status, events reported from inside, whole lines under concurrent runs,
# no access from inside, `log` and its flags, and "audit": false.
. "$(dirname "$0")/../lib.sh"

log_file() { echo "$HOME/.local/state/agent-sandbox/audit.jsonl"; }

# Prints field $2 of every record whose event is $1, one per line.
records()
{
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["event"] == sys.argv[2]:
        print(json.dumps(r[sys.argv[3]]) if sys.argv[3] in r else "-")
' "$(log_file)" "$1" "$2"
}

test_run_writes_start_and_end_records_with_exit_status()
{
	echo s >.env
	MY_TOKEN=t sbx sh -c 'exit 7'
	expect_status 7
	[ "$(wc -l <"$(log_file)")" -eq 2 ] || fail "expected 2 records: $(cat "$(log_file)")"
	[ "$(records start command)" = '["sh", "-c", "exit 7"]' ] || fail "command: $(records start command)"
	[ "$(records start cwd)" = "\"$T/work\"" ] || fail "cwd: $(records start cwd)"
	[ "$(records start secrets_masked)" = 1 ] || fail "masked: $(records start secrets_masked)"
	records start env_dropped | grep -q '"MY_TOKEN"' || fail "env: $(records start env_dropped)"
	records start policy_digest | grep -Eqx '"sha256:[0-9a-f]{64}"' ||
		fail "policy digest: $(records start policy_digest)"
	[ "$(records end status)" = 7 ] || fail "status: $(records end status)"
	[ "$(records start session)" = "$(records end session)" ] || fail "session ids differ"
	! grep -q '"t"' "$(log_file)" || fail "an env value reached the log"
}

test_signal_death_is_recorded()
{
	sbx sh -c 'kill -TERM $$'
	expect_status 143
	[ "$(records end status)" = 143 ] || fail "status: $(records end status)"
	[ "$(records end signal)" = 15 ] || fail "signal: $(records end signal)"
}

test_blocked_command_reported_from_inside_is_logged()
{
	# The command inherits a socket connected to the audit socket at
	# descriptor 1000: what it sends is checked and marked as from inside.
	sbx /usr/bin/python3 -c '
import json, socket
s = socket.socket(fileno=1000)
for msg in [{"event": "blocked", "command": "git", "argv": ["git", "push", "-f"], "reason": "force push"},
            {"event": "start", "command": "forged", "argv": [], "reason": "x"},
            "not an object"]:
    s.send(json.dumps(msg).encode())
s.send(b"{\"event\": \"blocked\", \"command\": \"a\", \"argv\": [], \"reason\": \"r\"} trailing")
'
	expect_status 0
	[ "$(records blocked argv)" = '["git", "push", "-f"]' ] || fail "blocked: $(cat "$(log_file)")"
	[ "$(records blocked reason)" = '"force push"' ] || fail "reason"
	[ "$(records start command | wc -l)" -eq 1 ] || fail "a forged start record was logged"
	[ "$(wc -l <"$(log_file)")" -eq 3 ] || fail "invalid events were logged: $(cat "$(log_file)")"
	sbx log --blocked
	expect_status 0
	expect_out_contains "git push -f: force push"
	expect_out_lacks " start "
}

test_commands_refused_by_wrappers_are_logged()
{
	git init -q . || fail "git init failed"
	sbx --cmd rm=false sh -c 'rm -f x; git clean -fd; exit 0'
	expect_status 0
	records blocked command | grep -qx '"rm"' || fail "no record for rm: $(cat "$(log_file)")"
	records blocked argv | grep -qF '["git", "clean", "-fd"]' ||
		fail "no record for git clean -fd: $(cat "$(log_file)")"
	sbx log --blocked
	expect_out_contains "git clean -fd"
}

test_reports_from_inside_are_capped_per_session()
{
	# A sandbox flooding the audit socket cannot fill the disk: past the
	# limit reports are counted, not written, and the end record says so.
	sbx /usr/bin/python3 -c '
import json, socket
s = socket.socket(fileno=1000)
msg = json.dumps({"event": "blocked", "command": "x", "argv": ["x"], "reason": "flood"}).encode()
for i in range(1200):
    s.send(msg)
'
	expect_status 0
	[ "$(records blocked reason | wc -l)" -eq 1000 ] ||
		fail "expected 1000 blocked records, got $(records blocked reason | wc -l)"
	[ "$(records end blocked_dropped)" = 200 ] || fail "end: $(records end blocked_dropped)"
	sbx log -n 1
	expect_out_contains "200 blocked reports over the limit not logged"
}

test_concurrent_runs_do_not_interleave_lines()
{
	long=$(printf 'x%.0s' $(seq 1 3000))
	for i in 1 2 3 4 5 6; do
		"$AS" sh -c 'for j in 1 2 3; do :; done' "$long-$i" </dev/null >/dev/null 2>&1 &
	done
	wait
	[ "$(wc -l <"$(log_file)")" -eq 12 ] || fail "expected 12 records"
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    json.loads(line)
' "$(log_file)" || fail "a line is not a whole JSON record"
	[ "$(records end status | sort -u)" = 0 ] || fail "statuses: $(records end status)"
}

test_audit_log_cannot_be_touched_from_inside()
{
	sbx true
	log=$(log_file)
	before=$(cat "$log")
	sbx sh -c "cat '$log'; echo forged >> '$log'; rm -f '$log'; ls -A '$(dirname "$log")'"
	[ -z "$(out)" ] || fail "the log is visible inside: $(out)"
	! grep -qx forged "$log" || fail "a record was forged"
	[ "$(head -2 "$log")" = "$before" ] || fail "earlier records changed"
}

test_audit_false_turns_logging_off()
{
	echo '{"audit": false}' >.agent-sandbox.json
	approve_config
	sbx true
	expect_status 0
	expect_no_file "$(log_file)"
}

test_xdg_state_home_locates_the_log()
{
	XDG_STATE_HOME="$T/state" sbx true
	expect_status 0
	expect_file "$T/state/agent-sandbox/audit.jsonl"
	expect_no_file "$(log_file)"
}

test_policy_and_dry_run_write_no_records()
{
	sbx policy
	sbx --dry-run true
	expect_no_file "$(log_file)"
}

test_log_prints_table_json_and_last_n()
{
	sbx true
	sbx sh -c 'exit 3'
	sbx log
	expect_status 0
	expect_out_contains "exit status 3 after"
	[ "$(out | head -1 | cut -c1-4)" = TIME ] || fail "no header: $(out)"
	sbx log -n 1
	[ "$(out | wc -l)" -eq 2 ] || fail "-n 1 printed $(out | wc -l) lines"
	expect_out_contains "exit status 3"
	sbx log --json -n 2
	[ "$(out | wc -l)" -eq 2 ] || fail "--json -n 2 printed $(out | wc -l) lines"
	out | head -1 | grep -q '"event":"start"' || fail "not raw JSON: $(out)"
}

test_log_says_when_there_is_no_log_yet()
{
	sbx log
	expect_status 0
	expect_out_contains "no audit records yet"
}

test_log_flags_are_refused_for_other_verbs()
{
	sbx --json true
	expect_status 2
	expect_err_contains "log"
	sbx log -n many
	expect_status 2
	expect_err_contains "number"
}

# A full disk: the record that no longer fits is cut short and counted, the
# command's exit status is still the run's, stderr and the end record (once
# there is room again) say what was lost, and the cut does not spoil later
# records.
# The log lives on a tiny tmpfs, which only root may mount.
test_full_disk_counts_lost_records_and_keeps_the_rest_whole()
{
	[ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
	disk="$T/disk"
	mkdir "$disk"
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$disk" || fail "cannot mount a tmpfs"
	trap 'cd /; umount "$disk" 2>/dev/null || umount -l "$disk"' EXIT
	mkdir "$disk/work" && cd "$disk/work" || fail "no project directory"
	export XDG_STATE_HOME="$disk/state"
	log="$disk/state/agent-sandbox/audit.jsonl"
	sbx true
	expect_status 0
	# Pad the log to 100 bytes short of a page and fill every other page:
	# the next record starts in the page's tail and stops where it ends.
	size=$(stat -c %s "$log")
	python3 -c '
import sys
n = 4096 - 100 - int(sys.argv[2]) - len("{\"event\":\"pad\",\"pad\":\"\"}\n")
open(sys.argv[1], "a").write("{\"event\":\"pad\",\"pad\":\"" + "x" * n + "\"}\n")
' "$log" "$size"
	[ "$(stat -c %s "$log")" -eq 3996 ] || fail "padding went wrong: $(stat -c %s "$log")"
	dd if=/dev/zero of=filler bs=4096 2>/dev/null
	[ "$(df --output=avail "$disk" | tail -1)" -eq 0 ] || fail "the disk is not full: $(df "$disk")"
	before=$(cat "$log")

	sbx sh -c 'rm filler; exit 3'
	expect_status 3
	expect_err_contains "agent-sandbox: audit log: 1 record could not be written: No space left on device"
	[ "$(head -c 3996 "$log")" = "$before" ] || fail "earlier records changed"
	python3 -c '
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert len(lines) == 6 and lines[5] == "", lines[3:]
for line in lines[:3]:
    json.loads(line)
cut = lines[3]
assert len(cut) == 100 and cut.startswith("{\"time\":"), "cut record: %r" % cut
try:
    json.loads(cut)
    sys.exit("the cut record parses: %r" % cut)
except ValueError:
    pass
end = json.loads(lines[4])
assert end["event"] == "end" and end["status"] == 3, end
assert end["write_errors"] == 1, end
assert end["write_error"] == "No space left on device", end
' "$log" || fail "log after the full disk: $(tail -c 600 "$log")"

	sbx sh -c 'exit 4'
	expect_status 4
	expect_err_lacks "audit log"
	python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
start, end = json.loads(lines[-2]), json.loads(lines[-1])
assert start["event"] == "start" and end["event"] == "end" and end["status"] == 4, lines[-2:]
assert "write_errors" not in end, end
' "$log" || fail "the next run's records: $(tail -c 600 "$log")"
}

run_tests
