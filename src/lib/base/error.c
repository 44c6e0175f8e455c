/* Construction of error values; only the front ends print them. */
#include "base/error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

int error_set(struct error *err, enum error_kind kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	free(err->msg);
	err->msg = msg;
	err->kind = kind;
	err->errnum = 0;
	return -1;
}

int error_errno(struct error *err, enum error_kind kind, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *what = xvasprintf(fmt, ap);
	va_end(ap);
	error_set(err, kind, "%s: %s", what, strerror(errnum));
	err->errnum = errnum;
	free(what);
	return -1;
}

int error_prefix(struct error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *context = xvasprintf(fmt, ap);
	va_end(ap);
	char *msg = xasprintf("%s: %s", context, err->msg ? err->msg : "unknown error");
	free(context);
	free(err->msg);
	err->msg = msg;
	if (err->kind == ERROR_NONE)
		err->kind = ERROR_INTERNAL;
	return -1;
}

void error_hint(struct error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *hint = xvasprintf(fmt, ap);
	va_end(ap);
	free(err->hint);
	err->hint = hint;
}

void error_add_line(struct error *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *line = xvasprintf(fmt, ap);
	va_end(ap);
	struct strbuf sb = STRBUF_INIT;
	if (err->lines) {
		strbuf_addstr(&sb, err->lines);
		strbuf_addch(&sb, '\n');
	}
	term_escape_add(&sb, line);
	free(err->lines);
	err->lines = strbuf_detach(&sb);
}

void error_release(struct error *err)
{
	free(err->msg);
	free(err->hint);
	free(err->lines);
	err->msg = err->hint = err->lines = NULL;
	err->kind = ERROR_NONE;
	err->errnum = 0;
}

const char *error_kind_name(enum error_kind kind)
{
	switch (kind) {
	case ERROR_NONE:
		return "none";
	case ERROR_USAGE:
		return "usage";
	case ERROR_CONFIG:
		return "config";
	case ERROR_DENIED:
		return "denied";
	case ERROR_SETUP:
		return "setup";
	case ERROR_INTERNAL:
		return "internal";
	case ERROR_EXEC:
		return "exec";
	case ERROR_NOT_FOUND:
		return "not_found";
	case ERROR_LIMIT:
		return "limit";
	case ERROR_BUSY:
		return "busy";
	case ERROR_POLICY:
		return "policy";
	}
	return "internal";
}
