#!/bin/sh
# Escape attempts against the records of running sandboxes, which `stop`
# acts on. The agent must not reach them from inside, and where a user
# exposed them anyway (--rw of the runtime directory), no record it forges
# or changes may make `stop` signal anything but a verified agent-sandbox
# supervisor of this user:
#
#   reading or writing the runtime directory from inside
#   a forged record naming a host process of the user (right start time)
#   a forged record naming the sandbox's own init (agent-sandbox too)
#   a record planted as a symlink, or under another name than its own
#   the runtime directory itself replaced by a symlink
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# A host process of ours that stop must never signal: sets $victim.
start_victim()
{
	sleep 4501 &
	victim=$!
	echo "$victim" >>"$T/pids"
	victim_start=$(sed 's/.*) //' "/proc/$victim/stat" | cut -d' ' -f20)
}

# Writes a record for NAME naming PID and START into file $2.
forge_record()
{
	printf '{"name":"%s","pid":%s,"pid_start":%s,"started":1,"command":["x"]}\n' \
		"$1" "$3" "$4" >"$2"
}

test_runtime_directory_is_out_of_reach_inside()
{
	use_private_rundir
	"$AS" --name visible sh -c 'touch ready; exec sleep 4401' </dev/null >/dev/null 2>&1 &
	wait_file ready
	expect_file "$STATE/visible.json"
	sbx --name prober sh -c '
		ls -a "$XDG_RUNTIME_DIR/agent-sandbox" "$XDG_RUNTIME_DIR" 2>&1
		cat "$XDG_RUNTIME_DIR"/agent-sandbox/*.json 2>&1
		ls /tmp/agent-sandbox-* 2>&1
		mkdir -p "$XDG_RUNTIME_DIR/agent-sandbox" 2>/dev/null
		echo "{\"name\":\"planted\",\"pid\":1}" >"$XDG_RUNTIME_DIR/agent-sandbox/planted.json"
		true'
	expect_status 0
	expect_out_lacks "visible.json"
	expect_out_lacks '"pid_start"'
	expect_no_file "$STATE/planted.json"
	sbx list
	expect_out_lacks planted
	expect_out_contains visible
}

test_forged_record_cannot_make_stop_signal_a_host_process()
{
	use_private_rundir
	start_victim
	# The user exposed the runtime directory; the agent forges a record
	# with the exact pid and start time of a host process of the user.
	mkdir -m 700 "$STATE"
	sbx --rw "$STATE" sh -c "printf '{\"name\":\"forged\",\"pid\":%s,\"pid_start\":%s,\"started\":1,\"command\":[\"x\"]}\n' $victim $victim_start >$STATE/forged.json"
	expect_status 0
	expect_file "$STATE/forged.json"
	sbx stop forged --timeout 0
	expect_status 2
	sbx stop --all --timeout 0
	kill -0 "$victim" || fail "stop signalled a host process named by a forged record"
	[ "$(sed 's/.*) //' "/proc/$victim/stat" | cut -d' ' -f1)" = S ] ||
		fail "the host process is not sleeping any more"
	expect_no_file "$STATE/forged.json"
}

test_changed_own_record_cannot_redirect_stop()
{
	use_private_rundir
	start_victim
	mkdir -m 700 "$STATE"
	"$AS" --name self --rw "$STATE" sh -c "
		sed 's/\"pid\":[0-9]*,\"pid_start\":[0-9]*/\"pid\":$victim,\"pid_start\":$victim_start/' \
			$STATE/self.json >$STATE/tmp && mv $STATE/tmp $STATE/self.json && touch ready
		exec sleep 4502" </dev/null >"$T/self.out" 2>"$T/self.err" &
	self=$!
	echo "$self" >>"$T/pids"
	wait_file ready
	grep -q "\"pid\":$victim," "$STATE/self.json" || fail "the record was not changed: $(cat "$STATE/self.json")"
	sbx stop self --timeout 0
	expect_status 2
	kill -0 "$victim" || fail "stop signalled the host process the changed record names"
	# The sandbox is not lost to its user: it still ends with its
	# supervisor.
	kill "$self"
	for _ in $(seq 300); do
		kill -0 "$self" 2>/dev/null || break
		sleep 0.03
	done
	! kill -0 "$self" 2>/dev/null || fail "the sandbox did not end with SIGTERM to its supervisor"
}

test_forged_record_naming_the_sandbox_init_is_refused()
{
	use_private_rundir
	"$AS" --name boxed sh -c 'touch ready; exec sleep 4503' </dev/null >/dev/null 2>&1 &
	sup=$!
	echo "$sup" >>"$T/pids"
	wait_file ready
	# The init runs agent-sandbox too, as our uid, one pid namespace down:
	# the descendant of the supervisor that runs the same file.
	init=$("$PY" -c '
import os, sys
sup = sys.argv[1]
me = os.stat("/proc/%s/exe" % sup)
todo, found = [sup], ""
while todo and not found:
    pid = todo.pop()
    for task in os.listdir("/proc/%s/task" % pid):
        try:
            kids = open("/proc/%s/task/%s/children" % (pid, task)).read().split()
        except OSError:
            continue
        for k in kids:
            try:
                st = os.stat("/proc/%s/exe" % k)
            except OSError:
                st = None
            if st and (st.st_dev, st.st_ino) == (me.st_dev, me.st_ino):
                found = k
            todo.append(k)
print(found)
' "$sup")
	[ -n "$init" ] || fail "no process of the sandbox runs agent-sandbox"
	init_start=$(sed 's/.*) //' "/proc/$init/stat" | cut -d' ' -f20)
	forge_record initrec "$STATE/initrec.json" "$init" "$init_start"
	sbx stop initrec --timeout 0
	expect_status 2
	kill -0 "$init" || fail "stop signalled the sandbox's init through a forged record"
	kill -0 "$sup" || fail "the sandbox ended"
}

test_record_symlink_and_renamed_record_are_not_followed()
{
	use_private_rundir
	"$AS" --name real sh -c 'touch ready; exec sleep 4504' </dev/null >/dev/null 2>&1 &
	sup=$!
	echo "$sup" >>"$T/pids"
	wait_file ready
	# A symlink to the real record, and a copy under another name: either
	# would let one name stop another sandbox.
	ln -s "$STATE/real.json" "$STATE/alias.json"
	cp "$STATE/real.json" "$STATE/other.json"
	sbx stop alias --timeout 0
	expect_status 2
	sbx stop other --timeout 0
	expect_status 2
	kill -0 "$sup" || fail "a record under another name stopped a sandbox"
	expect_file "$STATE/real.json"
	expect_no_file "$STATE/alias.json"
	expect_no_file "$STATE/other.json"
}

test_runtime_directory_replaced_by_a_symlink_is_refused()
{
	mkdir -m 700 "$T/run" "$T/elsewhere"
	export XDG_RUNTIME_DIR="$T/run"
	ln -s "$T/elsewhere" "$T/run/agent-sandbox"
	sbx --name x touch started
	expect_status 1
	expect_err_contains "refusing to use"
	expect_no_file started
	sbx list
	expect_status 1
	[ -z "$(ls "$T/elsewhere")" ] || fail "something was written through the symlink"
}

run_tests
