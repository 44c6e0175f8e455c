/* Construction of error values; printing happens in run.c only. */
#include "base/error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

int error_set(struct error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	free(err->msg);
	err->msg = msg;
	err->code = code;
	return -1;
}

int error_errno(struct error *err, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *what = xvasprintf(fmt, ap);
	va_end(ap);
	error_set(err, code, "%s: %s", what, strerror(errnum));
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
	if (!err->code)
		err->code = EXIT_SETUP;
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
	err->code = 0;
}
