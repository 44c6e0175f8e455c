/* This file decides which git invocations the @git preset refuses. It
 * reads git's global options to find the subcommand wherever it sits, then
 * reads the subcommand's options the way git's parse-options does (clusters
 * of short flags, attached and separate values, unique prefixes of long
 * options, "--" ending the options). It never runs anything: the launcher
 * acts on its answer. When unsure it refuses: a refused git command is a
 * message, a wrongly allowed one can lose work. */
#include "git_guard.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cleanup.h"
#include "xalloc.h"

/* What a subcommand's arguments say, option by option. */
struct scan {
	bool shorts[128];	 /* short flags seen */
	struct strv longs;	 /* long options seen, without "--" and "=value" */
	struct strv positionals; /* arguments before "--" that are not options */
	bool dashdash;		 /* a "--" was seen */
};

/* How a subcommand's options take values. Only options that always take a
 * value are listed: treating a value as a positional can only refuse too
 * much, while swallowing a positional could let a "+refspec" through. */
struct option_shape {
	const char *shorts_with_value;		/* the rest of the cluster or the next argument */
	const char *shorts_with_optional_value; /* the rest of the cluster only */
	const char *const *longs_with_value;	/* "--x v" as well as "--x=v" */
};

static bool in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static void scan_args(int argc, char *const *argv, const struct option_shape *shape, struct scan *s)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (s->dashdash || a[0] != '-' || !a[1]) {
			if (!s->dashdash)
				strv_push(&s->positionals, a);
			continue;
		}
		if (!strcmp(a, "--")) {
			s->dashdash = true;
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			_cleanup_free_ char *name =
			    eq ? xstrndup(a + 2, (size_t)(eq - a - 2)) : xstrdup(a + 2);
			if (!eq && in_list(shape->longs_with_value, name))
				i++;
			strv_push(&s->longs, name);
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			unsigned char ch = (unsigned char)*c;
			if (ch < 128)
				s->shorts[ch] = true;
			if (shape->shorts_with_value && strchr(shape->shorts_with_value, *c)) {
				if (!c[1])
					i++;
				break;
			}
			if (shape->shorts_with_optional_value &&
			    strchr(shape->shorts_with_optional_value, *c))
				break;
		}
	}
}

/* True when a long option seen is `name` or an abbreviation of it at least
 * min_len characters long: git accepts unique prefixes ("--har"). */
static bool has_long(const struct scan *s, const char *name, size_t min_len)
{
	for (size_t i = 0; i < s->longs.len; i++) {
		const char *seen = s->longs.items[i];
		size_t len = strlen(seen);
		if (len >= min_len && len <= strlen(name) && !strncmp(seen, name, len))
			return true;
	}
	return false;
}

static bool has_short(const struct scan *s, char c)
{
	return s->shorts[(unsigned char)c];
}

static void scan_release(struct scan *s)
{
	strv_release(&s->longs);
	strv_release(&s->positionals);
}

static void block(struct git_decision *d, const char *form, const char *reason,
		  const char *alternative)
{
	d->blocked = true;
	d->form = xstrdup(form);
	d->reason = reason;
	d->alternative = alternative;
}

static const char discards[] = "it discards uncommitted changes";
static const char skips_hooks[] = "it skips the repository's hooks";

static void judge_checkout(const struct scan *s, struct git_decision *d)
{
	/* Creating a branch is the one form we can tell apart from discarding
	 * files without looking at the repository: with -b/-B/--orphan the
	 * only positional is a start point, never a path. */
	static const char allowed_shorts[] = "bBqtl";
	bool creates = has_short(s, 'b') || has_short(s, 'B') || has_long(s, "orphan", 2);
	bool other_option = false;
	for (int c = 0; c < 128; c++)
		if (s->shorts[c] && !strchr(allowed_shorts, c))
			other_option = true;
	static const char *const allowed_longs[] = {"orphan",	"quiet",       "track",
						    "no-track", "guess",       "no-guess",
						    "progress", "no-progress", NULL};
	for (size_t i = 0; i < s->longs.len; i++)
		if (!in_list(allowed_longs, s->longs.items[i]))
			other_option = true;
	if (creates && !other_option && !s->dashdash && s->positionals.len <= 1)
		return;
	block(d, "checkout", "it can discard uncommitted changes (checkout of paths, or --force)",
	      "use \"git switch <branch>\" to change branches, \"git switch -c <new>\" to create "
	      "one, and \"git stash\" to set changes aside");
}

static void judge_switch(const struct scan *s, struct git_decision *d)
{
	if (has_short(s, 'f') || has_long(s, "force", 2) || has_long(s, "discard-changes", 1))
		block(d, "switch --discard-changes", discards,
		      "commit or \"git stash\" the changes first, then switch");
}

static void judge_restore(const struct scan *s, struct git_decision *d)
{
	/* --staged alone only touches the index: the working tree keeps its
	 * changes. */
	bool staged = has_short(s, 'S') || has_long(s, "staged", 2);
	bool worktree = has_short(s, 'W') || has_long(s, "worktree", 1);
	if (staged && !worktree)
		return;
	block(d, "restore", discards,
	      "use \"git stash\" to set changes aside (\"git restore --staged\" to unstage is "
	      "allowed)");
}

static void judge_reset(const struct scan *s, struct git_decision *d)
{
	if (has_long(s, "hard", 2))
		block(d, "reset --hard", discards,
		      "use \"git stash\" first, or \"git reset --soft\" / \"git reset --mixed\" to "
		      "move the branch and keep the changes");
}

static void judge_clean(const struct scan *s, struct git_decision *d)
{
	if (has_short(s, 'f') || has_long(s, "force", 1) || has_short(s, 'i') ||
	    has_long(s, "interactive", 1))
		block(d, "clean -f", "it deletes untracked files for good",
		      "run \"git clean -n\" to see what it would remove, then delete files "
		      "explicitly");
}

static void judge_commit(const struct scan *s, struct git_decision *d)
{
	if (has_short(s, 'n') || has_long(s, "no-verify", 4))
		block(d, "commit --no-verify", skips_hooks,
		      "commit without --no-verify and fix what the hooks report");
}

static void judge_no_verify(const char *sub, const struct scan *s, struct git_decision *d)
{
	if (has_long(s, "no-verify", 4)) {
		_cleanup_free_ char *form = xasprintf("%s --no-verify", sub);
		block(d, form, skips_hooks,
		      "run it without --no-verify and fix what the hooks report");
	}
}

static void judge_stash(const struct scan *s, struct git_decision *d)
{
	if (!s->positionals.len)
		return;
	const char *action = s->positionals.items[0];
	if (strcmp(action, "drop") && strcmp(action, "clear") && strcmp(action, "pop"))
		return;
	_cleanup_free_ char *form = xasprintf("stash %s", action);
	block(d, form, "it deletes stashed changes",
	      "use \"git stash apply\", which keeps the stash (\"git stash list\" shows them)");
}

static void judge_branch(const struct scan *s, struct git_decision *d)
{
	bool force = has_short(s, 'f') || has_long(s, "force", 4);
	bool delete = has_short(s, 'd') || has_long(s, "delete", 3);
	if (has_short(s, 'D') || (delete &&force))
		block(d, "branch -D", "it deletes a branch even when its commits are not merged",
		      "use \"git branch -d\", which refuses to delete unmerged work");
}

static void judge_push(const struct scan *s, struct git_decision *d)
{
	bool refspec_force = false;
	/* A repository name never starts with "+", so every positional is
	 * checked, not only the refspecs after it. */
	for (size_t i = 0; i < s->positionals.len; i++)
		if (s->positionals.items[i][0] == '+')
			refspec_force = true;
	if (has_short(s, 'f') || has_long(s, "force", 1) || refspec_force)
		block(d, "push --force", "it can overwrite commits on the remote",
		      "use \"git push --force-with-lease\", which refuses to overwrite work you "
		      "have not seen");
	else if (has_long(s, "mirror", 1))
		block(d, "push --mirror", "it overwrites and deletes refs on the remote",
		      "push the branches you mean explicitly; \"git push --force-with-lease\" "
		      "where a rewrite is intended");
	else
		judge_no_verify("push", s, d);
}

static const char *const no_longs_with_value[] = {NULL};
static const char *const commit_longs_with_value[] = {
    "message", "file",	   "reuse-message", "reedit-message",	  "fixup", "squash", "author",
    "date",    "template", "trailer",	    "pathspec-from-file", NULL};
static const char *const push_longs_with_value[] = {"repo", "receive-pack", "exec", "push-option",
						    NULL};
static const char *const checkout_longs_with_value[] = {"orphan", "conflict", NULL};
static const char *const clean_longs_with_value[] = {"exclude", NULL};
static const char *const branch_longs_with_value[] = {
    "set-upstream-to", "contains", "no-contains", "merged", "no-merged",
    "points-at",       "sort",	   "format",	  NULL};
static const char *const switch_longs_with_value[] = {"create", "force-create", "orphan",
						      "conflict", NULL};
static const char *const restore_longs_with_value[] = {"source", "conflict", "pathspec-from-file",
						       NULL};
static const char *const stash_longs_with_value[] = {"message", "pathspec-from-file", NULL};

static const struct subcommand_rule {
	const char *name;
	struct option_shape shape;
	void (*judge)(const struct scan *s, struct git_decision *d);
} rules[] = {
    {"checkout", {"bB", NULL, checkout_longs_with_value}, judge_checkout},
    {"switch", {"cC", NULL, switch_longs_with_value}, judge_switch},
    {"restore", {"s", NULL, restore_longs_with_value}, judge_restore},
    {"reset", {NULL, NULL, no_longs_with_value}, judge_reset},
    {"clean", {"e", NULL, clean_longs_with_value}, judge_clean},
    {"commit", {"mFcCt", "Su", commit_longs_with_value}, judge_commit},
    {"stash", {"m", NULL, stash_longs_with_value}, judge_stash},
    {"branch", {"u", NULL, branch_longs_with_value}, judge_branch},
    {"push", {"o", NULL, push_longs_with_value}, judge_push},
};

static void judge_no_verify_merge(const struct scan *s, struct git_decision *d)
{
	judge_no_verify("merge", s, d);
}

static const struct subcommand_rule merge_rule = {
    "merge", {"msXF", NULL, no_longs_with_value}, judge_no_verify_merge};

/* Configuration that would switch the hooks off or run other programs in
 * their place, or define aliases that could hide any of the forms above. */
static const char *config_danger(const char *key_value)
{
	size_t key_len = strcspn(key_value, "=");
	if (key_len == strlen("core.hooksPath") &&
	    !strncasecmp(key_value, "core.hooksPath", key_len))
		return "core.hooksPath";
	if (key_len == strlen("core.fsmonitor") &&
	    !strncasecmp(key_value, "core.fsmonitor", key_len))
		return "core.fsmonitor";
	if (key_len > 6 && !strncasecmp(key_value, "alias.", 6))
		return "alias.*";
	return NULL;
}

static void block_config(struct git_decision *d, const char *key)
{
	_cleanup_free_ char *form = xasprintf("-c %s=...", key);
	block(d, form,
	      "it replaces the repository's hooks or runs another program, or defines an alias "
	      "that could hide a refused form",
	      "drop the setting; hooks and aliases come from the repository's and your git "
	      "config");
}

static bool strcasestr_bool(const char *haystack, const char *needle)
{
	return strcasestr(haystack, needle) != NULL;
}

/* git also reads -c settings from the environment. */
static const char *environment_config_danger(char *const *envp)
{
	for (char *const *e = envp; e && *e; e++) {
		const char *value = strchr(*e, '=');
		if (!value)
			continue;
		value++;
		if (!strncmp(*e, "GIT_CONFIG_KEY_", 15)) {
			_cleanup_free_ char *with_eq = xasprintf("%s=", value);
			const char *danger = config_danger(with_eq);
			if (danger)
				return danger;
		} else if (!strncmp(*e, "GIT_CONFIG_PARAMETERS=", 22)) {
			if (strcasestr_bool(value, "core.hooksPath"))
				return "core.hooksPath";
			if (strcasestr_bool(value, "core.fsmonitor"))
				return "core.fsmonitor";
			if (strcasestr_bool(value, "alias."))
				return "alias.*";
		}
	}
	return NULL;
}

/* git's own options, before the subcommand. */
static const char *const global_flags[] = {"-p",
					   "--paginate",
					   "-P",
					   "--no-pager",
					   "--bare",
					   "--no-replace-objects",
					   "--literal-pathspecs",
					   "--glob-pathspecs",
					   "--noglob-pathspecs",
					   "--icase-pathspecs",
					   "--no-optional-locks",
					   "--no-lazy-fetch",
					   "--no-advice",
					   "--html-path",
					   "--man-path",
					   "--info-path",
					   "--exec-path",
					   NULL};
static const char *const global_with_value[] = {
    "--git-dir",     "--work-tree", "--namespace",    "--super-prefix", "--config-env",
    "--attr-source", "--list-cmds", "--shallow-file", "--exec-path",	NULL};

static void value_option(struct git_decision *d, const char *name, const char *value)
{
	if (!strcmp(name, "--git-dir"))
		d->git_dir = value;
	else if (!strcmp(name, "--work-tree"))
		d->work_tree = value;
	else if (!strcmp(name, "--config-env")) {
		const char *danger = config_danger(value);
		if (danger && !d->blocked)
			block_config(d, danger);
	}
}

void git_guard_classify(int argc, char *const *argv, char *const *envp, struct git_decision *d)
{
	*d = (struct git_decision){.chdirs = STRV_INIT};
	const char *danger = environment_config_danger(envp);
	if (danger)
		block_config(d, danger);

	int i = 0;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-')
			break;
		/* git runs "help" or "version" for these, whatever follows. */
		if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--version") ||
		    !strcmp(a, "-v"))
			return;
		if (!strcmp(a, "-C") || !strcmp(a, "-c")) {
			if (i + 1 >= argc)
				return; /* git reports the missing value */
			const char *value = argv[++i];
			if (a[1] == 'C') {
				strv_push(&d->chdirs, value);
			} else {
				danger = config_danger(value);
				if (danger && !d->blocked)
					block_config(d, danger);
			}
			continue;
		}
		if (in_list(global_flags, a))
			continue;
		const char *eq = strchr(a, '=');
		_cleanup_free_ char *name = eq ? xstrndup(a, (size_t)(eq - a)) : xstrdup(a);
		if (in_list(global_with_value, name)) {
			if (eq) {
				value_option(d, name, eq + 1);
			} else if (strcmp(name, "--exec-path") != 0) {
				if (i + 1 >= argc)
					return;
				value_option(d, name, argv[++i]);
			}
			continue;
		}
		if (!d->blocked) {
			_cleanup_free_ char *form = xasprintf("%s", a);
			block(d, form,
			      "it is a git option the guard does not know, so it cannot tell "
			      "what would run",
			      "leave the option out, or put it after the subcommand");
		}
		return;
	}
	if (i >= argc || d->blocked)
		return;

	d->subcommand = argv[i];
	int sub_argc = argc - i - 1;
	char *const *sub_argv = argv + i + 1;
	/* "git <cmd> --help" shows the manual, and "-h" alone the usage. */
	if (sub_argc >= 1 &&
	    (!strcmp(sub_argv[0], "--help") || (sub_argc == 1 && !strcmp(sub_argv[0], "-h"))))
		return;

	const struct subcommand_rule *rule = NULL;
	for (size_t r = 0; r < ARRAY_SIZE(rules); r++)
		if (!strcmp(rules[r].name, d->subcommand))
			rule = &rules[r];
	if (!strcmp(merge_rule.name, d->subcommand))
		rule = &merge_rule;
	if (!rule)
		return;
	struct scan s = {.longs = STRV_INIT, .positionals = STRV_INIT};
	scan_args(sub_argc, sub_argv, &rule->shape, &s);
	rule->judge(&s, d);
	scan_release(&s);
}

void git_decision_release(struct git_decision *d)
{
	free(d->form);
	strv_release(&d->chdirs);
	d->form = NULL;
}
