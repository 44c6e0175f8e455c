/* This file walks the working directory looking for secret files by name.
 * It only reads: directories (getdents64), and the first bytes of the few
 * files that are secrets by content (.npmrc, .yarnrc.yml, id_*). It follows
 * a symlink into a directory only when the directory lies inside the tree
 * and the walk would not otherwise enter it (or an anchored pattern names a
 * path through the link), once each, so that a link to / or to home cannot
 * make the walk leave the tree or loop. With a cache (scan_cache.h), a
 * directory unchanged since an earlier scan is not read again: what that
 * scan concluded about its entries is replayed, through the same code
 * that acts on a fresh listing. */
#include "policy/secret_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
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

/* What the walk does with the entries of one directory, in their order:
 * read from a listing or from the cache. */
struct entry_list {
	struct scan_cache_entry *items;
	size_t len, alloc;
};

/* A filesystem the cache may vouch for, by device. */
struct fs_verdict {
	dev_t dev;
	bool cacheable;
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
	struct strv respelled;	  /* resolved directories walked so */
	struct entry_list *lists; /* one per depth, reused across directories */
	size_t lists_len;
	struct timespec scan_start; /* CLOCK_REALTIME, the clock of ctimes */
	struct fs_verdict fs[8];
	size_t fs_len;
	size_t live_records;	/* directories read and recorded */
	size_t content_updates; /* content verdicts of cached directories checked again */
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

static const struct content_rule content_rules[SCAN_CACHE_CONTENT_RULES] = {
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

/* id, when given, receives the identity of the file read (st_ino 0 when
 * none was: the verdict is then not one to keep). */
static bool content_holds_credentials(int dirfd, const char *name, const struct content_rule *rule,
				      struct stat *id)
{
	if (id)
		id->st_ino = 0;
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	/* Unread is not harmless: the command, its owner, could have taken
	 * the permission away in an earlier run to give it back in a later. */
	if (fd < 0 && errno == EACCES) {
		/* Its mode (and so its ctime) decides, as its content would. */
		if (id &&
		    (fstatat(dirfd, name, id, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(id->st_mode)))
			id->st_ino = 0;
		return true;
	}
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	/* Taken before the read: a change after it moves the ctime on. */
	if (id)
		*id = st;
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

/* What would mask a file named name here: a pattern, or a content rule
 * (which masks it only if it holds credentials). False when neither, or
 * an allow pattern keeps it. */
static bool file_rule(const struct walker *w, const char *name, size_t len,
		      const struct pattern **p, const struct content_rule **rule)
{
	const struct secret_scan_options *o = w->opts;
	*p = match_here(w, o->patterns, name, false);
	*rule = !*p && o->check_content && !w->respelling ? content_rule_for(name, len) : NULL;
	if (!*p && !*rule)
		return false;
	return !pattern_set_match_path(o->allow, w->path.buf + w->rel_offset, name, false);
}

/* The pattern with a trailing "/" that masks the directory (or link to
 * one) named name here, or NULL. */
static const struct pattern *dir_rule(const struct walker *w, const char *name)
{
	const struct secret_scan_options *o = w->opts;
	if (!o->patterns->dir_only)
		return NULL;
	const struct pattern *p = match_here(w, o->patterns, name, true);
	if (!p || pattern_set_match_path(o->allow, w->path.buf + w->rel_offset, name, true))
		return NULL;
	return p;
}

/* A directory (or a link to one) that a pattern with a trailing "/" masks
 * whole: it is masked and not walked. A masked link masks its target, as
 * for files (the policy resolves links). */
static bool check_dir(struct walker *w, const char *name)
{
	const struct pattern *p = dir_rule(w, name);
	if (p)
		add_match(w, p, NULL, true);
	return p != NULL;
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
	/* Directories replayed from the cache read nothing: a level may be
	 * the first read of several. */
	if (depth >= w->bufs_len) {
		w->bufs = xreallocarray(w->bufs, depth + 1, sizeof(*w->bufs));
		for (size_t i = w->bufs_len; i <= depth; i++)
			w->bufs[i] = (struct listing){0};
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

/* Appends name to the walk's path; returns the length to cut back to. */
static size_t path_push(struct walker *w, const char *name, size_t len)
{
	size_t mark = w->path.len;
	if (!(mark == 1 && w->path.buf[0] == '/'))
		strbuf_addch(&w->path, '/');
	strbuf_add(&w->path, name, len);
	return mark;
}

static struct entry_list *list_at(struct walker *w, size_t depth)
{
	if (depth >= w->lists_len) {
		w->lists = xreallocarray(w->lists, depth + 1, sizeof(*w->lists));
		for (size_t i = w->lists_len; i <= depth; i++)
			w->lists[i] = (struct entry_list){0};
		w->lists_len = depth + 1;
	}
	return &w->lists[depth];
}

static void list_push(struct entry_list *l, const struct scan_cache_entry *e)
{
	if (l->len == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 16;
		l->items = xreallocarray(l->items, l->alloc, sizeof(*l->items));
	}
	l->items[l->len++] = *e;
}

/* Whether the cache is read and written here: not beneath a followed
 * link, where what is found depends on the link (its spelling, what was
 * followed before) and not on the directory alone. */
static bool caching(const struct walker *w)
{
	return (w->opts->cache || w->opts->record) && !w->following && !w->respelling;
}

/* The cache vouches for a directory only on a local filesystem whose
 * ctimes the kernel keeps itself. A network filesystem's come from a
 * server's clock, and attribute caching can show an old one; FUSE's are
 * whatever the server says. */
static bool fs_is_cacheable(struct walker *w, int fd, dev_t dev)
{
	for (size_t i = 0; i < w->fs_len; i++)
		if (w->fs[i].dev == dev)
			return w->fs[i].cacheable;
	struct statfs sfs;
	bool ok = false;
	if (fstatfs(fd, &sfs) == 0) {
		switch ((unsigned long)sfs.f_type) {
		case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
		case XFS_SUPER_MAGIC:
		case BTRFS_SUPER_MAGIC:
		case TMPFS_MAGIC:
		case F2FS_SUPER_MAGIC:
		case OVERLAYFS_SUPER_MAGIC:
		case 0xca451a4eUL: /* bcachefs */
		case 0x2fc12fc1UL: /* zfs */
			ok = true;
			break;
		default:
			break;
		}
	}
	if (w->fs_len < ARRAY_SIZE(w->fs))
		w->fs[w->fs_len++] = (struct fs_verdict){dev, ok};
	return ok;
}

/* Decides, from its name and type alone, what the walk does with each
 * entry of the directory just listed: everything that only a change of
 * the directory (and so of its ctime) can change. What depends on more
 * (a symlink's target, a file's content, a subdirectory's own state) is
 * left to run_entries. Returns how many entries count as files here. */
static uint32_t classify(struct walker *w, int dirfd, size_t depth, ssize_t n)
{
	const struct secret_scan_options *o = w->opts;
	struct entry_list *l = list_at(w, depth);
	l->len = 0;
	uint32_t files = 0;
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
			if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode)    ? DT_DIR
			       : S_ISLNK(st.st_mode)  ? DT_LNK
			       : S_ISREG(st.st_mode)  ? DT_REG
			       : S_ISSOCK(st.st_mode) ? DT_SOCK
						      : DT_UNKNOWN;
		}
		size_t mark = path_push(w, name, len);
		struct scan_cache_entry e = {.name = name, .name_len = (uint16_t)len, .type = type};
		if (len == 4 && !memcmp(name, ".git", 4) && type != DT_UNKNOWN && !w->respelling)
			e.flags |= SCAN_FLAG_GIT;
		const struct pattern *p;
		const struct content_rule *rule;
		if (type == DT_LNK) {
			e.action = SCAN_ACTION_LINK;
		} else if (type == DT_SOCK) {
			files++;
			if (!w->respelling)
				e.action = SCAN_ACTION_SOCKET;
		} else if (type != DT_DIR) {
			files++;
			if (type == DT_REG && file_rule(w, name, len, &p, &rule)) {
				e.action = rule ? SCAN_ACTION_CONTENT : SCAN_ACTION_MASK;
				e.arg = rule ? (uint32_t)(rule - content_rules)
					     : (uint32_t)(p - o->patterns->items);
			}
		} else if ((p = dir_rule(w, name))) {
			e.action = SCAN_ACTION_MASK;
			e.arg = (uint32_t)(p - o->patterns->items);
		} else if (!pattern_set_match(o->skip, name) && !is_replaced_in_sandbox(&w->path)) {
			e.action = SCAN_ACTION_DESCEND;
		}
		strbuf_setlen(&w->path, mark);
		if (e.action != SCAN_ACTION_NONE || e.flags)
			list_push(l, &e);
	}
	return files;
}

/* A symlink, judged anew on every scan: what it points at can change
 * without its directory changing. A link to a directory is masked whole,
 * skipped or followed; a link to anything else counts as a file, masked
 * when its name is a secret's and it leads to a regular file (masking it
 * masks the target: the policy resolves links). */
static int judge_link(struct walker *w, int dirfd, const char *name, size_t len, size_t depth)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
		/* A link named node_modules is skipped as the directory
		 * would be. */
		if (check_dir(w, name) || pattern_set_match(w->opts->skip, name))
			return 0;
		return follow_link(w, depth);
	}
	w->out->files++;
	const struct pattern *p;
	const struct content_rule *rule;
	if (!file_rule(w, name, len, &p, &rule) || fstatat(dirfd, name, &st, 0) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	if (rule && !content_holds_credentials(dirfd, name, rule, NULL))
		return 0;
	add_match(w, p, rule ? rule->reason : NULL, false);
	return 0;
}

/* A file that is a secret or not by its content. From a cached directory,
 * the earlier verdict stands while the file is the same inode with the
 * same ctime (settled, as for directories): writing to a file moves its
 * ctime on. Otherwise it is read, and e records the new verdict. */
static bool content_masked(struct walker *w, int dirfd, struct scan_cache_entry *e,
			   const struct scan_cache_dir *cached)
{
	if (cached && e->ino) {
		struct statx stx;
		if (statx(dirfd, e->name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_CTIME,
			  &stx) == 0 &&
		    (stx.stx_mask & (STATX_TYPE | STATX_INO | STATX_CTIME)) ==
			(STATX_TYPE | STATX_INO | STATX_CTIME) &&
		    S_ISREG(stx.stx_mode) && stx.stx_ino == e->ino &&
		    makedev(stx.stx_dev_major, stx.stx_dev_minor) == cached->dev &&
		    stx.stx_ctime.tv_sec == e->ctime.tv_sec &&
		    stx.stx_ctime.tv_nsec == (uint32_t)e->ctime.tv_nsec &&
		    scan_cache_is_settled(&e->ctime, &w->opts->cache->scan_start))
			return e->masked;
	}
	struct stat id;
	struct scan_cache_entry old = *e;
	e->masked = content_holds_credentials(dirfd, e->name, &content_rules[e->arg], &id);
	e->ino = id.st_ino;
	e->ctime = id.st_ino ? id.st_ctim : (struct timespec){0};
	/* The cache is worth writing again when the verdict or the file
	 * changed, or when the file has settled since (its verdict will be
	 * trusted next time); not for a file read every time anyway. */
	if (cached &&
	    (old.masked != e->masked || old.ino != e->ino || old.ctime.tv_sec != e->ctime.tv_sec ||
	     old.ctime.tv_nsec != e->ctime.tv_nsec ||
	     (e->ino && scan_cache_is_settled(&e->ctime, &w->scan_start))))
		w->content_updates++;
	return e->masked;
}

static int visit(struct walker *w, int *dirfd, const char *name, size_t depth);

/* Acts on the entries of the directory at w->path (open as *dirfd), in
 * order: the same for a directory just listed and one from the cache
 * (cached: its record). */
static int run_entries(struct walker *w, int *dirfd, size_t depth, struct scan_cache_entry *entries,
		       size_t len, const struct scan_cache_dir *cached)
{
	const struct secret_scan_options *o = w->opts;
	for (size_t i = 0; i < len; i++) {
		struct scan_cache_entry *e = &entries[i];
		size_t mark = path_push(w, e->name, e->name_len);
		if (e->flags & SCAN_FLAG_GIT)
			strv_push(&w->out->git_entries, w->path.buf);
		int r = 0;
		switch ((enum scan_action)e->action) {
		case SCAN_ACTION_MASK:
			add_match(w, &o->patterns->items[e->arg], NULL, e->type == DT_DIR);
			break;
		case SCAN_ACTION_CONTENT:
			if (content_masked(w, *dirfd, e, cached))
				add_match(w, NULL, content_rules[e->arg].reason, false);
			break;
		case SCAN_ACTION_DESCEND:
			if (!already_followed(w))
				r = visit(w, dirfd, e->name, depth);
			break;
		case SCAN_ACTION_LINK:
			r = judge_link(w, *dirfd, e->name, e->name_len, depth);
			break;
		case SCAN_ACTION_SOCKET:
			strv_push(&w->out->sockets, w->path.buf);
			break;
		case SCAN_ACTION_NONE:
		case SCAN_ACTION_COUNT:
			break;
		}
		strbuf_setlen(&w->path, mark);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* The walk's path relative to the root: "" at the root. */
static const char *rel_here(const struct walker *w, size_t depth, size_t *len)
{
	if (depth == 0) {
		*len = 0;
		return "";
	}
	*len = w->path.len - w->rel_offset;
	return w->path.buf + w->rel_offset;
}

static void record(struct walker *w, size_t depth, dev_t dev, ino_t ino,
		   const struct timespec *ctime, uint32_t files, struct scan_cache_entry *entries,
		   size_t len)
{
	struct scan_cache_dir d = {.dev = dev,
				   .ino = ino,
				   .ctime = *ctime,
				   .files = files,
				   .entries = entries,
				   .len = len};
	d.rel = rel_here(w, depth, &d.rel_len);
	scan_cache_builder_add(w->opts->record, &d);
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
	/* The identity is taken before the listing: a change after it moves
	 * the ctime on, and the record no longer matches. */
	struct stat st;
	bool recording = w->opts->record && caching(w) && depth < SCAN_HELD_FDS &&
			 fstat(*dirfd, &st) == 0 && fs_is_cacheable(w, *dirfd, st.st_dev) &&
			 scan_cache_is_settled(&st.st_ctim, &w->scan_start);
	ssize_t n = read_listing(w, *dirfd, depth);
	if (n < 0)
		return -1;
	uint32_t files = classify(w, *dirfd, depth, n);
	w->out->files += files;
	/* Deeper levels reallocate the array of lists, not this level's
	 * items. */
	struct scan_cache_entry *entries = w->lists[depth].items;
	size_t len = w->lists[depth].len;
	if (run_entries(w, dirfd, depth, entries, len, NULL) < 0)
		return -1;
	if (recording) {
		record(w, depth, st.st_dev, st.st_ino, &st.st_ctim, files, entries, len);
		w->live_records++;
	}
	return 0;
}

/* The directory at w->path, its identity stx, from its record: its
 * entries are not read but replayed. */
static int replay(struct walker *w, int *dirfd, size_t depth, const struct scan_cache_dir *rec)
{
	w->out->dirs++;
	w->out->cached_dirs++;
	w->out->files += rec->files;
	struct entry_list *l = list_at(w, depth);
	l->len = 0;
	for (size_t i = 0; i < rec->len; i++)
		list_push(l, &rec->entries[i]);
	struct scan_cache_entry *entries = l->items;
	size_t len = l->len;
	if (run_entries(w, dirfd, depth, entries, len, rec) < 0)
		return -1;
	if (w->opts->record)
		record(w, depth, (dev_t)rec->dev, (ino_t)rec->ino, &rec->ctime, rec->files, entries,
		       len);
	return 0;
}

static bool matches_record(const struct scan_cache_dir *rec, const struct statx *stx,
			   const struct timespec *cache_start)
{
	const unsigned need = STATX_TYPE | STATX_INO | STATX_CTIME;
	return (stx->stx_mask & need) == need && S_ISDIR(stx->stx_mode) &&
	       makedev(stx->stx_dev_major, stx->stx_dev_minor) == rec->dev &&
	       stx->stx_ino == rec->ino && stx->stx_ctime.tv_sec == rec->ctime.tv_sec &&
	       stx->stx_ctime.tv_nsec == (uint32_t)rec->ctime.tv_nsec &&
	       scan_cache_is_settled(&rec->ctime, cache_start);
}

#define NOT_CACHED 1

/* The subdirectory name of *dirfd (w->path) from its record, when it is
 * still the directory the record describes: one statx, and an O_PATH
 * descriptor only when some entry needs the directory. Returns NOT_CACHED
 * when it is not. */
static int visit_cached(struct walker *w, int dirfd, const char *name, size_t depth,
			const struct scan_cache_dir *rec)
{
	const unsigned mask = STATX_TYPE | STATX_INO | STATX_CTIME;
	struct statx stx;
	_cleanup_close_ int fd = -1;
	if (rec->needs_fd) {
		fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, mask, &stx) < 0)
			return NOT_CACHED;
	} else if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, mask, &stx) < 0) {
		return NOT_CACHED;
	}
	if (!matches_record(rec, &stx, &w->opts->cache->scan_start))
		return NOT_CACHED;
	return replay(w, &fd, depth, rec);
}

/* A subdirectory to walk: from the cache when its record still holds,
 * read otherwise. */
static int visit(struct walker *w, int *dirfd, const char *name, size_t depth)
{
	if (w->opts->cache && caching(w) && depth + 1 < SCAN_HELD_FDS) {
		size_t rel_len;
		const char *rel = rel_here(w, depth + 1, &rel_len);
		const struct scan_cache_dir *rec = scan_cache_find(w->opts->cache, rel, rel_len);
		if (rec) {
			int r = visit_cached(w, *dirfd, name, depth + 1, rec);
			if (r != NOT_CACHED)
				return r;
		}
	}
	return descend(w, dirfd, name, depth);
}

/* The root: from the cache when its record still holds. */
static int walk_root(struct walker *w, int *fd)
{
	const struct scan_cache_dir *rec =
	    w->opts->cache ? scan_cache_find(w->opts->cache, "", 0) : NULL;
	struct statx stx;
	if (rec && statx(*fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_INO | STATX_CTIME, &stx) == 0 &&
	    matches_record(rec, &stx, &w->opts->cache->scan_start))
		return replay(w, fd, 0, rec);
	return walk(w, fd, 0);
}

int secret_scan(const char *root, const struct secret_scan_options *opts,
		struct secret_scan_result *out, struct error *err)
{
	*out = (struct secret_scan_result){.git_entries = STRV_INIT, .sockets = STRV_INIT};
	struct walker w = {.opts = opts,
			   .out = out,
			   .path = STRBUF_INIT,
			   .root = root,
			   .rel_offset = strlen(root) + (strcmp(root, "/") != 0),
			   .followed = STRV_INIT,
			   .respelled = STRV_INIT,
			   .err = err};
	/* Before anything is read: the racy rule measures from here. */
	clock_gettime(CLOCK_REALTIME, &w.scan_start);
	if (opts->record)
		opts->record->scan_start = w.scan_start;
	_cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "scanning %s for secrets", root);
	strbuf_addstr(&w.path, root);
	int r = walk_root(&w, &fd);
	for (size_t i = 0; i < w.bufs_len; i++)
		free(w.bufs[i].data);
	free(w.bufs);
	for (size_t i = 0; i < w.lists_len; i++)
		free(w.lists[i].items);
	free(w.lists);
	strbuf_release(&w.path);
	strv_release(&w.followed);
	strv_release(&w.respelled);
	if (r < 0) {
		secret_scan_result_release(out);
		return r;
	}
	/* Worth writing when it says something the cache read did not (not
	 * when there was none and there is nothing settled to say). */
	if (opts->record)
		opts->record->changed = opts->cache ? w.live_records || w.content_updates ||
							  opts->record->records != opts->cache->len
						    : opts->record->records > 0;
	return 0;
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
