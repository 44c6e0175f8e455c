#!/bin/sh
# Secret files under the working directory: masked wherever they are, by
# name, except allowed names; symlinks neither unmask them nor lead the scan
# out of the tree; `policy` and --debug say what was masked and why.
. "$(dirname "$0")/../lib.sh"

test_secret_files_read_empty_wherever_they_are()
{
	# path under the working directory | pattern that masks it
	while IFS='|' read -r path pattern; do
		make_files "$path"
		sbx cat "$path"
		expect_status 0
		[ -z "$(out)" ] || fail "$path ($pattern) is readable: $(out)"
		expect_content "$path" "secret-$path"
	done <<'CASES'
.env|.env
config/prod.pem|*.pem
deep/a/b/c/.env.local|.env.*
keys/server.KEY|*.key
certs/client.p12|*.p12
home/ssh/id_rsa|id_rsa*
home/ssh/id_ed25519|id_ed25519*
keys/id_ecdsa|id_ecdsa*
keys/id_ed25519_sk|id_ed25519*
keys/id_dsa|id_dsa*
aws/credentials|*credentials*
k8s/db-secret.yaml|*secret*
.netrc|.netrc
certs/client.PFX|*.pfx
android/release.jks|*.jks
android/debug.keystore|*.keystore
infra/terraform.tfstate|*.tfstate
infra/terraform.tfstate.backup|*.tfstate.backup
infra/prod.tfvars|*.tfvars
deploy/kubeconfig|kubeconfig
.pypirc|.pypirc
config/production.env|*.env
.envrc|.envrc
sub/.envrc|.envrc
CASES
}

test_public_keys_and_id_source_files_stay_readable()
{
	make_files keys/id_rsa.pub keys/id_ed25519.pub src/id_map.go src/id_utils.js
	sbx cat keys/id_rsa.pub keys/id_ed25519.pub src/id_map.go src/id_utils.js
	expect_status 0
	expect_out "secret-keys/id_rsa.pub
secret-keys/id_ed25519.pub
secret-src/id_map.go
secret-src/id_utils.js"
}

test_id_file_holding_a_private_key_is_masked_whatever_its_key_type()
{
	mkdir keys
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n' >keys/id_deploy
	printf 'PuTTY-User-Key-File-3: ssh-ed25519\n' >keys/id_work.ppk
	printf -- '-----BEGIN RSA PRIVATE KEY-----\n' >keys/ID_CI
	sbx sh -c 'cat keys/id_deploy keys/id_work.ppk keys/ID_CI; echo end'
	expect_status 0
	expect_out "end"
	sbx policy
	expect_out_contains "$T/work/keys/id_deploy  (pattern \"id_* holding a private key\")"
}

test_yarnrc_is_masked_only_when_it_holds_an_auth_token()
{
	printf 'nodeLinker: node-modules\n' >.yarnrc.yml
	mkdir tok ident scoped
	printf 'npmAuthToken: "npm_abc"\n' >tok/.yarnrc.yml
	printf 'npmAuthIdent: "user:pass"\n' >ident/.yarnrc.yml
	printf 'npmScopes:\n  corp:\n    npmAuthToken: "xyz"\n' >scoped/.yarnrc.yml
	sbx sh -c 'cat .yarnrc.yml tok/.yarnrc.yml ident/.yarnrc.yml scoped/.yarnrc.yml'
	expect_status 0
	expect_out "nodeLinker: node-modules"
	sbx --debug true
	expect_err_contains "secrets: masked $T/work/tok/.yarnrc.yml (pattern \".yarnrc.yml holding credentials\")"
}

test_envrc_stays_masked_though_agent_configs_protect_it()
{
	# .envrc is also an @agent-configs file (read-only); the secret mask
	# must win over that read-only rule, not the other way round.
	echo 'export API_TOKEN=hunter2' >.envrc
	sbx sh -c 'cat .envrc; echo x >.envrc; cat .envrc; echo end'
	expect_out "end"
	expect_content .envrc 'export API_TOKEN=hunter2'
}

test_secret_files_cannot_be_written()
{
	make_files .env
	sbx sh -c 'echo stolen > .env'
	[ "$rc" -ne 0 ] || fail "could write .env"
	expect_content .env "secret-.env"
}

test_allowed_names_stay_readable()
{
	make_files .env.example .env.sample .env.template .env
	sbx cat .env.example .env.sample .env.template
	expect_status 0
	expect_out "secret-.env.example
secret-.env.sample
secret-.env.template"
}

test_secret_behind_symlink_stays_masked_when_link_name_is_innocent()
{
	make_files .env config/prod.pem
	ln -s .env settings.txt
	ln -s config linked-config
	sbx sh -c 'cat settings.txt linked-config/prod.pem'
	expect_status 0
	expect_out ""
}

test_secret_named_symlink_masks_its_target_outside_the_tree()
{
	echo "outside-secret" >"$T/real-token"
	ln -s "$T/real-token" api.key
	sbx cat api.key
	expect_status 0
	expect_out ""
	expect_content "$T/real-token" outside-secret
}

test_scan_does_not_follow_symlinked_directories_out_of_the_tree()
{
	mkdir -p "$T/elsewhere"
	echo x >"$T/elsewhere/.env"
	ln -s "$T/elsewhere" ext
	sbx policy
	expect_status 0
	expect_out_lacks "elsewhere"
	expect_out_contains "secret files       0 masked"
}

test_env_in_a_symlinked_directory_the_scan_skips_is_masked_through_the_link()
{
	# The scan does not enter node_modules or a configured skip, but a
	# link to a directory there shows its files in the project.
	make_files node_modules/@corp/conf/.env vendor/shared/prod.pem
	ln -s node_modules/@corp/conf conf
	ln -s vendor/shared shared
	echo '{"secrets": {"skip": ["vendor"]}}' >.agent-sandbox.json
	approve_config
	sbx sh -c 'cat conf/.env shared/prod.pem "$PWD/conf/.env"; echo end'
	expect_status 0
	expect_out "end"
	sbx policy
	expect_out_contains "secret files       2 masked"
	expect_out_contains "$T/work/conf/.env  (pattern \".env\")"
	expect_content node_modules/@corp/conf/.env "secret-node_modules/@corp/conf/.env"
}

test_symlinked_directory_loops_are_followed_once()
{
	make_files vendor/a/.env
	ln -s vendor/a a1
	ln -s vendor/a a2
	ln -s .. vendor/a/up
	ln -s . vendor/a/self
	ln -s ../.. vendor/a/root
	ln -s . here
	echo '{"secrets": {"skip": ["vendor"]}}' >.agent-sandbox.json
	approve_config
	sbx policy
	expect_status 0
	expect_out_contains "secret files       1 masked"
	sbx sh -c 'cat a2/.env a1/self/self/.env; echo end'
	expect_out "end"
}

test_symlink_named_like_a_skipped_directory_is_not_followed()
{
	make_files deps/pkg/cacert.pem
	echo '{"secrets": {"skip": ["deps"]}}' >.agent-sandbox.json
	approve_config
	mkdir lib
	ln -s ../deps lib/deps
	sbx cat lib/deps/pkg/cacert.pem
	expect_status 0
	expect_out "secret-deps/pkg/cacert.pem"
}

# A clone of $HOME/upstream in the working directory, with a token in a
# second remote's URL and in an insteadOf section.
make_repo_with_url_tokens()
{
	git init -q "$HOME/upstream" &&
		git -C "$HOME/upstream" -c user.name=u -c user.email=u@x commit -q --allow-empty -m one &&
		git clone -q "$HOME/upstream" . &&
		git remote add gh https://user:ghp_TOKEN1@github.com/o/r.git &&
		git config url."https://x-access-token:TOKEN2@github.com/".insteadOf https://github.com/ ||
		fail "could not make the repository"
	cp .git/config "$T/config-before"
}

test_git_config_is_shown_without_url_credentials_and_git_still_works()
{
	make_repo_with_url_tokens
	git -C "$HOME/upstream" -c user.name=u -c user.email=u@x commit -q --allow-empty -m two
	sbx sh -c 'cat .git/config; git remote -v; git config --get-regexp "^url\."
		git status --short && git log --oneline | wc -l &&
		git fetch -q origin && git log --oneline origin/HEAD | wc -l'
	expect_status 0
	expect_out_lacks TOKEN
	expect_out_contains "gh	https://github.com/o/r.git (fetch)"
	expect_out_contains "url.https://github.com/.insteadof https://github.com/"
	expect_out_contains "fetch = +refs/heads/*:refs/remotes/origin/*"
	[ "$(tail -2 "$T/out")" = "1
2" ] || fail "git log or fetch inside failed: $(tail -2 "$T/out")"
	cmp -s .git/config "$T/config-before" || fail "the host's .git/config changed"
	sbx --debug true
	expect_err_contains "git: $T/work/.git/config shown without 2 credentials (URLs, extraHeader values)"
	# The copy lives in a private directory of the run, gone afterwards.
	mkdir -m 700 "$T/xdg"
	XDG_RUNTIME_DIR="$T/xdg" sbx sh -c 'grep -c "url = https://github.com/o/r.git" .git/config'
	expect_out 1
	[ -z "$(find "$T/xdg" -name 'copies-*')" ] || fail "the copy was left behind"
}

test_global_git_configs_are_shown_without_url_credentials()
{
	mkdir -p "$HOME/.config/git"
	printf '[url "https://x-access-token:TOKEN3@github.com/"]\n\tinsteadOf = https://github.com/\n[user]\n\tname = u\n' >"$HOME/.gitconfig"
	printf '[credential "https://ci:TOKEN4@git.example"]\n\tusername = ci\n' >"$HOME/.config/git/config"
	cp "$HOME/.gitconfig" "$T/global-before"
	sbx sh -c 'cat "$HOME/.gitconfig" "$HOME/.config/git/config"; git config --global --list'
	expect_status 0
	expect_out_lacks TOKEN
	expect_out_contains "url.https://github.com/.insteadof=https://github.com/"
	expect_out_contains "[credential \"https://git.example\"]"
	cmp -s "$HOME/.gitconfig" "$T/global-before" || fail "the host's ~/.gitconfig changed"
}

test_git_configs_named_by_git_config_global_and_worktree_are_shown_without_credentials()
{
	git init -q . && git config extensions.worktreeConfig true
	printf '[remote "mirror"]\n\turl = https://ci:TOKEN5@git.example/r.git\n' >.git/config.worktree
	printf '[url "https://x-access-token:TOKEN6@github.com/"]\n\tinsteadOf = https://github.com/\n' \
		>"$HOME/elsewhere.gitconfig"
	GIT_CONFIG_GLOBAL=$HOME/elsewhere.gitconfig sbx --env GIT_CONFIG_GLOBAL sh -c \
		'cat "$GIT_CONFIG_GLOBAL" .git/config.worktree; git config --list'
	expect_status 0
	expect_out_lacks TOKEN
	expect_out_contains "remote.mirror.url=https://git.example/r.git"
	grep -q TOKEN6 "$HOME/elsewhere.gitconfig" || fail "the host's file changed"
}

test_git_config_tokens_split_by_quotes_or_a_continued_line_are_removed()
{
	git init -q .
	printf '[remote "a"]\n\turl = https://u:TO"KEN7"@git.example/r\n[remote "b"]\n\turl = https://u:TOKEN\\\n8@git.example/r\n' \
		>>.git/config
	git config --get remote.b.url | grep -q 'TOKEN8@' || fail "git does not read the token as set up"
	sbx sh -c 'cat .git/config; git config --get-regexp "remote\..*\.url"'
	expect_status 0
	expect_out_lacks TOKEN
	expect_out_contains "remote.a.url https://git.example/r"
	expect_out_contains "remote.b.url https://git.example/r"
}

test_git_config_extra_headers_are_shown_without_their_values()
{
	git init -q . && git remote add origin https://github.com/o/r.git
	# As a CI checkout persists its token.
	git config http.https://github.com/.extraheader "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46VE9LRU45"
	git config --get-regexp 'http\..*\.extraheader' | grep -q eC1h || fail "the header is not set up"
	sbx --debug sh -c 'cat .git/config; git config --get-regexp "http\..*\.extraheader"; git status --short >/dev/null && echo status-ok'
	expect_status 0
	expect_out_lacks eC1hY2Nlc3MtdG9rZW46VE9LRU45
	expect_out_contains "status-ok"
	expect_out_contains "url = https://github.com/o/r.git"
	expect_err_contains "shown without 1 credential"
}

test_git_config_files_included_from_a_config_are_shown_without_credentials()
{
	git init -q . && git remote add origin https://github.com/o/r.git
	printf '[url "https://x-access-token:TOKENA@github.com/"]\n\tinsteadOf = https://github.com/\n' \
		>"$HOME/work.inc"
	printf '[include]\n\tpath = ~/work.inc\n[user]\n\tname = u\n' >"$HOME/.gitconfig"
	# Relative to the including file, conditional, and nested once more.
	printf '[includeIf "onbranch:*"]\n\tpath = ../team.inc\n' >>.git/config
	printf '[include]\n\tpath = deeper.inc\n' >team.inc
	printf '[remote "b"]\n\turl = https://u:TOKENB@git.example/r\n' >deeper.inc
	git config --get-regexp 'remote\.b\.url' | grep -q TOKENB || fail "git does not read the include as set up"
	git config --get-regexp '^url\.' | grep -q TOKENA || fail "git does not read the global include"
	sbx sh -c 'cat "$HOME/work.inc" deeper.inc; git config --get-regexp "remote\.b\.url|^url\."'
	expect_status 0
	expect_out_lacks TOKEN
	expect_out_contains "remote.b.url https://git.example/r"
	expect_out_contains "url.https://github.com/.insteadof https://github.com/"
	grep -q TOKENB deeper.inc && grep -q TOKENA "$HOME/work.inc" || fail "the host's files changed"
}

test_git_config_without_credentials_is_the_host_file()
{
	git init -q . && git remote add origin https://github.com/o/r.git
	sbx --debug sh -c 'cat .git/config'
	expect_status 0
	expect_out_contains "url = https://github.com/o/r.git"
	expect_err_lacks "shown without"
}

test_skipped_directories_are_not_scanned()
{
	make_files node_modules/pkg/.env .git/secret-thing vendor/.env
	echo '{"secrets": {"skip": ["vendor"]}}' >.agent-sandbox.json
	approve_config
	sbx cat node_modules/pkg/.env vendor/.env
	expect_status 0
	expect_out "secret-node_modules/pkg/.env
secret-vendor/.env"
}

test_configured_patterns_add_and_remove()
{
	make_files db.sqlite .env notes-secret.md
	cat >.agent-sandbox.jsonc <<'JSON'
{
  "secrets": {
    "patterns": ["*.sqlite", "!*secret*"],
    "allow": [".env"]
  }
}
JSON
	approve_config
	sbx cat db.sqlite .env notes-secret.md
	expect_status 0
	expect_out "secret-.env
secret-notes-secret.md"
}

test_configured_pattern_with_posix_class_masks_only_matching_names()
{
	# The class means what it means in a path rule: one letter or digit
	# of the class, not the bracket text itself.
	make_files 1prod.dump prod.dump data/7.dump data/x7.dump
	cat >.agent-sandbox.jsonc <<'JSON'
{"secrets": {"patterns": ["[[:digit:]]*.dump"]}}
JSON
	approve_config
	sbx cat 1prod.dump prod.dump data/7.dump data/x7.dump
	expect_status 0
	expect_out "secret-prod.dump
secret-data/x7.dump"
	expect_content 1prod.dump "secret-1prod.dump"
}

test_npmrc_is_masked_only_when_it_holds_credentials()
{
	printf 'registry=https://registry.example/\n' >.npmrc
	mkdir tok
	printf '//registry.npmjs.org/:_authToken=abc\n' >tok/.npmrc
	sbx sh -c 'cat .npmrc tok/.npmrc'
	expect_status 0
	expect_out "registry=https://registry.example/"
}

test_policy_lists_masked_files_and_patterns()
{
	make_files .env config/prod.pem .env.example
	sbx policy
	expect_status 0
	expect_out_contains "secret files       2 masked"
	expect_out_contains "$T/work/.env  (pattern \".env\")"
	expect_out_contains "$T/work/config/prod.pem  (pattern \"*.pem\")"
	expect_out_lacks ".env.example"
}

test_debug_lists_masked_files_and_patterns()
{
	make_files deep/a/.env.local
	sbx --debug true
	expect_status 0
	expect_err_contains "secrets: masked $T/work/deep/a/.env.local (pattern \".env.*\")"
	expect_err_contains "secrets: scanned "
}

test_masking_leaves_nothing_on_the_host()
{
	make_files .env config/prod.pem deep/a/b/c/.env.local
	before=$(snapshot .)
	sbx sh -c 'cat .env config/prod.pem; true'
	expect_status 0
	[ "$(snapshot .)" = "$before" ] || fail "the run changed the tree"
}

test_explicit_rule_for_the_exact_path_unmasks_it()
{
	make_files .env
	sbx --ro .env cat .env
	expect_status 0
	expect_out "secret-.env"
}

test_policy_says_files_created_after_the_start_are_not_masked()
{
	echo 'TOKEN=x' >.env
	sbx policy
	expect_status 0
	expect_out_contains "secret files       1 masked"
	expect_out_contains "files created or renamed into a secret name after the start are not masked"
	# And so it is: a secret written during the run stays readable in it.
	sbx sh -c 'echo late >.env.late; cat .env.late'
	expect_status 0
	expect_out "late"
}


# Passwords hold what git keeps in a value: ";" inside quotes, "'", spaces;
# a proxy may be written without a scheme, user:password@host:port; an
# inline credential helper may hold the password.
test_git_config_passwords_with_quotes_and_spaces_and_proxies_without_scheme_are_removed()
{
	git init -q .
	printf '[remote "a"]\n\turl = "https://u:p;cr3tA@git.example/r"\n[remote "b"]\n\turl = https://u:p'"'"'cr3tB@git.example/r\n[remote "c"]\n\turl = https://u:p cr3tC@git.example/r\n\tproxy = u:cr3tD@proxy.example:3128\n[http]\n\tproxy = "u:cr3tE@proxy.example:3128"\n[credential]\n\thelper = "!f() { echo password=cr3tF; }; f"\n' \
		>>.git/config
	git config --get-regexp 'remote\..*\.url|proxy|helper' >"$T/set-up" || fail "git cannot read the config"
	[ "$(grep -c cr3t "$T/set-up")" = 6 ] || fail "git does not read the passwords as set up"
	sbx sh -c 'cat .git/config; git config --get-regexp "remote\..*\.url|proxy|helper"'
	expect_status 0
	expect_out_lacks cr3t
	expect_out_contains "remote.c.url https://git.example/r"
	expect_out_contains "remote.c.proxy proxy.example:3128"
	expect_out_contains "http.proxy proxy.example:3128"
}

# A submodule's config (.git/modules/<name>/config) is pinned, not mounted:
# a token in its remote URL or an extraHeader, as CI checkouts leave them,
# must not be readable either.
test_submodule_config_is_shown_without_url_credentials()
{
	git init -q "$HOME/subup" &&
		git -C "$HOME/subup" -c user.name=u -c user.email=u@x commit -q --allow-empty -m one &&
		git init -q -b main . &&
		git -c protocol.file.allow=always submodule add -q "$HOME/subup" sub >/dev/null 2>&1 &&
		git -c user.name=u -c user.email=u@x commit -qm sub || fail "could not make the repository"
	git -C sub config remote.origin.url "https://x-access-token:TOKENS1@github.com/o/sub.git"
	git -C sub config http.https://github.com/.extraheader "AUTHORIZATION: basic TOKENS1"
	grep -q "TOKENS1" .git/modules/sub/config || fail "the token is not where git keeps it"
	sbx sh -c 'cat .git/modules/sub/config; cd sub && git config --list; true'
	expect_status 0
	expect_out_lacks TOKEN
}


# Password files of common tools and the directories where the AWS CLI, SSH
# and GnuPG keep keys, when a copy sits in the project.
test_password_files_and_key_directories_of_common_tools_are_masked()
{
	mkdir -p .aws/sso/cache .ssh .gnupg/private-keys-v1.d
	for f in .pgpass .my.cnf .s3cfg .boto .htpasswd .aws/sso/cache/a.json .ssh/deploy \
		.gnupg/private-keys-v1.d/k.key; do
		echo "TOKEN-$f" >"$f"
	done
	sbx sh -c 'cat .pgpass .my.cnf .s3cfg .boto .htpasswd .aws/sso/cache/a.json .ssh/deploy \
		.gnupg/private-keys-v1.d/k.key; ls -A .aws .ssh .gnupg; true'
	expect_status 0
	expect_out_lacks TOKEN
	expect_out_lacks sso
	expect_out_lacks deploy
}


# Tokens that tools keep in the home directory: git hosting (GitLab, hub,
# Copilot, Composer), cloud and deploy CLIs, database password files,
# age keys, shell histories, browser cookies.
test_home_credentials_of_common_tools_read_empty()
{
	for f in .config/glab-cli/config.yml .config/hub .config/github-copilot/hosts.json \
		.config/composer/auth.json .vault-token .terraform.d/credentials.tfrc.json \
		.fly/config.yml .huggingface/token .pgpass .my.cnf .s3cfg .boto \
		.config/sops/age/keys.txt .local/share/atuin/history.db .irb_history \
		.mozilla/firefox/p/cookies.sqlite .config/google-chrome/Default/Cookies \
		.vercel/auth.json .config/rclone/rclone.conf; do
		mkdir -p "$HOME/$(dirname "$f")"
		echo "TOKEN-$f" >"$HOME/$f"
	done
	sbx sh -c 'cd "$HOME" && find . -type f -exec cat {} + 2>/dev/null; true'
	expect_status 0
	expect_out_lacks TOKEN
}


# Git reads configuration from the environment too: "git -c" hands it on in
# GIT_CONFIG_PARAMETERS, and CI jobs set GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>
# and GIT_CONFIG_VALUE_<n> to an extraHeader or a URL with a token.
test_git_config_in_the_environment_with_credentials_does_not_reach_the_command()
{
	git init -q .
	GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=http.extraheader \
		GIT_CONFIG_VALUE_0="AUTHORIZATION: basic TOKENE1" \
		GIT_CONFIG_KEY_1=remote.origin.url GIT_CONFIG_VALUE_1="https://u:TOKENE2@h/r" \
		GIT_CONFIG_PARAMETERS="'http.extraheader'='AUTHORIZATION: basic TOKENE3'" \
		MYSQL_PWD=TOKENE4 SSHPASS=TOKENE5 \
		sbx sh -c 'env; git config --list'
	expect_status 0
	expect_out_lacks TOKEN
	# Without credentials they pass: git inside keeps its -c settings.
	GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.editor GIT_CONFIG_VALUE_0=ed \
		GIT_CONFIG_PARAMETERS="'user.name'='someone'" sbx git config --list
	expect_status 0
	expect_out_contains "core.editor=ed"
	expect_out_contains "user.name=someone"
}

run_tests
