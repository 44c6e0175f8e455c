#!/bin/sh
# The filesystem model: what is readable, writable and hidden, and that a
# run leaves nothing on the host that the command did not write.
. "$(dirname "$0")/../lib.sh"

test_working_directory_is_writable()
{
	sbx sh -c 'echo data > new && mkdir d && touch d/f'
	expect_status 0
	expect_content new data
	expect_file d/f
}

test_host_root_is_read_only()
{
	for target in /usr/agent-sandbox-test /etc/agent-sandbox-test; do
		sbx sh -c "touch '$target'"
		[ "$rc" -ne 0 ] || fail "could create $target"
		expect_no_file "$target"
	done
}

test_writes_outside_the_project_in_tmp_stay_in_the_private_tmp()
{
	sbx sh -c "touch '$T/outside' && ls '$T/outside'"
	expect_status 0
	expect_no_file "$T/outside"
}

test_home_is_read_only()
{
	echo original >"$HOME/.bashrc"
	sbx sh -c 'echo changed > "$HOME/.bashrc"'
	[ "$rc" -ne 0 ] || fail "could write ~/.bashrc"
	expect_content "$HOME/.bashrc" original
	sbx sh -c 'touch "$HOME/new"'
	[ "$rc" -ne 0 ] || fail "could create a file in home"
	sbx cat "$HOME/.bashrc"
	expect_out original
}

test_credential_directories_in_home_are_hidden()
{
	for d in .ssh .gnupg .aws .kube .config/gh; do
		mkdir -p "$HOME/$d"
		echo secret >"$HOME/$d/key"
		sbx sh -c "ls -A '$HOME/$d'; cat '$HOME/$d/key'"
		[ -z "$(out)" ] || fail "$d is visible: $(out)"
		sbx sh -c "echo x > '$HOME/$d/new'"
		[ "$rc" -ne 0 ] || fail "could write into hidden $d"
	done
}

test_credential_files_in_home_read_empty()
{
	for f in .netrc .git-credentials .pypirc .docker/config.json; do
		mkdir -p "$(dirname "$HOME/$f")"
		echo "secret-$f" >"$HOME/$f"
		sbx cat "$HOME/$f"
		expect_status 0
		expect_out ""
	done
}

test_excluded_file_reads_empty_and_cannot_be_written()
{
	echo secret >token
	sbx --exclude token sh -c 'cat token; echo x > token'
	[ "$rc" -ne 0 ] || fail "could write the excluded file"
	expect_out ""
	expect_content token secret
}

test_excluded_directory_is_empty_and_read_only()
{
	mkdir private
	echo secret >private/a
	sbx --exclude private sh -c 'ls -A private; touch private/b'
	[ "$rc" -ne 0 ] || fail "could write into the excluded directory"
	expect_out ""
	expect_no_file private/b
}

test_ro_rule_protects_a_subdirectory_of_the_working_directory()
{
	mkdir -p src/auth
	echo code >src/auth/login.c
	sbx --ro src/auth sh -c 'cat src/auth/login.c; echo evil > src/auth/login.c'
	[ "$rc" -ne 0 ] || fail "could write under the ro rule"
	expect_out code
	expect_content src/auth/login.c code
	sbx --ro src/auth sh -c 'touch src/other'
	expect_status 0
}

test_rw_rule_opens_a_directory_outside_the_project()
{
	mkdir "$T/shared"
	sbx --rw "$T/shared" sh -c "echo x > '$T/shared/f'"
	expect_status 0
	expect_content "$T/shared/f" x
}

test_longer_path_beats_shorter()
{
	mkdir -p data/out
	sbx --ro data --rw data/out sh -c 'touch data/out/ok; touch data/no'
	[ "$rc" -ne 0 ] || fail "data/no was writable"
	expect_file data/out/ok
	expect_no_file data/no
}

test_exact_path_beats_a_glob_for_the_same_path()
{
	mkdir -p pkgs/a pkgs/b
	sbx --ro 'pkgs/*' --rw pkgs/a sh -c 'touch pkgs/a/ok; touch pkgs/b/no'
	[ "$rc" -ne 0 ] || fail "pkgs/b was writable"
	expect_file pkgs/a/ok
	expect_no_file pkgs/b/no
}

test_exclude_beats_ro_and_rw_for_the_same_path_and_layer()
{
	echo secret >f
	sbx --rw f --ro f --exclude f cat f
	expect_out ""
	sbx --rw f --ro f sh -c 'echo x > f'
	[ "$rc" -ne 0 ] || fail "ro lost to rw at the same layer"
}

test_cli_layer_beats_project_and_project_beats_global()
{
	mkdir -p "$HOME/.config/agent-sandbox" lib
	echo '{"filesystem": {"ro": ["'"$T"'/work/lib"]}}' >"$HOME/.config/agent-sandbox/config.json"
	sbx sh -c 'touch lib/x'
	[ "$rc" -ne 0 ] || fail "global ro was not applied"
	echo '{"filesystem": {"rw": ["lib"]}}' >.agent-sandbox.json
	approve_config
	sbx sh -c 'touch lib/x'
	expect_status 0
	sbx --ro lib sh -c 'touch lib/y'
	[ "$rc" -ne 0 ] || fail "the CLI ro did not beat the project rw"
}

test_single_segment_glob_expands_to_existing_paths()
{
	mkdir -p config/a config/b
	echo 1 >config/a/secrets.json
	echo 2 >config/b/secrets.json
	sbx --exclude 'config/*/secrets.json' sh -c 'cat config/a/secrets.json config/b/secrets.json'
	expect_out ""
	expect_no_file 'config/*'
}

test_rules_for_missing_paths_leave_nothing_on_the_host()
{
	mkdir -p repo/.git
	# The audit log is the one file a run writes on purpose; keep it out
	# of the trees compared here.
	export XDG_STATE_HOME="$T/state"
	before=$(snapshot "$T/work"; snapshot "$HOME")
	sbx --exclude .env --exclude missing-dir/secret --ro nothing-here --rw 'absent/*' \
		--exclude "$HOME/.bashrc" sh -c 'cat .env 2>/dev/null; true'
	expect_status 0
	after=$(snapshot "$T/work"; snapshot "$HOME")
	[ "$before" = "$after" ] || fail "the host tree changed: $(printf '%s\n%s' "$before" "$after" | sort | uniq -u)"
}

test_default_presets_leave_nothing_on_the_host()
{
	git init -q repo 2>/dev/null || mkdir -p repo/.git/hooks
	cd repo
	export XDG_STATE_HOME="$T/state" # the audit log, written on purpose
	before=$(snapshot "$T/work"; snapshot "$HOME")
	sbx true
	expect_status 0
	after=$(snapshot "$T/work"; snapshot "$HOME")
	[ "$before" = "$after" ] || fail "the host tree changed: $(printf '%s\n%s' "$before" "$after" | sort | uniq -u)"
}

test_tmp_is_private_and_empty()
{
	marker=$(mktemp /tmp/as-host-marker.XXXXXX)
	cd /
	sbx -C / sh -c "ls -A /tmp; test ! -e '$marker'"
	rm -f "$marker"
	expect_status 0
	# Only the directories leading to the bound HOME are there.
	expect_out "$(basename "$T")"
	sbx -C / sh -c 'echo x > /tmp/scratch && cat /tmp/scratch'
	expect_out x
	expect_no_file /tmp/scratch
}

test_dev_proc_and_run_are_fresh()
{
	sbx sh -c 'ls /dev | sort | tr "\n" " "'
	expect_out_contains "null"
	expect_out_lacks "sda"
	sbx sh -c 'echo $$; ls -d /proc/[0-9]* | wc -l'
	[ "$(head -1 "$T/out")" -lt 10 ] || fail "not in a pid namespace: $(out)"
	sbx sh -c 'ls -A /run'
	expect_out "agent-sandbox"
}

test_the_command_has_no_capabilities_and_no_new_privs()
{
	sbx sh -c 'grep -E "^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)" /proc/self/status'
	expect_status 0
	[ "$(grep -c '0000000000000000' "$T/out")" -eq 4 ] || fail "capabilities left: $(out)"
	expect_out_contains "NoNewPrivs:	1"
}

test_read_only_flag_makes_the_working_directory_read_only()
{
	echo keep >f
	sbx --read-only sh -c 'echo x > f'
	[ "$rc" -ne 0 ] || fail "the working directory was writable"
	expect_content f keep
	sbx --read-only sh -c 'echo x > /tmp/t && cat /tmp/t'
	expect_status 0
	expect_out x
}

test_read_only_overrides_rw_rules_and_presets()
{
	mkdir -p "$HOME/.cache" extra
	sbx --read-only --rw extra sh -c 'touch extra/x || touch "$HOME/.cache/x" || exit 9'
	expect_status 9
	expect_no_file extra/x
}

test_read_only_config_key_applies()
{
	echo '{"read-only": true}' >.agent-sandbox.jsonc
	sbx sh -c 'touch f'
	[ "$rc" -ne 0 ] || fail "config read-only was ignored"
	sbx --read-only=false sh -c 'touch f'
	expect_status 0
}

test_symlinked_rule_applies_to_its_target()
{
	mkdir real
	ln -s real link
	sbx --ro link sh -c 'touch real/x'
	[ "$rc" -ne 0 ] || fail "ro through a symlink did not protect the target"
	echo s >real/secret
	sbx --exclude link sh -c 'echo s > real/y'
	[ "$rc" -ne 0 ] || fail "excluded target was writable"
	sbx --exclude link ls -A real
	expect_out ""
}

test_symlink_planted_in_a_writable_area_cannot_loosen_its_target()
{
	# A rw rule naming a link in the (writable) project that points at a
	# read-only place must not make that place writable.
	mkdir "$T/outside"
	ln -s "$T/outside" escape
	sbx --rw escape sh -c "touch '$T/outside/x'"
	[ "$rc" -ne 0 ] || fail "a planted symlink made its target writable"
	expect_no_file "$T/outside/x"
}

test_husky_and_sandbox_config_are_read_only()
{
	mkdir .husky
	echo 'npm test' >.husky/pre-commit
	echo '{}' >.agent-sandbox.json
	for attempt in 'echo x > .husky/pre-commit' 'rm .husky/pre-commit' \
		'echo "{\"read-only\": false}" > .agent-sandbox.json' 'rm .agent-sandbox.json' \
		'touch .husky/new'; do
		sbx sh -c "$attempt"
		[ "$rc" -ne 0 ] || fail "'$attempt' succeeded"
	done
	expect_content .husky/pre-commit 'npm test'
	expect_content .agent-sandbox.json '{}'
}

test_global_config_directory_is_read_only()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	echo '{}' >"$HOME/.config/agent-sandbox/config.jsonc"
	sbx sh -c 'echo "{\"docker\": true}" > "$HOME/.config/agent-sandbox/config.jsonc"'
	[ "$rc" -ne 0 ] || fail "the global config was writable"
	expect_content "$HOME/.config/agent-sandbox/config.jsonc" '{}'
}

test_config_flag_file_is_read_only()
{
	echo '{}' >my.json
	sbx -c my.json sh -c 'echo x > my.json'
	[ "$rc" -ne 0 ] || fail "the --config file was writable"
}

test_git_hooks_and_config_are_read_only()
{
	git init -q . || fail "git init failed"
	for attempt in 'echo x > .git/hooks/pre-commit' 'echo x >> .git/config' \
		'rm -rf .git/hooks' 'mv .git/hooks .git/h2'; do
		sbx sh -c "$attempt"
		[ "$rc" -ne 0 ] || fail "'$attempt' succeeded"
	done
	expect_no_file .git/hooks/pre-commit
	sbx sh -c 'echo x > .git/scratch'
	expect_status 0
}

test_git_worktree_protects_the_main_repositorys_hooks()
{
	mkdir main
	(cd main && git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m init &&
		git worktree add -q ../wt) || fail "git worktree setup failed"
	cd wt
	sbx sh -c 'echo x > ../main/.git/hooks/pre-commit'
	[ "$rc" -ne 0 ] || fail "the main repository's hooks were writable from a worktree"
	sbx sh -c 'echo x >> ../main/.git/config'
	[ "$rc" -ne 0 ] || fail "the main repository's config was writable from a worktree"
	sbx sh -c 'touch ../main/.git/worktrees/wt/scratch'
	expect_status 0
}

test_git_strict_protects_tags_and_other_branches()
{
	git init -q -b main . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m init &&
		git tag v1 && git branch other || fail "git setup failed"
	echo '{"filesystem": {"presets": ["@git-strict"]}}' >.agent-sandbox.json
	sbx sh -c 'echo 0000000000000000000000000000000000000000 > .git/refs/tags/v1'
	[ "$rc" -ne 0 ] || fail "a tag was writable"
	sbx sh -c 'echo 0000000000000000000000000000000000000000 > .git/refs/heads/other'
	[ "$rc" -ne 0 ] || fail "another branch was writable"
}

test_lint_configs_are_read_only_unless_the_preset_is_removed()
{
	echo '[tool]' >ruff.toml
	echo '{}' >tsconfig.json
	echo 'linters: {}' >.golangci.yml
	for f in ruff.toml tsconfig.json .golangci.yml; do
		sbx sh -c "echo x > $f"
		[ "$rc" -ne 0 ] || fail "$f was writable"
	done
	echo '{"filesystem": {"presets": ["!@lint/python"]}}' >.agent-sandbox.json
	approve_config
	sbx sh -c 'echo x > ruff.toml'
	expect_status 0
	sbx sh -c 'echo x > tsconfig.json'
	[ "$rc" -ne 0 ] || fail "removing @lint/python also opened tsconfig.json"
}

test_caches_and_agent_directories_are_writable()
{
	mkdir -p "$HOME/.cache" "$HOME/.claude"
	sbx sh -c 'touch "$HOME/.cache/c" "$HOME/.claude/c"'
	expect_status 0
	expect_file "$HOME/.cache/c"
}

test_cwd_inside_an_excluded_path_is_refused()
{
	mkdir -p vault/inner
	sbx -C vault/inner --exclude "$T/work/vault" sh -c 'touch ran'
	expect_status 2
	expect_err_contains "excluded"
	expect_no_file vault/inner/ran
}

test_missing_home_is_refused_while_base_applies()
{
	HOME="$T/no-such-home" sbx sh -c 'touch ran'
	expect_status 1
	expect_err_contains "home"
	expect_no_file ran
	echo '{"filesystem": {"presets": ["!@base"], "rw": ["."]}}' >.agent-sandbox.json
	export XDG_STATE_HOME="$T/state" # the approval, without creating the home
	approve_config
	HOME="$T/no-such-home" sbx true
	expect_status 0
}

test_docker_socket_is_masked_unless_allowed()
{
	echo socket-contents >"$T/docker.sock"
	DOCKER_HOST="unix://$T/docker.sock" sbx cat "$T/docker.sock"
	expect_status 0
	expect_out ""
	DOCKER_HOST="unix://$T/docker.sock" sbx --docker cat "$T/docker.sock"
	expect_out socket-contents
}

test_docker_socket_behind_a_symlink_is_masked()
{
	echo socket-contents >"$T/real.sock"
	ln -s "$T/real.sock" "$T/docker.sock"
	DOCKER_HOST="unix://$T/docker.sock" sbx cat "$T/real.sock"
	expect_out ""
}

test_environment_passes_through_with_agent_sandbox_set()
{
	MY_VAR=value sbx sh -c 'echo "$MY_VAR $AGENT_SANDBOX"'
	expect_out "value 1"
}

run_tests
