# Shared helpers for the end-to-end tests. Each tests/e2e/*.sh file defines
# functions named test_* and ends with `run_tests`; every test runs in a
# subshell of its own, in a fresh directory, with a fresh HOME, and prints
# one TAP line. The binary under test is $AGENT_SANDBOX (default: the build).
#
# Helpers: `sbx ARGS...` runs the binary and records $rc, $T/out, $T/err;
# `fail MSG` ends the test, `skip WHY` passes it unrun; expect_* assert on the last sbx run;
# `approve_config [PATH]` approves a config that loosens on purpose;
# `sbx_after_policy SHELL ARGS...` runs SHELL in the project between the
# policy and the mounts (a second sandbox's window), then the run.

set -u

: "${AGENT_SANDBOX:=$(cd "$(dirname "$0")/../.." && pwd)/build/agent-sandbox}"
AS=$AGENT_SANDBOX
TEST_FILE=$(basename "$0" .sh)

fail()
{
	printf '#   %s\n' "$*" >&2
	if [ -n "${T:-}" ] && [ -s "$T/err" ]; then
		sed 's/^/#   stderr: /' "$T/err" | head -20 >&2
	fi
	exit 1
}

# Ends the test as passed, saying why it did not run, for a test that
# needs what the current user lacks.
skip()
{
	printf '#   skipped: %s\n' "$*" >&2
	exit 0
}

sbx()
{
	rc=0
	"$AS" "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
}

out() { cat "$T/out"; }
err() { cat "$T/err"; }

expect_status()
{
	[ "$rc" -eq "$1" ] || fail "expected exit status $1, got $rc"
}

expect_out()
{
	[ "$(out)" = "$1" ] || fail "expected stdout '$1', got '$(out)'"
}

expect_out_contains()
{
	grep -qF -- "$1" "$T/out" || fail "stdout lacks '$1': $(head -c 600 "$T/out")"
}

expect_out_lacks()
{
	! grep -qF -- "$1" "$T/out" || fail "stdout has '$1'"
}

expect_err_contains()
{
	grep -qF -- "$1" "$T/err" || fail "stderr lacks '$1'"
}

expect_err_lacks()
{
	! grep -qF -- "$1" "$T/err" || fail "stderr has '$1'"
}

expect_file()
{
	[ -e "$1" ] || fail "expected $1 to exist on the host"
}

expect_no_file()
{
	[ ! -e "$1" ] && [ ! -L "$1" ] || fail "expected $1 not to exist on the host"
}

# Writes "secret-<path>" into each path, creating directories.
make_files()
{
	for f in "$@"; do
		mkdir -p "$(dirname "$f")"
		echo "secret-$f" >"$f"
	done
}

expect_content()
{
	[ "$(cat "$1")" = "$2" ] || fail "expected $1 to hold '$2', got '$(cat "$1")'"
}

# A listing of a tree with sizes and modes: compared before and after a run
# to prove the sandbox left nothing behind.
snapshot()
{
	find "$1" -printf '%p %y %s %m\n' | LC_ALL=C sort
}

# Approves the project config (or the config file or directory given) the
# way a user would, for tests whose config loosens the defaults on purpose.
approve_config()
{
	"$AS" trust "$@" >/dev/null 2>"$T/trust-err" ||
		fail "agent-sandbox trust $*: $(cat "$T/trust-err")"
}

# Runs the binary like sbx, with a bwrap shim on PATH that first runs the
# shell text $1 in the project: after the policy is made, before every
# mount, which is what a second sandbox on the same project can do in that
# window.
sbx_after_policy()
{
	real=$(command -v bwrap) || fail "bwrap not found"
	mkdir -p "$T/shim"
	printf '#!/bin/sh\ncd %s || exit 99\n%s\ncd / || exit 99\nexec %s "$@"\n' \
		"'$T/work'" "$1" "'$real'" >"$T/shim/bwrap"
	chmod 755 "$T" "$T/shim" "$T/shim/bwrap"
	shift
	rc=0
	PATH="$T/shim:$PATH" "$AS" "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
}

setup_test()
{
	T=$(mktemp -d "${TMPDIR:-/tmp}/as-e2e.XXXXXX")
	mkdir "$T/home" "$T/work"
	export HOME="$T/home"
	unset XDG_CONFIG_HOME DOCKER_HOST AGENT_SANDBOX_TEST_UNUSED
	cd "$T/work" || exit 1
}

# Starts a static HTTP server for directory $1 on a free port of the
# host's loopback and sets $http_port; teardown stops it.
start_http_server()
{
	py=python3
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3
	portfile=$(mktemp "$T/port.XXXXXX")
	rm -f "$portfile"
	"$py" -c '
import http.server, os, sys
os.chdir(sys.argv[1])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
' "$1" "$portfile" >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -s "$portfile" ] && break
		sleep 0.05
	done
	http_port=$(cat "$portfile" 2>/dev/null) || fail "the test HTTP server did not start"
}

teardown_test()
{
	if [ -s "$T/pids" ]; then
		# shellcheck disable=SC2046
		kill $(cat "$T/pids") 2>/dev/null
	fi
	cd /
	chmod -R u+rwX "$T" 2>/dev/null
	rm -rf "$T"
}

# Whether this user can have a memory cgroup made (v1 hierarchy, or a v2
# subtree it may write).
memory_cgroup()
{
	own=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p' /proc/self/cgroup)
	if [ -n "$own" ]; then
		[ -w "/sys/fs/cgroup/memory${own%/}" ]
		return
	fi
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	[ -n "$own" ] && [ -w "/sys/fs/cgroup${own%/}" ] &&
		grep -qw memory "/sys/fs/cgroup${own%/}/cgroup.controllers" 2>/dev/null
}

# Running sandboxes (lifecycle, exec-into): helpers shared by their tests.
# A private runtime directory for this test, and whatever it started
# stopped when the test ends, however it ends.
use_private_rundir()
{
	mkdir -m 700 "$T/run"
	export XDG_RUNTIME_DIR="$T/run"
	STATE="$T/run/agent-sandbox"
	trap '"$AS" stop --all --timeout 0 >/dev/null 2>&1' EXIT
}

# Starts agent-sandbox ARGS... in the background, output in $T/$1.out and
# $T/$1.err; the supervisor's pid in $bg_pid.
bg_sbx()
{
	label=$1
	shift
	"$AS" "$@" >"$T/$label.out" 2>"$T/$label.err" </dev/null &
	bg_pid=$!
	# A run whose record is gone is not reached by stop --all: the
	# teardown sends it SIGTERM, which it passes on.
	echo "$bg_pid" >>"$T/pids"
}

# Waits until file $1 exists (the command inside made it).
wait_file()
{
	for _ in $(seq 300); do
		[ -e "$1" ] && return 0
		sleep 0.03
	done
	fail "$1 did not appear"
}

# Waits until process $1 has exited.
wait_gone()
{
	for _ in $(seq 300); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.03
	done
	fail "process $1 is still running"
}


run_tests()
{
	n=0
	failed=0
	for t in $(sed -n 's/^\(test_[a-z0-9_]*\)() *$/\1/p' "$0"); do
		if [ -n "${ONLY:-}" ] && [ "$t" != "$ONLY" ]; then
			continue
		fi
		n=$((n + 1))
		if (setup_test; ("$t"); r=$?; teardown_test; exit $r); then
			echo "ok $n - $TEST_FILE: ${t#test_}"
		else
			echo "not ok $n - $TEST_FILE: ${t#test_}"
			failed=$((failed + 1))
		fi
	done
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
