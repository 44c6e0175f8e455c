/* This file records, while the bwrap arguments are rendered, what each
 * mount must put at its destination, makes the binds left to the init, and
 * checks everything from inside the finished sandbox. The host side only
 * records and encodes; the check only reads (openat2, statx, fstatfs). */
#include "sandbox/mount_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/xalloc.h"
#include "inside/inside.h"

#define PLAN_MAGIC "AGSBMNT1"
#define PLAN_MAGIC_LEN 8
/* A plan larger than this is not ours: the host renders a few thousand
 * mounts at most. */
#define PLAN_MAX_BYTES (64u << 20)

/* A later mount at a destination hides every earlier mount at it or
 * beneath it, so only the last one there can be checked. */
static void forget_hidden(struct mount_plan *p, const char *dest)
{
	size_t n = strlen(dest), kept = 0;
	bool root = !strcmp(dest, "/");
	for (size_t i = 0; i < p->len; i++) {
		const char *path = p->items[i].path;
		bool hidden = root || (!strncmp(path, dest, n) && (!path[n] || path[n] == '/'));
		if (hidden) {
			free(p->items[i].path);
			free(p->items[i].source);
		} else
			p->items[kept++] = p->items[i];
	}
	p->len = kept;
}

static void append(struct mount_plan *p, const struct mount_expectation *e)
{
	if (p->len == p->alloc) {
		p->alloc = p->alloc ? p->alloc * 2 : 32;
		p->items = xreallocarray(p->items, p->alloc, sizeof(*p->items));
	}
	p->items[p->len++] = *e;
}

static void plan_add(struct mount_plan *p, const char *dest, enum mount_kind kind, unsigned flags,
		     const struct file_id *id)
{
	if (!p)
		return;
	forget_hidden(p, dest);
	append(p, &(struct mount_expectation){
		      .path = xstrdup(dest),
		      .kind = kind,
		      .flags = flags,
		      .id = id ? *id : (struct file_id){0},
		  });
}

void mount_plan_bind(struct mount_sink *s, unsigned flags, const char *source,
		     const struct file_id *id, const char *dest)
{
	static const char *const ops[] = {"--bind", "--ro-bind", "--bind-try", "--ro-bind-try"};
	strv_push(s->args, ops[(flags & MOUNT_READ_ONLY) | (flags & MOUNT_TRY ? 2 : 0)]);
	strv_push(s->args, source);
	strv_push(s->args, dest);
	plan_add(s->plan, dest, MOUNT_BIND, flags, id);
}

static void add_fresh(struct mount_sink *s, const char *op, const char *dest, enum mount_kind kind)
{
	strv_push(s->args, op);
	strv_push(s->args, dest);
	plan_add(s->plan, dest, kind, 0, NULL);
}

void mount_plan_tmpfs(struct mount_sink *s, const char *dest, unsigned long long size)
{
	strv_push(s->args, "--size");
	strv_pushf(s->args, "%llu", size);
	add_fresh(s, "--tmpfs", dest, MOUNT_TMPFS);
}

void mount_plan_dev(struct mount_sink *s, const char *dest)
{
	add_fresh(s, "--dev", dest, MOUNT_TMPFS);
}

void mount_plan_proc(struct mount_sink *s, const char *dest)
{
	add_fresh(s, "--proc", dest, MOUNT_PROC);
}

void mount_plan_proc_cover(struct mount_sink *s, const char *path)
{
	strv_push(s->args, "--ro-bind-try");
	strv_push(s->args, path);
	strv_push(s->args, path);
	plan_add(s->plan, path, MOUNT_PROC, MOUNT_READ_ONLY | MOUNT_OPTIONAL | MOUNT_TRY, NULL);
}

void mount_plan_remount_ro(struct mount_sink *s, const char *dest)
{
	strv_push(s->args, "--remount-ro");
	strv_push(s->args, dest);
	if (!s->plan)
		return;
	for (size_t i = s->plan->len; i-- > 0;)
		if (!strcmp(s->plan->items[i].path, dest)) {
			s->plan->items[i].flags |= MOUNT_READ_ONLY;
			return;
		}
}

void mount_plan_stage(struct mount_sink *s, const char *host_source, const char *dest)
{
	strv_push(s->args, "--ro-bind");
	strv_push(s->args, host_source);
	strv_push(s->args, dest);
	plan_add(s->plan, dest, MOUNT_BIND, MOUNT_READ_ONLY | MOUNT_STAGING, NULL);
}

void mount_plan_init_bind(struct mount_sink *s, unsigned flags, const char *source,
			  const struct file_id *id, const char *dest)
{
	if (!s->plan)
		return;
	/* Masked files skip forget_hidden's scan, which would make thousands
	 * of them quadratic: nothing lies beneath a file, and the policy
	 * names each path once. Should an earlier mount be at the same path
	 * after all, its record stays and fails the check: the run stops
	 * rather than pass. */
	if (id && id->type != S_IFREG)
		forget_hidden(s->plan, dest);
	append(s->plan, &(struct mount_expectation){
			    .path = xstrdup(dest),
			    .kind = MOUNT_BIND,
			    .flags = (flags & (MOUNT_READ_ONLY | MOUNT_OPTIONAL)) | MOUNT_BY_INIT,
			    .id = id ? *id : (struct file_id){0},
			    .source = xstrdup(source),
			});
}

size_t mount_plan_init_binds(const struct mount_plan *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->len; i++)
		n += (p->items[i].flags & MOUNT_BY_INIT) != 0;
	return n;
}

/* One record: fixed fields in host byte order (the same binary reads
 * them), then the path and (MOUNT_BY_INIT) the source, without NULs. */
struct record {
	uint8_t kind;
	uint8_t flags;
	uint16_t reserved;
	uint32_t type;
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	uint32_t path_len;
	uint32_t source_len;
};

#define PLAN_FLAGS (MOUNT_READ_ONLY | MOUNT_OPTIONAL | MOUNT_TRY | MOUNT_BY_INIT | MOUNT_STAGING)

void mount_plan_encode(const struct mount_plan *p, struct strbuf *out)
{
	uint32_t count = (uint32_t)p->len;
	strbuf_add(out, PLAN_MAGIC, PLAN_MAGIC_LEN);
	strbuf_add(out, &count, sizeof(count));
	for (size_t i = 0; i < p->len; i++) {
		const struct mount_expectation *e = &p->items[i];
		struct record r = {
		    .kind = (uint8_t)e->kind,
		    .flags = (uint8_t)e->flags,
		    .type = e->id.type,
		    .dev_major = e->id.dev_major,
		    .dev_minor = e->id.dev_minor,
		    .ino = e->id.ino,
		    .path_len = (uint32_t)strlen(e->path),
		    .source_len = e->source ? (uint32_t)strlen(e->source) : 0,
		};
		strbuf_add(out, &r, sizeof(r));
		strbuf_add(out, e->path, r.path_len);
		if (e->source)
			strbuf_add(out, e->source, r.source_len);
	}
}

int mount_plan_decode(const void *data, size_t len, struct mount_plan *out, struct error *err)
{
	const unsigned char *at = data, *end = at + len;
	*out = (struct mount_plan){0};
	_cleanup_mount_plan_ struct mount_plan plan = {0};
	uint32_t count;
	if (len < PLAN_MAGIC_LEN + sizeof(count) || memcmp(at, PLAN_MAGIC, PLAN_MAGIC_LEN))
		return error_set(err, ERROR_SETUP, "the mount plan has no valid header");
	memcpy(&count, at + PLAN_MAGIC_LEN, sizeof(count));
	at += PLAN_MAGIC_LEN + sizeof(count);
	if (count > (size_t)(end - at) / sizeof(struct record))
		return error_set(err, ERROR_SETUP, "the mount plan is truncated");
	for (uint32_t i = 0; i < count; i++) {
		struct record r;
		if ((size_t)(end - at) < sizeof(r))
			return error_set(err, ERROR_SETUP, "the mount plan is truncated");
		memcpy(&r, at, sizeof(r));
		at += sizeof(r);
		if (r.path_len == 0 || r.path_len > (size_t)(end - at) ||
		    r.source_len > (size_t)(end - at) - r.path_len)
			return error_set(err, ERROR_SETUP, "the mount plan is truncated");
		const unsigned char *src = at + r.path_len;
		/* A source exactly when the init makes the bind, and then it is
		 * a bind from an absolute path. */
		bool by_init = r.flags & MOUNT_BY_INIT;
		if (r.kind < MOUNT_BIND || r.kind > MOUNT_PROC || (r.flags & ~PLAN_FLAGS) ||
		    r.reserved || at[0] != '/' || memchr(at, '\0', r.path_len) ||
		    by_init != (r.source_len > 0) ||
		    (by_init && (r.kind != MOUNT_BIND || (r.flags & (MOUNT_STAGING | MOUNT_TRY)) ||
				 src[0] != '/' || memchr(src, '\0', r.source_len))))
			return error_set(err, ERROR_SETUP,
					 "the mount plan's record %u is malformed", i);
		append(&plan,
		       &(struct mount_expectation){
			   .path = xstrndup((const char *)at, r.path_len),
			   .kind = (enum mount_kind)r.kind,
			   .flags = r.flags,
			   .id = {.dev_major = r.dev_major,
				  .dev_minor = r.dev_minor,
				  .ino = r.ino,
				  .type = r.type},
			   .source = by_init ? xstrndup((const char *)src, r.source_len) : NULL,
		       });
		at += r.path_len + r.source_len;
	}
	if (at != end)
		return error_set(err, ERROR_SETUP, "the mount plan has trailing bytes");
	*out = steal_struct(&plan);
	return 0;
}

int mount_plan_memfd_create(struct error *err)
{
	int fd = memfd_create("agent-sandbox-mounts", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating a memfd for the mount plan");
	return fd;
}

#define PLAN_SEALS (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)

int mount_plan_memfd_seal(int fd, const struct mount_plan *p, struct error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	mount_plan_encode(p, &sb);
	int r = write_all(fd, sb.buf, sb.len);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "writing the mount plan");
	if (fcntl(fd, F_ADD_SEALS, PLAN_SEALS) < 0)
		return error_errno(err, ERROR_SETUP, errno, "sealing the mount plan");
	return 0;
}

int mount_plan_read_fd(int fd, struct mount_plan *out, struct error *err)
{
	/* Sealed: what the host wrote is what we read, whoever else holds
	 * the descriptor. */
	int seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0)
		return error_errno(err, ERROR_SETUP, errno, "the mount plan (fd %d)", fd);
	if ((seals & PLAN_SEALS) != PLAN_SEALS)
		return error_set(err, ERROR_SETUP, "the mount plan (fd %d) is not sealed", fd);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_errno(err, ERROR_SETUP, errno, "the mount plan (fd %d)", fd);
	if (st.st_size < 0 || (uint64_t)st.st_size > PLAN_MAX_BYTES)
		return error_set(err, ERROR_SETUP, "the mount plan is too large");
	size_t len = (size_t)st.st_size;
	_cleanup_free_ char *buf = xmalloc(len ? len : 1);
	for (size_t done = 0; done < len;) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return error_errno(err, ERROR_SETUP, n < 0 ? errno : EIO,
					   "reading the mount plan");
		done += (size_t)n;
	}
	return mount_plan_decode(buf, len, out, err);
}

/* Without openat2 (before Linux 5.6, or a filter refusing it): one
 * component at a time, none followed if it is a symlink. A symlink in the
 * middle fails with ENOTDIR; one at the end is opened itself and its type
 * gives it away. */
static int open_walk(const char *path)
{
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	const char *s = path;
	while (dir >= 0) {
		s += strspn(s, "/");
		if (!*s)
			return dir;
		size_t n = strcspn(s, "/");
		_cleanup_free_ char *name = xstrndup(s, n);
		s += n;
		int next = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		close(dir);
		errno = saved;
		dir = next;
	}
	return -1;
}

static int open_no_symlinks(const char *path)
{
	struct open_how how = {
	    .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS,
	};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		return open_walk(path);
	return fd;
}

/* The directory on the way to path that the sandbox's user cannot search:
 * the deepest one it can open. Returns its descriptor, or -1. */
static int unsearchable_dir(const char *path)
{
	_cleanup_free_ char *prefix = xstrdup(path);
	size_t len = strlen(prefix);
	int last = -1;
	/* Each directory on the way ("/a", "/a/b", ...), then the path. */
	for (size_t i = 1; i <= len; i++) {
		if (i < len && prefix[i] != '/')
			continue;
		char saved = prefix[i];
		prefix[i] = '\0';
		int fd = open_no_symlinks(prefix);
		int errnum = errno;
		prefix[i] = saved;
		if (fd < 0) {
			if (errnum == EACCES)
				return last;
			break;
		}
		if (last >= 0)
			close(last);
		last = fd;
	}
	if (last >= 0)
		close(last);
	return -1;
}

/* An optional mount's path (a host socket's) that is gone, or that the
 * sandbox's user cannot reach (a socket in another user's private
 * directory, under a bound /tmp): nothing to hide, as long as the command
 * cannot undo it. It could if a directory on the way were missing (a
 * second sandbox on the project moves it away for the binds, and back
 * once the command runs), or if the directory it cannot search were its
 * own to chmod. Only the socket itself gone, or a directory of another
 * user's, stays so. */
static bool out_of_reach(const struct mount_expectation *e, int errnum)
{
	if (!(e->flags & MOUNT_OPTIONAL))
		return false;
	if (errnum == ENOENT) {
		/* Gone with its directory too (the server ended and cleaned
		 * up): the nearest ancestor that is there must be a directory
		 * reached without symlinks. */
		_cleanup_free_ char *dir = xstrdup(e->path);
		for (;;) {
			char *slash = strrchr(dir, '/');
			if (!slash)
				return false;
			slash[slash == dir] = '\0';
			_cleanup_close_ int fd = open_no_symlinks(dir);
			struct stat st;
			if (fd >= 0)
				return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
			if (errno != ENOENT || !strcmp(dir, "/"))
				return false;
		}
	}
	if (errnum != EACCES)
		return false;
	_cleanup_close_ int fd = unsearchable_dir(e->path);
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid != geteuid();
}

static const char *type_name(uint32_t type)
{
	switch (type) {
	case S_IFREG:
		return "a file";
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symlink";
	case S_IFSOCK:
		return "a socket";
	default:
		return "a special file";
	}
}

static int differs(struct error *err, const struct mount_expectation *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int differs(struct error *err, const struct mount_expectation *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *what = xvasprintf(fmt, ap);
	va_end(ap);
	error_set(err, ERROR_SETUP,
		  "mount check failed at %s: %s; it changed between the policy and the mount, "
		  "so nothing was run",
		  e->path, what);
	return -1;
}

static int verify_one(const struct mount_expectation *e, struct error *err)
{
	if (e->kind == MOUNT_BIND && !file_id_known(&e->id))
		return differs(err, e, "no identity was recorded for its source");
	_cleanup_close_ int fd = open_no_symlinks(e->path);
	if (fd < 0) {
		if (out_of_reach(e, errno))
			return 0;
		return differs(err, e, "%s",
			       errno == ELOOP	  ? "a symlink lies on the way"
			       : errno == ENOTDIR ? "a symlink or file lies on the way"
						  : strerror(errno));
	}
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO, &stx) < 0)
		return differs(err, e, "statx: %s", strerror(errno));
	uint32_t type = stx.stx_mode & S_IFMT;
	if (type == S_IFLNK)
		return differs(err, e, "it is a symlink");
	/* Older kernels (before 5.8) do not tell; the identity still must
	 * match. */
	if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return differs(err, e, "nothing is mounted there");
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return differs(err, e, "fstatfs: %s", strerror(errno));
	switch (e->kind) {
	case MOUNT_BIND:
		if (type != e->id.type)
			return differs(err, e, "%s is mounted there instead of %s", type_name(type),
				       type_name(e->id.type));
		if (stx.stx_ino != e->id.ino || stx.stx_dev_major != e->id.dev_major ||
		    stx.stx_dev_minor != e->id.dev_minor)
			return differs(
			    err, e,
			    "inode %llu on device %u:%u is mounted there, not inode %llu "
			    "on %u:%u that the policy decided on",
			    (unsigned long long)stx.stx_ino, stx.stx_dev_major, stx.stx_dev_minor,
			    (unsigned long long)e->id.ino, e->id.dev_major, e->id.dev_minor);
		break;
	case MOUNT_TMPFS:
		if ((unsigned long)sfs.f_type != TMPFS_MAGIC)
			return differs(err, e, "it is not a fresh tmpfs");
		break;
	case MOUNT_PROC:
		if ((unsigned long)sfs.f_type != PROC_SUPER_MAGIC)
			return differs(err, e, "it is not procfs");
		break;
	}
	if ((e->flags & MOUNT_READ_ONLY) && !(sfs.f_flags & ST_RDONLY))
		return differs(err, e, "it is writable but must be read-only");
	return 0;
}

/* Said as the check says it: whichever step meets the change, the
 * outcome is the same. */
static int bind_failed(struct error *err, const struct mount_expectation *e, const char *what,
		       int errnum)
{
	return differs(err, e, "%s: %s", what,
		       errnum == ELOOP	   ? "a symlink lies on the way"
		       : errnum == ENOTDIR ? "a symlink or file lies on the way"
					   : strerror(errnum));
}

/* One bind: a detached clone of the source with every mount beneath it
 * (as bwrap's binds are recursive), made nosuid and nodev like bwrap's, and
 * read-only if the plan says so, before it is attached; then moved onto
 * the destination. Neither end is reached through a symlink. Each step is
 * one system call that does not look at the rest of the mount table. */
static int init_bind(const struct mount_expectation *e, struct error *err)
{
	_cleanup_close_ int src = open_no_symlinks(e->source);
	if (src < 0)
		return bind_failed(err, e, "opening its source", errno);
	_cleanup_close_ int tree =
	    (int)syscall(SYS_open_tree, src, "",
			 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return bind_failed(err, e, "open_tree", errno);
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	if (e->flags & MOUNT_READ_ONLY)
		attr.attr_set |= MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
		    sizeof(attr)) < 0)
		return bind_failed(err, e, "mount_setattr", errno);
	_cleanup_close_ int dest = open_no_symlinks(e->path);
	if (dest < 0 && out_of_reach(e, errno))
		return 0; /* nothing there to hide; the check agrees */
	if (dest < 0)
		return bind_failed(err, e, "opening it", errno);
	if (syscall(SYS_move_mount, tree, "", dest, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return bind_failed(err, e, "move_mount", errno);
	return 0;
}

int mount_plan_apply(const struct mount_plan *p, struct error *err)
{
	if (!mount_plan_init_binds(p))
		return 0;
	/* bwrap makes the mount namespace in a user namespace of its own and,
	 * when it maps a uid other than 0 (its --dev needs root mapped while
	 * it mounts devpts), runs the init in a second one, which has no say
	 * over that namespace. A mount namespace made here belongs to ours;
	 * the kernel copies every mount into it locked (none can be unmounted
	 * or made writable from here on), and ours go on top. */
	if (unshare(CLONE_NEWNS) < 0)
		return error_errno(err, ERROR_SETUP, errno,
				   "making a mount namespace for the masked files' binds");
	for (size_t i = 0; i < p->len; i++)
		if ((p->items[i].flags & MOUNT_BY_INIT) && init_bind(&p->items[i], err) < 0)
			return -1;
	/* The staged sources are hidden under an empty read-only tmpfs (a
	 * locked mount cannot be unmounted): nothing inside needs them, and
	 * the stand-ins must not be reachable by a second path. */
	if (mount("none", SANDBOX_STAGE_DIR, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=4k,nr_inodes=1,mode=0555") < 0)
		return error_errno(err, ERROR_SETUP, errno, "covering %s", SANDBOX_STAGE_DIR);
	return 0;
}

int mount_plan_verify(const struct mount_plan *p, struct error *err)
{
	for (size_t i = 0; i < p->len; i++)
		if (!(p->items[i].flags & MOUNT_STAGING) && verify_one(&p->items[i], err) < 0)
			return -1;
	return 0;
}

void mount_plan_release(struct mount_plan *p)
{
	for (size_t i = 0; i < p->len; i++) {
		free(p->items[i].path);
		free(p->items[i].source);
	}
	free(p->items);
	*p = (struct mount_plan){0};
}
