/* `agent-sandbox stop NAME...|--all [--timeout SECONDS]`: ends running
 * sandboxes by name. Exit status: 0 when every one ended within the grace
 * period (or had ended already), 3 when one needed SIGKILL, 2 for an
 * unknown name or bad arguments (nothing is stopped then), 1 when one
 * could not be stopped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/suggest.h"
#include "base/term_escape.h"
#include "base/xalloc.h"
#include "cli/verbs.h"
#include "workspace/instance.h"

#define STOP_GRACE_DEFAULT_S 10
#define STOP_GRACE_MAX_S 86400
#define EXIT_STOP_KILLED 3

static const char stop_form[] = "agent-sandbox stop NAME...|--all [--timeout SECONDS]";

static int parse_timeout(const char *value, unsigned *out, struct error *err)
{
	char *end = NULL;
	errno = 0;
	long n = value ? strtol(value, &end, 10) : -1;
	if (!value || errno || end == value || *end || n < 0 || n > STOP_GRACE_MAX_S)
		return error_set(err, ERROR_USAGE,
				 "stop --timeout %s: expected a number of seconds from 0 to %d "
				 "(the grace before SIGKILL)",
				 value ? value : "", STOP_GRACE_MAX_S);
	*out = (unsigned)n;
	return 0;
}

/* Another sandbox may still stop: the last failure is the one reported. */
static int keep_error(struct error *err, struct error *from)
{
	error_release(err);
	*err = steal_struct(from);
	return -1;
}

/* Unknown name: say which are running, and the nearest one. */
int cli_unknown_sandbox(const struct instance_list *l, const char *name, struct error *err)
{
	_cleanup_free_ char *shown = term_escape(name);
	error_set(err, ERROR_USAGE, "no running sandbox named \"%s\"", shown);
	if (!l->len) {
		error_hint(err, "no sandbox of yours is running (agent-sandbox list)");
		return -1;
	}
	const char **names = xcalloc(l->len, sizeof(*names));
	_cleanup_strbuf_ struct strbuf running = STRBUF_INIT;
	for (size_t i = 0; i < l->len; i++) {
		names[i] = l->items[i].name;
		if (i)
			strbuf_addstr(&running, ", ");
		term_escape_add(&running, l->items[i].name);
	}
	const char *nearest = suggest_nearest(name, names, l->len);
	_cleanup_free_ char *near = nearest ? term_escape(nearest) : NULL;
	if (near)
		error_hint(err, "did you mean %s? running: %s", near, running.buf);
	else
		error_hint(err, "running: %s", running.buf);
	free(names);
	return -1;
}

int verb_stop(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	bool all = false;
	unsigned grace = STOP_GRACE_DEFAULT_S;
	_cleanup_strv_ struct strv names = STRV_INIT;
	for (char **a = cli->command; *a; a++) {
		if (!strcmp(*a, "--help") || !strcmp(*a, "-h"))
			return verb_help(io, err);
		if (!strcmp(*a, "--all")) {
			all = true;
		} else if (!strcmp(*a, "--timeout")) {
			if (parse_timeout(a[1], &grace, err) < 0)
				return -1;
			if (a[1])
				a++;
		} else if (!strncmp(*a, "--timeout=", 10)) {
			if (parse_timeout(*a + 10, &grace, err) < 0)
				return -1;
		} else if ((*a)[0] == '-') {
			return error_set(err, ERROR_USAGE, "stop: unknown flag \"%s\": %s", *a,
					 stop_form);
		} else {
			if (instance_check_name(*a, err) < 0)
				return error_prefix(err, "stop");
			strv_push(&names, *a);
		}
	}
	if (all == (names.len > 0))
		return error_set(err, ERROR_USAGE, "stop: %s: %s",
				 all ? "--all and names cannot be combined"
				     : "give the name of a sandbox, or --all",
				 stop_form);

	_cleanup_instance_list_ struct instance_list l;
	if (instance_list(envp, &l, err) < 0)
		return -1;
	/* Every name is checked before anything is stopped. */
	for (size_t i = 0; i < names.len; i++)
		if (!instance_find(&l, names.items[i]))
			return cli_unknown_sandbox(&l, names.items[i], err);

	/* All are signalled first and share one grace period: --all with
	 * many sandboxes takes the grace once, not once each. */
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += grace;
	struct instance_stopping *st = xcalloc(l.len ? l.len : 1, sizeof(*st));
	int status = 0;
	for (size_t i = 0; i < l.len; i++) {
		st[i].pidfd = -1;
		st[i].outcome = INSTANCE_GONE;
		if (!all && !strv_contains(&names, l.items[i].name))
			continue;
		_cleanup_error_ struct error serr = ERROR_INIT;
		if (instance_stop_begin(&l.items[i], &st[i], &serr) < 0) {
			st[i].in = NULL;
			status = keep_error(err, &serr);
		}
	}
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < l.len; i++) {
		if (!st[i].in)
			continue;
		_cleanup_error_ struct error serr = ERROR_INIT;
		if (instance_stop_finish(&st[i], &deadline, &serr) < 0) {
			status = keep_error(err, &serr);
			continue;
		}
		if (st[i].outcome == INSTANCE_KILLED && status == 0)
			status = EXIT_STOP_KILLED;
		_cleanup_free_ char *name = term_escape(l.items[i].name);
		strbuf_addf(&out, "%s: %s\n", name,
			    st[i].outcome == INSTANCE_STOPPED ? "stopped"
			    : st[i].outcome == INSTANCE_KILLED
				? "killed (it outlived the grace period)"
				: "had ended already");
	}
	free(st);
	int w = write_all(io->out, out.buf, out.len);
	if (status < 0)
		return -1;
	return w < 0 ? cli_output_error(w, err) : status;
}
