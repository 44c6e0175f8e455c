/* The identity of a host file (device and inode, and its type), taken when
 * a decision is made about it, so that what is mounted later can be
 * compared with what was decided on. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* A bind mount keeps its source's device and inode, in every namespace.
 * All zero means unknown (a dry run, a test). */
struct file_id {
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	uint32_t type; /* S_IFMT bits */
};

void file_id_from_stat(const struct stat *st, struct file_id *id);
/* stat(2) of path (following symlinks). Returns 0 or -errno. */
int file_id_of(const char *path, struct file_id *id);
bool file_id_known(const struct file_id *id);
