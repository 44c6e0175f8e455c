/* This file prints the audit log for people (a table) or for programs (the
 * JSON lines as stored). It only reads the log; a line that is not a JSON
 * object is shown as such rather than skipped. */
#include "audit_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cleanup.h"
#include "io.h"
#include "strbuf.h"
#include "strv.h"
#include "xalloc.h"

static const char *field(struct json_object *r, const char *key)
{
	struct json_object *v = NULL;
	if (!json_object_object_get_ex(r, key, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

static bool is_denial(struct json_object *r)
{
	const char *event = field(r, "event");
	const char *decision = field(r, "decision");
	return event && (!strcmp(event, "blocked") || !strcmp(event, "quarantine") ||
			 (!strcmp(event, "network") && decision && !strcmp(decision, "refused")));
}

/* One row per record: control characters (a host name as a client sent it,
 * say) would break it. */
static void add_text(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++)
		strbuf_addch(sb, (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
}

static void add_network(struct strbuf *sb, struct json_object *r)
{
	const char *decision = field(r, "decision");
	add_text(sb, decision ? decision : "?");
	strbuf_addch(sb, ' ');
	add_text(sb, field(r, "protocol"));
	strbuf_addch(sb, ' ');
	add_text(sb, field(r, "host"));
	strbuf_addch(sb, ':');
	add_text(sb, field(r, "port"));
	if (field(r, "address")) {
		strbuf_addstr(sb, " (");
		add_text(sb, field(r, "address"));
		strbuf_addch(sb, ')');
	}
	if (field(r, "bytes_out"))
		strbuf_addf(sb, ", %s bytes out, %s in, %s ms", field(r, "bytes_out"),
			    field(r, "bytes_in") ? field(r, "bytes_in") : "?",
			    field(r, "duration_ms") ? field(r, "duration_ms") : "?");
	if (field(r, "reason")) {
		strbuf_addstr(sb, ": ");
		add_text(sb, field(r, "reason"));
	}
}

static void add_joined(struct strbuf *sb, struct json_object *r, const char *key)
{
	struct json_object *arr = NULL;
	if (!json_object_object_get_ex(r, key, &arr) || !json_object_is_type(arr, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		if (i)
			strbuf_addch(sb, ' ');
		add_text(sb, json_object_get_string(json_object_array_get_idx(arr, i)));
	}
}

static void add_row(struct strbuf *sb, struct json_object *r)
{
	const char *event = field(r, "event");
	const char *session = field(r, "session");
	strbuf_addf(sb, "%-24s  %-8.8s  %-7s  ", field(r, "time") ? field(r, "time") : "?",
		    session ? session : "?", event ? event : "?");
	if (event && !strcmp(event, "start")) {
		add_joined(sb, r, "command");
		strbuf_addf(sb, " (in %s; %s secret files masked; env dropped: ",
			    field(r, "cwd") ? field(r, "cwd") : "?",
			    field(r, "secrets_masked") ? field(r, "secrets_masked") : "0");
		struct json_object *d = NULL;
		if (json_object_object_get_ex(r, "env_dropped", &d) &&
		    json_object_array_length(d) > 0)
			add_joined(sb, r, "env_dropped");
		else
			strbuf_addstr(sb, "none");
		strbuf_addch(sb, ')');
	} else if (event && !strcmp(event, "end")) {
		strbuf_addf(sb, "exit status %s after %s ms",
			    field(r, "status") ? field(r, "status") : "?",
			    field(r, "duration_ms") ? field(r, "duration_ms") : "?");
		if (field(r, "error"))
			strbuf_addf(sb, ": %s", field(r, "error"));
		if (field(r, "blocked_dropped"))
			strbuf_addf(sb, "; %s blocked reports over the limit not logged",
				    field(r, "blocked_dropped"));
		if (field(r, "network_dropped"))
			strbuf_addf(sb, "; %s network decisions over the limit not logged",
				    field(r, "network_dropped"));
	} else if (event && !strcmp(event, "blocked")) {
		add_joined(sb, r, "argv");
		strbuf_addstr(sb, ": ");
		add_text(sb, field(r, "reason"));
	} else if (event && !strcmp(event, "network")) {
		add_network(sb, r);
	} else if (event && !strcmp(event, "quarantine")) {
		add_text(sb, field(r, "path"));
		strbuf_addstr(sb, field(r, "moved_to") ? " moved to " : " could not be moved: ");
		add_text(sb, field(r, "moved_to") ? field(r, "moved_to") : field(r, "error"));
		strbuf_addstr(sb, " (");
		add_text(sb, field(r, "rule"));
		strbuf_addch(sb, ')');
	}
	strbuf_addch(sb, '\n');
}

int audit_log_print(const char *dir, const struct audit_log_query *q, int out, struct error *err)
{
	_cleanup_free_ char *path = xasprintf("%s/audit.jsonl", dir);
	FILE *f = fopen(path, "re");
	if (!f && errno == ENOENT) {
		_cleanup_free_ char *msg = xasprintf("no audit records yet (%s)\n", path);
		write_str(out, msg);
		return 0;
	}
	if (!f)
		return error_errno(err, EXIT_SETUP, errno, "reading %s", path);

	_cleanup_strv_ struct strv lines = STRV_INIT;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (q->blocked) {
			struct json_object *r = json_tokener_parse(line);
			bool keep = r && is_denial(r);
			json_object_put(r);
			if (!keep)
				continue;
		}
		strv_push(&lines, line);
	}
	free(line);
	fclose(f);

	size_t first = 0;
	if (q->limit >= 0 && lines.len > (size_t)q->limit)
		first = lines.len - (size_t)q->limit;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (!q->json)
		strbuf_addf(&sb, "%-24s  %-8s  %-7s  %s\n", "TIME", "SESSION", "EVENT", "DETAILS");
	for (size_t i = first; i < lines.len; i++) {
		if (q->json) {
			strbuf_addf(&sb, "%s\n", lines.items[i]);
			continue;
		}
		struct json_object *r = json_tokener_parse(lines.items[i]);
		if (json_object_is_type(r, json_type_object))
			add_row(&sb, r);
		else
			strbuf_addf(&sb, "(not a JSON record: %.60s)\n", lines.items[i]);
		json_object_put(r);
	}
	return write_all(out, sb.buf, sb.len) < 0 ? error_errno(err, EXIT_SETUP, EIO, "writing")
						  : 0;
}
