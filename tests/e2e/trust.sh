#!/bin/sh
# The trust rule: a project config that loosens what the global config and
# the defaults decided is refused (exit 2, every loosening named with
# file:line:column, and the approving command) until the user approves that
# exact content with `agent-sandbox trust`; one that only tightens applies
# at once. The approval lives where no sandbox can write it.
. "$(dirname "$0")/../lib.sh"

P=.agent-sandbox.json
store() { echo "$HOME/.local/state/agent-sandbox/trusted"; }

# Things the loosening cases point at: a protected hook directory, a hidden
# ~/.ssh and a wrapper script.
make_fixtures()
{
	mkdir -p .git/hooks src "$HOME/.ssh"
	printf '#!/bin/sh\nexec "$AGENT_SANDBOX_REAL" "$@"\n' >wrap.sh
	chmod +x wrap.sh
}

test_each_loosening_is_refused_until_trusted_then_applies()
{
	make_fixtures
	p="$T/work/$P"
	# config | where | what the refusal says
	while IFS='|' read -r text where want; do
		printf '%s\n' "$text" >$P
		sbx sh -c 'touch ran'
		[ "$rc" -eq 2 ] || fail "$text: expected status 2, got $rc"
		grep -qF -- "$p:$where: $want" "$T/err" || fail "$text: stderr lacks '$p:$where: $want': $(err)"
		grep -qF -- "agent-sandbox trust $p" "$T/err" || fail "$text: no approval command: $(err)"
		expect_no_file ran
		sbx trust
		[ "$rc" -eq 0 ] || fail "$text: trust failed with $rc: $(err)"
		sbx sh -c 'touch ran'
		[ "$rc" -eq 0 ] || fail "$text: refused after trust ($rc): $(err)"
		expect_file ran
		rm -f ran $P
	done <<'CASES'
{"network": true}|1:13|"network": true gives the sandbox the host network
{"network": {"allow": ["example.org"]}}|1:24|"allow": "example.org" lets the sandbox reach more hosts
{"network": {"localhost": [5432]}}|1:28|"localhost": 5432 opens the host's loopback port 5432
{"network": {"resolve": {"a.example": "10.0.0.5"}}}|1:26|"resolve": "a.example" pins a name
{"docker": true}|1:12|"docker": true exposes the Docker socket
{"commands": {"git": true}}|1:22|"commands" "git": raw replaces @git
{"commands": {"git": "./wrap.sh"}}|1:22|"commands" "git": ./wrap.sh replaces @git
{"env": {"allow": ["GITHUB_TOKEN"]}}|1:20|"env.allow": "GITHUB_TOKEN" passes a variable
{"env": {"allow": ["MY_*"]}}|1:20|"env.allow": "MY_*" passes variables
{"env": {"set": {"API_TOKEN": "x"}}}|1:18|"env.set": "API_TOKEN" sets a variable that is filtered
{"env": {"filter-secrets": false}}|1:28|"filter-secrets": false passes variables that look like secrets
{"secrets": {"allow": ["*.pem"]}}|1:24|"secrets.allow": "*.pem" unmasks secret files
{"secrets": {"patterns": ["!*.pem"]}}|1:27|"secrets.patterns": "!*.pem" stops masking
{"secrets": {"skip": ["vendor"]}}|1:23|"secrets.skip": "vendor" leaves secrets
{"filesystem": {"presets": ["!@git"]}}|1:29|"!@git" removes the protections of the @git preset
{"filesystem": {"presets": ["!@all", "@base"]}}|1:29|"!@all" removes the protections
{"filesystem": {"rw": ["~/notes"]}}|1:24|"rw": "~/notes" makes a path outside the project writable
{"filesystem": {"rw": ["../"]}}|1:24|"rw": "../" makes a path outside the project writable
{"filesystem": {"rw": [".git/hooks"]}}|1:24|"rw": ".git/hooks" makes
{"filesystem": {"ro": ["~/.ssh"]}}|1:24|"ro": "~/.ssh" makes
{"audit": false}|1:11|"audit": false turns the audit log off
CASES
}

test_loosening_after_trust_really_applies()
{
	make_fixtures
	printf '{"filesystem": {"rw": [".git/hooks"]}}\n' >$P
	sbx trust
	expect_status 0
	sbx sh -c 'echo hook > .git/hooks/pre-commit'
	expect_status 0
	expect_content .git/hooks/pre-commit hook
}

test_refusal_lists_every_loosening_in_file_order()
{
	cat >$P <<'JSON'
{
  "docker": true,
  "network": true,
  "commands": {"rm": false}
}
JSON
	sbx true
	expect_status 2
	grep -n 'agent-sandbox.json:[0-9]' "$T/err" | cut -d: -f1 | tr '\n' ' ' >"$T/lines"
	[ "$(cat "$T/lines")" = "2 3 " ] || fail "expected two findings on stderr lines 2 and 3: $(err)"
	expect_err_contains "$P:2:13: \"docker\": true"
	expect_err_contains "$P:3:14: \"network\": true"
	expect_err_contains "this content has not been approved"
}

test_tightening_only_configs_apply_without_trust()
{
	make_fixtures
	# config | a command that must succeed under it
	while IFS='|' read -r text check; do
		printf '%s\n' "$text" >$P
		sbx sh -c "$check"
		[ "$rc" -eq 0 ] || fail "$text: '$check' failed with $rc: $(err)"
		rm -f $P
	done <<'CASES'
{"filesystem": {"ro": ["src"]}}|! touch src/x 2>/dev/null
{"filesystem": {"exclude": ["src"], "presets": ["@git-strict"]}}|test -z "$(ls -A src)"
{"filesystem": {"rw": ["src", "./new-dir"]}}|touch src/x
{"network": false}|true
{"network": {"deny": ["github.com"], "allow": ["@agents"]}}|true
{"commands": {"rm": false, "curl": "./wrap.sh"}}|! rm -f nothing 2>/dev/null
{"env": {"block": ["HOME_*"], "allow": ["NODE_ENV", "!DEBUG"], "set": {"NODE_ENV": "test"}}}|test "$NODE_ENV" = test
{"secrets": {"patterns": ["*.secret"], "allow": [".env.example"], "skip": ["!node_modules"]}}|true
{"read-only": true, "audit": true, "docker": false}|! touch y 2>/dev/null
CASES
	expect_no_file "$(store)"
}

test_editing_a_trusted_config_withdraws_the_approval()
{
	printf '{"network": true}\n' >$P
	sbx trust
	expect_status 0
	expect_out_contains "trusted $T/work/$P"
	sbx true
	expect_status 0
	printf '{"network": true, "docker": true}\n' >$P
	sbx sh -c 'touch ran'
	expect_status 2
	expect_err_contains "it has changed since it was approved"
	expect_err_contains "$P:1:29: \"docker\": true"
	expect_no_file ran
	# That run withdrew the approval: restoring the approved bytes does
	# not bring it back.
	[ -z "$(ls -A "$(store)")" ] || fail "the approval is still on record"
	printf '{"network": true}\n' >$P
	sbx sh -c 'touch ran'
	expect_status 2
	expect_err_contains "this content has not been approved"
	expect_no_file ran
}

test_trust_is_refused_inside_the_sandbox()
{
	mkdir sub
	printf '{"network": true}\n' >sub/$P
	sbx sh -c '"$0" trust sub; echo "status $?"' "$AS"
	expect_out_contains "status 2"
	expect_err_contains "trust: refused inside a sandbox"
	expect_no_file "$(store)"
	sbx -C sub true
	expect_status 2
}

test_sandbox_cannot_write_the_trust_store()
{
	printf '{"network": true}\n' >$P
	sbx trust
	expect_status 0
	before=$(snapshot "$(store)")
	sbx sh -c '
		d=$HOME/.local/state/agent-sandbox
		echo "entries: $(ls -A "$d" | wc -l)"
		for f in "$d/trusted/forged" "$d/x" "$d/trusted"; do
			if (echo x >"$f") 2>/dev/null || mkdir "$f" 2>/dev/null; then echo "wrote $f"; fi
		done
		rm -rf "$d/trusted" 2>/dev/null
		echo done'
	expect_status 0
	expect_out_contains "entries: 0"
	expect_out_contains "done"
	expect_out_lacks "wrote"
	[ "$before" = "$(snapshot "$(store)")" ] || fail "the trust store changed"
}

test_state_dir_is_created_and_hidden_when_audit_is_off()
{
	# Without the audit log nothing else creates the state directory; it
	# must exist (and so be hidden) before any sandbox starts, or an agent
	# with a writable parent could plant an approval there.
	mkdir -p "$HOME/.config/agent-sandbox" "$T/work/state"
	printf '{"audit": false}\n' >"$HOME/.config/agent-sandbox/config.json"
	export XDG_STATE_HOME="$T/work/state"
	sbx sh -c 'mkdir -p "$XDG_STATE_HOME/agent-sandbox/trusted" 2>/dev/null && echo planted; ls -A "$XDG_STATE_HOME/agent-sandbox" | wc -l'
	expect_status 0
	expect_out_lacks planted
	[ -d "$T/work/state/agent-sandbox" ] || fail "the state directory was not created"
	[ -z "$(ls -A "$T/work/state/agent-sandbox")" ] || fail "something was planted in the state directory"
}

test_sandbox_cannot_write_the_project_config()
{
	printf '{"filesystem": {"ro": ["src"]}}\n' >$P
	sbx sh -c 'echo "{\"network\": true}" > .agent-sandbox.json || echo refused; rm -f .agent-sandbox.json || echo kept; mv .agent-sandbox.json x 2>/dev/null || echo unmoved'
	expect_out_contains refused
	expect_out_contains kept
	expect_out_contains unmoved
	expect_content $P '{"filesystem": {"ro": ["src"]}}'
}

test_config_written_by_the_agent_cannot_loosen_the_next_run()
{
	# No project config yet: one the agent creates in the working
	# directory is moved aside by the guard at once.
	sbx sh -c 'printf "{\"network\": true}\n" > .agent-sandbox.json'
	expect_status 0
	expect_no_file $P
	expect_err_contains "$T/work/$P (ro by @base) -> "
	# One it writes into a subdirectory is refused when a run starts there.
	mkdir sub
	sbx sh -c 'printf "{\"network\": true}\n" > sub/.agent-sandbox.json'
	expect_status 0
	expect_file sub/$P
	sbx -C sub sh -c 'touch ran'
	expect_status 2
	expect_err_contains "refusing the config $T/work/sub/$P"
	expect_no_file sub/ran
}

test_symlinked_config_does_not_borrow_an_approval()
{
	mkdir trusted other
	printf '{"network": true}\n' >trusted/$P
	sbx trust trusted
	expect_status 0
	ln -s ../trusted/$P other/$P
	# Refused either way: as a symlink a sandbox could have planted, or
	# as a config nobody approved at this path.
	sbx -C other sh -c 'touch ran'
	expect_status 2
	expect_no_file other/ran
	sbx -C trusted true
	expect_status 0
}

test_config_flag_file_is_under_the_same_rule()
{
	printf '{"docker": true}\n' >loose.json
	sbx -c loose.json sh -c 'touch ran'
	expect_status 2
	expect_err_contains "$T/work/loose.json:1:12: \"docker\": true"
	expect_err_contains "agent-sandbox trust $T/work/loose.json"
	expect_no_file ran
	sbx trust loose.json
	expect_status 0
	sbx -c loose.json sh -c 'touch ran'
	expect_status 0
	expect_file ran
}

test_global_config_needs_no_trust()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	printf '{"network": true, "docker": true}\n' >"$HOME/.config/agent-sandbox/config.json"
	sbx true
	expect_status 0
	# ... and a project that repeats what the global config decided
	# loosens nothing.
	printf '{"network": true}\n' >$P
	sbx true
	expect_status 0
}

test_read_only_false_is_refused_when_global_said_true()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	printf '{"read-only": true}\n' >"$HOME/.config/agent-sandbox/config.json"
	printf '{"read-only": false}\n' >$P
	sbx sh -c 'touch ran'
	expect_status 2
	expect_err_contains "$P:1:15: \"read-only\": false makes the project writable"
	expect_no_file ran
}

test_policy_and_debug_show_the_trust_status()
{
	sbx policy
	expect_out_contains "trust: no project config"
	printf '{"filesystem": {"ro": ["src"]}}\n' >$P
	sbx policy
	expect_out_contains "trust: $T/work/$P only tightens"
	printf '{"network": true}\n' >$P
	sbx policy
	expect_status 0
	expect_out_contains "loosens and is NOT approved"
	expect_out_contains "approve with: agent-sandbox trust $T/work/$P"
	sbx trust
	sbx --debug true
	expect_status 0
	expect_err_contains "trust: $T/work/$P loosens, approved (sha256"
	expect_err_contains "trust:   $T/work/$P:1:13: \"network\": true"
}

test_dry_run_is_refused_like_a_run()
{
	printf '{"network": true}\n' >$P
	sbx --dry-run true
	expect_status 2
	expect_err_contains "agent-sandbox trust"
}

test_trust_reports_bad_configs_and_missing_files()
{
	sbx trust
	expect_status 2
	expect_err_contains "no .agent-sandbox.json or .agent-sandbox.jsonc in $T/work"
	printf '{"netwrk": true}\n' >$P
	sbx trust
	expect_status 2
	expect_err_contains "did you mean \"network\""
	expect_no_file "$(store)"
	sbx trust nowhere.json
	expect_status 2
}

test_trust_store_is_private_and_keyed_by_path()
{
	printf '{"network": true}\n' >$P
	sbx trust "$T/work"
	expect_status 0
	[ "$(stat -c %a "$(store)")" = 700 ] || fail "the store is not 0700"
	[ "$(ls "$(store)" | wc -l)" = 1 ] || fail "expected one record"
	rec=$(store)/$(ls "$(store)")
	[ "$(stat -c %a "$rec")" = 600 ] || fail "the record is not 0600"
	# The approved bytes, and the file they were read from: device,
	# inode, generation and birth (or change) time.
	id=$(stat -c '%D %i' $P)
	grep -qxF "sha256 $(sha256sum $P | cut -d' ' -f1)" "$rec" || fail "record: $(cat "$rec")"
	grep -qE "^identity [0-9]+:[0-9]+ $(stat -c %i $P) [0-9]+ (born|changed) [0-9]+\.[0-9]{9}\$" "$rec" ||
		fail "record ($id): $(cat "$rec")"
	grep -qxF "file $T/work/$P" "$rec" || fail "record: $(cat "$rec")"
	# A record that others could write is ignored.
	chmod 0622 "$rec"
	sbx true
	expect_status 2
}

test_project_rule_showing_a_host_path_in_the_private_tmp_or_run_loosens()
{
	# The sandbox's /tmp and /run are its own, empty: a host path bound
	# there shows what was not there at all, so even "ro" and "exclude"
	# (an empty stand-in under the host's name) loosen.
	outside=$(mktemp -d /tmp/as-trust-host.XXXXXX) || fail "mktemp failed"
	# shellcheck disable=SC2064
	trap "rm -rf '$outside'" EXIT
	echo host-data >"$outside/note"
	p="$T/work/$P"
	# rule | what the refusal says
	while IFS='|' read -r rule want; do
		printf '{"filesystem": {%s}}\n' "$rule" >$P
		sbx sh -c 'touch ran'
		[ "$rc" -eq 2 ] || fail "$rule: expected status 2, got $rc"
		grep -qF -- "$want" "$T/err" || fail "$rule: stderr lacks '$want': $(err)"
		expect_no_file ran
	done <<CASES
"ro": ["$outside"]|"ro": "$outside" makes $outside read-only (it was private to the sandbox, under the sandbox's own /tmp)
"exclude": ["$outside/note"]|"exclude": "$outside/note" makes $outside/note hidden (it was private to the sandbox, under the sandbox's own /tmp)
"ro": ["/run"]|"ro": "/run" makes /run read-only (it was private to the sandbox, under the sandbox's own /run)
CASES
	# Approved, the rule does show the host's file: the refusal was what
	# kept it out.
	printf '{"filesystem": {"ro": ["%s"]}}\n' "$outside" >$P
	sbx sh -c 'cat "$1/note"' sh "$outside"
	expect_status 2
	approve_config
	sbx sh -c 'cat "$1/note"' sh "$outside"
	expect_status 0
	expect_out host-data
}

# The user approved a config, then deleted it; the agent writes the same
# bytes back, under either name. The run that found the file gone withdrew
# the approval, so neither is taken for approved.
test_deleted_config_written_back_by_the_agent_is_refused()
{
	for name in .agent-sandbox.json .agent-sandbox.jsonc; do
		printf '{"network": true}\n' >.agent-sandbox.jsonc
		sbx trust
		expect_status 0
		sbx true
		expect_status 0
		rm .agent-sandbox.jsonc
		sbx true
		expect_status 0
		expect_err_contains "trust: withdrew the approval of $T/work/.agent-sandbox.jsonc: the file is gone"
		[ -z "$(ls -A "$(store)")" ] || fail "the approval is still on record"
		# From a session one directory up, where the guard of the
		# working directory's config does not reach.
		sbx -C .. sh -c 'printf "{\"network\": true}\n" >"work/$1"' sh "$name"
		expect_status 0
		sbx sh -c 'touch ran'
		[ "$rc" -eq 2 ] || fail "$name: the written-back config was taken ($rc)"
		expect_err_contains "refusing the config $T/work/$name"
		expect_err_contains "this content has not been approved"
		expect_no_file ran
		rm -f "$name"
	done
}

# No run in between to notice: the file at the approved path is another
# file with the approved bytes. Filesystems reuse a freed inode number at
# once, so one case keeps the old inode alive and the other does not.
test_config_re_created_with_the_same_bytes_is_refused()
{
	mkdir "$T/keep"
	for how in delete delete-pinned rename-away; do
		printf '{"network": true}\n' >$P
		sbx trust
		expect_status 0
		case $how in
		delete) rm $P ;;
		delete-pinned) ln $P "$T/keep/$how" && rm $P ;;
		rename-away) mv $P "$T/keep/$how" ;;
		esac
		printf '{"network": true}\n' >$P
		sbx policy
		expect_out_contains "loosens and is not the file that was approved"
		expect_out_contains "trust: the approval of $T/work/$P no longer holds: the file was replaced or re-created since; a run withdraws it"
		sbx sh -c 'touch ran'
		[ "$rc" -eq 2 ] || fail "$how: the re-created config was taken ($rc)"
		expect_err_contains "it is not the file that was approved"
		expect_no_file ran
		# Withdrawn: still refused, now as never approved.
		sbx true
		expect_status 2
		expect_err_contains "this content has not been approved"
	done
}

test_changed_config_that_now_only_tightens_loses_its_approval()
{
	printf '{"network": true}\n' >$P
	sbx trust
	expect_status 0
	printf '{"network": false}\n' >$P
	sbx true
	expect_status 0
	expect_err_contains "trust: withdrew the approval of $T/work/$P: its content changed since"
	printf '{"network": true}\n' >$P
	sbx true
	expect_status 2
	expect_err_contains "this content has not been approved"
}

test_policy_and_dry_run_report_a_stale_approval_without_withdrawing_it()
{
	printf '{"network": true}\n' >$P
	sbx trust
	expect_status 0
	rm $P
	sbx policy
	expect_status 0
	expect_out_contains "trust: the approval of $T/work/$P no longer holds: the file is gone; a run withdraws it"
	sbx --dry-run true
	expect_status 0
	[ -n "$(ls -A "$(store)")" ] || fail "policy or --dry-run withdrew the approval"
	sbx --debug true
	expect_status 0
	expect_err_contains "debug: trust: withdrew the approval of $T/work/$P: the file is gone"
	[ -z "$(ls -A "$(store)")" ] || fail "the run did not withdraw the approval"
}

test_approval_follows_the_file_across_its_two_names()
{
	# Renaming keeps the file (and its approval); the other name holding
	# other bytes is another file.
	printf '{"network": true}\n' >.agent-sandbox.json
	sbx trust
	expect_status 0
	mv .agent-sandbox.json .agent-sandbox.jsonc
	sbx true
	expect_status 0
	rm .agent-sandbox.jsonc
	printf '{"network": true}\n' >.agent-sandbox.json
	sbx true
	expect_status 2
	expect_err_contains "it is not the file that was approved"
}

# Each host service socket the sandbox hides by a built-in rule: a project
# rule naming it "ro" (a read-only socket still connects) loosens.
test_project_rule_exposing_a_hidden_host_socket_loosens()
{
	mkdir -p "$HOME/run" "$HOME/gnupg"
	socks="$HOME/run/ssh $HOME/run/dbus $HOME/run/wayland $HOME/gnupg/S.gpg-agent"
	py=python3
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3
	for sock in $socks; do
		"$py" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
			"$sock" || fail "could not make the socket $sock"
	done
	export SSH_AUTH_SOCK="$HOME/run/ssh" DBUS_SESSION_BUS_ADDRESS="unix:path=$HOME/run/dbus,guid=1"
	export WAYLAND_DISPLAY="$HOME/run/wayland" GNUPGHOME="$HOME/gnupg"
	for sock in $socks; do
		printf '{"filesystem": {"ro": ["%s"]}}\n' "$sock" >$P
		sbx policy
		expect_out_contains "loosens and is NOT approved"
		expect_out_contains "\"ro\": \"$sock\" makes $sock read-only (it was hidden, by "
		sbx true
		[ "$rc" -eq 2 ] || fail "$sock: a run was not refused ($rc)"
	done
}

# The side without the project config has the global config's presets: one
# the global config removed and the project config adds back loosens like
# a rule of the project's own.
test_preset_the_global_config_removed_is_refused_when_the_project_adds_it_back()
{
	mkdir -p "$HOME/.config/agent-sandbox" "$HOME/.cache"
	printf '{"filesystem": {"presets": ["!@caches"]}}\n' >"$HOME/.config/agent-sandbox/config.json"
	sbx sh -c 'touch "$HOME/.cache/x"'
	[ "$rc" -ne 0 ] || fail "~/.cache was writable without @caches"
	expect_no_file "$HOME/.cache/x"
	printf '{"filesystem": {"presets": ["@caches"]}}\n' >$P
	sbx sh -c 'touch "$HOME/.cache/x"'
	expect_status 2
	expect_err_contains "$P:1:29: \"@caches\" adds rules that make $HOME/.cache writable (it was read-only, by @base)"
	expect_no_file "$HOME/.cache/x"
	approve_config
	sbx sh -c 'touch "$HOME/.cache/x"'
	expect_status 0
	expect_file "$HOME/.cache/x"
}

# The command line is on both sides: a project setting that gives no more
# than the flags already do loosens nothing in that run, and the same file
# is refused in a run without them.
test_project_setting_the_command_line_already_gives_needs_no_approval()
{
	printf '{"network": true, "env": {"allow": ["GITHUB_TOKEN"]}}\n' >$P
	sbx --network=true --env GITHUB_TOKEN true
	expect_status 0
	sbx --env GITHUB_TOKEN true
	expect_status 2
	expect_err_contains "$P:1:13: \"network\": true"
	expect_err_lacks "GITHUB_TOKEN"
	sbx --network=true true
	expect_status 2
	expect_err_contains "\"env.allow\": \"GITHUB_TOKEN\" passes a variable"
}

run_tests
