/* This file decides which files count as secrets: the built-in name
 * patterns below plus the configuration's tree patterns (names, paths from
 * the working directory, directories), where "!x" removes an entry. It hands the walk
 * to secret_scan.c and turns each find into an exclude rule, which the
 * policy renders as a read-only bind of an empty file (nothing is created
 * on the host). */
#include "policy/secrets.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/cleanup.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "base/strv.h"
#include "base/xalloc.h"

/* SSH keys by their key types' names; other id_* files are masked when
 * they hold a private key (secret_scan.c), since id_* alone also names
 * source files. Key stores (PKCS#12, Java), Terraform state and variables,
 * kubeconfig, PyPI's upload credentials, dotenv files under any name, and
 * direnv's .envrc, which exports a project's tokens. The password files of
 * PostgreSQL, MySQL, s3cmd, boto and Apache, and the directories where the
 * AWS CLI (its SSO and session caches), SSH and GnuPG keep keys, whatever
 * their files are named, when a copy sits in a project. */
static const char *const default_patterns[] = {
    ".env",	   ".env.*",	 "*.env",   ".envrc",	     "*.pem",	  "*.key",
    "*.p12",	   "*.pfx",	 "*.jks",   "*.keystore",    "*.tfstate", "*.tfstate.backup",
    "*.tfvars",	   "kubeconfig", ".pypirc", "id_rsa*",	     "id_dsa*",	  "id_ecdsa*",
    "id_ed25519*", "id_xmss*",	 ".netrc",  "*credentials*", "*secret*",  ".pgpass",
    ".my.cnf",	   ".s3cfg",	 ".boto",   ".htpasswd",     ".aws/",	  ".ssh/",
    ".gnupg/",
};
/* Public keys are not secrets: "id_*.pub" gives back what "id_rsa*" and
 * the other key types take. */
static const char *const default_allow[] = {".env.example", ".env.sample", ".env.template",
					    "id_*.pub"};
/* Installed packages, not the project's own files: node_modules and
 * Python's site-packages hold certificate bundles (certifi's cacert.pem) and
 * modules named like secrets, and masking those breaks the tools. */
static const char *const default_skip[] = {".git", "node_modules", "site-packages",
					   "dist-packages"};

static void build_set(struct pattern_set *set, const char *const *defaults, size_t n,
		      const struct strv *configured)
{
	_cleanup_strv_ struct strv all = STRV_INIT;
	for (size_t i = 0; i < n; i++)
		strv_push(&all, defaults[i]);
	strv_extend(&all, configured);
	/* File names are matched without regard to case: ".ENV" and
	 * "Credentials.json" are as secret as their lower-case spellings. */
	pattern_set_build(set, all.items, all.len, true);
}

bool secrets_would_mask(const struct config *cfg, const char *rel)
{
	struct pattern_set patterns, allow;
	build_set(&patterns, default_patterns, ARRAY_SIZE(default_patterns), &cfg->secret_patterns);
	build_set(&allow, default_allow, ARRAY_SIZE(default_allow), &cfg->secret_allow);
	const char *slash = strrchr(rel, '/');
	const char *name = slash ? slash + 1 : rel;
	bool masked = pattern_set_match_path(&patterns, rel, name, false) &&
		      !pattern_set_match_path(&allow, rel, name, false);
	pattern_set_release(&patterns);
	pattern_set_release(&allow);
	return masked;
}

static double elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static int compare_matches(const void *a, const void *b)
{
	return strcmp(((const struct secret_match *)a)->path,
		      ((const struct secret_match *)b)->path);
}

int secrets_scan(struct secrets *s, const struct config *cfg, const char *cwd,
		 const char *cache_dir, struct error *err)
{
	*s = (struct secrets){.cwd = xstrdup(cwd)};
	build_set(&s->patterns, default_patterns, ARRAY_SIZE(default_patterns),
		  &cfg->secret_patterns);
	build_set(&s->allow, default_allow, ARRAY_SIZE(default_allow), &cfg->secret_allow);
	build_set(&s->skip, default_skip, ARRAY_SIZE(default_skip), &cfg->secret_skip);
	struct secret_scan_options opts = {
	    .patterns = &s->patterns,
	    .allow = &s->allow,
	    .skip = &s->skip,
	    .check_content = true,
	};
	/* From / the walk would cover the whole system and mask its CA
	 * certificates and the like; the working directory is the project. */
	if (!strcmp(cwd, "/")) {
		s->skipped_root = true;
		return 0;
	}
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct scan_cache cache = {0};
	bool have_cache = false;
	if (cache_dir) {
		uint8_t key[SCAN_CACHE_KEY_LEN];
		scan_cache_key(cwd, &s->patterns, &s->allow, &s->skip, opts.check_content, key);
		s->cache_path = scan_cache_path(cache_dir, cwd);
		_cleanup_error_ struct error why = ERROR_INIT;
		have_cache = scan_cache_load(s->cache_path, key, &s->patterns, &cache, &why) == 0;
		if (!have_cache)
			s->cache_unused = xstrdup(why.msg);
		scan_cache_builder_init(&s->cache_next, key);
		opts.cache = have_cache ? &cache : NULL;
		opts.record = &s->cache_next;
	}
	int r = secret_scan(cwd, &opts, &s->found, err);
	scan_cache_release(&cache);
	clock_gettime(CLOCK_MONOTONIC, &end);
	s->scan_ms = elapsed_ms(&start, &end);
	/* Directory order depends on the filesystem; reports should not. */
	if (r == 0 && s->found.len > 1)
		qsort(s->found.items, s->found.len, sizeof(*s->found.items), compare_matches);
	return r;
}

/* A directory on the way to what a pattern masked, renamed by the command
 * (the project is writable), would carry the file past an anchored pattern,
 * into a skipped directory (node_modules) or under an anchored allow, for
 * the next run. Each real directory between the working directory and
 * path, down to PIN_DEPTH_MAX levels, becomes a mount point, which
 * rename(2) refuses; a pin takes the access of what covers it. The bound
 * keeps a deep tree from costing a mount per level (bwrap's cost grows
 * with the square of its mounts: 1,100 levels took minutes to start). */
#define PIN_DEPTH_MAX 16

/* The directories pinned so far, as a set: a project with many masked
 * files shares its directories between them, and a list searched once per
 * prefix made the pins quadratic in the number of masked files. Open
 * addressing on strings owned by the set's strv; it stays at most half
 * full. */
struct pin_set {
	struct strv paths;
	const char **slots;
	size_t slots_len; /* a power of two */
};

static size_t hash_string(const char *s)
{
	size_t h = 14695981039346656037ULL; /* FNV-1a, 64-bit */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static const char **pin_set_slot(const char **slots, size_t slots_len, const char *path)
{
	size_t i = hash_string(path) & (slots_len - 1);
	while (slots[i] && strcmp(slots[i], path))
		i = (i + 1) & (slots_len - 1);
	return &slots[i];
}

static bool pin_set_contains(const struct pin_set *set, const char *path)
{
	return set->slots_len && *pin_set_slot(set->slots, set->slots_len, path);
}

static void pin_set_add(struct pin_set *set, const char *path)
{
	if (2 * (set->paths.len + 1) > set->slots_len) {
		size_t len = set->slots_len ? 2 * set->slots_len : 64;
		const char **slots = xcalloc(len, sizeof(*slots));
		for (size_t i = 0; i < set->paths.len; i++)
			*pin_set_slot(slots, len, set->paths.items[i]) = set->paths.items[i];
		free(set->slots);
		set->slots = slots;
		set->slots_len = len;
	}
	strv_push(&set->paths, path);
	*pin_set_slot(set->slots, set->slots_len, path) = set->paths.items[set->paths.len - 1];
}

static void pin_set_release(struct pin_set *set)
{
	strv_release(&set->paths);
	free(set->slots);
}

DEFINE_CLEANUP_FUNC(struct pin_set, pin_set_release)

static void pin_ancestors(const struct secrets *s, const char *path, const char *why,
			  struct pin_set *pinned, struct rule_list *rules)
{
	if (!path_is_within(path, s->cwd) || !strcmp(path, s->cwd))
		return;
	_cleanup_free_ char *prefix = xstrdup(path);
	unsigned depth = 0;
	for (size_t i = strlen(s->cwd) + 1; prefix[i]; i++) {
		if (prefix[i] != '/')
			continue;
		if (++depth > PIN_DEPTH_MAX)
			return;
		prefix[i] = '\0';
		/* Pinned already: it was a directory when this plan looked,
		 * which is all the lstat below decides. */
		if (!pin_set_contains(pinned, prefix)) {
			struct stat st;
			/* Beneath a symlink there is nothing to pin on this
			 * spelling. */
			if (lstat(prefix, &st) < 0 || !S_ISDIR(st.st_mode))
				return;
			pin_set_add(pinned, prefix);
			_cleanup_free_ char *escaped = pattern_escape(prefix);
			_cleanup_free_ char *origin = xasprintf("%s (mount point)", why);
			rule_list_add_tightening(rules, escaped, ACCESS_RW, LAYER_PRESET, origin);
		}
		prefix[i] = '/';
	}
}

void secrets_add_rules(const struct secrets *s, const struct strv *sockets, struct rule_list *rules)
{
	_cleanup_(pin_set_releasep) struct pin_set pinned = {.paths = STRV_INIT};
	/* A host socket's mask is skipped when the socket is gone as the
	 * sandbox starts (its server ended). Its directory, swapped for an
	 * empty one for the start and put back once the command runs (the
	 * project is writable), would look the same: pinned, it cannot be
	 * renamed by a running sandbox, and one swapped before the start
	 * fails the mount check. */
	for (size_t i = 0; sockets && i < sockets->len; i++)
		pin_ancestors(s, sockets->items[i], "host unix socket", &pinned, rules);
	for (size_t i = 0; i < s->found.len; i++) {
		const struct secret_match *m = &s->found.items[i];
		_cleanup_free_ char *escaped = pattern_escape(m->path);
		_cleanup_free_ char *origin = xasprintf("secret \"%s\"", m->pattern);
		/* In the presets' layer, where an exclude beats a read-only
		 * rule on the same path: @agent-configs names .envrc, a
		 * secret too, and must not make it readable again. */
		rule_list_add(rules, escaped, ACCESS_EXCLUDE, LAYER_PRESET, origin);
		/* As found, and where a link on the way leads. */
		pin_ancestors(s, m->path, origin, &pinned, rules);
		_cleanup_free_ char *resolved = realpath(m->path, NULL);
		if (resolved && strcmp(resolved, m->path))
			pin_ancestors(s, resolved, origin, &pinned, rules);
	}
}

int secrets_save_cache(const struct secrets *s, struct error *err)
{
	if (!s->cache_path || !s->cache_next.changed)
		return 0;
	return scan_cache_store(&s->cache_next, s->cache_path, err) < 0 ? -1 : 1;
}

void secrets_release(struct secrets *s)
{
	free(s->cache_path);
	free(s->cache_unused);
	scan_cache_builder_release(&s->cache_next);
	secret_scan_result_release(&s->found);
	free(s->cwd);
	pattern_set_release(&s->patterns);
	pattern_set_release(&s->allow);
	pattern_set_release(&s->skip);
}
