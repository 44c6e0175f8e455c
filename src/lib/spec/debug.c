/* The --debug lines that describe a plan as it is made: each stage's
 * result, handed to the output handler (base/output.h) as soon as it is
 * known. Nothing here prints. */
#include "spec/debug.h"

#include <string.h>

#include "base/cleanup.h"
#include "base/output.h"
#include "base/strbuf.h"

void debug_policy_notes(const struct policy *policy)
{
	for (size_t i = 0; i < policy->skipped_len; i++) {
		const struct policy_note *n = &policy->skipped[i];
		output_debug("path: skipped %s %s (%s): %s", access_level_name(n->rule->level),
			     n->path, n->rule->origin, n->reason);
	}
	for (size_t i = 0; i < policy->overridden_len; i++) {
		const struct policy_note *n = &policy->overridden[i];
		output_debug("path: %s %s (%s) %s", access_level_name(n->rule->level), n->path,
			     n->rule->origin, n->reason);
	}
	for (size_t i = 0; i < policy->len; i++) {
		const struct access_entry *e = &policy->entries[i];
		output_debug("access: %-7s %s  <- %s (%s %s)%s", access_level_name(e->level),
			     e->path, e->rule->pattern, layer_name(e->rule->layer), e->rule->origin,
			     e->downgraded ? " made ro by read-only mode"
			     : e->kept_rw  ? " agent state: rw in read-only mode"
					   : "");
	}
}
static void add_quoted(struct strbuf *sb, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./=:,@%+") == strlen(s)) {
		strbuf_addstr(sb, s);
		return;
	}
	/* '"'"' rather than '\'' for a quote: the output handler doubles backslashes. */
	strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(sb, "'\"'\"'");
		else
			strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '\'');
}
void debug_bwrap_args(const struct strv *args)
{
	if (!output_debug_enabled())
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "bwrap");
	for (size_t i = 0; i < args->len; i++) {
		strbuf_addch(&sb, ' ');
		add_quoted(&sb, args->items[i]);
	}
	output_debug("%s", sb.buf);
}
void debug_secrets(const struct secrets *secrets)
{
	const struct secret_scan_result *f = &secrets->found;
	if (secrets->skipped_root) {
		output_debug("secrets: not scanned: the working directory is /");
		return;
	}
	output_debug("secrets: scanned %zu files in %zu directories in %.1f ms (%zu unreadable "
		     "directories skipped); %zu masked",
		     f->files, f->dirs, secrets->scan_ms, f->unreadable, f->len);
	if (secrets->cache_path && secrets->cache_unused)
		output_debug("secrets: scan cache not used (%s): every directory was read",
			     secrets->cache_unused);
	else if (secrets->cache_path)
		output_debug(
		    "secrets: scan cache: %zu of %zu directories unchanged, not read again",
		    f->cached_dirs, f->dirs);
	for (size_t i = 0; i < f->len; i++)
		output_debug("secrets: masked %s%s (pattern \"%s\")", f->items[i].path,
			     f->items[i].is_dir ? "/ (directory)" : "", f->items[i].pattern);
}
void debug_env(const struct env_result *env)
{
	for (size_t i = 0; i < env->dropped.len; i++)
		output_debug("env: dropped %s: %s", env->dropped.items[i], env->reasons.items[i]);
	for (size_t i = 0; i < env->set.len; i++)
		output_debug("env: set %s", env->set.items[i]);
	output_debug("env: %zu variables passed on, %zu dropped", env->envp.len, env->dropped.len);
}
void debug_wrappers(const struct command_table *commands, const struct wrapper_plan *p)
{
	if (!output_debug_enabled())
		return;
	if (p->inherited) {
		output_debug("wrappers: %s", WRAPPERS_INHERITED_NOTE);
		for (size_t i = 0; i < commands->len; i++)
			if (commands->items[i].layer != LAYER_BUILTIN &&
			    commands->items[i].kind == COMMAND_RAW)
				output_debug("wrappers: %s: %s (%s) not applied: a nested run "
					     "cannot unwrap a command",
					     commands->items[i].name,
					     command_kind_name(commands->items[i].kind),
					     commands->items[i].origin);
	}
	for (size_t i = 0; i < p->len; i++) {
		const struct wrapper *w = &p->items[i];
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		wrapper_describe(&sb, w);
		output_debug("wrappers: %s", sb.buf);
		for (size_t k = 0; k < w->skipped.len; k++)
			output_debug("wrappers: %s: skipped %s", w->setting->name,
				     w->skipped.items[k]);
	}
}
void debug_guard(const struct guard_plan *plan)
{
	output_debug("guard: %zu protected path%s that do%s not exist", plan->len,
		     plan->len == 1 ? "" : "s", plan->len == 1 ? "es" : "");
	for (size_t i = 0; i < plan->len; i++) {
		const struct guard_target *t = &plan->targets[i];
		output_debug("guard: %s  %s %s (%s)", t->display, access_level_name(t->rule->level),
			     t->rule->pattern, t->rule->origin);
	}
}
