/* Scope-bound cleanup: variables marked with these attributes release their
 * resource on every path out of the block. Ownership leaves a variable only
 * through steal_ptr()/steal_fd(), so a transfer is always visible. */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* free() and close() take any pointer and a plain int, so their helpers are
 * written out: a generated free helper would take void ** and reject a
 * char ** variable. */
static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define _cleanup_(f) __attribute__((cleanup(f)))

/* DEFINE_CLEANUP_FUNC(struct strbuf, strbuf_release) generates
 * strbuf_releasep(), for a value whose release function takes its address
 * and leaves it safe to release again. */
#define DEFINE_CLEANUP_FUNC(type, func)                                                            \
	static inline void func##p(type *p)                                                        \
	{                                                                                          \
		func(p);                                                                           \
	}

/* DEFINE_CLEANUP_PTR_FUNC(struct json_tokener *, json_tokener_free)
 * generates json_tokener_freep(), for a pointer released by a function that
 * takes the pointer itself; a NULL pointer is left alone. */
#define DEFINE_CLEANUP_PTR_FUNC(type, func)                                                        \
	static inline void func##p(type *p)                                                        \
	{                                                                                          \
		if (*p)                                                                            \
			func(*p);                                                                  \
	}

#define _cleanup_free_ _cleanup_(cleanup_freep)
#define _cleanup_close_ _cleanup_(cleanup_closep)

#define steal_ptr(pp)                                                                              \
	({                                                                                         \
		__typeof__(*(pp)) stolen_ = *(pp);                                                 \
		*(pp) = NULL;                                                                      \
		stolen_;                                                                           \
	})

/* The same for a struct released by a DEFINE_CLEANUP_FUNC helper: the
 * variable is left zeroed, which its release function treats as empty. */
#define steal_struct(pp)                                                                           \
	({                                                                                         \
		__typeof__(*(pp)) stolen_ = *(pp);                                                 \
		*(pp) = (__typeof__(*(pp))){0};                                                    \
		stolen_;                                                                           \
	})

static inline int steal_fd(int *fd)
{
	int stolen = *fd;
	*fd = -1;
	return stolen;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
