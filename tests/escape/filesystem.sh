#!/bin/sh
# Escape attempts against the filesystem rules. Each runs inside the sandbox,
# must fail, and must leave the host's view of the guardrails unchanged:
#
#   writing through /proc/self/root, /proc/1/cwd, /proc/1/root
#   reopening a read-only file for writing through /proc/<pid>/fd
#   symlinks planted in the project pointing at protected files
#   a symlink swapped back and forth while writes go through it (race)
#   renaming over, away or exchanging (renameat2) protected files
#   hard links to protected and masked files
#   rewriting, replacing or chmod-ing .agent-sandbox.jsonc
#   a second project config written beside the protected one
#   writing outside the project (world-writable host dirs, /etc, home)
#   chmod and chown of read-only files
#   creating device nodes (mknod)
#   remounting read-only mounts read-write, through mount(8) and mount(2)
#   bind-mounting or mounting a tmpfs over a protected path
#   a new user and mount namespace to unmount or remount a protection
#   open_by_handle_at on a hidden file (the "shocker" attack)
#   reading another user's file in /tmp
#   writing or removing the audit log from inside
#   reading or rewriting shell and REPL histories, ~/.viminfo and git's
#   credential store, where XDG_CONFIG_HOME and XDG_DATA_HOME put them too
#
# Writing /proc/sys as root (kernel.core_pattern) is refused too.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

test_write_through_proc_self_root_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'for p in "$HOME/.bashrc" "$PWD/.git/hooks/pre-commit" "$PWD/.agent-sandbox.json" \
		"$PWD/ruff.toml" "$PWD/.env" "$HOME/new-file"; do
		echo pwned 2>/dev/null >"/proc/self/root$p" && echo "wrote $p"
	done; true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
}

test_write_through_proc_1_cwd_and_root_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'for p in /proc/1/cwd/.git/hooks/pre-commit /proc/1/cwd/.git/config \
		/proc/1/cwd/tsconfig.json "/proc/1/root$HOME/.bashrc" "/proc/$$/cwd/.agent-sandbox.json"; do
		echo pwned 2>/dev/null >>"$p" && echo "wrote $p"
	done; true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
}

test_reopening_a_read_only_file_through_proc_pid_fd_is_refused()
{
	make_guarded_project
	# The descriptor is read-only; /proc/<pid>/fd/N reopens the file
	# itself, so the mount's read-only flag still decides.
	cat >attempt.py <<'PY'
import os, subprocess, sys
wrote = []
for path in (".git/hooks/pre-commit", ".agent-sandbox.json", os.path.expanduser("~/.bashrc"), ".env"):
    fd = os.open(path, os.O_RDONLY)
    holder = subprocess.Popen(["sleep", "30"], pass_fds=(fd,))
    for via in ("/proc/self/fd/%d" % fd, "/proc/%d/fd/%d" % (holder.pid, fd)):
        try:
            w = os.open(via, os.O_WRONLY | os.O_APPEND)
            os.write(w, b"pwned\n")
            wrote.append(via + " -> " + path)
        except OSError:
            pass
    holder.kill()
print("\n".join(wrote))
PY
	before=$(host_state)
	sbx "$PY" attempt.py
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
}

test_symlinks_planted_in_the_project_do_not_make_protected_files_writable()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'ln -s .git/hooks/pre-commit l1 && ln -s "$HOME/.bashrc" l2 &&
		ln -s .agent-sandbox.json l3 && ln -s .env l4 && ln -s .git/hooks l5 || exit 9
		for l in l1 l2 l3 l4; do echo pwned 2>/dev/null >>"$l" && echo "wrote $l"; done
		echo pwned 2>/dev/null >l5/post-checkout && echo "wrote l5"; true'
	expect_status 0
	expect_out ""
	rm l1 l2 l3 l4 l5
	expect_host_unchanged "$before"
}

test_symlink_swap_race_cannot_redirect_writes_onto_protected_files()
{
	make_guarded_project
	# One process swaps a link atomically (rename over it) between a
	# writable file and each protected one, as fast as it can; the other
	# keeps opening the link for appending.
	cat >attempt.py <<'PY'
import os, sys
targets = [".git/hooks/pre-commit", os.path.expanduser("~/.bashrc"), ".agent-sandbox.json", "ruff.toml"]
open("scratch", "w").close()
os.symlink("scratch", "link")
child = os.fork()
if child == 0:
    n = 0
    while not os.path.exists("stop"):
        for t in ("scratch", targets[n % len(targets)]):
            os.symlink(t, "link.new")
            os.rename("link.new", "link")
        n += 1
    os._exit(0)
landed = {}
for _ in range(3000):
    try:
        with open("link", "a") as f:
            f.write("pwned\n")
            landed[os.path.realpath("/proc/self/fd/%d" % f.fileno())] = 1
    except OSError:
        pass
open("stop", "w").close()
os.waitpid(child, 0)
print("\n".join(p for p in landed if not p.endswith("/scratch")))
PY
	before=$(host_state)
	sbx "$PY" attempt.py
	expect_status 0
	expect_out ""
	# The race ran: some writes landed in the writable file.
	[ -s scratch ] || fail "no write went through the link; the race did not run"
	rm -f scratch link stop
	expect_host_unchanged "$before"
}

test_renaming_over_or_away_protected_files_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'echo evil >new
		for t in .agent-sandbox.json ruff.toml tsconfig.json .env .git/hooks/pre-commit .git/config \
			.git/hooks "$HOME/.bashrc"; do
			mv -f new "$t" 2>/dev/null && echo "replaced $t"
			mv -f "$t" moved 2>/dev/null && echo "moved $t"
		done; true'
	expect_status 0
	expect_out ""
	# mv falls back to copy and unlink across mounts: the copy of a
	# readable file may be left, the original stays.
	rm -rf new moved
	expect_host_unchanged "$before"
}

test_rename_exchange_with_a_protected_file_is_refused()
{
	make_guarded_project
	cat >attempt.py <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
AT_FDCWD = -100
with open("evil", "w") as f:
    f.write("pwned\n")
for target in (".agent-sandbox.json", ".git/hooks/pre-commit", ".git/config", "ruff.toml", ".env"):
    r = libc.renameat2(AT_FDCWD, b"evil", AT_FDCWD, target.encode(), RENAME_EXCHANGE)
    print(target, "exchanged" if r == 0 else os.strerror(ctypes.get_errno()))
PY
	before=$(host_state)
	sbx "$PY" attempt.py
	expect_status 0
	expect_out_lacks exchanged
	[ "$(wc -l <"$T/out")" -eq 5 ] || fail "unexpected output: $(out)"
	rm -f evil
	expect_host_unchanged "$before"
}

test_hard_links_to_protected_and_masked_files_are_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'for t in .git/hooks/pre-commit .git/config .agent-sandbox.json ruff.toml .env \
		"$HOME/.bashrc"; do
		ln "$t" hardlink 2>/dev/null && echo "linked $t" && rm hardlink
	done; true'
	expect_status 0
	expect_out ""
	expect_no_file hardlink
	# host_state records link counts: a link made anywhere would show.
	expect_host_unchanged "$before"
	# And the masked secret still reads empty through every name inside.
	sbx sh -c 'cat .env; cat /proc/self/root/"$PWD"/.env'
	expect_out ""
}

test_agent_sandbox_jsonc_cannot_be_rewritten_or_replaced()
{
	make_guarded_project
	rm .agent-sandbox.json
	echo '{"network": false} // reviewed' >.agent-sandbox.jsonc
	before=$(host_state)
	loosen='{"network": true, "filesystem": {"rw": ["~"]}, "commands": {"git": true}}'
	sbx sh -c 'c=.agent-sandbox.jsonc
		echo "$1" 2>/dev/null >$c && echo "wrote"
		echo "$1" 2>/dev/null >>$c && echo "appended"
		truncate -s 0 $c 2>/dev/null && echo "truncated"
		sed -i "s/false/true/" $c 2>/dev/null && echo "sed -i"
		chmod 666 $c 2>/dev/null && echo "chmod"
		rm -f $c 2>/dev/null && echo "removed"
		echo "$1" >other && mv -f other $c 2>/dev/null && echo "renamed over"
		cp other $c 2>/dev/null && echo "copied over"
		true' sh "$loosen"
	expect_status 0
	expect_out ""
	rm -f other
	expect_host_unchanged "$before"
}

test_a_config_written_beside_the_protected_one_stops_the_next_run_instead_of_loosening_it()
{
	make_guarded_project
	# The protected .agent-sandbox.json says no network. The project
	# directory is writable, so a .agent-sandbox.jsonc can be created,
	# and the guard moves it aside at once...
	sbx sh -c 'echo "{\"network\": true, \"filesystem\": {\"rw\": [\"~\"]}}" >.agent-sandbox.jsonc'
	expect_status 0
	expect_no_file .agent-sandbox.jsonc
	# ...and one written from a session one directory up, beyond this
	# guard's reach, makes the next run refuse to start instead of merging
	# it in.
	sbx -C .. sh -c 'echo "{\"network\": true, \"filesystem\": {\"rw\": [\"~\"]}}" >work/.agent-sandbox.jsonc'
	expect_status 0
	expect_file .agent-sandbox.jsonc
	sbx sh -c 'touch "$HOME/pwned"'
	expect_status 2
	expect_err_contains "keep one of them"
	expect_no_file "$HOME/pwned"
}

# Files in the home directory that hold typed secrets: histories, vim's
# registers, git's XDG credential store.
HOME_SECRETS=".config/git/credentials .bash_history .zsh_history .zhistory .histfile
.local/share/fish/fish_history .python_history .node_repl_history .psql_history
.mysql_history .sqlite_history .lesshst .viminfo"

home_but_the_audit_log()
{
	find "$HOME" -path "$HOME/.local/state" -prune -o -printf '%p %y %s %m\n' | LC_ALL=C sort
}

test_histories_and_credentials_read_as_empty_and_cannot_be_rewritten()
{
	for f in $HOME_SECRETS; do
		mkdir -p "$HOME/$(dirname "$f")" && echo "token-in-$f" >"$HOME/$f" ||
			fail "could not make $f"
	done
	before=$(home_but_the_audit_log)
	# shellcheck disable=SC2086
	sbx sh -c 'cd "$HOME" && for f in "$@"; do
		cat "$f"
		echo evil 2>/dev/null >>"$f" && echo "appended $f"
		rm -f "$f" 2>/dev/null && echo "removed $f"
		mv "$f" "$f.away" 2>/dev/null && echo "renamed $f"
	done; grep -r token-in . 2>/dev/null; true' sh $HOME_SECRETS
	expect_status 0
	expect_out ""
	for f in $HOME_SECRETS; do
		expect_content "$HOME/$f" "token-in-$f"
	done
	[ "$(home_but_the_audit_log)" = "$before" ] || fail "the home directory changed"
	# An interactive bash still starts, reads its empty history, and
	# cannot save it.
	sbx bash -i -c 'history -s typed-inside; echo started'
	expect_status 0
	expect_out_contains started
	expect_content "$HOME/.bash_history" "token-in-.bash_history"
}

test_credentials_and_history_moved_by_xdg_variables_read_as_empty()
{
	mkdir -p "$HOME/xdg-config/git" "$HOME/xdg-data/fish"
	echo token >"$HOME/xdg-config/git/credentials"
	echo history >"$HOME/xdg-data/fish/fish_history"
	XDG_CONFIG_HOME="$HOME/xdg-config" XDG_DATA_HOME="$HOME/xdg-data" \
		sbx sh -c 'cat "$HOME/xdg-config/git/credentials" "$HOME/xdg-data/fish/fish_history"'
	expect_status 0
	expect_out ""
	expect_content "$HOME/xdg-config/git/credentials" token
}

test_password_hashes_and_ssh_host_keys_read_as_empty()
{
	# As root the host's /etc/shadow is readable without the mask; as
	# another user it stays unreadable, and the mask must not break the
	# run. A host key is planted (as root) since this host may have none.
	key=""
	if [ "$(id -u)" -eq 0 ] && [ -d /etc/ssh ]; then
		key=/etc/ssh/ssh_host_agentsandboxtest${T##*.}_key
		echo host-private-key >"$key" && chmod 600 "$key" || fail "could not plant $key"
	fi
	before=$(cat /etc/shadow 2>/dev/null | sha256sum)
	sbx sh -c 'for f in /etc/shadow /etc/gshadow /etc/shadow- /etc/gshadow- \
		/etc/ssh/ssh_host_*_key /proc/self/root/etc/shadow /etc/../etc/shadow; do
		[ -e "$f" ] && cat "$f" 2>/dev/null
		echo x 2>/dev/null >"$f" && echo "wrote $f"
	done; grep -rl host-private-key /etc/ssh 2>/dev/null; echo end'
	[ -z "$key" ] || { cat "$key" >"$T/key-after"; rm -f "$key"; }
	expect_status 0
	expect_out "end"
	[ "$(cat /etc/shadow 2>/dev/null | sha256sum)" = "$before" ] || fail "/etc/shadow changed"
	[ -z "$key" ] || [ "$(cat "$T/key-after")" = host-private-key ] || fail "the host key changed"
}

test_url_tokens_in_git_configs_stay_out_of_reach()
{
	# The working directory's repository, read from a subdirectory (git
	# finds it above), and a second repository beneath the project.
	git init -q . && git remote add origin https://user:TOKEN-top@github.com/o/r.git &&
		mkdir -p sub nested && git init -q nested &&
		git -C nested remote add origin https://TOKEN-nested@gitlab.example/o/r.git ||
		fail "could not make the repositories"
	cp .git/config "$T/top-before"
	cp nested/.git/config "$T/nested-before"
	for dir in . sub; do
		cd "$T/work/$dir" || fail "no $dir"
		sbx sh -c 'top=$1
			cat "$top/.git/config" "/proc/self/root$top/.git/config" \
				"$top/.git/../.git/config"
			git -C "$top" config --list --show-origin
			# Only the working directory shows the nested repository.
			[ -d "$top/nested" ] && cat "$top/nested/.git/config" &&
				git -C "$top/nested" remote -v
			git -C "$top" config remote.origin.url https://evil.example/ 2>/dev/null && echo rewrote
			rm -f "$top/.git/config" 2>/dev/null && echo removed
			mv "$top/.git/config" "$top/.git/away" 2>/dev/null && echo renamed
			ln "$top/.git/config" "$top/hard" 2>/dev/null && cat "$top/hard"
			true' sh "$T/work"
		cd "$T/work" || fail "no working directory"
		expect_status 0
		expect_out_lacks TOKEN
		expect_out_lacks rewrote
		expect_out_lacks removed
		expect_out_lacks renamed
		expect_out_contains "url = https://github.com/o/r.git"
		[ "$dir" = sub ] ||
			expect_out_contains "origin	https://gitlab.example/o/r.git (fetch)"
	done
	cmp -s .git/config "$T/top-before" || fail "the host's .git/config changed"
	cmp -s nested/.git/config "$T/nested-before" || fail "nested/.git/config changed"
}

test_writing_outside_the_project_is_refused()
{
	make_guarded_project
	world_dir outside
	before=$(host_state)
	sbx sh -c 'for p in "$1/planted" "$HOME/planted" /etc/agent-sandbox-planted \
		/usr/local/bin/agent-sandbox-planted "$PWD/../planted-beside"; do
		echo pwned 2>/dev/null >"$p" && echo "wrote $p"
	done
	mkdir "$1/dir" 2>/dev/null && echo "mkdir"; true' sh "$outside"
	expect_status 0
	expect_out_lacks "wrote $outside"
	expect_out_lacks "wrote $HOME"
	expect_out_lacks "wrote /etc"
	expect_out_lacks "wrote /usr"
	expect_out_lacks mkdir
	[ -z "$(ls -A "$outside")" ] || fail "the world-writable host directory got: $(ls -A "$outside")"
	expect_no_file /etc/agent-sandbox-planted
	expect_no_file /usr/local/bin/agent-sandbox-planted
	expect_no_file "$T/planted-beside"
	expect_host_unchanged "$before"
}

test_chmod_and_chown_of_read_only_files_are_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'me=$(id -u)
		for t in .git/hooks/pre-commit .git/hooks .git/config .agent-sandbox.json ruff.toml .env \
			"$HOME/.bashrc" "$HOME"; do
			chmod 777 "$t" 2>/dev/null && echo "chmod $t"
			chmod 000 "$t" 2>/dev/null && echo "chmod 000 $t"
			chown "$me:$me" "$t" 2>/dev/null && echo "chown $t"
			touch -d 2000-01-01 "$t" 2>/dev/null && echo "touch $t"
		done; true'
	expect_status 0
	expect_out ""
	expect_host_unchanged "$before"
}

test_mknod_of_device_nodes_is_refused()
{
	sbx sh -c 'mknod null-again c 1 3 2>/dev/null && echo "char device"
		mknod disk b 8 0 2>/dev/null && echo "block device"
		mknod /tmp/kmem c 1 2 2>/dev/null && echo "device in /tmp"; true'
	expect_status 0
	expect_out ""
	expect_no_file null-again
	expect_no_file disk
	# Python's os.mknod calls mknodat(2) directly.
	sbx "$PY" -c 'import os, stat
try:
    os.mknod("mem", stat.S_IFCHR | 0o666, os.makedev(1, 1)); print("made")
except OSError as e:
    print(e.errno)'
	expect_out 1
	expect_no_file mem
}

test_remounting_read_only_mounts_read_write_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'for m in / /usr "$HOME" "$PWD/.git/hooks" "$PWD/.agent-sandbox.json" /run/agent-sandbox; do
		mount -o remount,rw "$m" 2>/dev/null && echo "remounted $m"
		mount -o remount,bind,rw "$m" 2>/dev/null && echo "remounted bind $m"
	done
	echo pwned 2>/dev/null >.git/hooks/pre-commit && echo "wrote the hook"; true'
	expect_status 0
	expect_out ""
	# mount(2) itself, without mount(8) in between.
	sbx "$PY" -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
for target in (b".git/hooks", os.path.expanduser("~").encode(), b"/"):
    r = libc.mount(None, target, None, MS_REMOUNT | MS_BIND, None)
    print(target.decode(), r, os.strerror(ctypes.get_errno()) if r else "remounted")'
	expect_status 0
	expect_out_lacks remounted
	expect_host_unchanged "$before"
}

test_bind_mount_or_tmpfs_over_a_protected_path_is_refused()
{
	make_guarded_project
	before=$(host_state)
	sbx sh -c 'mkdir fake-hooks && echo "#!/bin/sh" >fake-hooks/pre-commit
		mount --bind fake-hooks .git/hooks 2>/dev/null && echo "bound over hooks"
		mount -t tmpfs none .git/hooks 2>/dev/null && echo "tmpfs over hooks"
		mount --bind fake-hooks/pre-commit .agent-sandbox.json 2>/dev/null && echo "bound over config"
		mount -t tmpfs none "$HOME" 2>/dev/null && echo "tmpfs over home"; true'
	expect_status 0
	expect_out ""
	rm -rf fake-hooks
	expect_host_unchanged "$before"
}

test_a_new_user_namespace_cannot_unmount_or_remount_a_protection()
{
	make_guarded_project
	before=$(host_state)
	# Whether unshare(CLONE_NEWUSER) works inside depends on the user (as
	# root bwrap leaves no uid map to extend). Where it works, the mounts
	# the sandbox made read-only are locked: they cannot be unmounted to
	# uncover the writable directory below, nor remounted read-write.
	cat >attempt.sh <<'SH'
for m in .git/hooks .agent-sandbox.json "$HOME"; do
	umount "$m" 2>/dev/null && echo "unmounted $m"
	umount -l "$m" 2>/dev/null && echo "detached $m"
	mount -o remount,bind,rw "$m" 2>/dev/null && echo "remounted $m"
done
mount --bind /tmp "$HOME" 2>/dev/null && touch "$HOME/only-in-this-namespace"
echo pwned 2>/dev/null >>.git/hooks/pre-commit && echo "wrote the hook"
echo pwned 2>/dev/null >>.agent-sandbox.json && echo "wrote the config"
true
SH
	sbx sh -c 'unshare -Urm sh attempt.sh; unshare -Ur sh attempt.sh; true'
	expect_status 0
	expect_out ""
	expect_no_file "$HOME/only-in-this-namespace"
	rm attempt.sh
	expect_host_unchanged "$before"
}

test_open_by_handle_at_cannot_reach_a_hidden_file()
{
	make_guarded_project
	# The host computes a file handle for the hidden key; inside, opening
	# it by handle would bypass every mount (CAP_DAC_READ_SEARCH, absent).
	cat >handle.py <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * 128)]
AT_FDCWD = -100
if sys.argv[1] == "make":
    fh = FileHandle(128)
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(AT_FDCWD, sys.argv[2].encode(), ctypes.byref(fh), ctypes.byref(mount_id), 0):
        sys.exit("name_to_handle_at: " + os.strerror(ctypes.get_errno()))
    open("handle", "wb").write(bytes(fh))
else:
    fh = FileHandle.from_buffer_copy(open("handle", "rb").read())
    mount_fd = os.open("/", os.O_RDONLY)
    fd = libc.open_by_handle_at(mount_fd, ctypes.byref(fh), os.O_RDONLY)
    if fd < 0:
        print("refused", ctypes.get_errno())
    else:
        print(os.read(fd, 100).decode())
PY
	"$PY" handle.py make "$HOME/.ssh/id_ed25519" || fail "could not make a file handle on the host"
	sbx "$PY" handle.py open
	expect_status 0
	expect_out "refused 1"
}

test_another_users_file_in_tmp_is_neither_readable_nor_writable()
{
	other=$(mktemp -d /tmp/as-escape-other.XXXXXX)
	# shellcheck disable=SC2064
	trap "rm -rf '$other'" EXIT
	echo other-users-data >"$other/notes"
	chmod 755 "$other" && chmod 666 "$other/notes"
	[ "$(id -u)" -ne 0 ] || chown -R nobody "$other"
	# Without "..", which is /tmp itself, changed by whatever else runs.
	before=$(ls -la "$other" | grep -v ' \.\.$'; cat "$other/notes")
	sbx sh -c 'cat "$1/notes" 2>/dev/null; ls /tmp | grep as-escape-other
		echo pwned 2>/dev/null >>"$1/notes" && cat "$1/notes"; true' sh "$other"
	expect_status 0
	expect_out_lacks other-users-data
	expect_out_lacks as-escape-other
	[ "$(ls -la "$other" | grep -v ' \.\.$'; cat "$other/notes")" = "$before" ] ||
		fail "the other user's file changed"
}

test_the_audit_log_cannot_be_written_or_removed_from_inside()
{
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	sbx true
	expect_status 0
	expect_file "$log"
	cp "$log" "$T/log.before"
	sbx sh -c 'd="$HOME/.local/state/agent-sandbox"
		echo "{\"event\":\"forged\"}" 2>/dev/null >>"$d/audit.jsonl" && echo "appended"
		printf "" 2>/dev/null >"$d/audit.jsonl" && echo "truncated"
		rm -f "$d/audit.jsonl" 2>/dev/null
		ls -A "$d"; true'
	expect_status 0
	expect_out ""
	# The old records are still there, untouched, and nothing forged.
	head -c "$(wc -c <"$T/log.before")" "$log" | cmp -s - "$T/log.before" ||
		fail "the earlier records changed"
	! grep -qx '{"event":"forged"}' "$log" || fail "a forged record reached the log"
}

# A hole found while writing this suite, fixed since (/proc/sys and the
# SysRq trigger are covered read-only). bwrap 0.8 leaves /proc/sys writable in the
# sandbox's /proc, and sysctl files check the uid, not capabilities: run as
# root, the command is host uid 0 and can set kernel.core_pattern (a
# program the kernel runs as root on the next crash) or kernel.modprobe.
# The attempt writes back the current value, so it cannot harm the host.
test_writing_proc_sys_is_refused()
{
	sbx sh -c 'for f in kernel/core_pattern kernel/modprobe; do
		v=$(cat /proc/sys/$f 2>/dev/null) || continue
		printf "%s\n" "$v" 2>/dev/null >/proc/sys/$f && echo "wrote $f"
	done; true'
	expect_status 0
	expect_out ""
}

# Filling the audit log from inside: reports from inside are capped per
# session (1000), so a flood cannot fill the disk or bury the records.
test_flooding_the_audit_log_from_inside_is_capped()
{
	sbx /usr/bin/python3 -c '
import socket
s = socket.socket(fileno=1000)
big = b"{\"event\": \"blocked\", \"command\": \"x\", \"argv\": [\"" + b"a" * 4000 + b"\"], \"reason\": \"flood\"}"
for i in range(5000):
    s.send(big)
'
	expect_status 0
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	lines=$(wc -l <"$log")
	[ "$lines" -le 1002 ] || fail "the flood wrote $lines records"
	grep -q '"blocked_dropped":4000' "$log" || fail "the end record does not count the dropped reports"
}

run_tests
