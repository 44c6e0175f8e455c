/* Errors travel outward as values: each layer adds its context in front
 * ("loading config from X: 3:14: ..."), and only the top level prints. */
#pragma once

/* Exit statuses of agent-sandbox itself (the sandboxed command's own status
 * is passed through unchanged). The command line maps an error's kind to
 * one of them; the init inside exits with them. */
enum {
	EXIT_SETUP = 1, /* bwrap missing, kernel refuses namespaces, ... */
	EXIT_USAGE = 2, /* bad flags, bad config, refused policy */
	EXIT_INTERRUPTED = 130,
};

/* What kind of failure an error is: the command line turns it into an exit
 * status, the daemon into a JSON-RPC error code. */
enum error_kind {
	ERROR_NONE = 0,
	ERROR_USAGE,	/* a flag or argument the user gave is wrong */
	ERROR_CONFIG,	/* a config file or rule is malformed */
	ERROR_DENIED,	/* the request is well-formed but the policy refuses it */
	ERROR_SETUP,	/* the host cannot do it: bwrap missing, kernel refuses, I/O */
	ERROR_INTERNAL, /* a bug: a state the code should never reach */
	ERROR_EXEC,	/* the command itself could not be started (127 or 126) */
	/* For the daemon's callers (serve/): each has its own JSON-RPC code. */
	ERROR_NOT_FOUND, /* no session, process or file of that name */
	ERROR_LIMIT,	 /* a limit was reached: sessions, processes, sizes */
	ERROR_BUSY,	 /* overloaded: try again later */
	ERROR_POLICY,	 /* the policy refuses it (a loosening not allowed) */
};

/* The kind's name, as the daemon's errors carry it ("usage", "denied"). */
const char *error_kind_name(enum error_kind kind);

struct error {
	enum error_kind kind; /* ERROR_NONE when no error is set */
	int errnum;	      /* the errno behind it, or 0 */
	char *msg;	      /* what failed and why, with context */
	char *hint;	      /* how to fix it, or NULL */
	/* Lines printed under the message (a list), each escaped when it was
	 * added so that no outside string in it can start another, joined
	 * by '\n'; NULL when there are none. */
	char *lines;
};

#define ERROR_INIT                                                                                 \
	{                                                                                          \
		.kind = ERROR_NONE, .errnum = 0, .msg = NULL, .hint = NULL, .lines = NULL          \
	}

/* All return -1 so that callers can write `return error_set(...)`. */
int error_set(struct error *err, enum error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends ": strerror(errnum)" and keeps errnum. */
int error_errno(struct error *err, enum error_kind kind, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Puts "<context>: " in front of the message. */
int error_prefix(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_hint(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a line under the message. Messages are one line: the printer
 * escapes a '\n' in them, as it may come from a file name; a list that
 * belongs under the message goes here, one item per call. */
void error_add_line(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_release(struct error *err);

#include "base/cleanup.h"

DEFINE_CLEANUP_FUNC(struct error, error_release)
#define _cleanup_error_ _cleanup_(error_releasep)
