/* `agent-sandbox list [--json]`: the running sandboxes of this user, from
 * their records. Every string in a record is escaped before it reaches the
 * terminal: a sandbox chooses its command's arguments and, through its
 * working directory, parts of the paths. */
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/term_escape.h"
#include "base/xalloc.h"
#include "cli/verbs.h"
#include "workspace/instance.h"

enum { COL_NAME, COL_PID, COL_PROJECT, COL_BRANCH, COL_WORKDIR, COL_NETWORK, COL_AGE, COLS };

static const char *const headers[COLS] = {"NAME",    "PID",	"PROJECT", "BRANCH",
					  "WORKDIR", "NETWORK", "AGE"};

static char *age(long long started, time_t now)
{
	long long s = now > started ? (long long)now - started : 0;
	if (s < 120)
		return xasprintf("%llds", s);
	if (s < 2 * 3600)
		return xasprintf("%lldm", s / 60);
	if (s < 2 * 86400)
		return xasprintf("%lldh", s / 3600);
	return xasprintf("%lldd", s / 86400);
}

static char *command_text(const struct strv *cmd)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < cmd->len; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		term_escape_add(&sb, cmd->items[i]);
	}
	return strbuf_detach(&sb);
}

static void format_table(const struct instance_list *l, struct strbuf *out)
{
	time_t now = time(NULL);
	char *(*cells)[COLS] = xcalloc(l->len, sizeof(*cells));
	size_t width[COLS];
	for (int c = 0; c < COLS; c++)
		width[c] = strlen(headers[c]);
	for (size_t i = 0; i < l->len; i++) {
		const struct instance *in = &l->items[i];
		cells[i][COL_NAME] = term_escape(in->name);
		cells[i][COL_PID] = xasprintf("%d", (int)in->pid);
		cells[i][COL_PROJECT] = term_escape(in->project ? in->project : "-");
		cells[i][COL_BRANCH] = term_escape(in->branch ? in->branch : "-");
		cells[i][COL_WORKDIR] = term_escape(in->workdir ? in->workdir : "-");
		cells[i][COL_NETWORK] = term_escape(in->network ? in->network : "-");
		cells[i][COL_AGE] = age(in->started, now);
		for (int c = 0; c < COLS; c++)
			if (strlen(cells[i][c]) > width[c])
				width[c] = strlen(cells[i][c]);
	}
	for (size_t i = 0; i <= l->len; i++) {
		for (int c = 0; c < COLS; c++) {
			const char *cell = i == 0 ? headers[c] : cells[i - 1][c];
			strbuf_addf(out, "%-*s  ", (int)width[c], cell);
		}
		if (i == 0) {
			strbuf_addstr(out, "COMMAND\n");
			continue;
		}
		_cleanup_free_ char *cmd = command_text(&l->items[i - 1].command);
		strbuf_addf(out, "%s\n", cmd);
		for (int c = 0; c < COLS; c++)
			free(cells[i - 1][c]);
	}
	free(cells);
}

int verb_list(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	bool json = false;
	for (char **a = cli->command; *a; a++) {
		if (!strcmp(*a, "--help") || !strcmp(*a, "-h"))
			return verb_help(io, err);
		if (strcmp(*a, "--json"))
			return error_set(err, ERROR_USAGE,
					 "list takes only --json, not \"%s\": agent-sandbox list "
					 "[--json]",
					 *a);
		json = true;
	}
	_cleanup_instance_list_ struct instance_list l;
	if (instance_list(envp, &l, err) < 0)
		return -1;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (json) {
		_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
		instance_list_json(&l, &raw);
		/* Escaped for the terminal, and still the same JSON. */
		term_escape_mode_add(&sb, raw.buf, raw.len, TERM_ESCAPE_JSON);
		strbuf_addch(&sb, '\n');
	} else if (l.len) {
		format_table(&l, &sb);
	}
	int r = write_all(io->out, sb.buf, sb.len);
	return r < 0 ? cli_output_error(r, err) : 0;
}
