/* This file guards protected paths that did not exist when the sandbox
 * started (see guard.h). It runs on the host while the sandbox runs. It
 * works on directory descriptors taken from a writable entry down, opens
 * nothing through a symlink, and treats a symlink that appears on the way
 * to a protected path as the intruder: it would redirect the host program.
 *
 * Every event in a watched directory re-checks every target: the set is
 * small, and a check from the root down holds however the directories on
 * the way were renamed, replaced or recreated in between. */
#include "sandbox/guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "git/config.h"
#include "git/index.h"
#include "git/repo.h"
#include "base/io.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "policy/secret_scan.h"
#include "base/strv.h"
#include "base/xalloc.h"

/* A path that keeps coming back is being fought over: stop the sandbox
 * rather than leave the window open again and again. */
#define GUARD_REPEAT_LIMIT 5
#define GUARD_REPEAT_SECONDS 10

/* An index larger than this is not read (its gitlinks stay unguarded). */
#define GUARD_INDEX_MAX (256 << 20)

/* IN_MODIFY, IN_CLOSE_WRITE, IN_ATTRIB: a pinned file written in place
 * (or made a hard link of). */
#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF |     \
	 IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB)

/* Every target is also checked this often, events or not: a write through
 * a hard link in a directory nobody watches, or watches the sandbox used
 * up, raises no event here. */
#define GUARD_TICK_MS 250

/* A pinned file larger than this is not pinned (a config never is). */
#define GUARD_PINNED_MAX (1 << 20)

struct target_state {
	int root_fd;
	bool root_watched; /* an fd keeps its identity: one watch() is enough */
	unsigned hits;
	time_t window_start;
	struct stat verified; /* a pinned file as last found intact */
	bool have_verified;
};

/* A repository whose gitlinks are guarded: see guard_watch_repository. */
struct repository_watch {
	char *toplevel;
	char *index;
	struct strv known; /* gitlinks seen so far */
	struct stat last;  /* the index as last read */
};

/* The working directory, swept for .git entries that were not there at
 * start: see guard_watch_tree. */
struct tree_watch {
	char *root;
	char *common; /* the repository's common directory, or NULL */
	const struct pattern_set *skip;
	struct strv known;
	size_t unreadable; /* directories the walk could not read at start */
	struct timespec last;
	double last_ms;
	const struct rule *rule;
};

struct watched {
	dev_t dev;
	ino_t ino;
};

struct guard {
	struct guard_plan own; /* the plan's targets, and the ones added since */
	const struct policy *policy;
	struct target_state *state;
	size_t state_alloc;
	struct repository_watch *repos;
	size_t repos_len;
	struct rule **rules; /* made up for gitlinks */
	size_t rules_len;
	struct watched *watched; /* directories with a watch */
	size_t watched_len;
	int inotify_fd;
	int timer_fd;
	int epoll_fd;	/* both of the above */
	bool sweep_now; /* look for new .git entries at once */
	struct tree_watch *tree;
	char *quarantine_base;
	char *quarantine_dir;
	char *run_id;
	int quarantine_fd;
	unsigned serial;
	struct guard_event *events;
	size_t events_len;
	char *stop_reason;
	guard_report_fn report;
	void *ctx;
};

static bool is_guarded_level(enum access_level level)
{
	return level == ACCESS_RO || level == ACCESS_EXCLUDE;
}

/* The writable entry a new path under dir would be created in, or NULL. */
static const struct access_entry *writable_root(const struct policy *p, const char *dir)
{
	const struct access_entry *e = policy_entry_for(p, dir);
	return e && e->level == ACCESS_RW ? e : NULL;
}

static const char *below(const char *path, const char *root)
{
	if (!strcmp(root, "/"))
		return path + 1;
	return path[strlen(root)] == '/' ? path + strlen(root) + 1 : path + strlen(root);
}

/* Returns false when there is nothing to add. */
static bool add_target(struct guard_plan *plan, const char *root, const char *rest, bool glob,
		       const struct rule *rule)
{
	if (!*rest)
		return false; /* the root itself exists: it is the mount */
	for (const char *p = rest; *p;) {
		size_t n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2)))
			return false; /* only plain names lead down from the root */
		p += n + (p[n] == '/');
	}
	for (size_t i = 0; i < plan->len; i++)
		if (!strcmp(plan->targets[i].root, root) && !strcmp(plan->targets[i].rest, rest))
			return false; /* several rules name it; one check is enough */
	plan->targets = xreallocarray(plan->targets, plan->len + 1, sizeof(*plan->targets));
	plan->targets[plan->len++] = (struct guard_target){
	    .root = xstrdup(root),
	    .rest = xstrdup(rest),
	    .glob = glob,
	    .display = xasprintf("%s/%s", strcmp(root, "/") ? root : "", rest),
	    .rule = rule,
	};
	return true;
}

static void guard_target_drop_last(struct guard_plan *plan)
{
	struct guard_target *t = &plan->targets[--plan->len];
	free(t->root);
	free(t->rest);
	free(t->display);
	free(t->content);
}

/* The names in directories the globs look into, read once each: many
 * globs share a directory (the agents' settings in ~/.claude). */
struct dir_listing {
	char *dir;
	struct strv names;
};

struct listings {
	struct dir_listing *items;
	size_t len;
};

static void add_name(const char *path, const char *name, void *data)
{
	(void)path;
	strv_push(data, name);
}

static const struct strv *listing_of(struct listings *l, const char *dir)
{
	for (size_t i = 0; i < l->len; i++)
		if (!strcmp(l->items[i].dir, dir))
			return &l->items[i].names;
	l->items = xreallocarray(l->items, l->len + 1, sizeof(*l->items));
	struct dir_listing *d = &l->items[l->len++];
	*d = (struct dir_listing){.dir = xstrdup(dir), .names = STRV_INIT};
	io_each_entry(dir, add_name, &d->names);
	return &d->names;
}

static void listings_release(struct listings *l)
{
	for (size_t i = 0; i < l->len; i++) {
		free(l->items[i].dir);
		strv_release(&l->items[i].names);
	}
	free(l->items);
}

static void list_matches(struct listings *l, const char *dir, const char *segment,
			 struct guard_target *t)
{
	const struct strv *names = listing_of(l, dir);
	for (size_t i = 0; i < names->len; i++) {
		if (!pattern_match_segment(segment, names->items[i]))
			continue;
		t->present = xreallocarray(t->present, t->present_len + 1, sizeof(char *));
		t->present[t->present_len++] = xstrdup(names->items[i]);
	}
}

static char *parent_of(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	slash[slash == dir ? 1 : 0] = '\0';
	return dir;
}

/* Reads a pinned file once, at start: these are the bytes it must keep. */
static void pin_content(struct guard_target *t, const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	_cleanup_free_ char *proc = NULL;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > GUARD_PINNED_MAX)
		return;
	proc = xasprintf("/proc/self/fd/%d", fd);
	if (read_file(proc, GUARD_PINNED_MAX, &t->content, &t->content_len) < 0)
		return;
	t->pinned = true;
	t->mode = st.st_mode & 07777;
}

void guard_plan_build(const struct policy *p, struct guard_plan *out)
{
	*out = (struct guard_plan){0};
	struct listings listings = {0};
	for (size_t i = 0; i < p->absent_len; i++) {
		const struct absent_entry *a = &p->absent[i];
		if (!is_guarded_level(a->level))
			continue;
		_cleanup_free_ char *dir = parent_of(a->path);
		const struct access_entry *root = writable_root(p, dir);
		if (root)
			add_target(out, root->path, below(a->path, root->path), false, a->rule);
	}
	for (size_t i = 0; i < p->globs_len; i++) {
		const struct glob_watch *g = &p->globs[i];
		if (!is_guarded_level(g->rule->level))
			continue;
		const struct access_entry *root = writable_root(p, g->dir);
		if (!root)
			continue;
		const char *dir_rest = below(g->dir, root->path);
		_cleanup_free_ char *rest =
		    *dir_rest ? xasprintf("%s/%s", dir_rest, g->segment) : xstrdup(g->segment);
		if (add_target(out, root->path, rest, true, g->rule))
			list_matches(&listings, g->dir, g->segment, &out->targets[out->len - 1]);
	}
	listings_release(&listings);
	for (size_t i = 0; i < p->pinned_len; i++) {
		const struct pinned_entry *e = &p->pinned[i];
		_cleanup_free_ char *dir = parent_of(e->path);
		const struct access_entry *root = writable_root(p, dir);
		if (!root ||
		    !add_target(out, root->path, below(e->path, root->path), false, e->rule))
			continue;
		pin_content(&out->targets[out->len - 1], e->path);
		if (!out->targets[out->len - 1].pinned)
			guard_target_drop_last(out);
	}
}

void guard_plan_release(struct guard_plan *plan)
{
	for (size_t i = 0; i < plan->len; i++) {
		struct guard_target *t = &plan->targets[i];
		free(t->root);
		free(t->rest);
		free(t->display);
		for (size_t k = 0; k < t->present_len; k++)
			free(t->present[k]);
		free(t->present);
		free(t->content);
	}
	free(plan->targets);
	*plan = (struct guard_plan){0};
}

static void watch(struct guard *g, int dir_fd)
{
	/* Most targets share their directories: one watch each. */
	struct stat st;
	if (fstat(dir_fd, &st) == 0) {
		for (size_t i = 0; i < g->watched_len; i++)
			if (g->watched[i].dev == st.st_dev && g->watched[i].ino == st.st_ino)
				return;
		g->watched = xreallocarray(g->watched, g->watched_len + 1, sizeof(*g->watched));
		g->watched[g->watched_len++] = (struct watched){st.st_dev, st.st_ino};
	}
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dir_fd);
	/* The per-user watch limit is shared with the sandbox, which can use
	 * it up: a path that cannot be watched stops the sandbox (the tick
	 * still checks it until then). */
	if (inotify_add_watch(g->inotify_fd, proc, WATCH_MASK) < 0 && !g->stop_reason &&
	    (errno == ENOSPC || errno == ENOMEM))
		g->stop_reason = xasprintf("cannot watch a directory on the way to a protected "
					   "path: %s (fs.inotify.max_user_watches); the sandbox "
					   "was stopped",
					   strerror(errno));
}

static int open_quarantine(struct guard *g, struct error *err)
{
	if (g->quarantine_fd >= 0)
		return 0;
	if (!g->quarantine_base)
		return error_set(err, ERROR_SETUP, "no quarantine directory (no state directory)");
	if (mkdir(g->quarantine_base, 0700) < 0 && errno != EEXIST)
		return error_errno(err, ERROR_SETUP, errno, "creating %s", g->quarantine_base);
	_cleanup_close_ int base =
	    open(g->quarantine_base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (base < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening %s", g->quarantine_base);
	if (mkdirat(base, g->run_id, 0700) < 0 && errno != EEXIST)
		return error_errno(err, ERROR_SETUP, errno, "creating %s/%s", g->quarantine_base,
				   g->run_id);
	g->quarantine_fd = openat(base, g->run_id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (g->quarantine_fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening %s/%s", g->quarantine_base,
				   g->run_id);
	g->quarantine_dir = xasprintf("%s/%s", g->quarantine_base, g->run_id);
	return 0;
}

/* "3-home_u_proj_.vscode_tasks.json": unique, and says where it came from. */
static char *quarantine_name(struct guard *g, const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%u-", ++g->serial);
	for (const char *p = path + (path[0] == '/'); *p && sb.len < 200; p++)
		strbuf_addch(&sb, *p == '/' ? '_' : *p);
	return strbuf_detach(&sb);
}

static void record(struct guard *g, const char *path, char *moved_to, const struct guard_target *t,
		   bool on_the_way, char *error)
{
	g->events = xreallocarray(g->events, g->events_len + 1, sizeof(*g->events));
	struct guard_event *e = &g->events[g->events_len++];
	*e = (struct guard_event){
	    .path = xstrdup(path),
	    .moved_to = moved_to,
	    .rule = t->rule,
	    .symlink_to = on_the_way ? t->display : NULL,
	    .error = error,
	};
	if (g->report)
		g->report(g->ctx, e);
}

static void stop(struct guard *g, char *reason)
{
	if (!g->stop_reason)
		g->stop_reason = reason;
	else
		free(reason);
}

/* Moves dir_fd/name out of the project. The quarantine lies outside every
 * project; when it is on another filesystem the name is moved aside in
 * place instead, to one no host program looks for. */
static void quarantine(struct guard *g, size_t index, int dir_fd, const char *name,
		       const char *path, bool on_the_way)
{
	const struct guard_target *t = &g->own.targets[index];
	struct target_state *st = &g->state[index];
	time_t now = time(NULL);
	if (now - st->window_start > GUARD_REPEAT_SECONDS) {
		st->window_start = now;
		st->hits = 0;
	}
	if (++st->hits > GUARD_REPEAT_LIMIT)
		stop(g, xasprintf("%s appeared again and again (%u times within %d seconds); the "
				  "sandbox was stopped",
				  path, st->hits, GUARD_REPEAT_SECONDS));

	_cleanup_error_ struct error err = ERROR_INIT;
	_cleanup_free_ char *qname = quarantine_name(g, path);
	if (open_quarantine(g, &err) == 0 &&
	    renameat2(dir_fd, name, g->quarantine_fd, qname, RENAME_NOREPLACE) == 0) {
		record(g, path, xasprintf("%s/%s", g->quarantine_dir, qname), t, on_the_way, NULL);
		return;
	}
	if (err.msg == NULL && errno == ENOENT)
		return; /* gone already */
	_cleanup_free_ char *aside =
	    xasprintf(".agent-sandbox-quarantined-%s-%s", g->run_id, qname);
	if (renameat2(dir_fd, name, dir_fd, aside, RENAME_NOREPLACE) == 0) {
		_cleanup_free_ char *dir = parent_of(path);
		record(g, path, xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", aside), t,
		       on_the_way, NULL);
		return;
	}
	if (errno == ENOENT)
		return;
	char *why = xasprintf("cannot move it aside: %s", strerror(errno));
	record(g, path, NULL, t, on_the_way, xstrdup(why));
	stop(g, xasprintf("%s appeared and %s; the sandbox was stopped", path, why));
	free(why);
}

static bool was_present(const struct guard_target *t, const char *name)
{
	for (size_t i = 0; i < t->present_len; i++)
		if (!strcmp(t->present[i], name))
			return true;
	return false;
}

static void check_glob(struct guard *g, size_t index, int dir_fd, const char *dir_path,
		       const char *segment)
{
	const struct guard_target *t = &g->own.targets[index];
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	_cleanup_strv_ struct strv found = STRV_INIT;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    pattern_match_segment(segment, de->d_name) && !was_present(t, de->d_name))
			strv_push(&found, de->d_name);
	closedir(d);
	for (size_t i = 0; i < found.len; i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", dir_path, found.items[i]);
		const struct rule *rule = NULL;
		/* A more specific rule may give this very name back. */
		if (policy_rule_for_new(g->policy, path, &rule) && !is_guarded_level(rule->level))
			continue;
		quarantine(g, index, dir_fd, found.items[i], path, false);
	}
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* True when dir_fd/name is a regular file holding exactly the pinned bytes. */
static bool holds_pinned_bytes(const struct guard_target *t, int dir_fd, const char *name,
			       struct stat *st)
{
	_cleanup_close_ int fd =
	    openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) < 0 || !S_ISREG(st->st_mode) ||
	    (size_t)st->st_size != t->content_len)
		return false;
	_cleanup_free_ char *buf = xmalloc(t->content_len + 1);
	size_t got = 0;
	while (got < t->content_len + 1) {
		ssize_t n = read(fd, buf + got, t->content_len + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got == t->content_len && memcmp(buf, t->content, got) == 0;
}

/* Writes the pinned bytes back under a new name and renames it over. */
static int restore_pinned(struct guard *g, const struct guard_target *t, int dir_fd,
			  const char *name)
{
	_cleanup_free_ char *tmp =
	    xasprintf(".%s.agent-sandbox-restore-%s-%u", name, g->run_id, ++g->serial);
	int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			t->mode ? t->mode : 0644);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, t->content, t->content_len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dir_fd, tmp, 0);
	return r;
}

/* A pinned file: git may replace it (by renaming a new one over it) as long
 * as the bytes stay the same. Anything else there is moved aside and the
 * bytes are written back. */
static void check_pinned(struct guard *g, size_t index, int dir_fd, const char *name,
			 const char *path)
{
	const struct guard_target *t = &g->own.targets[index];
	struct target_state *st = &g->state[index];
	struct stat now;
	if (fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && st->have_verified &&
	    same_stat(&now, &st->verified))
		return;
	if (holds_pinned_bytes(t, dir_fd, name, &now) && now.st_nlink == 1) {
		/* Watched itself too: a write through another name of it
		 * would tell its directory nothing. */
		_cleanup_close_ int fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			watch(g, fd);
		st->verified = now;
		st->have_verified = true;
		return;
	}
	st->have_verified = false;
	if (fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0)
		quarantine(g, index, dir_fd, name, path, false);
	int r = restore_pinned(g, t, dir_fd, name);
	if (g->events_len && !strcmp(g->events[g->events_len - 1].path, path))
		g->events[g->events_len - 1].restored = r == 0;
	if (r < 0)
		stop(g, xasprintf("%s changed and its content cannot be written back: %s; the "
				  "sandbox was stopped",
				  path, strerror(-r)));
}

/* Walks from the root to the target, watching every directory on the way. */
static void check_target(struct guard *g, size_t index)
{
	const struct guard_target *t = &g->own.targets[index];
	int root = g->state[index].root_fd;
	if (root < 0)
		return;
	_cleanup_strv_ struct strv parts = STRV_INIT;
	for (const char *p = t->rest; *p;) {
		const char *slash = strchrnul(p, '/');
		if (slash > p)
			strv_push_owned(&parts, xstrndup(p, (size_t)(slash - p)));
		p = *slash ? slash + 1 : slash;
	}
	/* The walk starts on the root's own descriptor (kept open for the
	 * session) and owns only the ones it opens beneath it. */
	int cur = root;
	_cleanup_close_ int opened = -1;
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	strbuf_addstr(&path, strcmp(t->root, "/") ? t->root : "");
	for (size_t i = 0; i < parts.len; i++) {
		const char *name = parts.items[i];
		bool last = i + 1 == parts.len;
		if (cur != root)
			watch(g, cur);
		else if (!g->state[index].root_watched) {
			watch(g, cur);
			g->state[index].root_watched = true;
		}
		if (last && t->glob) {
			check_glob(g, index, cur, path.len ? path.buf : "/", name);
			return;
		}
		strbuf_addf(&path, "/%s", name);
		if (last && t->pinned) {
			check_pinned(g, index, cur, name, path.buf);
			return;
		}
		struct stat st;
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return; /* not there: nothing to do until it appears */
		if (last || S_ISLNK(st.st_mode)) {
			/* The target itself, or a symlink in place of a
			 * directory on its way, which would send the host
			 * program elsewhere. */
			quarantine(g, index, cur, name, path.buf, !last);
			return;
		}
		if (!S_ISDIR(st.st_mode))
			return; /* nothing can appear beneath a file */
		int next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return;
		if (opened >= 0)
			close(opened);
		cur = opened = next;
	}
}

static void check_repository(struct guard *g, struct repository_watch *rw, bool first);

static void check_all(struct guard *g)
{
	for (size_t i = 0; i < g->repos_len; i++)
		check_repository(g, &g->repos[i], false);
	for (size_t i = 0; i < g->own.len; i++)
		check_target(g, i);
}

/* Opens the root of a target added to g->own (and its state). The root is
 * a mount point inside, so nothing there can move or replace it; a root
 * that is gone on the host has nothing beneath it to guard. */
static void adopt_last_target(struct guard *g)
{
	if (g->own.len > g->state_alloc) {
		g->state_alloc = g->own.len * 2;
		g->state = xreallocarray(g->state, g->state_alloc, sizeof(*g->state));
	}
	struct target_state *st = &g->state[g->own.len - 1];
	*st = (struct target_state){
	    .root_fd = open(g->own.targets[g->own.len - 1].root,
			    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
	};
}

int guard_start(struct guard **out, const struct guard_plan *plan, const struct policy *policy,
		const char *quarantine_base, const char *run_id, guard_report_fn report, void *ctx,
		struct error *err)
{
	struct guard *g = xcalloc(1, sizeof(*g));
	*g = (struct guard){
	    .policy = policy,
	    .quarantine_base = quarantine_base ? xstrdup(quarantine_base) : NULL,
	    .run_id = xstrdup(run_id),
	    .quarantine_fd = -1,
	    .report = report,
	    .ctx = ctx,
	};
	g->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	g->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	g->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	struct itimerspec tick = {
	    .it_interval = {.tv_nsec = GUARD_TICK_MS * 1000000L},
	    .it_value = {.tv_nsec = GUARD_TICK_MS * 1000000L},
	};
	struct epoll_event ev = {.events = EPOLLIN};
	if (g->inotify_fd < 0 || g->timer_fd < 0 || g->epoll_fd < 0 ||
	    timerfd_settime(g->timer_fd, 0, &tick, NULL) < 0 ||
	    epoll_ctl(g->epoll_fd, EPOLL_CTL_ADD, g->inotify_fd, &ev) < 0 ||
	    epoll_ctl(g->epoll_fd, EPOLL_CTL_ADD, g->timer_fd, &ev) < 0) {
		error_errno(err, ERROR_SETUP, errno, "setting up the guard's watches");
		guard_free(g);
		return -1;
	}
	for (size_t i = 0; i < plan->len; i++) {
		const struct guard_target *t = &plan->targets[i];
		if (!add_target(&g->own, t->root, t->rest, t->glob, t->rule))
			continue;
		struct guard_target *copy = &g->own.targets[g->own.len - 1];
		if (t->pinned) {
			copy->pinned = true;
			copy->content = xmalloc(t->content_len + 1);
			memcpy(copy->content, t->content, t->content_len + 1);
			copy->content_len = t->content_len;
			copy->mode = t->mode;
		}
		for (size_t k = 0; k < t->present_len; k++) {
			copy->present =
			    xreallocarray(copy->present, copy->present_len + 1, sizeof(char *));
			copy->present[copy->present_len++] = xstrdup(t->present[k]);
		}
		adopt_last_target(g);
	}
	check_all(g);
	if (g->stop_reason) {
		error_set(err, ERROR_SETUP, "the guard %s", g->stop_reason);
		error_hint(err, "raise the limit: sudo sysctl fs.inotify.max_user_watches=524288");
		guard_free(g);
		return -1;
	}
	*out = g;
	return 0;
}

/* A rule of the guard's own, for a gitlink the policy could not know of. */
static const struct rule *gitlink_rule(struct guard *g, const char *path)
{
	struct rule *r = xcalloc(1, sizeof(*r));
	*r = (struct rule){
	    .pattern = xstrdup(path),
	    .level = ACCESS_RO,
	    .layer = LAYER_BUILTIN,
	    .origin = xstrdup("@git (a gitlink: git status runs git there)"),
	};
	g->rules = xreallocarray(g->rules, g->rules_len + 1, sizeof(*g->rules));
	g->rules[g->rules_len++] = r;
	return r;
}

/* Guards toplevel/P/.git for a gitlink P. When it is there already and
 * came with a gitlink that is new, it is an intruder at once. */
/* A path git itself would write into an index: relative, no empty, "."
 * or ".." component, no ".git" component. Anything else ("d/..", "../x")
 * would reach a .git that is not a gitlink's, such as the repository's
 * own, and git does not descend there anyway. */
static bool plain_gitlink_path(const char *link)
{
	if (!*link || link[0] == '/')
		return false;
	for (const char *p = link; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2)) ||
		    (n == 4 && !strncasecmp(p, ".git", 4)))
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false;
	}
	return true;
}

static void guard_gitlink(struct guard *g, struct repository_watch *rw, const char *link,
			  bool is_new)
{
	if (!plain_gitlink_path(link))
		return;
	_cleanup_free_ char *dotgit = xasprintf("%s/%s/.git", rw->toplevel, link);
	_cleanup_free_ char *dir = xasprintf("%s/%s", rw->toplevel, link);
	struct stat st;
	bool present = lstat(dotgit, &st) == 0;
	if (present && !is_new)
		return; /* a checked-out submodule: its git directory is protected */
	/* A repository that was there at start is protected by the mounts
	 * (and holds the user's work): a gitlink the run adds for it
	 * changes nothing of what it runs. */
	if (g->tree && strv_contains(&g->tree->known, dotgit))
		return;
	const struct access_entry *root = writable_root(g->policy, dir);
	if (!root || !add_target(&g->own, root->path, below(dotgit, root->path), false,
				 gitlink_rule(g, dotgit)))
		return;
	adopt_last_target(g);
	check_target(g, g->own.len - 1);
}

/* Reads the index again when it changed, and guards its new gitlinks. */
static void check_repository(struct guard *g, struct repository_watch *rw, bool first)
{
	struct stat st;
	if (stat(rw->index, &st) < 0)
		return;
	if (!first && st.st_ino == rw->last.st_ino && st.st_size == rw->last.st_size &&
	    st.st_mtim.tv_sec == rw->last.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == rw->last.st_mtim.tv_nsec &&
	    st.st_ctim.tv_sec == rw->last.st_ctim.tv_sec &&
	    st.st_ctim.tv_nsec == rw->last.st_ctim.tv_nsec)
		return; /* ctime too: futimens can put an old mtime back */
	rw->last = st;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	_cleanup_strv_ struct strv links = STRV_INIT;
	char shared[65];
	if (read_file(rw->index, GUARD_INDEX_MAX, &text, &len) < 0 ||
	    git_index_read(text, len, &links, shared) < 0)
		return;
	if (shared[0]) {
		/* A split index keeps most entries in the shared one. */
		_cleanup_free_ char *dir = parent_of(rw->index);
		_cleanup_free_ char *shared_path = xasprintf("%s/sharedindex.%s", dir, shared);
		_cleanup_free_ char *more = NULL;
		size_t more_len = 0;
		if (read_file(shared_path, GUARD_INDEX_MAX, &more, &more_len) == 0)
			(void)git_index_gitlinks(more, more_len, &links);
	}
	for (size_t i = 0; i < links.len; i++) {
		if (!strcmp(links.items[i], GIT_INDEX_UNNAMED_GITLINK)) {
			g->sweep_now = true; /* a gitlink whose path the index hides */
			continue;
		}
		if (strv_contains(&rw->known, links.items[i]))
			continue;
		strv_push(&rw->known, links.items[i]);
		guard_gitlink(g, rw, links.items[i], !first);
	}
}

void guard_watch_repository(struct guard *g, const char *toplevel, const char *index)
{
	g->repos = xreallocarray(g->repos, g->repos_len + 1, sizeof(*g->repos));
	struct repository_watch *rw = &g->repos[g->repos_len++];
	*rw = (struct repository_watch){
	    .toplevel = xstrdup(toplevel),
	    .index = xstrdup(index),
	    .known = STRV_INIT,
	};
	/* git replaces the index by renaming a new one over it: watch its
	 * directory. */
	_cleanup_free_ char *dir = parent_of(index);
	(void)inotify_add_watch(g->inotify_fd, dir, WATCH_MASK);
	check_repository(g, rw, true);
}

/* Config keys a repository made by git init or git clone holds, and that
 * run nothing: anything else in a repository that appeared inside the
 * project (fsmonitor, hooksPath, aliases, filters, includes, ...) makes it
 * an intruder. */
static const struct {
	const char *section, *name;
	bool subsection; /* the key has one ("remote.origin.url") */
} harmless_keys[] = {
    {"core", "repositoryformatversion", false},
    {"core", "filemode", false},
    {"core", "bare", false},
    {"core", "logallrefupdates", false},
    {"core", "ignorecase", false},
    {"core", "precomposeunicode", false},
    {"core", "symlinks", false},
    {"core", "autocrlf", false},
    {"core", "eol", false},
    {"extensions", "objectformat", false},
    {"init", "defaultbranch", false},
    {"user", "name", false},
    {"user", "email", false},
    {"remote", "url", true},
    {"remote", "fetch", true},
    {"remote", "pushurl", true},
    {"branch", "remote", true},
    {"branch", "merge", true},
    {"branch", "rebase", true},
    {"submodule", "url", true},
    {"submodule", "active", true},
};

/* A URL a fetch or push reaches over the network. A local path, file://
 * or a remote helper ("ext::", "foo::") would run git (and its hooks) in a
 * repository of the sandbox's making, or a program. */
static bool network_url(const char *value)
{
	static const char *const schemes[] = {"https://", "http://",	"ssh://",
					      "git://",	  "git+ssh://", "ssh+git://"};
	if (!value)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(schemes); i++)
		if (!strncasecmp(value, schemes[i], strlen(schemes[i])))
			return !strstr(value, "::");
	/* scp-like "user@host:path": a colon before any slash, no "::". */
	const char *colon = strchr(value, ':');
	const char *slash = strchr(value, '/');
	return colon && colon != value && (!slash || colon < slash) && !strstr(value, "::") &&
	       value[0] != '.' && value[0] != '-';
}

/* A local repository the sandbox cannot write (a clone's origin elsewhere
 * on the disk): its hooks are the user's own. */
static bool readonly_local_url(const struct policy *p, const char *value)
{
	if (!value)
		return false;
	const char *path = !strncmp(value, "file://", 7) ? value + 7 : value;
	_cleanup_free_ char *resolved = NULL;
	if (path[0] != '/' || path_resolve(path, &resolved, NULL, NULL) < 0)
		return false;
	const struct access_entry *e = policy_entry_for(p, resolved);
	return e ? e->level != ACCESS_RW : policy_base_for(resolved)->kind == BASE_HOST_ROOT;
}

static int check_key(const char *key, const char *value, void *data)
{
	const struct policy *p = data;
	const char *name = strrchr(key, '.');
	if (name && (!strcmp(name, ".url") || !strcmp(name, ".pushurl")) &&
	    (!strncmp(key, "remote.", 7) || !strncmp(key, "submodule.", 10)) &&
	    !network_url(value) && !readonly_local_url(p, value))
		return 1;
	const char *dot = strchr(key, '.');
	const char *last = strrchr(key, '.');
	if (!dot)
		return 1;
	size_t section_len = (size_t)(dot - key);
	bool subsection = last != dot;
	for (size_t i = 0; i < ARRAY_SIZE(harmless_keys); i++)
		if (strlen(harmless_keys[i].section) == section_len &&
		    !strncmp(harmless_keys[i].section, key, section_len) &&
		    !strcmp(harmless_keys[i].name, last + 1) &&
		    harmless_keys[i].subsection == subsection)
			return 0;
	return 1;
}

/* Guards the gitlinks of the repository whose .git entry is dotgit, once. */
static void watch_repository_at(struct guard *g, const char *dotgit)
{
	_cleanup_free_ char *top = parent_of(dotgit);
	struct git_repo repo;
	if (!git_repo_find(top, &repo))
		return;
	_cleanup_free_ char *index = xasprintf("%s/index", repo.git_dir);
	bool seen = strcmp(repo.toplevel, top) != 0;
	for (size_t i = 0; !seen && i < g->repos_len; i++)
		seen = !strcmp(g->repos[i].index, index);
	if (!seen)
		guard_watch_repository(g, repo.toplevel, index);
	git_repo_release(&repo);
}

static bool file_exists(const char *dir, const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	return lstat(path, &st) == 0;
}

/* A gitfile or commondir read as git reads it: the whole file less
 * trailing line ends, after prefix; the path it names, resolved against
 * base. NULL when it leads nowhere, or holds a control character (which
 * only an intruder writes, and where a reader cutting at the first line
 * end would see another path than git). */
static char *read_pointer_file(const char *file, const char *prefix, const char *base)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0, skip = strlen(prefix);
	if (read_file(file, 4096, &text, &len) < 0 || len <= skip ||
	    strncmp(text, prefix, skip) != 0 || memchr(text, '\0', len))
		return NULL;
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			return NULL;
	return git_repo_pointer_target(text + skip, base);
}

/* True when a host git run where this .git is would read no configuration
 * and run no hook the sandbox chose: a linked worktree of the repository
 * itself, or a plain repository as git init or git clone leaves it. */
static bool repository_is_harmless(const struct guard *g, const struct tree_watch *tw,
				   const char *dotgit)
{
	struct stat st;
	if (lstat(dotgit, &st) < 0)
		return true;
	_cleanup_free_ char *dir = parent_of(dotgit);
	_cleanup_free_ char *git_dir = NULL;
	if (S_ISDIR(st.st_mode)) {
		git_dir = xstrdup(dotgit);
	} else if (S_ISREG(st.st_mode)) {
		git_dir = read_pointer_file(dotgit, "gitdir: ", dir);
		if (!git_dir)
			return false; /* moving one that leads nowhere costs nothing */
	} else {
		return false; /* a symlink, a fifo: git would follow or choke */
	}
	if (file_exists(git_dir, "config.worktree"))
		return false;
	_cleanup_free_ char *commondir_file = xasprintf("%s/commondir", git_dir);
	if (lstat(commondir_file, &st) == 0) {
		/* Only a linked worktree of this repository, whose
		 * configuration and hooks are the protected ones. */
		_cleanup_free_ char *common = read_pointer_file(commondir_file, "", git_dir);
		_cleanup_free_ char *admin =
		    tw->common ? xasprintf("%s/worktrees/", tw->common) : NULL;
		return common && admin && !strcmp(common, tw->common) &&
		       !strncmp(git_dir, admin, strlen(admin)) &&
		       !strchr(git_dir + strlen(admin), '/');
	}
	_cleanup_free_ char *config = xasprintf("%s/config", git_dir);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (lstat(config, &st) == 0 &&
	    (!S_ISREG(st.st_mode) || read_file(config, 1 << 20, &text, &len) < 0 ||
	     git_config_parse(text, len, check_key, (void *)g->policy) != 0))
		return false;
	/* git init and git clone copy only sample hooks, which never run. */
	_cleanup_free_ char *hooks = xasprintf("%s/hooks", git_dir);
	DIR *d = opendir(hooks);
	if (!d)
		return lstat(hooks, &st) < 0;
	bool harmless = true;
	struct dirent *de;
	while (harmless && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    (n < 7 || strcmp(de->d_name + n - 7, ".sample")))
			harmless = false;
	}
	closedir(d);
	return harmless;
}

/* Walks the working directory (as the secret scan does) for .git entries
 * that were not there at start, and guards each that is not harmless. */
static void sweep_tree(struct guard *g)
{
	struct tree_watch *tw = g->tree;
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct pattern_set none = {0};
	struct secret_scan_options opts = {.patterns = &none, .allow = &none, .skip = tw->skip};
	struct secret_scan_result found;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (secret_scan(tw->root, &opts, &found, &err) == 0) {
		if (found.unreadable > tw->unreadable)
			stop(g, xasprintf("a directory in %s can no longer be read, so the guard "
					  "cannot look into it for planted repositories; the "
					  "sandbox was stopped",
					  tw->root));
		for (size_t i = 0; i < found.git_entries.len; i++) {
			const char *dotgit = found.git_entries.items[i];
			if (strv_contains(&tw->known, dotgit))
				continue;
			if (repository_is_harmless(g, tw, dotgit)) {
				watch_repository_at(g, dotgit);
				continue;
			}
			const struct access_entry *root = writable_root(g->policy, dotgit);
			if (!root || !add_target(&g->own, root->path, below(dotgit, root->path),
						 false, tw->rule))
				continue;
			adopt_last_target(g);
			check_target(g, g->own.len - 1);
		}
		secret_scan_result_release(&found);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	tw->last = end;
	tw->last_ms =
	    (double)(end.tv_sec - start.tv_sec) * 1e3 + (double)(end.tv_nsec - start.tv_nsec) / 1e6;
}

/* A sweep costs a walk of the tree: at most one a second, and less often
 * in trees so large that a walk takes more than 5% of the time. */
static void maybe_sweep(struct guard *g, bool now)
{
	struct tree_watch *tw = g->tree;
	if (!tw)
		return;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double since = (double)(t.tv_sec - tw->last.tv_sec) * 1e3 +
		       (double)(t.tv_nsec - tw->last.tv_nsec) / 1e6;
	double interval = tw->last_ms * 20 > 1000 ? tw->last_ms * 20 : 1000;
	if (now || g->sweep_now || since >= interval) {
		g->sweep_now = false;
		sweep_tree(g);
	}
}

void guard_watch_tree(struct guard *g, const char *root, const char *common,
		      const struct pattern_set *skip, const struct strv *known, size_t unreadable)
{
	struct tree_watch *tw = xcalloc(1, sizeof(*tw));
	struct rule *r = xcalloc(1, sizeof(*r));
	*r = (struct rule){
	    .pattern = xstrdup(".git"),
	    .level = ACCESS_RO,
	    .layer = LAYER_BUILTIN,
	    .origin = xstrdup("@git (a repository that appeared in the project, with "
			      "configuration or hooks that run)"),
	};
	g->rules = xreallocarray(g->rules, g->rules_len + 1, sizeof(*g->rules));
	g->rules[g->rules_len++] = r;
	*tw = (struct tree_watch){
	    .root = xstrdup(root),
	    .common = common ? xstrdup(common) : NULL,
	    .skip = skip,
	    .known = STRV_INIT,
	    .rule = r,
	};
	strv_extend(&tw->known, known);
	tw->unreadable = unreadable;
	clock_gettime(CLOCK_MONOTONIC, &tw->last);
	g->tree = tw;
	/* git status descends through the gitlinks of every repository it
	 * meets: a submodule's, a linked worktree's, a nested one's index can
	 * gain one as well as the top's. */
	for (size_t i = 0; i < known->len; i++)
		watch_repository_at(g, known->items[i]);
}

int guard_fd(const struct guard *g)
{
	return g->epoll_fd;
}

int guard_dispatch(struct guard *g)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false;
	for (;;) {
		ssize_t n = read(g->inotify_fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		any = true;
	}
	uint64_t ticks;
	if (read(g->timer_fd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks))
		any = true;
	/* An overflowed queue reads like any other event: check everything. */
	if (any)
		check_all(g);
	maybe_sweep(g, false);
	return g->stop_reason ? -1 : 0;
}

void guard_finish(struct guard *g)
{
	check_all(g);
	maybe_sweep(g, true);
}

const char *guard_stop_reason(const struct guard *g)
{
	return g->stop_reason;
}

size_t guard_events(const struct guard *g, const struct guard_event **events)
{
	*events = g->events;
	return g->events_len;
}

const char *guard_quarantine_dir(const struct guard *g)
{
	return g->quarantine_dir;
}

void guard_free(struct guard *g)
{
	if (!g)
		return;
	for (size_t i = 0; g->state && i < g->own.len; i++)
		if (g->state[i].root_fd >= 0)
			close(g->state[i].root_fd);
	free(g->state);
	free(g->watched);
	guard_plan_release(&g->own);
	for (size_t i = 0; i < g->repos_len; i++) {
		free(g->repos[i].toplevel);
		free(g->repos[i].index);
		strv_release(&g->repos[i].known);
	}
	free(g->repos);
	if (g->tree) {
		free(g->tree->root);
		free(g->tree->common);
		strv_release(&g->tree->known);
		free(g->tree);
	}
	for (size_t i = 0; i < g->rules_len; i++) {
		free(g->rules[i]->pattern);
		free(g->rules[i]->origin);
		free(g->rules[i]);
	}
	free(g->rules);
	if (g->inotify_fd >= 0)
		io_close_later(g->inotify_fd);
	if (g->timer_fd >= 0)
		close(g->timer_fd);
	if (g->epoll_fd >= 0)
		close(g->epoll_fd);
	if (g->quarantine_fd >= 0)
		close(g->quarantine_fd);
	for (size_t i = 0; i < g->events_len; i++) {
		free(g->events[i].path);
		free(g->events[i].moved_to);
		free(g->events[i].error);
	}
	free(g->events);
	free(g->quarantine_base);
	free(g->quarantine_dir);
	free(g->run_id);
	free(g->stop_reason);
	free(g);
}
