/* A growable, NULL-terminated vector of owned strings: argument lists,
 * preset names, file lists. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/cleanup.h"

struct strv {
	char **items;
	size_t len;
	size_t alloc;
};

#define STRV_INIT                                                                                  \
	{                                                                                          \
		.items = NULL, .len = 0, .alloc = 0                                                \
	}

/* Takes ownership of s. */
void strv_push_owned(struct strv *v, char *s);
void strv_push(struct strv *v, const char *s);
void strv_pushf(struct strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strv_extend(struct strv *v, const struct strv *from);
bool strv_contains(const struct strv *v, const char *s);
/* A NULL-terminated array view; valid until the next change. */
char **strv_array(struct strv *v);
void strv_release(struct strv *v);

DEFINE_CLEANUP_FUNC(struct strv, strv_release)
#define _cleanup_strv_ _cleanup_(strv_releasep)
