/* This file creates agent-sandbox's runtime directory and the empty file in
 * it. Both are checked before use: a directory or file that someone else
 * owns, that is a symlink, or that others can write to is refused, since
 * whatever is there gets mounted into sandboxes. */
#include "sandbox/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/xalloc.h"

static int ensure_private_dir(const char *path, struct error *err)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return error_errno(err, ERROR_SETUP, errno, "creating %s", path);
	struct stat st;
	if (lstat(path, &st) < 0)
		return error_errno(err, ERROR_SETUP, errno, "checking %s", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return error_set(err, ERROR_SETUP,
				 "refusing to use %s: it must be a directory owned by uid %u with "
				 "mode 0700",
				 path, (unsigned)geteuid());
	return 0;
}

static bool is_usable_runtime_dir(const char *dir)
{
	struct stat st;
	return dir && dir[0] == '/' && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	       st.st_uid == geteuid() && !(st.st_mode & 077);
}

char *rundir_base(const char *xdg_runtime_dir)
{
	return is_usable_runtime_dir(xdg_runtime_dir)
		   ? xasprintf("%s/agent-sandbox", xdg_runtime_dir)
		   : xasprintf("/tmp/agent-sandbox-%u", (unsigned)geteuid());
}

int rundir_prepare(const char *xdg_runtime_dir, char **out, struct error *err)
{
	*out = rundir_base(xdg_runtime_dir);
	return ensure_private_dir(*out, err);
}

int rundir_empty_file(const char *xdg_runtime_dir, char **out, struct error *err)
{
	_cleanup_free_ char *dir = NULL;
	if (rundir_prepare(xdg_runtime_dir, &dir, err) < 0)
		return -1;

	_cleanup_free_ char *path = xasprintf("%s/empty", dir);
	for (int attempt = 0; attempt < 2; attempt++) {
		_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			struct stat st;
			if (fstat(fd, &st) < 0)
				return error_errno(err, ERROR_SETUP, errno, "checking %s", path);
			if (S_ISREG(st.st_mode) && st.st_size == 0 && st.st_uid == geteuid() &&
			    !(st.st_mode & 0222)) {
				*out = steal_ptr(&path);
				return 0;
			}
			if (unlink(path) < 0)
				return error_errno(err, ERROR_SETUP, errno, "replacing %s", path);
		} else if (errno != ENOENT && errno != ELOOP) {
			return error_errno(err, ERROR_SETUP, errno, "opening %s", path);
		} else if (errno == ELOOP && unlink(path) < 0) {
			return error_errno(err, ERROR_SETUP, errno, "replacing %s", path);
		}
		_cleanup_close_ int created =
		    open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (created < 0 && errno != EEXIST)
			return error_errno(err, ERROR_SETUP, errno, "creating %s", path);
	}
	return error_set(err, ERROR_SETUP, "cannot create an empty file at %s", path);
}

static int private_dir(const char *xdg_runtime_dir, const char *prefix, char **out,
		       struct error *err)
{
	_cleanup_free_ char *dir = NULL;
	if (rundir_prepare(xdg_runtime_dir, &dir, err) < 0)
		return -1;
	_cleanup_free_ char *made = xasprintf("%s/%s-XXXXXX", dir, prefix);
	if (!mkdtemp(made))
		return error_errno(err, ERROR_SETUP, errno, "creating a directory in %s", dir);
	*out = steal_ptr(&made);
	return 0;
}

int rundir_net_dir(const char *xdg_runtime_dir, char **out, struct error *err)
{
	return private_dir(xdg_runtime_dir, "net", out, err);
}

int rundir_copies_dir(const char *xdg_runtime_dir, char **out, struct error *err)
{
	return private_dir(xdg_runtime_dir, "copies", out, err);
}

int rundir_masked_dir(const char *xdg_runtime_dir, char **out, struct error *err)
{
	return private_dir(xdg_runtime_dir, "masked", out, err);
}
