/* This file decides whether a project config may apply without the user's
 * approval, and keeps the approvals: one record per approved config under
 * $XDG_STATE_HOME/agent-sandbox/trusted, holding the SHA-256 of the exact
 * text and the identity of the file it was read from. A run that finds the
 * file changed, replaced or gone withdraws the record. It never approves
 * anything itself, and `trust` refuses to run inside a sandbox, so only the
 * user outside can approve. */
#include "policy/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/dirs.h"
#include "policy/env.h"
#include "inside/inside.h"
#include "base/io.h"
#include "config/jsonc.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "policy/preset.h"
#include "policy/secrets.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

#define TRUST_RECORD_MAX 8192
#define TRUST_RECORD_MAGIC "agent-sandbox trust record 2\n"

struct assessor {
	const struct trust_input *in;
	struct trust_check *tc;
};

static void loosens(struct assessor *a, struct jsonc_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void loosens(struct assessor *a, struct jsonc_pos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *what = xvasprintf(fmt, ap);
	va_end(ap);
	_cleanup_free_ char *origin = xasprintf("%s:%u:%u", a->in->file, pos.line, pos.column);
	strv_pushf(&a->tc->loosenings, "%s: %s", origin, what);
	strv_push(&a->tc->origins, origin);
}

static struct jsonc_pos value_pos(struct json_object *obj, const char *key)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(obj, key, NULL, &pos);
	return pos;
}

static struct jsonc_pos element_pos(struct json_object *arr, size_t i)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_element_pos(arr, i, &pos);
	return pos;
}

static const char *decided_by(enum layer layer, const char *origin)
{
	return layer == LAYER_BUILTIN ? "the default" : origin;
}

/* Environment names: would the base rules drop this variable? */
static bool env_drops(const struct config *base, const char *name)
{
	struct env_rules rules = {
	    .filter_secrets = base->env_filter_secrets.value,
	    .allow = &base->env_allow,
	    .block = &base->env_block,
	    .set = NULL,
	};
	_cleanup_free_ char *entry = xasprintf("%s=x", name);
	char *envp[] = {entry, NULL};
	struct env_result result = {0};
	env_filter(&rules, envp, &result);
	bool dropped = result.dropped.len > 0;
	env_result_release(&result);
	return dropped;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static void assess_presets(struct assessor *a, struct json_object *fs)
{
	struct json_object *ops = json_object_object_get(fs, "presets");
	if (!ops)
		return;
	unsigned before = preset_select(&a->in->base->presets);
	_cleanup_strv_ struct strv all = STRV_INIT;
	strv_extend(&all, &a->in->base->presets);
	size_t n = json_object_array_length(ops);
	for (size_t i = 0; i < n; i++)
		strv_push(&all, json_object_get_string(json_object_array_get_idx(ops, i)));
	unsigned removed = before & ~preset_select(&all);
	for (size_t i = 0; i < n; i++) {
		const char *op = json_object_get_string(json_object_array_get_idx(ops, i));
		if (op[0] == '!' && (preset_lookup(op + 1) & removed))
			loosens(a, element_pos(ops, i),
				"\"%s\" removes the protections of the %s preset", op, op + 1);
	}
}

/* A "rw" rule whose text lies outside the working directory loosens even
 * when nothing exists there yet: the path could appear later. Rules inside
 * it are judged on the resolved policy, which also sees symlinks. */
static void assess_rw(struct assessor *a, struct json_object *fs)
{
	struct json_object *rw = json_object_object_get(fs, "rw");
	if (!rw)
		return;
	_cleanup_free_ char *escaped_cwd = pattern_escape(a->in->cwd);
	size_t n = json_object_array_length(rw);
	for (size_t i = 0; i < n; i++) {
		const char *text = json_object_get_string(json_object_array_get_idx(rw, i));
		_cleanup_free_ char *abs = NULL;
		_cleanup_error_ struct error perr = ERROR_INIT;
		bool outside = path_expand(text, a->in->home, a->in->cwd, &abs, &perr) < 0 ||
			       strstr(abs, "/../") ||
			       (strlen(abs) >= 3 && !strcmp(abs + strlen(abs) - 3, "/..")) ||
			       !path_is_within(abs, escaped_cwd);
		if (outside)
			loosens(a, element_pos(rw, i),
				"\"rw\": \"%s\" makes a path outside the project writable", text);
	}
}

static void assess_filesystem(struct assessor *a, struct json_object *root)
{
	struct json_object *fs = json_object_object_get(root, "filesystem");
	if (!fs)
		return;
	assess_presets(a, fs);
	assess_rw(a, fs);
}

static bool net_list_has(const struct net_list *list, const char *name)
{
	for (size_t i = 0; i < list->len; i++)
		if (!strcmp(list->items[i].name, name))
			return true;
	return false;
}

static void assess_network(struct assessor *a, struct json_object *root)
{
	struct json_object *v = json_object_object_get(root, "network");
	if (!v)
		return;
	const struct network_config *base = &a->in->base->network;
	const char *was = network_mode_name(base->mode);
	const char *by = decided_by(base->layer, base->origin);
	if (json_object_is_type(v, json_type_boolean)) {
		if (json_object_get_boolean(v) && base->mode != NETWORK_HOST)
			loosens(a, value_pos(root, "network"),
				"\"network\": true gives the sandbox the host network (was %s, by "
				"%s)",
				was, by);
		return;
	}
	if (base->mode == NETWORK_HOST)
		return; /* a filtered network is narrower than the host's */
	if (base->mode == NETWORK_NONE)
		loosens(a, value_pos(root, "network"),
			"\"network\": {...} opens the filtered network (was %s, by %s)", was, by);
	struct json_object *allow = json_object_object_get(v, "allow");
	for (size_t i = 0; allow && i < json_object_array_length(allow); i++) {
		const char *host = json_object_get_string(json_object_array_get_idx(allow, i));
		if (!net_list_has(&base->allow, host))
			loosens(a, element_pos(allow, i),
				"\"allow\": \"%s\" lets the sandbox reach more hosts", host);
	}
	struct json_object *ports = json_object_object_get(v, "localhost");
	for (size_t i = 0; ports && i < json_object_array_length(ports); i++) {
		int port = json_object_get_int(json_object_array_get_idx(ports, i));
		_cleanup_free_ char *text = xasprintf("%d", port);
		if (!net_list_has(&base->localhost, text))
			loosens(a, element_pos(ports, i),
				"\"localhost\": %d opens the host's loopback port %d", port, port);
	}
	struct json_object *resolve = json_object_object_get(v, "resolve");
	if (resolve) {
		json_object_object_foreach(resolve, name, address)
		{
			struct jsonc_pos kp = {0, 0};
			jsonc_member_pos(resolve, name, &kp, NULL);
			loosens(a, kp,
				"\"resolve\": \"%s\" pins a name to %s, which the proxy then "
				"reaches",
				name, json_object_get_string(address));
		}
	}
}

/* How much a command setting restrains the command: a script runs inside
 * the sandbox with the real program at hand, so it restrains no more than
 * raw access does. */
static int command_rank(enum command_kind kind)
{
	switch (kind) {
	case COMMAND_BLOCKED:
		return 3;
	case COMMAND_GIT:
		return 2;
	case COMMAND_SCRIPT:
		return 1;
	case COMMAND_RAW:
		return 0;
	}
	return 0;
}

static const struct command_setting *command_find(const struct command_table *t, const char *name)
{
	for (size_t i = 0; i < t->len; i++)
		if (!strcmp(t->items[i].name, name))
			return &t->items[i];
	return NULL;
}

static void assess_commands(struct assessor *a, struct json_object *root)
{
	struct json_object *commands = json_object_object_get(root, "commands");
	if (!commands)
		return;
	json_object_object_foreach(commands, name, value)
	{
		enum command_kind kind = COMMAND_RAW;
		const char *script = NULL;
		if (json_object_is_type(value, json_type_boolean)) {
			kind = json_object_get_boolean(value) ? COMMAND_RAW : COMMAND_BLOCKED;
		} else {
			_cleanup_error_ struct error perr = ERROR_INIT;
			script = json_object_get_string(value);
			if (command_kind_parse(script, &kind, &perr) < 0)
				kind = COMMAND_RAW;
		}
		const struct command_setting *before = command_find(&a->in->base->commands, name);
		enum command_kind was = before ? before->kind : COMMAND_RAW;
		bool other_script = kind == COMMAND_SCRIPT && was == COMMAND_SCRIPT &&
				    strcmp(script, before->script ? before->script : "");
		if (command_rank(kind) >= command_rank(was) && !other_script)
			continue;
		loosens(a, value_pos(commands, name), "\"commands\" \"%s\": %s replaces %s (by %s)",
			name, kind == COMMAND_SCRIPT ? script : command_kind_name(kind),
			was == COMMAND_SCRIPT ? before->script : command_kind_name(was),
			before ? decided_by(before->layer, before->origin) : "the default");
	}
}

static void assess_env(struct assessor *a, struct json_object *root)
{
	const struct config *base = a->in->base;
	struct json_object *env = json_object_object_get(root, "env");
	if (!env)
		return;
	struct json_object *filter = json_object_object_get(env, "filter-secrets");
	if (filter && !json_object_get_boolean(filter) && base->env_filter_secrets.value)
		loosens(a, value_pos(env, "filter-secrets"),
			"\"filter-secrets\": false passes variables that look like secrets");
	/* A glob could match a secret's name that appears only later, so any
	 * glob counts; a plain name only when the base rules would drop it. */
	struct json_object *allow = json_object_object_get(env, "allow");
	for (size_t i = 0; allow && i < json_object_array_length(allow); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(allow, i));
		if (name[0] == '!')
			continue;
		if (has_glob(name) || env_drops(base, name))
			loosens(a, element_pos(allow, i),
				"\"env.allow\": \"%s\" passes %s, which is filtered otherwise",
				name, has_glob(name) ? "variables" : "a variable");
	}
	struct json_object *block = json_object_object_get(env, "block");
	for (size_t i = 0; block && i < json_object_array_length(block); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(block, i));
		if (name[0] == '!')
			loosens(a, element_pos(block, i),
				"\"env.block\": \"%s\" lifts a block of the global config", name);
	}
	struct json_object *set = json_object_object_get(env, "set");
	if (set) {
		json_object_object_foreach(set, name, value)
		{
			(void)value;
			if (!env_drops(base, name))
				continue;
			struct jsonc_pos kp = {0, 0};
			jsonc_member_pos(set, name, &kp, NULL);
			loosens(a, kp,
				"\"env.set\": \"%s\" sets a variable that is filtered "
				"otherwise",
				name);
		}
	}
}

static void assess_secrets(struct assessor *a, struct json_object *root)
{
	struct json_object *sec = json_object_object_get(root, "secrets");
	if (!sec)
		return;
	struct json_object *patterns = json_object_object_get(sec, "patterns");
	for (size_t i = 0; patterns && i < json_object_array_length(patterns); i++) {
		const char *p = json_object_get_string(json_object_array_get_idx(patterns, i));
		if (p[0] == '!')
			loosens(a, element_pos(patterns, i),
				"\"secrets.patterns\": \"%s\" stops masking files named %s", p,
				p + 1);
	}
	struct json_object *allow = json_object_object_get(sec, "allow");
	for (size_t i = 0; allow && i < json_object_array_length(allow); i++) {
		const char *p = json_object_get_string(json_object_array_get_idx(allow, i));
		if (p[0] == '!')
			continue;
		if (has_glob(p) || secrets_would_mask(a->in->base, p))
			loosens(a, element_pos(allow, i),
				"\"secrets.allow\": \"%s\" unmasks secret files", p);
	}
	struct json_object *skip = json_object_object_get(sec, "skip");
	for (size_t i = 0; skip && i < json_object_array_length(skip); i++) {
		const char *p = json_object_get_string(json_object_array_get_idx(skip, i));
		if (p[0] != '!')
			loosens(a, element_pos(skip, i),
				"\"secrets.skip\": \"%s\" leaves secrets in such directories "
				"unmasked",
				p);
	}
}

static void assess_settings(struct assessor *a, struct json_object *root)
{
	const struct config *base = a->in->base;
	struct json_object *v;
	if ((v = json_object_object_get(root, "read-only")) && !json_object_get_boolean(v) &&
	    base->read_only.value)
		loosens(a, value_pos(root, "read-only"),
			"\"read-only\": false makes the project writable (read-only by %s)",
			decided_by(base->read_only.layer, base->read_only.origin));
	if ((v = json_object_object_get(root, "docker")) && json_object_get_boolean(v) &&
	    !base->docker.value)
		loosens(a, value_pos(root, "docker"),
			"\"docker\": true exposes the Docker socket, which gives root on the "
			"host");
	if ((v = json_object_object_get(root, "audit")) && !json_object_get_boolean(v) &&
	    base->audit.value)
		loosens(a, value_pos(root, "audit"), "\"audit\": false turns the audit log off");
}

/* The store's key is where the file was found, its last component
 * unresolved: a symlink planted at .agent-sandbox.json must not borrow the
 * approval of the file it points to. */
static int key_for(const char *file, char **key, struct error *err)
{
	_cleanup_free_ char *dir = xstrdup(file);
	char *slash = strrchr(dir, '/');
	const char *name = file + (slash - dir) + 1;
	*(slash == dir ? slash + 1 : slash) = '\0';
	_cleanup_free_ char *resolved = NULL;
	int r = path_resolve(dir, &resolved, NULL, NULL);
	if (r < 0)
		return error_errno(err, ERROR_USAGE, -r, "resolving the directory of %s", file);
	*key = xasprintf("%s%s%s", resolved, strcmp(resolved, "/") ? "/" : "", name);
	return 0;
}

static int identify(int fd, const char *file, struct trust_identity *id, struct error *err)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_BTIME,
		  &stx) < 0)
		return error_errno(err, ERROR_SETUP, errno, "reading the identity of %s", file);
	bool born = stx.stx_mask & STATX_BTIME;
	int generation = 0;
	if (ioctl(fd, FS_IOC_GETVERSION, &generation) < 0)
		generation = 0;
	*id = (struct trust_identity){
	    .dev_major = stx.stx_dev_major,
	    .dev_minor = stx.stx_dev_minor,
	    .ino = stx.stx_ino,
	    .generation = (unsigned)generation,
	    .born = born,
	    .sec = born ? stx.stx_btime.tv_sec : stx.stx_ctime.tv_sec,
	    .nsec = born ? stx.stx_btime.tv_nsec : stx.stx_ctime.tv_nsec,
	};
	return 0;
}

static bool same_identity(const struct trust_identity *a, const struct trust_identity *b)
{
	return a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && a->ino == b->ino &&
	       a->generation == b->generation && a->born == b->born && a->sec == b->sec &&
	       a->nsec == b->nsec;
}

/* A directory's project config has one approval, whichever of its two
 * names it has: finding .agent-sandbox.jsonc where .agent-sandbox.json was
 * approved is finding another file, and withdraws the approval. Any other
 * file (named with --config) is a slot of its own. */
static char *slot_of(const char *key_path)
{
	const char *name = strrchr(key_path, '/') + 1;
	if (!strcmp(name, ".agent-sandbox.json") || !strcmp(name, ".agent-sandbox.jsonc"))
		return xasprintf("%.*s.agent-sandbox.json*", (int)(name - key_path), key_path);
	return xstrdup(key_path);
}

int trust_assess(const struct trust_input *in, struct trust_check *tc, struct error *err)
{
	*tc = (struct trust_check){
	    .state = TRUST_TIGHTENS, .loosenings = STRV_INIT, .origins = STRV_INIT};
	tc->file = xstrdup(in->file);
	sha256_hex(in->text, in->len, tc->digest);

	if (key_for(in->file, &tc->key_path, err) < 0)
		return -1;
	if (identify(in->fd, in->file, &tc->identity, err) < 0)
		return -1;

	struct json_object *root = NULL;
	if (jsonc_parse(in->text, in->len, &root, err) < 0)
		return error_prefix(err, "loading config from %s", in->file);
	struct assessor a = {.in = in, .tc = tc};
	assess_settings(&a, root);
	assess_filesystem(&a, root);
	assess_network(&a, root);
	assess_commands(&a, root);
	assess_env(&a, root);
	assess_secrets(&a, root);
	json_object_put(root);
	return 0;
}

/* How much of the host a path shows inside, least first. PRIVATE is a path
 * under one of the sandbox's own tmpfs (/tmp, /run, and with it a
 * $XDG_RUNTIME_DIR there) that no rule covers: nothing of the host's is
 * there at all, so even a read-only or hidden host path in its place shows
 * more. Comparing access levels instead would call a host socket bound
 * read-only into the private /tmp "stricter than writable". */
enum exposure {
	EXPOSE_PRIVATE,
	EXPOSE_HIDDEN,
	EXPOSE_RO,
	EXPOSE_RW,
};

static enum exposure exposure_of(enum access_level level)
{
	switch (level) {
	case ACCESS_RW:
		return EXPOSE_RW;
	case ACCESS_RO:
		return EXPOSE_RO;
	case ACCESS_EXCLUDE:
		return EXPOSE_HIDDEN;
	}
	return EXPOSE_RW;
}

/* What the path shows without the project config, and why: "by" the rule
 * or base mount that decided it. */
static enum exposure base_exposure(const struct policy *p, const char *path, char **why)
{
	const struct access_entry *e = policy_entry_for(p, path);
	if (e) {
		*why = xasprintf("by %s", e->rule->origin);
		return exposure_of(e->level);
	}
	const struct base_mount *m = policy_base_for(path);
	if (m->kind == BASE_HOST_ROOT) {
		*why = xasprintf("by the %s", m->description);
		return EXPOSE_RO;
	}
	*why = xasprintf("under the sandbox's own %s", m->path);
	return EXPOSE_PRIVATE;
}

static const char *exposure_words(enum exposure x)
{
	switch (x) {
	case EXPOSE_RW:
		return "writable";
	case EXPOSE_RO:
		return "read-only";
	case EXPOSE_HIDDEN:
		return "hidden";
	case EXPOSE_PRIVATE:
		return "private to the sandbox";
	}
	return "?";
}

void trust_add_policy_loosenings(struct trust_check *tc, const struct policy *base,
				 const struct policy *merged)
{
	for (size_t i = 0; i < merged->len; i++) {
		const struct access_entry *e = &merged->entries[i];
		if (e->rule->layer != LAYER_PROJECT)
			continue;
		_cleanup_free_ char *why = NULL;
		enum exposure before = base_exposure(base, e->path, &why);
		enum exposure after = exposure_of(e->level);
		if (after <= before || strv_contains(&tc->origins, e->rule->origin))
			continue;
		strv_pushf(&tc->loosenings, "%s: \"%s\": \"%s\" makes %s %s (it was %s, %s)",
			   e->rule->origin, access_level_name(e->rule->level), e->rule->pattern,
			   e->path, exposure_words(after), exposure_words(before), why);
		strv_push(&tc->origins, e->rule->origin);
	}
}

char *trust_store_dir(char *const *envp, const char *home)
{
	_cleanup_free_ char *dir = dirs_state(envp, home);
	return dir ? xasprintf("%s/trusted", dir) : NULL;
}

static char *record_path(const char *store_dir, const char *key_path)
{
	_cleanup_free_ char *slot = slot_of(key_path);
	char name[SHA256_HEX_LEN + 1];
	sha256_hex(slot, strlen(slot), name);
	return xasprintf("%s/%s", store_dir, name);
}

struct record {
	char digest[SHA256_HEX_LEN + 1];
	struct trust_identity id;
	char *file; /* the key path the approval was given for */
};

/* The record's text: fixed lines first, the path last, so that a path
 * holding a newline cannot forge a field:
 *
 *   agent-sandbox trust record 2
 *   sha256 <digest>
 *   identity <major>:<minor> <inode> <generation> born|changed <seconds>.<nanoseconds>
 *   file <path> */
static char *record_format(const char *digest, const struct trust_identity *id, const char *file)
{
	return xasprintf(TRUST_RECORD_MAGIC
			 "sha256 %s\nidentity %llu:%llu %llu %llu %s %lld.%09u\nfile %s\n",
			 digest, id->dev_major, id->dev_minor, id->ino, id->generation,
			 id->born ? "born" : "changed", id->sec, id->nsec, file);
}

static int record_parse(const char *text, size_t len, struct record *rec)
{
	if (strlen(text) != len || strncmp(text, TRUST_RECORD_MAGIC, strlen(TRUST_RECORD_MAGIC)))
		return -1;
	const char *p = text + strlen(TRUST_RECORD_MAGIC);
	if (strncmp(p, "sha256 ", 7))
		return -1;
	p += 7;
	if (strspn(p, "0123456789abcdef") != SHA256_HEX_LEN || p[SHA256_HEX_LEN] != '\n')
		return -1;
	memcpy(rec->digest, p, SHA256_HEX_LEN);
	rec->digest[SHA256_HEX_LEN] = '\0';
	p += SHA256_HEX_LEN + 1;
	char stamp[8];
	int used = -1;
	struct trust_identity *id = &rec->id;
	if (sscanf(p, "identity %llu:%llu %llu %llu %7s %lld.%9u\n%n", &id->dev_major,
		   &id->dev_minor, &id->ino, &id->generation, stamp, &id->sec, &id->nsec,
		   &used) != 7 ||
	    used < 0)
		return -1;
	if (strcmp(stamp, "born") && strcmp(stamp, "changed"))
		return -1;
	id->born = !strcmp(stamp, "born");
	p += used;
	size_t rest = len - (size_t)(p - text);
	if (strncmp(p, "file /", 6) || p[rest - 1] != '\n')
		return -1;
	_cleanup_free_ char *file = xstrndup(p + 5, rest - 6);
	/* sscanf skips spaces and takes signs: only the exact text that
	 * record_format writes is a record. */
	_cleanup_free_ char *canonical = record_format(rec->digest, id, file);
	if (strcmp(canonical, text) != 0)
		return -1;
	rec->file = steal_ptr(&file);
	return 0;
}

/* The record for key_path's slot, if there is one. A record must be a
 * regular file of ours that nobody else can write, and name a file of that
 * slot: anything else is ignored. */
static int lookup_record(const char *store_dir, const char *key_path, struct record *rec)
{
	_cleanup_free_ char *path = record_path(store_dir, key_path);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return -1;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_fd(fd, TRUST_RECORD_MAX, &text, &len) < 0 || record_parse(text, len, rec) < 0)
		return -1;
	_cleanup_free_ char *want = slot_of(key_path), *have = slot_of(rec->file);
	if (strcmp(want, have) != 0) {
		free(steal_ptr(&rec->file));
		return -1;
	}
	return 0;
}

/* "<file>:L:C: ..." sorts by line and column; all share the file. */
static int compare_findings(const void *pa, const void *pb, void *ctx)
{
	size_t skip = strlen(ctx) + 1;
	const char *a = *(char *const *)pa + skip, *b = *(char *const *)pb + skip;
	unsigned la = 0, ca = 0, lb = 0, cb = 0;
	sscanf(a, "%u:%u", &la, &ca);
	sscanf(b, "%u:%u", &lb, &cb);
	if (la != lb)
		return la < lb ? -1 : 1;
	return ca < cb ? -1 : ca > cb;
}

void trust_decide(struct trust_check *tc, const char *store_dir, bool inside)
{
	if (tc->loosenings.len > 1)
		qsort_r(tc->loosenings.items, tc->loosenings.len, sizeof(char *), compare_findings,
			tc->file);
	/* Inside a sandbox the store is hidden, and there is nothing to gain:
	 * the inner run cannot reach past the outer one's mounts, network
	 * namespace, environment or wrappers. */
	if (inside) {
		tc->state = tc->loosenings.len ? TRUST_NOT_CHECKED : TRUST_TIGHTENS;
		return;
	}
	struct record rec = {0};
	bool have = store_dir && lookup_record(store_dir, tc->key_path, &rec) == 0;
	_cleanup_free_ char *approved_file = rec.file;
	bool same_file = have && same_identity(&rec.id, &tc->identity);
	bool same_bytes = have && !strcmp(rec.digest, tc->digest);
	/* Also when the file now only tightens: left in the store, the
	 * approval would come back with the approved bytes. */
	if (have && !(same_file && same_bytes)) {
		tc->stale = xstrdup(!same_file ? "the file was replaced or re-created since"
					       : "its content changed since");
		tc->stale_file = steal_ptr(&approved_file);
	}
	if (!tc->loosenings.len)
		tc->state = TRUST_TIGHTENS;
	else if (!have)
		tc->state = TRUST_UNAPPROVED;
	else if (!same_file)
		tc->state = TRUST_REPLACED;
	else if (!same_bytes)
		tc->state = TRUST_CHANGED;
	else
		tc->state = TRUST_APPROVED;
}

void trust_find_gone(struct trust_check *tc, const char *dir, const char *store_dir)
{
	_cleanup_free_ char *key =
	    xasprintf("%s%s.agent-sandbox.json", dir, strcmp(dir, "/") ? "/" : "");
	struct record rec = {0};
	if (!store_dir || lookup_record(store_dir, key, &rec) < 0)
		return;
	free(tc->key_path);
	tc->key_path = steal_ptr(&key);
	tc->stale = xstrdup("the file is gone");
	tc->stale_file = rec.file;
}

int trust_withdraw(struct trust_check *tc, const char *store_dir, struct error *err)
{
	if (!tc->stale)
		return 0;
	_cleanup_free_ char *path = record_path(store_dir, tc->key_path);
	if (unlink(path) < 0 && errno != ENOENT)
		return error_errno(err, ERROR_SETUP, errno,
				   "withdrawing the approval of %s (%s): removing %s",
				   tc->stale_file, tc->stale, path);
	tc->withdrawn = true;
	return 0;
}

/* The path as one shell word, so that the approval command can be pasted.
 * A quote becomes '"'"' rather than '\\'': the printer doubles backslashes. */
static char *shell_quote(const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "/._-+,:@%=") == strlen(s))
		return xstrdup(s);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addch(&sb, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(&sb, "'\"'\"'");
		else
			strbuf_addch(&sb, *p);
	}
	strbuf_addch(&sb, '\'');
	return strbuf_detach(&sb);
}

int trust_refuse(const struct trust_check *tc, struct error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb,
		    "refusing the config %s: it loosens what the global config and the defaults "
		    "decided, and %s:",
		    tc->file,
		    tc->state == TRUST_CHANGED
			? "it has changed since it was approved (editing withdraws an approval)"
		    : tc->state == TRUST_REPLACED
			? "it is not the file that was approved: it was replaced or re-created "
			  "since (that withdraws an approval, even for the same bytes)"
			: "this content has not been approved");
	error_set(err, ERROR_DENIED, "%s", sb.buf);
	for (size_t i = 0; i < tc->loosenings.len; i++)
		error_add_line(err, "%s", tc->loosenings.items[i]);
	_cleanup_free_ char *quoted = shell_quote(tc->file);
	error_hint(err,
		   "if you wrote these settings, approve this exact content from outside the "
		   "sandbox: agent-sandbox trust %s",
		   quoted);
	return -1;
}

/* Printed by `policy`: the file name and each loosening (config values)
 * are escaped here, where they are formatted in. */
void trust_describe_withdrawal(const struct trust_check *tc, struct strbuf *sb)
{
	if (!tc->withdrawn)
		return;
	strbuf_addstr(sb, "trust: withdrew the approval of ");
	term_escape_add(sb, tc->stale_file);
	strbuf_addf(sb, ": %s\n", tc->stale);
}

static void describe_stale(const struct trust_check *tc, struct strbuf *sb)
{
	if (tc->withdrawn)
		trust_describe_withdrawal(tc, sb);
	else if (tc->stale) {
		strbuf_addstr(sb, "trust: the approval of ");
		term_escape_add(sb, tc->stale_file);
		strbuf_addf(sb, " no longer holds: %s; a run withdraws it\n", tc->stale);
	}
}

void trust_describe(const struct trust_check *tc, struct strbuf *sb)
{
	_cleanup_free_ char *file = tc->file ? term_escape(tc->file) : NULL;
	switch (tc->state) {
	case TRUST_NO_FILE:
		strbuf_addstr(sb, "trust: no project config\n");
		describe_stale(tc, sb);
		return;
	case TRUST_TIGHTENS:
		strbuf_addf(sb, "trust: %s only tightens; no approval needed\n", file);
		describe_stale(tc, sb);
		return;
	case TRUST_APPROVED:
		strbuf_addf(sb, "trust: %s loosens, approved (sha256 %.12s)\n", file, tc->digest);
		break;
	case TRUST_UNAPPROVED:
		strbuf_addf(sb, "trust: %s loosens and is NOT approved: a run is refused\n", file);
		break;
	case TRUST_CHANGED:
		strbuf_addf(sb,
			    "trust: %s loosens and changed since it was approved: a run is "
			    "refused\n",
			    file);
		break;
	case TRUST_REPLACED:
		strbuf_addf(sb,
			    "trust: %s loosens and is not the file that was approved (replaced or "
			    "re-created since): a run is refused\n",
			    file);
		break;
	case TRUST_NOT_CHECKED:
		strbuf_addf(sb,
			    "trust: %s loosens; not checked inside a sandbox (the outer sandbox "
			    "bounds this run)\n",
			    file);
		break;
	}
	for (size_t i = 0; i < tc->loosenings.len; i++) {
		strbuf_addstr(sb, "trust:   ");
		term_escape_add(sb, tc->loosenings.items[i]);
		strbuf_addch(sb, '\n');
	}
	describe_stale(tc, sb);
	if (tc->state == TRUST_UNAPPROVED || tc->state == TRUST_CHANGED ||
	    tc->state == TRUST_REPLACED) {
		_cleanup_free_ char *quoted = shell_quote(tc->file);
		strbuf_addstr(sb, "trust: approve with: agent-sandbox trust ");
		term_escape_add(sb, quoted);
		strbuf_addch(sb, '\n');
	}
}

int trust_store_prepare(const char *state_dir, struct error *err)
{
	return state_dir_prepare(state_dir, err);
}

/* Written to a temporary name and renamed, so a reader sees the old
 * record or the new one, never half of one. */
static int store_record(const char *store_dir, const char *key_path, const char *digest,
			const struct trust_identity *id, struct error *err)
{
	if (state_dir_prepare(store_dir, err) < 0)
		return -1;
	_cleanup_free_ char *final = record_path(store_dir, key_path);
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.%d", final, (int)getpid());
	_cleanup_close_ int fd =
	    open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating %s", tmp);
	_cleanup_free_ char *record = record_format(digest, id, key_path);
	int r = write_all(fd, record, strlen(record));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return error_errno(err, ERROR_SETUP, -r, "writing %s", tmp);
	}
	if (rename(tmp, final) < 0) {
		int e = errno;
		unlink(tmp);
		return error_errno(err, ERROR_SETUP, e, "renaming %s to %s", tmp, final);
	}
	return 0;
}

static int find_config(const char *arg, char **file, struct error *err)
{
	_cleanup_free_ char *here = getcwd(NULL, 0);
	if (!here)
		return error_errno(err, ERROR_SETUP, errno, "reading the working directory");
	_cleanup_free_ char *target = !arg	      ? xstrdup(here)
				      : arg[0] == '/' ? xstrdup(arg)
						      : xasprintf("%s/%s", here, arg);
	struct stat st;
	if (stat(target, &st) < 0)
		return error_errno(err, ERROR_USAGE, errno, "trust %s", arg ? arg : here);
	if (!S_ISDIR(st.st_mode)) {
		*file = steal_ptr(&target);
		return 0;
	}
	if (config_find(target, ".agent-sandbox", file, err) < 0)
		return -1;
	if (!*file) {
		error_set(err, ERROR_USAGE,
			  "trust: no .agent-sandbox.json or .agent-sandbox.jsonc in %s", target);
		error_hint(err, "name the config file: agent-sandbox trust PATH");
		return -1;
	}
	return 0;
}

int trust_approve(const char *arg, char *const *envp, struct trust_approval *out, struct error *err)
{
	if (inside_sandbox()) {
		error_set(err, ERROR_USAGE,
			  "trust: refused inside a sandbox: only the user, outside it, can approve "
			  "a config");
		error_hint(err, "run agent-sandbox trust in a terminal outside the sandbox");
		return -1;
	}
	_cleanup_free_ char *file = NULL;
	if (find_config(arg, &file, err) < 0)
		return -1;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	_cleanup_close_ int fd = -1;
	if (config_read_file_fd(file, &fd, &text, &len, err) < 0)
		return -1;
	struct trust_identity id;
	if (identify(fd, file, &id, err) < 0)
		return -1;
	/* Approving a file that does not load would be approving nothing. */
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	if (config_load_text(&cfg, file, text, len, LAYER_PROJECT, err) < 0)
		return -1;

	const char *home = env_get(envp, "HOME");
	_cleanup_free_ char *store = trust_store_dir(envp, home && home[0] == '/' ? home : NULL);
	if (!store)
		return error_set(err, ERROR_SETUP,
				 "trust: cannot locate the trust store: neither XDG_STATE_HOME nor "
				 "HOME is set");
	_cleanup_free_ char *key = NULL;
	if (key_for(file, &key, err) < 0)
		return -1;
	sha256_hex(text, len, out->digest);
	if (store_record(store, key, out->digest, &id, err) < 0)
		return -1;
	out->key = steal_ptr(&key);
	return 0;
}

void trust_check_release(struct trust_check *tc)
{
	free(tc->file);
	free(tc->key_path);
	strv_release(&tc->loosenings);
	strv_release(&tc->origins);
	free(tc->stale);
	free(tc->stale_file);
	*tc = (struct trust_check){0};
}
