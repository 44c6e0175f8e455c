/* The library's only way to say something: --debug lines and notes go to
 * a handler the front end installs (the command line writes them to
 * stderr, the daemon will turn them into events). Without a handler they
 * are dropped. Messages are handed over raw; the handler escapes them. */
#pragma once

#include <stdbool.h>

enum output_level {
	OUTPUT_DEBUG, /* what was decided and why: --debug */
	OUTPUT_NOTE,  /* something the user should know even without --debug */
};

typedef void (*output_handler_fn)(void *arg, enum output_level level, const char *msg);

/* debug says whether OUTPUT_DEBUG messages are wanted at all, so that
 * nobody formats a line nobody reads. */
void output_set_handler(output_handler_fn fn, void *arg, bool debug);

bool output_debug_enabled(void);

void output_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void output_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
