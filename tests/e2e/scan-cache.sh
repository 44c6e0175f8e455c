#!/bin/sh
# The secret scan's cache: a run in an unchanged tree reads no directory
# again, and whatever changed since (a secret created deep down, renamed
# into place, a directory replaced, a file that became a key, a link whose
# target changed) is found and masked. A damaged cache is ignored, never
# trusted; `policy` is the same cold and warm, and neither `policy` nor
# --dry-run writes a cache.
. "$(dirname "$0")/../lib.sh"

SECRET=TOKEN-scan-cache-3b9e

CACHE_DIR=
cache_dir() { CACHE_DIR="$HOME/.local/state/agent-sandbox/scan-cache"; }

# A tree of a few levels with plain files, a masked secret and a key
# holder that is not (yet) a key. The cache trusts a directory only when
# its ctime is 2 seconds older than the scan: wait that long.
make_settled_tree()
{
	mkdir -p a/b/c/d/e a/x/y keys store/thing sub || fail mkdir
	for d in a a/b a/b/c a/b/c/d a/b/c/d/e a/x a/x/y keys sub; do
		echo "code" >"$d/main.c"
	done
	echo "$SECRET" >a/x/.env
	echo "not a key" >keys/id_deploy
	ln -s ../store/thing sub/server.pem
	sleep 2.1
}

# Runs once to write the cache, then proves the next run reads nothing
# again ($dirs directories, every one from the cache).
warm_up()
{
	sbx --debug true
	expect_status 0
	expect_err_contains "secrets: scan cache written to"
	sbx --debug true
	expect_status 0
	dirs=$(sed -n 's/.*secrets: scan cache: \([0-9]*\) of \([0-9]*\) directories.*/\1 \2/p' "$T/err")
	[ -n "$dirs" ] && [ "${dirs% *}" = "${dirs#* }" ] && [ "${dirs% *}" -gt 5 ] ||
		fail "the warm run read directories again: $(grep 'scan cache' "$T/err")"
}

# The file reads empty inside, and the host's copy is intact.
expect_masked()
{
	sbx cat "$1"
	expect_status 0
	[ -z "$(out)" ] || fail "$1 is readable inside: $(out)"
	grep -q "$SECRET" "$1" || fail "$1 changed on the host"
}

test_warm_run_reads_no_directory_of_an_unchanged_tree()
{
	make_settled_tree
	warm_up
	expect_err_contains "secrets: masked $T/work/a/x/.env"
	expect_masked a/x/.env
}

test_env_created_deep_in_a_cached_tree_is_masked_on_the_next_run()
{
	make_settled_tree
	warm_up
	echo "$SECRET" >a/b/c/d/e/.env
	expect_masked a/b/c/d/e/.env
}

test_secret_renamed_into_a_cached_directory_is_masked()
{
	make_settled_tree
	warm_up
	echo "$SECRET" >"$T/outside"
	mv "$T/outside" a/b/c/.env.local
	echo "$SECRET" >a/b/c/d/notes.txt
	sleep 2.1
	warm_up
	# Renamed within its directory, and a directory holding a secret
	# moved into the tree.
	mv a/b/c/d/notes.txt a/b/c/d/prod.pem
	mkdir "$T/incoming"
	echo "$SECRET" >"$T/incoming/credentials.json"
	mv "$T/incoming" a/x/y/incoming
	expect_masked a/b/c/.env.local
	expect_masked a/b/c/d/prod.pem
	expect_masked a/x/y/incoming/credentials.json
}

test_directory_replaced_by_one_of_the_same_name_is_scanned_again()
{
	make_settled_tree
	warm_up
	rm -rf a/b/c
	mkdir -p a/b/c/d
	echo "$SECRET" >a/b/c/d/server.key
	expect_masked a/b/c/d/server.key
	# Two directories swapped by renames: each is found under its new
	# name with what it holds.
	sleep 2.1
	warm_up
	echo "$SECRET" >a/x/y/db-secret.yaml
	mv a/x/y a/x/tmp && mv a/b/c/d a/x/y && mv a/x/tmp a/b/c/d
	expect_masked a/b/c/d/db-secret.yaml
	expect_masked a/x/y/server.key
}

test_file_that_becomes_a_private_key_is_masked()
{
	make_settled_tree
	warm_up
	sbx cat keys/id_deploy
	expect_out "not a key"
	# The same inode, rewritten: the directory does not change.
	ino=$(stat -c %i keys/id_deploy)
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n' "$SECRET" >keys/id_deploy
	[ "$(stat -c %i keys/id_deploy)" = "$ino" ] || fail "the key holder was replaced"
	expect_masked keys/id_deploy
	sbx policy
	expect_out_contains "$T/work/keys/id_deploy  (pattern \"id_* holding a private key\")"
}

test_link_whose_target_became_a_file_is_masked()
{
	make_settled_tree
	warm_up
	# sub/server.pem led to a directory: neither masked nor followed.
	# Its target becomes a file; sub itself does not change.
	rmdir store/thing
	echo "$SECRET" >store/thing
	expect_masked sub/server.pem
}

test_unreadable_directory_in_a_cached_tree_is_masked()
{
	[ "$(id -u)" -ne 0 ] || skip "root reads a directory of mode 000"
	make_settled_tree
	warm_up
	chmod 000 a/b/c
	sbx --debug true
	expect_status 0
	expect_err_contains "secrets: masked $T/work/a/b/c/ (directory) (pattern \"a directory the scan cannot read\")"
	chmod 755 a/b/c
}

test_damaged_cache_is_ignored_and_unmasks_nothing()
{
	make_settled_tree
	echo "$SECRET" >a/b/c/d/e/.env
	sleep 2.1
	warm_up
	cache_dir
	file=$(ls "$CACHE_DIR"/*)
	[ -f "$file" ] || fail "no cache file in $CACHE_DIR"
	cp "$file" "$T/good"
	# damage | what --debug says
	while IFS='|' read -r damage why; do
		cp "$T/good" "$file"
		case $damage in
		truncated) head -c 300 "$T/good" >"$file" ;;
		garbage) head -c 4096 /dev/urandom >"$file" ;;
		empty) : >"$file" ;;
		entry-removed)
			# The .env entry cut out of its record, and the
			# header's counts lowered to match, as a forger would.
			python3 - "$file" <<'EOF' || fail "could not edit the cache"
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
at = data.index(b"\x08\x00\x01\x04\x00.env\x00")
del data[at:at + 14]
entries, body = struct.unpack_from("=IQ", data, 60)
struct.pack_into("=IQ", data, 60, entries - 1, body - 14)
open(path, "wb").write(data)
EOF
			;;
		world-writable) chmod 666 "$file" ;;
		esac
		sbx --debug cat a/x/.env a/b/c/d/e/.env
		expect_status 0
		[ -z "$(out)" ] || fail "$damage: a secret is readable: $(out)"
		grep -q "scan cache not used ($why" "$T/err" ||
			fail "$damage: the cache was used: $(grep 'scan cache' "$T/err")"
		chmod 600 "$file"
	done <<'CASES'
truncated|truncated
garbage|not a scan cache
empty|not a scan cache
entry-removed|its checksum
world-writable|/
CASES
}

test_policy_is_the_same_cold_and_warm()
{
	make_settled_tree
	echo "$SECRET" >a/b/.env.production
	git init -q a/x/y
	sleep 2.1
	# The state directory made (the policy hides it), without a cache.
	sbx true
	cache_dir
	rm -r "$CACHE_DIR"
	sbx --debug policy
	expect_status 0
	expect_err_contains "scan cache not used (none yet)"
	cp "$T/out" "$T/cold"
	warm_up
	sbx --debug policy
	expect_status 0
	expect_err_contains "secrets: scan cache: "
	expect_err_lacks "scan cache: 0 of"
	cmp -s "$T/cold" "$T/out" || fail "policy differs warm: $(diff "$T/cold" "$T/out" | head)"
}

test_policy_and_dry_run_write_no_scan_cache()
{
	make_settled_tree
	sbx policy
	expect_status 0
	sbx --dry-run true
	expect_status 0
	cache_dir
	[ ! -e "$CACHE_DIR" ] || fail "a scan cache was written: $(ls -la "$CACHE_DIR")"
	sbx true
	expect_status 0
	[ -n "$(ls "$CACHE_DIR")" ] || fail "a run wrote no scan cache"
}

run_tests
