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
# each is a mount of its own. The init makes those mounts, so thousands
# start fine and stay masked; bwrap's binds (kernels without the new mount
# API) stop past its argument limit (9000), and the init's past 20,000
# mounts. Either way the next run says so, names the directory that holds
# most of them and how to mask it whole, and runs nothing.
test_a_project_with_thousands_of_masked_files_is_refused_with_a_way_out()
{
	sbx sh -c 'for d in 1 2 3 4 5 6 7 8; do mkdir -p d$d; i=0
		while [ $i -lt 500 ]; do echo '"$SECRET"' >d$d/$i.env; i=$((i + 1)); done; done
		: >d1/x.env'
	expect_status 0
	sbx sh -c 'cat d1/1.env d8/499.env; echo started'
	expect_status 0
	expect_out "started"
	expect_no_secret
	AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx sh -c 'echo started'
	expect_status 2
	expect_out_lacks "started"
	expect_err_contains "more than the 9000 bwrap accepts: 4001 files in"
	expect_err_contains "d1 holds 501 of them"
	expect_err_lacks "Exceeded maximum number"
	AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx --dry-run true
	expect_status 2

	# Past what the init makes.
	"$PY" -c '
import os
os.makedirs("d9")
for i in range(16000):
    open("d9/%d.env" % i, "w").close()'
	sbx sh -c 'echo started'
	expect_status 2
	expect_out_lacks "started"
	expect_err_contains "more than the 20000 agent-sandbox makes: 20001 files in"
	expect_err_contains "d9 holds 16000 of them"

	# The way out given works.
	echo '{"secrets": {"patterns": ["d*/"]}}' >.agent-sandbox.json
	approve_config
	sbx sh -c 'cat d1/1.env; echo started'
	expect_status 0
	expect_out "started"
}

# A host socket's server, reachable from the host side of the project, for
# the socket tests below: it answers every connection with a marker.
SOCKET_MARK=HOST-SOCKET-REACHED-7c2a

start_socket_server()
{
	mkdir -p "$(dirname "$1")"
	"$PY" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4)
open(sys.argv[1] + ".up", "w").close()
while True:
    c, _ = s.accept(); c.sendall(sys.argv[2].encode() + b"\n"); c.close()' "$1" "$SOCKET_MARK" &
	echo $! >>"$T/pids"
	i=0
	while [ ! -e "$1.up" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	rm -f "$1.up"
}

CONNECT='import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print(s.recv(100).decode().strip())
except OSError as e:
    print("refused:", e)'

# The session that lost the race stops before the command runs: the
# mount check fails at the socket's directory or below it, or the guard
# (on the host, which also watches for unreadable directories) stops it
# first.
expect_socket_unreached()
{
	if grep -q "$SOCKET_MARK" "$T/out" "$T/err"; then
		fail "the host socket was reached from inside"
	fi
	expect_status 1
	expect_out ""
	grep -q -e "mount check failed at $PWD/.dev" -e "can no longer be read" "$T/err" ||
		fail "not stopped by the mount check or the guard: $(cat "$T/err")"
}

# A masked host socket whose directory the sandbox's user cannot search
# when the init binds is not masked (nothing inside could reach it then),
# but the directory is the user's own: a second sandbox makes it 000 just
# before the init's binds, and the command makes it 755 again and connects.
test_a_host_socket_behind_a_directory_made_unsearchable_before_the_binds_stays_masked()
{
	git init -q .
	start_socket_server "$PWD/.dev/ipc.sock"
	sbx_after_policy "chmod 000 .dev" -- sh -c \
		"chmod 755 .dev; $PY -c '$CONNECT' .dev/ipc.sock; echo ran"
	chmod 755 .dev
	expect_socket_unreached
}

# The same with the directory renamed away before the init's binds and
# back once the command runs: the mask's path is gone when the init looks.
test_a_host_socket_whose_directory_is_moved_away_before_the_binds_stays_masked()
{
	git init -q .
	start_socket_server "$PWD/.dev/ipc.sock"
	sbx_after_policy "mv .dev .dev-away; (sleep 1; mv .dev-away .dev) </dev/null >/dev/null 2>&1 &" \
		-- sh -c "sleep 2; $PY -c '$CONNECT' .dev/ipc.sock; echo ran"
	expect_socket_unreached
}

# The same with the directory replaced by an empty one before the init's
# binds and the real one put back once the command runs: the init sees a
# directory and the socket gone from it, as when the server ended. The
# directories on the way to a host socket in the project are pinned (and
# checked) like those on the way to a masked file.
test_a_host_socket_whose_directory_is_replaced_before_the_binds_stays_masked()
{
	git init -q .
	start_socket_server "$PWD/.dev/ipc.sock"
	sbx_after_policy "mv .dev .dev-away; mkdir .dev; (sleep 1; rmdir .dev; mv .dev-away .dev) </dev/null >/dev/null 2>&1 &" \
		-- sh -c "sleep 2; $PY -c '$CONNECT' .dev/ipc.sock; echo ran"
	expect_socket_unreached
}

# A secret whose path is longer than the kernel takes (PATH_MAX, 4096) can
# be neither resolved nor mounted on. The command can put one there for
# the next run: below the 16 pinned levels, a directory holding a masked
# file can be renamed inside (its mount moves with it) to a long name.
# The scan finds it; it must not be left readable.
test_a_secret_deeper_than_path_max_is_never_read()
{
	git init -q .
	"$PY" -c '
import os, sys
fd = os.open(".", os.O_RDONLY)
for i in range(21):
    os.mkdir("d" * 200, dir_fd=fd)
    nfd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = nfd
f = os.open(".env", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
os.write(f, (sys.argv[1] + "\n").encode())' "$SECRET"
	sbx "$PY" -c '
import os
fd = os.open(".", os.O_RDONLY)
for i in range(21):
    nfd = os.open("d" * 200, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = nfd
try:
    print(os.read(os.open(".env", os.O_RDONLY, dir_fd=fd), 100).decode())
except OSError as e:
    print("refused:", e)'
	expect_no_secret
	expect_status 2
	expect_err_contains "too long a path to mask"
}

run_tests
