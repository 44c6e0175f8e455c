/* One handler for the process: agent-sandbox is one front end at a time
 * (the command line, or later the daemon's loop), as in crun's
 * libcrun_set_output_handler. */
#include "base/output.h"

#include <stdarg.h>
#include <stdlib.h>

#include "base/xalloc.h"

static output_handler_fn handler;
static void *handler_arg;
static bool debug_wanted;

void output_set_handler(output_handler_fn fn, void *arg, bool debug)
{
	handler = fn;
	handler_arg = arg;
	debug_wanted = debug;
}

bool output_debug_enabled(void)
{
	return handler && debug_wanted;
}

__attribute__((format(printf, 2, 0))) static void emit(enum output_level level, const char *fmt,
						       va_list ap)
{
	char *msg = xvasprintf(fmt, ap);
	handler(handler_arg, level, msg);
	free(msg);
}

void output_debug(const char *fmt, ...)
{
	if (!output_debug_enabled())
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(OUTPUT_DEBUG, fmt, ap);
	va_end(ap);
}

void output_note(const char *fmt, ...)
{
	if (!handler)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(OUTPUT_NOTE, fmt, ap);
	va_end(ap);
}
