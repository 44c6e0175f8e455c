/* This file watches the host sockets that the sandbox masks one by one (a
 * mount on the socket's own file). Linux detaches a mount whose mount point
 * is removed, in every mount namespace: a service that restarts (removes
 * its socket, binds a new one at the same path) would be reachable inside
 * from then on. A socket that appears again at such a path stops the run,
 * as the guard does when a protection no longer holds. Runs on the host
 * side, in the supervisor's loop. */
#include "sandbox/socket_watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/inotify_events.h"
#include "base/output.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

struct watched {
	int wd;
	char *path;	  /* the socket's path */
	const char *name; /* its last component, within path */
};

struct socket_watch {
	int fd;
	struct watched *items;
	size_t len;
	char *stop_reason;
};

static bool masked_as_file(const struct policy *policy, const char *path)
{
	for (size_t i = 0; i < policy->len; i++) {
		const struct access_entry *e = &policy->entries[i];
		if (!strcmp(e->path, path))
			return e->level == ACCESS_EXCLUDE && !e->is_dir;
	}
	return false;
}

int socket_watch_start(struct socket_watch **out, const struct policy *policy,
		       const struct strv *sockets, struct error *err)
{
	*out = NULL;
	size_t n = 0;
	for (size_t i = 0; i < sockets->len; i++)
		n += masked_as_file(policy, sockets->items[i]);
	if (!n)
		return 0;
	struct socket_watch *w = xcalloc(1, sizeof(*w));
	w->items = xcalloc(n, sizeof(*w->items));
	*out = w;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		return error_errno(err, ERROR_SETUP, errno,
				   "watching the host sockets the sandbox masks");
	for (size_t i = 0; i < sockets->len; i++) {
		const char *path = sockets->items[i];
		if (!masked_as_file(policy, path))
			continue;
		_cleanup_free_ char *dir = xstrdup(path);
		char *slash = strrchr(dir, '/');
		if (!slash)
			continue;
		slash[slash == dir] = '\0';
		/* A new socket is created, or renamed into place. */
		int wd = inotify_add_watch(w->fd, dir,
					   IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
		/* A directory the user may search but not read (a system
		 * daemon's) cannot be watched: its socket keeps its mask
		 * until the service binds it again. */
		int saved = errno;
		_cleanup_free_ char *shown = wd < 0 ? term_escape(dir) : NULL;
		if (wd < 0 && (saved == EACCES || saved == EPERM)) {
			output_debug("sockets: cannot watch %s (%s): a new socket there would "
				     "not be masked",
				     shown, strerror(saved));
			continue;
		}
		if (wd < 0)
			return error_errno(err, ERROR_SETUP, saved,
					   "watching %s, where a host socket is masked", shown);
		struct watched *it = &w->items[w->len++];
		it->wd = wd;
		it->path = xstrdup(path);
		it->name = strrchr(it->path, '/') + 1;
	}
	output_debug("sockets: %zu masked host socket%s watched for a service binding it again",
		     w->len, w->len == 1 ? "" : "s");
	return 0;
}

int socket_watch_fd(const struct socket_watch *w)
{
	return w ? w->fd : -1;
}

static void on_event(const struct inotify_event *e, void *ctx)
{
	struct socket_watch *w = ctx;
	if (e->mask & IN_Q_OVERFLOW && !w->stop_reason)
		w->stop_reason = xstrdup("the watch on the masked host sockets overflowed: the "
					 "sandbox was stopped");
	for (size_t i = 0; e->len && i < w->len && !w->stop_reason; i++) {
		const struct watched *it = &w->items[i];
		if (it->wd != e->wd || strcmp(it->name, e->name) != 0)
			continue;
		struct stat st;
		if (lstat(it->path, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		_cleanup_free_ char *shown = term_escape(it->path);
		w->stop_reason =
		    xasprintf("the host socket %s was bound again (its service "
			      "restarted), which lifts its mask: the sandbox was stopped",
			      shown);
	}
}

int socket_watch_dispatch(void *ctx)
{
	struct socket_watch *w = ctx;
	inotify_each_event(w->fd, on_event, w);
	return w->stop_reason ? -1 : 0;
}

const char *socket_watch_stop_reason(const struct socket_watch *w)
{
	return w ? w->stop_reason : NULL;
}

void socket_watch_free(struct socket_watch *w)
{
	if (!w)
		return;
	io_close_later(w->fd);
	for (size_t i = 0; i < w->len; i++)
		free(w->items[i].path);
	free(w->items);
	free(w->stop_reason);
	free(w);
}
