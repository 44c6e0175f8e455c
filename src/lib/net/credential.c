/* This file is the table of built-in credentials and how a run turns them
 * on: the config's "credentials" entries override or add to the table, the
 * key is checked on the host (never copied into the spec), and each
 * upstream gets a local endpoint port and the variables that point the
 * agent at it. The key reaches only the proxy, through
 * credential_read_key at launch. */
#include "net/credential.h"

#include <dirent.h>
#include <openssl/evp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "policy/env.h"
#include "policy/path.h"

/* The most bytes a key file may hold. */
#define KEY_FILE_MAX 8192

struct builtin_host {
	const char *host;
	const char *header;
	const char *prefix;
	bool git_basic;
	const char *base_url_env;
	const char *base_url_path;
	bool git_instead_of;
};

struct builtin {
	const char *name;
	const char *env[2];
	struct builtin_host hosts[2];
	/* Where the agents keep their own login for that account ("~/..."):
	 * hidden while the key is injected, or the agent would read a token
	 * as good as the key there. */
	const char *logins[2];
};

/* The one table. Codex and the OpenAI SDKs read OPENAI_BASE_URL with the
 * API's /v1 prefix; Claude Code and the Anthropic SDKs read
 * ANTHROPIC_BASE_URL without it. git sends Basic auth to github.com
 * (x-access-token:TOKEN, as GitHub documents for tokens); the REST API
 * takes Bearer. */
static const struct builtin builtins[] = {
    {"anthropic",
     {"ANTHROPIC_API_KEY"},
     {{"api.anthropic.com", "x-api-key", "", false, "ANTHROPIC_BASE_URL", "", false}},
     {"~/.claude/.credentials.json"}},
    {"openai",
     {"OPENAI_API_KEY"},
     {{"api.openai.com", "Authorization", "Bearer ", false, "OPENAI_BASE_URL", "/v1", false}},
     {"~/.codex/auth.json"}},
    {"github",
     {"GITHUB_TOKEN", "GH_TOKEN"},
     {{"github.com", "Authorization", "Basic ", true, NULL, "", true},
      {"api.github.com", "Authorization", "Bearer ", false, "GITHUB_API_URL", "", false}},
     /* gh's hosts.yml is hidden by @base already. */
     {NULL}},
};

void credential_stored_logins(const struct credential *c, struct strv *out)
{
	const struct builtin *b = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(builtins) && !b; i++)
		if (!strcmp(builtins[i].name, c->name))
			b = &builtins[i];
	for (size_t i = 0; b && i < ARRAY_SIZE(b->logins) && b->logins[i]; i++)
		strv_push(out, b->logins[i]);
}

const char *credential_builtin_names(void)
{
	return "anthropic, openai, github";
}

static const struct builtin *find_builtin(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(builtins); i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

static const struct config_credential *find_configured(const struct config *cfg, const char *name)
{
	/* A later layer's entry wins; only the global config has any. */
	for (size_t i = cfg->credentials.len; i-- > 0;)
		if (!strcmp(cfg->credentials.items[i].name, name))
			return &cfg->credentials.items[i];
	return NULL;
}

bool credential_known(const struct config *cfg, const char *name)
{
	return find_builtin(name) || find_configured(cfg, name);
}

static bool port_taken(uint16_t port, const uint16_t *taken, size_t taken_len,
		       const struct credential_set *set)
{
	for (size_t i = 0; i < taken_len; i++)
		if (taken[i] == port)
			return true;
	for (size_t i = 0; i < set->len; i++)
		for (size_t j = 0; j < set->items[i].endpoints_len; j++)
			if (set->items[i].endpoints[j].port == port)
				return true;
	return false;
}

static void add_endpoint(struct credential *c, struct credential_endpoint e)
{
	c->endpoints = xreallocarray(c->endpoints, c->endpoints_len + 1, sizeof(*c->endpoints));
	c->endpoints[c->endpoints_len++] = e;
}

static char *make_placeholder(void)
{
	/* Random, never derived from the key: it tells nothing about it. */
	uint8_t bytes[16];
	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
		abort();
	char hex[sizeof(bytes) * 2 + 1];
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
	return xasprintf("agent-sandbox-credential-%s", hex);
}

/* "Authorization: Bearer" into a header and a prefix ("Bearer "). */
static void split_header(const char *text, char **header, char **prefix)
{
	size_t n = strcspn(text, ":");
	*header = xstrndup(text, n);
	const char *p = text + n;
	if (*p == ':')
		p++;
	p += strspn(p, " \t");
	*prefix = *p ? xasprintf("%s ", p) : xstrdup("");
}

static int build_one(const struct config *cfg, const char *name, const char *home,
		     struct credential *c, struct error *err)
{
	const struct builtin *b = find_builtin(name);
	const struct config_credential *cc = find_configured(cfg, name);
	*c = (struct credential){.env = STRV_INIT};
	if (!b && !cc)
		return error_set(err, ERROR_USAGE,
				 "unknown credential \"%s\" (built in: %s; others are defined in "
				 "\"credentials\" of your global config)",
				 name, credential_builtin_names());
	*c = (struct credential){.name = xstrdup(name),
				 .env = STRV_INIT,
				 .origin = xstrdup(cc ? cc->origin : "built-in")};
	if (cc && cc->file) {
		if (path_expand(cc->file, home, "/", &c->file, err) < 0)
			return error_prefix(err, "credential %s (%s): \"file\"", name, cc->origin);
	} else if (cc && cc->env) {
		strv_push(&c->env, cc->env);
	} else if (b) {
		for (size_t i = 0; i < ARRAY_SIZE(b->env) && b->env[i]; i++)
			strv_push(&c->env, b->env[i]);
	} else {
		return error_set(err, ERROR_CONFIG,
				 "credential %s (%s) names neither \"env\" nor \"file\": where "
				 "does its key come from?",
				 name, cc->origin);
	}
	if (cc && cc->ca && path_expand(cc->ca, home, "/", &c->ca, err) < 0)
		return error_prefix(err, "credential %s (%s): \"ca\"", name, cc->origin);
	if (cc && cc->hosts.len) {
		/* Hosts of a configured entry: the built-in's way to send the
		 * key for a host it knows, else the entry's header (Bearer by
		 * default). */
		for (size_t i = 0; i < cc->hosts.len; i++) {
			const struct builtin_host *bh = NULL;
			for (size_t j = 0; b && j < ARRAY_SIZE(b->hosts) && b->hosts[j].host; j++)
				if (!strcmp(b->hosts[j].host, cc->hosts.items[i]))
					bh = &b->hosts[j];
			struct credential_endpoint e = {.host = xstrdup(cc->hosts.items[i])};
			if (bh && !cc->header) {
				e.header = xstrdup(bh->header);
				e.prefix = xstrdup(bh->prefix);
				e.git_basic = bh->git_basic;
				e.git_instead_of = bh->git_instead_of;
				e.base_url_env =
				    bh->base_url_env ? xstrdup(bh->base_url_env) : NULL;
				e.base_url_path = xstrdup(bh->base_url_path);
			} else {
				split_header(cc->header ? cc->header : "Authorization: Bearer",
					     &e.header, &e.prefix);
				e.base_url_path = xstrdup("");
			}
			if (i == 0 && cc->base_url_env) {
				free(e.base_url_env);
				e.base_url_env = xstrdup(cc->base_url_env);
			}
			add_endpoint(c, e);
		}
	} else if (b) {
		for (size_t j = 0; j < ARRAY_SIZE(b->hosts) && b->hosts[j].host; j++) {
			const struct builtin_host *bh = &b->hosts[j];
			struct credential_endpoint e = {
			    .host = xstrdup(bh->host),
			    .git_basic = bh->git_basic,
			    .git_instead_of = bh->git_instead_of,
			    .base_url_env = bh->base_url_env ? xstrdup(bh->base_url_env) : NULL,
			    .base_url_path = xstrdup(bh->base_url_path),
			};
			if (cc && cc->header)
				split_header(cc->header, &e.header, &e.prefix);
			else
				e.header = xstrdup(bh->header), e.prefix = xstrdup(bh->prefix);
			if (j == 0 && cc && cc->base_url_env) {
				free(e.base_url_env);
				e.base_url_env = xstrdup(cc->base_url_env);
			}
			add_endpoint(c, e);
		}
	} else {
		return error_set(err, ERROR_CONFIG,
				 "credential %s (%s) names no \"hosts\": where may its key be "
				 "sent?",
				 name, cc->origin);
	}
	c->placeholder = make_placeholder();
	return 0;
}

int credential_read_key(const struct credential *c, char *const *envp, char **key,
			struct error *err)
{
	*key = NULL;
	if (c->file) {
		char *text = NULL;
		size_t len = 0;
		int r = read_file(c->file, KEY_FILE_MAX, &text, &len);
		if (r < 0)
			return error_errno(err, ERROR_USAGE, -r,
					   "credential %s: reading its key from %s", c->name,
					   c->file);
		while (len && strchr(" \t\r\n", text[len - 1]))
			text[--len] = '\0';
		*key = text;
	} else {
		for (size_t i = 0; i < c->env.len && !*key; i++) {
			const char *v = env_get(envp, c->env.items[i]);
			if (v && *v)
				*key = xstrdup(v);
		}
	}
	if (!*key || !**key) {
		free(*key);
		*key = NULL;
		_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
		for (size_t i = 0; i < c->env.len; i++)
			strbuf_addf(&names, "%s%s", i ? " or " : "", c->env.items[i]);
		if (c->file)
			return error_set(err, ERROR_USAGE,
					 "credential %s: the key file %s is empty", c->name,
					 c->file);
		error_set(err, ERROR_USAGE,
			  "credential %s: %s is not set on the host, so there is "
			  "no key to inject",
			  c->name, names.buf);
		error_hint(err, "export %s=... before running, or drop --credential %s",
			   c->env.items[0], c->name);
		return -1;
	}
	/* It goes into a header line: a byte that could end the line or
	 * start another header is refused, not sent. */
	for (const char *p = *key; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f) {
			explicit_bzero(*key, strlen(*key));
			free(*key);
			*key = NULL;
			return error_set(err, ERROR_USAGE,
					 "credential %s: the key holds a space, control or "
					 "non-ASCII byte; it cannot be sent in a header",
					 c->name);
		}
	return 0;
}

char *credential_header_line(const struct credential_endpoint *e, const char *key)
{
	if (!e->git_basic)
		return xasprintf("%s: %s%s", e->header, e->prefix, key);
	_cleanup_free_ char *pair = xasprintf("x-access-token:%s", key);
	size_t n = strlen(pair);
	_cleanup_free_ char *encoded = xmalloc((n + 2) / 3 * 4 + 1);
	EVP_EncodeBlock((unsigned char *)encoded, (const unsigned char *)pair, (int)n);
	char *line = xasprintf("%s: Basic %s", e->header, encoded);
	explicit_bzero(pair, strlen(pair));
	explicit_bzero(encoded, strlen(encoded));
	return line;
}

int credential_plan(const struct config *cfg, const struct strv *names, char *const *envp,
		    const char *home, const uint16_t *taken, size_t taken_len,
		    struct credential_set *out, struct error *err)
{
	*out = (struct credential_set){0};
	uint16_t next = CREDENTIAL_FIRST_PORT;
	for (size_t i = 0; names && i < names->len; i++) {
		bool seen = false;
		for (size_t j = 0; j < out->len; j++)
			seen |= !strcmp(out->items[j].name, names->items[i]);
		if (seen)
			continue;
		out->items = xreallocarray(out->items, out->len + 1, sizeof(*out->items));
		struct credential *c = &out->items[out->len];
		if (build_one(cfg, names->items[i], home, c, err) < 0) {
			out->len++;
			credential_set_release(out);
			return -1;
		}
		out->len++;
		/* The key must be there now: a run that would send nothing
		 * stops before anything starts. */
		char *key = NULL;
		if (credential_read_key(c, envp, &key, err) < 0) {
			credential_set_release(out);
			return -1;
		}
		explicit_bzero(key, strlen(key));
		free(key);
		for (size_t k = 0; k < c->endpoints_len; k++) {
			while (port_taken(next, taken, taken_len, out))
				next++;
			c->endpoints[k].port = next++;
		}
	}
	return 0;
}

static void set_var(struct strv *envp, const char *name, const char *value)
{
	_cleanup_free_ char *entry = xasprintf("%s=%s", name, value);
	env_put(envp, entry);
}

/* The most a git push through a credential endpoint sends in one request
 * body (git's http.postBuffer; git reserves it with malloc, and pages it
 * never touches cost no memory). */
#define GIT_POST_BUFFER "134217728"

/* Appends one GIT_CONFIG_KEY_n/VALUE_n pair after those already set. */
static void add_git_config(struct strv *envp, const char *key, const char *value)
{
	const char *count = env_get(strv_array(envp), "GIT_CONFIG_COUNT");
	unsigned long n = count ? strtoul(count, NULL, 10) : 0;
	_cleanup_free_ char *kname = xasprintf("GIT_CONFIG_KEY_%lu", n);
	_cleanup_free_ char *vname = xasprintf("GIT_CONFIG_VALUE_%lu", n);
	_cleanup_free_ char *nvalue = xasprintf("%lu", n + 1);
	set_var(envp, kname, key);
	set_var(envp, vname, value);
	set_var(envp, "GIT_CONFIG_COUNT", nvalue);
}

static void drop_var_at(struct strv *envp, size_t i)
{
	free(envp->items[i]);
	memmove(&envp->items[i], &envp->items[i + 1], (envp->len - i) * sizeof(char *));
	envp->len--;
}

void credential_apply_env(const struct credential_set *set, char *const *host_envp,
			  struct env_result *env)
{
	struct strv *envp = &env->envp;
	for (size_t i = 0; i < set->len; i++) {
		const struct credential *c = &set->items[i];
		/* A copy of the key under another name would undo the rest. */
		_cleanup_error_ struct error err = ERROR_INIT;
		char *key = NULL;
		if (credential_read_key(c, host_envp, &key, &err) == 0) {
			for (size_t k = 0; k < envp->len;) {
				const char *eq = strchr(envp->items[k], '=');
				if (eq && strstr(eq + 1, key)) {
					strv_push_owned(&env->dropped,
							xstrndup(envp->items[k],
								 (size_t)(eq - envp->items[k])));
					strv_pushf(&env->reasons, "holds the key of credential %s",
						   c->name);
					drop_var_at(envp, k);
				} else {
					k++;
				}
			}
			explicit_bzero(key, strlen(key));
			free(key);
		}
		for (size_t k = 0; k < c->env.len; k++)
			set_var(envp, c->env.items[k], c->placeholder);
		for (size_t k = 0; k < c->endpoints_len; k++) {
			const struct credential_endpoint *e = &c->endpoints[k];
			if (e->base_url_env) {
				_cleanup_free_ char *url =
				    xasprintf("http://127.0.0.1:%u%s", e->port, e->base_url_path);
				set_var(envp, e->base_url_env, url);
			}
			if (!e->git_instead_of)
				continue;
			/* git reads GIT_CONFIG_COUNT pairs as config of the
			 * command line: no file is written. A push larger
			 * than http.postBuffer goes out chunked, which the
			 * endpoint refuses (it must see where the body ends),
			 * so the endpoint's buffer is raised. */
			_cleanup_free_ char *from =
			    xasprintf("url.http://127.0.0.1:%u/.insteadOf", e->port);
			_cleanup_free_ char *to = xasprintf("https://%s/", e->host);
			_cleanup_free_ char *buffer =
			    xasprintf("http.http://127.0.0.1:%u/.postBuffer", e->port);
			add_git_config(envp, from, to);
			add_git_config(envp, buffer, GIT_POST_BUFFER);
		}
	}
}

/* The search for a key in home: how deep below a dot directory, and how
 * many files and bytes it reads at most. Start-up and login files are
 * small and near the top. */
#define KEY_SCAN_DEPTH 3
#define KEY_SCAN_FILES 4096
#define KEY_SCAN_FILE_MAX (256 * 1024)
#define KEY_SCAN_BYTES (32 * 1024 * 1024)

/* Directories of caches, toolchains, package stores and browsers: large,
 * and not where a key is kept by hand. */
static const char *const key_scan_skip[] = {
    ".cache",  ".npm",		 ".cargo",   ".rustup",	      ".local",	  ".git",
    ".m2",     ".gradle",	 ".nvm",     ".pyenv",	      ".rbenv",	  ".vscode-server",
    ".vscode", ".cursor-server", ".bun",     ".deno",	      ".yarn",	  ".pnpm-store",
    ".conda",  ".docker",	 ".mozilla", "google-chrome", "chromium", "node_modules",
};

struct key_scan {
	const char *key;
	size_t key_len;
	unsigned files;
	uint64_t bytes;
	struct strv *out;
};

static bool file_holds(struct key_scan *ks, const char *path, const struct stat *st)
{
	if (st->st_size > KEY_SCAN_FILE_MAX || ks->bytes + (uint64_t)st->st_size > KEY_SCAN_BYTES)
		return false;
	ks->files++;
	ks->bytes += (uint64_t)st->st_size;
	char *text = NULL;
	size_t len = 0;
	if (read_file(path, KEY_SCAN_FILE_MAX, &text, &len) < 0)
		return false;
	bool found = memmem(text, len, ks->key, ks->key_len) != NULL;
	explicit_bzero(text, len);
	free(text);
	return found;
}

static void scan_dir(struct key_scan *ks, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; ks->files < KEY_SCAN_FILES && (e = readdir(d)) != NULL;) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name);
		struct stat st, lst;
		/* A file through a symlink counts (dotfiles kept in a
		 * repository); a directory only as itself. */
		if (stat(path, &st) < 0 || lstat(path, &lst) < 0)
			continue;
		if (S_ISREG(st.st_mode)) {
			if (file_holds(ks, path, &st))
				strv_push(ks->out, path);
			continue;
		}
		if (!S_ISDIR(lst.st_mode) || depth <= 0)
			continue;
		bool skip = false;
		for (size_t i = 0; i < ARRAY_SIZE(key_scan_skip); i++)
			skip |= !strcmp(e->d_name, key_scan_skip[i]);
		if (!skip && (depth < KEY_SCAN_DEPTH || e->d_name[0] == '.'))
			scan_dir(ks, path, depth - 1);
	}
	closedir(d);
}

void credential_find_key_files(const struct credential *c, char *const *envp, const char *home,
			       struct strv *out)
{
	_cleanup_error_ struct error err = ERROR_INIT;
	char *key = NULL;
	if (!home || credential_read_key(c, envp, &key, &err) < 0)
		return;
	struct key_scan ks = {.key = key, .key_len = strlen(key), .out = out};
	/* The files of home, and its dot directories below it: not the
	 * visible ones (projects, documents), which are the work. */
	scan_dir(&ks, home, KEY_SCAN_DEPTH);
	explicit_bzero(key, strlen(key));
	free(key);
}

void credential_set_release(struct credential_set *set)
{
	for (size_t i = 0; i < set->len; i++) {
		struct credential *c = &set->items[i];
		free(c->name);
		strv_release(&c->env);
		free(c->file);
		free(c->ca);
		free(c->origin);
		free(c->placeholder);
		for (size_t k = 0; k < c->endpoints_len; k++) {
			struct credential_endpoint *e = &c->endpoints[k];
			free(e->host);
			free(e->header);
			free(e->prefix);
			free(e->base_url_env);
			free(e->base_url_path);
		}
		free(c->endpoints);
	}
	free(set->items);
	*set = (struct credential_set){0};
}
