#!/bin/sh
# Escape attempts against secrets masked by path patterns: a file masked by
# an anchored pattern ("config/prod.pem"), one masked by "**" at depth, and a
# directory masked whole ("certs/"). From inside, the hostile command reads
# each through every spelling it can make:
#
#   other spellings: ./config//prod.pem, config/../config/prod.pem, the
#   absolute path, /proc/self/cwd, /proc/self/root
#   symlinks planted in the project before the run (to the file, to its
#   directory, to the masked directory) and made inside during it
#   hard links, a copy, and renaming the parent directory or the masked
#   directory away before reading again
#   unmounting the masks
#
# Every output, stdout and stderr, is checked from outside for the secrets'
# contents, and the host's files must be left as they were.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

PEM=TOKEN-anchored-prod-pem-7f3a
DEEP=TOKEN-double-star-env-91c2
CERT=TOKEN-masked-dir-cert-55d0
INNER=TOKEN-masked-dir-inner-e6b8

make_secret_paths_project()
{
	mkdir -p config other a/b certs/sub || fail mkdir
	echo "$PEM" >config/prod.pem
	echo "$DEEP" >a/b/.settings.env
	echo "$CERT" >certs/ca.key
	echo "$INNER" >certs/sub/inner.txt
	echo "not-secret" >other/prod.pem
	# Only the path patterns can mask these: the built-in names that would
	# match them are removed.
	cat >.agent-sandbox.json <<'EOF'
{"secrets": {"patterns": ["!*.pem", "!*.key", "!*.env",
  "config/prod.pem", "**/.settings.env", "certs/"]}}
EOF
	approve_config
	# Links planted by an earlier run, each a different way in.
	ln -s config/prod.pem pem-link
	ln -s config conf-link
	ln -s certs certs-link
	ln -s "$T/work/a/b" abs-link
}

host_secrets()
{
	find "$T/work" -printf '%p %y %n %l\n' | LC_ALL=C sort
	cat config/prod.pem a/b/.settings.env certs/ca.key certs/sub/inner.txt
}

# Fails when any secret appears in what the command printed.
expect_no_secret_in_output()
{
	for token in $PEM $DEEP $CERT $INNER; do
		if grep -q "$token" "$T/out" "$T/err"; then
			fail "$token was read: $(grep -h "$token" "$T/out" "$T/err" | head -3)"
		fi
	done
}

test_masked_paths_read_empty_through_every_spelling()
{
	make_secret_paths_project
	before=$(host_secrets)
	sbx sh -c 'for p in config/prod.pem ./config//prod.pem config/../config/prod.pem \
		"$PWD/config/prod.pem" /proc/self/cwd/config/prod.pem \
		"/proc/self/root$PWD/config/prod.pem" pem-link conf-link/prod.pem \
		a/b/.settings.env ./a//b/.settings.env abs-link/.settings.env \
		certs/ca.key ./certs//ca.key certs/sub/../ca.key certs/sub/inner.txt \
		certs-link/ca.key certs-link/sub/inner.txt "/proc/self/root$PWD/certs/ca.key"; do
		cat "$p"
	done; ls -laR certs certs-link/ conf-link/; true'
	expect_status 0
	expect_no_secret_in_output
	# The unmasked namesake is there: the run did read files.
	sbx cat other/prod.pem
	expect_out "not-secret"
	[ "$(host_secrets)" = "$before" ] || fail "the host files changed"
}

test_links_made_inside_do_not_reach_masked_content()
{
	make_secret_paths_project
	before=$(host_secrets)
	sbx sh -c 'ln -s config/prod.pem l1; ln -s ../certs a/certs2; ln -s "$PWD/a/b" l3
		ln config/prod.pem h1; ln certs/ca.key h2
		cat l1 a/certs2/ca.key a/certs2/sub/inner.txt l3/.settings.env h1 h2
		cp config/prod.pem copy1 && cat copy1
		cp -r certs copy2 && cat copy2/ca.key copy2/sub/inner.txt
		rm -f l1 a/certs2 l3 h1 h2 copy1; rm -rf copy2; true'
	expect_status 0
	expect_no_secret_in_output
	[ "$(host_secrets)" = "$before" ] || fail "the host files changed"
}

test_renaming_a_parent_or_the_masked_directory_does_not_unmask()
{
	make_secret_paths_project
	mkdir -p deep/er/config
	echo "$PEM" >deep/er/config/prod.pem
	echo '{"secrets": {"patterns": ["!*.pem", "!*.key", "!*.env", "config/prod.pem",
		"deep/er/config/prod.pem", "**/.settings.env", "certs/"]}}' >.agent-sandbox.json
	approve_config
	# Within the run: the masks travel with whatever moves.
	sbx sh -c 'mv config moved-config; cat moved-config/prod.pem
		mv deep/er moved-er; mv deep moved-deep; cat moved-er/config/prod.pem
		mv a moved-a; cat moved-a/b/.settings.env
		mv certs moved-certs; cat moved-certs/ca.key certs/ca.key
		umount certs; umount config/prod.pem
		cat certs/ca.key config/prod.pem moved-config/prod.pem; true'
	expect_no_secret_in_output
	# A directory on the way to what an anchored pattern masks stays
	# where it is: the next run's scan still finds the file at the path
	# the pattern names. (A name pattern finds it wherever it is moved.)
	expect_content config/prod.pem "$PEM"
	expect_content deep/er/config/prod.pem "$PEM"
	expect_content certs/ca.key "$CERT"
	sbx sh -c 'cat config/prod.pem deep/er/config/prod.pem moved-a/b/.settings.env \
		a/b/.settings.env certs/ca.key; true'
	expect_no_secret_in_output
}

SHARED=TOKEN-shared-directory-secret-a90c

# Many masked files sharing their directories (120 directories, 240 secrets):
# every directory above them is pinned once, and each pin holds, so none can
# be renamed to carry a secret past the next run's scan.
test_every_directory_above_many_masked_files_is_pinned_once_and_holds()
{
	for a in $(seq -w 0 39); do
		for b in 0 1; do
			mkdir -p "d$a/sub$b"
			echo "$SHARED" >"d$a/sub$b/.env"
			echo "$SHARED" >"d$a/sub$b/key.pem"
			echo "int x;" >"d$a/sub$b/main.c"
		done
	done
	sbx policy
	expect_status 0
	grep '(mount point)' "$T/out" | awk '{ print $1 }' | sort >"$T/pins"
	[ "$(wc -l <"$T/pins")" -eq 120 ] ||
		fail "expected 120 pinned directories, got $(wc -l <"$T/pins"): $(head -5 "$T/pins")"
	[ -z "$(uniq -d "$T/pins")" ] || fail "pinned twice: $(uniq -d "$T/pins" | head -3)"
	grep -qx "$T/work/d39/sub1" "$T/pins" || fail "d39/sub1 is not pinned"
	sbx sh -c 'for d in d*/sub*; do mv "$d" "$d.moved" 2>/dev/null && echo "moved $d"; done
		for d in d*; do mv "$d" "$d.moved" 2>/dev/null && echo "moved $d"; done
		cat d*/sub*/.env d*/sub*/key.pem d*.moved/sub*/.env 2>/dev/null; true'
	expect_status 0
	! grep -q "$SHARED" "$T/out" "$T/err" || fail "a secret was read: $(grep -h "$SHARED" "$T/out" | head -3)"
	! grep -q '^moved ' "$T/out" || fail "a pinned directory moved: $(grep '^moved ' "$T/out" | head -3)"
	[ "$(cat d39/sub1/key.pem)" = "$SHARED" ] || fail "the host file changed"
}

MOVED=TOKEN-moved-masked-file-4d1e

expect_moved_not_read()
{
	if grep -q "$MOVED" "$T/out" "$T/err"; then
		fail "the secret was read: $(grep -h "$MOVED" "$T/out" "$T/err" | head -3)"
	fi
}

# A masked file cannot be renamed (it is a mount point), but its directory
# can, and the mask travels with it for that run only. Moved under a
# directory the scan skips by default, the next run would not mask it.
test_masked_file_moved_into_skipped_directory_stays_masked_next_run()
{
	mkdir -p config
	echo "$MOVED" >config/prod.pem
	sbx sh -c 'mkdir -p node_modules && mv config node_modules/config 2>&1; true'
	sbx sh -c 'cat node_modules/config/prod.pem config/prod.pem 2>&1; true'
	expect_moved_not_read
	[ "$(cat "$T/work/config/prod.pem" 2>/dev/null ||
		cat "$T/work/node_modules/config/prod.pem")" = "$MOVED" ] ||
		fail "the host file is gone"
}

# A directory the scan cannot read is not scanned; the command could make
# one unreadable in one run and readable again in the next.
test_masked_file_in_directory_made_unreadable_stays_masked_next_run()
{
	mkdir -p config
	echo "$MOVED" >config/prod.pem
	sbx sh -c 'chmod 000 config 2>&1; true'
	sbx sh -c 'chmod 755 config; cat config/prod.pem 2>&1; true'
	expect_moved_not_read
	chmod 755 config
	[ "$(cat "$T/work/config/prod.pem")" = "$MOVED" ] || fail "the host file changed"
}

run_tests
