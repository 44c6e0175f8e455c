/* The executor API's file methods, confined on the host. Every path is
 * resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) from the
 * workspace's descriptor, and every change is made relative to the opened
 * parent directory, so no path string is trusted between check and use.
 * Decisions come from the session's policy (the same table the sandbox is
 * built from); this file never writes outside the workspace, never follows
 * a last component's symlink when changing it, and never crosses a mount. */
#include "serve/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/cleanup.h"
#include "base/file_id.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "base/xalloc.h"
#include "policy/path.h"
#include "policy/policy.h"
#include "policy/preset_git.h"
#include "policy/secrets.h"
#include "serve/rpc.h"

/* Deeper than this, fs/remove refuses a tree rather than recurse. */
#define REMOVE_DEPTH_MAX 256

#define RESOLVE_CONFINED (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)

static void json_putp(struct json_object **o)
{
	if (*o)
		json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_putp)

/* openat2 beneath dir. The kernel answers EAGAIN when a rename anywhere
 * raced the lookup; it is safe to retry. Returns a descriptor or -errno. */
static int open_beneath(int dir, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = {
	    .flags = (unsigned long long)(flags | O_CLOEXEC),
	    .resolve = resolve,
	};
	for (int i = 0; i < 64; i++) {
		long fd = syscall(SYS_openat2, dir, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
	return -EAGAIN;
}

/* The error a failed call on rel gives: escapes are denials, a missing
 * entry is not found, the rest is the host's. */
static int path_error(struct error *err, int e, const char *rel, const char *what)
{
	const char *shown = *rel ? rel : ".";
	switch (e) {
	case EXDEV:
	case ELOOP:
		return error_set(err, ERROR_DENIED,
				 "%s %s: the path leads out of the workspace (through \"..\", "
				 "an absolute or /proc symlink, or a symlink loop)",
				 what, shown);
	case EACCES:
	case EPERM:
	case EROFS:
		return error_errno(err, ERROR_DENIED, e, "%s %s", what, shown);
	case ENOENT:
	case ENOTDIR:
		return error_errno(err, ERROR_NOT_FOUND, e, "%s %s", what, shown);
	case ENAMETOOLONG:
		return error_errno(err, ERROR_USAGE, e, "%s %s", what, shown);
	default:
		return error_errno(err, ERROR_SETUP, e, "%s %s", what, shown);
	}
}

/* The path a request names, relative to the workspace: "" for the
 * workspace itself, components joined by '/', no "." or "..". An absolute
 * path must be the workspace as the sandbox sees it or lie under it; that
 * prefix is only translated here, never trusted: resolution happens
 * beneath the descriptor. */
static int normalise(const struct serve_fs_root *root, const char *path, char **out,
		     struct error *err)
{
	const char *rest = path;
	if (path[0] == '/') {
		size_t n = strlen(root->inside_path);
		while (n > 0 && root->inside_path[n - 1] == '/')
			n--;
		if (strncmp(path, root->inside_path, n) != 0 || (path[n] != '\0' && path[n] != '/'))
			return error_set(err, ERROR_DENIED,
					 "%s is outside the workspace %s: fs/* paths are relative "
					 "to the workspace or absolute under it",
					 path, root->inside_path);
		rest = path + n;
	}
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = rest; *p;) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			strbuf_release(&sb);
			return error_set(err, ERROR_DENIED, "%s: fs/* paths may not contain \"..\"",
					 path);
		}
		if (len > 0 && !(len == 1 && p[0] == '.')) {
			if (sb.len)
				strbuf_addch(&sb, '/');
			strbuf_add(&sb, p, len);
		}
		p = *end ? end + 1 : end;
	}
	*out = strbuf_detach(&sb);
	return 0;
}

/* The host path of an open descriptor, which must lie in the workspace:
 * the policy is a table of resolved host paths. */
static int fd_host_path(const struct serve_fs_root *root, int fd, char **out, struct error *err)
{
	_cleanup_free_ char *link = xasprintf("/proc/self/fd/%d", fd);
	_cleanup_free_ char *target = NULL;
	int r = path_read_link(link, &target);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "reading %s", link);
	if (!path_is_within(target, root->host_path))
		return error_set(err, ERROR_DENIED,
				 "%s is no longer in the workspace %s (moved while in use)", target,
				 root->host_path);
	*out = steal_ptr(&target);
	return 0;
}

/* host relative to the workspace ("" for the workspace itself). */
static const char *rel_of(const struct serve_fs_root *root, const char *host)
{
	const char *r = host + strlen(root->host_path);
	return *r == '/' ? r + 1 : r;
}

/* The level the sandbox has at a host path in the workspace, the way the
 * sandbox gets it: the deepest entry covering it, tightened by a rule that
 * names the path itself before it exists (the guard's absent entries and
 * globs), pinned files read-only. */
static enum access_level level_at(const struct sandbox_spec *spec, const char *host)
{
	const struct policy *p = &spec->policy;
	for (size_t i = 0; i < p->pinned_len; i++)
		if (!strcmp(p->pinned[i].path, host))
			return ACCESS_RO;
	const struct access_entry *e = policy_entry_for(p, host);
	enum access_level level = ACCESS_EXCLUDE;
	if (e)
		level = e->level;
	else if (policy_base_for(host)->kind == BASE_HOST_ROOT)
		level = ACCESS_RO;
	const struct rule *rule;
	if (policy_rule_for_new(p, host, &rule) && rule->level > level)
		level = rule->level;
	return level;
}

/* Whether the sandbox masks the file at host: an excluded path, or a name
 * the secret scan masks (also one that appeared after the scan: the
 * sandbox's watch masks it then). */
static bool masked_at(const struct serve_fs_root *root, const char *host)
{
	if (!root->spec)
		return false;
	return level_at(root->spec, host) == ACCESS_EXCLUDE ||
	       secrets_would_mask(&root->spec->cfg, rel_of(root, host));
}

/* Whether the sandbox has a mount at host (or at a path under it when
 * below): renaming or unlinking it on the host would detach that mount
 * inside, unmasking or unprotecting what it covers. */
static bool mount_inside(const struct serve_fs_root *root, const char *host, bool below)
{
	const struct policy *p = &root->spec->policy;
	for (size_t i = 0; i < p->len; i++) {
		const char *e = p->entries[i].path;
		if (!strcmp(e, root->host_path))
			continue;
		if (!strcmp(e, host) || (below && path_is_within(e, host)))
			return true;
	}
	for (size_t i = 0; i < p->pinned_len; i++)
		if (!strcmp(p->pinned[i].path, host) ||
		    (below && path_is_within(p->pinned[i].path, host)))
			return true;
	for (size_t i = 0; i < p->absent_len; i++)
		if (p->absent[i].level != ACCESS_RW &&
		    (!strcmp(p->absent[i].path, host) ||
		     (below && path_is_within(p->absent[i].path, host))))
			return true;
	return false;
}

/* A change at host (creating, replacing or removing it) is what the
 * sandbox could do itself: writable there, and no mount of it to undo.
 * Nothing git would read as configuration or code is made, even in a
 * repository the plan did not see (made since): the platform must not be
 * the one to plant a hook. */
static int check_change(const struct serve_fs_root *root, const char *host, bool exists,
			bool removing, struct error *err)
{
	const char *rel = rel_of(root, host);
	if (!removing && preset_git_is_control(rel))
		return error_set(err, ERROR_DENIED,
				 "%s is git configuration or code (a hook, config, ...); fs/* "
				 "does not write it",
				 rel);
	if (!root->spec)
		return 0;
	enum access_level level = level_at(root->spec, host);
	if (level != ACCESS_RW)
		return error_set(err, ERROR_DENIED, "%s is %s in the session's policy", rel,
				 level == ACCESS_RO ? "read-only" : "excluded (hidden)");
	if (exists &&
	    (mount_inside(root, host, false) || secrets_would_mask(&root->spec->cfg, rel)))
		return error_set(err, ERROR_DENIED,
				 "%s is masked or protected in the session's sandbox; fs/* does "
				 "not replace or remove it",
				 rel);
	return 0;
}

/* Whether st is the object of an excluded entry (a hard link to a masked
 * secret is the secret). */
static bool is_excluded_object(const struct sandbox_spec *spec, const struct stat *st)
{
	struct file_id id;
	file_id_from_stat(st, &id);
	for (size_t i = 0; i < spec->policy.len; i++) {
		const struct access_entry *e = &spec->policy.entries[i];
		if (e->level == ACCESS_EXCLUDE && file_id_known(&e->id) &&
		    e->id.dev_major == id.dev_major && e->id.dev_minor == id.dev_minor &&
		    e->id.ino == id.ino)
			return true;
	}
	return false;
}

/* The last component of rel, opened relative to its parent directory. */
struct target {
	int dir;    /* the parent (O_PATH), or the workspace when name is NULL */
	char *name; /* the last component; NULL: rel names the workspace */
	char *host; /* the parent's host path */
	char *rel;  /* rel as normalised */
};

static void target_release(struct target *t)
{
	if (t->dir >= 0)
		close(t->dir);
	free(t->name);
	free(t->host);
	free(t->rel);
}

/* The host path of the target itself. */
static char *target_host(const struct target *t)
{
	return t->name ? xasprintf("%s/%s", t->host, t->name) : xstrdup(t->host);
}

/* A daemon run as root makes what it creates the workspace owner's, or
 * the sandbox (run as that owner) could not change it. Returns 0 or
 * -errno. */
static int chown_like_workspace(const struct serve_fs_root *root, int dir, const char *name)
{
	struct stat st;
	if (geteuid() != 0)
		return 0;
	if (fstat(root->dir_fd, &st) < 0 ||
	    fchownat(dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

/* Opens the parent of a missing directory chain under root, making each
 * missing one (0755) where the policy lets the sandbox write. Each step
 * resolves beneath the workspace and makes the next directory relative to
 * the one just opened. */
static int open_creating(const struct serve_fs_root *root, const char *parent, int *out,
			 struct error *err)
{
	_cleanup_close_ int cur =
	    open_beneath(root->dir_fd, ".", O_PATH | O_DIRECTORY, RESOLVE_CONFINED);
	if (cur < 0)
		return path_error(err, -cur, "", "opening");
	struct strbuf prefix = STRBUF_INIT;
	int r = 0;
	for (const char *p = parent; *p && r == 0;) {
		const char *end = strchrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		if (prefix.len)
			strbuf_addch(&prefix, '/');
		strbuf_addstr(&prefix, comp);
		p = *end ? end + 1 : end;
		int fd = open_beneath(root->dir_fd, strbuf_str(&prefix), O_PATH | O_DIRECTORY,
				      RESOLVE_CONFINED);
		if (fd == -ENOENT) {
			_cleanup_free_ char *host = NULL;
			r = fd_host_path(root, cur, &host, err);
			if (r < 0)
				break;
			_cleanup_free_ char *child = xasprintf("%s/%s", host, comp);
			r = check_change(root, child, false, false, err);
			if (r < 0)
				break;
			if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST) {
				r = path_error(err, errno, strbuf_str(&prefix), "making");
				break;
			}
			int e = chown_like_workspace(root, cur, comp);
			if (e < 0) {
				r = path_error(err, -e, strbuf_str(&prefix), "making");
				break;
			}
			/* Beneath the directory just used, not following a
			 * symlink swapped in meanwhile. */
			fd = open_beneath(cur, comp, O_PATH | O_DIRECTORY,
					  RESOLVE_CONFINED | RESOLVE_NO_SYMLINKS);
		}
		if (fd < 0) {
			r = path_error(err, -fd, strbuf_str(&prefix), "opening");
			break;
		}
		close(cur);
		cur = fd;
	}
	strbuf_release(&prefix);
	if (r < 0)
		return r;
	*out = steal_fd(&cur);
	return 0;
}

/* Splits rel into its parent, opened beneath the workspace, and its last
 * component. */
static int open_target(const struct serve_fs_root *root, const char *path, bool create_parents,
		       struct target *t, struct error *err)
{
	*t = (struct target){.dir = -1};
	if (normalise(root, path, &t->rel, err) < 0)
		return -1;
	_cleanup_free_ char *parent = NULL;
	char *slash = strrchr(t->rel, '/');
	if (slash) {
		parent = xstrndup(t->rel, (size_t)(slash - t->rel));
		t->name = xstrdup(slash + 1);
	} else if (*t->rel) {
		parent = xstrdup(".");
		t->name = xstrdup(t->rel);
	} else {
		parent = xstrdup(".");
	}
	if (create_parents && strcmp(parent, ".")) {
		if (open_creating(root, parent, &t->dir, err) < 0)
			return -1;
	} else {
		t->dir = open_beneath(root->dir_fd, parent, O_PATH | O_DIRECTORY, RESOLVE_CONFINED);
		if (t->dir < 0) {
			int e = -t->dir;
			return path_error(err, e, strcmp(parent, ".") ? parent : "", "opening");
		}
	}
	if (fd_host_path(root, t->dir, &t->host, err) < 0)
		return -1;
	/* Inside an excluded directory the sandbox sees an empty one. */
	if (root->spec && level_at(root->spec, t->host) == ACCESS_EXCLUDE)
		return error_set(err, ERROR_DENIED,
				 "%s is inside a path the session's policy hides", t->rel);
	return 0;
}

static int get_path(struct json_object *params, const char **path, struct error *err)
{
	*path = "";
	return rpc_param_string(params, "path", true, path, err);
}

static const char *type_of(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "directory";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

/* RFC 3339, UTC, milliseconds. */
static char *rfc3339(const struct timespec *ts)
{
	struct tm tm;
	char buf[64];
	if (!gmtime_r(&ts->tv_sec, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm))
		return xstrdup("1970-01-01T00:00:00.000Z");
	return xasprintf("%s.%03ldZ", buf, ts->tv_nsec / 1000000);
}

/* The stat fields of an entry; masked ones as the sandbox shows them
 * (empty). */
static struct json_object *entry_object(int dir, const char *name, const struct stat *st,
					bool masked)
{
	struct json_object *o = json_object_new_object();
	char mode[16];
	snprintf(mode, sizeof(mode), "%04o", (unsigned)(st->st_mode & 07777));
	_cleanup_free_ char *mtime = rfc3339(&st->st_mtim);
	json_object_object_add(o, "type", json_object_new_string(type_of(st->st_mode)));
	json_object_object_add(o, "size", json_object_new_int64(masked ? 0 : (int64_t)st->st_size));
	json_object_object_add(o, "mode", json_object_new_string(mode));
	json_object_object_add(o, "modifiedAt", json_object_new_string(mtime));
	if (masked)
		json_object_object_add(o, "masked", json_object_new_boolean(true));
	if (S_ISLNK(st->st_mode)) {
		_cleanup_free_ char *target = xmalloc(PATH_MAX + 1);
		ssize_t n = readlinkat(dir, name, target, PATH_MAX);
		if (n >= 0) {
			target[n] = '\0';
			json_object_object_add(o, "symlinkTarget", json_object_new_string(target));
		}
	}
	return o;
}

static int fs_stat(const struct serve_fs_root *root, struct json_object *params,
		   struct json_object **result, struct error *err)
{
	const char *path;
	if (get_path(params, &path, err) < 0)
		return -1;
	_cleanup_(target_release) struct target t = {.dir = -1};
	if (open_target(root, path, false, &t, err) < 0)
		return -1;
	struct stat st;
	if (fstatat(t.dir, t.name ? t.name : "", &st,
		    t.name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH) < 0)
		return path_error(err, errno, t.rel, "stat");
	_cleanup_free_ char *host = target_host(&t);
	*result = entry_object(t.dir, t.name ? t.name : "", &st, masked_at(root, host));
	return 0;
}

static int fs_read(const struct serve_fs_root *root, struct json_object *params,
		   struct json_object **result, struct error *err)
{
	const char *path;
	int64_t offset = 0, length = -1;
	if (get_path(params, &path, err) < 0 ||
	    rpc_param_int(params, "offset", false, 0, INT64_MAX, &offset, err) < 0 ||
	    rpc_param_int(params, "length", false, 0, INT64_MAX, &length, err) < 0)
		return -1;
	if (length > (int64_t)SERVE_FS_IO_MAX)
		return error_set(err, ERROR_LIMIT,
				 "fs/read returns at most %u bytes per call (length %lld); read "
				 "in parts with offset",
				 SERVE_FS_IO_MAX, (long long)length);
	_cleanup_free_ char *rel = NULL;
	if (normalise(root, path, &rel, err) < 0)
		return -1;
	/* Symlinks that stay in the workspace are followed, as inside. */
	_cleanup_close_ int pfd =
	    open_beneath(root->dir_fd, *rel ? rel : ".", O_PATH, RESOLVE_CONFINED);
	if (pfd < 0)
		return path_error(err, -pfd, rel, "reading");
	struct stat st;
	if (fstat(pfd, &st) < 0)
		return path_error(err, errno, rel, "reading");
	if (!S_ISREG(st.st_mode))
		return error_set(err, ERROR_USAGE, "reading %s: not a regular file (a %s)",
				 *rel ? rel : ".", type_of(st.st_mode));
	_cleanup_free_ char *host = NULL;
	if (fd_host_path(root, pfd, &host, err) < 0)
		return -1;
	if (masked_at(root, host) || (root->spec && is_excluded_object(root->spec, &st)))
		return error_set(err, ERROR_DENIED,
				 "reading %s: the session's policy masks it (the sandbox sees it "
				 "empty)",
				 rel);
	/* Reopened for reading only now that it is known to be a regular
	 * file: opening a FIFO or device could block or act. */
	_cleanup_free_ char *proc = xasprintf("/proc/self/fd/%d", pfd);
	_cleanup_close_ int fd = open(proc, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return path_error(err, errno, rel, "reading");
	if (fstat(fd, &st) < 0)
		return path_error(err, errno, rel, "reading");
	size_t want = length < 0 ? SERVE_FS_IO_MAX : (size_t)length;
	size_t avail = offset < st.st_size ? (size_t)(st.st_size - offset) : 0;
	if (want > avail)
		want = avail;
	_cleanup_free_ unsigned char *buf = xmalloc(want + 1);
	size_t got = 0;
	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, (off_t)(offset + (int64_t)got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return path_error(err, errno, rel, "reading");
		if (n == 0)
			break;
		got += (size_t)n;
	}
	size_t enc_len;
	_cleanup_free_ char *enc = base64_encode(buf, got, &enc_len);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "dataBase64", json_object_new_string_len(enc, (int)enc_len));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)st.st_size));
	json_object_object_add(o, "eof",
			       json_object_new_boolean(offset + (int64_t)got >= st.st_size));
	*result = o;
	return 0;
}

/* mode: an octal string ("0644") or a number; permission bits only. */
static int get_mode(struct json_object *params, mode_t *mode, struct error *err)
{
	static const char form[] = "an octal string such as \"0644\" or a number, permission bits "
				   "only (no setuid, setgid or sticky bit)";
	struct json_object *v;
	*mode = 0644;
	if (!json_object_object_get_ex(params, "mode", &v) ||
	    json_object_is_type(v, json_type_null))
		return 0;
	long long m = -1;
	if (json_object_is_type(v, json_type_int)) {
		m = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		char *end;
		errno = 0;
		if (*s >= '0' && *s <= '7' && strlen(s) <= 4) {
			m = strtoll(s, &end, 8);
			if (*end || errno)
				m = -1;
		}
	}
	if (m < 0 || m > 0777)
		return error_set(err, ERROR_USAGE, "the parameter \"mode\" must be %s", form);
	*mode = (mode_t)m;
	return 0;
}

static int fs_write(const struct serve_fs_root *root, struct json_object *params,
		    struct json_object **result, struct error *err)
{
	const char *path, *data = NULL;
	bool parents = false;
	mode_t mode;
	if (get_path(params, &path, err) < 0 ||
	    rpc_param_string(params, "dataBase64", true, &data, err) < 0 ||
	    rpc_param_bool(params, "createParents", &parents, err) < 0 ||
	    get_mode(params, &mode, err) < 0)
		return -1;
	/* Refused before decoding: 4 characters per 3 bytes. */
	size_t data_len = strlen(data);
	if (data_len / 4 * 3 > SERVE_FS_IO_MAX + 2)
		return error_set(err, ERROR_LIMIT,
				 "fs/write takes at most %u bytes per call; write a larger file "
				 "from inside the session",
				 SERVE_FS_IO_MAX);
	size_t len;
	_cleanup_free_ unsigned char *bytes = base64_decode(data, data_len, &len);
	if (!bytes)
		return error_set(err, ERROR_USAGE,
				 "the parameter \"dataBase64\" must be base64 (RFC 4648, "
				 "padded, no whitespace)");
	if (len > SERVE_FS_IO_MAX)
		return error_set(err, ERROR_LIMIT, "fs/write takes at most %u bytes per call",
				 SERVE_FS_IO_MAX);
	_cleanup_(target_release) struct target t = {.dir = -1};
	if (open_target(root, path, parents, &t, err) < 0)
		return -1;
	if (!t.name)
		return error_set(err, ERROR_USAGE,
				 "fs/write needs a file's path, not the workspace");
	_cleanup_free_ char *host = target_host(&t);
	struct stat st;
	bool exists = fstatat(t.dir, t.name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && S_ISDIR(st.st_mode))
		return error_set(err, ERROR_USAGE, "writing %s: it is a directory", t.rel);
	/* A .git file points git at another git directory (its hooks). */
	if (!strcmp(t.name, ".git"))
		return error_set(err, ERROR_DENIED,
				 "writing %s: a .git file would point git elsewhere; fs/* does "
				 "not write it",
				 t.rel);
	if (check_change(root, host, exists, false, err) < 0)
		return -1;

	/* A new file beside the target, renamed over it when complete: a
	 * reader sees the old file or the new one, never a part, and the
	 * rename replaces the entry itself (a symlink there is replaced,
	 * not followed). */
	uint64_t rnd;
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return error_errno(err, ERROR_SETUP, errno, "getrandom");
	_cleanup_free_ char *tmp = xasprintf(".serve-write-%016llx", (unsigned long long)rnd);
	/* The temporary name must be one the sandbox could write too: a
	 * rule's glob matching it (@base's ".agent-sandbox*") would have the
	 * session's guard take it away. */
	_cleanup_free_ char *tmp_host = xasprintf("%s/%s", t.host, tmp);
	if (check_change(root, tmp_host, false, false, err) < 0)
		return error_prefix(err, "writing %s through a temporary file", t.rel);
	_cleanup_close_ int fd =
	    openat(t.dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return path_error(err, errno, t.rel, "writing");
	int e = write_all(fd, bytes, len);
	if (e == 0 && fchmod(fd, mode) < 0)
		e = -errno;
	if (e == 0 && fsync(fd) < 0)
		e = -errno;
	if (e == 0)
		e = chown_like_workspace(root, t.dir, tmp);
	if (e == 0 && renameat(t.dir, tmp, t.dir, t.name) < 0)
		e = -errno;
	if (e < 0) {
		(void)unlinkat(t.dir, tmp, 0);
		return path_error(err, -e, t.rel, "writing");
	}
	/* The rename itself durable, as far as the directory can be synced
	 * (the descriptor held is O_PATH). */
	_cleanup_close_ int dfd = openat(t.dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	*result = json_object_new_object();
	json_object_object_add(*result, "size", json_object_new_int64((int64_t)len));
	return 0;
}

static int fs_mkdir(const struct serve_fs_root *root, struct json_object *params,
		    struct json_object **result, struct error *err)
{
	const char *path;
	bool parents = false;
	if (get_path(params, &path, err) < 0 ||
	    rpc_param_bool(params, "parents", &parents, err) < 0)
		return -1;
	_cleanup_(target_release) struct target t = {.dir = -1};
	if (open_target(root, path, parents, &t, err) < 0)
		return -1;
	struct stat st;
	if (!t.name || fstatat(t.dir, t.name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* With parents, an existing directory is success (mkdir -p). */
		if (!t.name || (parents && S_ISDIR(st.st_mode))) {
			if (!parents)
				return error_set(err, ERROR_USAGE,
						 "making %s: the workspace exists", path);
		} else {
			return error_set(err, ERROR_USAGE, "making %s: it exists (a %s)", t.rel,
					 type_of(st.st_mode));
		}
	} else {
		_cleanup_free_ char *host = target_host(&t);
		if (check_change(root, host, false, false, err) < 0)
			return -1;
		if (mkdirat(t.dir, t.name, 0755) < 0) {
			if (!(parents && errno == EEXIST))
				return path_error(err, errno, t.rel, "making");
		} else {
			int e = chown_like_workspace(root, t.dir, t.name);
			if (e < 0)
				return path_error(err, -e, t.rel, "making");
		}
	}
	*result = json_object_new_object();
	return 0;
}

/* Walks the tree at name beneath dir without following a symlink or
 * crossing a mount; with check, only refuses what the sandbox could not
 * remove (a masked secret, another file system), otherwise removes. */
static int remove_tree(const struct serve_fs_root *root, int dir, const char *name, const char *rel,
		       dev_t dev, int depth, bool check, struct error *err)
{
	struct stat st;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT && !check ? 0 : path_error(err, errno, rel, "removing");
	if (st.st_dev != dev)
		return error_set(err, ERROR_DENIED,
				 "removing %s: another file system is mounted there", rel);
	if (check && root->spec && secrets_would_mask(&root->spec->cfg, rel))
		return error_set(err, ERROR_DENIED,
				 "removing %s: the session's sandbox masks it; fs/remove does not "
				 "remove it",
				 rel);
	if (!S_ISDIR(st.st_mode)) {
		if (check)
			return 0;
		return unlinkat(dir, name, 0) < 0 && errno != ENOENT
			   ? path_error(err, errno, rel, "removing")
			   : 0;
	}
	if (depth > REMOVE_DEPTH_MAX)
		return error_set(err, ERROR_LIMIT, "removing %s: deeper than %d levels", rel,
				 REMOVE_DEPTH_MAX);
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return path_error(err, errno, rel, "removing");
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return path_error(err, e, rel, "removing");
	}
	int r = 0;
	for (struct dirent *de; r == 0 && (de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *child = xasprintf("%s/%s", rel, de->d_name);
		r = remove_tree(root, fd, de->d_name, child, dev, depth + 1, check, err);
	}
	closedir(d);
	if (r < 0 || check)
		return r;
	return unlinkat(dir, name, AT_REMOVEDIR) < 0 && errno != ENOENT
		   ? path_error(err, errno, rel, "removing")
		   : 0;
}

static int fs_remove(const struct serve_fs_root *root, struct json_object *params,
		     struct json_object **result, struct error *err)
{
	const char *path;
	bool recursive = false;
	if (get_path(params, &path, err) < 0 ||
	    rpc_param_bool(params, "recursive", &recursive, err) < 0)
		return -1;
	_cleanup_(target_release) struct target t = {.dir = -1};
	if (open_target(root, path, false, &t, err) < 0)
		return -1;
	if (!t.name)
		return error_set(err, ERROR_DENIED,
				 "fs/remove does not remove the workspace itself");
	struct stat st;
	if (fstatat(t.dir, t.name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return path_error(err, errno, t.rel, "removing");
	_cleanup_free_ char *host = target_host(&t);
	if (check_change(root, host, true, true, err) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(t.dir, t.name, 0) < 0)
			return path_error(err, errno, t.rel, "removing");
	} else if (!recursive) {
		if (unlinkat(t.dir, t.name, AT_REMOVEDIR) < 0) {
			if (errno == ENOTEMPTY || errno == EEXIST)
				return error_set(err, ERROR_USAGE,
						 "removing %s: the directory is not empty (pass "
						 "\"recursive\": true)",
						 t.rel);
			return path_error(err, errno, t.rel, "removing");
		}
	} else {
		if (root->spec && mount_inside(root, host, true))
			return error_set(err, ERROR_DENIED,
					 "removing %s: it holds paths the session's policy "
					 "protects or masks",
					 t.rel);
		struct stat pst;
		if (fstat(t.dir, &pst) < 0)
			return path_error(err, errno, t.rel, "removing");
		if (remove_tree(root, t.dir, t.name, t.rel, pst.st_dev, 0, true, err) < 0 ||
		    remove_tree(root, t.dir, t.name, t.rel, pst.st_dev, 0, false, err) < 0)
			return -1;
	}
	*result = json_object_new_object();
	return 0;
}

struct lister {
	const struct serve_fs_root *root;
	struct json_object *entries;
	size_t count;
	bool truncated;
};

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists dir (at host, shown as prefix) in name order, descending depth
 * more levels into directories on the same file system that the sandbox
 * does not hide, never through a symlink. */
static int list_dir(struct lister *l, int dir, const char *host, const char *prefix, int depth,
		    struct error *err)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return path_error(err, errno, prefix, "listing");
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return path_error(err, e, prefix, "listing");
	}
	struct strv names = STRV_INIT;
	for (struct dirent *de; (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_push(&names, de->d_name);
	if (names.len)
		qsort(names.items, names.len, sizeof(*names.items), compare_names);
	struct stat dst;
	int r = fstat(dirfd(d), &dst) < 0 ? path_error(err, errno, prefix, "listing") : 0;
	for (size_t i = 0; r == 0 && i < names.len; i++) {
		const char *name = names.items[i];
		struct stat st;
		if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		if (l->count >= SERVE_FS_ENTRIES_MAX) {
			l->truncated = true;
			break;
		}
		_cleanup_free_ char *child_host = xasprintf("%s/%s", host, name);
		_cleanup_free_ char *shown =
		    *prefix ? xasprintf("%s/%s", prefix, name) : xstrdup(name);
		bool masked = masked_at(l->root, child_host);
		struct json_object *o = entry_object(dirfd(d), name, &st, masked);
		json_object_object_add(o, "name", json_object_new_string(shown));
		json_object_array_add(l->entries, o);
		l->count++;
		if (depth <= 1 || !S_ISDIR(st.st_mode) || masked || st.st_dev != dst.st_dev)
			continue;
		_cleanup_close_ int sub =
		    openat(dirfd(d), name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			r = list_dir(l, sub, child_host, shown, depth - 1, err);
	}
	strv_release(&names);
	closedir(d);
	return r;
}

static int fs_list(const struct serve_fs_root *root, struct json_object *params,
		   struct json_object **result, struct error *err)
{
	const char *path;
	int64_t depth = 1;
	if (get_path(params, &path, err) < 0 ||
	    rpc_param_int(params, "depth", false, 1, SERVE_FS_DEPTH_MAX, &depth, err) < 0)
		return -1;
	_cleanup_free_ char *rel = NULL;
	if (normalise(root, path, &rel, err) < 0)
		return -1;
	_cleanup_close_ int fd =
	    open_beneath(root->dir_fd, *rel ? rel : ".", O_PATH | O_DIRECTORY, RESOLVE_CONFINED);
	if (fd < 0)
		return path_error(err, -fd, rel, "listing");
	_cleanup_free_ char *host = NULL;
	if (fd_host_path(root, fd, &host, err) < 0)
		return -1;
	if (masked_at(root, host))
		return error_set(err, ERROR_DENIED, "listing %s: the session's policy hides it",
				 *rel ? rel : ".");
	_cleanup_json_ struct json_object *entries = json_object_new_array();
	struct lister l = {.root = root, .entries = entries};
	if (list_dir(&l, fd, host, "", (int)depth, err) < 0)
		return -1;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "entries", steal_ptr(&entries));
	if (l.truncated)
		json_object_object_add(o, "truncated", json_object_new_boolean(true));
	*result = o;
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(const struct serve_fs_root *, struct json_object *, struct json_object **,
		  struct error *);
} methods[] = {
    {"fs/read", fs_read}, {"fs/write", fs_write},   {"fs/list", fs_list},
    {"fs/stat", fs_stat}, {"fs/remove", fs_remove}, {"fs/mkdir", fs_mkdir},
};

bool serve_fs_is_method(const char *method)
{
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, method))
			return true;
	return false;
}

int serve_fs_call(const struct serve_fs_root *root, const char *method, struct json_object *params,
		  struct json_object **result, struct error *err)
{
	*result = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, method))
			return methods[i].fn(root, params, result, err);
	return error_set(err, ERROR_USAGE, "no file method %s", method);
}

char *serve_fs_audit_path(const struct serve_fs_root *root, struct json_object *params)
{
	_cleanup_error_ struct error err = ERROR_INIT;
	const char *path;
	char *rel = NULL;
	if (get_path(params, &path, &err) < 0 || normalise(root, path, &rel, &err) < 0)
		return NULL;
	if (!*rel) {
		free(rel);
		return xstrdup(".");
	}
	return rel;
}
