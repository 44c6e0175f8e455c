/* Environment lookups, and the filter that decides which variables reach
 * the sandboxed command. The filter reports names, never values: values of
 * dropped variables are what it exists to keep away from the command. */
#include "policy/env.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "git/url_credentials.h"
#include "policy/pattern.h"
#include "base/xalloc.h"

const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

void env_put(struct strv *envp, const char *entry)
{
	size_t n = strcspn(entry, "=");
	for (size_t i = 0; i < envp->len; i++)
		if (!strncmp(envp->items[i], entry, n) && envp->items[i][n] == '=') {
			free(envp->items[i]);
			envp->items[i] = xstrdup(entry);
			return;
		}
	strv_push(envp, entry);
}

/* SPEC.md's list, then the other spellings that carry passwords, keys and
 * connection strings. Matched without regard to case, since a lower-case
 * github_token is as much a secret. "*_AUTH*" would take GIT_AUTHOR_NAME
 * and GIT_AUTHOR_EMAIL, which commits inside need, so the auth names are
 * spelt out: DOCKER_AUTH_CONFIG, NPM_CONFIG__AUTH, NGROK_AUTHTOKEN. MySQL's
 * client reads its password from MYSQL_PWD, sshpass from SSHPASS. */
static const char *const secret_name_patterns[] = {
    "*_KEY",  "*_SECRET", "*_TOKEN",	  "*PASSWORD*", "*CREDENTIAL*", "AWS_*",       "GITHUB_*",
    "*_PASS", "*_PASSWD", "*APIKEY*",	  "*_AUTH",	"*_AUTH_*",	"*_AUTHTOKEN", "SECRET*",
    "TOKEN",  "*_DSN",	  "DATABASE_URL", "*_PWD",	"SSHPASS",
};

/* The reason given for a *_URL variable dropped for its value. */
#define URL_WITH_PASSWORD "*_URL with user:password@"

const char *env_secret_pattern(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(secret_name_patterns); i++) {
		struct pattern p;
		pattern_compile(&p, secret_name_patterns[i], true);
		bool hit = pattern_match(&p, name);
		pattern_release(&p);
		if (hit)
			return secret_name_patterns[i];
	}
	return NULL;
}

/* A URL whose authority carries a password: "scheme://user:password@host".
 * Only the part before the first '/', '?' or '#' after "://" counts, so a
 * "user:pass@" in a path or query does not; "git@host" has no password. */
bool env_url_has_password(const char *value)
{
	const char *sep = strstr(value, "://");
	if (!sep)
		return false;
	const char *authority = sep + 3;
	size_t len = strcspn(authority, "/?#");
	const char *at = memrchr(authority, '@', len);
	return at && memchr(authority, ':', (size_t)(at - authority)) != NULL;
}

static bool is_url_name(const char *name)
{
	size_t len = strlen(name);
	return len > 4 && !strcasecmp(name + len - 4, "_URL");
}

/* The reason given for git configuration passed in the environment. */
#define GIT_ENV_CREDENTIALS "git config in the environment with credentials"

/* Git reads configuration from the environment as well as from files:
 * GIT_CONFIG_PARAMETERS (what "git -c" hands to the programs it runs) and
 * GIT_CONFIG_COUNT with GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n>, where
 * CI jobs put an http.extraHeader or a URL with a token. The copies of the
 * config files lose those; here the variables go, all of a family at once
 * (a count without its keys would stop git). */
static bool is_git_config_family(const char *name)
{
	return !strcmp(name, "GIT_CONFIG_COUNT") || !strncmp(name, "GIT_CONFIG_KEY_", 15) ||
	       !strncmp(name, "GIT_CONFIG_VALUE_", 17);
}

static bool git_value_has_credentials(const char *value)
{
	if (strcasestr(value, "extraheader") || (strcasestr(value, "proxy") && strchr(value, '@')))
		return true;
	struct strbuf sb = STRBUF_INIT;
	size_t n = git_strip_url_credentials(value, strlen(value), &sb);
	strbuf_release(&sb);
	return n > 0;
}

static bool git_env_has_credentials(char *const *envp, bool family)
{
	bool proxy_key = false, at_value = false;
	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(*e, (size_t)(eq - *e));
		bool ours =
		    family ? is_git_config_family(name) : !strcmp(name, "GIT_CONFIG_PARAMETERS");
		if (!ours)
			continue;
		if (git_value_has_credentials(eq + 1))
			return true;
		/* A proxy without a scheme, "user:password@host", in a value
		 * whose key is another variable. */
		proxy_key |= !strncmp(name, "GIT_CONFIG_KEY_", 15) && strcasestr(eq + 1, "proxy");
		at_value |= !strncmp(name, "GIT_CONFIG_VALUE_", 17) && strchr(eq + 1, '@');
	}
	return proxy_key && at_value;
}

static void build(struct pattern_set *set, const struct strv *texts)
{
	pattern_set_build(set, texts ? texts->items : NULL, texts ? texts->len : 0, false);
}

static void remove_name(struct strv *v, const char *name, size_t len)
{
	for (size_t i = 0; i < v->len;) {
		if (!strncmp(v->items[i], name, len) && v->items[i][len] == '=') {
			free(v->items[i]);
			memmove(&v->items[i], &v->items[i + 1], (v->len - i) * sizeof(*v->items));
			v->len--;
		} else {
			i++;
		}
	}
}

void env_filter(const struct env_rules *rules, char *const *envp, struct env_result *out)
{
	*out = (struct env_result){
	    .envp = STRV_INIT, .dropped = STRV_INIT, .reasons = STRV_INIT, .set = STRV_INIT};
	struct pattern_set allow, block;
	build(&allow, rules->allow);
	build(&block, rules->block);
	bool git_params = git_env_has_credentials(envp, false);
	bool git_family = git_env_has_credentials(envp, true);
	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		_cleanup_free_ char *name = xstrndup(*e, eq ? (size_t)(eq - *e) : strlen(*e));
		const struct pattern *p = pattern_set_match(&block, name);
		const char *secret = NULL;
		if (p) {
			strv_pushf(&out->reasons, "env.block \"%s\"", p->text);
		} else if (!pattern_set_match(&allow, name) && rules->filter_secrets &&
			   ((secret = env_secret_pattern(name)) ||
			    (eq && is_url_name(name) && env_url_has_password(eq + 1) &&
			     (secret = URL_WITH_PASSWORD)) ||
			    (((git_params && !strcmp(name, "GIT_CONFIG_PARAMETERS")) ||
			      (git_family && is_git_config_family(name))) &&
			     (secret = GIT_ENV_CREDENTIALS)))) {
			strv_pushf(&out->reasons, "looks like a secret (%s)", secret);
		} else {
			strv_push(&out->envp, *e);
			continue;
		}
		strv_push_owned(&out->dropped, steal_ptr(&name));
	}
	for (size_t i = 0; rules->set && i < rules->set->len; i++) {
		const char *entry = rules->set->items[i];
		size_t len = strcspn(entry, "=");
		remove_name(&out->envp, entry, len);
		strv_push(&out->envp, entry);
		_cleanup_free_ char *name = xstrndup(entry, len);
		if (!strv_contains(&out->set, name))
			strv_push(&out->set, name);
	}
	pattern_set_release(&allow);
	pattern_set_release(&block);
}

void env_result_release(struct env_result *r)
{
	strv_release(&r->envp);
	strv_release(&r->dropped);
	strv_release(&r->reasons);
	strv_release(&r->set);
}

static bool is_loader_variable(const char *entry)
{
	static const char *const names[] = {
	    "GCONV_PATH",  "GETCONF_DIR",      "GLIBC_TUNABLES", "HOSTALIASES",
	    "LOCALDOMAIN", "LOCPATH",	       "MALLOC_TRACE",	 "NIS_PATH",
	    "NLSPATH",	   "RESOLV_HOST_CONF", "RES_OPTIONS",	 "TZDIR",
	};
	if (!strncmp(entry, "LD_", 3))
		return true;
	size_t len = strcspn(entry, "=");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == len && !strncmp(entry, names[i], len))
			return true;
	return false;
}

void env_split_loader(char *const *envp, struct strv *host, struct strv *loader)
{
	for (char *const *e = envp; e && *e; e++)
		strv_push(is_loader_variable(*e) ? loader : host, *e);
}

char *env_find_program(char *const *envp, const char *name)
{
	const char *path = env_get(envp, "PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *colon = strchrnul(p, ':');
		if (colon > p && p[0] == '/') {
			_cleanup_free_ char *candidate =
			    xasprintf("%.*s/%s", (int)(colon - p), p, name);
			struct stat st;
			if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) &&
			    access(candidate, X_OK) == 0)
				return steal_ptr(&candidate);
		}
		p = *colon ? colon + 1 : colon;
	}
	return NULL;
}
