#!/bin/sh
# Escape attempts that succeed today against the host's unix sockets (on a
# kernel below Landlock ABI 9, which would refuse every one of them). Each
# test fails until the hole is closed; the server on the host records every
# connection it accepts, and must have heard nothing:
#
#   a host service that restarts during the run (unlinks its socket and
#   binds a new one at the same path): the mask was a mount on the old
#   file, and the kernel detaches a mount whose file is unlinked
#   a host service that binds through /proc/self/fd/N/NAME (how programs
#   bind a path longer than the 108 bytes sun_path holds) and then closes
#   N, as systemd does: /proc/net/unix names "/proc/self/fd/N/NAME", and
#   the process holding the socket no longer says where N was
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

MODES="filtered --network=false --network=true"

mode_flag()
{
	[ "$1" = filtered ] || printf '%s' "$1"
}

# serve HOW PATH...: a server on the host listening on each PATH, bound as
# HOW says: "restart" binds, then after 1.5 s unlinks and binds again (a
# daemon restarting); "fdpath" binds through /proc/self/fd/N/NAME with N
# its directory, then closes N. Each accepted connection appends PATH to
# $T/heard.
serve()
{
	rm -f "$T/ready"
	"$PY" -c '
import os, select, socket, sys, time
ready, heard, how = sys.argv[1:4]
socks = {}
def bind(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if how == "fdpath":
        d = os.open(os.path.dirname(path), os.O_PATH)
        s.bind("/proc/self/fd/%d/%s" % (d, os.path.basename(path)))
        os.close(d)
    else:
        s.bind(path)
    s.listen(16)
    socks[s] = path
for path in sys.argv[4:]:
    bind(path)
open(ready, "w").close()
start = time.time()
while True:
    if how == "restart" and start and time.time() - start > 1.5:
        for s, path in list(socks.items()):
            del socks[s]
            s.close()
            os.unlink(path)
            bind(path)
        start = None
    r, _, _ = select.select(list(socks), [], [], 0.1)
    for s in r:
        c, _ = s.accept()
        c.close()
        with open(heard, "a") as f:
            f.write(socks[s] + "\n")
' "$T/ready" "$T/heard" "$@" >/dev/null 2>"$T/serve.err" &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -e "$T/ready" ] && return 0
		sleep 0.05
	done
	fail "the host's server did not start: $(cat "$T/serve.err")"
}

# connect.py DELAY PATH...: after DELAY seconds, "PATH connected" or
# "PATH ERRNO-NAME" per PATH; a path too long for sun_path is reached
# through /proc/self/fd as the host bound it.
write_client()
{
	cat >"$1" <<'PY'
import errno, os, socket, sys, time
time.sleep(float(sys.argv[1]))
for path in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        if len(path) >= 108:
            d = os.open(os.path.dirname(path), os.O_PATH)
            s.connect("/proc/self/fd/%d/%s" % (d, os.path.basename(path)))
        else:
            s.connect(path)
        print(path, "connected")
    except OSError as e:
        print(path, errno.errorcode.get(e.errno, str(e.errno)))
PY
}

expect_nothing_heard()
{
	[ ! -s "$T/heard" ] || fail "a host socket was reached: $(cat "$T/heard")"
}

test_a_host_socket_rebound_during_the_run_stays_unreachable()
{
	# Masked at the start (the scan found it); the service restarts
	# while the command runs. A file mask in the home directory, the
	# project, /var/lib (LXD's, Incus's) all go the same way.
	mkdir -p "$HOME/svc"
	write_client "$PWD/connect.py"
	for mode in $MODES; do
		rm -f "$HOME/svc/daemon.sock"
		serve restart "$HOME/svc/daemon.sock"
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") "$PY" "$PWD/connect.py" 2.5 "$HOME/svc/daemon.sock"
		expect_status 0
		kill "$(tail -1 "$T/pids")"
	done
	expect_nothing_heard
}

test_a_host_socket_bound_through_proc_self_fd_is_unreachable()
{
	# How a program binds a path longer than sun_path holds (systemd does
	# it for long paths); the short one is bound the same way to show it
	# is not about the length.
	long="$HOME/svc/$(printf 'd%.0s' $(seq 60))/$(printf 'e%.0s' $(seq 40))"
	mkdir -p "$long"
	serve fdpath "$HOME/svc/short.sock" "$long/long.sock"
	write_client "$PWD/connect.py"
	for mode in $MODES; do
		# shellcheck disable=SC2046
		sbx $(mode_flag "$mode") "$PY" "$PWD/connect.py" 0 "$HOME/svc/short.sock" \
			"$long/long.sock"
		expect_status 0
	done
	expect_nothing_heard
}

run_tests
