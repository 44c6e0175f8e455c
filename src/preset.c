/* This file decides what each built-in preset protects. It reads a little of
 * the filesystem (where the git directory is, which branch is checked out)
 * and never changes it. Rules for paths that do not exist are still emitted:
 * the policy skips them, visibly, in --debug. */
#include "preset.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "io.h"
#include "path.h"
#include "pattern.h"
#include "suggest.h"
#include "xalloc.h"

enum {
	P_BASE = 1u << 0,
	P_CACHES = 1u << 1,
	P_AGENTS = 1u << 2,
	P_GIT = 1u << 3,
	P_GIT_STRICT = 1u << 4,
	P_LINT_TS = 1u << 5,
	P_LINT_GO = 1u << 6,
	P_LINT_PYTHON = 1u << 7,
	P_LINT_ALL = P_LINT_TS | P_LINT_GO | P_LINT_PYTHON,
	P_ALL = P_BASE | P_CACHES | P_AGENTS | P_GIT | P_LINT_ALL,
};

/* `removes` differs from `adds` only for @git-strict: "!@git-strict" takes
 * back the strictness, not @git itself. */
static const struct {
	const char *name;
	unsigned adds;
	unsigned removes;
} presets[] = {
    {"@all", P_ALL, P_ALL},
    {"@base", P_BASE, P_BASE},
    {"@caches", P_CACHES, P_CACHES},
    {"@agents", P_AGENTS, P_AGENTS},
    {"@git", P_GIT, P_GIT},
    {"@git-strict", P_GIT | P_GIT_STRICT, P_GIT_STRICT},
    {"@lint/all", P_LINT_ALL, P_LINT_ALL},
    {"@lint/ts", P_LINT_TS, P_LINT_TS},
    {"@lint/go", P_LINT_GO, P_LINT_GO},
    {"@lint/python", P_LINT_PYTHON, P_LINT_PYTHON},
};

/* Credential stores in the home directory that no agent needs to read. The
 * first three are the specification's; the rest hold tokens just as
 * sensitive. A later layer (or --ro PATH) gives one back when needed. */
static const char *const home_secrets[] = {
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.password-store",
    "~/.local/share/keyrings",
};

static const char *const caches[] = {"~/.cache", "~/.npm", "~/.cargo", "~/go", "~/.bun"};
static const char *const agents[] = {"~/.claude", "~/.claude.json", "~/.codex", "~/.pi"};

static const char *const lint_ts[] = {
    ".eslintrc",     ".eslintrc.*",	"eslint.config.*",   ".eslintignore",
    ".prettierrc",   ".prettierrc.*",	"prettier.config.*", ".prettierignore",
    "biome.json",    "biome.jsonc",	".stylelintrc*",     "stylelint.config.*",
    "tsconfig.json", "tsconfig.*.json", ".lintstagedrc*",    "lint-staged.config.*",
};
static const char *const lint_go[] = {".golangci.*", "revive.toml"};
static const char *const lint_python[] = {
    "ruff.toml", ".ruff.toml", ".flake8",    ".pylintrc",	   "pylintrc",
    "mypy.ini",	 ".mypy.ini",  ".isort.cfg", "pyrightconfig.json", ".bandit",
};

unsigned preset_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		if (!strcmp(presets[i].name, name))
			return presets[i].adds;
	return 0;
}

static unsigned preset_removes(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		if (!strcmp(presets[i].name, name))
			return presets[i].removes;
	return 0;
}

void preset_list_names(struct strbuf *sb)
{
	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", presets[i].name);
}

const char *preset_suggest(const char *name)
{
	const char *names[ARRAY_SIZE(presets)];
	for (size_t i = 0; i < ARRAY_SIZE(presets); i++)
		names[i] = presets[i].name;
	return suggest_nearest(name, names, ARRAY_SIZE(names));
}

unsigned preset_select(const struct strv *ops)
{
	unsigned set = P_ALL;
	for (size_t i = 0; i < ops->len; i++) {
		const char *op = ops->items[i];
		if (op[0] == '!')
			set &= ~preset_removes(op + 1);
		else
			set |= preset_lookup(op);
	}
	return set;
}

void preset_describe(unsigned set, struct strbuf *sb)
{
	static const struct {
		unsigned bit;
		const char *name;
	} leaves[] = {
	    {P_BASE, "@base"},	     {P_CACHES, "@caches"},	      {P_AGENTS, "@agents"},
	    {P_GIT, "@git"},	     {P_GIT_STRICT, "@git-strict"},   {P_LINT_TS, "@lint/ts"},
	    {P_LINT_GO, "@lint/go"}, {P_LINT_PYTHON, "@lint/python"},
	};
	size_t before = sb->len;
	for (size_t i = 0; i < ARRAY_SIZE(leaves); i++)
		if (set & leaves[i].bit)
			strbuf_addf(sb, "%s%s", sb->len > before ? " " : "", leaves[i].name);
	if (sb->len == before)
		strbuf_addstr(sb, "(none)");
}

static void add_all(struct rule_list *out, const char *const *patterns, size_t n,
		    enum access_level level, const char *origin)
{
	for (size_t i = 0; i < n; i++)
		rule_list_add(out, patterns[i], level, LAYER_PRESET, origin);
}

static void add_literal(struct rule_list *out, const char *path, enum access_level level,
			const char *origin)
{
	_cleanup_free_ char *escaped = pattern_escape(path);
	rule_list_add(out, escaped, level, LAYER_PRESET, origin);
}

struct git_dirs {
	char *toplevel; /* the working tree holding .git */
	char *git_dir;	/* .git, or .git/worktrees/<name> for a linked worktree */
	char *common;	/* the shared repository: equal to git_dir unless linked */
};

static void git_dirs_release(struct git_dirs *g)
{
	free(g->toplevel);
	free(g->git_dir);
	free(g->common);
}

/* Reads a one-line file such as ".git" ("gitdir: X") or "commondir" and
 * returns its path, taken relative to base when it is relative. */
static char *read_path_file(const char *file, const char *prefix, const char *base)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file(file, 4096, &text, &len) < 0)
		return NULL;
	text[strcspn(text, "\r\n")] = '\0';
	const char *value = text;
	if (prefix) {
		size_t n = strlen(prefix);
		if (strncmp(text, prefix, n) != 0)
			return NULL;
		value += n;
	}
	if (!*value)
		return NULL;
	_cleanup_free_ char *joined =
	    value[0] == '/' ? xstrdup(value) : xasprintf("%s/%s", base, value);
	char *resolved = NULL;
	if (path_resolve(joined, &resolved, NULL, NULL) < 0)
		return NULL;
	return resolved;
}

/* Finds the repository the working directory belongs to, the way git does:
 * the nearest ancestor with a .git directory or gitfile. */
static bool git_discover(const char *cwd, struct git_dirs *g)
{
	_cleanup_free_ char *dir = xstrdup(cwd);
	for (;;) {
		_cleanup_free_ char *dotgit = xasprintf("%s/.git", strcmp(dir, "/") ? dir : "");
		struct stat st;
		if (lstat(dotgit, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				g->git_dir = steal_ptr(&dotgit);
			} else if (S_ISREG(st.st_mode)) {
				g->git_dir = read_path_file(dotgit, "gitdir: ", dir);
				if (!g->git_dir)
					return false;
			} else {
				return false;
			}
			_cleanup_free_ char *commondir_file = xasprintf("%s/commondir", g->git_dir);
			g->common = read_path_file(commondir_file, NULL, g->git_dir);
			if (!g->common)
				g->common = xstrdup(g->git_dir);
			g->toplevel = steal_ptr(&dir);
			return true;
		}
		if (!strcmp(dir, "/"))
			return false;
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Makes every branch ref read-only except the checked-out one, so that an
 * agent can commit on its branch but not move anybody else's. */
static void protect_other_branches(const char *heads, const char *prefix, const char *current,
				   int depth, struct rule_list *out)
{
	if (depth > 16)
		return;
	DIR *d = opendir(heads);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", heads, de->d_name);
		_cleanup_free_ char *name = xasprintf("%s%s", prefix, de->d_name);
		if (is_dir(path)) {
			_cleanup_free_ char *sub = xasprintf("%s/", name);
			protect_other_branches(path, sub, current, depth + 1, out);
		} else if (!current || strcmp(name, current) != 0) {
			add_literal(out, path, ACCESS_RO, "@git-strict");
		}
	}
	closedir(d);
}

static void expand_git(unsigned set, struct rule_list *out, const struct preset_context *ctx)
{
	struct git_dirs g = {0};
	if (!git_discover(ctx->cwd, &g))
		return;

	/* Renaming .git away would carry the read-only hooks and config off
	 * with it and let a fresh .git take its place; a mount point cannot
	 * be renamed. Only where the directory is writable anyway. */
	if (path_is_within(g.git_dir, ctx->cwd))
		add_literal(out, g.git_dir, ACCESS_RW, "@git");
	if (strcmp(g.git_dir, g.common) != 0) {
		/* A linked worktree keeps its objects and refs in the main
		 * repository, which git must be able to write to commit. */
		add_literal(out, g.common, ACCESS_RW, "@git");
		_cleanup_free_ char *wt_config = xasprintf("%s/config.worktree", g.git_dir);
		add_literal(out, wt_config, ACCESS_RO, "@git");
		/* The links between the worktree and its repository: rewritten,
		 * they would point git at a repository of the agent's making. */
		_cleanup_free_ char *gitfile = xasprintf("%s/.git", g.toplevel);
		_cleanup_free_ char *commondir = xasprintf("%s/commondir", g.git_dir);
		_cleanup_free_ char *gitdir = xasprintf("%s/gitdir", g.git_dir);
		add_literal(out, gitfile, ACCESS_RO, "@git");
		add_literal(out, commondir, ACCESS_RO, "@git");
		add_literal(out, gitdir, ACCESS_RO, "@git");
	}
	_cleanup_free_ char *hooks = xasprintf("%s/hooks", g.common);
	_cleanup_free_ char *config = xasprintf("%s/config", g.common);
	_cleanup_free_ char *config_wt = xasprintf("%s/config.worktree", g.common);
	_cleanup_free_ char *precommit = xasprintf("%s/.pre-commit-config.yaml", g.toplevel);
	add_literal(out, hooks, ACCESS_RO, "@git");
	add_literal(out, config, ACCESS_RO, "@git");
	add_literal(out, config_wt, ACCESS_RO, "@git");
	add_literal(out, precommit, ACCESS_RO, "@git");

	if (set & P_GIT_STRICT) {
		_cleanup_free_ char *tags = xasprintf("%s/refs/tags", g.common);
		_cleanup_free_ char *packed = xasprintf("%s/packed-refs", g.common);
		_cleanup_free_ char *heads = xasprintf("%s/refs/heads", g.common);
		_cleanup_free_ char *head_file = xasprintf("%s/HEAD", g.git_dir);
		add_literal(out, tags, ACCESS_RO, "@git-strict");
		add_literal(out, packed, ACCESS_RO, "@git-strict");

		_cleanup_free_ char *head = NULL;
		size_t len = 0;
		const char *current = NULL;
		if (read_file(head_file, 4096, &head, &len) == 0) {
			head[strcspn(head, "\r\n")] = '\0';
			if (!strncmp(head, "ref: refs/heads/", 16))
				current = head + 16;
		}
		protect_other_branches(heads, "", current, 0, out);
	}
	git_dirs_release(&g);
}

void preset_expand(unsigned set, const struct preset_context *ctx, struct rule_list *out)
{
	if (set & P_BASE) {
		rule_list_add(out, "~", ACCESS_RO, LAYER_PRESET, "@base");
		/* "/" as the project would make the whole host writable. */
		if (strcmp(ctx->cwd, "/") != 0)
			rule_list_add(out, ".", ACCESS_RW, LAYER_PRESET,
				      "@base (working directory)");
		add_all(out, home_secrets, ARRAY_SIZE(home_secrets), ACCESS_EXCLUDE, "@base");
		rule_list_add(out, ".husky", ACCESS_RO, LAYER_PRESET, "@base");
		rule_list_add(out, ".agent-sandbox*", ACCESS_RO, LAYER_PRESET, "@base");
		if (ctx->global_config_dir)
			add_literal(out, ctx->global_config_dir, ACCESS_RO,
				    "@base (global config)");
		for (size_t i = 0; ctx->config_files && i < ctx->config_files->len; i++)
			add_literal(out, ctx->config_files->items[i], ACCESS_RO,
				    "@base (loaded config)");
	}
	if (set & P_CACHES)
		add_all(out, caches, ARRAY_SIZE(caches), ACCESS_RW, "@caches");
	if (set & P_AGENTS)
		add_all(out, agents, ARRAY_SIZE(agents), ACCESS_RW, "@agents");
	if (set & (P_GIT | P_GIT_STRICT))
		expand_git(set, out, ctx);
	if (set & P_LINT_TS)
		add_all(out, lint_ts, ARRAY_SIZE(lint_ts), ACCESS_RO, "@lint/ts");
	if (set & P_LINT_GO)
		add_all(out, lint_go, ARRAY_SIZE(lint_go), ACCESS_RO, "@lint/go");
	if (set & P_LINT_PYTHON)
		add_all(out, lint_python, ARRAY_SIZE(lint_python), ACCESS_RO, "@lint/python");
}
