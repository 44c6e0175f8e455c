/* Blocking I/O helpers. */
#include "base/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/xalloc.h"

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_str(int fd, const char *s)
{
	return write_all(fd, s, strlen(s));
}

int read_file(const char *path, size_t max, char **out, size_t *len)
{
	/* O_NONBLOCK so that opening a FIFO cannot hang us. */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return read_fd(fd, max, out, len);
}

int read_fd(int fd, size_t max, char **out, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((size_t)st.st_size > max)
		return -EFBIG;

	size_t alloc = (size_t)st.st_size + 1, used = 0;
	_cleanup_free_ char *buf = xmalloc(alloc);
	for (;;) {
		if (used + 1 >= alloc) {
			if (alloc > max + 1)
				return -EFBIG;
			alloc *= 2;
			buf = xrealloc(buf, alloc);
		}
		ssize_t n = read(fd, buf + used, alloc - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > max)
			return -EFBIG;
	}
	buf[used] = '\0';
	*out = steal_ptr(&buf);
	*len = used;
	return 0;
}

void io_each_entry(const char *dir, void (*fn)(const char *path, const char *name, void *data),
		   void *data)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, de->d_name);
		fn(path, de->d_name, data);
	}
	closedir(d);
}

void io_close_later(int fd)
{
	int sync[2];
	if (fd < 0)
		return;
	if (pipe2(sync, O_CLOEXEC) < 0) {
		close(fd);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(sync[1]);
		char c;
		/* Until the caller has dropped its reference (or exited). */
		while (read(sync[0], &c, 1) < 0 && errno == EINTR)
			;
		/* Nothing of the caller's (a pipe it waits on) stays open. */
		if (fd > 0)
			close_range(0, (unsigned)fd - 1, 0);
		close_range((unsigned)fd + 1, ~0U, 0);
		close(fd);
		_exit(0);
	}
	close(fd);
	close(sync[0]);
	close(sync[1]);
}

/* Deeper than this, a directory is moved up rather than entered: the
 * recursion's stack stays bounded whatever the tree's depth. */
#define REMOVE_DEPTH_MAX 200

/* Removes name beneath dirfd and everything in it, never following a
 * symlink: one planted in a worktree is unlinked, not entered. A
 * directory deeper than REMOVE_DEPTH_MAX is renamed into top (the tree's
 * own root) and *moved set: the caller's next pass takes it from there. */
static int remove_tree_depth(int top, int dirfd, const char *name, int depth, bool *moved)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (depth > REMOVE_DEPTH_MAX && top >= 0) {
		for (unsigned n = 0; n < 64; n++) {
			_cleanup_free_ char *up =
			    xasprintf(".removing-%llu-%u", (unsigned long long)st.st_ino, n);
			if (renameat2(dirfd, name, top, up, RENAME_NOREPLACE) == 0) {
				*moved = true;
				return 0;
			}
			if (errno != EEXIST)
				return -errno;
		}
		return -EEXIST;
	}
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	int r = 0;
	for (struct dirent *de; (de = readdir(d)) && r == 0;) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = remove_tree_depth(top >= 0 ? top : fd, fd, de->d_name, depth + 1, moved);
	}
	closedir(d);
	if (r < 0)
		return r;
	/* The root still holds what was moved into it. */
	if (depth == 0 && *moved)
		return 0;
	return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

int io_remove_tree_at(int dirfd, const char *name)
{
	/* Each pass removes at least REMOVE_DEPTH_MAX levels of what it
	 * moved the pass before. */
	for (;;) {
		bool moved = false;
		int r = remove_tree_depth(-1, dirfd, name, 0, &moved);
		if (r < 0 || !moved)
			return r;
	}
}

int io_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	_cleanup_free_ char *tmp = NULL;
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		unsigned long long r;
		if (getentropy(&r, sizeof(r)) < 0)
			return -errno;
		free(tmp);
		tmp = xasprintf("%s.%016llx.tmp", path, r);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	int r = write_all(fd, data, len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
