/* This file decides access levels. It reads the filesystem only to expand
 * globs and resolve symlinks, and it never changes it.
 *
 * Specificity, when several rules name the same resolved path: an exact
 * path beats a glob; then the later layer wins (cli > project > global >
 * presets); then exclude beats ro beats rw. Between different paths the
 * deeper one wins inside its subtree, which the mount order (parents first)
 * enforces by itself. */
#include "policy/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "base/xalloc.h"

const struct base_mount policy_base_mounts[] = {
    {"/", BASE_HOST_ROOT, "host root, read-only"},   {"/dev", BASE_DEV, "fresh minimal /dev"},
    {"/proc", BASE_PROC, "the sandbox's own /proc"}, {"/tmp", BASE_TMPFS, "private, empty"},
    {"/run", BASE_TMPFS, "private, empty"},
};
const size_t policy_base_mounts_len = ARRAY_SIZE(policy_base_mounts);

struct candidate {
	char *path;
	const struct rule *rule;
	size_t order; /* rule index, for a stable result */
	bool glob;
	bool is_dir;
	struct file_id id;
	struct strv links; /* symlinks followed while resolving */
};

struct candidates {
	struct candidate *items;
	size_t len, alloc;
};

static void candidates_release(struct candidates *c)
{
	for (size_t i = 0; i < c->len; i++) {
		free(c->items[i].path);
		strv_release(&c->items[i].links);
	}
	free(c->items);
	*c = (struct candidates){0};
}
DEFINE_CLEANUP_FUNC(struct candidates, candidates_release)

static void add_note(struct policy_note **notes, size_t *len, const char *path,
		     const struct rule *rule, char *reason)
{
	*notes = xreallocarray(*notes, *len + 1, sizeof(**notes));
	(*notes)[(*len)++] = (struct policy_note){
	    .path = xstrdup(path),
	    .rule = rule,
	    .reason = reason,
	};
}

/* st is the resolved path's lstat, or NULL for a path that does not exist. */
static void add_candidate(struct candidates *c, char *path, const struct rule *rule, size_t order,
			  bool glob, const struct stat *st, struct strv *links)
{
	if (c->len == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 32;
		c->items = xreallocarray(c->items, c->alloc, sizeof(*c->items));
	}
	c->items[c->len++] = (struct candidate){
	    .path = path,
	    .rule = rule,
	    .order = order,
	    .glob = glob,
	    .is_dir = st && S_ISDIR(st->st_mode),
	    .links = *links,
	};
	if (st)
		file_id_from_stat(st, &c->items[c->len - 1].id);
	*links = (struct strv)STRV_INIT;
}

static int rule_error(struct error *err, const struct rule *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int rule_error(struct error *err, const struct rule *rule, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	return error_set(err, ERROR_DENIED, "%s rule \"%s\" (from %s): %s",
			 access_level_name(rule->level), rule->pattern, rule->origin, msg);
}

const struct base_mount *policy_base_for(const char *path)
{
	const struct base_mount *best = &policy_base_mounts[0];
	for (size_t i = 1; i < policy_base_mounts_len; i++)
		if (path_is_within(path, policy_base_mounts[i].path))
			best = &policy_base_mounts[i];
	return best;
}

bool policy_shows_host_path(const struct access_entry *covering, const char *path)
{
	if (covering && covering->level == ACCESS_EXCLUDE)
		return false;
	const struct base_mount *base = policy_base_for(path);
	return base->kind == BASE_HOST_ROOT ||
	       (covering && strlen(covering->path) >= strlen(base->path));
}

/* Expands one rule into candidates; records why nothing came of it. */
/* A glob in the last segment also covers names that appear later: record
 * where to look. Globs in earlier segments name directories that do not
 * exist yet only by pattern, and are not followed. */
static void add_glob_watch(struct policy *out, const char *abs, const struct rule *rule,
			   size_t order)
{
	const char *slash = strrchr(abs, '/');
	_cleanup_free_ char *dir_pattern = xstrndup(abs, (size_t)(slash - abs));
	if (!*dir_pattern || pattern_has_glob(dir_pattern) || !pattern_has_glob(slash + 1))
		return;
	_cleanup_free_ char *dir = pattern_unescape(dir_pattern);
	char *resolved = NULL;
	/* Most globs share a directory (the working directory): resolve it
	 * once. */
	for (size_t i = 0; i < out->globs_len && !resolved; i++)
		if (!strcmp(out->globs[i].source, dir))
			resolved = xstrdup(out->globs[i].dir);
	if (!resolved && path_resolve(dir, &resolved, NULL, NULL) < 0 &&
	    path_resolve_missing(dir, &resolved) < 0)
		return;
	out->globs = xreallocarray(out->globs, out->globs_len + 1, sizeof(*out->globs));
	out->globs[out->globs_len++] = (struct glob_watch){
	    .source = steal_ptr(&dir),
	    .dir = resolved,
	    .segment = xstrdup(slash + 1),
	    .rule = rule,
	    .order = order,
	};
}

static int expand_rule(const struct policy_input *in, size_t order, struct candidates *c,
		       struct candidates *absent, struct policy *out, struct error *err)
{
	const struct rule *rule = &in->rules->items[order];
	_cleanup_free_ char *abs = NULL;
	_cleanup_error_ struct error perr = ERROR_INIT;
	if (path_expand(rule->pattern, in->home, in->cwd, &abs, &perr) < 0)
		return rule_error(err, rule, "%s", perr.msg);

	_cleanup_strv_ struct strv paths = STRV_INIT;
	bool glob = pattern_has_glob(abs);
	if (glob)
		path_glob(abs, &paths);
	else
		strv_push_owned(&paths, pattern_unescape(abs));
	if (glob)
		add_glob_watch(out, abs, rule, order);
	if (glob && paths.len == 0)
		add_note(&out->skipped, &out->skipped_len, abs, rule,
			 xstrdup("glob matches nothing"));

	for (size_t i = 0; i < paths.len; i++) {
		_cleanup_strv_ struct strv links = STRV_INIT;
		char *resolved = NULL;
		struct stat st;
		char *where = NULL;
		int r = path_resolve_or_locate(paths.items[i], &resolved, &links, &st,
					       glob ? NULL : &where);
		if (r == -EINVAL && !glob)
			r = -ENOENT; /* missing, below a ".." that says nothing */
		if (r == -ENAMETOOLONG && rule->level == ACCESS_EXCLUDE)
			/* Longer than the kernel takes (PATH_MAX): nothing can
			 * be mounted there, but the file can be read through
			 * the directories on the way. Never skipped. */
			return rule_error(err, rule,
					  "%s is too long a path to mask; mask a directory above "
					  "it whole (a pattern ending in \"/\") or move it",
					  paths.items[i]);
		if (r < 0) {
			/* bwrap would create a missing mount target on the host,
			 * leaving an empty file or directory behind, so a rule for
			 * a missing path is skipped rather than mounted. */
			add_note(&out->skipped, &out->skipped_len, paths.items[i], rule,
				 r == -ENOENT ? xstrdup("does not exist")
					      : xasprintf("cannot be resolved: %s", strerror(-r)));
			struct strv no_links = STRV_INIT;
			if (where)
				add_candidate(absent, where, rule, order, false, NULL, &no_links);
			continue;
		}
		const struct base_mount *base = policy_base_for(resolved);
		if (base->kind == BASE_DEV || base->kind == BASE_PROC) {
			int ret =
			    rule_error(err, rule,
				       "%s is under %s, which the sandbox mounts fresh; rules "
				       "cannot apply there",
				       resolved, base->path);
			free(resolved);
			return ret;
		}
		if (!strcmp(resolved, "/") && rule->level == ACCESS_EXCLUDE) {
			free(resolved);
			return rule_error(err, rule, "the root directory cannot be excluded");
		}
		add_candidate(c, resolved, rule, order, glob, &st, &links);
	}
	return 0;
}

static int compare_candidates(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;
	int r = path_compare(a->path, b->path);
	if (r)
		return r;
	return a->order < b->order ? -1 : a->order > b->order;
}

static bool rule_beats(bool a_glob, const struct rule *a, bool b_glob, const struct rule *b)
{
	if (a_glob != b_glob)
		return !a_glob;
	if (a->layer != b->layer)
		return a->layer > b->layer;
	return a->level > b->level;
}

static bool beats(const struct candidate *a, const struct candidate *b)
{
	return rule_beats(a->glob, a->rule, b->glob, b->rule);
}

static char *why_beats(const struct candidate *winner, const struct candidate *loser)
{
	if (winner->glob != loser->glob)
		return xasprintf("overridden by %s %s (%s): an exact path beats a glob",
				 access_level_name(winner->rule->level), winner->rule->pattern,
				 winner->rule->origin);
	if (winner->rule->layer != loser->rule->layer)
		return xasprintf("overridden by %s %s (%s): the %s layer comes after %s",
				 access_level_name(winner->rule->level), winner->rule->pattern,
				 winner->rule->origin, layer_name(winner->rule->layer),
				 layer_name(loser->rule->layer));
	if (winner->rule->level != loser->rule->level)
		return xasprintf("overridden by %s %s (%s): %s beats %s in the same layer",
				 access_level_name(winner->rule->level), winner->rule->pattern,
				 winner->rule->origin, access_level_name(winner->rule->level),
				 access_level_name(loser->rule->level));
	return xasprintf("same as %s %s (%s)", access_level_name(winner->rule->level),
			 winner->rule->pattern, winner->rule->origin);
}

static const struct access_entry *deepest_covering(const struct policy *p, const char *path,
						   const char *except)
{
	const struct access_entry *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < p->len; i++) {
		const struct access_entry *e = &p->entries[i];
		if (except && !strcmp(e->path, except))
			continue;
		size_t n = strlen(e->path);
		if ((!best || n > best_len) && path_is_within(path, e->path)) {
			best = e;
			best_len = n;
		}
	}
	return best;
}

const struct access_entry *policy_entry_for(const struct policy *p, const char *path)
{
	return deepest_covering(p, path, NULL);
}

/* What a path would get if the entry for it did not exist: its parent's
 * level, or what the base layout gives (hidden under fresh mounts). */
static enum access_level level_without(const struct policy *p, const char *path)
{
	const struct access_entry *e = deepest_covering(p, path, path);
	if (e)
		return e->level;
	return policy_base_for(path)->kind == BASE_HOST_ROOT ? ACCESS_RO : ACCESS_EXCLUDE;
}

/* A symlink inside a writable directory may have been put there by a
 * sandboxed program to redirect a rule at the next run (".generated ->
 * ~/.ssh"). Such a rule may still tighten access to the target, but never
 * loosen it. */
static int check_planted_symlinks(const struct policy *p, const struct candidate *winner,
				  enum access_level strictest_loser, struct error *err)
{
	/* A rule that only tightens takes the level of what covers its
	 * target (see policy_resolve), so a symlink cannot make it loosen. */
	if (winner->rule->level == ACCESS_EXCLUDE || winner->rule->tighten_only)
		return 0;
	for (size_t i = 0; i < winner->links.len; i++) {
		const char *link = winner->links.items[i];
		const struct access_entry *area = policy_entry_for(p, link);
		if (!area || area->level != ACCESS_RW)
			continue;
		enum access_level baseline = level_without(p, winner->path);
		if (strictest_loser > baseline)
			baseline = strictest_loser;
		if (winner->rule->level >= baseline)
			continue;
		rule_error(err, winner->rule,
			   "it resolves through the symlink %s, which lies in the writable "
			   "directory %s where a sandboxed program could have planted it; "
			   "following it would make %s %s instead of %s",
			   link, area->path, winner->path, access_level_name(winner->rule->level),
			   access_level_name(baseline));
		error_hint(err,
			   "if that target is intended, name it directly (--%s %s) or "
			   "replace the symlink",
			   access_level_name(winner->rule->level), winner->path);
		return -1;
	}
	return 0;
}

static bool is_implicit_cwd_rule(const struct access_entry *e, const char *cwd)
{
	return e->rule->layer == LAYER_PRESET && !strcmp(e->rule->pattern, ".") &&
	       !strcmp(e->path, cwd);
}

static int check_working_directory(const struct policy *p, const char *cwd, struct error *err)
{
	const struct access_entry *e = policy_entry_for(p, cwd);
	/* @base's own "working directory rw" must not punch a hole into an
	 * excluded tree: decide on what covers the directory without it. */
	if (e && is_implicit_cwd_rule(e, cwd) && strcmp(cwd, "/")) {
		_cleanup_free_ char *parent = xstrdup(cwd);
		char *slash = strrchr(parent, '/');
		slash[slash == parent ? 1 : 0] = '\0';
		const struct access_entry *above = policy_entry_for(p, parent);
		if (above && above->level == ACCESS_EXCLUDE)
			e = above;
	}
	if (e && e->level == ACCESS_EXCLUDE) {
		error_set(err, ERROR_DENIED,
			  "the working directory %s is inside %s, which is excluded by \"%s\" "
			  "(from %s)",
			  cwd, e->path, e->rule->pattern, e->rule->origin);
		error_hint(err, "run from a directory the policy allows, or remove that rule");
		return -1;
	}
	if (!e && policy_base_for(cwd)->kind != BASE_HOST_ROOT) {
		error_set(err, ERROR_DENIED,
			  "the working directory %s is under %s, which is private in the "
			  "sandbox, and no rule makes it visible",
			  cwd, policy_base_for(cwd)->path);
		error_hint(err, "add --ro %s or --rw %s, or keep the @base preset", cwd, cwd);
		return -1;
	}
	return 0;
}

/* An exclude inside a directory that is itself excluded hides nothing more,
 * and its mount would only add an empty mount point to the empty directory
 * (secret files found in an excluded tree are the usual case). */
static void drop_hidden_excludes(struct policy *p)
{
	_cleanup_free_ bool *hidden = xcalloc(p->len ? p->len : 1, sizeof(bool));
	for (size_t i = 0; i < p->len; i++) {
		const struct access_entry *e = &p->entries[i];
		const struct access_entry *above =
		    e->level == ACCESS_EXCLUDE ? deepest_covering(p, e->path, e->path) : NULL;
		if (above && above->level == ACCESS_EXCLUDE && above->is_dir) {
			hidden[i] = true;
			add_note(&p->skipped, &p->skipped_len, e->path, e->rule,
				 xasprintf("inside the excluded directory %s", above->path));
		}
	}
	size_t kept = 0;
	for (size_t i = 0; i < p->len; i++) {
		if (hidden[i])
			free(p->entries[i].path);
		else
			p->entries[kept++] = p->entries[i];
	}
	p->len = kept;
}

/* One absent entry per path, decided as for existing ones. */
static void resolve_absent(struct candidates *absent, struct policy *out)
{
	if (absent->len > 1)
		qsort(absent->items, absent->len, sizeof(*absent->items), compare_candidates);
	out->absent = xcalloc(absent->len ? absent->len : 1, sizeof(*out->absent));
	for (size_t i = 0; i < absent->len;) {
		size_t end = i, best = i;
		while (end < absent->len &&
		       !strcmp(absent->items[end].path, absent->items[i].path)) {
			if (beats(&absent->items[end], &absent->items[best]))
				best = end;
			end++;
		}
		out->absent[out->absent_len++] = (struct absent_entry){
		    .path = xstrdup(absent->items[best].path),
		    .level = absent->items[best].rule->level,
		    .rule = absent->items[best].rule,
		    .order = absent->items[best].order,
		};
		i = end;
	}
}

bool policy_rule_for_new(const struct policy *p, const char *path, const struct rule **rule)
{
	const struct rule *best = NULL;
	bool best_glob = false;
	for (size_t i = 0; i < p->absent_len; i++)
		if (!strcmp(p->absent[i].path, path) &&
		    (!best || rule_beats(false, p->absent[i].rule, best_glob, best)))
			best = p->absent[i].rule, best_glob = false;
	for (size_t i = 0; i < p->len; i++)
		if (!p->entries[i].from_glob && !strcmp(p->entries[i].path, path) &&
		    (!best || rule_beats(false, p->entries[i].rule, best_glob, best)))
			best = p->entries[i].rule, best_glob = false;
	const char *slash = strrchr(path, '/');
	if (slash) {
		size_t dir_len = slash == path ? 1 : (size_t)(slash - path);
		for (size_t i = 0; i < p->globs_len; i++) {
			const struct glob_watch *g = &p->globs[i];
			if (strlen(g->dir) != dir_len || strncmp(g->dir, path, dir_len) != 0 ||
			    !pattern_match_segment(g->segment, slash + 1))
				continue;
			if (!best || rule_beats(true, g->rule, best_glob, best))
				best = g->rule, best_glob = true;
		}
	}
	*rule = best;
	return best != NULL;
}

/* Pinned files leave the table: a mount on one would refuse the rename
 * that git replaces it with. */
static void take_pinned(struct policy *p)
{
	size_t kept = 0;
	for (size_t i = 0; i < p->len; i++) {
		struct access_entry *e = &p->entries[i];
		if (!e->rule->pinned || e->is_dir) {
			p->entries[kept++] = *e;
			continue;
		}
		p->pinned = xreallocarray(p->pinned, p->pinned_len + 1, sizeof(*p->pinned));
		p->pinned[p->pinned_len++] =
		    (struct pinned_entry){.path = e->path, .rule = e->rule};
	}
	p->len = kept;
}

int policy_resolve(const struct policy_input *in, struct policy *out, struct error *err)
{
	_cleanup_(candidates_releasep) struct candidates c = {0};
	_cleanup_(candidates_releasep) struct candidates absent = {0};
	_cleanup_policy_ struct policy p = {0};
	*out = (struct policy){0};

	int r = 0;
	for (size_t i = 0; r == 0 && i < in->rules->len; i++)
		r = expand_rule(in, i, &c, &absent, &p, err);
	resolve_absent(&absent, &p);
	candidates_release(&absent);
	if (r < 0)
		return -1;

	if (c.len > 1)
		qsort(c.items, c.len, sizeof(*c.items), compare_candidates);

	/* One entry per distinct path: the best candidate of each group. */
	_cleanup_free_ size_t *winner_of = xcalloc(c.len, sizeof(size_t));
	p.entries = xcalloc(c.len, sizeof(*p.entries));
	for (size_t i = 0; i < c.len;) {
		size_t end = i, best = i;
		while (end < c.len && !strcmp(c.items[end].path, c.items[i].path)) {
			if (beats(&c.items[end], &c.items[best]))
				best = end;
			end++;
		}
		for (size_t j = i; j < end; j++) {
			winner_of[j] = best;
			if (j != best)
				add_note(&p.overridden, &p.overridden_len, c.items[j].path,
					 c.items[j].rule, why_beats(&c.items[best], &c.items[j]));
		}
		p.entries[p.len++] = (struct access_entry){
		    .path = xstrdup(c.items[best].path),
		    .level = c.items[best].rule->level,
		    .rule = c.items[best].rule,
		    .is_dir = c.items[best].is_dir,
		    .from_glob = c.items[best].glob,
		    .id = c.items[best].id,
		};
		i = end;
	}

	for (size_t i = 0; r == 0 && i < c.len; i++) {
		if (winner_of[i] != i)
			continue;
		enum access_level strictest_loser = ACCESS_RW;
		for (size_t j = 0; j < c.len; j++)
			if (winner_of[j] == i && j != i && c.items[j].rule->level > strictest_loser)
				strictest_loser = c.items[j].rule->level;
		r = check_planted_symlinks(&p, &c.items[i], strictest_loser, err);
	}
	if (r < 0)
		return -1;

	/* Parents sort first, so such a rule beneath another sees its final
	 * level. */
	for (size_t i = 0; i < p.len; i++) {
		struct access_entry *e = &p.entries[i];
		if (!e->rule->tighten_only)
			continue;
		enum access_level covering = level_without(&p, e->path);
		if (covering > e->level)
			e->level = covering;
	}

	drop_hidden_excludes(&p);
	take_pinned(&p);

	if (in->read_only)
		for (size_t i = 0; i < p.len; i++) {
			struct access_entry *e = &p.entries[i];
			if (e->level != ACCESS_RW)
				continue;
			if (e->rule->agent_state && !in->read_only_strict) {
				e->kept_rw = true;
				continue;
			}
			e->level = ACCESS_RO;
			e->downgraded = true;
		}

	if (check_working_directory(&p, in->cwd, err) < 0)
		return -1;
	*out = steal_struct(&p);
	return 0;
}

static void notes_release(struct policy_note *notes, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		free(notes[i].path);
		free(notes[i].reason);
	}
	free(notes);
}

void policy_release(struct policy *p)
{
	for (size_t i = 0; i < p->len; i++)
		free(p->entries[i].path);
	free(p->entries);
	for (size_t i = 0; i < p->absent_len; i++)
		free(p->absent[i].path);
	free(p->absent);
	for (size_t i = 0; i < p->pinned_len; i++)
		free(p->pinned[i].path);
	free(p->pinned);
	for (size_t i = 0; i < p->globs_len; i++) {
		free(p->globs[i].source);
		free(p->globs[i].dir);
		free(p->globs[i].segment);
	}
	free(p->globs);
	notes_release(p->skipped, p->skipped_len);
	notes_release(p->overridden, p->overridden_len);
	*p = (struct policy){0};
}
