/* libFuzzer target for the executor API's file methods (serve/fs.c) on a
 * real scratch workspace: any params, for any method, either succeed or
 * fail with a message and a kind the API maps, and nothing outside the
 * workspace ever changes (a sibling directory, checked after each call).
 * Input: a method selector byte, then the params as JSON text. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/xalloc.h"
#include "serve/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const methods[] = {"fs/read", "fs/write",  "fs/list",
				      "fs/stat", "fs/remove", "fs/mkdir"};

static char *base, *workspace, *outside;
static int dir_fd = -1;

static void cleanup(void)
{
	(void)io_remove_tree_at(AT_FDCWD, base);
}

static void setup(void)
{
	char template[] = "/tmp/fuzz-serve-fs.XXXXXX";
	if (!mkdtemp(template))
		abort();
	base = xstrdup(template);
	atexit(cleanup);
	workspace = xasprintf("%s/ws", base);
	outside = xasprintf("%s/outside", base);
	_cleanup_free_ char *secret = xasprintf("%s/secret", outside);
	_cleanup_free_ char *up = xasprintf("%s/up", workspace);
	_cleanup_free_ char *out = xasprintf("%s/out", workspace);
	if (mkdir(workspace, 0755) < 0 || mkdir(outside, 0755) < 0 || symlink("..", up) < 0 ||
	    symlink(outside, out) < 0)
		abort();
	FILE *f = fopen(secret, "w");
	if (!f || fputs("x", f) == EOF || fclose(f) != 0)
		abort();
	dir_fd = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		abort();
}

/* outside/ holds exactly its one file, unchanged. */
static void check_outside(void)
{
	_cleanup_free_ char *secret = xasprintf("%s/secret", outside);
	struct stat st, dst;
	if (stat(secret, &st) < 0 || st.st_size != 1 || stat(outside, &dst) < 0 ||
	    dst.st_nlink != 2)
		abort();
	static struct timespec mtime;
	if (!mtime.tv_sec)
		mtime = dst.st_mtim;
	if (dst.st_mtim.tv_sec != mtime.tv_sec || dst.st_mtim.tv_nsec != mtime.tv_nsec)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base)
		setup();
	if (size < 1)
		return 0;
	_cleanup_free_ char *text = xstrndup((const char *)data + 1, size - 1);
	struct json_object *params = json_tokener_parse(text);
	if (!params || !json_object_is_type(params, json_type_object)) {
		json_object_put(params);
		return 0;
	}
	struct serve_fs_root root = {
	    .dir_fd = dir_fd, .host_path = workspace, .inside_path = "/workspace", .spec = NULL};
	struct json_object *result = NULL;
	struct error err = ERROR_INIT;
	int r = serve_fs_call(&root, methods[data[0] % 6], params, &result, &err);
	if (r == 0 && (!result || err.kind != ERROR_NONE))
		abort();
	if (r < 0 &&
	    (result || !err.msg ||
	     (err.kind != ERROR_DENIED && err.kind != ERROR_NOT_FOUND && err.kind != ERROR_USAGE &&
	      err.kind != ERROR_LIMIT && err.kind != ERROR_SETUP)))
		abort();
	json_object_put(result);
	json_object_put(params);
	error_release(&err);
	check_outside();
	return 0;
}
