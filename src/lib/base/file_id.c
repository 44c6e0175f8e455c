/* File identities from stat(2). This file only reads metadata. */
#include "base/file_id.h"

#include <errno.h>
#include <sys/sysmacros.h>

void file_id_from_stat(const struct stat *st, struct file_id *id)
{
	*id = (struct file_id){
	    .dev_major = major(st->st_dev),
	    .dev_minor = minor(st->st_dev),
	    .ino = st->st_ino,
	    .type = st->st_mode & S_IFMT,
	};
}

int file_id_of(const char *path, struct file_id *id)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	file_id_from_stat(&st, id);
	return 0;
}

bool file_id_known(const struct file_id *id)
{
	return id->ino != 0 && id->type != 0;
}
