#!/bin/sh
# Escape attempts that race the sandbox's set-up: a path the policy decided
# on is swapped between the policy and bwrap's mounts, so that bwrap would
# mount something else there (a secret the policy hides). The init checks
# every mount against the plan before the command runs; a session that
# lost the race must stop with "mount check failed" and run nothing.
#
#   a second process swapping a protected file for a symlink to a secret
#   in a tight loop while sessions start (many starts)
#   one swap, exactly between the policy and the mounts (a bwrap shim on
#   PATH does it, then runs the real bwrap): a symlink to the secret, a
#   different file, a directory swapped, a parent directory turned into a
#   symlink, a read-only path removed, a wrapper script replaced
#   the init started without its mount plan, or with an unsealed one
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

SECRET=ssh-private-key-material

# Writes a bwrap shim into $T/shim that runs the shell text $1 in the
# project, then the real bwrap with the same arguments.
bwrap_shim()
{
	real=$(command -v bwrap) || fail "bwrap not found"
	mkdir -p "$T/shim"
	cat >"$T/shim/bwrap" <<EOF
#!/bin/sh
cd '$T/work' || exit 99
$1
cd / || exit 99
exec '$real' "\$@"
EOF
	chmod 755 "$T/shim/bwrap"
	chmod 755 "$T" "$T/shim"
}

sbx_shimmed()
{
	rc=0
	PATH="$T/shim:$PATH" "$AS" "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
}

expect_stopped_at()
{
	expect_status 1
	expect_out ""
	expect_err_contains "mount check failed at $1"
}

test_file_swapped_for_symlink_to_secret_while_sessions_start_is_never_read()
{
	make_guarded_project
	# The swapper keeps the real file's inode (a hard link), so a session
	# that sees the real file throughout starts normally.
	ln tsconfig.json "$T/tsconfig.orig"
	cat >"$T/swap.py" <<'PY'
import os, sys, time
work, orig, stop = sys.argv[1], sys.argv[2], sys.argv[3]
link, back = work + "/.swap-link", work + "/.swap-back"
while not os.path.exists(stop):
    try:
        os.symlink("../home/.ssh/id_ed25519", link)
        os.rename(link, work + "/tsconfig.json")
        time.sleep(0.001)
        os.link(orig, back)
        os.rename(back, work + "/tsconfig.json")
        # Mostly the real file: most starts then decide on it, some meet
        # the symlink only at the mounts, and a secret mounted then would
        # stay in place long enough for the command to read it.
        time.sleep(0.008)
    except FileExistsError:
        for p in (link, back):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
PY
	"$PY" "$T/swap.py" "$T/work" "$T/tsconfig.orig" "$T/stop" &
	swapper=$!
	echo "$swapper" >>"$T/pids"
	ran=0 stopped=0 bwrap_failed=0 late=0 refused=0 runs=${RACE_RUNS:-200}
	for i in $(seq "$runs"); do
		sbx cat tsconfig.json
		if grep -qF "$SECRET" "$T/out" "$T/err"; then
			touch "$T/stop"
			fail "run $i read the secret (status $rc)"
		fi
		case $rc in
		0)
			if [ -s "$T/out" ]; then
				grep -qF '"strict": true' "$T/out" ||
					fail "run $i: status 0, output '$(out)'"
				ran=$((ran + 1))
			else
				# Swapped after the check, to a symlink that
				# leads to an empty file bwrap left in the
				# sandbox's private ~/.ssh.
				late=$((late + 1))
			fi
			;;
		1)
			# Lost the race at the mounts: nothing ran. bwrap
			# itself sometimes trips over the swapped path first.
			expect_out ""
			if grep -qF "mount check failed at $T/work/tsconfig.json" "$T/err"; then
				stopped=$((stopped + 1))
			elif grep -qF "cat: tsconfig.json: No such file" "$T/err"; then
				# Swapped after the check: renaming over a mount
				# point detaches the mount, and the symlink now
				# there leads to the sandbox's own (hidden) ~/.ssh.
				late=$((late + 1))
			elif grep -qF "mount check failed at " "$T/err"; then
				# Another path changed under this start (a host
				# socket another session removed): refused too.
				stopped=$((stopped + 1))
			else
				expect_err_contains "cannot set up the sandbox: bwrap:"
				bwrap_failed=$((bwrap_failed + 1))
			fi
			;;
		2)
			# Lost it at the policy: the planted symlink is refused.
			expect_out ""
			expect_err_contains "resolves through the symlink"
			refused=$((refused + 1))
			;;
		*)
			touch "$T/stop"
			fail "run $i: unexpected status $rc"
			;;
		esac
	done
	touch "$T/stop"
	wait "$swapper"
	echo "# $runs starts: $ran ran, $stopped stopped by the mount check," \
		"$bwrap_failed by bwrap, $refused refused by the policy, $late swapped after" >&2
	[ "$stopped" -gt 0 ] || echo "# (no start lost the race at the mounts this time)" >&2
}

test_parent_swapped_for_symlink_to_secret_dir_while_sessions_start_is_never_read()
{
	make_guarded_project
	echo 'ssh-private-key-material' >"$HOME/.ssh/notes"
	mkdir -p sub/.ssh
	echo decoy >sub/.ssh/notes
	# sub/.ssh is read-only by a rule; sub turns into a symlink to the
	# home directory and back, now and then going missing in between, in
	# a loop. A bind made through the symlink mounts ~/.ssh, wherever its
	# target leads.
	cat >"$T/swap.py" <<'PY'
import ctypes, os, sys, time
work, stop = sys.argv[1], sys.argv[2]
sub, real, link = work + "/sub", work + "/.sub-real", work + "/.sub-link"
libc = ctypes.CDLL(None, use_errno=True)

def exchange(a, b):
    # renameat2(RENAME_EXCHANGE): both names exist at every instant.
    if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")

def quietly(f, *args):
    try:
        f(*args)
    except OSError:
        pass

# Every round: sub becomes the symlink and back, atomically; every eighth
# it also goes missing for a moment. The guard moves what appears at a
# protected path that was missing at the start aside, so each round
# starts from whatever is left and makes the directory anew when gone.
n = 0
while not os.path.exists(stop):
    n += 1
    if not (os.path.isdir(sub) and not os.path.islink(sub)):
        quietly(os.unlink, sub)
        for p in (link, real):
            if os.path.islink(p):
                quietly(os.unlink, p)
        if os.path.isdir(real):
            quietly(os.rename, real, sub)
        else:
            os.makedirs(sub + "/.ssh", exist_ok=True)
            with open(sub + "/.ssh/notes", "w") as f:
                f.write("decoy\n")
    if not os.path.islink(link):
        quietly(os.unlink, link)
        os.symlink("../home", link)
    quietly(exchange, link, sub)
    time.sleep(0.001)
    if n % 8 == 0:
        quietly(os.rename, link, real)
        quietly(os.unlink, sub)
        time.sleep(0.001)
        quietly(os.rename, real, sub)
    else:
        quietly(exchange, link, sub)
    time.sleep(0.006)
PY
	"$PY" "$T/swap.py" "$T/work" "$T/stop" &
	swapper=$!
	echo "$swapper" >>"$T/pids"
	ran=0 stopped=0 other=0 runs=${RACE_RUNS:-200}
	for i in $(seq "$runs"); do
		sbx --ro sub/.ssh cat sub/.ssh/notes
		if grep -qF "$SECRET" "$T/out" "$T/err"; then
			touch "$T/stop"
			fail "run $i read the secret (status $rc)"
		fi
		if [ "$rc" -eq 0 ]; then
			expect_out decoy
			ran=$((ran + 1))
		elif grep -qF "mount check failed" "$T/err"; then
			expect_status 1
			expect_out ""
			stopped=$((stopped + 1))
		else
			# The policy refused the run or skipped the missing
			# rule (and the guard then moved what appeared there
			# aside, or stopped the sandbox), bwrap failed, or the
			# command found no file (sub missing, or the symlink
			# leading to the sandbox's own empty ~/.ssh): nothing
			# ran with the secret.
			case $(out) in "" | decoy) ;; *) fail "run $i: output '$(out)'" ;; esac
			case $rc in
			1 | 2)
				if grep -vqE "^(agent-sandbox: |  |cat: sub/.ssh/notes: No such file)" "$T/err"; then
					fail "run $i: status $rc: $(head -c 300 "$T/err")"
				fi
				;;
			*) fail "run $i: unexpected status $rc" ;;
			esac
			other=$((other + 1))
		fi
	done
	touch "$T/stop"
	wait "$swapper"
	echo "# $runs starts: $ran ran, $stopped stopped by the mount check, $other otherwise" >&2
}

test_symlink_to_secret_swapped_in_before_the_mounts_stops_the_session()
{
	make_guarded_project
	bwrap_shim 'mv tsconfig.json ../tsconfig.moved && ln -s ../home/.ssh/id_ed25519 tsconfig.json'
	sbx_shimmed cat tsconfig.json
	expect_stopped_at "$T/work/tsconfig.json"
	expect_err_contains "symlink"
	! grep -qF "$SECRET" "$T/out" "$T/err" || fail "the secret was read"
}

test_file_replaced_by_another_before_the_mounts_stops_the_session()
{
	make_guarded_project
	# Same name, same type, another inode: what was decided on is gone.
	bwrap_shim 'cp tsconfig.json ../t && echo "{}" >../t && mv ../t tsconfig.json'
	sbx_shimmed cat tsconfig.json
	expect_stopped_at "$T/work/tsconfig.json"
	expect_err_contains "not inode"
}

test_directory_swapped_before_the_mounts_stops_the_session()
{
	make_guarded_project
	mkdir -p "$T/evil-hooks"
	printf '#!/bin/sh\nexit 0\n' >"$T/evil-hooks/pre-commit"
	# The hooks directory is read-only in the sandbox; one swapped in
	# between would be mounted in its place.
	bwrap_shim "mv .git/hooks '$T/hooks.moved' && mv '$T/evil-hooks' .git/hooks"
	sbx_shimmed cat .git/hooks/pre-commit
	expect_stopped_at "$T/work/.git/hooks"
}

test_parent_directory_swapped_for_symlink_before_the_mounts_stops_the_session()
{
	make_guarded_project
	mkdir -p sub/inner elsewhere/inner
	echo 'ssh-private-key-material' >elsewhere/inner/key
	# sub itself becomes a symlink: the path to the read-only sub/inner
	# now leads elsewhere, and bwrap follows it for source and target.
	bwrap_shim "mv sub '$T/sub.moved' && ln -s elsewhere sub"
	sbx_shimmed --ro sub/inner cat sub/inner/key
	expect_stopped_at "$T/work/sub/inner"
	expect_err_contains "a symlink lies on the way"
}

test_read_only_path_removed_before_the_mounts_stops_the_session()
{
	make_guarded_project
	mkdir -p sub/inner
	# bwrap skips a -try mount whose source is gone. A mount that went
	# through a symlink swapped in and out again lands elsewhere and
	# leaves the planned path just as empty, so a missing path stops
	# the run too.
	bwrap_shim "mv sub/inner '$T/inner.moved'"
	sbx_shimmed --ro sub/inner true
	expect_stopped_at "$T/work/sub/inner"
	expect_err_contains "No such file or directory"
}

test_wrapper_script_replaced_before_the_mounts_stops_the_session()
{
	make_guarded_project
	printf '#!/bin/sh\necho wrapped\n' >wrap.sh
	printf '#!/bin/sh\ncat "$HOME/.ssh/id_ed25519"\n' >"$T/evil.sh"
	chmod +x wrap.sh "$T/evil.sh"
	bwrap_shim "cp '$T/evil.sh' wrap.new && mv wrap.new wrap.sh"
	sbx_shimmed --cmd git=./wrap.sh git status
	expect_stopped_at /run/agent-sandbox/wrappers/git
}

test_session_without_a_swap_starts_through_the_shim()
{
	make_guarded_project
	# The shim itself changes nothing: the sessions above stopped for the
	# swap, not for the shim.
	bwrap_shim 'true'
	sbx_shimmed cat tsconfig.json
	expect_status 0
	expect_out_contains '"strict": true'
}

test_init_without_a_mount_plan_refuses_to_run()
{
	make_guarded_project
	# The shim drops --mounts=N from the init's arguments.
	bwrap_shim 'first=1
for a in "$@"; do
	[ -n "$first" ] && set -- && first=
	case $a in --mounts=*) continue ;; esac
	set -- "$@" "$a"
done'
	sbx_shimmed echo ran
	expect_status 1
	expect_out ""
	expect_err_contains "is internal to agent-sandbox"
}

test_init_with_an_unsealed_mount_plan_refuses_to_run()
{
	make_guarded_project
	: >"$T/empty-plan"
	# The shim points --mounts= at a plain empty file on descriptor 9.
	bwrap_shim "exec 9<'$T/empty-plan'
first=1
for a in \"\$@\"; do
	[ -n \"\$first\" ] && set -- && first=
	case \$a in --mounts=*) a=--mounts=9 ;; esac
	set -- \"\$@\" \"\$a\"
done"
	sbx_shimmed echo ran
	expect_status 1
	expect_out ""
	expect_err_contains "mount plan"
}

run_tests
