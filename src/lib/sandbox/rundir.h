/* agent-sandbox's private runtime directory on the host. */
#pragma once

#include "base/error.h"

/* Where the runtime directory is: $XDG_RUNTIME_DIR/agent-sandbox, or
 * /tmp/agent-sandbox-UID without a usable runtime directory. Nothing is
 * created or checked. */
char *rundir_base(const char *xdg_runtime_dir);

/* rundir_base(), created when missing and checked: a directory (not a
 * symlink) owned by us with mode 0700, or an error. */
int rundir_prepare(const char *xdg_runtime_dir, char **out, struct error *err);

/* Returns the path of an empty, read-only file owned by us, which the
 * sandbox mounts over excluded files. It lives in $XDG_RUNTIME_DIR/
 * agent-sandbox (or /tmp/agent-sandbox-UID) and is created once. */
int rundir_empty_file(const char *xdg_runtime_dir, char **out, struct error *err);

/* Creates a new private directory for one run's network sockets (mode 0700,
 * in the same place as the empty file). The caller removes it. */
int rundir_net_dir(const char *xdg_runtime_dir, char **out, struct error *err);

/* The same, for one run's copies of files shown in place of the host's
 * (git configs without their credentials). The caller removes it. */
int rundir_copies_dir(const char *xdg_runtime_dir, char **out, struct error *err);

/* The same, for one run's stand-ins of masked files: one empty read-only
 * file each, watched for reads. The caller removes it. */
int rundir_masked_dir(const char *xdg_runtime_dir, char **out, struct error *err);
