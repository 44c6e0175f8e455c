#!/bin/sh
# Escape attempts against the secret scan's cache. The cache decides which
# directories the next run reads again, so an agent that could write it
# (or make a directory look unchanged) could keep its next run from
# finding a secret. From inside, the hostile command:
#
#   reads, overwrites, truncates, removes and replaces the cache file, by
#   its path, through /proc/self/root and through a link planted in the
#   project, and tries to plant a cache for another directory
#   changes cached directories and sets their times back (touch -d, -r),
#   replaces one under the same name, rewrites a file into a private key
#   runs agent-sandbox inside, which must neither read nor write a cache
#
# From outside: the cache is byte for byte what it was, and the next run
# masks every secret the command made.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

SECRET=TOKEN-scan-cache-escape-8d21

make_settled_tree()
{
	mkdir -p a/b/c/d keys docs || fail mkdir
	for d in a a/b a/b/c a/b/c/d keys docs; do
		echo "code" >"$d/main.c"
	done
	echo "notes" >a/b/c/notes.txt
	echo "not a key" >keys/id_deploy
	echo "$SECRET" >.env
	# The cache trusts a directory once its ctime is 2 seconds old.
	sleep 2.1
	sbx true
	expect_status 0
	state="$HOME/.local/state/agent-sandbox"
	cache=$(ls -d "$state"/scan-cache/* 2>/dev/null | head -1)
	[ -f "$cache" ] || fail "no scan cache was written"
	sbx --debug true
	expect_err_contains "secrets: scan cache: 7 of 7 directories unchanged"
}

# The file reads empty inside, and the host's copy is intact.
expect_masked()
{
	sbx cat "$1"
	expect_status 0
	[ -z "$(out)" ] || fail "$1 is readable inside: $(out)"
	grep -q "$SECRET" "$1" || fail "$1 changed on the host"
}

test_scan_cache_cannot_be_read_or_written_from_inside()
{
	make_settled_tree
	ln -s "$cache" cache-link
	sleep 2.1
	sbx true
	cp "$cache" "$T/cache.before"
	name=${cache##*/}
	sbx sh -c '
		c="$1"; d=${c%/*}
		for p in "$c" "/proc/self/root$c" cache-link; do
			cat "$p" 2>/dev/null && echo "read $p"
			printf forged 2>/dev/null >"$p" && echo "wrote $p"
			true 2>/dev/null >"$p" && echo "truncated $p"
		done
		rm -f "$c" 2>/dev/null; [ -e "$c" ] && echo "still there"
		mv "$d" "$d.old" 2>/dev/null && echo "moved the directory"
		mkdir -p "$d" 2>/dev/null; printf forged 2>/dev/null >"$d/0000" && echo "planted"
		cp /dev/null "$c" 2>/dev/null && echo "replaced"
		ls -A "$d" "${d%/*}" 2>/dev/null
		true' sh "$cache"
	expect_status 0
	expect_out_lacks "AGSBSCAN"
	expect_out_lacks "$name"
	expect_out_lacks "read "
	expect_out_lacks "wrote "
	expect_out_lacks "truncated "
	expect_out_lacks "replaced"
	expect_out_lacks "planted"
	cmp -s "$cache" "$T/cache.before" || fail "the cache file changed"
	[ ! -e "$state/scan-cache.old" ] || fail "the cache directory was moved"
	[ "$(ls "$state/scan-cache")" = "$name" ] || fail "a file was planted: $(ls "$state/scan-cache")"
	expect_masked .env
}

test_secrets_made_inside_a_cached_tree_are_masked_on_the_next_run()
{
	make_settled_tree
	# Every change the command makes, with the directories' times set
	# back to hide it: their ctime still moves.
	sbx sh -c '
		old=$(stat -c %Y a/b/c)
		echo "$1" >a/b/c/d/.env
		touch -d "@$old" a/b/c/d a/b/c
		mv a/b/c/notes.txt a/b/c/prod.pem && echo "$1" >>a/b/c/prod.pem
		touch -r keys keys/id_deploy
		printf -- "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n" "$1" >keys/id_deploy
		touch -d "@$old" keys/id_deploy
		rm -rf docs && mkdir docs && echo "$1" >docs/server.key
		touch -d "@$old" docs .' sh "$SECRET"
	expect_status 0
	expect_masked a/b/c/d/.env
	expect_masked a/b/c/prod.pem
	expect_masked keys/id_deploy
	expect_masked docs/server.key
}

test_nested_run_neither_reads_nor_writes_a_scan_cache()
{
	make_settled_tree
	cp "$cache" "$T/cache.before"
	sbx sh -c "echo code >a/b/more.c; '$AS' --debug true"
	expect_status 0
	expect_err_contains "secrets: scanned"
	expect_err_lacks "scan cache"
	cmp -s "$cache" "$T/cache.before" || fail "the cache file changed"
	expect_masked .env
}

run_tests
