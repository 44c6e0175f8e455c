#!/bin/sh
# Secret patterns with paths, gitignore-style: a name matches at any depth, a
# "/" inside anchors the pattern at the working directory, "**" spans
# directories, a trailing "/" masks a whole directory; secrets.allow takes the
# same forms and wins. `policy` and --debug name the pattern that masked each
# path, and malformed patterns are refused where they are written.
. "$(dirname "$0")/../lib.sh"

# Reads each path inside the sandbox and prints "path=content" per line.
read_all()
{
	sbx sh -c 'for f; do printf "%s=%s\n" "$f" "$(cat "$f" 2>/dev/null)"; done' sh "$@"
}

test_anchored_pattern_masks_that_path_and_not_the_same_name_elsewhere()
{
	make_files config/prod.pem other/prod.pem sub/config/prod.pem
	# "!*.pem" leaves the anchored pattern on its own.
	echo '{"secrets": {"patterns": ["!*.pem", "config/prod.pem"]}}' >.agent-sandbox.json
	approve_config
	read_all config/prod.pem other/prod.pem sub/config/prod.pem
	expect_status 0
	expect_out "config/prod.pem=
other/prod.pem=secret-other/prod.pem
sub/config/prod.pem=secret-sub/config/prod.pem"
	expect_content config/prod.pem "secret-config/prod.pem"
}

test_anchored_pattern_names_a_file_through_a_linked_directory()
{
	# config is a link: the walk meets the file as real/prod.pem, but the
	# sandbox shows it as config/prod.pem too, which is what the pattern
	# names. A link back up must not make the walk loop.
	make_files real/prod.pem real/dev.pem
	ln -s real config
	ln -s .. real/up
	echo '{"secrets": {"patterns": ["!*.pem", "config/prod.pem", "/**/up/x/y.pem"]}}' \
		>.agent-sandbox.json
	approve_config
	read_all config/prod.pem real/prod.pem config/dev.pem
	expect_out "config/prod.pem=
real/prod.pem=
config/dev.pem=secret-real/dev.pem"
	sbx policy
	expect_out_contains "secret files       1 masked"
	expect_out_contains "$T/work/config/prod.pem  (pattern \"config/prod.pem\")"
}

test_leading_slash_anchors_a_single_name_at_the_working_directory()
{
	make_files .env.local sub/.env.local secrets/a.key x/secrets/b.key
	echo '{"secrets": {"patterns": ["!.env.*", "!*.key", "/.env.local", "/secrets/*.key"]}}' \
		>.agent-sandbox.json
	approve_config
	read_all .env.local sub/.env.local secrets/a.key x/secrets/b.key
	expect_out ".env.local=
sub/.env.local=secret-sub/.env.local
secrets/a.key=
x/secrets/b.key=secret-x/secrets/b.key"
}

test_original_policy_double_star_patterns_work_as_written()
{
	# The blocked and allowed patterns of the original policy, with the
	# built-in names they overlap removed so that only they can mask.
	make_files .env a/b/.env.prod .env.example deep/er/k.pem aws/credentials \
		x/y/credentials.json notes.txt
	cat >.agent-sandbox.json <<'EOF'
{"secrets": {
  "patterns": ["!.env", "!.env.*", "!*.pem", "!*credentials*",
               "**/.env*", "**/*.pem", "**/credentials*"],
  "allow": [".env.example"]}}
EOF
	approve_config
	read_all .env a/b/.env.prod .env.example deep/er/k.pem aws/credentials \
		x/y/credentials.json notes.txt
	expect_status 0
	expect_out ".env=
a/b/.env.prod=
.env.example=secret-.env.example
deep/er/k.pem=
aws/credentials=
x/y/credentials.json=
notes.txt=secret-notes.txt"
	sbx policy
	expect_out_contains "$T/work/a/b/.env.prod  (pattern \"**/.env*\")"
	expect_out_contains "$T/work/deep/er/k.pem  (pattern \"**/*.pem\")"
}

test_double_star_in_the_middle_spans_zero_or_more_directories()
{
	make_files config/a.pem config/x/y/b.pem other/c.pem configs/d.pem
	echo '{"secrets": {"patterns": ["!*.pem", "config/**/*.pem"]}}' >.agent-sandbox.json
	approve_config
	read_all config/a.pem config/x/y/b.pem other/c.pem configs/d.pem
	expect_out "config/a.pem=
config/x/y/b.pem=
other/c.pem=secret-other/c.pem
configs/d.pem=secret-configs/d.pem"
}

test_trailing_slash_masks_a_whole_directory_and_nothing_named_so_that_is_a_file()
{
	make_files certs/ca.crt certs/sub/inner.txt deep/x/certs/y.txt file/certs
	echo '{"secrets": {"patterns": ["certs/"]}}' >.agent-sandbox.json
	before=$(snapshot "$T/work")
	sbx sh -c 'ls -A certs deep/x/certs; cat certs/ca.crt certs/sub/inner.txt 2>&1; cat file/certs'
	expect_out "certs:

deep/x/certs:
cat: certs/ca.crt: No such file or directory
cat: certs/sub/inner.txt: No such file or directory
secret-file/certs"
	# Nothing can be written into the masked directory either.
	sbx sh -c 'echo x >certs/new || true; mkdir certs/d || true'
	[ "$(snapshot "$T/work")" = "$before" ] || fail "the host tree changed"
	sbx --debug true
	expect_err_contains "secrets: masked $T/work/certs/ (directory) (pattern \"certs/\")"
	sbx policy
	expect_out_contains "$T/work/deep/x/certs/ (directory, pattern \"certs/\")"
}

test_masked_directory_is_not_walked_by_the_scan()
{
	make_files .aws/credentials .aws/config .aws/cli/cache/token.json
	echo '{"secrets": {"patterns": [".aws/"]}}' >.agent-sandbox.json
	sbx policy
	expect_status 0
	# Only the directory itself: the credentials inside it are not found
	# (and need no mask of their own).
	expect_out_contains "secret files       1 masked"
	expect_out_contains "$T/work/.aws/ (directory, pattern \".aws/\")"
	expect_out_lacks "$T/work/.aws/credentials"
}

test_directory_pattern_masks_a_linked_directory_and_its_target()
{
	# A link named like a masked directory masks what it points at, inside
	# the tree or out of it, as a secret-named link to a file does.
	mkdir -p "$T/elsewhere"
	echo outside-token >"$T/elsewhere/credentials"
	ln -s "$T/elsewhere" .aws
	echo '{"secrets": {"patterns": [".aws/"]}}' >.agent-sandbox.json
	sbx sh -c 'cat .aws/credentials "$1/credentials" 2>&1; ls -A .aws' sh "$T/elsewhere"
	expect_out_lacks "outside-token"
	sbx policy
	expect_out_contains "$T/work/.aws/ (directory, pattern \".aws/\")"
	expect_content "$T/elsewhere/credentials" outside-token
}

test_allow_with_a_path_unmasks_that_file_only()
{
	make_files config/dev.pem config/prod.pem other/dev.pem
	echo '{"secrets": {"allow": ["config/dev.pem"]}}' >.agent-sandbox.json
	# Unmasking a secret loosens the defaults: it needs approval.
	sbx true
	expect_status 2
	expect_err_contains "\"secrets.allow\": \"config/dev.pem\" unmasks secret files"
	approve_config
	read_all config/dev.pem config/prod.pem other/dev.pem
	expect_out "config/dev.pem=secret-config/dev.pem
config/prod.pem=
other/dev.pem="
}

test_allow_with_a_trailing_slash_keeps_a_directory_unmasked()
{
	make_files .aws/config fixtures/.aws/config
	echo '{"secrets": {"patterns": [".aws/"], "allow": ["fixtures/.aws/"]}}' >.agent-sandbox.json
	approve_config
	read_all .aws/config fixtures/.aws/config
	expect_out ".aws/config=
fixtures/.aws/config=secret-fixtures/.aws/config"
}

test_malformed_patterns_name_file_line_column_and_expected_form()
{
	cat >.agent-sandbox.json <<'EOF'
{
  "secrets": {"patterns": ["ok.pem",
      "config//prod.pem"]}
}
EOF
	sbx true
	expect_status 2
	expect_err_contains "$T/work/.agent-sandbox.json:3:7: in \"secrets.patterns\": invalid pattern \"config//prod.pem\": empty segment at offset 7"
	expect_err_contains "\"config/prod.pem\", \"/secrets/*.key\""
	echo '{"secrets": {"allow": ["../outside.pem"]}}' >.agent-sandbox.json
	sbx true
	expect_status 2
	expect_err_contains ".agent-sandbox.json:1:24: in \"secrets.allow\": invalid pattern \"../outside.pem\": \"..\" segment at offset 0"
}

run_tests
