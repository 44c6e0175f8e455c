/* Unit tests for the agent profile table: every profile is complete, its
 * state lies under the home directory and never over what @agents keeps
 * read-only or @base hides, a command selects it by basename only, and the
 * state directory maker creates under home and follows no symlink. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "policy/agent_profile.h"
#include "policy/agent_state.h"
#include "policy/preset.h"
#include "unit.h"

static const struct preset_context context = {.cwd = "/project", .home = "/home/user"};

/* a is b or lies beneath it. */
static bool at_or_under(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

static void every_profile_has_a_name_commands_and_paths_under_home(void **state)
{
	assert_true(agent_profiles_len >= 6);
	for (size_t i = 0; i < agent_profiles_len; i++) {
		const struct agent_profile *p = &agent_profiles[i];
		assert_non_null(p->name);
		assert_true(p->name[0] != '\0');
		assert_non_null(p->commands[0]);
		assert_non_null(p->state[0]);
		for (const char *const *d = p->state; *d; d++) {
			unit_assert_starts_with(*d, "~/.", "%s: state %s", p->name, *d);
			if (strstr(*d, "..") || strstr(*d, "//") || strpbrk(*d, "*?[") ||
			    (*d)[strlen(*d) - 1] == '/')
				unit_fail("%s: state %s is not a plain path", p->name, *d);
		}
		for (const char *const *e = p->env; *e; e++)
			if (!strchr(*e, '=') || **e == '=')
				unit_fail("%s: env %s is not NAME=VALUE", p->name, *e);
		for (const char *const *k = p->keys; *k; k++)
			if (strchr(*k, '='))
				unit_fail("%s: key %s is not a name", p->name, *k);
		assert_ptr_equal(agent_profile_lookup(p->name), p);
	}
	for (const char *names[] = {"claude", "codex", "gemini", "opencode", "aider", "goose"},
			**n = names;
	     n < names + 6; n++)
		if (!agent_profile_lookup(*n))
			unit_fail("no %s profile", *n);
	assert_string_equal(agent_profile_lookup("claude")->credential, "anthropic");
	assert_string_equal(agent_profile_lookup("codex")->credential, "openai");
	assert_null(agent_profile_lookup("none"));
}

/* A profile's state is writable: it must not open what @agents keeps
 * read-only for the host's next agent (settings, hooks, code), nor what
 * @base hides (credential stores). */
static void state_never_lies_over_protected_paths(void **state)
{
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	preset_expand(preset_lookup("@agents") | preset_lookup("@base") | preset_lookup("@caches"),
		      &context, &rules);
	for (size_t i = 0; i < agent_profiles_len; i++)
		for (const char *const *d = agent_profiles[i].state; *d; d++)
			for (size_t r = 0; r < rules.len; r++) {
				const struct rule *rule = &rules.items[r];
				if (rule->level != ACCESS_RW && at_or_under(*d, rule->pattern) &&
				    strcmp(rule->pattern, "~"))
					unit_fail("%s: state %s lies in %s %s (%s)",
						  agent_profiles[i].name, *d,
						  access_level_name(rule->level), rule->pattern,
						  rule->origin);
			}
}

/* What @agents protects inside a state directory must sit directly in it
 * or in a directory that is a mount point of its own: otherwise the agent
 * renames the parent away and makes a fresh one. */
static void protected_paths_in_state_have_their_parent_pinned(void **state)
{
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	preset_expand(preset_lookup("@agents"), &context, &rules);
	size_t checked = 0;
	for (size_t i = 0; i < agent_profiles_len; i++)
		for (const char *const *d = agent_profiles[i].state; *d; d++)
			for (size_t r = 0; r < rules.len; r++) {
				const struct rule *rule = &rules.items[r];
				if (rule->level == ACCESS_RW || !at_or_under(rule->pattern, *d) ||
				    !strcmp(rule->pattern, *d))
					continue;
				_cleanup_free_ char *parent = xstrdup(rule->pattern);
				*strrchr(parent, '/') = '\0';
				bool pinned = false;
				for (const char *const *o = agent_profiles[i].state; *o; o++)
					pinned = pinned || !strcmp(*o, parent);
				for (size_t q = 0; q < rules.len; q++)
					pinned =
					    pinned || (rules.items[q].level == ACCESS_RW &&
						       !strcmp(rules.items[q].pattern, parent));
				if (!pinned)
					unit_fail("%s: %s is protected but %s is not a mount point",
						  agent_profiles[i].name, rule->pattern, parent);
				checked++;
			}
	/* Gemini's settings, opencode's bin, aider's dotenv file at least. */
	assert_true(checked >= 3);
}

static void command_selects_by_basename_only(void **state)
{
	assert_string_equal(agent_profile_for_command("claude")->name, "claude");
	assert_string_equal(agent_profile_for_command("/opt/x/bin/codex")->name, "codex");
	assert_string_equal(agent_profile_for_command("./gemini")->name, "gemini");
	assert_null(agent_profile_for_command("claude-code"));
	assert_null(agent_profile_for_command("codex/"));
	assert_null(agent_profile_for_command("npx"));
	assert_null(agent_profile_for_command(""));
	assert_null(agent_profile_for_command(NULL));
	assert_string_equal(agent_profile_suggest("codx"), "codex");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	agent_profile_list_names(&sb);
	unit_assert_contains(sb.buf, "claude, codex, gemini", "names");
}

static void state_dir_is_made_with_parents_and_no_symlink_is_followed(void **state)
{
	const char *home = *state;
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(agent_state_make_state_dir(home, "~/.local/share/goose", &err), 3);
	_cleanup_free_ char *made = xasprintf("%s/.local/share/goose", home);
	struct stat st;
	assert_int_equal(stat(made, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(agent_state_make_state_dir(home, "~/.local/share/goose", &err), 0);

	/* A planted symlink on the way is refused, and nothing is made
	 * where it points. */
	unit_mkdir(home, "elsewhere");
	_cleanup_free_ char *elsewhere = unit_path(home, "elsewhere");
	unit_symlink(elsewhere, home, ".config");
	assert_int_equal(agent_state_make_state_dir(home, "~/.config/x", &err), -1);
	_cleanup_free_ char *outside = xasprintf("%s/x", elsewhere);
	assert_int_equal(stat(outside, &st), -1);
	error_release(&err);
	assert_int_equal(agent_state_make_state_dir(home, "/etc/x", &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_profile_has_a_name_commands_and_paths_under_home),
	    cmocka_unit_test(state_never_lies_over_protected_paths),
	    cmocka_unit_test(protected_paths_in_state_have_their_parent_pinned),
	    cmocka_unit_test(command_selects_by_basename_only),
	    unit_tmp_test(state_dir_is_made_with_parents_and_no_symlink_is_followed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
