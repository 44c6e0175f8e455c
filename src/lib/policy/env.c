/* Environment lookups, and the filter that decides which variables reach
 * the sandboxed command. The filter reports names, never values: values of
 * dropped variables are what it exists to keep away from the command. */
#include "policy/env.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
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

/* SPEC.md's list. Matched without regard to case, since a lower-case
 * github_token is as much a secret. */
static const char *const secret_name_patterns[] = {
    "*_KEY", "*_SECRET", "*_TOKEN", "*PASSWORD*", "*CREDENTIAL*", "AWS_*", "GITHUB_*",
};

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
	for (char *const *e = envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		_cleanup_free_ char *name = xstrndup(*e, eq ? (size_t)(eq - *e) : strlen(*e));
		const struct pattern *p = pattern_set_match(&block, name);
		const char *secret = NULL;
		if (p) {
			strv_pushf(&out->reasons, "env.block \"%s\"", p->text);
		} else if (!pattern_set_match(&allow, name) && rules->filter_secrets &&
			   (secret = env_secret_pattern(name))) {
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
