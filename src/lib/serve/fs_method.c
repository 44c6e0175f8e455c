/* The daemon's side of the file methods: finds the caller's session, hands its
 * workspace descriptor and plan to serve/fs.c, and writes an audit record
 * for each change asked for (made or refused). Deciding what a path may
 * reach is fs.c's alone. */
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "policy/path.h"
#include "serve/fs.h"
#include "serve/internal.h"

static bool is_change(const char *method)
{
	return !strcmp(method, "fs/write") || !strcmp(method, "fs/remove") ||
	       !strcmp(method, "fs/mkdir");
}

static void audit_change(struct server *srv, const struct session *s, const char *method,
			 const struct serve_fs_root *root, struct json_object *params,
			 struct json_object *result, const struct error *err)
{
	struct json_object *f = json_object_new_object();
	_cleanup_free_ char *path = serve_fs_audit_path(root, params);
	json_object_object_add(f, "method", json_object_new_string(method));
	json_object_object_add(f, "path", path ? json_object_new_string(path) : NULL);
	struct json_object *size;
	if (result && json_object_object_get_ex(result, "size", &size))
		json_object_object_add(f, "size", json_object_get(size));
	if (err) {
		json_object_object_add(f, "refused",
				       json_object_new_string(error_kind_name(err->kind)));
		json_object_object_add(f, "reason", json_object_new_string(err->msg));
	}
	audit_serve(&srv->audit, s->id, "serve_fs", s->owner, f);
}

static int fs_call(const char *method, struct server *srv, struct conn *c,
		   struct json_object *params, struct json_object **result, struct error *err)
{
	const char *id;
	if (rpc_param_string(params, "sessionId", true, &id, err) < 0)
		return -1;
	struct session *s = session_find(srv, c, id, true, err);
	if (!s)
		return -1;
	if (!s->planned || s->workspace_fd < 0)
		return error_set(err, ERROR_NOT_FOUND, "session %s has no workspace yet", id);
	session_touch(s);
	/* The policy is a table of resolved paths: the workspace's own, as
	 * the descriptor names it now. */
	_cleanup_free_ char *proc = xasprintf("/proc/self/fd/%d", s->workspace_fd);
	_cleanup_free_ char *host = NULL;
	int r = path_read_link(proc, &host);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "resolving the workspace %s",
				   s->workspace);
	struct serve_fs_root root = {
	    .dir_fd = s->workspace_fd,
	    .host_path = host,
	    .inside_path = s->workspace,
	    .spec = &s->spec,
	};
	r = serve_fs_call(&root, method, params, result, err);
	if (is_change(method))
		audit_change(srv, s, method, &root, params, r == 0 ? *result : NULL,
			     r < 0 ? err : NULL);
	return r;
}

#define FS_METHOD(fn, name)                                                                        \
	int fn(struct server *srv, struct conn *c, struct json_object *params,                     \
	       struct pending **pending, struct json_object **result, struct error *err)           \
	{                                                                                          \
		return fs_call(name, srv, c, params, result, err);                                 \
	}

FS_METHOD(fs_read_method, "fs/read")
FS_METHOD(fs_write_method, "fs/write")
FS_METHOD(fs_list_method, "fs/list")
FS_METHOD(fs_stat_method, "fs/stat")
FS_METHOD(fs_remove_method, "fs/remove")
FS_METHOD(fs_mkdir_method, "fs/mkdir")
