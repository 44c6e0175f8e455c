#!/bin/sh
# Masked files are bound by the sandbox's init with the new mount API, not
# by bwrap (whose every bind re-reads the mount table). The sandbox must be
# the same either way: the mount table inside matches the one bwrap's binds
# give (AGENT_SANDBOX_BENCH_BWRAP_MASKS asks for those), nothing keeps a
# capability, the staged sources are out of reach, and thousands of masked
# files work.
. "$(dirname "$0")/../lib.sh"

SECRET=TOKEN-init-binds-7c2f

make_project()
{
	git init -q .
	mkdir -p src/deep/er config
	echo "API_KEY=$SECRET" >.env
	echo "$SECRET" >config/prod.pem
	echo "$SECRET" >src/deep/er/id_rsa
	echo 'int main;' >src/main.c
}

# Besides masked files: a masked directory inside a pinned one, a git
# config shown as a copy without its credentials, a wrapped command.
make_busy_project()
{
	make_project
	git remote add origin "https://user:$SECRET@example.com/x.git"
	mkdir -p src/deep/private
	echo "$SECRET" >src/deep/private/notes
	echo '{"secrets": {"patterns": ["private/"]}, "commands": {"curl": false}}' >.agent-sandbox.json
	approve_config
}

# /proc/self/mountinfo without what differs between two runs of the same
# sandbox: mount ids, parent ids, propagation tags, and the random parts of
# the run's own files. The staging mounts exist only with the init's binds
# and are checked on their own.
mount_table()
{
	awk '{
		line = "";
		for (i = 4; i <= 6; i++) line = line " " $i;
		for (i = 7; i <= NF && $i != "-"; i++) ;
		for (; i <= NF; i++) line = line " " $i;
		print line
	}' "$1" | sed -e 's/masked-[A-Za-z0-9]*/masked-X/' -e 's/audit-[0-9a-f]*\.sock/audit.sock/' \
		-e 's/copies-[A-Za-z0-9]*/copies-X/' -e 's/net-[A-Za-z0-9]*/net-X/' |
		grep -v ' /run/agent-sandbox/staging' | LC_ALL=C sort
}

test_the_mount_table_is_the_same_as_with_bwraps_binds()
{
	make_busy_project
	for net in --network=true --network=false "" --read-only; do
		# shellcheck disable=SC2086
		sbx $net -- cat /proc/self/mountinfo
		expect_status 0
		cp "$T/out" "$T/init"
		# shellcheck disable=SC2086
		AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx $net -- cat /proc/self/mountinfo
		expect_status 0
		cp "$T/out" "$T/bwrap"
		grep -q ' /run/agent-sandbox/staging ' "$T/init" ||
			fail "$net: no staging mount: the init made no binds"
		! grep -q ' /run/agent-sandbox/staging' "$T/bwrap" ||
			fail "$net: the benchmark switch left the binds to the init"
		mount_table "$T/init" >"$T/init.table"
		mount_table "$T/bwrap" >"$T/bwrap.table"
		grep -q " $PWD/.env " "$T/init.table" || fail "$net: .env is not a mount"
		diff "$T/bwrap.table" "$T/init.table" >"$T/diff" ||
			fail "$net: the mount tables differ: $(head -20 "$T/diff")"
	done
}

test_masked_files_read_empty_and_stay_read_only()
{
	make_project
	sbx -- sh -c 'cat .env config/prod.pem src/deep/er/id_rsa; echo x >.env || echo refused'
	expect_status 0
	expect_out "refused"
	grep -q "$SECRET" "$T/err" && fail "the secret was printed"
	expect_content .env "API_KEY=$SECRET"
}

test_nothing_inside_keeps_a_capability()
{
	make_project
	sbx -- sh -c 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status'
	expect_status 0
	[ "$(grep -c ':	0000000000000000$' "$T/out")" -eq 5 ] ||
		fail "capabilities left: $(out)"
	# The init too: it relays the network and lives as long as the run.
	sbx -- sh -c 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/1/status'
	expect_status 0
	[ "$(grep -c ':	0000000000000000$' "$T/out")" -eq 5 ] ||
		fail "the init keeps capabilities: $(out)"
}

test_the_filter_still_refuses_mount_calls()
{
	make_project
	command -v python3 >/dev/null || skip "no python3"
	# umount2 of a masked file, and a new mount namespace, by raw
	# system calls: both refused (EPERM), the secret stays hidden.
	sbx -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.umount2(b".env", 2)
print("umount2", r, os.strerror(ctypes.get_errno()))
r = libc.unshare(0x00020000)
print("unshare", r, os.strerror(ctypes.get_errno()))
print(open(".env").read() or "empty")'
	expect_status 0
	expect_out_contains "umount2 -1 Operation not permitted"
	expect_out_contains "unshare -1 Operation not permitted"
	expect_out_contains "empty"
}

test_the_staged_sources_are_out_of_reach()
{
	make_project
	sbx -- sh -c 'ls -A /run/agent-sandbox/staging; cat /run/agent-sandbox/staging/stand-ins/0 \
		/run/agent-sandbox/staging/empty 2>&1; echo end'
	expect_status 0
	expect_out_contains "No such file"
	[ "$(head -1 "$T/out")" = "cat: /run/agent-sandbox/staging/stand-ins/0: No such file or directory" ] ||
		fail "the staging directory is not empty: $(out)"
	# Nothing was read through a second path either.
	expect_err_lacks "tried to read"
}

test_thousands_of_masked_files_start_and_stay_masked()
{
	mkdir d
	i=0
	while [ $i -lt 3000 ]; do
		echo "$SECRET" >d/$i.env
		i=$((i + 1))
	done
	sbx -- sh -c 'cat d/0.env d/1500.env d/2999.env; echo started'
	expect_status 0
	expect_out "started"
	# The same files through bwrap's binds go past its argument limit.
	AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx -- true
	expect_status 2
	expect_err_contains "more than the 9000 bwrap accepts"
}

# The mask goes onto the path itself, never through a symlink found there:
# the link is covered like the file it replaced, and its target (outside
# the project) is not reached.
test_a_masked_file_swapped_for_a_symlink_before_the_init_binds_stays_masked()
{
	make_project
	echo "$SECRET" >"$T/outside-secret"
	sbx_after_policy "rm .env; ln -s '$T/outside-secret' .env" -- sh -c 'cat .env; echo ran'
	expect_status 0
	expect_out "ran"
	grep -q "$SECRET" "$T/out" "$T/err" && fail "the link's target was read"
	[ -L .env ] || fail "the link on the host was touched"
	expect_content "$T/outside-secret" "$SECRET"
}

# A symlink on the way to a masked file is never followed.
test_a_symlink_on_the_way_to_a_masked_file_stops_the_run()
{
	make_project
	mkdir "$T/elsewhere"
	echo "$SECRET" >"$T/elsewhere/id_rsa"
	sbx_after_policy "mv src/deep/er src/deep/er.old; ln -s '$T/elsewhere' src/deep/er" \
		-- sh -c 'cat src/deep/er/id_rsa; echo ran'
	expect_status 1
	expect_out ""
	grep -q "$SECRET" "$T/err" && fail "the secret was printed"
	expect_err_contains "$PWD/src/deep/er"
}

test_a_masked_files_directory_swapped_for_a_symlink_stops_the_run()
{
	make_project
	mkdir "$T/elsewhere"
	echo "$SECRET" >"$T/elsewhere/prod.pem"
	sbx_after_policy "mv config config.old; ln -s '$T/elsewhere' config" -- sh -c 'cat config/prod.pem; echo ran'
	expect_status 1
	expect_out ""
	expect_err_contains "$PWD/config"
}

# bwrap's bind onto a path that is gone creates it on the host; the init
# never creates anything.
test_a_masked_file_removed_before_the_init_binds_stops_the_run_and_leaves_nothing()
{
	make_project
	sbx_after_policy "rm .env" -- sh -c 'echo ran'
	expect_status 1
	expect_out ""
	expect_err_contains "mount check failed at $PWD/.env"
	expect_no_file .env
}

# A host socket whose server ends between the policy and the init's binds
# leaves nothing to hide: the run goes on without that mask.
test_a_host_socket_gone_before_the_init_binds_does_not_stop_the_run()
{
	make_project
	python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[1] + ".up", "w").close()
time.sleep(60)' "$PWD/app.sock" &
	echo $! >>"$T/pids"
	i=0
	while [ ! -e app.sock.up ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sbx --dry-run true
	expect_err_contains "  $PWD/app.sock <- "
	sbx_after_policy "rm -f app.sock" -- sh -c '[ -e app.sock ] && echo there; echo ran'
	expect_status 0
	expect_out "ran"
}

# Its server may clean up its directory too: still nothing to hide. (Under
# the read-only host root, where no directory is pinned on its way.)
test_a_host_socket_gone_with_its_directory_before_the_init_binds_does_not_stop_the_run()
{
	make_project
	dir=$(mktemp -d /var/tmp/as-e2e-sock.XXXXXX)
	mkdir "$dir/app"
	python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
open(sys.argv[1] + ".up", "w").close()
time.sleep(60)' "$dir/app/app.sock" &
	echo $! >>"$T/pids"
	i=0
	while [ ! -e "$dir/app/app.sock.up" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sbx --dry-run true
	expect_err_contains "  $dir/app/app.sock <- "
	sbx_after_policy "rm -rf $dir" -- sh -c 'echo ran'
	rm -rf "$dir"
	expect_status 0
	expect_out "ran"
}

# A host socket in another user's private directory: the sandbox's user
# cannot reach it, so there is nothing to hide and nothing to stop for.
test_a_host_socket_the_sandbox_cannot_reach_does_not_stop_the_run()
{
	[ "$(id -u)" -eq 0 ] || skip "needs root to make a directory of another user"
	make_project
	mkdir private
	python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
os.chown(os.path.dirname(sys.argv[1]), 65534, 65534)
os.chmod(os.path.dirname(sys.argv[1]), 0o700)
open(sys.argv[1] + ".up", "w").close()
time.sleep(60)' "$PWD/private/app.sock" &
	echo $! >>"$T/pids"
	i=0
	while [ ! -e private/app.sock.up ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sbx --dry-run true
	expect_err_contains "  $PWD/private/app.sock <- "
	sbx -- sh -c 'ls private 2>&1; echo ran'
	expect_status 0
	expect_out_contains "Permission denied"
	expect_out_contains "ran"
}

# The init makes binds with a capability before the sandbox is finished:
# nothing of the command's environment may load code into it. A preload
# library set for the command runs in the command only, after the binds.
test_a_preload_library_loads_into_the_command_not_the_init()
{
	make_project
	command -v cc >/dev/null || skip "no C compiler"
	mkdir -p .git/hooks
	echo '#!/bin/sh' >.git/hooks/pre-commit
	cat >preload.c <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void attempt(void)
{
	char comm[64] = "", line[128];
	int fd = open("/proc/self/comm", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : 0;
	comm[n > 0 ? n - 1 : 0] = '\0';
	close(open(".git/hooks/pre-commit", O_WRONLY | O_TRUNC));
	snprintf(line, sizeof(line), "%s %d\n", comm, (int)getpid());
	fd = open("preload.log", O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0 && write(fd, line, strlen(line)) < 0)
		close(fd);
	close(fd);
}
C
	cc -shared -fPIC -o preload.so preload.c || fail "cc failed"
	sbx --env "LD_PRELOAD=$PWD/preload.so" -- sh -c 'echo ran'
	expect_status 0
	expect_out "ran"
	[ -s preload.log ] || fail "the library did not load into the command"
	grep -qv '^sh ' preload.log && fail "it loaded elsewhere: $(cat preload.log)"
	expect_content .git/hooks/pre-commit '#!/bin/sh'
}

run_tests
