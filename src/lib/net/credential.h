/* Credentials the host-side proxy injects, so that the agent never holds
 * the key: the built-in table (anthropic, openai, github), the config's
 * "credentials" entries over it, and what a run turns on. Inside, the
 * key's variables hold a per-session placeholder and a base-URL variable
 * points at a local plain-HTTP endpoint; the proxy adds the real key on
 * the way to the one upstream the credential names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strv.h"
#include "config/config.h"
#include "policy/env.h"

/* The first port the credential endpoints take inside the sandbox. */
#define CREDENTIAL_FIRST_PORT 14100

/* One upstream of a credential, and the local endpoint that reaches it. */
struct credential_endpoint {
	char *host;	     /* the upstream, normalised; always port 443 (or a pin's) */
	char *header;	     /* "x-api-key", "Authorization" */
	char *prefix;	     /* put before the key: "", "Bearer " */
	bool git_basic;	     /* Basic base64("x-access-token:" KEY) */
	uint16_t port;	     /* the endpoint's port on the sandbox's loopback */
	char *base_url_env;  /* the variable inside that points at it, or NULL */
	char *base_url_path; /* appended to the base URL ("/v1"), or "" */
	bool git_instead_of; /* git inside is pointed at it for https://HOST/ */
};

struct credential {
	char *name;
	struct strv env; /* host variables holding the key, the first set wins */
	char *file;	 /* or a file holding it (expanded), or NULL */
	char *ca;	 /* a PEM file replacing the system store, or NULL */
	char *origin;	 /* "built-in" or the config's "<file>:L:C" */
	char *placeholder;
	struct credential_endpoint *endpoints;
	size_t endpoints_len;
};

struct credential_set {
	struct credential *items;
	size_t len;
};

/* Appends where the agents keep their own login for the account of a
 * built-in credential ("~/.claude/.credentials.json"): hidden while its key
 * is injected. Nothing for a configured one. */
void credential_stored_logins(const struct credential *c, struct strv *out);

/* The names of the built-in credentials, for messages: "anthropic, ...". */
const char *credential_builtin_names(void);

/* Whether NAME is a built-in or configured credential. */
bool credential_known(const struct config *cfg, const char *name);

/* Turns on the credentials NAMES names (each once), from the built-in
 * table and the config's entries, checks that each key is there (in the
 * host's environment or its file) and fits in a header, and gives each
 * endpoint a port inside that none of `taken` uses. */
int credential_plan(const struct config *cfg, const struct strv *names, char *const *envp,
		    const char *home, const uint16_t *taken, size_t taken_len,
		    struct credential_set *out, struct error *err);

/* Reads the key of c: from the first variable of c->env set in envp, or
 * from c->file (trailing blanks and line ends removed). It must be
 * printable ASCII without spaces inside, so that it cannot end a header
 * line. The caller wipes and frees *key. */
int credential_read_key(const struct credential *c, char *const *envp, char **key,
			struct error *err);

/* The header line an endpoint sends upstream with KEY: "x-api-key: KEY". */
char *credential_header_line(const struct credential_endpoint *e, const char *key);

/* Sets the sandbox's environment for the credentials: the key variables
 * to the placeholder, the base-URL variables to the endpoints, git's
 * url.<endpoint>.insteadOf through GIT_CONFIG_COUNT, and drops any other
 * variable whose value holds a key (into env->dropped, with the reason). */
void credential_apply_env(const struct credential_set *set, char *const *host_envp,
			  struct env_result *env);

/* The files in home that hold the key of c, which the sandbox must hide:
 * the files directly in home (shell start-up files: an export in
 * ~/.bashrc, through a symlink too) and those in its dot directories, a
 * few levels down (an agent's login file, ~/.codex/auth.json), skipping
 * caches and toolchains. Bounded in files and bytes; appended to out. */
void credential_find_key_files(const struct credential *c, char *const *envp, const char *home,
			       struct strv *out);

void credential_set_release(struct credential_set *set);
