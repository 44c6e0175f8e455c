/* Whole-buffer reads and writes that survive EINTR and partial transfers. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Returns 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);
int write_str(int fd, const char *s);

/* Reads a regular file of at most max bytes into a NUL-terminated buffer.
 * Returns 0, or -errno (-EFBIG when larger than max, -EINVAL when it is not
 * a regular file). Never blocks on a FIFO. */
int read_file(const char *path, size_t max, char **out, size_t *len);

/* The same for a file already open, read from its current offset. */
int read_fd(int fd, size_t max, char **out, size_t *len);

/* Calls fn with each entry of dir but "." and ".." (in directory order),
 * as dir/name and name; a directory that cannot be opened has none. */
void io_each_entry(const char *dir, void (*fn)(const char *path, const char *name, void *data),
		   void *data);

/* Closes an inotify (or other slow-to-close) descriptor without waiting:
 * the kernel retires an inotify instance's watches after a grace period
 * that close() and exit() wait for (10 to 30 ms, on the way out of every
 * run). A child holding the last reference closes it after the caller has
 * dropped its own, so neither waits. Falls back to close(). */
void io_close_later(int fd);

/* Removes name beneath dirfd and everything in it, never following a
 * symlink (one planted inside is unlinked, not entered). Returns 0 (also
 * when name does not exist) or -errno. */
int io_remove_tree_at(int dirfd, const char *name);

/* Writes path whole or not at all: a new file beside it (mode, O_EXCL,
 * never through a symlink) renamed over it. Returns 0 or -errno. */
int io_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
