/* This file decides what a project config loosens: it compares what a run
 * would get without the project config with what it gets with it, entry by
 * entry, each on an exposure order, and names the project entry that shows
 * more. Both sides come from the same planning; it never reads a config
 * file itself, so it cannot see a setting the run does not. */
#include "base/units.h"
#include "policy/trust.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "inside/git_guard.h"
#include "policy/env.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "policy/preset.h"
#include "policy/secrets.h"

struct comparison {
	struct trust_check *tc;
	const struct config *before, *after;
	const char *cwd, *home;
};

static void loosens(struct comparison *c, const char *origin, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One line per project entry: a rule that loosens both on its text and in
 * the policy is reported once. */
static void loosens(struct comparison *c, const char *origin, const char *fmt, ...)
{
	if (strv_contains(&c->tc->origins, origin))
		return;
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *what = xvasprintf(fmt, ap);
	va_end(ap);
	strv_pushf(&c->tc->loosenings, "%s: %s", origin, what);
	strv_push(&c->tc->origins, origin);
}

/* Whether an entry of a plain list (config_origins) is the project
 * config's: its origin is "<file>:L:C" of that file. */
static bool from_project(const struct comparison *c, const struct strv *origins, size_t i)
{
	const char *file = c->tc->file;
	if (!file)
		return false;
	size_t len = strlen(file);
	return !strncmp(origins->items[i], file, len) && origins->items[i][len] == ':';
}

static const char *decided_by(enum layer layer, const char *origin)
{
	return layer == LAYER_BUILTIN ? "the default" : origin;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Settings: read-only on < off, docker off < on, audit on < off. */
static void compare_settings(struct comparison *c)
{
	const struct config *b = c->before, *a = c->after;
	if (a->read_only.layer == LAYER_PROJECT && !a->read_only.value && b->read_only.value)
		loosens(c, a->read_only.origin,
			"\"read-only\": false makes the project writable (read-only by %s)",
			decided_by(b->read_only.layer, b->read_only.origin));
	if (a->docker.layer == LAYER_PROJECT && a->docker.value && !b->docker.value)
		loosens(c, a->docker.origin,
			"\"docker\": true exposes the Docker socket, which gives root on the "
			"host");
	if (a->audit.layer == LAYER_PROJECT && !a->audit.value && b->audit.value)
		loosens(c, a->audit.origin, "\"audit\": false turns the audit log off");
}

/* Limits only tighten: a project may lower one, raising it gives the
 * command more of the host. */
static void compare_limits(struct comparison *c)
{
	const struct config_limits *b = &c->before->limits, *a = &c->after->limits;
	if (a->tmp.layer == LAYER_PROJECT && a->tmp.value > b->tmp.value) {
		_cleanup_free_ char *now = config_format_size(a->tmp.value);
		_cleanup_free_ char *was = config_format_size(b->tmp.value);
		loosens(c, a->tmp.origin, "\"limits.tmp\" raises /tmp to %s (%s by %s)", now, was,
			decided_by(b->tmp.layer, b->tmp.origin));
	}
	if (a->pids.layer == LAYER_PROJECT && a->pids.value > b->pids.value)
		loosens(c, a->pids.origin,
			"\"limits.pids\" raises the process limit to %llu (%llu by %s)",
			a->pids.value, b->pids.value, decided_by(b->pids.layer, b->pids.origin));
	/* memory, cpus and timeout: 0 is no limit, which any value lowers. */
	if (a->memory.layer == LAYER_PROJECT && b->memory.value &&
	    a->memory.value > b->memory.value) {
		_cleanup_free_ char *now = config_format_size(a->memory.value);
		_cleanup_free_ char *was = config_format_size(b->memory.value);
		loosens(c, a->memory.origin, "\"limits.memory\" raises memory to %s (%s by %s)",
			now, was, decided_by(b->memory.layer, b->memory.origin));
	}
	if (a->cpus.layer == LAYER_PROJECT && b->cpus.value && a->cpus.value > b->cpus.value) {
		_cleanup_free_ char *now = cpus_format((unsigned)a->cpus.value);
		_cleanup_free_ char *was = cpus_format((unsigned)b->cpus.value);
		loosens(c, a->cpus.origin, "\"limits.cpus\" raises the CPUs to %s (%s by %s)", now,
			was, decided_by(b->cpus.layer, b->cpus.origin));
	}
	if (a->timeout.layer == LAYER_PROJECT && b->timeout.value &&
	    a->timeout.value > b->timeout.value) {
		_cleanup_free_ char *now = duration_format(a->timeout.value);
		_cleanup_free_ char *was = duration_format(b->timeout.value);
		loosens(c, a->timeout.origin,
			"\"limits.timeout\" raises the timeout to %s (%s by %s)", now, was,
			decided_by(b->timeout.layer, b->timeout.origin));
	}
}

/* A preset removed takes its rules away; the policy comparison sees what
 * that shows, this names the "!@x" that did it. */
static void compare_presets(struct comparison *c)
{
	unsigned removed = preset_select(&c->before->presets) & ~preset_select(&c->after->presets);
	const struct strv *ops = &c->after->presets;
	for (size_t i = 0; i < ops->len; i++) {
		const char *op = ops->items[i];
		if (from_project(c, &c->after->origins.presets, i) && op[0] == '!' &&
		    (preset_lookup(op + 1) & removed))
			loosens(c, c->after->origins.presets.items[i],
				"\"%s\" removes the protections of the %s preset", op, op + 1);
	}
}

/* A "rw" rule whose text lies outside the working directory loosens even
 * when nothing exists there yet: the path could appear later. Rules inside
 * it are judged on the resolved policy, which also sees symlinks. */
static void compare_rw_text(struct comparison *c)
{
	_cleanup_free_ char *escaped_cwd = pattern_escape(c->cwd);
	const struct rule_list *rules = &c->after->rules;
	for (size_t i = 0; i < rules->len; i++) {
		const struct rule *r = &rules->items[i];
		if (r->layer != LAYER_PROJECT || r->level != ACCESS_RW)
			continue;
		_cleanup_free_ char *abs = NULL;
		_cleanup_error_ struct error perr = ERROR_INIT;
		bool outside = path_expand(r->pattern, c->home, c->cwd, &abs, &perr) < 0 ||
			       strstr(abs, "/../") ||
			       (strlen(abs) >= 3 && !strcmp(abs + strlen(abs) - 3, "/..")) ||
			       !path_is_within(abs, escaped_cwd);
		if (outside)
			loosens(c, r->origin,
				"\"rw\": \"%s\" makes a path outside the project writable",
				r->pattern);
	}
}

/* How much of the host a path shows inside, least first. PRIVATE is a path
 * under one of the sandbox's own tmpfs (/tmp, /run, and with it a
 * $XDG_RUNTIME_DIR there) that no rule covers: nothing of the host's is
 * there at all, so even a read-only or hidden host path in its place shows
 * more. Comparing access levels instead would call a host socket bound
 * read-only into the private /tmp "stricter than writable". */
enum exposure {
	EXPOSE_PRIVATE,
	EXPOSE_HIDDEN,
	EXPOSE_RO,
	EXPOSE_RW,
};

static enum exposure exposure_of(enum access_level level)
{
	switch (level) {
	case ACCESS_RW:
		return EXPOSE_RW;
	case ACCESS_RO:
		return EXPOSE_RO;
	case ACCESS_EXCLUDE:
		return EXPOSE_HIDDEN;
	}
	return EXPOSE_RW;
}

/* What the path shows without the project config, and why: "by" the rule
 * or base mount that decided it. */
static enum exposure base_exposure(const struct policy *p, const char *path, char **why)
{
	const struct access_entry *e = policy_entry_for(p, path);
	if (e) {
		*why = xasprintf("by %s", e->rule->origin);
		return exposure_of(e->level);
	}
	const struct base_mount *m = policy_base_for(path);
	if (m->kind == BASE_HOST_ROOT) {
		*why = xasprintf("by the %s", m->description);
		return EXPOSE_RO;
	}
	*why = xasprintf("under the sandbox's own %s", m->path);
	return EXPOSE_PRIVATE;
}

static const char *exposure_words(enum exposure x)
{
	switch (x) {
	case EXPOSE_RW:
		return "writable";
	case EXPOSE_RO:
		return "read-only";
	case EXPOSE_HIDDEN:
		return "hidden";
	case EXPOSE_PRIVATE:
		return "private to the sandbox";
	}
	return "?";
}

/* The project's "@x" that brings in the preset a rule comes from ("@caches",
 * "@git (core.hooksPath)": the preset's name is the first word of the
 * origin), when the side without the project config did not have it: its
 * index in the presets, or -1. */
static ssize_t preset_added_by(const struct comparison *c, const char *rule_origin)
{
	_cleanup_free_ char *name = xstrndup(rule_origin, strcspn(rule_origin, " "));
	unsigned bit = preset_lookup(name);
	unsigned added = preset_select(&c->after->presets) & ~preset_select(&c->before->presets);
	if (!(bit & added))
		return -1;
	const struct strv *ops = &c->after->presets;
	for (size_t i = 0; i < ops->len; i++)
		if (from_project(c, &c->after->origins.presets, i) && ops->items[i][0] != '!' &&
		    (preset_lookup(ops->items[i]) & bit))
			return (ssize_t)i;
	return -1;
}

/* Paths: private < hidden < ro < rw. Every entry a project rule decides,
 * or a preset the project config adds (back, after the global config
 * removed it), is looked up in the policy without the project config: a
 * symlink out of the project, "rw" over a protected path, "ro" over a
 * hidden one or a host path shown in the private /tmp all show here. The
 * other rules are the same on both sides; rules the project config
 * removes go with a preset it removes, which compare_presets names. */
static void compare_policies(struct comparison *c, const struct policy *before,
			     const struct policy *after)
{
	for (size_t i = 0; i < after->len; i++) {
		const struct access_entry *e = &after->entries[i];
		const struct rule *r = e->rule;
		ssize_t op = r->layer == LAYER_PRESET ? preset_added_by(c, r->origin) : -1;
		if (r->layer != LAYER_PROJECT && op < 0)
			continue;
		_cleanup_free_ char *why = NULL;
		enum exposure was = base_exposure(before, e->path, &why);
		enum exposure now = exposure_of(e->level);
		if (now <= was)
			continue;
		if (r->layer == LAYER_PROJECT)
			loosens(c, r->origin, "\"%s\": \"%s\" makes %s %s (it was %s, %s)",
				access_level_name(r->level), r->pattern, e->path,
				exposure_words(now), exposure_words(was), why);
		else
			loosens(c, c->after->origins.presets.items[op],
				"\"%s\" adds rules that make %s %s (it was %s, %s)",
				c->after->presets.items[op], e->path, exposure_words(now),
				exposure_words(was), why);
	}
}

static int network_rank(enum network_mode mode)
{
	switch (mode) {
	case NETWORK_NONE:
		return 0;
	case NETWORK_FILTERED:
		return 1;
	case NETWORK_HOST:
		return 2;
	}
	return 2;
}

static bool net_list_has(const struct net_list *list, const char *name, const char *address)
{
	for (size_t i = 0; i < list->len; i++)
		if (!strcmp(list->items[i].name, name) &&
		    (!address || !strcmp(list->items[i].address, address)))
			return true;
	return false;
}

/* The network: none < filtered < host; through the proxy, fewer hosts,
 * ports and pinned names < more. The lists have no way to remove an entry
 * (a deny list only grows), so only what the project adds can loosen, and
 * only where the proxy is what decides: under the host network every host
 * is reachable anyway, and without a filtered network the lists are
 * unused. */
static void compare_network(struct comparison *c)
{
	const struct network_config *b = &c->before->network, *a = &c->after->network;
	if (a->layer == LAYER_PROJECT && network_rank(a->mode) > network_rank(b->mode))
		loosens(c, a->origin,
			a->mode == NETWORK_HOST
			    ? "\"network\": true gives the sandbox the host network (was %s, by %s)"
			    : "\"network\": {...} opens the filtered network (was %s, by %s)",
			network_mode_name(b->mode), decided_by(b->layer, b->origin));
	if (a->mode != NETWORK_FILTERED || b->mode == NETWORK_HOST)
		return;
	for (size_t i = 0; i < a->allow.len; i++) {
		const struct net_entry *e = &a->allow.items[i];
		if (e->layer == LAYER_PROJECT && !net_list_has(&b->allow, e->name, NULL))
			loosens(c, e->origin, "\"allow\": \"%s\" lets the sandbox reach more hosts",
				e->name);
	}
	for (size_t i = 0; i < a->localhost.len; i++) {
		const struct net_entry *e = &a->localhost.items[i];
		if (e->layer == LAYER_PROJECT && !net_list_has(&b->localhost, e->name, NULL))
			loosens(c, e->origin, "\"localhost\": %s opens the host's loopback port %s",
				e->name, e->name);
	}
	for (size_t i = 0; i < a->resolve.len; i++) {
		const struct net_entry *e = &a->resolve.items[i];
		if (e->layer == LAYER_PROJECT && !net_list_has(&b->resolve, e->name, e->address))
			loosens(c, e->origin,
				"\"resolve\": \"%s\" pins a name to %s, which the proxy then "
				"reaches",
				e->name, e->address);
	}
}

/* How much a command setting restrains the command: a script runs inside
 * the sandbox with the real program at hand, so it restrains no more than
 * raw access does. */
static int command_rank(enum command_kind kind)
{
	switch (kind) {
	case COMMAND_BLOCKED:
		return 3;
	case COMMAND_GIT:
		return 2;
	case COMMAND_SCRIPT:
		return 1;
	case COMMAND_RAW:
		return 0;
	}
	return 0;
}

static const struct command_setting *command_find(const struct command_table *t, const char *name)
{
	for (size_t i = 0; i < t->len; i++)
		if (!strcmp(t->items[i].name, name))
			return &t->items[i];
	return NULL;
}

/* Commands: a wrapper replaced by one that restrains less, or by another
 * script (which could do anything). */
static void compare_commands(struct comparison *c)
{
	const struct command_table *t = &c->after->commands;
	for (size_t i = 0; i < t->len; i++) {
		const struct command_setting *now = &t->items[i];
		if (now->layer != LAYER_PROJECT)
			continue;
		const struct command_setting *was = command_find(&c->before->commands, now->name);
		enum command_kind was_kind = was ? was->kind : COMMAND_RAW;
		bool other_script = now->kind == COMMAND_SCRIPT && was_kind == COMMAND_SCRIPT &&
				    strcmp(now->script, was->script ? was->script : "");
		if (command_rank(now->kind) >= command_rank(was_kind) && !other_script)
			continue;
		loosens(c, now->origin, "\"commands\" \"%s\": %s replaces %s (by %s)", now->name,
			now->kind == COMMAND_SCRIPT ? now->script : command_kind_name(now->kind),
			was_kind == COMMAND_SCRIPT ? was->script : command_kind_name(was_kind),
			was ? decided_by(was->layer, was->origin) : "the default");
	}
}

/* Would the environment rules of cfg drop this variable? */
static bool env_drops(const struct config *cfg, const char *name)
{
	struct env_rules rules = {
	    .filter_secrets = cfg->env_filter_secrets.value,
	    .allow = &cfg->env_allow,
	    .block = &cfg->env_block,
	    .set = NULL,
	};
	_cleanup_free_ char *entry = xasprintf("%s=x", name);
	char *envp[] = {entry, NULL};
	struct env_result result = {0};
	env_filter(&rules, envp, &result);
	bool dropped = result.dropped.len > 0;
	env_result_release(&result);
	return dropped;
}

/* The variables that choose git's config files: the @git guard records
 * their values at the start of the run and refuses a git command that
 * changes them, so one the project config sets becomes the guard's
 * baseline, and a config it points at can switch the hooks off. */
static bool chooses_git_config(const char *name)
{
	for (const char *const *n = git_guard_config_env; *n; n++)
		if (!strcmp(*n, name))
			return true;
	return false;
}

/* Whether an entry after the i-th sets the same variable (--env comes
 * after env.set and wins). */
static bool set_later(const struct strv *set, size_t i, const char *name)
{
	size_t len = strlen(name);
	for (size_t j = i + 1; j < set->len; j++)
		if (!strncmp(set->items[j], name, len) && set->items[j][len] == '=')
			return true;
	return false;
}

/* The environment: filtering on < off; a variable dropped < passed or set.
 * A glob could match a secret's name that appears only later, so any glob
 * allowed counts; a plain name only when the rules without the project
 * drop it. */
static void compare_env(struct comparison *c)
{
	const struct config *b = c->before, *a = c->after;
	const struct config_origins *o = &a->origins;
	if (a->env_filter_secrets.layer == LAYER_PROJECT && !a->env_filter_secrets.value &&
	    b->env_filter_secrets.value)
		loosens(c, a->env_filter_secrets.origin,
			"\"filter-secrets\": false passes variables that look like secrets");
	for (size_t i = 0; i < a->env_allow.len; i++) {
		const char *name = a->env_allow.items[i];
		if (!from_project(c, &o->env_allow, i) || name[0] == '!')
			continue;
		/* The variable it passes is the unescaped name, as for a
		 * secret file name. */
		_cleanup_free_ char *plain = pattern_unescape(name);
		if (has_glob(name) || env_drops(b, plain))
			loosens(c, o->env_allow.items[i],
				"\"env.allow\": \"%s\" passes %s, which is filtered otherwise",
				name, has_glob(name) ? "variables" : "a variable");
	}
	for (size_t i = 0; i < a->env_block.len; i++)
		if (from_project(c, &o->env_block, i) && a->env_block.items[i][0] == '!')
			loosens(c, o->env_block.items[i],
				"\"env.block\": \"%s\" lifts a block of the global config",
				a->env_block.items[i]);
	for (size_t i = 0; i < a->env_set.len; i++) {
		if (!from_project(c, &o->env_set, i))
			continue;
		const char *entry = a->env_set.items[i];
		_cleanup_free_ char *name = xstrndup(entry, strcspn(entry, "="));
		if (env_drops(b, name))
			loosens(c, o->env_set.items[i],
				"\"env.set\": \"%s\" sets a variable that is filtered otherwise",
				name);
		else if (chooses_git_config(name) && !strv_contains(&b->env_set, entry) &&
			 !set_later(&a->env_set, i, name))
			loosens(c, o->env_set.items[i],
				"\"env.set\": \"%s\" chooses the config files git reads, which "
				"the @git guard takes as the sandbox's own",
				name);
	}
}

/* Secret files: masked < unmasked. Compared on the settings, not on two
 * scans: a pattern removed, a file name allowed that the scan without the
 * project masks (or a glob, which could match one written later), a
 * directory skipped. */
static void compare_secrets(struct comparison *c)
{
	const struct config *a = c->after;
	const struct config_origins *o = &a->origins;
	for (size_t i = 0; i < a->secret_patterns.len; i++) {
		const char *p = a->secret_patterns.items[i];
		if (from_project(c, &o->secret_patterns, i) && p[0] == '!')
			loosens(c, o->secret_patterns.items[i],
				"\"secrets.patterns\": \"%s\" stops masking files named %s", p,
				p + 1);
	}
	for (size_t i = 0; i < a->secret_allow.len; i++) {
		const char *p = a->secret_allow.items[i];
		if (!from_project(c, &o->secret_allow, i) || p[0] == '!')
			continue;
		/* Matched as a glob, "\\.env" is the name ".env": asked about
		 * its text, the side without the project would not mask it. A
		 * directory ("certs/") unmasks whatever it holds. */
		size_t len = strlen(p);
		_cleanup_free_ char *name = pattern_unescape(p + (p[0] == '/'));
		if (has_glob(p) || (len && p[len - 1] == '/') ||
		    secrets_would_mask(c->before, name))
			loosens(c, o->secret_allow.items[i],
				"\"secrets.allow\": \"%s\" unmasks secret files", p);
	}
	for (size_t i = 0; i < a->secret_skip.len; i++) {
		const char *p = a->secret_skip.items[i];
		if (from_project(c, &o->secret_skip, i) && p[0] != '!')
			loosens(c, o->secret_skip.items[i],
				"\"secrets.skip\": \"%s\" leaves secrets in such directories "
				"unmasked",
				p);
	}
}

/* Every entry of the plain lists is added with its origin
 * (config_list_add). A list out of step with its origins would blame the
 * wrong entry, or miss the project's: that is a bug to stop at, not a
 * verdict to give. */
static void check_origins(const struct config *cfg)
{
	const struct config_origins *o = &cfg->origins;
	if (cfg->presets.len != o->presets.len ||
	    cfg->secret_patterns.len != o->secret_patterns.len ||
	    cfg->secret_allow.len != o->secret_allow.len ||
	    cfg->secret_skip.len != o->secret_skip.len || cfg->env_allow.len != o->env_allow.len ||
	    cfg->env_block.len != o->env_block.len || cfg->env_set.len != o->env_set.len)
		abort();
}

void trust_compare(struct trust_check *tc, const struct trust_side *before,
		   const struct trust_side *after, const char *cwd, const char *home)
{
	check_origins(before->cfg);
	check_origins(after->cfg);
	struct comparison c = {
	    .tc = tc, .before = before->cfg, .after = after->cfg, .cwd = cwd, .home = home};
	compare_settings(&c);
	compare_limits(&c);
	compare_presets(&c);
	compare_rw_text(&c);
	if (before->policy && after->policy)
		compare_policies(&c, before->policy, after->policy);
	compare_network(&c);
	compare_commands(&c);
	compare_env(&c);
	compare_secrets(&c);
}
