/* Unit tests for the presets' contents: @caches grants data and never a bin
 * directory or an env file, @agents keeps the host's Claude Code config
 * read-only and its copy writable, and every protected path that lies in a
 * writable directory has that directory pinned as a mount point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy/agent_state.h"
#include "base/cleanup.h"
#include "policy/preset.h"
#include "unit.h"

static const struct preset_context context = {
    .cwd = "/project",
    .home = "/home/user",
    .claude_config_dir = "/home/user/claude-alt",
};

static const struct rule *find_rule(const struct rule_list *rules, const char *pattern)
{
	for (size_t i = 0; i < rules->len; i++)
		if (!strcmp(rules->items[i].pattern, pattern))
			return &rules->items[i];
	return NULL;
}

static void expect_level(const struct rule_list *rules, const char *pattern,
			 enum access_level level)
{
	const struct rule *r = find_rule(rules, pattern);
	if (!r)
		unit_fail("no rule for %s", pattern);
	if (r->level != level)
		unit_fail("%s is %s, expected %s", pattern, access_level_name(r->level),
			  access_level_name(level));
}

static void preset_select_adds_agent_configs_by_default_and_removes_it_with_bang(void **state)
{
	unsigned bit = preset_lookup("@agent-configs");
	assert_true(bit != 0);
	struct strv ops = STRV_INIT;
	assert_true(preset_select(&ops) & bit);
	strv_push(&ops, "!@agent-configs");
	unsigned set = preset_select(&ops);
	assert_false(set & bit);
	assert_true(set & preset_lookup("@git"));
	strv_release(&ops);

	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	preset_describe(preset_lookup("@all"), &sb);
	unit_assert_contains(sb.buf, "@agent-configs", "@all described");
}

/* Whether a rule of the list makes path, or a directory above it, writable. */
static bool writable_by(const struct rule_list *rules, const char *path)
{
	for (size_t i = 0; i < rules->len; i++) {
		const struct rule *r = &rules->items[i];
		size_t n = strlen(r->pattern);
		if (r->level == ACCESS_RW && !strncmp(path, r->pattern, n) &&
		    (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

/* `mv .vscode x; mkdir .vscode` would leave a read-only tasks.json behind
 * under another name and let a fresh one take its place, unless the
 * directory is a mount point: a rw rule of its own. The working directory
 * is a mount point anyway; directories no rule makes writable cannot be
 * renamed at all. */
static void every_protected_path_in_a_writable_directory_has_it_pinned(void **state)
{
	static const char *const names[] = {"@caches", "@agents", "@agent-configs"};
	for (size_t n = 0; n < ARRAY_SIZE(names); n++) {
		_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
		preset_expand(preset_lookup(names[n]), &context, &rules);
		assert_true(rules.len > 0);
		for (size_t i = 0; i < rules.len; i++) {
			const struct rule *r = &rules.items[i];
			if (r->level == ACCESS_RW)
				continue;
			_cleanup_free_ char *parent = xstrdup(r->pattern);
			char *slash = strrchr(parent, '/');
			if (!slash)
				continue; /* in the working directory */
			*slash = '\0';
			if (!writable_by(&rules, parent))
				continue;
			const struct rule *pin = find_rule(&rules, parent);
			if (!pin || pin->level != ACCESS_RW)
				unit_fail("%s: %s is protected but %s is not pinned", names[n],
					  r->pattern, parent);
		}
	}
}

static void caches_grant_data_and_keep_bin_env_and_npx_closed(void **state)
{
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	preset_expand(preset_lookup("@caches"), &context, &rules);
	static const char *const never[] = {"~/.cargo", "~/go", "~/.npm", "~/.bun"};
	for (size_t i = 0; i < ARRAY_SIZE(never); i++)
		if (find_rule(&rules, never[i]))
			unit_fail("@caches has a rule for %s", never[i]);
	static const char *const closed[] = {"~/.cargo/bin", "~/.cargo/env", "~/.cargo/config.toml",
					     "~/go/bin",     "~/.bun/bin",   "~/.npm/_npx"};
	for (size_t i = 0; i < ARRAY_SIZE(closed); i++)
		expect_level(&rules, closed[i], ACCESS_RO);
	static const char *const data[] = {"~/.cargo/registry",	   "~/.cargo/git",
					   "~/go/pkg/mod",	   "~/.npm/_cacache",
					   "~/.bun/install/cache", "~/.cache"};
	for (size_t i = 0; i < ARRAY_SIZE(data); i++)
		expect_level(&rules, data[i], ACCESS_RW);
	expect_level(&rules, "~/.cache/pre-commit", ACCESS_RO);
	expect_level(&rules, "~/.cache/p10k-instant-prompt-*.zsh", ACCESS_RO);
	/* Entries of ~/.cache that host programs run, import or share by
	 * hard link with host venvs. */
	static const char *const code[] = {"~/.cache/uv",	 "~/.cache/pypoetry/virtualenvs",
					   "~/.cache/bazelisk",	 "~/.cache/bazel",
					   "~/.cache/coursier",	 "~/.cache/deno",
					   "~/.cache/torch/hub", "~/.cache/huggingface/modules",
					   "~/.cache/pipx",	 "~/.cache/yay"};
	for (size_t i = 0; i < ARRAY_SIZE(code); i++)
		expect_level(&rules, code[i], ACCESS_RO);
}

static void base_hides_credential_stores_and_histories(void **state)
{
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	preset_expand(preset_lookup("@base"), &context, &rules);
	static const char *const hidden[] = {"~/.ssh",
					     "~/.git-credentials",
					     "~/.config/git/credentials",
					     "~/.bash_history",
					     "~/.zsh_history",
					     "~/.local/share/fish/fish_history",
					     "~/.python_history",
					     "~/.psql_history",
					     "~/.viminfo"};
	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++)
		expect_level(&rules, hidden[i], ACCESS_EXCLUDE);
}

static void agent_configs_cover_every_mise_config_in_the_project(void **state)
{
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	preset_expand(preset_lookup("@agent-configs"), &context, &rules);
	static const char *const mise[] = {
	    "mise.toml",    ".mise.toml",	 "mise.*.toml",
	    ".mise.*.toml", ".config/mise.toml", ".config/mise.*.toml",
	    ".config/mise", "mise/config.toml",	 "mise/config.*.toml",
	    ".mise",	    ".miserc.toml",	 ".tool-versions"};
	for (size_t i = 0; i < ARRAY_SIZE(mise); i++)
		expect_level(&rules, mise[i], ACCESS_RO);
	expect_level(&rules, ".config", ACCESS_RW);
	expect_level(&rules, "mise", ACCESS_RW);
}

static void agents_keep_config_read_only_and_claude_copy_writable(void **state)
{
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	preset_expand(preset_lookup("@agents"), &context, &rules);
	expect_level(&rules, "~/.claude", ACCESS_RW);
	expect_level(&rules, "~/.claude.json", ACCESS_RO);
	expect_level(&rules, "~/.claude/.config.json", ACCESS_RO);
	expect_level(&rules, "~/.claude/settings.json", ACCESS_RO);
	expect_level(&rules, "~/.codex/config.toml", ACCESS_RO);
	expect_level(&rules, "~/.codex/.env", ACCESS_RO);
	expect_level(&rules, "~/.pi/agent/auth.json", ACCESS_RO);
	/* The copy Claude Code inside writes lies under the rw ~/.claude. */
	assert_null(find_rule(&rules, "~/.claude/.claude.json"));
	/* A CLAUDE_CONFIG_DIR of the user's is the host's: its file is not
	 * the sandbox's to write. */
	expect_level(&rules, "/home/user/claude-alt", ACCESS_RW);
	expect_level(&rules, "/home/user/claude-alt/.claude.json", ACCESS_RO);
	expect_level(&rules, "/home/user/claude-alt/settings.json", ACCESS_RO);
	expect_level(&rules, "/home/user/claude-alt/*.sh", ACCESS_RO);
}

static void agents_config_rules_only_tighten(void **state)
{
	/* Protections, never grants: beneath a directory hidden by another
	 * rule (serve hides the daemon user's ~/.claude) they stay hidden. */
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	preset_expand(preset_lookup("@agents"), &context, &rules);
	size_t ro = 0;
	for (size_t i = 0; i < rules.len; i++) {
		if (rules.items[i].level != ACCESS_RO)
			continue;
		ro++;
		if (!rules.items[i].tighten_only)
			unit_fail("%s is a grant, not a protection", rules.items[i].pattern);
	}
	assert_true(ro > 20);
	assert_false(find_rule(&rules, "~/.claude")->tighten_only);
}

static void claude_env_points_at_home_unless_the_host_names_a_directory(void **state)
{
	char *plain[] = {"PATH=/usr/bin", NULL};
	char *named[] = {"CLAUDE_CONFIG_DIR=/elsewhere", NULL};
	_cleanup_free_ char *entry = agent_state_claude_env(plain, "/home/user");
	assert_string_equal(entry, "CLAUDE_CONFIG_DIR=/home/user/.claude");
	assert_null(agent_state_claude_env(named, "/home/user"));
	assert_null(agent_state_claude_env(plain, NULL));
}

static void users_claude_dir_is_not_an_outer_sandboxs_own(void **state)
{
	char *outer[] = {"CLAUDE_CONFIG_DIR=/home/user/.claude", NULL};
	char *chosen[] = {"CLAUDE_CONFIG_DIR=/home/user/alt", NULL};
	assert_string_equal(agent_state_users_claude_dir(outer, "/home/user", false),
			    "/home/user/.claude");
	assert_null(agent_state_users_claude_dir(outer, "/home/user", true));
	assert_string_equal(agent_state_users_claude_dir(chosen, "/home/user", true),
			    "/home/user/alt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(preset_select_adds_agent_configs_by_default_and_removes_it_with_bang),
	    cmocka_unit_test(every_protected_path_in_a_writable_directory_has_it_pinned),
	    cmocka_unit_test(caches_grant_data_and_keep_bin_env_and_npx_closed),
	    cmocka_unit_test(agents_keep_config_read_only_and_claude_copy_writable),
	    cmocka_unit_test(agents_config_rules_only_tighten),
	    cmocka_unit_test(base_hides_credential_stores_and_histories),
	    cmocka_unit_test(agent_configs_cover_every_mise_config_in_the_project),
	    cmocka_unit_test(claude_env_points_at_home_unless_the_host_names_a_directory),
	    cmocka_unit_test(users_claude_dir_is_not_an_outer_sandboxs_own),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
