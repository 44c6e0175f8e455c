#!/bin/sh
# Reads of masked files are reported: each open through the mount of a
# masked file (by any spelling of its path) becomes a secret_read record and
# one line on stderr at the end; bwrap's own binds, stat and O_PATH opens
# do not count; repeats are coalesced and capped.
. "$(dirname "$0")/../lib.sh"

log_file() { echo "$HOME/.local/state/agent-sandbox/audit.jsonl"; }

# Prints "path|pattern|rule|count" for every secret_read record.
reads()
{
	[ -f "$(log_file)" ] || return 0
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["event"] == "secret_read":
        print("%s|%s|%s|%s" % (r["path"], r["pattern"], r["rule"], r["count"]))
' "$(log_file)"
}

events() { [ -f "$(log_file)" ] && grep -c "\"event\":\"$1\"" "$(log_file)" || echo 0; }

expect_no_reads()
{
	[ -z "$(reads)" ] || fail "unexpected secret_read records: $(reads)"
	expect_err_lacks "tried to read"
}

test_cat_of_a_masked_file_is_logged_with_path_and_pattern()
{
	echo 'TOKEN=s3cret' >.env
	sbx sh -c 'cat .env; echo done'
	expect_status 0
	expect_out "done"
	[ "$(reads)" = "$(pwd -P)/.env|.env|secret \".env\"|1" ] || fail "records: $(reads)"
	[ "$(tail -n 1 "$T/err")" = "agent-sandbox: the command tried to read 1 masked file: .env" ] ||
		fail "last stderr line: $(tail -n 1 "$T/err")"
}

test_files_are_named_relative_to_the_working_directory_in_first_seen_order()
{
	echo a >.env
	mkdir config
	echo b >config/prod.pem
	sbx sh -c 'cat .env config/prod.pem .env; exit 3'
	expect_status 3
	expect_err_contains "agent-sandbox: the command tried to read 2 masked files: .env, config/prod.pem"
	reads | grep -qx "$(pwd -P)/config/prod.pem|\*.pem|secret \"\*.pem\"|1" ||
		fail "no record for config/prod.pem: $(reads)"
}

test_reads_through_a_symlink_or_dot_dot_are_reported()
{
	echo a >.env
	mkdir sub
	ln -s ../.env sub/link
	ln -s .env envlink
	for spelling in envlink sub/link ./sub/../.env "$(pwd -P)/sub/../.env"; do
		rm -f "$(log_file)"
		sbx cat "$spelling"
		expect_status 0
		[ -z "$(out)" ] || fail "$spelling is readable: $(out)"
		[ "$(reads)" = "$(pwd -P)/.env|.env|secret \".env\"|1" ] ||
			fail "read via $spelling: $(reads)"
		expect_err_contains "tried to read 1 masked file: .env"
	done
}

test_stat_access_and_o_path_opens_are_not_reported()
{
	# O_PATH opens neither reads nor fires IN_OPEN: a descriptor made so
	# cannot read the file either (read fails with EBADF).
	echo a >.env
	sbx python3 -c '
import os
fd = os.open(".env", os.O_PATH)
try:
    os.read(fd, 1)
    print("read")
except OSError as e:
    print("refused", e.errno)
os.close(fd)
os.stat(".env"); os.lstat(".env"); os.access(".env", os.R_OK)
print(os.listdir("."))
'
	expect_status 0
	expect_out_contains "refused 9"
	expect_no_reads
}

test_reopening_an_o_path_descriptor_through_proc_is_reported()
{
	# The way from O_PATH to the bytes is a new open of /proc/self/fd/N:
	# that one is an open of the stand-in like any other.
	echo a >.env
	sbx python3 -c '
import os
fd = os.open(".env", os.O_PATH)
with open("/proc/self/fd/%d" % fd) as f:
    print(repr(f.read()))
'
	expect_status 0
	expect_out "''"
	[ "$(reads)" = "$(pwd -P)/.env|.env|secret \".env\"|1" ] || fail "records: $(reads)"
}

test_a_masked_files_directory_keeps_its_place_and_a_read_is_reported()
{
	# Each directory on the way to a masked file is a mount point, so it
	# cannot be renamed away (to node_modules, say, which the next scan
	# skips); the read through it is reported under the masked path.
	mkdir config
	echo key >config/prod.pem
	sbx sh -c 'mv config moved; cat config/prod.pem; echo "rc=$?"'
	expect_status 0
	expect_out "rc=0"
	expect_err_contains "Device or resource busy"
	[ "$(reads)" = "$(pwd -P)/config/prod.pem|*.pem|secret \"*.pem\"|1" ] ||
		fail "records: $(reads)"
}

test_a_masked_file_never_read_gives_no_record()
{
	# bwrap binds every stand-in and the init checks each mount: neither
	# may count as a read. As root, /etc/shadow is masked too.
	echo a >.env
	mkdir -p deep/er config
	echo b >deep/er/.env.local
	echo c >config/prod.pem
	sbx sh -c 'ls -la >/dev/null; echo ok'
	expect_status 0
	expect_out "ok"
	expect_no_reads
	[ "$(events start)" = 1 ] || fail "no start record: $(cat "$(log_file)")"
}

test_no_record_when_the_project_has_no_secrets()
{
	echo 'int main;' >main.c
	sbx cat main.c
	expect_status 0
	expect_no_reads
}

test_ten_thousand_opens_give_a_bounded_number_of_records()
{
	echo a >.env
	echo b >key.pem
	# Alternating between two files defeats the kernel's merging of
	# identical events: every open reaches the host.
	sbx python3 -c '
import os
for i in range(10000):
    for f in (".env", "key.pem"):
        os.close(os.open(f, os.O_RDONLY))
'
	expect_status 0
	n=$(reads | wc -l)
	[ "$n" -ge 2 ] && [ "$n" -le 8 ] || fail "$n records for 20,000 opens: $(reads)"
	total=$(reads | awk -F'|' '$1 ~ /\.env$/ { s += $4 } END { print s }')
	[ "$total" -ge 1 ] && [ "$total" -le 10000 ] || fail "counted $total opens of .env"
	expect_err_contains "tried to read 2 masked files: .env, key.pem"

	rm -f "$(log_file)"
	sbx sh -c 'i=0; while [ $i -lt 10000 ]; do : <.env; i=$((i + 1)); done'
	expect_status 0
	n=$(reads | wc -l)
	[ "$n" -ge 1 ] && [ "$n" -le 6 ] || fail "$n records for a shell loop: $(reads)"
}

test_records_are_capped_per_run_over_many_masked_files()
{
	mkdir many
	i=0
	while [ $i -lt 260 ]; do
		echo x >"many/s$i.pem"
		i=$((i + 1))
	done
	sbx sh -c 'cat many/*.pem'
	expect_status 0
	n=$(reads | wc -l)
	[ "$n" -eq 200 ] || fail "$n records, expected the cap of 200"
	[ "$(events secret_watch)" = 1 ] || fail "the cap is not recorded: $(grep secret_watch "$(log_file)")"
	expect_err_contains "tried to read 260 masked files: "
	expect_err_contains " and 250 more"
}

test_masked_file_outside_the_working_directory_keeps_its_absolute_path()
{
	echo '//registry/:_authToken=x' >"$HOME/.npmrc"
	sbx cat "$HOME/.npmrc"
	expect_status 0
	[ "$(reads)" = "$HOME/.npmrc|~/.npmrc|@base|1" ] || fail "records: $(reads)"
	expect_err_contains "tried to read 1 masked file: $HOME/.npmrc"
}

test_a_read_of_a_masked_system_file_is_reported()
{
	sbx cat /etc/shadow
	expect_status 0
	[ -z "$(out)" ] || fail "/etc/shadow is readable: $(out)"
	[ "$(reads)" = "/etc/shadow|/etc/shadow|@base|1" ] || fail "records: $(reads)"
	expect_err_contains "tried to read 1 masked file: /etc/shadow"
}

test_listing_a_masked_directory_shows_nothing_and_is_not_reported()
{
	# A masked directory is an empty tmpfs made inside the sandbox: its
	# names are not there to open, and listing it (as every tree walker,
	# git status among them, does) reads nothing.
	mkdir "$HOME/.ssh"
	echo key >"$HOME/.ssh/id_rsa"
	sbx sh -c 'ls -A ~/.ssh; cat ~/.ssh/id_rsa 2>/dev/null; echo end'
	expect_status 0
	expect_out "end"
	expect_no_reads
}

test_a_name_with_terminal_controls_is_escaped_on_stderr()
{
	name=$(printf '.env.\033[31mred')
	echo a >"$name"
	sbx cat "$name"
	expect_status 0
	expect_err_contains 'tried to read 1 masked file: .env.\e[31mred'
	if grep -q "$(printf '\033')" "$T/err"; then
		fail "an escape character reached stderr"
	fi
}

test_log_blocked_lists_secret_reads()
{
	echo a >.env
	sbx cat .env
	sbx log --blocked
	expect_status 0
	expect_out_contains "secret_read  $(pwd -P)/.env opened 1 time (masked: .env by secret \".env\")"
	expect_out_lacks " start "
}

test_reporting_switched_off_still_masks_and_says_so()
{
	echo 'TOKEN=s3cret' >.env
	AGENT_SANDBOX_BENCH_NO_SECRET_WATCH=1 sbx --debug cat .env
	expect_status 0
	[ -z "$(out)" ] || fail ".env is readable: $(out)"
	expect_err_contains "reads of masked files are not reported"
	expect_no_reads
	grep -q '"event":"secret_watch","reason":"AGENT_SANDBOX_BENCH_NO_SECRET_WATCH is set"' \
		"$(log_file)" || fail "the log does not say reporting is off: $(cat "$(log_file)")"
}

test_stand_ins_are_removed_after_the_run()
{
	echo a >.env
	mkdir -m 700 "$T/run"
	XDG_RUNTIME_DIR="$T/run" sbx cat .env
	expect_status 0
	expect_err_contains "tried to read 1 masked file: .env"
	[ -d "$T/run/agent-sandbox" ] || fail "the runtime directory was not used"
	left=$(find "$T/run/agent-sandbox" -name 'masked-*')
	[ -z "$left" ] || fail "left behind: $left"
}

run_tests
