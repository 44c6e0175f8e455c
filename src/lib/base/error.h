/* Errors travel outward as values: each layer adds its context in front
 * ("loading config from X: 3:14: ..."), and only the top level prints. */
#pragma once

/* Exit statuses of agent-sandbox itself (the sandboxed command's own status
 * is passed through unchanged). */
enum {
	EXIT_SETUP = 1, /* bwrap missing, kernel refuses namespaces, ... */
	EXIT_USAGE = 2, /* bad flags, bad config, refused policy */
	EXIT_INTERRUPTED = 130,
};

struct error {
	int code;   /* exit status to use; 0 when no error is set */
	char *msg;  /* what failed and why, with context */
	char *hint; /* how to fix it, or NULL */
	/* Lines printed under the message (a list), each escaped when it was
	 * added so that no outside string in it can start another, joined
	 * by '\n'; NULL when there are none. */
	char *lines;
};

#define ERROR_INIT                                                                                 \
	{                                                                                          \
		.code = 0, .msg = NULL, .hint = NULL, .lines = NULL                                \
	}

/* All return -1 so that callers can write `return error_set(...)`. */
int error_set(struct error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends ": strerror(errnum)". */
int error_errno(struct error *err, int code, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Puts "<context>: " in front of the message. */
int error_prefix(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_hint(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a line under the message. Messages are one line: the printer
 * escapes a '\n' in them, as it may come from a file name; a list that
 * belongs under the message goes here, one item per call. */
void error_add_line(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_release(struct error *err);

static inline void cleanup_errorp(struct error *err)
{
	error_release(err);
}
#define _cleanup_error_ __attribute__((cleanup(cleanup_errorp)))
