/* A growable, always NUL-terminated byte buffer (git's strbuf): no fixed-size
 * path or message buffers anywhere in the program. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "base/cleanup.h"

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT                                                                                \
	{                                                                                          \
		.buf = NULL, .len = 0, .alloc = 0                                                  \
	}

void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_reset(struct strbuf *sb);
/* The contents, "" for an empty buffer; valid until the next change. */
const char *strbuf_str(const struct strbuf *sb);
/* Hands the string to the caller and leaves the buffer empty. */
char *strbuf_detach(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);

DEFINE_CLEANUP_FUNC(struct strbuf, strbuf_release)
#define _cleanup_strbuf_ _cleanup_(strbuf_releasep)
