/* Unit tests for sandbox_plan on fixture trees: a request in, a spec out,
 * with presets, secrets, layers and provenance decided and nothing written
 * on the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "spec/spec.h"
#include "unit.h"

/* The environment of a user whose home, config and state are all in the
 * scratch directory. */
struct fixture {
	char *home, *xdg, *state, *path;
	char *envp[5];
	char *proj;
};

static void fixture_init(struct fixture *f, const char *dir)
{
	unit_mkdir(dir, "home");
	unit_mkdir(dir, "proj");
	f->home = xasprintf("HOME=%s/home", dir);
	f->xdg = xasprintf("XDG_CONFIG_HOME=%s/xdg", dir);
	f->state = xasprintf("XDG_STATE_HOME=%s/state", dir);
	f->path = xstrdup("PATH=/usr/bin:/bin");
	f->envp[0] = f->home;
	f->envp[1] = f->xdg;
	f->envp[2] = f->state;
	f->envp[3] = f->path;
	f->envp[4] = NULL;
	f->proj = unit_path(dir, "proj");
}

static void fixture_release(struct fixture *f)
{
	free(f->home);
	free(f->xdg);
	free(f->state);
	free(f->path);
	free(f->proj);
}

static char *const command[] = {"make", "test", NULL};

static struct sandbox_request request_for(const struct fixture *f)
{
	return (struct sandbox_request){
	    .cwd = f->proj,
	    .envp = (char *const *)f->envp,
	    .network = REQUEST_UNSET,
	    .docker = REQUEST_UNSET,
	    .read_only = REQUEST_UNSET,
	    .command = command,
	};
}

static const struct access_entry *entry_for(const struct sandbox_spec *s, const char *path)
{
	for (size_t i = 0; i < s->policy.len; i++)
		if (!strcmp(s->policy.entries[i].path, path))
			return &s->policy.entries[i];
	return NULL;
}

static void plan_or_fail(const struct sandbox_request *req, struct sandbox_spec *s)
{
	_cleanup_error_ struct error err = ERROR_INIT;
	if (sandbox_plan(req, s, &err) < 0)
		unit_fail("sandbox_plan: %s", err.msg);
}

static void plan_masks_secret_files_the_scan_finds(void **state)
{
	const char *dir = *state;
	struct fixture f;
	fixture_init(&f, dir);
	unit_write(dir, "proj/.env", "TOKEN=x\n");
	unit_mkdir(dir, "proj/deploy");
	unit_write(dir, "proj/deploy/server.pem", "key\n");
	unit_write(dir, "proj/main.c", "int main;\n");
	struct sandbox_request req = request_for(&f);
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	plan_or_fail(&req, &s);

	assert_int_equal(s.secrets.found.len, 2);
	const char *masked[] = {"proj/.env", "proj/deploy/server.pem"};
	for (size_t i = 0; i < ARRAY_SIZE(masked); i++) {
		_cleanup_free_ char *p = unit_path(dir, masked[i]);
		const struct access_entry *e = entry_for(&s, p);
		if (!e || e->level != ACCESS_EXCLUDE)
			unit_fail("%s is not excluded", p);
	}
	_cleanup_free_ char *src = unit_path(dir, "proj/main.c");
	assert_null(entry_for(&s, src));
	const struct access_entry *proj = entry_for(&s, f.proj);
	assert_non_null(proj);
	assert_int_equal(proj->level, ACCESS_RW);
	fixture_release(&f);
}

static void plan_applies_presets_to_the_repository_it_finds(void **state)
{
	const char *dir = *state;
	struct fixture f;
	fixture_init(&f, dir);
	unit_mkdir(dir, "proj/.git");
	unit_mkdir(dir, "proj/.git/hooks");
	unit_write(dir, "proj/.git/HEAD", "ref: refs/heads/main\n");
	unit_write(dir, "proj/.git/config", "[core]\n");
	struct sandbox_request req = request_for(&f);
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	plan_or_fail(&req, &s);

	assert_non_null(strstr(s.presets_text, "@git"));
	_cleanup_free_ char *hooks = unit_path(dir, "proj/.git/hooks");
	const struct access_entry *e = entry_for(&s, hooks);
	assert_non_null(e);
	assert_int_equal(e->level, ACCESS_RO);
	assert_int_equal(e->rule->layer, LAYER_PRESET);
	fixture_release(&f);
}

static void plan_writes_nothing_on_the_host(void **state)
{
	const char *dir = *state;
	struct fixture f;
	fixture_init(&f, dir);
	/* An agent directory without the directories a run makes in it. */
	unit_mkdir(dir, "home/.claude");
	struct sandbox_request req = request_for(&f);
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	plan_or_fail(&req, &s);

	struct stat st;
	_cleanup_free_ char *state_dir = unit_path(dir, "state");
	_cleanup_free_ char *snapshots = unit_path(dir, "home/.claude/shell-snapshots");
	assert_int_equal(stat(state_dir, &st), -1);
	assert_int_equal(stat(snapshots, &st), -1);
	assert_true(s.agent_dirs_missing);
	assert_true(s.audit);
	_cleanup_free_ char *audit = unit_path(dir, "state/agent-sandbox");
	assert_string_equal(s.audit_dir, audit);
	fixture_release(&f);
}

static void plan_puts_the_request_above_every_config_layer(void **state)
{
	const char *dir = *state;
	struct fixture f;
	fixture_init(&f, dir);
	unit_mkdir(dir, "proj/docs");
	unit_write(dir, "proj/.agent-sandbox.json",
		   "{\"network\": false, \"filesystem\": {\"exclude\": [\"docs\"]}}\n");
	struct rule_list rules = RULE_LIST_INIT;
	rule_list_add(&rules, "docs", ACCESS_RO, LAYER_CLI, "--ro");
	struct sandbox_request req = request_for(&f);
	req.rules = &rules;
	req.network = REQUEST_ON;
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	plan_or_fail(&req, &s);

	_cleanup_free_ char *docs = unit_path(dir, "proj/docs");
	const struct access_entry *e = entry_for(&s, docs);
	assert_non_null(e);
	assert_int_equal(e->level, ACCESS_RO);
	assert_string_equal(e->rule->origin, "--ro");
	assert_int_equal(s.cfg.network.mode, NETWORK_HOST);
	assert_string_equal(s.cfg.network.origin, "--network=true");
	assert_string_equal(s.command.items[0], "make");
	assert_int_equal(s.command.len, 2);
	rule_list_release(&rules);
	fixture_release(&f);
}

static void plan_records_where_each_project_rule_came_from(void **state)
{
	const char *dir = *state;
	struct fixture f;
	fixture_init(&f, dir);
	unit_mkdir(dir, "proj/build");
	unit_write(dir, "proj/.agent-sandbox.json", "{\"filesystem\": {\"ro\": [\"build\"]}}\n");
	struct sandbox_request req = request_for(&f);
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	plan_or_fail(&req, &s);

	_cleanup_free_ char *build = unit_path(dir, "proj/build");
	const struct access_entry *e = entry_for(&s, build);
	assert_non_null(e);
	assert_int_equal(e->rule->layer, LAYER_PROJECT);
	_cleanup_free_ char *origin = unit_path(dir, "proj/.agent-sandbox.json:1:24");
	assert_string_equal(e->rule->origin, origin);
	assert_int_equal(s.trust.state, TRUST_TIGHTENS);
	fixture_release(&f);
}

static void plan_gives_the_trust_verdict_without_refusing(void **state)
{
	const char *dir = *state;
	struct fixture f;
	fixture_init(&f, dir);
	unit_write(dir, "proj/.agent-sandbox.json", "{\"network\": true}\n");
	struct sandbox_request req = request_for(&f);
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	plan_or_fail(&req, &s);

	assert_int_equal(s.trust.state, TRUST_UNAPPROVED);
	assert_true(sandbox_spec_trust_refused(&s));
	assert_true(s.trust.loosenings.len >= 1);
	unit_assert_contains(s.trust.loosenings.items[0], "host network", "loosening");
	fixture_release(&f);
}

static void plan_fails_with_a_config_error_naming_line_and_column(void **state)
{
	const char *dir = *state;
	struct fixture f;
	fixture_init(&f, dir);
	unit_write(dir, "proj/.agent-sandbox.json", "{\n  \"network\": maybe\n}\n");
	struct sandbox_request req = request_for(&f);
	struct sandbox_spec s;
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(sandbox_plan(&req, &s, &err), -1);
	assert_int_equal(err.kind, ERROR_CONFIG);
	unit_assert_contains(err.msg, ".agent-sandbox.json", "message");
	unit_assert_contains(err.msg, "2:14", "message");
	fixture_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    unit_tmp_test(plan_masks_secret_files_the_scan_finds),
	    unit_tmp_test(plan_applies_presets_to_the_repository_it_finds),
	    unit_tmp_test(plan_writes_nothing_on_the_host),
	    unit_tmp_test(plan_puts_the_request_above_every_config_layer),
	    unit_tmp_test(plan_records_where_each_project_rule_came_from),
	    unit_tmp_test(plan_gives_the_trust_verdict_without_refusing),
	    unit_tmp_test(plan_fails_with_a_config_error_naming_line_and_column),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
