/* This file decides what each built-in preset protects. @git's rules, which
 * read git directories, come from preset_git.c; nothing here changes the
 * filesystem. Rules for paths that do not exist are still emitted: the
 * policy skips them, visibly, in --debug. */
#include "policy/preset.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "policy/pattern.h"
#include "policy/preset_git.h"
#include "base/suggest.h"
#include "base/xalloc.h"

enum {
	P_BASE = 1u << 0,
	P_CACHES = 1u << 1,
	P_AGENTS = 1u << 2,
	P_GIT = 1u << 3,
	P_GIT_STRICT = 1u << 4,
	P_LINT_TS = 1u << 5,
	P_LINT_GO = 1u << 6,
	P_LINT_PYTHON = 1u << 7,
	P_AGENT_CONFIGS = 1u << 8,
	P_LINT_ALL = P_LINT_TS | P_LINT_GO | P_LINT_PYTHON,
	P_ALL = P_BASE | P_CACHES | P_AGENTS | P_GIT | P_AGENT_CONFIGS | P_LINT_ALL,
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
    {"@agent-configs", P_AGENT_CONFIGS, P_AGENT_CONFIGS},
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
    /* git's credential-store default when ~/.git-credentials is absent. */
    "~/.config/git/credentials",
    /* Shell and REPL histories: commands typed with tokens and passwords
     * in their arguments, queries with connection strings. Hidden, they
     * read as empty; the shells inside cannot save to them, as they
     * cannot anywhere in the read-only home. */
    "~/.bash_history",
    "~/.zsh_history",
    "~/.zhistory",
    "~/.histfile",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.node_repl_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.sqlite_history",
    "~/.lesshst",
    /* Vim's registers: whatever was yanked or deleted, keys included. */
    "~/.viminfo",
    /* More tokens of the same kind: GitLab's, hub's, Copilot's and
     * Composer's GitHub tokens; Vault, Terraform Cloud, flyctl, OCI,
     * Databricks, rclone, Hugging Face, Pulumi, Vercel, Netlify,
     * DigitalOcean, Stripe, ngrok, JFrog and Cloudflare tokens; PostgreSQL,
     * MySQL, s3cmd, boto and RubyGems passwords and keys; age's private
     * keys for sops; shell histories kept by atuin, irb and redis-cli;
     * browsers' cookies, a logged-in session on every site. */
    "~/.config/glab-cli",
    "~/.config/hub",
    "~/.config/github-copilot",
    "~/.config/composer/auth.json",
    "~/.composer/auth.json",
    "~/.pulumi/credentials.json",
    "~/.vercel",
    "~/.local/share/com.vercel.cli",
    "~/.config/netlify",
    "~/.config/doctl",
    "~/.config/stripe",
    "~/.config/ngrok",
    "~/.ngrok2",
    "~/.config/jfrog",
    "~/.wrangler",
    "~/.config/.wrangler",
    "~/.vault-token",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.fly",
    "~/.oci",
    "~/.databrickscfg",
    "~/.config/rclone",
    "~/.huggingface",
    "~/.cache/huggingface/token",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.s3cfg",
    "~/.boto",
    "~/.gem/credentials",
    "~/.local/share/gem/credentials",
    "~/.config/sops",
    "~/.local/share/atuin",
    "~/.config/atuin",
    "~/.irb_history",
    "~/.rediscli_history",
    "~/.mozilla",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
};

/* The host's password hashes and SSH host keys. Other users cannot read
 * them; a command run as root could, and a host key lets it impersonate
 * the machine. The "-" files are the backups passwd and friends keep. */
static const char *const system_secrets[] = {
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh/ssh_host_*_key",
};

/* Build caches: data only. Never a tool's bin directory, its env file or its
 * config (~/.cargo/bin and ~/.cargo/env, ~/go/bin, ~/.bun/bin, ~/.npm/_npx
 * whose packages npx runs, ~/.cargo/config.toml): the host runs those. */
static const char *const caches[] = {
    "~/.cargo/registry",
    "~/.cargo/git",
    "~/go/pkg/mod",
    "~/.npm/_cacache",
    "~/.bun/install/cache",
    "~/.cache",
    /* Not data themselves: mount points that pin the directories holding
     * corepack's and pnpm dlx's programs, poetry's venvs and the code
     * torch and transformers import (below), so that those cannot be
     * renamed away and replaced. */
    "~/.cache/node",
    "~/.cache/pnpm",
    "~/.cache/pypoetry",
    "~/.cache/torch",
    "~/.cache/huggingface",
};

/* What the host runs from beside those caches. Read-only already under the
 * read-only home; named so that a user's --rw ~/.cargo (to let cargo
 * install work, say) still leaves them closed unless named themselves. */
static const char *const cache_neighbours[] = {
    "~/.cargo/bin",	    "~/.cargo/env",	     "~/.cargo/env.fish", "~/.cargo/env.nu",
    "~/.cargo/config.toml", "~/.cargo/config",	     "~/go/bin",	  "~/.npm/_npx",
    "~/.bun/bin",	    "~/.bun/install/global",
};

/* Entries of ~/.cache that a host program runs or sources rather than reads
 * as data. Missing ones stay protected: the agent cannot create them. */
static const char *const cache_code[] = {
    /* pre-commit's hook repositories and their environments: it runs them
     * at every commit, in every repository that uses it. */
    "~/.cache/pre-commit",
    /* powerlevel10k's instant prompt and its state dump are sourced by
     * every zsh at start, compiled (.zwc) or not. The names are exact
     * enough to leave alone the .tmp.PID files p10k writes them through. */
    "~/.cache/p10k-instant-prompt-*.zsh",
    "~/.cache/p10k-instant-prompt-*.zsh.zwc",
    "~/.cache/p10k-dump-*.zsh",
    "~/.cache/p10k-dump-*.zsh.zwc",
    /* gitstatusd, the daemon binary the p10k prompt downloads here and
     * runs. */
    "~/.cache/gitstatus",
    /* zsh plugins and completion dumps kept here are sourced by every
     * zsh: antidote clones plugins into ~/.cache/antidote; prezto writes
     * compinit's zcompdump (and its compiled .zwc) to ~/.cache/prezto,
     * other setups to ~/.cache/zsh; oh-my-zsh its completions when
     * ZSH_CACHE_DIR points here. */
    "~/.cache/antidote",
    "~/.cache/zsh",
    "~/.cache/prezto",
    "~/.cache/oh-my-zsh",
    /* fish autoloads the completions fish_update_completions generates. */
    "~/.cache/fish",
    /* Neovim's vim.loader keeps byte-compiled Lua here and loads it in
     * place of the plugins' sources. */
    "~/.cache/nvim",
    /* Programs the host runs from a cache: corepack's pnpm and yarn, pnpm
     * dlx's packages (its npx), and the browsers and drivers that test
     * runners start (Playwright, Puppeteer, Cypress, Selenium Manager). */
    "~/.cache/node/corepack",
    "~/.cache/pnpm/dlx",
    "~/.cache/ms-playwright",
    "~/.cache/puppeteer",
    "~/.cache/Cypress",
    "~/.cache/selenium",
    /* uv hard-links its cache into the venvs it builds: a file edited
     * here is edited in every host venv that holds it, and uvx runs its
     * tools from here. uv inside needs --rw ~/.cache/uv or a UV_CACHE_DIR
     * of its own. */
    "~/.cache/uv",
    /* poetry's venvs: a .pth file or a console script planted there runs
     * in the host's next `poetry run`. poetry inside creates no venv here
     * (set virtualenvs.in-project, or --rw it). */
    "~/.cache/pypoetry/virtualenvs",
    /* The bazel releases bazelisk downloads and runs, and bazel's output
     * root: its install base (the server it starts) and the external
     * repositories and tools its builds run. Bazel inside needs --rw
     * ~/.cache/bazel or --output_user_root elsewhere. */
    "~/.cache/bazelisk",
    "~/.cache/bazel",
    /* coursier's JVMs (`cs java`) and the jars sbt, mill and scala-cli
     * start from, used without being checked again. COURSIER_CACHE moves
     * it for a build inside. */
    "~/.cache/coursier",
    /* Deno's remote modules and compiled code, run by the next `deno run`
     * of any script that imports them. DENO_DIR moves it. */
    "~/.cache/deno",
    /* Code imported on load: torch.hub's cloned repositories (hubconf.py)
     * and transformers' trust_remote_code modules. TORCH_HOME and
     * HF_MODULES_CACHE move them. */
    "~/.cache/torch/hub",
    "~/.cache/huggingface/modules",
    /* pipx run keeps the venvs of the tools it runs here and runs them
     * again for days. */
    "~/.cache/pipx",
    /* The AUR helpers' clones: the next upgrade runs git (and its hooks)
     * in them, and makepkg their PKGBUILDs. */
    "~/.cache/yay",
    "~/.cache/paru",
    /* opencode installs its npm plugins and provider packages here and
     * imports them at every start. */
    "~/.cache/opencode",
};

/* The agents' own directories: their state (sessions, history, logs,
 * credentials, caches) stays writable. ~/.pi/agent is listed so that it is a
 * mount point of its own: renamed away, it would take the read-only files
 * below with it and let a fresh directory take its place. */
static const char *const agent_state[] = {"~/.claude", "~/.codex", "~/.pi", "~/.pi/agent"};

/* What the agents read as settings, instructions or code, and what the next
 * unsandboxed run of the agent would obey: hooks, status line and helper
 * commands, MCP servers, notify programs, commands, sub-agents, skills,
 * plugins, instructions. Read-only whether or not they exist yet. */
static const char *const agent_config[] = {
    /* Claude Code. ~/.claude.json holds mcpServers (commands run on the
     * host); Claude Code inside keeps its own copy (see agent_state.c).
     * ~/.claude/.config.json, when present, is read instead of it. */
    "~/.claude.json",
    "~/.claude/.config.json",
    "~/.claude/settings.json",
    "~/.claude/settings.local.json",
    "~/.claude/remote-settings.json", /* cached managed settings */
    "~/.claude/keybindings.json",
    "~/.claude/CLAUDE.md",
    "~/.claude/rules",
    "~/.claude/commands",
    "~/.claude/agents",
    "~/.claude/skills",
    "~/.claude/plugins",
    "~/.claude/hooks",
    "~/.claude/output-styles",
    "~/.claude/workflows",
    "~/.claude/local", /* the "local" installation: `claude` itself */
    /* Sourced before each command a session runs, by the session that
     * wrote them, which may be a Claude Code running on the host now:
     * the shell snapshots and the env files of SessionStart hooks. */
    "~/.claude/shell-snapshots",
    "~/.claude/session-env",
    "~/.claude/scripts",
    "~/.claude/bin",
    /* Codex. config.toml holds notify, mcp_servers, profiles and project
     * trust; rules/ is the exec policy that approves commands. */
    "~/.codex/config.toml",
    "~/.codex/managed_config.toml",
    "~/.codex/requirements.toml",
    "~/.codex/hooks.json",
    "~/.codex/AGENTS.md",
    "~/.codex/AGENTS.override.md",
    "~/.codex/prompts",
    "~/.codex/skills",
    "~/.codex/rules",
    "~/.codex/plugins",
    "~/.codex/shell_snapshots", /* sourced before commands, like Claude Code's */
    "~/.codex/scripts",
    "~/.codex/bin",
    /* Loaded into Codex's own environment at every start (dotenv): a
     * BASH_ENV or OPENAI_BASE_URL there reaches the next Codex on the
     * host. Claude Code and pi read no such file from their directories. */
    "~/.codex/.env",
    /* pi. auth.json and models.json may name a shell command for a key
     * ("!cmd"); settings.json lists packages to install; extensions, tools
     * and hooks are code; bin holds the fd and rg that pi runs; git holds
     * the packages installed from git. */
    "~/.pi/agent/settings.json",
    "~/.pi/agent/models.json",
    "~/.pi/agent/auth.json",
    "~/.pi/agent/keybindings.json",
    "~/.pi/agent/AGENTS.md",
    "~/.pi/agent/CLAUDE.md",
    "~/.pi/agent/SYSTEM.md",
    "~/.pi/agent/APPEND_SYSTEM.md",
    "~/.pi/agent/extensions",
    "~/.pi/agent/skills",
    "~/.pi/agent/prompts",
    "~/.pi/agent/commands",
    "~/.pi/agent/tools",
    "~/.pi/agent/hooks",
    "~/.pi/agent/bin",
    "~/.pi/agent/git",
    /* The agents whose state directories only their profile makes
     * writable (agent_profile.c): what lies there that the next run on the
     * host obeys or runs. Gemini CLI: settings (MCP servers, hooks), its
     * dotenv file, instructions, commands, extensions, policies, skills,
     * the system prompt file and the folders it trusts (whose project
     * settings it then loads). */
    "~/.gemini/settings.json",
    "~/.gemini/.env",
    "~/.gemini/GEMINI.md",
    "~/.gemini/AGENTS.md",
    "~/.gemini/system.md",
    "~/.gemini/trustedFolders.json",
    "~/.gemini/commands",
    "~/.gemini/extensions",
    "~/.gemini/hooks",
    "~/.gemini/policies",
    "~/.gemini/skills",
    "~/.gemini/agents",
    "~/.gemini/bin",
    /* Its checkpoints are git repositories that the host's Gemini CLI
     * runs git in: a planted config (core.fsmonitor, hooks) would run
     * there. */
    "~/.gemini/history",
    /* opencode downloads language servers into its data directory and
     * runs them; its snapshots are git directories that it runs git with
     * at every step, as the gemini checkpoints above; its config
     * directory holds plugins, tools and MCP servers. */
    "~/.local/share/opencode/bin",
    "~/.local/share/opencode/snapshot",
    "~/.config/opencode",
    /* aider loads this dotenv file at every start: AIDER_LINT_CMD or
     * AIDER_TEST_CMD there would run on the host. */
    "~/.aider/oauth-keys.env",
    /* goose's config names the extensions it starts (commands) and the
     * tools it approves. */
    "~/.config/goose",
};

/* Hook and status line scripts are often kept loose in the agent's
 * directory under any name (Claude Code's /statusline writes
 * ~/.claude/statusline-command.sh); the settings that name them are
 * read-only, so the scripts are too. */
static const char *const agent_script_dirs[] = {"~/.claude", "~/.codex", "~/.pi/agent", "~/.gemini",
						"~/.aider"};
static const char *const script_suffixes[] = {"sh",  "bash", "zsh", "fish", "py", "js",
					      "mjs", "cjs",  "ts",  "rb",   "pl"};

/* Project files that host tools execute or obey: an IDE, an agent or a hook
 * manager started later, outside the sandbox, runs what they say. */
static const char *const agent_configs[] = {
    /* Claude Code: settings (hooks, permissions, env, apiKeyHelper),
     * commands, sub-agents, hook scripts and skills (scripts it runs). */
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/commands",
    ".claude/agents",
    ".claude/hooks",
    ".claude/skills",
    ".mcp.json",
    /* Codex's project config layer, and pi's (settings, extensions, and
     * the packages it installs into .pi/npm and .pi/git). */
    ".codex",
    ".pi",
    /* VS Code: settings (interpreter, tool paths, terminal env), tasks
     * (runOn folderOpen), launch, MCP servers; a .code-workspace file
     * carries all of them. */
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".vscode/launch.json",
    ".vscode/mcp.json",
    "*.code-workspace",
    ".idea/workspace.xml",
    /* Dev containers: initializeCommand runs on the host, often as a
     * script kept beside devcontainer.json, so the whole directory. */
    ".devcontainer",
    ".devcontainer.json",
    /* Cursor's and Gemini CLI's MCP servers and hooks. */
    ".cursor/mcp.json",
    ".cursor/hooks.json",
    ".gemini/settings.json",
    /* direnv and git. */
    ".envrc",
    ".gitmodules",
    /* mise runs a trusted config's hooks and env scripts when the shell
     * enters the directory; outside its paranoid mode the trust belongs to
     * the path, not the content. Every place it reads one from: the
     * MISE_ENV variants (mise.dev.toml, .config/mise.local.toml, ...),
     * .config/mise/ with its conf.d, mise/ and .mise/, and .miserc.toml,
     * which picks the MISE_ENV. A "path:" version in .tool-versions puts
     * a project directory first on PATH. */
    "mise.toml",
    ".mise.toml",
    "mise.*.toml",
    ".mise.*.toml",
    ".config/mise.toml",
    ".config/mise.*.toml",
    ".config/mise",
    "mise/config.toml",
    "mise/config.*.toml",
    ".mise",
    ".miserc.toml",
    ".tool-versions",
    /* Hook managers: what they name runs at the next commit on the host. */
    ".husky",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook",
    ".lefthook-local",
    ".overcommit.yml",
};

/* Directories that hold protected files: each becomes a mount point, which
 * cannot be renamed (`mv .vscode x; mkdir .vscode` would otherwise leave the
 * read-only tasks.json behind under another name). */
static const char *const agent_config_dirs[] = {".claude", ".vscode", ".idea", ".cursor",
						".gemini", ".config", "mise"};

static const char *const lint_ts[] = {
    ".eslintrc",     ".eslintrc.*",	"eslint.config.*",   ".eslintignore",
    ".prettierrc",   ".prettierrc.*",	"prettier.config.*", ".prettierignore",
    "biome.json",    "biome.jsonc",	".stylelintrc*",     "stylelint.config.*",
    "tsconfig.json", "tsconfig.*.json", ".lintstagedrc*",    "lint-staged.config.*",
};
static const char *const lint_go[] = {".golangci.*", "revive.toml"};
static const char *const lint_python[] = {
    "ruff.toml",
    ".ruff.toml",
    ".flake8",
    ".pylintrc",
    "pylintrc",
    "mypy.ini",
    ".mypy.ini",
    ".isort.cfg",
    "pyrightconfig.json",
    ".bandit",
    /* The tools' [tool.*] sections live here too; setup.cfg also carries
     * flake8's and isort's. */
    "pyproject.toml",
    "setup.cfg",
    ".editorconfig",
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
	    {P_BASE, "@base"},
	    {P_CACHES, "@caches"},
	    {P_AGENTS, "@agents"},
	    {P_GIT, "@git"},
	    {P_GIT_STRICT, "@git-strict"},
	    {P_AGENT_CONFIGS, "@agent-configs"},
	    {P_LINT_TS, "@lint/ts"},
	    {P_LINT_GO, "@lint/go"},
	    {P_LINT_PYTHON, "@lint/python"},
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

/* The agents' configuration is kept read-only as a protection, never as a
 * grant: beneath a directory hidden by another rule (the daemon user's
 * ~/.claude, which no session of `serve` may read), it stays hidden. */
static void add_protection(struct rule_list *out, const char *pattern, const char *origin)
{
	rule_list_add_tightening(out, pattern, ACCESS_RO, LAYER_PRESET, origin);
}

/* One agent directory's scripts, by suffix; "~/.claude" may be a literal
 * CLAUDE_CONFIG_DIR, so it is escaped when it is not written with "~". */
static void add_scripts(struct rule_list *out, const char *dir, bool literal)
{
	_cleanup_free_ char *escaped = literal ? pattern_escape(dir) : xstrdup(dir);
	for (size_t i = 0; i < ARRAY_SIZE(script_suffixes); i++) {
		_cleanup_free_ char *glob = xasprintf("%s/*.%s", escaped, script_suffixes[i]);
		add_protection(out, glob, "@agents");
	}
}

static void expand_agents(const struct preset_context *ctx, struct rule_list *out)
{
	add_all(out, agent_state, ARRAY_SIZE(agent_state), ACCESS_RW, "@agents");
	for (size_t i = 0; i < ARRAY_SIZE(agent_config); i++)
		add_protection(out, agent_config[i], "@agents");
	for (size_t i = 0; i < ARRAY_SIZE(agent_script_dirs); i++)
		add_scripts(out, agent_script_dirs[i], false);

	/* A CLAUDE_CONFIG_DIR of the user's own is Claude Code's directory on
	 * the host: the same split applies there, and its .claude.json is the
	 * host's global config (there is no room for a copy of the
	 * sandbox's own, so Claude Code inside cannot save it). */
	const char *dir = ctx->claude_config_dir;
	if (!dir || dir[0] != '/')
		return;
	add_literal(out, dir, ACCESS_RW, "@agents (CLAUDE_CONFIG_DIR)");
	_cleanup_free_ char *global = xasprintf("%s/.claude.json", dir);
	_cleanup_free_ char *global_escaped = pattern_escape(global);
	add_protection(out, global_escaped, "@agents (CLAUDE_CONFIG_DIR)");
	for (size_t i = 0; i < ARRAY_SIZE(agent_config); i++) {
		const char *p = agent_config[i];
		if (strncmp(p, "~/.claude/", 10) != 0)
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, p + 10);
		_cleanup_free_ char *escaped = pattern_escape(path);
		add_protection(out, escaped, "@agents (CLAUDE_CONFIG_DIR)");
	}
	add_scripts(out, dir, true);
}

/* The same secrets where XDG_CONFIG_HOME or XDG_DATA_HOME move them: git's
 * credential store and fish's history follow those variables. */
static void add_xdg_secrets(const struct preset_context *ctx, struct rule_list *out)
{
	static const struct {
		const char *var;
		const char *rel;
	} moved[] = {
	    {"XDG_CONFIG_HOME", "git/credentials"},
	    {"XDG_DATA_HOME", "fish/fish_history"},
	};
	for (size_t i = 0; ctx->envp && i < ARRAY_SIZE(moved); i++) {
		const char *dir = env_get(ctx->envp, moved[i].var);
		if (!dir || dir[0] != '/')
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, moved[i].rel);
		add_literal(out, path, ACCESS_EXCLUDE, "@base");
	}
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
		add_xdg_secrets(ctx, out);
		add_all(out, system_secrets, ARRAY_SIZE(system_secrets), ACCESS_EXCLUDE, "@base");
		rule_list_add(out, ".agent-sandbox*", ACCESS_RO, LAYER_PRESET, "@base");
		if (ctx->global_config_dir)
			add_literal(out, ctx->global_config_dir, ACCESS_RO,
				    "@base (global config)");
		for (size_t i = 0; ctx->config_files && i < ctx->config_files->len; i++)
			add_literal(out, ctx->config_files->items[i], ACCESS_RO,
				    "@base (loaded config)");
	}
	if (set & P_CACHES) {
		add_all(out, caches, ARRAY_SIZE(caches), ACCESS_RW, "@caches");
		add_all(out, cache_code, ARRAY_SIZE(cache_code), ACCESS_RO, "@caches");
		add_all(out, cache_neighbours, ARRAY_SIZE(cache_neighbours), ACCESS_RO, "@caches");
	}
	if (set & P_AGENTS)
		expand_agents(ctx, out);
	if (set & P_AGENT_CONFIGS) {
		/* Mount points only, at the level of what covers them: one that is
		 * a symlink out of the project opens nothing. */
		for (size_t i = 0; i < ARRAY_SIZE(agent_config_dirs); i++)
			rule_list_add_tightening(out, agent_config_dirs[i], ACCESS_RW, LAYER_PRESET,
						 "@agent-configs (pinned)");
		add_all(out, agent_configs, ARRAY_SIZE(agent_configs), ACCESS_RO, "@agent-configs");
	}
	if (set & (P_GIT | P_GIT_STRICT))
		preset_git_expand(set & P_GIT_STRICT, ctx, out);
	if (set & P_LINT_TS)
		add_all(out, lint_ts, ARRAY_SIZE(lint_ts), ACCESS_RO, "@lint/ts");
	if (set & P_LINT_GO)
		add_all(out, lint_go, ARRAY_SIZE(lint_go), ACCESS_RO, "@lint/go");
	if (set & P_LINT_PYTHON)
		add_all(out, lint_python, ARRAY_SIZE(lint_python), ACCESS_RO, "@lint/python");
}
