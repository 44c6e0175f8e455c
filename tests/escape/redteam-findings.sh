#!/bin/sh
# Escape attempts against the containment of issue 12 that succeed, or did
# until fixed: each plays the hostile command inside and checks the outcome
# from outside (the secret never appears in what any run printed).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

SECRET=TOKEN-moved-masked-file-4d1e

expect_no_secret()
{
	if grep -q "$SECRET" "$T/out" "$T/err"; then
		fail "the secret was read: $(grep -h "$SECRET" "$T/out" "$T/err" | head -3)"
	fi
}

# The command can leave any number of secret-named files for the next run:
# each is a mount of its own (and its directories pins), and past about
# 3,000 bwrap refuses its arguments ("Exceeded maximum number of arguments
# 9000"), so the next run does not start at all.
test_a_project_with_thousands_of_masked_files_still_starts()
{
	sbx sh -c 'for d in 1 2 3 4 5 6 7 8; do mkdir -p d$d; i=0
		while [ $i -lt 500 ]; do : >d$d/$i.env; i=$((i + 1)); done; done'
	expect_status 0
	sbx sh -c 'cat d1/1.env; echo started'
	expect_status 0
	expect_out "started"
}

# A host process in the home directory listens on a socket whose name in
# /proc/net/unix does not lead to it: bound by a relative name from a
# directory that is neither the project nor the home directory, or through
# /proc/self/fd/N/NAME (how a path longer than 108 bytes is bound). Neither
# name can be resolved from outside that process, and the home directory
# is not walked, so the socket stays reachable in every network mode.
test_home_socket_bound_by_an_unresolvable_name_is_unreachable()
{
	mkdir -p "$HOME/svc/run" "$HOME/long"
	rm -f "$T/ready"
	"$PY" -c '
import os, select, socket, sys
ready, heard, a, b = sys.argv[1:5]
one = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
os.chdir(os.path.dirname(a))
one.bind(os.path.basename(a))
two = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
fd = os.open(os.path.dirname(b), os.O_PATH)
two.bind("/proc/self/fd/%d/%s" % (fd, os.path.basename(b)))
names = {one: a, two: b}
for s in names:
    s.listen(4)
open(ready, "w").close()
while True:
    for s in select.select(list(names), [], [])[0]:
        s.accept()[0].close()
        with open(heard, "a") as f:
            f.write(names[s] + "\n")
' "$T/ready" "$T/heard" "$HOME/svc/run/a.sock" "$HOME/long/b.sock" 2>"$T/serve.err" &
	echo $! >>"$T/pids"
	for _ in $(seq 100); do
		[ -e "$T/ready" ] && break
		sleep 0.05
	done
	[ -e "$T/ready" ] || fail "the host's server did not start: $(cat "$T/serve.err")"
	for mode in "" --network=false --network=true; do
		# shellcheck disable=SC2086
		sbx $mode "$PY" -c '
import socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p)
        print(p, "connected")
    except OSError as e:
        print(p, e.errno)
' "$HOME/svc/run/a.sock" "$HOME/long/b.sock"
	done
	[ ! -s "$T/heard" ] || fail "a host socket was reached: $(cat "$T/heard")"
}

run_tests
