/* This file decides which git invocations the @git preset refuses. It
 * reads git's global options to find the subcommand wherever it sits, then
 * reads the subcommand's options the way git's parse-options does (clusters
 * of short flags, attached and separate values, unique prefixes of long
 * options, "--" ending the options), and judges the config settings git
 * would take from its arguments and environment. It never runs anything:
 * the launcher acts on its answer. When unsure it refuses: a refused git command is a
 * message, a wrongly allowed one can lose work. */
#include "inside/git_guard.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "base/xalloc.h"

/* What a subcommand's arguments say, option by option. */
struct scan {
	bool shorts[128];	 /* short flags seen */
	struct strv longs;	 /* long options seen, without "--" and "=value" */
	struct strv positionals; /* arguments before "--" that are not options */
	struct strv operands;	 /* every argument that is not an option, "--" or not */
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
			strv_push(&s->operands, a);
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
	strv_release(&s->operands);
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

/* --merge keeps unstaged changes but resets staged ones (where the working
 * tree matches the index) to the target: it discards them too. */
static void judge_reset(const struct scan *s, struct git_decision *d)
{
	static const char keep[] = "use \"git stash\" first, or \"git reset --soft\" / \"git "
				   "reset --mixed\" to move the branch and keep the changes";
	if (has_long(s, "hard", 2))
		block(d, "reset --hard", discards, keep);
	else if (has_long(s, "merge", 2))
		block(d, "reset --merge", discards, keep);
}

/* Without -f, -i or -n git refuses to clean unless clean.requireForce is
 * off, and that can come from any config file, one the guard cannot read
 * included: so only the dry run passes. */
static void judge_clean(const struct scan *s, struct git_decision *d)
{
	static const char dry_run_first[] = "run \"git clean -n\" to see what it would remove, "
					    "then delete files explicitly";
	if (has_short(s, 'f') || has_long(s, "force", 1) || has_short(s, 'i') ||
	    has_long(s, "interactive", 1))
		block(d, "clean -f", "it deletes untracked files for good", dry_run_first);
	else if (!has_short(s, 'n') && !has_long(s, "dry-run", 1))
		block(d, "clean",
		      "it deletes untracked files for good when clean.requireForce is off",
		      dry_run_first);
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
	/* A forced rename or copy onto an existing branch deletes that
	 * branch, reflog and all. */
	bool move = has_short(s, 'm') || has_long(s, "move", 2);
	bool copy = has_short(s, 'c') || has_long(s, "copy", 3);
	if (has_short(s, 'D') || (delete &&force))
		block(d, "branch -D", "it deletes a branch even when its commits are not merged",
		      "use \"git branch -d\", which refuses to delete unmerged work");
	else if (has_short(s, 'M') || has_short(s, 'C') || ((move || copy) && force))
		block(d, "branch -M", "it overwrites an existing branch and loses its commits",
		      "use \"git branch -m\" or \"git branch -c\", which refuse to overwrite a "
		      "branch");
}

/* Without --force, "worktree remove" refuses a worktree with changes. */
static void judge_worktree(const struct scan *s, struct git_decision *d)
{
	if (s->positionals.len && !strcmp(s->positionals.items[0], "remove") &&
	    (has_short(s, 'f') || has_long(s, "force", 1)))
		block(d, "worktree remove --force", discards,
		      "commit or \"git stash\" the worktree's changes, then \"git worktree "
		      "remove\"");
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

/* A new value of all zeros deletes the ref as -d does. --stdin could carry
 * "delete" lines, and reading them here would take them from git. */
static void judge_update_ref(const struct scan *s, struct git_decision *d)
{
	bool zero_new = false;
	if (s->operands.len >= 2) {
		const char *new_value = s->operands.items[1];
		size_t len = strlen(new_value);
		zero_new = len >= 40 && strspn(new_value, "0") == len;
	}
	if (has_short(s, 'd') || has_long(s, "delete", 1) || zero_new)
		block(d, "update-ref -d",
		      "it deletes a ref, and with it the commits only that ref reaches",
		      "use \"git branch -d\", which refuses to delete unmerged work");
	else if (has_long(s, "stdin", 1))
		block(d, "update-ref --stdin",
		      "it can delete refs, and the guard cannot see the lines it reads",
		      "update one ref per command: \"git update-ref <ref> <new> [<old>]\"");
}

/* -m -u is git's careful merge: it refuses to overwrite changes. --reset
 * drops them (with -u it is "reset --hard"), and -u with
 * --exclude-per-directory overwrites ignored files such as .env. */
static void judge_read_tree(const struct scan *s, struct git_decision *d)
{
	if (has_long(s, "reset", 3))
		block(d, "read-tree --reset", discards,
		      "use \"git stash\" first; \"git read-tree -m -u\" refuses to overwrite "
		      "changes");
	else if (has_short(s, 'u') && has_long(s, "exclude-per-directory", 2))
		block(d, "read-tree -u --exclude-per-directory", "it overwrites ignored files",
		      "leave out --exclude-per-directory; git then refuses to overwrite them");
}

static void judge_checkout_index(const struct scan *s, struct git_decision *d)
{
	if (has_short(s, 'f') || has_long(s, "force", 1))
		block(d, "checkout-index -f", discards,
		      "commit or \"git stash\" the changes first; without -f checkout-index "
		      "leaves existing files alone");
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
static const char *const read_tree_longs_with_value[] = {"index-output", "prefix",
							 "exclude-per-directory", NULL};
static const char *const checkout_index_longs_with_value[] = {"prefix", "stage", NULL};
static const char *const worktree_longs_with_value[] = {"reason", "expire", NULL};

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
    {"update-ref", {"m", NULL, no_longs_with_value}, judge_update_ref},
    {"read-tree", {NULL, NULL, read_tree_longs_with_value}, judge_read_tree},
    {"checkout-index", {NULL, NULL, checkout_index_longs_with_value}, judge_checkout_index},
    {"worktree", {"bB", NULL, worktree_longs_with_value}, judge_worktree},
};

static void judge_no_verify_merge(const struct scan *s, struct git_decision *d)
{
	judge_no_verify("merge", s, d);
}

static const struct subcommand_rule merge_rule = {
    "merge", {"msXF", NULL, no_longs_with_value}, judge_no_verify_merge};

/* Read-only queries: they run no hooks and change neither the working
 * tree nor refs, so the hooks being off, or git reading a config of the
 * agent's making, cannot let anything past them. Agents switch hooks and
 * fsmonitor off for exactly these ("git -c core.hooksPath=/dev/null ...
 * ls-files"). All are built in, so no alias can take their names. */
static const char *const queries[] = {"annotate",
				      "blame",
				      "cat-file",
				      "check-attr",
				      "check-ignore",
				      "check-ref-format",
				      "count-objects",
				      "describe",
				      "diff",
				      "diff-files",
				      "diff-index",
				      "diff-tree",
				      "for-each-ref",
				      "grep",
				      "help",
				      "log",
				      "ls-files",
				      "ls-remote",
				      "ls-tree",
				      "merge-base",
				      "name-rev",
				      "rev-list",
				      "rev-parse",
				      "shortlog",
				      "show",
				      "show-ref",
				      "status",
				      "var",
				      "version",
				      "whatchanged",
				      NULL};

static const char *const config_longs_with_value[] = {"file",	 "blob",  "type", "default",
						      "comment", "value", "url",  NULL};
static const char *const tag_longs_with_value[] = {
    "contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format", NULL};

/* "git config" reads with --get*, --list / -l, or the "get" and "list"
 * verbs; everything else may write. */
static bool config_reads(const struct scan *s)
{
	for (size_t i = 0; i < s->longs.len; i++)
		if (!strncmp(s->longs.items[i], "get", 3))
			return true;
	return has_short(s, 'l') || has_long(s, "list", 2) ||
	       (s->positionals.len && (!strcmp(s->positionals.items[0], "get") ||
				       !strcmp(s->positionals.items[0], "list")));
}

/* Only these options, spelled out (an abbreviation is not recognised,
 * which can only refuse too much). */
static bool only_options(const struct scan *s, const char *shorts, const char *const *longs)
{
	for (int c = 1; c < 128; c++)
		if (s->shorts[c] && !strchr(shorts, c))
			return false;
	for (size_t i = 0; i < s->longs.len; i++)
		if (!in_list(longs, s->longs.items[i]))
			return false;
	return true;
}

/* "git branch" and "git tag" list with listing options only, and either
 * no name (a name creates one) or -l / --list (the names are patterns). */
static bool lists_only(const struct scan *s, const char *shorts, const char *const *longs)
{
	bool list = has_short(s, 'l') || strv_contains(&s->longs, "list");
	return only_options(s, shorts, longs) && (list || (!s->positionals.len && !s->dashdash));
}

static bool branch_reads(const struct scan *s)
{
	static const char *const longs[] = {
	    "show-current", "list",	  "all",       "remotes",   "verbose", "contains",
	    "no-contains",  "merged",	  "no-merged", "points-at", "format",  "sort",
	    "column",	    "no-column",  "color",     "no-color",  "abbrev",  "no-abbrev",
	    "ignore-case",  "omit-empty", NULL};
	return lists_only(s, "alrv", longs);
}

static bool tag_reads(const struct scan *s)
{
	static const char *const longs[] = {
	    "list",   "contains", "no-contains", "merged", "no-merged",	  "points-at",	"sort",
	    "format", "column",	  "no-column",	 "color",  "ignore-case", "omit-empty", NULL};
	return lists_only(s, "ln", longs);
}

/* One name reads the ref; a second sets it, -d deletes it. */
static bool symbolic_ref_reads(const struct scan *s)
{
	static const char *const longs[] = {"quiet", "short", "recurse", "no-recurse", NULL};
	return only_options(s, "q", longs) && s->operands.len == 1;
}

static const struct query_rule {
	const char *name;
	struct option_shape shape;
	bool (*reads)(const struct scan *s);
} query_rules[] = {
    {"config", {"f", NULL, config_longs_with_value}, config_reads},
    {"branch", {"u", NULL, branch_longs_with_value}, branch_reads},
    {"tag", {"mFu", "n", tag_longs_with_value}, tag_reads},
    {"symbolic-ref", {"m", NULL, no_longs_with_value}, symbolic_ref_reads},
};

/* Commands whose first argument says whether they read: "git stash list",
 * "git worktree list", "git remote get-url". A verb after options is not
 * looked for. */
static const struct query_verbs {
	const char *name;
	bool alone;		  /* the command without arguments reads */
	const char *const *verbs; /* first arguments that read */
} query_verbs[] = {
    {"stash", false, (const char *const[]){"list", "show", NULL}},
    {"worktree", false, (const char *const[]){"list", NULL}},
    {"remote", true, (const char *const[]){"get-url", "show", NULL}},
    {"reflog", true, (const char *const[]){"show", "exists", NULL}},
};

/* No subcommand (usage, --help, --version) runs nothing either. */
static bool is_query(const char *sub, int argc, char *const *argv)
{
	if (!sub || in_list(queries, sub))
		return true;
	/* "git remote -v" lists, but "-v" also goes before "add". */
	if (!strcmp(sub, "remote") && argc == 1 &&
	    (!strcmp(argv[0], "-v") || !strcmp(argv[0], "--verbose")))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(query_verbs); i++) {
		const struct query_verbs *q = &query_verbs[i];
		if (!strcmp(q->name, sub))
			return argc ? in_list(q->verbs, argv[0]) : q->alone;
	}
	for (size_t i = 0; i < ARRAY_SIZE(query_rules); i++) {
		const struct query_rule *q = &query_rules[i];
		if (strcmp(q->name, sub))
			continue;
		struct scan s = {
		    .longs = STRV_INIT, .positionals = STRV_INIT, .operands = STRV_INIT};
		scan_args(argc, argv, &q->shape, &s);
		bool reads = q->reads(&s);
		scan_release(&s);
		return reads;
	}
	return false;
}

/* Settings that git takes from -c, --config-env and the environment. */
struct config_rule {
	const char *form;
	const char *reason;
	const char *alternative;
};

static const struct config_rule hooks_path_rule = {
    "-c core.hooksPath=...", "it replaces or switches off the repository's hooks",
    "drop the setting (\"-c core.hooksPath=/dev/null\" is allowed for read-only queries "
    "such as status, diff, log and ls-files)"};
static const struct config_rule fsmonitor_rule = {
    "-c core.fsmonitor=...", "it runs another program whenever git looks at the working tree",
    "drop the setting, or switch it off with \"-c core.fsmonitor=false\""};
static const struct config_rule alias_rule = {"-c alias.*=...",
					      "it defines an alias that could hide a refused form",
					      "run the command the alias stands for"};
static const struct config_rule include_rule = {
    "-c include.path=...",
    "it makes git read another config file, which can switch the hooks off or define aliases",
    "drop the setting; git reads the repository's and your git config already"};
static const struct config_rule include_if_rule = {
    "-c includeIf.*.path=...",
    "it makes git read another config file, which can switch the hooks off or define aliases",
    "drop the setting; git reads the repository's and your git config already"};
static const struct config_rule require_force_rule = {
    "-c clean.requireForce=false", "it lets \"git clean\" delete untracked files without -f",
    "drop the setting; run \"git clean -n\" to see what it would remove, then delete files "
    "explicitly"};
static const struct config_rule unreadable_parameters_rule = {
    "GIT_CONFIG_PARAMETERS=...", "the guard cannot read it, so it cannot tell what git would do",
    "unset GIT_CONFIG_PARAMETERS and pass the settings with -c"};

struct config_verdict {
	const struct config_rule *refused; /* the first refused setting, or NULL */
	bool hooks_off;			   /* core.hooksPath=/dev/null: queries only */
};

/* git's spellings of false for a boolean: empty, false, no, off, 0. */
static bool spells_false(const char *value)
{
	return value && (!*value || !strcasecmp(value, "false") || !strcasecmp(value, "no") ||
			 !strcasecmp(value, "off") || !strcmp(value, "0"));
}

/* A key alone ("-c clean.requireForce") means true. Anything not plainly
 * true counts as false: git also reads "0x0" or "0k" as false. */
static bool spells_true(const char *value)
{
	return !value || !strcasecmp(value, "true") || !strcasecmp(value, "yes") ||
	       !strcasecmp(value, "on") || !strcmp(value, "1");
}

static bool word_is(const char *s, size_t len, const char *word)
{
	return len == strlen(word) && !strncasecmp(s, word, len);
}

/* Judges one setting; value is NULL for a key alone. Section and variable
 * name are matched without case, as git does, and whatever subsection
 * stands between them; the key is trimmed, as git trims the keys of
 * old-style GIT_CONFIG_PARAMETERS entries. */
static void judge_setting(const char *key, size_t key_len, const char *value,
			  struct config_verdict *v)
{
	while (key_len && isspace((unsigned char)key[0]))
		key++, key_len--;
	while (key_len && isspace((unsigned char)key[key_len - 1]))
		key_len--;
	const char *first_dot = memchr(key, '.', key_len);
	if (!first_dot)
		return; /* git refuses a key without a section */
	const char *last_dot = memrchr(key, '.', key_len);
	size_t section_len = (size_t)(first_dot - key);
	const char *name = last_dot + 1;
	size_t name_len = key_len - (size_t)(name - key);
	const struct config_rule *refused = NULL;
	if (word_is(key, section_len, "include"))
		refused = &include_rule;
	else if (word_is(key, section_len, "includeIf"))
		refused = &include_if_rule;
	else if (word_is(key, section_len, "alias"))
		refused = &alias_rule;
	else if (word_is(key, section_len, "core") && word_is(name, name_len, "hooksPath")) {
		if (value && !strcmp(value, "/dev/null"))
			v->hooks_off = true;
		else
			refused = &hooks_path_rule;
	} else if (word_is(key, section_len, "core") && word_is(name, name_len, "fsmonitor")) {
		if (!spells_false(value))
			refused = &fsmonitor_rule;
	} else if (word_is(key, section_len, "clean") && word_is(name, name_len, "requireForce")) {
		if (!spells_true(value))
			refused = &require_force_rule;
	}
	if (refused && !v->refused)
		v->refused = refused;
}

/* "-c key=value": the key ends at the first "=". */
static void judge_dash_c(const char *text, struct config_verdict *v)
{
	const char *eq = strchr(text, '=');
	judge_setting(text, eq ? (size_t)(eq - text) : strlen(text), eq ? eq + 1 : NULL, v);
}

/* "--config-env=key=VAR": the key ends at the last "=", and the value is
 * VAR's (git stops when VAR is unset; judged as a key alone). */
static void judge_config_env(const char *spec, char *const *envp, struct config_verdict *v)
{
	const char *eq = strrchr(spec, '=');
	if (!eq)
		return; /* git refuses it */
	judge_setting(spec, (size_t)(eq - spec), env_get(envp, eq + 1), v);
}

/* One single-quoted word of GIT_CONFIG_PARAMETERS, the way git's
 * sq_dequote_step reads it: quoted parts joined by \' or \!. Dequotes in
 * place; *next is what follows the word, or NULL at the end. NULL when the
 * quoting is bad. */
static char *dequote_word(char *arg, char **next)
{
	char *dst = arg, *src = arg;
	if (*src != '\'')
		return NULL;
	for (;;) {
		char c = *++src;
		if (!c)
			return NULL;
		if (c != '\'') {
			*dst++ = c;
			continue;
		}
		if (src[1] == '\\' && (src[2] == '\'' || src[2] == '!') && src[3] == '\'') {
			*dst++ = src[2];
			src += 3;
			continue;
		}
		*dst = '\0';
		*next = src[1] ? src + 1 : NULL;
		return arg;
	}
}

/* GIT_CONFIG_PARAMETERS holds 'key'='value' or old-style 'key=value'
 * words (git puts its -c settings there for the git commands it runs).
 * False when it is malformed: git stops then, and the guard refuses
 * rather than guess. */
static bool judge_parameters(const char *text, struct config_verdict *v)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *cur = copy;
	while (cur && *cur) {
		char *key = dequote_word(cur, &cur);
		if (!key)
			return false;
		if (!cur || isspace((unsigned char)*cur)) {
			judge_dash_c(key, v);
		} else if (*cur == '=') {
			cur++;
			const char *value = NULL;
			if (*cur == '\'') {
				value = dequote_word(cur, &cur);
				if (!value || (cur && !isspace((unsigned char)*cur)))
					return false;
			} else if (*cur && !isspace((unsigned char)*cur)) {
				return false;
			} else if (!*cur) {
				cur = NULL;
			}
			judge_setting(key, strlen(key), value, v);
		} else {
			return false;
		}
		while (cur && isspace((unsigned char)*cur))
			cur++;
	}
	return true;
}

/* git also reads settings from GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>
 * (every n is judged, whatever GIT_CONFIG_COUNT says) and
 * GIT_CONFIG_PARAMETERS. */
static void judge_environment(char *const *envp, struct config_verdict *v)
{
	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		if (!strncmp(*e, "GIT_CONFIG_KEY_", 15)) {
			_cleanup_free_ char *value_name =
			    xasprintf("GIT_CONFIG_VALUE_%.*s", (int)(eq - *e - 15), *e + 15);
			judge_setting(eq + 1, strlen(eq + 1), env_get(envp, value_name), v);
		} else if (!strncmp(*e, "GIT_CONFIG_PARAMETERS=", 22) &&
			   !judge_parameters(eq + 1, v) && !v->refused) {
			v->refused = &unreadable_parameters_rule;
		}
	}
}

const char *const git_guard_config_env[] = {"HOME",
					    "XDG_CONFIG_HOME",
					    "GIT_CONFIG_GLOBAL",
					    "GIT_CONFIG_SYSTEM",
					    "GIT_CONFIG_NOSYSTEM",
					    "GIT_CONFIG",
					    NULL};

/* The first variable that chooses git's config files and differs from the
 * sandbox's start, set or unset; NULL when none does. */
static const char *changed_config_env(char *const *envp, char *const *start_env)
{
	for (const char *const *name = git_guard_config_env; *name; name++) {
		const char *now = env_get(envp, *name);
		const char *then = env_get(start_env, *name);
		if (!now != !then || (now && strcmp(now, then)))
			return *name;
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

static void value_option(struct git_decision *d, const char *name, const char *value,
			 char *const *envp, struct config_verdict *v)
{
	if (!strcmp(name, "--git-dir"))
		d->git_dir = value;
	else if (!strcmp(name, "--work-tree"))
		d->work_tree = value;
	else if (!strcmp(name, "--config-env"))
		judge_config_env(value, envp, v);
}

/* Where reading git's own options stopped. */
enum global_end {
	AT_SUBCOMMAND,
	NO_SUBCOMMAND, /* none, --help, --version, or a missing value */
	AT_UNKNOWN_OPTION,
};

static enum global_end read_global_options(int argc, char *const *argv, char *const *envp,
					   struct git_decision *d, struct config_verdict *v,
					   int *end)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		*end = i;
		if (a[0] != '-')
			return AT_SUBCOMMAND;
		/* git runs "help" or "version" for these, whatever follows. */
		if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--version") ||
		    !strcmp(a, "-v"))
			return NO_SUBCOMMAND;
		if (!strcmp(a, "-C") || !strcmp(a, "-c")) {
			if (i + 1 >= argc)
				return NO_SUBCOMMAND; /* git reports the missing value */
			const char *value = argv[++i];
			if (a[1] == 'C')
				strv_push(&d->chdirs, value);
			else
				judge_dash_c(value, v);
			continue;
		}
		if (in_list(global_flags, a))
			continue;
		const char *eq = strchr(a, '=');
		_cleanup_free_ char *name = eq ? xstrndup(a, (size_t)(eq - a)) : xstrdup(a);
		if (in_list(global_with_value, name)) {
			if (eq) {
				value_option(d, name, eq + 1, envp, v);
			} else if (strcmp(name, "--exec-path") != 0) {
				if (i + 1 >= argc)
					return NO_SUBCOMMAND;
				value_option(d, name, argv[++i], envp, v);
			}
			continue;
		}
		return AT_UNKNOWN_OPTION;
	}
	return NO_SUBCOMMAND;
}

static void block_rule(struct git_decision *d, const struct config_rule *r)
{
	block(d, r->form, r->reason, r->alternative);
}

void git_guard_classify(int argc, char *const *argv, char *const *envp, char *const *start_env,
			struct git_decision *d)
{
	*d = (struct git_decision){.chdirs = STRV_INIT};
	struct config_verdict verdict = {0};
	judge_environment(envp, &verdict);
	int i = 0;
	enum global_end end = read_global_options(argc, argv, envp, d, &verdict, &i);
	if (verdict.refused) {
		block_rule(d, verdict.refused);
		return;
	}
	if (end == AT_UNKNOWN_OPTION) {
		_cleanup_free_ char *form = xasprintf("%s", argv[i]);
		block(
		    d, form,
		    "it is a git option the guard does not know, so it cannot tell what would run",
		    "leave the option out, or put it after the subcommand");
		return;
	}
	if (end == NO_SUBCOMMAND)
		return;

	d->subcommand = argv[i];
	int sub_argc = argc - i - 1;
	char *const *sub_argv = argv + i + 1;
	/* "git <cmd> --help" shows the manual, and "-h" alone the usage. */
	if (sub_argc >= 1 &&
	    (!strcmp(sub_argv[0], "--help") || (sub_argc == 1 && !strcmp(sub_argv[0], "-h"))))
		return;

	bool query = is_query(d->subcommand, sub_argc, sub_argv);
	if (verdict.hooks_off && !query) {
		block_rule(d, &hooks_path_rule);
		return;
	}
	const char *changed = changed_config_env(envp, start_env);
	if (changed && !query) {
		_cleanup_free_ char *form = xasprintf("%s with %s changed", d->subcommand, changed);
		block(
		    d, form,
		    "git would read a config other than the sandbox's, which can switch the hooks "
		    "off or hide a refused form behind an alias",
		    "run it with the environment the sandbox started with (read-only queries "
		    "such as status, diff and log are allowed)");
		return;
	}

	const struct subcommand_rule *rule = NULL;
	for (size_t r = 0; r < ARRAY_SIZE(rules); r++)
		if (!strcmp(rules[r].name, d->subcommand))
			rule = &rules[r];
	if (!strcmp(merge_rule.name, d->subcommand))
		rule = &merge_rule;
	if (!rule)
		return;
	struct scan s = {.longs = STRV_INIT, .positionals = STRV_INIT, .operands = STRV_INIT};
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
