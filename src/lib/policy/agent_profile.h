/* Built-in agent profiles: what a known coding agent needs to work inside
 * the sandbox (its state directories, environment and hosts), as one
 * table of data. A profile applies when the command's basename matches one
 * of its commands, or when --agent names it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

struct agent_profile {
	const char *name;
	/* Basenames of argv[0] that select the profile. */
	const char *const *commands;
	/* Directories ("~/..." only) the agent keeps its state in: created on
	 * the host (mode 0700) on first use, writable inside, and still
	 * writable under --read-only (state is not the project) unless
	 * --read-only=strict. What the next agent on the host runs or obeys
	 * in them stays read-only: @agents lists it (preset.c). */
	const char *const *state;
	/* NAME=VALUE set inside; env.set and --env win. */
	const char *const *env;
	/* Hosts the agent calls, added to the filtered network's allow list
	 * (network.deny still wins). */
	const char *const *hosts;
	/* Variables holding the agent's API key: when the secret filter drops
	 * one, the front end says so and how to pass or inject it. */
	const char *const *keys;
	/* The built-in credential ("anthropic", "openai") that injects the
	 * agent's key without the agent holding it, or NULL. */
	const char *credential;
	/* Arguments put after argv[0] when that credential is injected and
	 * argv[0] is one of the commands: for an agent that takes its API's
	 * address from its options, not from a variable. "{base_url}" stands
	 * for the credential's endpoint inside. NULL: none. */
	const char *const *credential_args;
	/* How the agent's own sandbox and approval prompts fit inside this
	 * one, for `policy` and --debug; NULL when there is nothing to say. */
	const char *note;
};

extern const struct agent_profile agent_profiles[];
extern const size_t agent_profiles_len;

/* The profile named name, or NULL. */
const struct agent_profile *agent_profile_lookup(const char *name);

/* The profile whose commands include the basename of argv0, or NULL. */
const struct agent_profile *agent_profile_for_command(const char *argv0);

/* Appends "claude, codex, ..." to sb. */
void agent_profile_list_names(struct strbuf *sb);

/* The known name closest to a misspelled one, or NULL. */
const char *agent_profile_suggest(const char *name);
