/* `agent-sandbox branches [--json]`: the worktrees in this repository's
 * shelf, with their last use (the directory's modification time, which
 * every run in it sets at start and end) and whether a run holds one. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"
#include "cli/verbs.h"

static void format_time(time_t t, char *buf, size_t len)
{
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

int verb_branches(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	_cleanup_free_ char *here = getcwd(NULL, 0);
	if (!here)
		return error_errno(err, ERROR_SETUP, errno, "reading the working directory");
	_cleanup_free_ char *dir = !cli->cwd		? xstrdup(here)
				   : cli->cwd[0] == '/' ? xstrdup(cli->cwd)
							: xasprintf("%s/%s", here, cli->cwd);
	_cleanup_shelf_ struct shelf shelf;
	if (shelf_locate(envp, dir, &shelf, err) < 0)
		return error_prefix(err, "branches");
	struct shelf_worktree *items = NULL;
	size_t len = 0;
	if (shelf_worktrees(shelf.dir, &items, &len, err) < 0)
		return error_prefix(err, "branches");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char when[64];
	if (cli->branches_json) {
		struct json_object *array = json_object_new_array();
		for (size_t i = 0; i < len; i++) {
			struct json_object *o = json_object_new_object();
			format_time(items[i].last_use, when, sizeof(when));
			json_object_object_add(o, "branch",
					       json_object_new_string(items[i].branch));
			json_object_object_add(o, "path", json_object_new_string(items[i].path));
			json_object_object_add(o, "last_use", json_object_new_string(when));
			json_object_object_add(o, "in_use",
					       json_object_new_boolean(items[i].in_use));
			json_object_array_add(array, o);
		}
		strbuf_addstr(&sb,
			      json_object_to_json_string_ext(
				  array, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		strbuf_addch(&sb, '\n');
		json_object_put(array);
	} else {
		strbuf_addstr(&sb, "BRANCH\tLAST USE\tIN USE\tWORKTREE\n");
		for (size_t i = 0; i < len; i++) {
			format_time(items[i].last_use, when, sizeof(when));
			/* Branch names and paths come from the shelf: escaped. */
			term_escape_add(&sb, items[i].branch);
			strbuf_addf(&sb, "\t%s\t%s\t", when, items[i].in_use ? "yes" : "no");
			term_escape_add(&sb, items[i].path);
			strbuf_addch(&sb, '\n');
		}
	}
	shelf_worktrees_release(items, len);
	int r = write_all(io->out, sb.buf, sb.len);
	return r < 0 ? cli_output_error(r, err) : 0;
}
