/* `agent-sandbox gc [--older-than 7d] [--dry-run] [--force]`: removes the
 * branch worktrees of every shelf not used for that long, and a shelf with
 * none left. Never one a run holds; never one with uncommitted changes
 * unless --force. Each removal is an audit record. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "audit/writer.h"
#include "base/dirs.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/units.h"
#include "base/xalloc.h"
#include "cli/verbs.h"
#include "config/config.h"

#define GC_DEFAULT_RETENTION "7d"

/* --older-than, else the global config's "retention", else 7 days. */
static int retention(const struct cli *cli, char **envp, unsigned long long *ms, struct error *err)
{
	if (cli->older_than)
		return duration_read(cli->older_than, "--older-than", ms, err);
	_cleanup_free_ char *value = NULL;
	if (config_global_retention(envp, &value, err) < 0)
		return -1;
	if (value)
		return duration_read(value, "\"retention\" in the global config", ms, err);
	return duration_read(GC_DEFAULT_RETENTION, "the default retention", ms, err);
}

static void line(struct strbuf *sb, const char *what, const struct shelf_worktree *w,
		 const char *why)
{
	strbuf_addf(sb, "%s\t", what);
	term_escape_add(sb, w->branch);
	strbuf_addch(sb, '\t');
	term_escape_add(sb, w->path);
	if (why)
		strbuf_addf(sb, " (%s)", why);
	strbuf_addch(sb, '\n');
}

static void shelf_line(struct strbuf *sb, const char *dir, bool removed, bool unpushed)
{
	if (!removed && !unpushed)
		return;
	strbuf_addstr(sb, removed ? "removed\tthe shelf " : "kept\tthe shelf ");
	term_escape_add(sb, dir);
	if (unpushed)
		strbuf_addstr(sb, " (a branch has commits the host lacks: git push host NAME, "
				  "or gc --force)");
	strbuf_addch(sb, '\n');
}

int verb_gc(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	unsigned long long older_ms;
	if (retention(cli, envp, &older_ms, err) < 0)
		return -1;
	time_t now = time(NULL);
	_cleanup_audit_ struct audit audit = {.fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
	if (!cli->dry_run) {
		_cleanup_free_ char *state = NULL;
		if (dirs_state_required(envp, &state, err) < 0 ||
		    audit_open(&audit, state, err) < 0)
			return error_prefix(err, "gc");
	}
	_cleanup_strv_ struct strv shelves = STRV_INIT;
	shelf_list_all(envp, &shelves);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int status = 0;
	for (size_t s = 0; s < shelves.len; s++) {
		struct shelf_worktree *items = NULL;
		size_t len = 0;
		_cleanup_error_ struct error werr = ERROR_INIT;
		if (shelf_worktrees(shelves.items[s], &items, &len, &werr) < 0) {
			strbuf_addf(&sb, "error\t%s\n", werr.msg);
			status = 1;
			continue;
		}
		/* A shelf an earlier gc kept for its unpushed commits. */
		if (len == 0 && !cli->dry_run) {
			bool removed = false, unpushed = false;
			_cleanup_error_ struct error ierr = ERROR_INIT;
			if (shelf_remove_if_idle(envp, shelves.items[s], cli->force, &removed,
						 &unpushed, &ierr) < 0) {
				strbuf_addf(&sb, "error\t%s\n", ierr.msg);
				status = 1;
			}
			shelf_line(&sb, shelves.items[s], removed, unpushed);
		}
		for (size_t i = 0; i < len; i++) {
			const struct shelf_worktree *w = &items[i];
			long long age_ms = ((long long)now - (long long)w->last_use) * 1000;
			if (age_ms < 0 || (unsigned long long)age_ms < older_ms)
				continue;
			if (w->in_use) {
				line(&sb, "kept", w, "in use by a running sandbox");
				continue;
			}
			bool dirty = shelf_worktree_dirty(envp, shelves.items[s], w->path);
			if (dirty && !cli->force) {
				line(&sb, "kept", w, "uncommitted changes; --force removes it");
				continue;
			}
			if (cli->dry_run) {
				line(&sb, "would remove", w, dirty ? "uncommitted changes" : NULL);
				continue;
			}
			bool shelf_removed = false, unpushed = false;
			_cleanup_error_ struct error rerr = ERROR_INIT;
			if (shelf_remove_worktree(envp, shelves.items[s], w->path, cli->force,
						  &shelf_removed, &unpushed, &rerr) < 0) {
				line(&sb, "kept", w, rerr.msg);
				status = 1;
				continue;
			}
			audit_gc_removal(&audit, w->path, w->branch, (long long)w->last_use, dirty,
					 shelf_removed);
			line(&sb, "removed", w, dirty ? "uncommitted changes, --force" : NULL);
			if (unpushed) {
				strbuf_addstr(&sb, "kept\tthe shelf ");
				term_escape_add(&sb, shelves.items[s]);
				strbuf_addstr(&sb,
					      " (a branch has commits the host lacks: git push "
					      "host NAME, or gc --force)\n");
			}
			if (shelf_removed) {
				strbuf_addstr(&sb, "removed\tthe shelf ");
				term_escape_add(&sb, shelves.items[s]);
				strbuf_addch(&sb, '\n');
			}
		}
		shelf_worktrees_release(items, len);
	}
	int r = write_all(io->out, sb.buf, sb.len);
	if (r < 0)
		return cli_output_error(r, err);
	return status;
}
