/* This file makes, enters and removes a sandbox's pids cgroup on a cgroup
 * v1 hierarchy. The cgroup is named after the supervising process, which
 * outlives every process in it and removes it at the end. */
#include "sandbox/pids_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/io.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#define PIDS_ROOT "/sys/fs/cgroup/pids"

/* The caller's path in the pids hierarchy, from /proc/self/cgroup
 * ("8:pids:/some/path"), or NULL. */
static char *own_pids_path(void)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file("/proc/self/cgroup", 64 * 1024, &text, &len) < 0)
		return NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		/* The controllers of a v1 line, comma-separated. */
		for (char *tok = c1 + 1, *save = NULL; (tok = strtok_r(tok, ",", &save));
		     tok = NULL)
			if (!strcmp(tok, "pids"))
				return xstrdup(c2 + 1);
	}
	return NULL;
}

static bool unusable(int e)
{
	return e == EACCES || e == EPERM || e == EROFS || e == ENOENT;
}

int pids_cgroup_create(struct pids_cgroup *cg, unsigned max, struct error *err)
{
	*cg = (struct pids_cgroup)PIDS_CGROUP_INIT;
	_cleanup_free_ char *own = own_pids_path();
	if (!own || strstr(own, "/.."))
		return 0;
	_cleanup_free_ char *dir = xasprintf("%s%s%sagent-sandbox-%ld", PIDS_ROOT, own,
					     strcmp(own, "/") ? "/" : "", (long)getpid());
	/* One left by a run of the same pid that was killed before it could
	 * remove it is empty (bwrap dies with its parent): take its place. */
	int made = mkdir(dir, 0755);
	if (made < 0 && errno == EEXIST && rmdir(dir) == 0)
		made = mkdir(dir, 0755);
	if (made < 0) {
		if (unusable(errno))
			return 0;
		return error_errno(err, ERROR_SETUP, errno, "making the pids cgroup %s", dir);
	}
	cg->dir = steal_ptr(&dir);
	_cleanup_free_ char *max_file = xasprintf("%s/pids.max", cg->dir);
	_cleanup_free_ char *value = xasprintf("%u", max);
	int fd = open(max_file, O_WRONLY | O_CLOEXEC);
	int r = fd < 0 ? -errno : write_all(fd, value, strlen(value));
	if (fd >= 0)
		close(fd);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "setting %s", max_file);
	_cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", cg->dir);
	cg->procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (cg->procs_fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening %s", procs);
	return 0;
}

int pids_cgroup_enter(int procs_fd)
{
	/* "0": the writing process itself. */
	return write(procs_fd, "0", 1) == 1 ? 0 : -1;
}

void pids_cgroup_remove(struct pids_cgroup *cg)
{
	if (cg->procs_fd >= 0)
		close(cg->procs_fd);
	cg->procs_fd = -1;
	if (!cg->dir)
		return;
	/* The sandbox's last processes die with its init, but the kernel
	 * may still be reaping them: up to two seconds. */
	for (int i = 0; i < 200 && rmdir(cg->dir) < 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	free(cg->dir);
	cg->dir = NULL;
}
