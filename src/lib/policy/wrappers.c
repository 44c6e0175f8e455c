/* This file plans the command wrappers. It reads the filesystem only to
 * find programs on PATH and to check wrapper scripts; it never creates
 * anything. bwrap creates a mount point when the target is missing, so a
 * launcher is only ever mounted over a program that exists and that the
 * sandbox can see: a missing one would leave an empty file on the host. */
#include "policy/wrappers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "inside/git_guard.h"
#include "inside/inside.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "base/xalloc.h"

/* True when the sandbox shows the host's file at this resolved path: under
 * the read-only host root or a ro/rw rule, not under a private tmpfs or an
 * excluded path. */
static bool visible_inside(const struct policy *policy, const char *path)
{
	const struct access_entry *e = policy_entry_for(policy, path);
	if (e)
		return e->level != ACCESS_EXCLUDE;
	return policy_base_for(path)->kind == BASE_HOST_ROOT;
}

static void find_targets(const struct wrapper_input *in, struct wrapper *w)
{
	const char *name = w->setting->name;
	const char *path =
	    in->path_env && *in->path_env ? in->path_env : "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *colon = strchrnul(p, ':');
		_cleanup_free_ char *dir = xstrndup(p, (size_t)(colon - p));
		p = *colon ? colon + 1 : colon;
		if (dir[0] != '/') {
			if (*dir)
				strv_pushf(&w->skipped, "%s/%s: PATH entry is not absolute", dir,
					   name);
			continue;
		}
		_cleanup_free_ char *candidate = xasprintf("%s/%s", dir, name);
		_cleanup_free_ char *resolved = NULL;
		struct stat st;
		if (path_resolve_stat(candidate, &resolved, NULL, &st) < 0)
			continue;
		if (!S_ISREG(st.st_mode) || access(resolved, X_OK) < 0)
			continue;
		if (strv_contains(&w->targets, resolved))
			continue;
		if (!visible_inside(in->policy, resolved)) {
			strv_pushf(&w->skipped, "%s: not visible inside the sandbox", resolved);
			continue;
		}
		if (!w->real) {
			w->real = xstrdup(resolved);
			file_id_from_stat(&st, &w->real_id);
		}
		strv_push(&w->targets, resolved);
	}
}

static int check_script(const struct wrapper_input *in, struct wrapper *w, struct error *err)
{
	const struct command_setting *c = w->setting;
	_cleanup_free_ char *pattern = NULL;
	if (path_expand(c->script, in->home, in->cwd, &pattern, err) < 0)
		return error_prefix(err, "commands \"%s\" (%s): script %s", c->name, c->origin,
				    c->script);
	_cleanup_free_ char *abs = pattern_unescape(pattern);
	struct stat st;
	int r = path_resolve_stat(abs, &w->script, NULL, &st);
	if (r < 0)
		return error_errno(err, ERROR_CONFIG, -r, "commands \"%s\" (%s): wrapper script %s",
				   c->name, c->origin, abs);
	file_id_from_stat(&st, &w->script_id);
	if (!S_ISREG(st.st_mode))
		return error_set(err, ERROR_CONFIG,
				 "commands \"%s\" (%s): wrapper script %s is not a regular file",
				 c->name, c->origin, abs);
	if (access(w->script, X_OK) < 0) {
		error_set(err, ERROR_CONFIG,
			  "commands \"%s\" (%s): wrapper script %s is not executable", c->name,
			  c->origin, abs);
		error_hint(err, "chmod +x %s", abs);
		return -1;
	}
	return 0;
}

/* A symlink target holds at most a page on tmpfs; a longer value is not
 * recorded, so the launcher takes it as unset and the guard as changed. */
#define START_ENV_VALUE_MAX 4000

static void record_start_env(char *const *envp, struct strv *out)
{
	for (const char *const *name = git_guard_config_env; *name; name++) {
		const char *value = env_get(envp, *name);
		if (value && strlen(value) <= START_ENV_VALUE_MAX)
			strv_pushf(out, "%s=%s", *name, value);
	}
}

int wrapper_plan_build(const struct wrapper_input *in, struct wrapper_plan *out, struct error *err)
{
	*out = (struct wrapper_plan){.inherited = in->nested, .start_env = STRV_INIT};
	record_start_env(in->envp, &out->start_env);
	const struct command_table *t = in->commands;
	out->items = xcalloc(t->len ? t->len : 1, sizeof(*out->items));
	for (size_t i = 0; i < t->len; i++) {
		/* Inside a sandbox no launcher is mounted (sandbox/nested.c):
		 * a blocked command's programs are denied executing, and an
		 * inner script or @git goes first on PATH. The built-in
		 * default is the outer sandbox's already. */
		if (in->nested && t->items[i].kind != COMMAND_BLOCKED &&
		    (t->items[i].kind == COMMAND_RAW || t->items[i].layer == LAYER_BUILTIN))
			continue;
		struct wrapper *w = &out->items[out->len++];
		*w = (struct wrapper){
		    .setting = &t->items[i], .targets = STRV_INIT, .skipped = STRV_INIT};
		if (w->setting->kind == COMMAND_RAW)
			continue;
		if (w->setting->kind == COMMAND_SCRIPT && check_script(in, w, err) < 0)
			return -1;
		if (!in->nested || w->setting->kind == COMMAND_BLOCKED)
			find_targets(in, w);
		else
			w->first_on_path = true;
	}
	return 0;
}

void wrapper_plan_render(const struct wrapper_plan *p, const struct host_file *self,
			 const struct host_file *empty, struct mount_sink *out)
{
	static const char *const dirs[] = {WRAPPER_BIN_DIR, WRAPPER_SCRIPT_DIR, WRAPPER_PRESET_DIR,
					   WRAPPER_BLOCKED_DIR, WRAPPER_START_ENV_DIR};
	bool git_guard = false;
	if (p->inherited)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		strv_push(out->args, "--dir");
		strv_push(out->args, dirs[i]);
	}
	for (size_t i = 0; i < p->len; i++) {
		const struct wrapper *w = &p->items[i];
		const char *name = w->setting->name;
		if (!w->targets.len)
			continue;
		enum command_kind kind = w->setting->kind;
		if (kind == COMMAND_BLOCKED) {
			_cleanup_free_ char *marker = xasprintf(WRAPPER_BLOCKED_DIR "/%s", name);
			mount_plan_bind(out, MOUNT_READ_ONLY, empty->path, &empty->id, marker);
		}
		if (kind == COMMAND_GIT) {
			_cleanup_free_ char *marker = xasprintf(WRAPPER_PRESET_DIR "/%s", name);
			mount_plan_bind(out, MOUNT_READ_ONLY, empty->path, &empty->id, marker);
			git_guard = true;
		}
		if (kind == COMMAND_SCRIPT) {
			_cleanup_free_ char *script = xasprintf(WRAPPER_SCRIPT_DIR "/%s", name);
			mount_plan_bind(out, MOUNT_READ_ONLY, w->script, &w->script_id, script);
		}
		if (kind == COMMAND_GIT || kind == COMMAND_SCRIPT) {
			_cleanup_free_ char *real = xasprintf(WRAPPER_BIN_DIR "/%s", name);
			mount_plan_bind(out, MOUNT_READ_ONLY, w->real, &w->real_id, real);
		}
		for (size_t t = 0; t < w->targets.len; t++)
			mount_plan_bind(out, MOUNT_READ_ONLY, self->path, &self->id,
					w->targets.items[t]);
	}
	/* Symlinks rather than a file: bwrap writes them from its arguments,
	 * so the record needs no descriptor and shows in --dry-run. The "="
	 * keeps an empty value apart from an unset one (a symlink cannot be
	 * empty). /run/agent-sandbox is remounted read-only after this. */
	for (size_t i = 0; git_guard && i < p->start_env.len; i++) {
		const char *entry = p->start_env.items[i];
		size_t name_len = strcspn(entry, "=");
		_cleanup_free_ char *link =
		    xasprintf(WRAPPER_START_ENV_DIR "/%.*s", (int)name_len, entry);
		strv_push(out->args, "--symlink");
		strv_push(out->args, entry + name_len);
		strv_push(out->args, link);
	}
	/* Search-only, like /run/agent-sandbox itself: a deterrent against
	 * listing what is wrapped, not a boundary (mountinfo shows it). */
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		strv_push(out->args, "--chmod");
		strv_push(out->args, "0111");
		strv_push(out->args, dirs[i]);
	}
}

void wrapper_plan_release(struct wrapper_plan *p)
{
	for (size_t i = 0; i < p->len; i++) {
		free(p->items[i].script);
		free(p->items[i].real);
		strv_release(&p->items[i].targets);
		strv_release(&p->items[i].skipped);
	}
	free(p->items);
	strv_release(&p->start_env);
	*p = (struct wrapper_plan){0};
}

void wrapper_describe(struct strbuf *sb, const struct wrapper *w)
{
	const struct command_setting *c = w->setting;
	strbuf_addf(sb, "%s: %s", c->name, command_kind_name(c->kind));
	if (c->kind == COMMAND_SCRIPT)
		strbuf_addf(sb, " %s", w->script);
	strbuf_addf(sb, " (%s %s)", layer_name(c->layer), c->origin);
	if (c->kind == COMMAND_RAW) {
		strbuf_addstr(sb, ", not wrapped");
		return;
	}
	if (w->first_on_path) {
		strbuf_addstr(sb, ", a launcher first on PATH (inside a sandbox: a deterrent, the "
				  "real program stays reachable by its path)");
		return;
	}
	if (!w->targets.len) {
		strbuf_addstr(sb, ", not found on PATH: nothing to wrap");
		return;
	}
	strbuf_addstr(sb, ", covers");
	for (size_t t = 0; t < w->targets.len; t++)
		strbuf_addf(sb, " %s", w->targets.items[t]);
	if (c->kind != COMMAND_BLOCKED)
		strbuf_addf(sb, "; real program %s at %s/%s", w->real, WRAPPER_BIN_DIR, c->name);
}
