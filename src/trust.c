/* This file decides whether a project config may apply without the user's
 * approval, and keeps the approvals: one file per approved config under
 * $XDG_STATE_HOME/agent-sandbox/trusted, holding the SHA-256 of the exact
 * text. It never approves anything itself, and `trust` refuses to run inside
 * a sandbox, so only the user outside can approve. */
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "cleanup.h"
#include "env.h"
#include "inside.h"
#include "io.h"
#include "jsonc.h"
#include "path.h"
#include "pattern.h"
#include "preset.h"
#include "secrets.h"
#include "term_escape.h"
#include "xalloc.h"

#define TRUST_RECORD_MAX 8192

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
		return error_errno(err, EXIT_USAGE, -r, "resolving the directory of %s", file);
	*key = xasprintf("%s%s%s", resolved, strcmp(resolved, "/") ? "/" : "", name);
	return 0;
}

int trust_assess(const struct trust_input *in, struct trust_check *tc, struct error *err)
{
	*tc = (struct trust_check){
	    .state = TRUST_TIGHTENS, .loosenings = STRV_INIT, .origins = STRV_INIT};
	tc->file = xstrdup(in->file);
	sha256_hex(in->text, in->len, tc->digest);

	if (key_for(in->file, &tc->key_path, err) < 0)
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

static enum access_level base_level(const struct policy *p, const char *path, const char **decided)
{
	const struct access_entry *e = policy_entry_for(p, path);
	if (e) {
		*decided = e->rule->origin;
		return e->level;
	}
	const struct base_mount *m = policy_base_for(path);
	*decided = m->description;
	return m->kind == BASE_HOST_ROOT ? ACCESS_RO : ACCESS_RW;
}

static const char *level_words(enum access_level level)
{
	switch (level) {
	case ACCESS_RW:
		return "writable";
	case ACCESS_RO:
		return "read-only";
	case ACCESS_EXCLUDE:
		return "hidden";
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
		const char *decided = NULL;
		enum access_level before = base_level(base, e->path, &decided);
		/* Levels are ordered by strictness: a smaller one gives more. */
		if (e->level >= before || strv_contains(&tc->origins, e->rule->origin))
			continue;
		strv_pushf(&tc->loosenings, "%s: \"%s\": \"%s\" makes %s %s (it was %s, by %s)",
			   e->rule->origin, access_level_name(e->rule->level), e->rule->pattern,
			   e->path, level_words(e->level), level_words(before), decided);
		strv_push(&tc->origins, e->rule->origin);
	}
}

char *trust_store_dir(char *const *envp, const char *home)
{
	_cleanup_free_ char *dir = audit_dir(envp, home);
	return dir ? xasprintf("%s/trusted", dir) : NULL;
}

static char *record_path(const char *store_dir, const char *key_path)
{
	char name[SHA256_HEX_LEN + 1];
	sha256_hex(key_path, strlen(key_path), name);
	return xasprintf("%s/%s", store_dir, name);
}

/* The approved digest for key_path, or NULL. A record must be a regular file
 * of ours that nobody else can write: anything else is ignored. */
static char *lookup_digest(const char *store_dir, const char *key_path)
{
	_cleanup_free_ char *path = record_path(store_dir, key_path);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	_cleanup_free_ char *proc = xasprintf("/proc/self/fd/%d", fd);
	if (read_file(proc, TRUST_RECORD_MAX, &text, &len) < 0)
		return NULL;
	/* "<digest> <path>\n" */
	if (len < SHA256_HEX_LEN + 2 || text[SHA256_HEX_LEN] != ' ')
		return NULL;
	text[SHA256_HEX_LEN] = '\0';
	char *stored_path = text + SHA256_HEX_LEN + 1;
	stored_path[strcspn(stored_path, "\n")] = '\0';
	if (strcmp(stored_path, key_path) != 0)
		return NULL;
	return xstrndup(text, SHA256_HEX_LEN);
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
	if (!tc->loosenings.len) {
		tc->state = TRUST_TIGHTENS;
		return;
	}
	/* Inside a sandbox the store is hidden, and there is nothing to gain:
	 * the inner run cannot reach past the outer one's mounts, network
	 * namespace, environment or wrappers. */
	if (inside) {
		tc->state = TRUST_NOT_CHECKED;
		return;
	}
	_cleanup_free_ char *approved = store_dir ? lookup_digest(store_dir, tc->key_path) : NULL;
	if (!approved)
		tc->state = TRUST_UNAPPROVED;
	else if (strcmp(approved, tc->digest) != 0)
		tc->state = TRUST_CHANGED;
	else
		tc->state = TRUST_APPROVED;
}

/* The path as one shell word, so that the approval command can be pasted.
 * A quote becomes '"'"' rather than '\'': the printer doubles backslashes. */
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
			: "this content has not been approved");
	error_set(err, EXIT_USAGE, "%s", sb.buf);
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
void trust_describe(const struct trust_check *tc, struct strbuf *sb)
{
	_cleanup_free_ char *file = tc->file ? term_escape(tc->file) : NULL;
	switch (tc->state) {
	case TRUST_NO_FILE:
		strbuf_addstr(sb, "trust: no project config\n");
		return;
	case TRUST_TIGHTENS:
		strbuf_addf(sb, "trust: %s only tightens; no approval needed\n", file);
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
	if (tc->state == TRUST_UNAPPROVED || tc->state == TRUST_CHANGED) {
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
static int store_digest(const char *store_dir, const char *key_path, const char *digest,
			struct error *err)
{
	if (state_dir_prepare(store_dir, err) < 0)
		return -1;
	_cleanup_free_ char *final = record_path(store_dir, key_path);
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.%d", final, (int)getpid());
	_cleanup_close_ int fd =
	    open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_errno(err, EXIT_SETUP, errno, "creating %s", tmp);
	_cleanup_free_ char *record = xasprintf("%s %s\n", digest, key_path);
	int r = write_all(fd, record, strlen(record));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return error_errno(err, EXIT_SETUP, -r, "writing %s", tmp);
	}
	if (rename(tmp, final) < 0) {
		int e = errno;
		unlink(tmp);
		return error_errno(err, EXIT_SETUP, e, "renaming %s to %s", tmp, final);
	}
	return 0;
}

static int find_config(const char *arg, char **file, struct error *err)
{
	_cleanup_free_ char *here = getcwd(NULL, 0);
	if (!here)
		return error_errno(err, EXIT_SETUP, errno, "reading the working directory");
	_cleanup_free_ char *target = !arg	      ? xstrdup(here)
				      : arg[0] == '/' ? xstrdup(arg)
						      : xasprintf("%s/%s", here, arg);
	struct stat st;
	if (stat(target, &st) < 0)
		return error_errno(err, EXIT_USAGE, errno, "trust %s", arg ? arg : here);
	if (!S_ISDIR(st.st_mode)) {
		*file = steal_ptr(&target);
		return 0;
	}
	if (config_find(target, ".agent-sandbox", file, err) < 0)
		return -1;
	if (!*file) {
		error_set(err, EXIT_USAGE,
			  "trust: no .agent-sandbox.json or .agent-sandbox.jsonc in %s", target);
		error_hint(err, "name the config file: agent-sandbox trust PATH");
		return -1;
	}
	return 0;
}

int trust_command(const char *arg, char *const *envp, int out, struct error *err)
{
	if (inside_sandbox()) {
		error_set(err, EXIT_USAGE,
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
	if (config_read_file(file, &text, &len, err) < 0)
		return -1;
	/* Approving a file that does not load would be approving nothing. */
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	if (config_load_text(&cfg, file, text, len, LAYER_PROJECT, err) < 0)
		return -1;

	const char *home = env_get(envp, "HOME");
	_cleanup_free_ char *store = trust_store_dir(envp, home && home[0] == '/' ? home : NULL);
	if (!store)
		return error_set(err, EXIT_SETUP,
				 "trust: cannot locate the trust store: neither XDG_STATE_HOME nor "
				 "HOME is set");
	_cleanup_free_ char *key = NULL;
	if (key_for(file, &key, err) < 0)
		return -1;
	char digest[SHA256_HEX_LEN + 1];
	sha256_hex(text, len, digest);
	if (store_digest(store, key, digest, err) < 0)
		return -1;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *shown = term_escape(key);
	strbuf_addf(&sb, "trusted %s\n  sha256 %s\n  editing the file withdraws this approval\n",
		    shown, digest);
	write_all(out, sb.buf, sb.len);
	return 0;
}

void trust_check_release(struct trust_check *tc)
{
	free(tc->file);
	free(tc->key_path);
	strv_release(&tc->loosenings);
	strv_release(&tc->origins);
	*tc = (struct trust_check){0};
}
