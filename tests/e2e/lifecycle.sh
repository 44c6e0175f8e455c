#!/bin/sh
# Named sandboxes: the record each run keeps while it runs, `list` and
# `stop`. Each test has a runtime directory of its own (XDG_RUNTIME_DIR),
# so that `stop --all` here never reaches another run's sandboxes, and
# checks what happened from outside: the host's /proc and the record files.
. "$(dirname "$0")/../lib.sh"

PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

# How many processes on the host run exactly `sleep $1`: a sandbox's
# processes, seen from outside.
count_sleeps()
{
	"$PY" -c '
import os, sys
want = [b"sleep", sys.argv[1].encode()]
n = 0
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            args = f.read().split(b"\0")[:-1]
    except OSError:
        continue
    n += args == want
print(n)
' "$1"
}

# A command that starts a background child that dies on SIGTERM and one
# that ignores it, both `sleep $1`, then says it is ready.
tree_cmd()
{
	echo "sleep $1 & sh -c 'trap \"\" TERM; exec sleep $1' & touch ready-$1; wait"
}

# Starts two sandboxes, NAME1 running tree_cmd N1 and NAME2 tree_cmd N2,
# each after the shell text $5 (e.g. ignoring SIGTERM), and waits until
# both run; their supervisors' pids in $p1 and $p2.
start_two()
{
	bg_sbx a --name "$1" sh -c "${5:-}$(tree_cmd "$2")"
	p1=$bg_pid
	bg_sbx b --name "$3" sh -c "${5:-}$(tree_cmd "$4")"
	p2=$bg_pid
	wait_file "ready-$2"
	wait_file "ready-$4"
}

test_list_shows_two_running_sandboxes_with_their_fields()
{
	use_private_rundir
	mkdir -p one two/sub
	(cd one && bg_sbx a --name alpha --network=false sh -c 'touch ready-a; exec sleep 3101' &&
		echo "$bg_pid" >"$T/pid-a")
	(cd two/sub && bg_sbx b sh -c 'touch ready-b; exec sleep 3102' &&
		echo "$bg_pid" >"$T/pid-b")
	wait_file one/ready-a
	wait_file two/sub/ready-b
	sbx list --json
	expect_status 0
	"$PY" - "$T/out" "$(cat "$T/pid-a")" "$(cat "$T/pid-b")" "$T/work" <<'EOF' || fail "list --json: $(out)"
import json, sys, datetime
items = json.load(open(sys.argv[1]))
assert [i["name"] for i in items] == ["alpha", "sub"], items
a, b = items
work = sys.argv[4]
assert a["pid"] == int(sys.argv[2]) and b["pid"] == int(sys.argv[3]), items
assert a["project"] == work + "/one" and a["workdir"] == work + "/one", a
assert b["project"] == work + "/two/sub" and b["workdir"] == work + "/two/sub", b
assert a["branch"] is None and b["branch"] is None
assert a["command"] == ["sh", "-c", "touch ready-a; exec sleep 3101"], a
assert a["network"] == "none" and b["network"] == "filtered", items
started = datetime.datetime.strptime(a["started"], "%Y-%m-%dT%H:%M:%SZ")
age = datetime.datetime.utcnow() - started
assert abs(age.total_seconds()) < 120, a["started"]
assert isinstance(a["limits"], dict) and a["limits"].get("pids", 0) > 0, a
assert set(a) >= {"name", "pid", "project", "branch", "workdir", "command", "network",
                  "started", "limits"}
EOF
	sbx list
	expect_status 0
	expect_out_contains "NAME"
	grep -q "^alpha  *$(cat "$T/pid-a")  *$T/work/one  *-  *$T/work/one  *none  .*sh -c touch" "$T/out" ||
		fail "table row of alpha: $(out)"
	grep -q "^sub  *$(cat "$T/pid-b")  .* filtered " "$T/out" || fail "table row of sub: $(out)"
}

test_list_escapes_terminal_controls_from_the_record()
{
	use_private_rundir
	bg_sbx a --name esc sh -c "touch ready; exec sleep 3111" "$(printf 'x\033]0;owned\007y')"
	wait_file ready
	sbx list
	expect_out_contains 'x\e]0;owned\x07y'
	! grep -q "$(printf '\033')" "$T/out" || fail "list printed a raw escape"
	sbx list --json
	! grep -q "$(printf '\033')" "$T/out" || fail "list --json printed a raw escape"
	"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" || fail "not JSON: $(out)"
}

test_stop_ends_the_whole_tree_and_leaves_the_other_running()
{
	use_private_rundir
	start_two victim 3201 bystander 3202
	victim=$p1
	bystander=$p2
	[ "$(count_sleeps 3201)" -eq 2 ] || fail "expected 2 processes of victim, saw $(count_sleeps 3201)"
	sbx stop victim --timeout 5
	expect_status 0
	expect_out_contains "victim: stopped"
	wait_gone "$victim"
	[ "$(count_sleeps 3201)" -eq 0 ] || fail "processes of the stopped sandbox are left"
	[ "$(count_sleeps 3202)" -eq 2 ] || fail "the other sandbox lost processes"
	kill -0 "$bystander" || fail "the other sandbox's supervisor is gone"
	expect_no_file "$STATE/victim.json"
	expect_file "$STATE/bystander.json"
	sbx list
	expect_out_lacks victim
	expect_out_contains bystander
	grep -q "victim was stopped by agent-sandbox stop" "$T/a.err" || fail "run did not say: $(cat "$T/a.err")"
}

test_stop_kills_after_the_grace_when_the_command_ignores_sigterm()
{
	use_private_rundir
	bg_sbx a --name stubborn sh -c "trap '' TERM; $(tree_cmd 3301)"
	pid=$bg_pid
	wait_file ready-3301
	start=$(date +%s)
	sbx stop stubborn --timeout 1
	expect_status 3
	expect_out_contains "stubborn: killed"
	[ $(($(date +%s) - start)) -lt 5 ] || fail "stop took too long"
	wait_gone "$pid"
	[ "$(count_sleeps 3301)" -eq 0 ] || fail "processes of the killed sandbox are left"
	expect_no_file "$STATE/stubborn.json"
}

test_stop_reaches_a_supervisor_that_holds_an_injected_key()
{
	use_private_rundir
	# Holding the key, the supervisor is not dumpable: its exe and
	# namespaces are closed to the user, and stop checks what it can.
	ANTHROPIC_API_KEY=sk-ant-lifecycle-test-key bg_sbx a --name keyed --credential anthropic \
		sh -c "$(tree_cmd 3351)"
	pid=$bg_pid
	wait_file ready-3351
	sbx stop keyed --timeout 5
	expect_status 0
	expect_out_contains "keyed: stopped"
	wait_gone "$pid"
	[ "$(count_sleeps 3351)" -eq 0 ] || fail "processes of the stopped sandbox are left"
}

test_stop_all_ends_every_sandbox()
{
	use_private_rundir
	start_two first 3401 second 3402
	sbx stop --all --timeout 5
	expect_status 0
	expect_out_contains "first: stopped"
	expect_out_contains "second: stopped"
	wait_gone "$p1"
	wait_gone "$p2"
	[ "$(count_sleeps 3401)$(count_sleeps 3402)" = 00 ] || fail "processes are left"
	sbx list
	expect_out ""
}

test_stop_all_gives_every_sandbox_the_same_grace()
{
	use_private_rundir
	start_two slow1 3451 slow2 3452 "trap '' TERM; "
	start=$(date +%s%N)
	sbx stop --all --timeout 2
	took=$((($(date +%s%N) - start) / 1000000))
	expect_status 3
	expect_out_contains "slow1: killed"
	expect_out_contains "slow2: killed"
	# One grace for both (2 s), not one each (4 s).
	[ "$took" -lt 3800 ] || fail "stop --all took $took ms"
	wait_gone "$p1"
	wait_gone "$p2"
	[ "$(count_sleeps 3451)$(count_sleeps 3452)" = 00 ] || fail "processes are left"
}

test_stop_is_recorded_in_the_audit_log()
{
	use_private_rundir
	bg_sbx a --name audited sh -c 'touch ready; exec sleep 3501'
	pid=$bg_pid
	wait_file ready
	sbx stop audited
	expect_status 0
	wait_gone "$pid"
	sbx log --json -n 1
	expect_out_contains '"event":"end"'
	expect_out_contains '"stopped":true'
}

test_record_is_removed_when_the_run_ends()
{
	use_private_rundir
	sbx --name done true
	expect_status 0
	sbx --name failed no-such-command-here
	expect_status 127
	sbx --name exits sh -c 'exit 7'
	expect_status 7
	[ -z "$(ls "$STATE" | grep -E '\.(json|sock)$')" ] || fail "records left: $(ls "$STATE")"
}

test_stale_record_is_cleaned_after_the_supervisor_is_killed()
{
	use_private_rundir
	bg_sbx a --name doomed sh -c 'touch ready; exec sleep 3601'
	pid=$bg_pid
	wait_file ready
	expect_file "$STATE/doomed.json"
	kill -9 "$pid"
	wait_gone "$pid"
	expect_file "$STATE/doomed.json"
	sbx list
	expect_status 0
	expect_out ""
	expect_no_file "$STATE/doomed.json"
	# The name is free again.
	sbx --name doomed true
	expect_status 0
}

test_stale_record_with_a_reused_pid_is_cleaned()
{
	use_private_rundir
	bg_sbx a --name reused sh -c 'touch ready; exec sleep 3701'
	pid=$bg_pid
	wait_file ready
	# The same pid, started at another time: what a reused pid looks like.
	"$PY" - "$STATE/reused.json" <<'EOF'
import json, os, sys
r = json.load(open(sys.argv[1]))
r["pid_start"] += 1
open(sys.argv[1] + ".new", "w").write(json.dumps(r))
os.rename(sys.argv[1] + ".new", sys.argv[1])
EOF
	sbx list
	expect_out ""
	expect_no_file "$STATE/reused.json"
	sbx stop reused
	expect_status 2
	kill -0 "$pid" || fail "a record that does not match stopped the sandbox"
	kill "$pid"
	wait_gone "$pid"
}

test_stop_unknown_name_exits_2_and_names_the_running_ones()
{
	use_private_rundir
	bg_sbx a --name webapp sh -c 'touch ready; exec sleep 3801'
	pid=$bg_pid
	wait_file ready
	sbx stop webap
	expect_status 2
	expect_err_contains 'no running sandbox named "webap"'
	expect_err_contains "did you mean webapp?"
	expect_err_contains "running: webapp"
	sbx stop webapp nothere
	expect_status 2
	kill -0 "$pid" || fail "stop with an unknown name stopped a sandbox"
	sbx stop
	expect_status 2
	expect_err_contains "give the name of a sandbox, or --all"
	sbx stop webapp --timeout soon
	expect_status 2
	expect_err_contains "expected a number of seconds"
	kill -0 "$pid" || fail "stop with bad arguments stopped a sandbox"
}

test_invalid_name_exits_2_and_starts_nothing()
{
	use_private_rundir
	for name in ../x a/b a..b -x .hidden "$(printf 'a\nb')" "" \
		"$(printf 'n%.0s' $(seq 65))"; do
		sbx --name "$name" touch started
		expect_status 2
		[ -z "$name" ] || expect_err_contains "expected 1 to 64 letters"
		expect_no_file started
	done
	[ -z "$(ls "$STATE" 2>/dev/null | grep -E '\.json$')" ] || fail "a record was written"
	sbx --name "$(printf 'n%.0s' $(seq 64))" true
	expect_status 0
}

test_name_collision_refuses_a_given_name_and_numbers_a_default_one()
{
	use_private_rundir
	mkdir proj
	cd proj || fail "cd"
	bg_sbx a --name taken sh -c 'touch ready-a; exec sleep 3901'
	bg_sbx b sh -c 'touch ready-b; exec sleep 3902'
	bg_sbx c sh -c 'touch ready-c; exec sleep 3903'
	wait_file ready-a
	wait_file ready-b
	wait_file ready-c
	sbx --name taken touch started
	expect_status 2
	expect_err_contains 'a sandbox named "taken" is running already'
	expect_no_file started
	sbx list --json
	"$PY" -c '
import json, sys
names = sorted(i["name"] for i in json.load(open(sys.argv[1])))
assert names == ["proj", "proj-2", "taken"], names
' "$T/out" || fail "names: $(out)"
}

test_concurrent_runs_never_share_a_name()
{
	use_private_rundir
	mkdir race
	cd race || fail "cd"
	for i in 1 2 3 4; do
		bg_sbx "r$i" sh -c "touch ready-$i; exec sleep 4001"
	done
	for i in 1 2 3 4; do
		wait_file "ready-$i"
	done
	sbx list --json
	"$PY" -c '
import json, sys
names = sorted(i["name"] for i in json.load(open(sys.argv[1])))
assert names == ["race", "race-2", "race-3", "race-4"], names
' "$T/out" || fail "names: $(out)"
}

test_stop_refuses_a_record_of_another_user()
{
	use_private_rundir
	[ "$(id -u)" -eq 0 ] || skip "needs root to run a sandbox as another user"
	user=${TEST_USER:-agent-sandbox-test}
	id "$user" >/dev/null 2>&1 || skip "no user $user"
	chmod 755 "$T"
	mkdir -m 700 "$T/user-run" "$T/user-work" "$T/user-home"
	chown "$user" "$T/user-run" "$T/user-work" "$T/user-home"
	(cd "$T/user-work" && setpriv --reuid="$user" --regid="$user" --clear-groups \
		env HOME="$T/user-home" XDG_RUNTIME_DIR="$T/user-run" \
		"$AS" --name theirs sh -c 'touch ready; exec sleep 4101' </dev/null >/dev/null 2>"$T/user.err" &)
	wait_file "$T/user-work/ready"
	# Root's own stop does not see it; a copy of its record in root's
	# directory names a process of another uid and is refused.
	sbx stop theirs
	expect_status 2
	cp "$T/user-run/agent-sandbox/theirs.json" "$STATE/theirs.json" 2>/dev/null ||
		{ mkdir -p "$STATE" && cp "$T/user-run/agent-sandbox/theirs.json" "$STATE/theirs.json"; }
	sbx stop theirs
	expect_status 2
	[ "$(count_sleeps 4101)" -eq 1 ] || fail "the other user's sandbox was stopped: $(count_sleeps 4101) $(ls $T/user-work) $(cat $T/user.err)"
	setpriv --reuid="$user" --regid="$user" --clear-groups env XDG_RUNTIME_DIR="$T/user-run" \
		"$AS" stop theirs --timeout 5 >"$T/out" 2>"$T/err" || fail "its owner could not stop it: $(cat "$T/err")"
	[ "$(count_sleeps 4101)" -eq 0 ] || fail "processes of the stopped sandbox are left"
}

run_tests
