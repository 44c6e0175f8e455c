/* This file walks the working directory looking for secret files by name.
 * It only reads: directories (getdents64), and the first bytes of the few
 * files that are secrets by content (.npmrc, .yarnrc.yml, id_*). It follows
 * a symlink into a directory only when the directory lies inside the tree
 * and the walk would not otherwise enter it (or an anchored pattern names a
 * path through the link), once each, so that a link to / or to home cannot
 * make the walk leave the tree or loop. */
#include "policy/secret_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "policy/path.h"

#define DIRENT_BUF_SIZE (32 * 1024)
#define CONTENT_READ_MAX (64 * 1024)
/* Directories held open at once, from the top. */
#define SCAN_HELD_FDS 64
/* A path of 4,096 bytes has at most 2,048 components. */
#define SCAN_MAX_DEPTH 2048

/* The directory entries of one directory, as getdents64 returns them. */
struct listing {
	char *data;
	size_t alloc;
};

struct walker {
	const struct secret_scan_options *opts;
	struct secret_scan_result *out;
	struct strbuf path;
	struct listing *bufs; /* one per depth, reused across directories */
	size_t bufs_len;
	const char *root;
	size_t rel_offset; /* where the path relative to root starts in path */
	/* Resolved directories entered through a symlink: each is walked
	 * once, and a link back into one of them (a loop) is not followed. */
	struct strv followed;
	size_t following; /* how many followed links the walk is beneath */
	/* How many of those lead into a directory the walk enters anyway,
	 * followed only because an anchored pattern names a path through
	 * the link: beneath them only anchored patterns are matched, so that
	 * nothing is found twice. */
	size_t respelling;
	struct strv respelled; /* resolved directories walked so */
	struct error *err;
};

static void add_match(struct walker *w, const struct pattern *p, const char *reason, bool is_dir)
{
	struct secret_scan_result *r = w->out;
	if (r->len == r->alloc) {
		r->alloc = r->alloc ? r->alloc * 2 : 16;
		r->items = xreallocarray(r->items, r->alloc, sizeof(*r->items));
	}
	r->items[r->len++] = (struct secret_match){
	    .path = xstrdup(strbuf_str(&w->path)),
	    .pattern = p ? p->text : reason,
	    .is_dir = is_dir,
	    .anchored = p && p->segments,
	};
}

/* Files that are secrets only by what they hold, so that masking every one
 * of them would break projects for nothing: npm keeps registry tokens in
 * .npmrc as `//host/:_authToken=...`, `_auth` or `_password`, Yarn (2 and
 * later) in .yarnrc.yml as npmAuthToken or npmAuthIdent; a file without
 * them only configures registries. Any other "id_*" (the known key types
 * are masked by name) is an SSH key when it holds a private key, and a
 * source file such as id_map.go otherwise. */
struct content_rule {
	const char *reason;
	bool (*name_matches)(const char *name, size_t len);
	const char *needles[3];
	/* A file larger than what is read is masked: its tail was not seen. */
	bool mask_when_large;
};

static bool is_npmrc(const char *name, size_t len)
{
	return len == 6 && !memcmp(name, ".npmrc", 6);
}

static bool is_yarnrc(const char *name, size_t len)
{
	return len == 11 && !memcmp(name, ".yarnrc.yml", 11);
}

static bool is_key_like(const char *name, size_t len)
{
	return len > 3 && !strncasecmp(name, "id_", 3) &&
	       !(len > 4 && !strcasecmp(name + len - 4, ".pub"));
}

static const struct content_rule content_rules[] = {
    {SECRET_NPMRC_REASON, is_npmrc, {"_auth", "_password", NULL}, true},
    {SECRET_YARNRC_REASON, is_yarnrc, {"npmAuthToken", "npmAuthIdent", NULL}, true},
    {SECRET_KEY_REASON, is_key_like, {"PRIVATE KEY-----", "PuTTY-User-Key-File", NULL}, false},
};

static const struct content_rule *content_rule_for(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(content_rules); i++)
		if (content_rules[i].name_matches(name, len))
			return &content_rules[i];
	return NULL;
}

static bool content_holds_credentials(int dirfd, const char *name, const struct content_rule *rule)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	/* Unread is not harmless: the command, its owner, could have taken
	 * the permission away in an earlier run to give it back in a later. */
	if (fd < 0)
		return errno == EACCES;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	_cleanup_free_ char *buf = xmalloc(CONTENT_READ_MAX + 1);
	size_t len = 0;
	while (len < CONTENT_READ_MAX) {
		ssize_t n = read(fd, buf + len, CONTENT_READ_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(rule->needles) && rule->needles[i]; i++)
		if (memmem(buf, len, rule->needles[i], strlen(rule->needles[i])))
			return true;
	return rule->mask_when_large && len == CONTENT_READ_MAX;
}

/* Running from / must not walk the kernel's own trees, nor the directories
 * that the sandbox replaces with fresh or private ones. */
static bool is_replaced_in_sandbox(const struct strbuf *path)
{
	static const char *const replaced[] = {"/proc", "/sys", "/dev", "/tmp", "/run"};
	if (path->len > 5)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(replaced); i++)
		if (!strcmp(path->buf, replaced[i]))
			return true;
	return false;
}

/* The first pattern of set that matches the walk's current path; beneath a
 * link followed for its spelling, only an anchored one. */
static const struct pattern *match_here(const struct walker *w, const struct pattern_set *set,
					const char *name, bool is_dir)
{
	const char *rel = w->path.buf + w->rel_offset;
	if (!w->respelling)
		return pattern_set_match_path(set, rel, name, is_dir);
	for (size_t i = 0; i < set->len; i++)
		if (set->items[i].segments && pattern_match_path(&set->items[i], rel, name, is_dir))
			return &set->items[i];
	return NULL;
}

static void check_file(struct walker *w, int dirfd, const char *name, size_t len,
		       unsigned char type)
{
	const struct secret_scan_options *o = w->opts;
	const struct pattern *p = match_here(w, o->patterns, name, false);
	const struct content_rule *rule =
	    !p && o->check_content && !w->respelling ? content_rule_for(name, len) : NULL;
	if (!p && !rule)
		return;
	if (pattern_set_match_path(o->allow, w->path.buf + w->rel_offset, name, false))
		return;
	if (type == DT_LNK) {
		/* A secret-named link to a regular file: masking it masks the
		 * target (the policy resolves links). A link to a directory
		 * is neither entered nor masked. */
		struct stat st;
		if (fstatat(dirfd, name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			return;
	} else if (type != DT_REG) {
		return;
	}
	if (rule && !content_holds_credentials(dirfd, name, rule))
		return;
	add_match(w, p, rule ? rule->reason : NULL, false);
}

/* A directory (or a link to one) that a pattern with a trailing "/" masks
 * whole: it is masked and not walked. A masked link masks its target, as
 * for files (the policy resolves links). */
static bool check_dir(struct walker *w, const char *name)
{
	const struct secret_scan_options *o = w->opts;
	if (!o->patterns->dir_only)
		return false;
	const struct pattern *p = match_here(w, o->patterns, name, true);
	if (!p || pattern_set_match_path(o->allow, w->path.buf + w->rel_offset, name, true))
		return false;
	add_match(w, p, NULL, true);
	return true;
}

static int walk(struct walker *w, int *dirfd, size_t depth);

/* Whether the walk enters the resolved directory `dir` (inside the root) by
 * itself: not when one of its directories on the way down from the root is
 * skipped (node_modules, a configured skip). */
static bool walked_anyway(const struct walker *w, const char *dir)
{
	const char *rel = dir + strlen(w->root);
	while (*rel == '/')
		rel++;
	while (*rel) {
		size_t len = strcspn(rel, "/");
		_cleanup_free_ char *name = xstrndup(rel, len);
		if (pattern_set_match(w->opts->skip, name))
			return false;
		rel += len;
		while (*rel == '/')
			rel++;
	}
	return true;
}

/* A symlink to a directory (w->path): the sandbox shows that directory's
 * files under the link's name, and the masks, placed at resolved paths,
 * cover them there too. Only a directory inside the root that the walk
 * would not enter by itself, and not one already followed, is walked; or,
 * when an anchored pattern names a path through the link ("config/prod.pem"
 * with config a link), a directory the walk enters anyway is walked again
 * under the link's name for the anchored patterns alone, once each. */
static int follow_link(struct walker *w, size_t depth)
{
	_cleanup_free_ char *target = realpath(w->path.buf, NULL);
	if (!target || !path_is_within(target, w->root))
		return 0;
	bool respell = walked_anyway(w, target);
	if (respell && !pattern_set_reaches_below(w->opts->patterns, w->path.buf + w->rel_offset))
		return 0;
	/* Beneath a respelled link every directory is one the walk enters
	 * anyway, and its links are met there under their own names. */
	if (!respell && w->respelling)
		return 0;
	struct strv *seen = respell ? &w->respelled : &w->followed;
	for (size_t i = 0; i < seen->len; i++)
		if (path_is_within(target, seen->items[i]))
			return 0;
	_cleanup_close_ int fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		w->out->unreadable++;
		return 0;
	}
	strv_push(seen, target);
	w->following += !respell;
	w->respelling += respell;
	int r = walk(w, &fd, depth + 1);
	w->respelling -= respell;
	w->following -= !respell;
	return r;
}

/* Beneath a followed link, a directory may be one followed already (a link
 * to its parent climbs back over it): it is not walked twice. */
static bool already_followed(const struct walker *w)
{
	if (!w->following)
		return false;
	_cleanup_free_ char *resolved = realpath(w->path.buf, NULL);
	return resolved && strv_contains(&w->followed, resolved);
}

/* Reads the whole directory into the buffer of this depth: the walk may
 * have to close the directory before it is done with its entries. */

static ssize_t read_listing(struct walker *w, int dirfd, size_t depth)
{
	if (depth == w->bufs_len) {
		w->bufs = xreallocarray(w->bufs, depth + 1, sizeof(*w->bufs));
		w->bufs[depth] = (struct listing){0};
		w->bufs_len = depth + 1;
	}
	struct listing *l = &w->bufs[depth];
	size_t len = 0;
	for (;;) {
		if (l->alloc - len < DIRENT_BUF_SIZE) {
			l->alloc = l->alloc ? l->alloc * 2 : DIRENT_BUF_SIZE;
			l->data = xrealloc(l->data, l->alloc);
		}
		ssize_t n = getdents64(dirfd, l->data + len, l->alloc - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_errno(w->err, ERROR_SETUP, errno, "scanning %s for secrets",
					   w->path.buf);
		if (n == 0)
			return (ssize_t)len;
		len += (size_t)n;
	}
}

/* Below SCAN_HELD_FDS levels a directory is closed while its
 * subdirectory is walked, and opened again through the subdirectory's
 * "..": a 1,000-deep tree must not take 1,000 descriptors. The directory
 * found there must be the one left, or the tree was moved meanwhile and
 * the rest of its entries could be anywhere. */
static int descend(struct walker *w, int *dirfd, const char *name, size_t depth)
{
	/* A directory the walk cannot list or search is masked whole: the
	 * command runs as its owner, so it could have made the directory
	 * unreadable in an earlier run to read what it holds in the next. */
	if (faccessat(*dirfd, name, R_OK | X_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == EACCES) {
		w->out->unreadable++;
		add_match(w, NULL, SECRET_UNREADABLE_REASON, true);
		return 0;
	}
	int fd = openat(*dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		w->out->unreadable++;
		add_match(w, NULL, SECRET_UNREADABLE_REASON, true);
		return 0;
	}
	if (fd < 0 && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)) {
		/* Gone or replaced since we listed it. */
		w->out->unreadable++;
		return 0;
	}
	if (fd < 0)
		return error_errno(w->err, ERROR_SETUP, errno, "scanning %s for secrets",
				   w->path.buf);
	if (depth + 1 < SCAN_HELD_FDS) {
		int r = walk(w, &fd, depth + 1);
		close(fd);
		return r;
	}
	struct stat here;
	if (fstat(*dirfd, &here) < 0) {
		int saved = errno;
		close(fd);
		return error_errno(w->err, ERROR_SETUP, saved, "scanning %s for secrets",
				   w->path.buf);
	}
	close(*dirfd);
	*dirfd = -1;
	int r = walk(w, &fd, depth + 1);
	if (r == 0) {
		*dirfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat back;
		if (*dirfd < 0 || fstat(*dirfd, &back) < 0)
			r = error_errno(w->err, ERROR_SETUP, errno, "scanning %s for secrets",
					w->path.buf);
		else if (back.st_dev != here.st_dev || back.st_ino != here.st_ino)
			r = error_set(w->err, ERROR_SETUP,
				      "scanning %s for secrets: the directory was moved while it "
				      "was scanned",
				      w->path.buf);
	}
	close(fd);
	return r;
}

static int walk(struct walker *w, int *dirfd, size_t depth)
{
	if (depth >= SCAN_MAX_DEPTH)
		/* Deeper than any path the sandbox could mount: a secret
		 * there could not be masked, so the run stops. */
		return error_set(w->err, ERROR_SETUP,
				 "scanning %s for secrets: more than %d directories deep",
				 w->path.buf, SCAN_MAX_DEPTH);
	w->out->dirs++;
	ssize_t n = read_listing(w, *dirfd, depth);
	if (n < 0)
		return -1;
	/* Entries are read from the buffer while deeper levels use theirs. */
	for (ssize_t off = 0; off < n;) {
		struct dirent64 *d = (struct dirent64 *)(w->bufs[depth].data + off);
		off += d->d_reclen;
		const char *name = d->d_name;
		if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
			continue;
		size_t len = strlen(name);
		unsigned char type = d->d_type;
		if (type == DT_UNKNOWN) {
			/* Some filesystems do not fill d_type. */
			struct stat st;
			if (fstatat(*dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode)    ? DT_DIR
			       : S_ISLNK(st.st_mode)  ? DT_LNK
			       : S_ISREG(st.st_mode)  ? DT_REG
			       : S_ISSOCK(st.st_mode) ? DT_SOCK
						      : DT_UNKNOWN;
		}
		size_t mark = w->path.len;
		if (!(mark == 1 && w->path.buf[0] == '/'))
			strbuf_addch(&w->path, '/');
		strbuf_add(&w->path, name, len);
		if (len == 4 && !memcmp(name, ".git", 4) && type != DT_UNKNOWN && !w->respelling)
			strv_push(&w->out->git_entries, w->path.buf);
		struct stat st;
		if (type == DT_LNK && fstatat(*dirfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
			/* A link named node_modules is skipped as the directory
			 * would be. */
			int r = check_dir(w, name) || pattern_set_match(w->opts->skip, name)
				    ? 0
				    : follow_link(w, depth);
			strbuf_setlen(&w->path, mark);
			if (r < 0)
				return -1;
			continue;
		}
		if (type == DT_SOCK && !w->respelling)
			strv_push(&w->out->sockets, w->path.buf);
		if (type != DT_DIR) {
			w->out->files++;
			check_file(w, *dirfd, name, len, type);
		} else if (!check_dir(w, name) && !pattern_set_match(w->opts->skip, name) &&
			   !is_replaced_in_sandbox(&w->path) && !already_followed(w) &&
			   descend(w, dirfd, name, depth) < 0) {
			return -1;
		}
		strbuf_setlen(&w->path, mark);
	}
	return 0;
}

int secret_scan(const char *root, const struct secret_scan_options *opts,
		struct secret_scan_result *out, struct error *err)
{
	*out = (struct secret_scan_result){.git_entries = STRV_INIT, .sockets = STRV_INIT};
	_cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "scanning %s for secrets", root);
	struct walker w = {.opts = opts,
			   .out = out,
			   .path = STRBUF_INIT,
			   .root = root,
			   .rel_offset = strlen(root) + (strcmp(root, "/") != 0),
			   .followed = STRV_INIT,
			   .respelled = STRV_INIT,
			   .err = err};
	strbuf_addstr(&w.path, root);
	int r = walk(&w, &fd, 0);
	for (size_t i = 0; i < w.bufs_len; i++)
		free(w.bufs[i].data);
	free(w.bufs);
	strbuf_release(&w.path);
	strv_release(&w.followed);
	strv_release(&w.respelled);
	if (r < 0)
		secret_scan_result_release(out);
	return r;
}

void secret_scan_result_release(struct secret_scan_result *r)
{
	for (size_t i = 0; i < r->len; i++)
		free(r->items[i].path);
	free(r->items);
	strv_release(&r->git_entries);
	strv_release(&r->sockets);
	*r = (struct secret_scan_result){0};
}
