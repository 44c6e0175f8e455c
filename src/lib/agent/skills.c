/* A skills directory on the host: one report per skill, and the valid
 * skills copied into a workspace's .claude/skills/. The source is the
 * platform's and the destination the agent's, so neither side's symlinks
 * are ever followed, every destination step is taken beneath the
 * descriptor of the directory made or opened the step before, and a skill
 * lands whole (a temporary directory swapped in for the old copy) or not
 * at all. */
#include "agent/skills.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/skills_internal.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

/* One component, beneath its directory, never through a symlink. */
#define RESOLVE_STRICT (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define SHOWN_MAX 64
#define COPY_CHUNK (64 * 1024)

char *skill_shown(const char *s, size_t len)
{
	size_t cut = len;
	if (cut > SHOWN_MAX) {
		cut = SHOWN_MAX;
		while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
			cut--;
	}
	struct strbuf sb = STRBUF_INIT;
	term_escape_mode_add(&sb, s, cut, TERM_ESCAPE_STRING);
	if (cut < len)
		strbuf_addstr(&sb, "...");
	return strbuf_detach(&sb);
}

/* openat2 of one name beneath dir. The kernel answers EAGAIN when a
 * rename raced the lookup; retrying is safe. Returns a descriptor or
 * -errno (-ELOOP for a symlink). */
static int open_beneath(int dir, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
	    .flags = (unsigned long long)(flags | O_CLOEXEC),
	    .mode = (flags & O_CREAT) ? mode : 0,
	    .resolve = RESOLVE_STRICT,
	};
	for (int i = 0; i < 64; i++) {
		long fd = syscall(SYS_openat2, dir, name, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
	return -EAGAIN;
}

/* Who owns what is made: a daemon run as root gives it to the
 * workspace's owner, or the sandbox (run as that owner) could not change
 * or remove it. */
struct owner {
	bool chown;
	uid_t uid;
	gid_t gid;
};

static int give_to_owner(const struct owner *o, int fd)
{
	if (o->chown && fchown(fd, o->uid, o->gid) < 0)
		return -errno;
	return 0;
}

/* The walk over one skill's tree: checking only (dst -1), or copying. */
struct walk {
	struct strv *errors;
	const struct owner *owner;
	size_t files;
	unsigned long long bytes;
	bool stop; /* a limit was reached: the rest is not looked at */
};

/* An error about path in the skill ("": the skill itself). */
static void walk_error(struct walk *w, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void walk_error(struct walk *w, const char *path, const char *fmt, ...)
{
	if (w->errors->len >= SKILL_ERRORS_MAX) {
		if (!w->stop)
			strv_pushf(w->errors, "more problems in the skill's files are not listed");
		w->stop = true;
		return;
	}
	struct strbuf sb = STRBUF_INIT;
	if (*path) {
		_cleanup_free_ char *shown = skill_shown(path, strlen(path));
		strbuf_addf(&sb, "%s: ", shown);
	}
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strv_push_owned(w->errors, strbuf_detach(&sb));
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entry names of dir but "." and "..", sorted so that reports and
 * errors come in a stable order; more than max fails with -E2BIG.
 * Returns 0 or -errno. */
static int list_names(int dir, size_t max, struct strv *names)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	int r = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			r = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (names->len >= max) {
			r = -E2BIG;
			break;
		}
		strv_push(names, de->d_name);
	}
	closedir(d);
	if (names->len > 1)
		qsort(names->items, names->len, sizeof(*names->items), compare_names);
	return r;
}

/* A new file name beneath dst (O_EXCL: never an entry that was there),
 * with data from in, or the bytes given when in is -1. */
static int write_new_file(struct walk *w, int dst, const char *name, const char *path, int in,
			  const char *bytes, size_t len, mode_t mode)
{
	_cleanup_close_ int out =
	    open_beneath(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (out < 0) {
		walk_error(w, path, "cannot be created in the workspace: %s", strerror(-out));
		return -1;
	}
	int e = 0;
	if (in < 0) {
		e = write_all(out, bytes, len);
	} else {
		_cleanup_free_ char *buf = xmalloc(COPY_CHUNK);
		for (;;) {
			ssize_t n = read(in, buf, COPY_CHUNK);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				walk_error(w, path, "cannot be read: %s", strerror(errno));
				return -1;
			}
			if (n == 0)
				break;
			w->bytes += (unsigned long long)n;
			if (w->bytes > SKILL_BYTES_MAX) {
				walk_error(w, path, "the skill grows past %llu MiB",
					   SKILL_BYTES_MAX >> 20);
				w->stop = true;
				return -1;
			}
			e = write_all(out, buf, (size_t)n);
			if (e < 0)
				break;
		}
	}
	/* Modes are set, not copied: 0755 or 0644, never a setuid, setgid
	 * or sticky bit, never writable by others. */
	if (e == 0 && fchmod(out, mode) < 0)
		e = -errno;
	if (e == 0)
		e = give_to_owner(w->owner, out);
	if (e < 0) {
		walk_error(w, path, "cannot be written to the workspace: %s", strerror(-e));
		return -1;
	}
	return 0;
}

static void copy_file(struct walk *w, int src, int dst, const char *name, const char *path)
{
	_cleanup_close_ int in = open_beneath(src, name, O_RDONLY | O_NONBLOCK, 0);
	if (in < 0) {
		walk_error(w, path, "cannot be opened: %s", strerror(-in));
		return;
	}
	struct stat st;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		walk_error(w, path, "changed while it was copied");
		return;
	}
	(void)write_new_file(w, dst, name, path, in, NULL, 0, (st.st_mode & 0111) ? 0755 : 0644);
}

/* A new directory name beneath dst, opened. Returns it or -1. */
static int make_dir(struct walk *w, int dst, const char *name, const char *path)
{
	if (mkdirat(dst, name, 0700) < 0) {
		walk_error(w, path, "cannot be made in the workspace: %s", strerror(errno));
		return -1;
	}
	int fd = open_beneath(dst, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		walk_error(w, path, "cannot be opened in the workspace: %s", strerror(-fd));
		return -1;
	}
	int e = fchmod(fd, 0755) < 0 ? -errno : give_to_owner(w->owner, fd);
	if (e < 0) {
		walk_error(w, path, "cannot be set up in the workspace: %s", strerror(-e));
		close(fd);
		return -1;
	}
	return fd;
}

/* Checks (and with dst >= 0 copies) the tree beneath src; rel is its
 * path in the skill ("" for the skill itself), depth its nesting. The
 * skill's own SKILL.md is the caller's. */
static void walk_tree(struct walk *w, int src, int dst, const char *rel, unsigned depth)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	/* As many entries as the budget has left (and the skill's own
	 * SKILL.md, counted already): one more is over the limit. */
	int e = list_names(src, SKILL_FILES_MAX - w->files + (depth == 0), &names);
	if (e == -E2BIG) {
		walk_error(w, "", "the skill holds more than %d files and directories",
			   SKILL_FILES_MAX);
		w->stop = true;
		return;
	}
	if (e < 0) {
		walk_error(w, rel, "cannot be read: %s", strerror(-e));
		return;
	}
	for (size_t i = 0; i < names.len && !w->stop; i++) {
		const char *name = names.items[i];
		if (depth == 0 && !strcmp(name, "SKILL.md"))
			continue;
		_cleanup_free_ char *path = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		if (++w->files > SKILL_FILES_MAX) {
			walk_error(w, "", "the skill holds more than %d files and directories",
				   SKILL_FILES_MAX);
			w->stop = true;
			return;
		}
		struct stat st;
		if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			walk_error(w, path, "cannot be read: %s", strerror(errno));
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			walk_error(w, path,
				   "is a symlink; a skill is copied without symlinks (replace it "
				   "with the file it points to)");
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth + 1 > SKILL_DEPTH_MAX) {
				walk_error(w, path, "nests more than %d directories deep",
					   SKILL_DEPTH_MAX);
				continue;
			}
			_cleanup_close_ int sub =
			    open_beneath(src, name, O_RDONLY | O_DIRECTORY, 0);
			if (sub < 0) {
				walk_error(w, path, "cannot be opened: %s", strerror(-sub));
				continue;
			}
			_cleanup_close_ int sub_dst = -1;
			if (dst >= 0 && (sub_dst = make_dir(w, dst, name, path)) < 0) {
				w->stop = true;
				return;
			}
			walk_tree(w, sub, sub_dst, path, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			walk_error(w, path,
				   "is a device, FIFO or socket; a skill holds files and "
				   "directories only");
			continue;
		}
		if (dst >= 0) {
			copy_file(w, src, dst, name, path);
			continue;
		}
		w->bytes += (unsigned long long)st.st_size;
		if (w->bytes > SKILL_BYTES_MAX) {
			walk_error(w, path, "the skill is larger than %llu MiB",
				   SKILL_BYTES_MAX >> 20);
			w->stop = true;
		}
	}
}

/* What skills_install writes into: the workspace and, once a valid skill
 * needs it, its .claude/skills. */
struct install {
	int workspace; /* -1: checking only */
	int skills;
	struct owner owner;
};

/* name beneath parent, made when missing, opened; a symlink or a
 * non-directory there is refused, as the agent may have planted one to
 * send the copy elsewhere. */
static int open_dest_dir(const struct install *in, int parent, const char *name, const char *shown,
			 struct error *err)
{
	bool made = mkdirat(parent, name, 0755) == 0;
	if (!made && errno != EEXIST)
		return error_errno(err, errno == EACCES ? ERROR_DENIED : ERROR_SETUP, errno,
				   "making the workspace's %s", shown);
	int fd = open_beneath(parent, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -ELOOP || fd == -ENOTDIR || fd == -EXDEV)
		return error_set(err, ERROR_DENIED,
				 "the workspace's %s is a symlink or not a directory; skills are "
				 "not copied through it",
				 shown);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, -fd, "opening the workspace's %s", shown);
	int e = made ? give_to_owner(&in->owner, fd) : 0;
	if (e < 0) {
		close(fd);
		return error_errno(err, ERROR_SETUP, -e, "giving the workspace's %s to its owner",
				   shown);
	}
	return fd;
}

static int open_skills_dest(struct install *in, struct error *err)
{
	if (in->skills >= 0)
		return 0;
	_cleanup_close_ int claude = open_dest_dir(in, in->workspace, ".claude", ".claude", err);
	if (claude < 0)
		return -1;
	in->skills = open_dest_dir(in, claude, "skills", ".claude/skills", err);
	return in->skills < 0 ? -1 : 0;
}

/* Puts the finished copy tmp in the place of name beneath skills: the two
 * are exchanged (whatever was there, a directory, a file or a planted
 * symlink, is then removed under the temporary name, never followed), or
 * renamed when there was nothing. Returns 0 or -errno. */
static int swap_in(int skills, const char *tmp, const char *name)
{
	for (int i = 0; i < 16; i++) {
		if (renameat2(skills, tmp, skills, name, RENAME_EXCHANGE) == 0) {
			(void)io_remove_tree_at(skills, tmp);
			return 0;
		}
		if (errno == ENOENT) {
			if (renameat2(skills, tmp, skills, name, RENAME_NOREPLACE) == 0)
				return 0;
			if (errno == EEXIST)
				continue; /* made meanwhile: exchange it */
			return -errno;
		}
		if (errno != EINVAL)
			return -errno;
		/* A file system without RENAME_EXCHANGE: the old entry moves
		 * aside first, the copy takes its name. */
		_cleanup_free_ char *old = xasprintf("%s.old", tmp);
		if (renameat(skills, name, skills, old) < 0 && errno != ENOENT)
			return -errno;
		int e = renameat(skills, tmp, skills, name) < 0 ? -errno : 0;
		(void)io_remove_tree_at(skills, old);
		return e;
	}
	return -EBUSY;
}

/* Copies the checked skill beneath src into in->skills as name. */
static void copy_skill(struct install *in, int src, const char *name, const char *text, size_t len,
		       struct walk *w)
{
	uint64_t rnd;
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		walk_error(w, "", "cannot be copied: getrandom: %s", strerror(errno));
		return;
	}
	/* Hidden, so that no agent takes a half-made copy for a skill. */
	_cleanup_free_ char *tmp = xasprintf(".%s.tmp-%016llx", name, (unsigned long long)rnd);
	_cleanup_close_ int dst = make_dir(w, in->skills, tmp, "");
	if (dst < 0)
		return;
	size_t before = w->errors->len;
	if (write_new_file(w, dst, "SKILL.md", "SKILL.md", -1, text, len, 0644) == 0)
		walk_tree(w, src, dst, "", 0);
	int e = w->errors->len == before ? swap_in(in->skills, tmp, name) : 0;
	if (e < 0)
		walk_error(w, "", "cannot be put in place in the workspace: %s", strerror(-e));
	if (w->errors->len != before)
		(void)io_remove_tree_at(in->skills, tmp);
}

/* One skill: name beneath top. Fills r; with in->workspace >= 0, copies
 * the skill when it is valid. Fails only when the destination cannot be
 * used at all. */
static int do_skill(struct install *in, int top, const char *name, struct skill_report *r,
		    struct error *err)
{
	r->name = term_escape(name);
	struct walk w = {.errors = &r->errors, .owner = &in->owner};
	_cleanup_close_ int src = open_beneath(top, name, O_RDONLY | O_DIRECTORY, 0);
	if (src < 0) {
		if (src == -ELOOP)
			walk_error(&w, "",
				   "the skill directory is a symlink; skills are read without "
				   "following symlinks");
		else
			walk_error(&w, "", "cannot be opened: %s", strerror(-src));
		return 0;
	}
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	/* Looked at before it is opened: opening a device can act. */
	struct stat st;
	int e = fstatat(src, "SKILL.md", &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno
		: S_ISLNK(st.st_mode)				       ? -ELOOP
		: !S_ISREG(st.st_mode)				       ? -EINVAL
								       : 0;
	_cleanup_close_ int md =
	    e < 0 ? -1 : open_beneath(src, "SKILL.md", O_RDONLY | O_NONBLOCK, 0);
	if (e == 0)
		e = md < 0 ? md : read_fd(md, SKILL_MD_BYTES_MAX, &text, &len);
	if (e == -ENOENT)
		walk_error(&w, "SKILL.md", "is missing; a skill is a directory holding SKILL.md");
	else if (e == -ELOOP)
		walk_error(&w, "SKILL.md",
			   "is a symlink; skills are read without following "
			   "symlinks");
	else if (e == -EFBIG)
		walk_error(&w, "SKILL.md", "is larger than %d MiB", SKILL_MD_BYTES_MAX >> 20);
	else if (e == -EINVAL)
		walk_error(&w, "SKILL.md", "is not a regular file");
	else if (e < 0)
		walk_error(&w, "SKILL.md", "cannot be read: %s", strerror(-e));
	else
		skills_validate_text(name, text, len, &r->errors);
	w.files = 1;
	w.bytes = len;
	walk_tree(&w, src, -1, "", 0);
	if (in->workspace < 0 || r->errors.len > 0) {
		r->ok = r->errors.len == 0;
		return 0;
	}
	/* The copy checks everything again as it goes (the source may have
	 * changed since), but the workspace sees nothing of a skill that
	 * was invalid to begin with. */
	if (open_skills_dest(in, err) < 0)
		return -1;
	w = (struct walk){.errors = &r->errors, .owner = &in->owner, .files = 1, .bytes = len};
	copy_skill(in, src, name, text, len, &w);
	r->ok = r->errors.len == 0;
	return 0;
}

static void report_push(struct skill_reports *out, size_t *alloc, struct skill_report **r)
{
	if (out->len == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 8;
		out->items = xreallocarray(out->items, *alloc, sizeof(*out->items));
	}
	*r = &out->items[out->len++];
	**r = (struct skill_report){.errors = STRV_INIT};
}

static int each_skill(const char *dir, struct install *in, struct skill_reports *out,
		      struct error *err)
{
	*out = (struct skill_reports){0};
	_cleanup_close_ int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0) {
		int e = errno;
		enum error_kind kind = e == ENOENT    ? ERROR_NOT_FOUND
				       : e == ENOTDIR ? ERROR_USAGE
				       : e == EACCES  ? ERROR_DENIED
						      : ERROR_SETUP;
		return error_errno(err, kind, e, "opening the skills directory %s", dir);
	}
	_cleanup_strv_ struct strv names = STRV_INIT;
	int e = list_names(top, SIZE_MAX, &names);
	if (e < 0)
		return error_errno(err, ERROR_SETUP, -e, "reading the skills directory %s", dir);
	size_t alloc = 0, skills = 0;
	struct skill_reports reports = {0};
	for (size_t i = 0; i < names.len; i++) {
		const char *name = names.items[i];
		struct stat st;
		/* Hidden entries (.git, our own temporaries) and plain files
		 * beside the skills are not skills; a symlink to a directory
		 * is reported (and refused), not skipped in silence. */
		if (name[0] == '.' || fstatat(top, name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (++skills > SKILLS_MAX) {
			skill_reports_release(&reports);
			return error_set(err, ERROR_LIMIT,
					 "the skills directory %s holds more than %d skills", dir,
					 SKILLS_MAX);
		}
		struct skill_report *r;
		report_push(&reports, &alloc, &r);
		if (do_skill(in, top, name, r, err) < 0) {
			skill_reports_release(&reports);
			return -1;
		}
	}
	*out = reports;
	return 0;
}

int skills_validate_dir(const char *dir, struct skill_reports *out, struct error *err)
{
	struct install in = {.workspace = -1, .skills = -1};
	return each_skill(dir, &in, out, err);
}

int skills_install(const char *dir, int workspace_fd, struct skill_reports *out, struct error *err)
{
	struct install in = {.workspace = workspace_fd, .skills = -1};
	struct stat st;
	if (fstat(workspace_fd, &st) < 0)
		return error_errno(err, ERROR_SETUP, errno, "reading the workspace");
	if (geteuid() == 0)
		in.owner = (struct owner){.chown = true, .uid = st.st_uid, .gid = st.st_gid};
	int r = each_skill(dir, &in, out, err);
	if (in.skills >= 0)
		close(in.skills);
	return r;
}

void skill_reports_release(struct skill_reports *r)
{
	for (size_t i = 0; i < r->len; i++) {
		free(r->items[i].name);
		strv_release(&r->items[i].errors);
	}
	free(r->items);
	*r = (struct skill_reports){0};
}

struct json_object *skill_reports_json(const struct skill_reports *r)
{
	struct json_object *skills = json_object_new_array();
	for (size_t i = 0; i < r->len; i++) {
		const struct skill_report *s = &r->items[i];
		struct json_object *item = json_object_new_object();
		struct json_object *errors = json_object_new_array();
		for (size_t k = 0; k < s->errors.len; k++)
			json_object_array_add(errors, json_object_new_string(s->errors.items[k]));
		json_object_object_add(item, "name", json_object_new_string(s->name));
		json_object_object_add(item, "ok", json_object_new_boolean(s->ok));
		json_object_object_add(item, "errors", errors);
		json_object_array_add(skills, item);
	}
	struct json_object *result = json_object_new_object();
	json_object_object_add(result, "skills", skills);
	return result;
}
