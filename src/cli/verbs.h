/* One function per verb, each in its own file; main.c picks one. Every
 * verb returns an exit status, or -1 with err set. */
#pragma once

#include "base/error.h"
#include "cli/flags.h"
#include "spec/spec.h"
#include "workspace/instance.h"
#include "workspace/shelf.h"

struct cli_io {
	int in, out, err;
};

/* The command line as a request to the library: flags become the topmost
 * config layer. */
void cli_request(const struct cli *cli, char *const *envp, struct sandbox_request *req);

/* For a write to the caller's stdout that failed (-errno): an error. */
int cli_output_error(int r, struct error *err);

/* Branch mode for a run, policy or checkout: the shelf, and the branch's
 * worktree, provisioned (and for a run, held) when provision is set, else
 * only looked up (NULL worktree when it does not exist yet, which is said
 * on err_fd). With req, points the request at the worktree. */
struct cli_branch {
	struct shelf shelf;
	char *worktree;
	int hold; /* shelf_hold's descriptor, or -1 */
};
int cli_branch_prepare(const struct cli *cli, char *const *envp, bool provision,
		       struct cli_branch *b, struct sandbox_request *req, int err_fd,
		       struct error *err);
void cli_branch_release(struct cli_branch *b);
DEFINE_CLEANUP_FUNC(struct cli_branch, cli_branch_release)
#define _cleanup_cli_branch_ _cleanup_(cli_branch_releasep)

int verb_checkout(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_branches(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_serve(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_rpc(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_mcp_bridge(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_gc(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_run(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_policy(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_log(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_trust(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_list(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_exec_into(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
/* No running sandbox has that name: says which do, and the nearest. */
int cli_unknown_sandbox(const struct instance_list *l, const char *name, struct error *err);
int verb_stop(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_check(const struct cli_io *io, struct error *err);
int verb_version(const struct cli_io *io, struct error *err);
int verb_help(const struct cli_io *io, struct error *err);
