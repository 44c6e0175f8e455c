/* The executor API's file methods (fs/read, fs/write, fs/list, fs/stat,
 * fs/remove, fs/mkdir), run by the daemon on the host for a session's
 * workspace. Every path resolves beneath a descriptor of the workspace and
 * every decision is the session's policy: the methods never reach what the
 * sandbox itself could not read or write. */
#pragma once

#include <json-c/json.h>

#include "base/error.h"
#include "spec/spec.h"

/* The most bytes one fs/read returns or one fs/write takes. */
#define SERVE_FS_IO_MAX (8u << 20)
/* fs/list: the deepest depth, and the most entries before "truncated". */
#define SERVE_FS_DEPTH_MAX 8
#define SERVE_FS_ENTRIES_MAX 10000

struct serve_fs_root {
	int dir_fd;	       /* O_PATH|O_DIRECTORY|O_CLOEXEC descriptor of the workspace (host) */
	const char *host_path; /* the workspace's host path (resolved), for policy lookups */
	const char *inside_path; /* the workspace as the sandbox sees it (absolute paths under it
				    accepted) */
	/* The session's plan: masked secrets, read-only and excluded paths.
	 * NULL: confinement to the workspace only (no policy). */
	const struct sandbox_spec *spec;
};

/* Runs method ("fs/read", ...) with the request's params (borrowed). On
 * success *result is a new object (the result) and 0 is returned. On
 * failure -1 with err set: ERROR_DENIED for a path that escapes the
 * workspace or that the policy masks, excludes or keeps read-only,
 * ERROR_NOT_FOUND for a missing entry, ERROR_USAGE for bad params (named,
 * with the form expected), ERROR_LIMIT for more than SERVE_FS_IO_MAX bytes
 * in one call, ERROR_SETUP for an I/O error. */
int serve_fs_call(const struct serve_fs_root *root, const char *method, struct json_object *params,
		  struct json_object **result, struct error *err);

/* Whether method is one of the above. */
bool serve_fs_is_method(const char *method);

/* The params' path as the workspace-relative path it names ("." for the
 * workspace), for the audit record of a write, remove or mkdir; NULL when
 * it names none (the call then fails with the reason). */
char *serve_fs_audit_path(const struct serve_fs_root *root, struct json_object *params);
