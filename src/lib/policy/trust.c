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
#include "policy/path.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

#define TRUST_RECORD_MAX 8192
#define TRUST_RECORD_MAGIC "agent-sandbox trust record 2\n"

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

int trust_identify(struct trust_check *tc, const char *file, const char *text, size_t len, int fd,
		   struct error *err)
{
	*tc = (struct trust_check){
	    .state = TRUST_TIGHTENS, .loosenings = STRV_INIT, .origins = STRV_INIT};
	tc->file = xstrdup(file);
	sha256_hex(text, len, tc->digest);
	if (key_for(file, &tc->key_path, err) < 0)
		return -1;
	return identify(fd, file, &tc->identity, err);
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

	_cleanup_free_ char *state = NULL;
	if (dirs_state_required(envp, &state, err) < 0)
		return error_prefix(err, "trust");
	_cleanup_free_ char *store = xasprintf("%s/trusted", state);
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
