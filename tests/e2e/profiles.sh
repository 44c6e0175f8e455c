#!/bin/sh
# Agent profiles: a command named like a known agent (or --agent NAME) gets
# its state directories, created on the host on first use and writable even
# in read-only mode, its variables and its hosts; its settings and code stay
# read-only; its dropped key is named on stderr; `policy` shows it all, and
# neither --dry-run nor `policy` creates anything. The agents here are fake
# (scripts named claude, codex, ... on PATH); the real CLIs are checked
# where they are installed and cheap to start.
. "$(dirname "$0")/../lib.sh"

# A fake agent named $1 on PATH (in $HOME/bin: /tmp is private inside):
# prints its variables, then runs its argument as a shell command (to
# touch its state).
fake_agent()
{
	mkdir -p "$HOME/bin"
	cat >"$HOME/bin/$1" <<'EOF'
#!/bin/sh
for n in IS_SANDBOX DISABLE_AUTOUPDATER CLAUDE_CONFIG_DIR GOOSE_DISABLE_KEYRING \
	ANTHROPIC_API_KEY OPENAI_API_KEY; do
	eval "v=\${$n-unset}"
	echo "$n=$v"
done
[ $# -eq 0 ] || exec sh -c "$1"
EOF
	chmod 755 "$T" "$HOME" "$HOME/bin" "$HOME/bin/$1"
	PATH="$HOME/bin:$PATH"
	export PATH
}

# The machine's own IS_SANDBOX must not decide what the tests see.
unset IS_SANDBOX DISABLE_AUTOUPDATER CLAUDE_CONFIG_DIR ANTHROPIC_API_KEY OPENAI_API_KEY

test_profile_applies_when_command_basename_matches()
{
	fake_agent claude
	sbx claude
	expect_status 0
	expect_out_contains "IS_SANDBOX=1"
	expect_out_contains "DISABLE_AUTOUPDATER=1"
	expect_out_contains "CLAUDE_CONFIG_DIR=$HOME/.claude"
	# By path too: the basename decides.
	sbx "$HOME/bin/claude"
	expect_out_contains "IS_SANDBOX=1"
	# Another name gets nothing of it.
	cp "$HOME/bin/claude" "$HOME/bin/claude-helper"
	sbx claude-helper
	expect_status 0
	expect_out_contains "IS_SANDBOX=unset"
	expect_out_contains "DISABLE_AUTOUPDATER=unset"
	expect_no_file "$HOME/.codex"
	# env.set and --env win over the profile.
	sbx --env IS_SANDBOX=0 claude
	expect_out_contains "IS_SANDBOX=0"
	expect_out_contains "DISABLE_AUTOUPDATER=1"
}

test_agent_flag_selects_profile()
{
	fake_agent goose
	sbx --agent codex sh -c 'echo s >"$HOME/.codex/from-sh"'
	expect_status 0
	expect_content "$HOME/.codex/from-sh" s
	sbx --agent=goose goose 'echo s >"$HOME/.local/share/goose/x"'
	expect_status 0
	expect_out_contains "GOOSE_DISABLE_KEYRING=1"
	expect_file "$HOME/.local/share/goose/x"
	# --agent none: no profile, even for a matching name.
	fake_agent gemini
	sbx --agent none gemini 'touch "$HOME/.gemini/x"'
	[ "$rc" -ne 0 ] || fail "--agent none still made ~/.gemini writable"
	expect_no_file "$HOME/.gemini"
}

test_agent_flag_rejects_unknown_name()
{
	sbx --agent claud sh -c 'touch ran'
	expect_status 2
	expect_err_contains 'unknown agent profile "claud"'
	expect_err_contains "claude, codex, gemini, opencode, aider, goose"
	expect_err_contains "did you mean --agent claude?"
	expect_no_file ran
	sbx --agent
	expect_status 2
}

test_state_dir_created_on_first_use_and_persists()
{
	fake_agent codex
	expect_no_file "$HOME/.codex"
	sbx --debug codex 'mkdir -p "$HOME/.codex/sessions" && echo first >"$HOME/.codex/sessions/a"'
	expect_status 0
	expect_err_contains "created ~/.codex for codex: its state persists"
	expect_content "$HOME/.codex/sessions/a" first
	[ "$(stat -c %a "$HOME/.codex")" = 700 ] || fail "~/.codex is not mode 0700"
	# The next run finds it; nothing is created again.
	sbx --debug codex 'cat "$HOME/.codex/sessions/a"'
	expect_status 0
	expect_out_contains first
	expect_err_lacks "created ~/.codex"
	# Parents are made too, and only the profile's own paths.
	fake_agent opencode
	sbx opencode 'touch "$HOME/.local/share/opencode/auth.json"'
	expect_status 0
	expect_file "$HOME/.local/share/opencode/auth.json"
	expect_no_file "$HOME/.config/opencode"
	expect_no_file "$HOME/.gemini"
}

test_read_only_keeps_agent_state_writable()
{
	fake_agent codex
	# The README's line: a read-only agent still keeps its state.
	sbx --read-only codex 'echo s >"$HOME/.codex/history.jsonl" && touch project-file'
	[ "$rc" -ne 0 ] || fail "the project was writable in read-only mode"
	expect_content "$HOME/.codex/history.jsonl" s
	expect_no_file project-file
	sbx policy --read-only --agent codex
	expect_out_contains "agent state: rw in read-only mode"
}

test_read_only_strict_makes_agent_state_read_only()
{
	fake_agent codex
	mkdir "$HOME/.codex"
	sbx --read-only=strict codex 'echo s >"$HOME/.codex/history.jsonl"'
	[ "$rc" -ne 0 ] || fail "--read-only=strict left ~/.codex writable"
	expect_no_file "$HOME/.codex/history.jsonl"
	# Nor is anything created for it.
	sbx --read-only=strict --agent gemini true
	expect_status 0
	expect_no_file "$HOME/.gemini"
	sbx --read-only=strictly true
	expect_status 2
	expect_err_contains "--read-only=strict"
}

test_profile_settings_stay_read_only()
{
	fake_agent claude
	fake_agent gemini
	fake_agent aider
	mkdir -p "$HOME/.claude" "$HOME/.gemini"
	echo '{}' >"$HOME/.claude/settings.json"
	echo '{}' >"$HOME/.gemini/settings.json"
	# What the next agent on the host obeys or runs: a write or a rename
	# is refused; what is created where the policy protects a path is
	# moved aside by the guard. Checked from outside.
	for step in 'echo x >"$HOME/.claude/settings.json"' \
		'mv "$HOME/.claude/settings.json" "$HOME/.claude/old"'; do
		sbx claude "$step"
		[ "$rc" -ne 0 ] || fail "claude: '$step' succeeded"
	done
	sbx claude 'mkdir -p "$HOME/.claude/hooks"; echo x >"$HOME/.claude/statusline.sh"'
	sbx gemini 'echo x >"$HOME/.gemini/settings.json"'
	[ "$rc" -ne 0 ] || fail "gemini: its settings were writable"
	sbx gemini 'echo X=1 >"$HOME/.gemini/.env"; mkdir "$HOME/.gemini/extensions"
		echo "{}" >"$HOME/.gemini/trustedFolders.json"'
	sbx aider 'echo AIDER_TEST_CMD=x >"$HOME/.aider/oauth-keys.env"'
	expect_content "$HOME/.claude/settings.json" '{}'
	expect_content "$HOME/.gemini/settings.json" '{}'
	for p in .claude/old .claude/hooks .claude/statusline.sh .gemini/.env .gemini/extensions \
		.gemini/trustedFolders.json .aider/oauth-keys.env; do
		expect_no_file "$HOME/$p"
	done
	# The state beside them is writable.
	sbx gemini 'mkdir -p "$HOME/.gemini/tmp" && echo s >"$HOME/.gemini/tmp/chat"'
	expect_status 0
	expect_content "$HOME/.gemini/tmp/chat" s
}

test_dropped_key_is_named_on_stderr()
{
	fake_agent claude
	key=sk-ant-test-$$-dropped
	ANTHROPIC_API_KEY=$key sbx claude
	expect_status 0
	expect_out_contains "ANTHROPIC_API_KEY=unset"
	[ "$(grep -c 'was not passed in' "$T/err")" -eq 1 ] || fail "expected one line: $(err)"
	expect_err_contains "agent-sandbox: ANTHROPIC_API_KEY was not passed in (it looks like a secret): --credential anthropic injects the key without the agent holding it, --env ANTHROPIC_API_KEY passes it"
	expect_err_lacks "$key"
	# The line comes before the command starts.
	head -1 "$T/err" | grep -q "was not passed in" || fail "the line came late: $(err)"
	# Passed explicitly: no line, and the agent has it.
	ANTHROPIC_API_KEY=$key sbx --env ANTHROPIC_API_KEY claude
	expect_out_contains "ANTHROPIC_API_KEY=$key"
	expect_err_lacks "was not passed in"
	# Blocked on purpose: the user's choice, no line.
	ANTHROPIC_API_KEY=$key sbx --env-block ANTHROPIC_API_KEY claude
	expect_err_lacks "was not passed in"
	# Another agent's key is not this agent's business.
	fake_agent codex
	ANTHROPIC_API_KEY=$key sbx codex
	expect_err_lacks "was not passed in"
}

test_policy_shows_profile()
{
	sbx policy --agent codex
	expect_status 0
	expect_out_contains "agent profile      codex (from --agent)"
	expect_out_contains "state            ~/.codex  rw; missing: a run creates it"
	expect_out_contains "hosts            api.openai.com auth.openai.com chatgpt.com github.com"
	expect_out_contains "allow            chatgpt.com (agent profile codex)"
	expect_out_contains "~/.codex"
	sbx policy --agent claude
	expect_out_contains "env              IS_SANDBOX=1"
	ANTHROPIC_API_KEY=sk-ant-test-$$ sbx policy --agent claude
	expect_out_contains "key              ANTHROPIC_API_KEY dropped"
	sbx policy
	expect_out_contains "agent profile      none"
	# --debug says the same on a run.
	fake_agent codex
	sbx --debug codex
	expect_err_contains "agent profile      codex (from the command's name)"
	expect_err_contains "agents: profile codex"
}

test_profile_hosts_are_allowed()
{
	get='curl -sS -o /dev/null https://models.dev 2>&1; true'
	# models.dev is in no default group: only opencode's profile adds it.
	sbx sh -c "$get"
	expect_out_contains "response 403"
	sbx --agent opencode sh -c "$get"
	expect_out_lacks "response 403"
	# network.deny still wins.
	echo '{"network": {"deny": ["models.dev"]}}' >.agent-sandbox.json
	sbx --agent opencode sh -c "$get"
	expect_out_contains "response 403"
	sbx policy --agent opencode
	expect_out_contains "allow            models.dev (agent profile opencode)"
}

test_nothing_created_on_dry_run()
{
	fake_agent codex
	before=$(snapshot "$HOME")
	sbx --dry-run codex
	expect_status 0
	sbx --dry-run --agent goose true
	expect_status 0
	for a in claude codex gemini opencode aider goose pi; do
		sbx policy --agent "$a"
		expect_status 0
		expect_out_contains "a run creates it"
	done
	[ "$before" = "$(snapshot "$HOME")" ] || fail "the home changed: $(snapshot "$HOME")"
}

# The real CLIs, where tests/install-deps put them: they start inside with
# their profile (--version only; conversations are tests/e2e/agents.sh's).
test_real_clis_start_inside_with_their_profile()
{
	clis=/opt/agent-clis/node_modules
	claude=$clis/@anthropic-ai/claude-code-linux-x64/claude
	codex=$clis/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
	[ -x "$claude" ] && [ -x "$codex" ] || skip "the agent CLIs are not installed"
	sbx "$claude" --version
	expect_status 0
	expect_out_contains "Claude Code"
	expect_file "$HOME/.claude"
	sbx "$codex" --version
	expect_status 0
	expect_out_contains "codex-cli"
	expect_file "$HOME/.codex"
}

run_tests
