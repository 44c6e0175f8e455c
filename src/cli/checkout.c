/* Branch mode on the command line: `agent-sandbox checkout NAME` makes a
 * branch's worktree in the repo shelf and prints its path, and a run or
 * `policy` with --branch goes through the same step (a run provisions and
 * holds the worktree; --dry-run and policy only say what it would make). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"
#include "cli/verbs.h"

void cli_branch_release(struct cli_branch *b)
{
	if (b->hold >= 0)
		shelf_tidy_host_objects(&b->shelf);
	shelf_release_hold(b->hold);
	b->hold = -1;
	shelf_release(&b->shelf);
	free(b->worktree);
	b->worktree = NULL;
}

int cli_branch_prepare(const struct cli *cli, char *const *envp, bool provision,
		       struct cli_branch *b, struct sandbox_request *req, int err_fd,
		       struct error *err)
{
	*b = (struct cli_branch){.hold = -1};
	_cleanup_free_ char *here = getcwd(NULL, 0);
	if (!here)
		return error_errno(err, ERROR_SETUP, errno, "reading the working directory");
	_cleanup_free_ char *dir = !cli->cwd		? xstrdup(here)
				   : cli->cwd[0] == '/' ? xstrdup(cli->cwd)
							: xasprintf("%s/%s", here, cli->cwd);
	if (shelf_locate(envp, dir, &b->shelf, err) < 0)
		return -1;
	if (provision) {
		if (shelf_provision(envp, &b->shelf, cli->branch, cli->from, &b->worktree,
				    req ? &b->hold : NULL, err) < 0)
			return -1;
	} else {
		_cleanup_free_ char *path = shelf_worktree_path(&b->shelf, cli->branch);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			b->worktree = steal_ptr(&path);
		} else {
			/* Nothing is made here: say what a run would make, and
			 * show the policy of the host checkout meanwhile. */
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
			strbuf_addstr(&sb, "agent-sandbox: branch mode: a run would create the "
					   "worktree ");
			term_escape_add(&sb, path);
			strbuf_addstr(&sb, " for branch ");
			term_escape_add(&sb, cli->branch);
			strbuf_addstr(&sb, cli->from ? " from " : "");
			if (cli->from)
				term_escape_add(&sb, cli->from);
			strbuf_addstr(&sb, "; shown here: the policy of the host checkout\n");
			(void)write_all(err_fd, sb.buf, sb.len);
			if (req)
				req->cwd = b->shelf.host_top;
			return 0;
		}
	}
	if (req) {
		req->cwd = b->worktree;
		req->branch = cli->branch;
		req->branch_host_top = b->shelf.host_top;
	}
	return 0;
}

int verb_checkout(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	_cleanup_cli_branch_ struct cli_branch b;
	if (cli_branch_prepare(cli, envp, !cli->dry_run, &b, NULL, io->err, err) < 0)
		return -1;
	if (!b.worktree)
		return 0;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	term_escape_add(&sb, b.worktree);
	strbuf_addch(&sb, '\n');
	int r = write_all(io->out, sb.buf, sb.len);
	return r < 0 ? cli_output_error(r, err) : 0;
}
