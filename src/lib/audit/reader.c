/* This file prints the audit log for people (a table) or for programs (the
 * JSON lines as stored). It only reads the log; a line that is not a JSON
 * object is shown as such rather than skipped. Every field was written
 * from what the sandbox did or sent (commands, paths, host names), so each
 * is escaped for the terminal: in the table by term_escape, in --json as
 * JSON escapes, which keeps the line valid JSON with the same meaning. */
#include "audit/reader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

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
			 !strcmp(event, "secret_read") || !strcmp(event, "secret_watch") ||
			 (!strcmp(event, "network") && decision && !strcmp(decision, "refused")));
}

/* One row per record: a field (a host name as a client sent it, say) may
 * hold anything. A missing field adds nothing. */
static void add_text(struct strbuf *sb, const char *s)
{
	if (s)
		term_escape_add(sb, s);
}

/* A field or "?" (or "0"), escaped: for the fixed-width columns. */
static char *field_text(struct json_object *r, const char *key, const char *missing)
{
	const char *v = field(r, key);
	return term_escape(v ? v : missing);
}

/* An allowed connection with a reason is one that failed after the
 * decision (the name did not resolve, the host did not answer): the row
 * starts with "failed", never with "allowed", and names the entry that
 * allowed it ("failed connect api.example.com:443 (allowed by --allow-host):
 * cannot resolve ..."). Records from before "outcome" was written say the
 * same through their reason. */
static void add_network(struct strbuf *sb, struct json_object *r)
{
	const char *decision = field(r, "decision");
	bool allowed = decision && !strcmp(decision, "allowed");
	bool failed = allowed && field(r, "reason");
	add_text(sb, failed ? "failed" : decision ? decision : "?");
	strbuf_addch(sb, ' ');
	add_text(sb, field(r, "protocol"));
	strbuf_addch(sb, ' ');
	add_text(sb, field(r, "host"));
	strbuf_addch(sb, ':');
	add_text(sb, field(r, "port"));
	if (allowed) {
		strbuf_addstr(sb, " (allowed by ");
		add_text(sb, field(r, "allowed_by") ? field(r, "allowed_by") : "the policy");
		strbuf_addch(sb, ')');
	}
	if (field(r, "address")) {
		strbuf_addstr(sb, " (");
		add_text(sb, field(r, "address"));
		strbuf_addch(sb, ')');
	}
	if (field(r, "reason")) {
		strbuf_addstr(sb, ": ");
		add_text(sb, field(r, "reason"));
	}
	if (field(r, "bytes_out")) {
		_cleanup_free_ char *out = field_text(r, "bytes_out", "?");
		_cleanup_free_ char *in = field_text(r, "bytes_in", "?");
		_cleanup_free_ char *ms = field_text(r, "duration_ms", "?");
		strbuf_addf(sb, "%s%s bytes out, %s in, %s ms", failed ? "; " : ", ", out, in, ms);
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
	_cleanup_free_ char *time = field_text(r, "time", "?");
	_cleanup_free_ char *session = field_text(r, "session", "?");
	_cleanup_free_ char *shown_event = field_text(r, "event", "?");
	strbuf_addf(sb, "%-24s  %-8.8s  %-7s  ", time, session, shown_event);
	if (event && !strcmp(event, "start")) {
		add_joined(sb, r, "command");
		_cleanup_free_ char *cwd = field_text(r, "cwd", "?");
		_cleanup_free_ char *masked = field_text(r, "secrets_masked", "0");
		strbuf_addf(sb, " (in %s; %s secret files masked; env dropped: ", cwd, masked);
		struct json_object *d = NULL;
		if (json_object_object_get_ex(r, "env_dropped", &d) &&
		    json_object_array_length(d) > 0)
			add_joined(sb, r, "env_dropped");
		else
			strbuf_addstr(sb, "none");
		strbuf_addch(sb, ')');
	} else if (event && !strcmp(event, "end")) {
		_cleanup_free_ char *status = field_text(r, "status", "?");
		_cleanup_free_ char *ms = field_text(r, "duration_ms", "?");
		strbuf_addf(sb, "exit status %s after %s ms", status, ms);
		if (field(r, "error")) {
			strbuf_addstr(sb, ": ");
			add_text(sb, field(r, "error"));
		}
		if (field(r, "blocked_dropped")) {
			strbuf_addstr(sb, "; ");
			add_text(sb, field(r, "blocked_dropped"));
			strbuf_addstr(sb, " blocked reports over the limit not logged");
		}
		if (field(r, "network_dropped")) {
			strbuf_addstr(sb, "; ");
			add_text(sb, field(r, "network_dropped"));
			strbuf_addstr(sb, " network decisions over the limit not logged");
		}
	} else if (event && !strcmp(event, "blocked")) {
		add_joined(sb, r, "argv");
		strbuf_addstr(sb, ": ");
		add_text(sb, field(r, "reason"));
	} else if (event && !strcmp(event, "network")) {
		add_network(sb, r);
	} else if (event && !strcmp(event, "secret_read")) {
		add_text(sb, field(r, "path"));
		_cleanup_free_ char *count = field_text(r, "count", "?");
		strbuf_addf(sb, " opened %s time%s (masked: ", count,
			    strcmp(count, "1") ? "s" : "");
		add_text(sb, field(r, "pattern"));
		strbuf_addstr(sb, " by ");
		add_text(sb, field(r, "rule"));
		strbuf_addch(sb, ')');
	} else if (event && !strcmp(event, "secret_watch")) {
		strbuf_addstr(sb, "reads of masked files not all reported: ");
		add_text(sb, field(r, "reason"));
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

int audit_log_format(const char *dir, const struct audit_log_query *q, struct strbuf *sb,
		     struct error *err)
{
	_cleanup_free_ char *path = xasprintf("%s/audit.jsonl", dir);
	FILE *f = fopen(path, "re");
	if (!f && errno == ENOENT) {
		strbuf_addstr(sb, "no audit records yet (");
		term_escape_add(sb, path);
		strbuf_addstr(sb, ")\n");
		return 0;
	}
	if (!f)
		return error_errno(err, ERROR_SETUP, errno, "reading %s", path);

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
	if (!q->json)
		strbuf_addf(sb, "%-24s  %-8s  %-7s  %s\n", "TIME", "SESSION", "EVENT", "DETAILS");
	for (size_t i = first; i < lines.len; i++) {
		if (q->json) {
			const char *line_text = lines.items[i];
			term_escape_mode_add(sb, line_text, strlen(line_text), TERM_ESCAPE_JSON);
			strbuf_addch(sb, '\n');
			continue;
		}
		struct json_object *r = json_tokener_parse(lines.items[i]);
		if (json_object_is_type(r, json_type_object)) {
			add_row(sb, r);
		} else {
			strbuf_addstr(sb, "(not a JSON record: ");
			term_escape_mode_add(sb, lines.items[i], strnlen(lines.items[i], 60),
					     TERM_ESCAPE_STRING);
			strbuf_addstr(sb, ")\n");
		}
		json_object_put(r);
	}
	return 0;
}
