/* This file gives each masked file its own empty stand-in and reports the
 * command's attempts to read one. It runs on the host side only, in the
 * supervisor's loop (no thread, no polling), and never decides what is
 * masked: a watch that fails costs the report, not the mask. */
#include "sandbox/secret_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/inotify_events.h"
#include "base/output.h"
#include "base/xalloc.h"
#include "sandbox/rundir.h"

struct stand_in {
	const char *pattern;   /* what masked it: the secret pattern, or the rule's */
	const char *rule;      /* the rule's origin */
	unsigned long pending; /* opens seen since the last record */
	bool seen;
	bool recorded; /* at least one record written */
	struct timespec last_record;
};

struct secret_watch {
	char *dir; /* the private directory; NULL in a dry run or with none */
	bool made; /* the stand-ins exist on the host (not a dry run) */
	struct strv files;
	struct bwrap_copy *binds; /* dest = the masked path, source = its stand-in */
	struct stand_in *items;
	size_t len;
	int fd; /* inotify, or -1 */
	int wd; /* the watch on dir */
	struct audit *audit;
	size_t *order; /* indexes in the order first seen */
	size_t seen_len;
	unsigned long records, dropped;
	bool overflowed;
};

static int compare_match_path(const void *key, const void *item)
{
	return strcmp(key, ((const struct secret_match *)item)->path);
}

/* The secret pattern that masked the file, or the rule's own pattern.
 * secrets_scan sorts its matches by path; a match not found that way
 * costs the record only its pattern's precision. */
static const char *pattern_for(const struct access_entry *e, const struct secret_scan_result *found)
{
	const struct secret_match *m = found && found->len
					   ? bsearch(e->path, found->items, found->len,
						     sizeof(*found->items), compare_match_path)
					   : NULL;
	return m ? m->pattern : e->rule->pattern;
}

/* The first stand-in is a new empty file; the others are hard links to
 * it, which cost a directory entry each instead of an inode (twenty times
 * faster on a disk-backed /tmp). An event names the link that the mount
 * was made from, so they stay apart. */
static int make_stand_in(const char *path, const char *first, struct file_id *id, struct error *err)
{
	if (first) {
		if (link(first, path) < 0)
			return error_errno(err, ERROR_SETUP, errno, "creating %s", path);
		return 0;
	}
	_cleanup_close_ int fd =
	    open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_errno(err, ERROR_SETUP, errno, "identifying %s", path);
	file_id_from_stat(&st, id);
	return 0;
}

int secret_watch_prepare(struct secret_watch **out, const struct policy *policy,
			 const struct secret_scan_result *found, const char *xdg_runtime_dir,
			 bool dry_run, struct error *err)
{
	struct secret_watch *w = xcalloc(1, sizeof(*w));
	*w = (struct secret_watch){.files = STRV_INIT, .fd = -1};
	*out = w;
	size_t n = 0;
	for (size_t i = 0; i < policy->len; i++)
		if (policy->entries[i].level == ACCESS_EXCLUDE && !policy->entries[i].is_dir)
			n++;
	if (!n)
		return 0;
	if (dry_run)
		w->dir = xstrdup("$XDG_RUNTIME_DIR/agent-sandbox/masked-XXXXXX");
	else if (rundir_masked_dir(xdg_runtime_dir, &w->dir, err) < 0)
		return -1;
	w->made = !dry_run;
	w->binds = xcalloc(n, sizeof(*w->binds));
	w->items = xcalloc(n, sizeof(*w->items));
	w->order = xcalloc(n, sizeof(*w->order));
	for (size_t i = 0; i < policy->len; i++) {
		const struct access_entry *e = &policy->entries[i];
		if (e->level != ACCESS_EXCLUDE || e->is_dir)
			continue;
		/* The name is the index: an event names the file it came from. */
		strv_pushf(&w->files, "%s/%zu", w->dir, w->len);
		w->binds[w->len] =
		    (struct bwrap_copy){.dest = e->path, .source = w->files.items[w->len]};
		w->items[w->len] =
		    (struct stand_in){.pattern = pattern_for(e, found), .rule = e->rule->origin};
		size_t k = w->len++;
		if (dry_run)
			continue;
		const char *first = k ? w->files.items[0] : NULL;
		if (make_stand_in(w->files.items[k], first, &w->binds[k].id, err) < 0)
			return -1;
		if (first)
			w->binds[k].id = w->binds[0].id;
	}
	return 0;
}

const struct bwrap_copy *secret_watch_stand_ins(const struct secret_watch *w, size_t *len)
{
	*len = w ? w->len : 0;
	return w ? w->binds : NULL;
}

const char *secret_watch_dir(const struct secret_watch *w)
{
	return w && w->len ? w->dir : NULL;
}

static void reporting_off(struct secret_watch *w, const char *reason)
{
	output_debug("secrets: reads of masked files are not reported: %s", reason);
	audit_secret_watch(w->audit, reason);
}

int secret_watch_arm(struct secret_watch *w, struct audit *audit, bool disabled)
{
	w->audit = audit;
	if (!w->made || !w->len)
		return -1;
	if (disabled) {
		reporting_off(w, SECRET_WATCH_BENCH_OFF_ENV " is set");
		return -1;
	}
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		_cleanup_free_ char *why = xasprintf("inotify_init1: %s", strerror(errno));
		reporting_off(w, why);
		return -1;
	}
	w->wd = inotify_add_watch(w->fd, w->dir, IN_OPEN | IN_ONLYDIR | IN_DONT_FOLLOW);
	if (w->wd < 0) {
		_cleanup_free_ char *why = xasprintf("watching %s: %s", w->dir, strerror(errno));
		close(w->fd);
		w->fd = -1;
		reporting_off(w, why);
		return -1;
	}
	output_debug("secrets: reads of %zu masked file%s are reported (inotify on %s)", w->len,
		     w->len == 1 ? "" : "s", w->dir);
	return w->fd;
}

static double seconds_since(const struct timespec *then, const struct timespec *now)
{
	return (double)(now->tv_sec - then->tv_sec) + (now->tv_nsec - then->tv_nsec) / 1e9;
}

/* One record for the opens of a path not yet recorded: at once for the
 * first, then at most once a second, and never more than the cap. */
static void record(struct secret_watch *w, size_t i, bool final)
{
	struct stand_in *s = &w->items[i];
	if (!s->pending)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!final && s->recorded && seconds_since(&s->last_record, &now) < 1.0)
		return;
	if (w->records >= SECRET_WATCH_RECORDS_MAX) {
		w->dropped += s->pending;
		s->pending = 0;
		return;
	}
	audit_secret_read(w->audit, w->binds[i].dest, s->pattern, s->rule, s->pending);
	if (!s->recorded)
		output_debug("secrets: the command opened %s (masked by %s)", w->binds[i].dest,
			     s->rule);
	w->records++;
	s->pending = 0;
	s->recorded = true;
	s->last_record = now;
}

static void on_open(struct secret_watch *w, const char *name)
{
	char *end;
	errno = 0;
	unsigned long long i = strtoull(name, &end, 10);
	if (errno || end == name || *end || i >= w->len)
		return;
	struct stand_in *s = &w->items[i];
	if (!s->seen) {
		s->seen = true;
		w->order[w->seen_len++] = (size_t)i;
	}
	s->pending++;
	record(w, (size_t)i, false);
}

static void on_event(const struct inotify_event *e, void *ctx)
{
	struct secret_watch *w = ctx;
	if (e->mask & IN_Q_OVERFLOW)
		w->overflowed = true;
	else if ((e->mask & IN_OPEN) && e->len)
		on_open(w, e->name);
}

int secret_watch_dispatch(void *ctx)
{
	struct secret_watch *w = ctx;
	inotify_each_event(w->fd, on_event, w);
	return 0;
}

void secret_watch_finish(struct secret_watch *w)
{
	if (!w || w->fd < 0)
		return;
	secret_watch_dispatch(w);
	for (size_t k = 0; k < w->seen_len; k++)
		record(w, w->order[k], true);
	if (w->overflowed)
		reporting_off(w, "the kernel's event queue overflowed: some reads may be missing");
	if (w->dropped) {
		_cleanup_free_ char *why =
		    xasprintf("%lu further reads not logged: over the limit of %d records a run",
			      w->dropped, SECRET_WATCH_RECORDS_MAX);
		output_debug("secrets: %s", why);
		audit_secret_watch(w->audit, why);
	}
	/* Removed now, closed later: the kernel frees a watch after a grace
	 * period that close() would wait for (10 ms and more). Begun here,
	 * it passes while the run is taken down, and with the guard's. */
	inotify_rm_watch(w->fd, w->wd);
}

void secret_watch_take_reads(struct secret_watch *w, struct strv *out)
{
	for (size_t k = 0; w && k < w->seen_len; k++)
		strv_push(out, w->binds[w->order[k]].dest);
}

void secret_watch_free(struct secret_watch *w)
{
	if (!w)
		return;
	io_close_later(w->fd);
	for (size_t i = 0; w->made && i < w->files.len; i++)
		unlink(w->files.items[i]);
	if (w->made && w->dir)
		rmdir(w->dir);
	free(w->dir);
	strv_release(&w->files);
	free(w->binds);
	free(w->items);
	free(w->order);
	free(w);
}
