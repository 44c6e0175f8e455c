/* This file decides what each built-in preset protects. @git's rules, which
 * read git directories, come from preset_git.c; nothing here changes the
 * filesystem. Rules for paths that do not exist are still emitted: the
 * policy skips them, visibly, in --debug. */
#include "preset.h"

#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "pattern.h"
#include "preset_git.h"
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
		preset_git_expand(set & P_GIT_STRICT, ctx, out);
	if (set & P_LINT_TS)
		add_all(out, lint_ts, ARRAY_SIZE(lint_ts), ACCESS_RO, "@lint/ts");
	if (set & P_LINT_GO)
		add_all(out, lint_go, ARRAY_SIZE(lint_go), ACCESS_RO, "@lint/go");
	if (set & P_LINT_PYTHON)
		add_all(out, lint_python, ARRAY_SIZE(lint_python), ACCESS_RO, "@lint/python");
}
