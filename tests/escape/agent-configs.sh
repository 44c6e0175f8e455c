#!/bin/sh
# Escape attempts against what host programs run or obey later: the agents'
# settings, hooks, commands and MCP servers in the home directory, the
# project files that IDEs, agents and hook managers read (@agent-configs),
# and the bin directories, env files and sourced scripts next to the build
# caches (@caches). Playing the agent inside, each test writes, truncates,
# removes, replaces, links over and renames (the file or its directory) and
# then checks from outside that nothing changed; the data those presets
# exist for stays writable.
#
# Needs the host-side guard for missing paths (tests named *_cannot_be_created):
# a protected path that does not exist at start must not appear on the host.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

# Project files protected by @agent-configs (directories end in "/").
PROJECT_CONFIGS=".claude/settings.json .claude/settings.local.json .claude/commands/
.claude/agents/ .claude/hooks/ .claude/skills/ .mcp.json .codex/ .pi/ .vscode/settings.json
.vscode/tasks.json .vscode/launch.json .vscode/mcp.json app.code-workspace
.idea/workspace.xml .devcontainer/devcontainer.json .devcontainer.json .cursor/mcp.json
.gemini/settings.json .envrc .gitmodules .husky/ .pre-commit-config.yaml lefthook.yml
.lefthook.yml .overcommit.yml mise.toml .devcontainer/init.sh pyproject.toml setup.cfg
.editorconfig mise.dev.toml .mise.local.toml .config/mise.toml .config/mise.ci.toml
.config/mise/config.toml .config/mise/conf.d/tools.toml mise/config.toml mise/config.local.toml
.mise/config.toml .miserc.toml .tool-versions"

# Agent files in the home directory protected by @agents.
HOME_CONFIGS=".claude.json .claude/settings.json .claude/CLAUDE.md .claude/commands/
.claude/agents/ .claude/skills/ .claude/plugins/ .claude/hooks/ .claude/statusline-command.sh
.claude/local/ .claude/shell-snapshots/ .claude/session-env/ .codex/config.toml .codex/AGENTS.md
.codex/prompts/ .codex/rules/ .codex/shell_snapshots/
.codex/skills/ .codex/.env .pi/agent/settings.json .pi/agent/models.json .pi/agent/auth.json
.pi/agent/extensions/ .pi/agent/bin/ .pi/agent/AGENTS.md"

# Creates each path of the list under $1: a directory holding one file for
# names ending in "/", a one-line file otherwise. Also what a run creates
# by itself in the home directory (the audit log's directory, Claude Code's
# copy of its config), so that a snapshot shows only the agent's doing.
make_files()
{
	mkdir -p "$HOME/.local/state/agent-sandbox" || fail "mkdir state"
	for p in $2; do
		case $p in
		*/)
			mkdir -p "$1/$p" && echo "#!/bin/sh" >"$1/${p}inside"
			;;
		*)
			mkdir -p "$1/$(dirname "$p")" && echo "original $p" >"$1/$p"
			;;
		esac || fail "could not make $1/$p"
	done
	[ ! -e "$HOME/.claude.json" ] || [ ! -d "$HOME/.claude" ] ||
		cp "$HOME/.claude.json" "$HOME/.claude/.claude.json"
}

# The listed paths under $1 and their parents, as the host sees them:
# names, types, sizes, modes, link counts and contents.
snapshot_files()
{
	for p in $2; do
		for q in "$1/$p" "$(dirname "$1/$p")"; do
			find "$q" -maxdepth 1 -printf '%p %y %s %m %n %l\n'
			find "$q" -maxdepth 1 -type f -exec md5sum {} +
		done
	done 2>/dev/null | LC_ALL=C sort -u
}

expect_files_unchanged()
{
	files_after=$(snapshot_files "$1" "$2")
	[ "$files_after" = "$3" ] ||
		fail "protected files changed: $(printf '%s\n' "$3" >"$T/files.before"
			printf '%s\n' "$files_after" >"$T/files.after"
			diff "$T/files.before" "$T/files.after" | head -20)"
}

# The attacks, run inside against every path given as an argument; prints
# one line per attempt that succeeded.
ATTACKS='for p in "$@"; do
	t=${p%/}
	if [ -d "$t" ]; then
		echo evil 2>/dev/null >"$t/inside" && echo "wrote $t/inside"
		echo evil 2>/dev/null >"$t/new" && echo "created $t/new"
		rm -f "$t/inside" 2>/dev/null && echo "removed $t/inside"
	else
		echo evil 2>/dev/null >"$t" && echo "wrote $t"
		echo evil 2>/dev/null >>"$t" && echo "appended $t"
		true 2>/dev/null >"$t" && echo "truncated $t"
	fi
	rm -rf "$t" 2>/dev/null && echo "removed $t"
	mv "$t" "$t.moved" 2>/dev/null && echo "renamed $t"
	echo evil >"/tmp/replacement" && mv -f /tmp/replacement "$t" 2>/dev/null && echo "replaced $t"
	ln -sf /tmp/replacement "$t" 2>/dev/null && [ -L "$t" ] && echo "linked over $t"
	chmod 777 "$t" 2>/dev/null && echo "chmod $t"
done; true'

test_project_agent_configs_cannot_be_written_removed_or_replaced()
{
	make_files "$T/work" "$PROJECT_CONFIGS"
	before=$(snapshot_files "$T/work" "$PROJECT_CONFIGS")
	# shellcheck disable=SC2086
	sbx sh -c "$ATTACKS" sh $PROJECT_CONFIGS
	expect_status 0
	expect_out ""
	expect_files_unchanged "$T/work" "$PROJECT_CONFIGS" "$before"
}

test_directories_of_protected_project_files_cannot_be_renamed_away()
{
	make_files "$T/work" "$PROJECT_CONFIGS"
	before=$(snapshot_files "$T/work" "$PROJECT_CONFIGS")
	# With the directory renamed, a fresh one would hold the agent's
	# tasks.json while the protected file sat under the other name.
	sbx sh -c 'for d in .claude .vscode .idea .devcontainer .cursor .gemini .codex .pi .husky \
		.config .config/mise mise .mise; do
		mv "$d" "$d.away" 2>/dev/null && echo "renamed $d" && mkdir "$d" &&
			echo evil >"$d/tasks.json"
		"$0" -c "import os, sys
try:
    os.rename(sys.argv[1], sys.argv[1] + \".py-away\"); print(\"python renamed \" + sys.argv[1])
except OSError:
    pass" "$d"
	done; true' "$PY"
	expect_status 0
	expect_out ""
	expect_files_unchanged "$T/work" "$PROJECT_CONFIGS" "$before"
	for d in .claude .vscode .idea .devcontainer .cursor .gemini .codex .pi .husky \
		.config .config/mise mise .mise; do
		expect_no_file "$T/work/$d.away"
		expect_no_file "$T/work/$d.py-away"
	done
}

test_home_agent_configs_cannot_be_written_removed_or_replaced()
{
	make_files "$HOME" "$HOME_CONFIGS"
	before=$(snapshot_files "$HOME" "$HOME_CONFIGS")
	sbx sh -c 'cd "$HOME" && '"$ATTACKS" sh $HOME_CONFIGS
	expect_status 0
	expect_out ""
	expect_files_unchanged "$HOME" "$HOME_CONFIGS" "$before"
}

test_agent_directories_cannot_be_renamed_away()
{
	make_files "$HOME" "$HOME_CONFIGS"
	before=$(snapshot_files "$HOME" "$HOME_CONFIGS")
	sbx sh -c 'cd "$HOME" && for d in .claude .codex .pi .pi/agent; do
		mv "$d" "$d.away" 2>/dev/null && echo "renamed $d" && mkdir "$d" &&
			echo "{\"hooks\": {}}" >"$d/settings.json"
	done; true'
	expect_status 0
	expect_out ""
	expect_files_unchanged "$HOME" "$HOME_CONFIGS" "$before"
	expect_no_file "$HOME/.pi/agent.away"
}

test_agent_state_stays_writable()
{
	make_files "$HOME" "$HOME_CONFIGS"
	mkdir -p "$HOME/.claude/projects" "$HOME/.codex/sessions" "$HOME/.pi/agent/sessions"
	sbx sh -c 'cd "$HOME" && echo "{}" >.claude/projects/session.jsonl &&
		echo token >.claude/.credentials.json && mkdir .claude/todos &&
		echo "{}" >.codex/sessions/rollout.jsonl && echo token >.codex/auth.json &&
		echo entry >>.codex/history.jsonl && echo "{}" >.pi/agent/sessions/s.jsonl'
	expect_status 0
	expect_content "$HOME/.claude/projects/session.jsonl" "{}"
	expect_content "$HOME/.claude/.credentials.json" token
	expect_content "$HOME/.codex/auth.json" token
	expect_content "$HOME/.codex/history.jsonl" entry
	expect_content "$HOME/.pi/agent/sessions/s.jsonl" "{}"
	[ -d "$HOME/.claude/todos" ] || fail "the agent's state directory was not writable"
}

test_claude_code_inside_works_on_its_own_copy_of_its_global_config()
{
	mkdir "$HOME/.claude"
	echo '{"hasCompletedOnboarding": true, "mcpServers": {}}' >"$HOME/.claude.json"
	# What Claude Code does: a lock directory beside the file, a temporary
	# file and a rename over it.
	sbx sh -c 'test "$CLAUDE_CONFIG_DIR" = "$HOME/.claude" || exit 9
		f="$CLAUDE_CONFIG_DIR/.claude.json"
		grep -q hasCompletedOnboarding "$f" || exit 8
		mkdir "$f.lock" &&
		echo "{\"mcpServers\": {\"x\": {\"command\": \"evil\"}}}" >"$f.tmp.1" &&
		mv "$f.tmp.1" "$f" && rmdir "$f.lock" || exit 7
		echo evil 2>/dev/null >"$HOME/.claude.json" && echo "wrote the host file"; true'
	expect_status 0
	expect_out ""
	expect_content "$HOME/.claude.json" '{"hasCompletedOnboarding": true, "mcpServers": {}}'
	grep -q evil "$HOME/.claude/.claude.json" || fail "the copy was not written"
	# The copy is the sandbox's from now on: not seeded again.
	sbx sh -c 'cat "$CLAUDE_CONFIG_DIR/.claude.json"'
	expect_out_contains evil
}

test_claude_copy_is_not_made_by_policy_or_dry_run()
{
	mkdir "$HOME/.claude"
	echo '{}' >"$HOME/.claude.json"
	sbx policy
	expect_status 0
	expect_out_contains "set              CLAUDE_CONFIG_DIR"
	sbx --dry-run true
	expect_status 0
	expect_no_file "$HOME/.claude/.claude.json"
}

test_claude_copy_seeding_follows_no_planted_link()
{
	mkdir "$HOME/.claude"
	echo '{"mcpServers": {}}' >"$HOME/.claude.json"
	# Left by an earlier run: a link from the copy's name to a file the
	# host runs. Seeding must neither follow nor replace it.
	ln -s "$HOME/.bashrc" "$HOME/.claude/.claude.json"
	sbx true
	expect_status 0
	expect_no_file "$HOME/.bashrc"
	[ -L "$HOME/.claude/.claude.json" ] || fail "the link was replaced"
}

test_a_nested_run_keeps_the_protections_and_claude_codes_copy()
{
	make_files "$T/work" ".vscode/tasks.json"
	mkdir "$HOME/.claude"
	echo '{}' >"$HOME/.claude/settings.json"
	echo '{"mcpServers": {}}' >"$HOME/.claude.json"
	# The outer run's CLAUDE_CONFIG_DIR is its own, not the user's: the
	# inner run leaves the copy writable (and does not refuse to run).
	sbx sh -c "'$AS' sh -c 'echo inner >\"\$CLAUDE_CONFIG_DIR/.claude.json\" || exit 5
		echo evil 2>/dev/null >\"\$HOME/.claude/settings.json\" && echo wrote settings
		echo evil 2>/dev/null >.vscode/tasks.json && echo wrote tasks; true'"
	expect_status 0
	expect_out ""
	expect_content "$HOME/.claude/.claude.json" inner
	expect_content "$HOME/.claude/settings.json" '{}'
	expect_content .vscode/tasks.json "original .vscode/tasks.json"
}

test_dirs_that_sessions_source_from_are_made_and_read_only()
{
	mkdir -p "$HOME/.claude" "$HOME/.codex"
	sbx policy
	expect_status 0
	expect_no_file "$HOME/.claude/shell-snapshots"
	# A Claude Code session on the host sources its snapshot before each
	# command; the agent must not be able to write one, nor plant the
	# directory as a link to a place it can write.
	sbx sh -c 'cd "$HOME"
		for d in .claude/shell-snapshots .claude/session-env .codex/shell_snapshots \
			.claude/plugins .codex/skills; do
			echo evil 2>/dev/null >"$d/snapshot-bash-1-x.sh" && echo "wrote into $d"
			mkdir "$d/s1" 2>/dev/null && echo "made a directory in $d"
			rmdir "$d" 2>/dev/null && echo "removed $d"
			mv "$d" "$d.away" 2>/dev/null && echo "renamed $d"
			ln -s "$HOME/.claude/projects" "$d" 2>/dev/null && echo "linked $d"
		done; true'
	expect_status 0
	expect_out ""
	for d in .claude/shell-snapshots .claude/session-env .codex/shell_snapshots .claude/plugins \
		.codex/skills; do
		[ -d "$HOME/$d" ] && [ ! -L "$HOME/$d" ] || fail "$d is not a directory"
		[ -z "$(ls -A "$HOME/$d")" ] || fail "$d is not empty: $(ls -A "$HOME/$d")"
	done
}

# What the other agents' profiles make writable lies around what their next
# run on the host obeys or runs (the @agents list): settings, dotenv files,
# trusted folders, extensions, downloaded servers, plugins, and the git
# directories of their checkpoints and snapshots.
PROFILE_CONFIGS=".gemini/settings.json .gemini/.env .gemini/GEMINI.md .gemini/trustedFolders.json
.gemini/extensions/ .gemini/commands/ .gemini/hook.sh .gemini/history/ .local/share/opencode/bin/
.local/share/opencode/snapshot/
.aider/oauth-keys.env .aider/hook.py .config/opencode/opencode.json .config/goose/config.yaml
.cache/opencode/node_modules/"

test_profile_state_cannot_plant_what_the_host_agent_runs()
{
	make_files "$HOME" "$PROFILE_CONFIGS"
	before=$(snapshot_files "$HOME" "$PROFILE_CONFIGS")
	for agent in gemini opencode aider goose; do
		# shellcheck disable=SC2086
		sbx --agent $agent sh -c 'cd "$HOME" && '"$ATTACKS" sh $PROFILE_CONFIGS
		expect_status 0
		expect_out ""
		# The state directories themselves cannot be swapped for ones
		# without the protected files.
		sbx --agent $agent sh -c 'cd "$HOME" && for d in .gemini .local/share/opencode .aider \
			.local/share/goose; do mv "$d" "$d.away" 2>/dev/null && echo "renamed $d"
		done; true'
		expect_status 0
		expect_out ""
	done
	expect_files_unchanged "$HOME" "$PROFILE_CONFIGS" "$before"
	# Missing ones cannot be created either: the guard moves them aside.
	rm -rf "$HOME/.gemini" "$HOME/.aider" "$HOME/.local/share/opencode"
	sbx --agent gemini sh -c 'cd "$HOME" && echo "{}" >.gemini/settings.json; echo X=1 >.gemini/.env
		mkdir -p .gemini/extensions/x; echo "#!/bin/sh" >.gemini/x.sh; true'
	sbx --agent aider sh -c 'echo AIDER_TEST_CMD=x >"$HOME/.aider/oauth-keys.env"; true'
	sbx --agent opencode sh -c 'mkdir -p "$HOME/.local/share/opencode/bin"; true'
	for p in .gemini/settings.json .gemini/.env .gemini/extensions .gemini/x.sh \
		.aider/oauth-keys.env .local/share/opencode/bin; do
		expect_no_file "$HOME/$p"
	done
	# The state beside them was writable all along.
	sbx --agent gemini sh -c 'echo s >"$HOME/.gemini/installation_id"'
	expect_status 0
	expect_content "$HOME/.gemini/installation_id" s
}

test_host_programs_writing_beside_protected_cache_files_are_left_alone()
{
	mkdir -p "$HOME/.cache"
	echo 'prompt' >"$HOME/.cache/p10k-instant-prompt-user.zsh"
	# p10k rewrites its instant prompt through NAME.tmp.PID on the host,
	# in any shell started while a sandbox runs (held here for a second,
	# so that a guard taking it would surely win).
	(sleep 1 && echo new >"$HOME/.cache/p10k-instant-prompt-user.zsh.tmp.42" && sleep 1 &&
		mv "$HOME/.cache/p10k-instant-prompt-user.zsh.tmp.42" \
			"$HOME/.cache/p10k-instant-prompt-user.zsh") &
	sbx sh -c 'sleep 4'
	wait
	expect_status 0
	expect_content "$HOME/.cache/p10k-instant-prompt-user.zsh" new
}

test_users_claude_config_dir_gets_the_same_protection()
{
	mkdir -p "$HOME/alt/commands"
	echo '{}' >"$HOME/alt/settings.json"
	echo '{"mcpServers": {}}' >"$HOME/alt/.claude.json"
	CLAUDE_CONFIG_DIR="$HOME/alt" sbx sh -c 'test "$CLAUDE_CONFIG_DIR" = "$HOME/alt" || echo "changed"
		for f in settings.json .claude.json commands/x.md; do
			echo evil 2>/dev/null >"$HOME/alt/$f" && echo "wrote $f"
		done
		mkdir "$HOME/alt/projects" || echo "state is read-only"; true'
	expect_status 0
	expect_out ""
	expect_content "$HOME/alt/settings.json" '{}'
	expect_content "$HOME/alt/.claude.json" '{"mcpServers": {}}'
	expect_no_file "$HOME/alt/commands/x.md"
}

# Entries of ~/.cache that host programs run, import, or share by hard link
# with host venvs (uv): the directories, and a file deep in each.
CACHE_CODE=".cache/uv/ .cache/pypoetry/virtualenvs/ .cache/bazelisk/ .cache/bazel/
.cache/coursier/ .cache/deno/ .cache/torch/hub/ .cache/huggingface/modules/ .cache/pipx/
.cache/yay/ .cache/paru/ .cache/yay/pkg/.git/hooks/post-merge
.cache/uv/archive-v0/pkg/__init__.py .cache/pypoetry/virtualenvs/app-py3.12/lib/x.pth
.cache/bazelisk/downloads/bazel .cache/bazel/_bazel_me/install/A-server.jar
.cache/coursier/arc/jdk/bin/java .cache/deno/remote/https/mod.js
.cache/torch/hub/owner_repo_main/hubconf.py
.cache/huggingface/modules/transformers_modules/model/modeling.py"

test_cache_code_cannot_be_written_removed_or_replaced()
{
	make_files "$HOME" "$CACHE_CODE"
	mkdir -p "$HOME/.cache/pip"
	before=$(snapshot_files "$HOME" "$CACHE_CODE")
	# shellcheck disable=SC2086
	sbx sh -c 'cd "$HOME" && '"$ATTACKS" sh $CACHE_CODE
	expect_status 0
	expect_out ""
	expect_files_unchanged "$HOME" "$CACHE_CODE" "$before"
	# Their parents cannot be renamed away to put a fresh one in place,
	# and the rest of ~/.cache is still the agent's to write.
	sbx sh -c 'cd "$HOME/.cache"
		for d in pypoetry torch huggingface; do
			mv "$d" "$d.away" 2>/dev/null && echo "renamed $d"
		done
		echo data >pip/written && echo data >torch/written'
	expect_status 0
	expect_out ""
	expect_content "$HOME/.cache/pip/written" data
	expect_content "$HOME/.cache/torch/written" data
	rm "$HOME/.cache/torch/written"
	expect_files_unchanged "$HOME" "$CACHE_CODE" "$before"
}

test_missing_cache_code_cannot_be_created()
{
	mkdir -p "$HOME/.cache/pypoetry" "$HOME/.cache/huggingface"
	sbx sh -c 'cd "$HOME/.cache"
		for d in uv pypoetry/virtualenvs bazelisk bazel coursier deno torch/hub \
			huggingface/modules pipx yay paru; do
			mkdir -p "$d" 2>/dev/null && echo evil >"$d/planted"
		done
		echo data >pypoetry/written; true'
	for d in uv pypoetry/virtualenvs bazelisk bazel coursier deno torch/hub huggingface/modules \
		pipx yay paru; do
		expect_no_file "$HOME/.cache/$d"
	done
	expect_content "$HOME/.cache/pypoetry/written" data
}

# The home directory without the audit log's directory, and the contents of
# the files a host shell sources.
home_listing()
{
	(cd "$HOME" && find . -path ./.local -prune -o -printf '%p %y %s\n' | LC_ALL=C sort &&
		cat .cargo/env .cache/p10k-instant-prompt-user.zsh .cache/zsh/zcompdump-5.9)
}

test_cache_data_stays_writable_and_bin_env_and_sourced_files_do_not()
{
	for d in .cargo/registry .cargo/git .cargo/bin go/pkg/mod go/bin .npm/_cacache .npm/_npx \
		.bun/install/cache .bun/bin .cache/pip .cache/pre-commit .cache/nvim .cache/gitstatus \
		.cache/fish .cache/antidote .cache/node/corepack; do
		mkdir -p "$HOME/$d" || fail "mkdir $d"
	done
	echo 'export PATH=$HOME/.cargo/bin:$PATH' >"$HOME/.cargo/env"
	echo '[build]' >"$HOME/.cargo/config.toml"
	echo 'source p10k' >"$HOME/.cache/p10k-instant-prompt-user.zsh"
	mkdir -p "$HOME/.cache/zsh"
	echo 'compinit dump' >"$HOME/.cache/zsh/zcompdump-5.9"
	mkdir -p "$HOME/.local/state/agent-sandbox"
	before=$(home_listing)
	sbx sh -c 'cd "$HOME"
		for d in .cargo/registry .cargo/git go/pkg/mod .npm/_cacache .bun/install/cache .cache/pip .cache; do
			echo data >"$d/written" || echo "data dir $d is not writable"
		done
		for d in .cargo/bin go/bin .npm/_npx .bun/bin .cache/pre-commit .cache/nvim .cache/gitstatus \
			.cache/fish .cache/antidote .cache/node/corepack .cargo .npm .bun go; do
			echo evil 2>/dev/null >"$d/planted" && echo "wrote into $d"
		done
		for f in .cargo/env .cargo/config.toml .cache/p10k-instant-prompt-user.zsh \
			.cache/zsh/zcompdump-5.9; do
			echo evil 2>/dev/null >"$f" && echo "wrote $f"
			mv "$f" "$f.away" 2>/dev/null && echo "renamed $f"
		done; true'
	expect_status 0
	expect_out ""
	for d in .cargo/registry .cargo/git go/pkg/mod .npm/_cacache .bun/install/cache .cache/pip .cache; do
		expect_content "$HOME/$d/written" data
		rm "$HOME/$d/written"
	done
	after=$(home_listing)
	[ "$after" = "$before" ] || fail "the home directory changed beyond the data directories"
}

test_rw_on_a_tool_directory_leaves_its_bin_env_and_npx_closed()
{
	mkdir -p "$HOME/.cargo/bin" "$HOME/.npm/_npx" "$HOME/.npm/_cacache"
	echo 'export PATH' >"$HOME/.cargo/env"
	sbx --rw "$HOME/.cargo" --rw "$HOME/.npm" sh -c 'cd "$HOME"
		echo x >.cargo/new-file || echo "the --rw did not apply"
		echo evil 2>/dev/null >.cargo/bin/cargo && echo "wrote .cargo/bin"
		echo evil 2>/dev/null >.cargo/env && echo "wrote .cargo/env"
		echo evil 2>/dev/null >.npm/_npx/pkg && echo "wrote .npm/_npx"; true'
	expect_status 0
	expect_out ""
	expect_no_file "$HOME/.cargo/bin/cargo"
	expect_no_file "$HOME/.npm/_npx/pkg"
	expect_content "$HOME/.cargo/env" 'export PATH'
}

test_without_agent_configs_the_project_files_are_writable()
{
	make_files "$T/work" ".vscode/tasks.json .mcp.json .husky/"
	echo '{"filesystem": {"presets": ["!@agent-configs"]}}' >.agent-sandbox.json
	approve_config
	sbx sh -c 'echo changed >.vscode/tasks.json && echo changed >.mcp.json &&
		echo changed >.husky/inside'
	expect_status 0
	expect_content .vscode/tasks.json changed
	expect_content .mcp.json changed
	expect_content .husky/inside changed
}

test_removing_agent_configs_in_a_project_config_needs_approval()
{
	echo '{"filesystem": {"presets": ["!@agent-configs"]}}' >.agent-sandbox.json
	sbx true
	expect_status 2
	expect_err_contains '"!@agent-configs" removes the protections of the @agent-configs preset'
}

test_policy_shows_the_agent_configs_preset()
{
	make_files "$T/work" ".vscode/tasks.json"
	sbx policy
	expect_status 0
	expect_out_contains "@agent-configs"
	grep -E "^$T/work/.vscode +rw +\.vscode +preset @agent-configs \(pinned\)" "$T/out" \
		>/dev/null || fail "no pinned .vscode line: $(out)"
	grep -E "^$T/work/.vscode/tasks.json +ro +\.vscode/tasks.json +preset @agent-configs" \
		"$T/out" >/dev/null || fail "no tasks.json line: $(out)"
	sbx --debug --dry-run true
	expect_err_contains "skipped ro $T/work/.mcp.json (@agent-configs): does not exist"
}

# Every file mise reads a config from in a project: a trusted path's hooks
# and env scripts run in the host shell that enters the directory.
test_missing_mise_configs_cannot_be_created()
{
	mkdir -p .config/mise/conf.d mise
	sbx sh -c 'for f in mise.toml mise.dev.toml .mise.prod.toml .mise.local.toml \
		.config/mise.toml .config/mise.local.toml .config/mise/config.toml \
		.config/mise/conf.d/hooks.toml mise/config.toml mise/config.ci.toml \
		.miserc.toml .tool-versions; do
		echo "[hooks] enter = \"evil\"" 2>/dev/null >"$f"
	done
	mkdir -p .mise/tasks && echo evil >.mise/config.toml; true'
	for f in mise.toml mise.dev.toml .mise.prod.toml .mise.local.toml .config/mise.toml \
		.config/mise.local.toml .config/mise/config.toml .config/mise/conf.d/hooks.toml \
		mise/config.toml mise/config.ci.toml .miserc.toml .tool-versions .mise; do
		expect_no_file "$T/work/$f"
	done
}

# What the guard for missing paths must hold: each of these is created
# inside and must not be on the host afterwards.
test_missing_project_agent_configs_cannot_be_created()
{
	mkdir .vscode .claude
	sbx sh -c 'echo "{\"tasks\": []}" >.vscode/tasks.json
		echo "{\"mcpServers\": {}}" >.mcp.json
		echo "{\"hooks\": {}}" >.claude/settings.local.json
		echo "eval evil" >.envrc
		echo "{}" >evil.code-workspace
		mkdir .husky && echo evil >.husky/pre-commit
		mkdir .devcontainer && echo "{\"initializeCommand\": \"evil\"}" >.devcontainer/devcontainer.json
		true'
	# .devcontainer did not exist either: its devcontainer.json must not
	# appear on the host through a directory made for it.
	for p in .vscode/tasks.json .mcp.json .claude/settings.local.json .envrc \
		evil.code-workspace .husky .devcontainer/devcontainer.json; do
		expect_no_file "$T/work/$p"
	done
}

test_missing_home_agent_configs_and_cache_code_cannot_be_created()
{
	mkdir -p "$HOME/.claude" "$HOME/.cache" "$HOME/.codex"
	sbx sh -c 'cd "$HOME"
		echo "BASH_ENV=/tmp/evil.sh" >.codex/.env
		echo "{\"hooks\": {}}" >.claude/settings.json
		echo "{\"mcpServers\": {}}" >.claude/.config.json
		mkdir .claude/hooks && echo evil >.claude/hooks/x.sh
		echo evil >.claude/statusline.sh
		mkdir -p .cache/pre-commit/repo && echo evil >.cache/pre-commit/repo/hook
		echo evil >.cache/p10k-instant-prompt-me.zsh; true'
	# A host Claude Code reads ~/.claude/.config.json, when present, in
	# place of ~/.claude.json.
	for p in .codex/.env .claude/settings.json .claude/.config.json .claude/hooks \
		.claude/statusline.sh .cache/pre-commit .cache/p10k-instant-prompt-me.zsh; do
		expect_no_file "$HOME/$p"
	done
}

test_a_symlinked_agent_config_directory_runs_and_opens_nothing()
{
	mkdir -p "$HOME/dots/vscode"
	echo '{}' >"$HOME/dots/vscode/settings.json"
	ln -s "$HOME/dots/vscode" .vscode
	sbx sh -c 'echo planted >.vscode/tasks.json; echo changed >.vscode/settings.json; true'
	expect_status 0
	expect_content "$HOME/dots/vscode/settings.json" '{}'
	expect_no_file "$HOME/dots/vscode/tasks.json"
}

run_tests
