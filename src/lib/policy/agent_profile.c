/* The one table of built-in agent profiles; README.md shows the same table
 * to users. A profile only adds: state directories, variables and hosts.
 * What the agents read as settings or run as code in those directories is
 * @agents' to keep read-only (preset.c), with or without a profile. */
#include "policy/agent_profile.h"

#include <string.h>

#include "base/cleanup.h"
#include "base/suggest.h"

/* Claude Code. Its global config, ~/.claude.json, stays read-only: with
 * @agents, CLAUDE_CONFIG_DIR=~/.claude points Claude Code inside at a copy
 * of its own (agent_state.c), so that is not repeated here. IS_SANDBOX=1
 * lets it take --dangerously-skip-permissions as root; the sandbox is what
 * that flag asks for. An update would replace the program the host runs. */
static const char *const claude_commands[] = {"claude", NULL};
static const char *const claude_state[] = {"~/.claude", NULL};
static const char *const claude_env[] = {"IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1", NULL};
static const char *const claude_hosts[] = {"api.anthropic.com", "statsig.anthropic.com",
					   "console.anthropic.com", "claude.ai", NULL};
static const char *const claude_keys[] = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
					  "CLAUDE_CODE_OAUTH_TOKEN", NULL};

/* Codex CLI: everything under CODEX_HOME, ~/.codex by default (sessions,
 * history, logs, auth.json, its sqlite state). Its own sandbox runs bwrap,
 * which needs a user namespace: the seccomp filter refuses that inside
 * (a nested namespace is where the kernel's namespace bugs are reached),
 * and this sandbox already confines every command Codex runs, so
 * Codex's is turned off rather than let through. It signs in at
 * auth.openai.com and, with a ChatGPT plan, talks to chatgpt.com; it
 * fetches from github.com (its own releases, plugins). */
static const char *const codex_commands[] = {"codex", NULL};
static const char *const codex_state[] = {"~/.codex", NULL};
static const char *const codex_hosts[] = {"api.openai.com", "auth.openai.com", "chatgpt.com",
					  "github.com", NULL};
static const char *const codex_keys[] = {"OPENAI_API_KEY", "CODEX_API_KEY", NULL};
/* Codex reads no base-URL variable for its built-in provider (and tries a
 * WebSocket there first): with the openai credential injected, a provider
 * of its own points it at the endpoint, over plain HTTP streaming. */
static const char *const codex_credential_args[] = {
    "-c", "model_provider=\"agent-sandbox\"", "-c",
    "model_providers.agent-sandbox={name=\"agent-sandbox\",base_url=\"{base_url}\","
    "env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}",
    NULL};

/* Gemini CLI: ~/.gemini holds its sessions (tmp/), history, OAuth
 * credentials and installation id; its settings, .env, GEMINI.md,
 * commands, extensions and hooks are @agents' read-only part. */
static const char *const gemini_commands[] = {"gemini", NULL};
static const char *const gemini_state[] = {"~/.gemini", NULL};
static const char *const gemini_hosts[] = {"generativelanguage.googleapis.com",
					   "cloudcode-pa.googleapis.com", "oauth2.googleapis.com",
					   NULL};
static const char *const gemini_keys[] = {"GEMINI_API_KEY", "GOOGLE_API_KEY", NULL};

/* opencode: its data (auth.json, sessions, logs) in ~/.local/share/opencode;
 * its config in ~/.config/opencode stays read-only (plugins, commands and
 * MCP servers are code and commands). It reads models.dev's catalogue. */
static const char *const opencode_commands[] = {"opencode", NULL};
static const char *const opencode_state[] = {"~/.local/share/opencode", "~/.local/state/opencode",
					     NULL};
static const char *const opencode_env[] = {"OPENCODE_DISABLE_AUTOUPDATE=1", NULL};
static const char *const opencode_hosts[] = {"opencode.ai", "models.dev", NULL};
static const char *const provider_keys[] = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
					    "OPENROUTER_API_KEY", NULL};

/* aider keeps its caches and analytics id in ~/.aider, its chat history in
 * the project (writable already). ~/.aider.conf.yml and ~/.env, which
 * name commands it runs (lint-cmd, test-cmd), stay read-only with the
 * rest of the home; ~/.aider/oauth-keys.env, loaded at every start, is
 * @agents' read-only part. */
static const char *const aider_commands[] = {"aider", NULL};
static const char *const aider_state[] = {"~/.aider", NULL};
static const char *const aider_env[] = {"AIDER_CHECK_UPDATE=false", NULL};

/* goose: sessions in ~/.local/share/goose, logs in ~/.local/state/goose.
 * ~/.config/goose (config.yaml names the extensions it starts, permission
 * files approve tools) stays read-only; there is no keyring inside, so
 * its secrets go to a file, which it then cannot save there either. */
static const char *const goose_commands[] = {"goose", NULL};
static const char *const goose_state[] = {"~/.local/share/goose", "~/.local/state/goose", NULL};
static const char *const goose_env[] = {"GOOSE_DISABLE_KEYRING=1", NULL};

/* pi: sessions in ~/.pi/agent, beside the settings, models and extensions
 * that @agents keeps read-only. */
static const char *const pi_commands[] = {"pi", NULL};
static const char *const pi_state[] = {"~/.pi", "~/.pi/agent", NULL};

static const char *const none[] = {NULL};

const struct agent_profile agent_profiles[] = {
    {
	.name = "claude",
	.commands = claude_commands,
	.state = claude_state,
	.env = claude_env,
	.hosts = claude_hosts,
	.keys = claude_keys,
	.credential = "anthropic",
	.note = "--dangerously-skip-permissions works, as root too (IS_SANDBOX=1): this sandbox "
		"is the boundary it asks for",
    },
    {
	.name = "codex",
	.commands = codex_commands,
	.state = codex_state,
	.env = none,
	.hosts = codex_hosts,
	.keys = codex_keys,
	.credential = "openai",
	.credential_args = codex_credential_args,
	.note = "its own sandbox (bwrap) cannot start inside this one, which confines it "
		"already: run codex --sandbox danger-full-access (codex exec too), or "
		"--dangerously-bypass-approvals-and-sandbox for no prompts",
    },
    {
	.name = "gemini",
	.commands = gemini_commands,
	.state = gemini_state,
	.env = none,
	.hosts = gemini_hosts,
	.keys = gemini_keys,
    },
    {
	.name = "opencode",
	.commands = opencode_commands,
	.state = opencode_state,
	.env = opencode_env,
	.hosts = opencode_hosts,
	.keys = provider_keys,
    },
    {
	.name = "aider",
	.commands = aider_commands,
	.state = aider_state,
	.env = aider_env,
	.hosts = none,
	.keys = provider_keys,
    },
    {
	.name = "goose",
	.commands = goose_commands,
	.state = goose_state,
	.env = goose_env,
	.hosts = none,
	.keys = provider_keys,
    },
    {
	.name = "pi",
	.commands = pi_commands,
	.state = pi_state,
	.env = none,
	.hosts = none,
	.keys = provider_keys,
    },
};
const size_t agent_profiles_len = ARRAY_SIZE(agent_profiles);

const struct agent_profile *agent_profile_lookup(const char *name)
{
	for (size_t i = 0; i < agent_profiles_len; i++)
		if (!strcmp(agent_profiles[i].name, name))
			return &agent_profiles[i];
	return NULL;
}

const struct agent_profile *agent_profile_for_command(const char *argv0)
{
	if (!argv0)
		return NULL;
	const char *slash = strrchr(argv0, '/');
	const char *base = slash ? slash + 1 : argv0;
	for (size_t i = 0; i < agent_profiles_len; i++)
		for (const char *const *c = agent_profiles[i].commands; *c; c++)
			if (!strcmp(*c, base))
				return &agent_profiles[i];
	return NULL;
}

void agent_profile_list_names(struct strbuf *sb)
{
	for (size_t i = 0; i < agent_profiles_len; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", agent_profiles[i].name);
}

const char *agent_profile_suggest(const char *name)
{
	const char *names[ARRAY_SIZE(agent_profiles)];
	for (size_t i = 0; i < agent_profiles_len; i++)
		names[i] = agent_profiles[i].name;
	return suggest_nearest(name, names, agent_profiles_len);
}
