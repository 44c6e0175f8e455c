/* This file is the one table of built-in host groups; README.md shows the
 * same table to users. Entries are exact names wherever the services
 * publish them, and wildcards only where a service spreads over many
 * subdomains of a name it owns outright. */
#include "net/host_groups.h"

#include <string.h>

#include "base/cleanup.h"

static const char *const agents[] = {
    "api.anthropic.com",		 /* Claude */
    "statsig.anthropic.com",		 /* Claude Code feature flags */
    "console.anthropic.com",		 /* Claude Code sign-in */
    "claude.ai",			 /* Claude Code sign-in */
    "api.openai.com",			 /* OpenAI, Codex CLI */
    "auth.openai.com",			 /* Codex CLI sign-in */
    "chatgpt.com",			 /* Codex CLI with a ChatGPT plan */
    "generativelanguage.googleapis.com", /* Google AI (Gemini API) */
    "aiplatform.googleapis.com",	 /* Google Vertex AI */
    "openrouter.ai",			 /* OpenRouter */
    "api.mistral.ai",			 /* Mistral */
    "api.deepseek.com",			 /* DeepSeek */
    "api.groq.com",			 /* Groq */
    "api.x.ai",				 /* xAI */
    "api.together.xyz",			 /* Together AI */
    "api.fireworks.ai",			 /* Fireworks AI */
    "api.cohere.com",			 /* Cohere */
    NULL,
};

static const char *const registries[] = {
    "registry.npmjs.org",     /* npm */
    "registry.yarnpkg.com",   /* yarn (npm mirror) */
    "pypi.org",		      /* PyPI index */
    "files.pythonhosted.org", /* PyPI downloads */
    "crates.io",	      /* Rust */
    "index.crates.io",	      /* Rust sparse index */
    "static.crates.io",	      /* Rust downloads */
    "proxy.golang.org",	      /* Go modules */
    "sum.golang.org",	      /* Go checksum database */
    "deb.debian.org",	      /* Debian */
    "security.debian.org",    /* Debian security */
    "archive.ubuntu.com",     /* Ubuntu */
    "security.ubuntu.com",    /* Ubuntu security */
    "ports.ubuntu.com",	      /* Ubuntu, other architectures */
    "rubygems.org",	      /* RubyGems */
    "index.rubygems.org",     /* RubyGems compact index */
    "repo.maven.apache.org",  /* Maven Central */
    "repo1.maven.org",	      /* Maven Central */
    NULL,
};

static const char *const git_hosts[] = {
    "github.com",
    "api.github.com",
    "codeload.github.com",
    "objects.githubusercontent.com",
    "raw.githubusercontent.com",
    "gitlab.com",
    "bitbucket.org",
    NULL,
};

const struct host_group host_groups[] = {
    {"@agents", "APIs of coding agents and model providers", agents},
    {"@registries", "package registries and distribution archives", registries},
    {"@git-hosts", "GitHub, GitLab and Bitbucket", git_hosts},
};
const size_t host_groups_len = ARRAY_SIZE(host_groups);

const struct host_group *host_group_lookup(const char *name)
{
	for (size_t i = 0; i < host_groups_len; i++)
		if (!strcmp(host_groups[i].name, name))
			return &host_groups[i];
	return NULL;
}
