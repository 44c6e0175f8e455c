/* Name resolution off the event loop. getaddrinfo blocks (for as long as
 * resolv.conf's timeouts and attempts allow, seconds per name server), so a
 * few worker threads call it and report through an eventfd that the proxy's
 * epoll watches. The proxy bounds the wait itself: an answer that comes
 * after its deadline is dropped. */
#pragma once

#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct resolver;

struct resolver_result {
	uint64_t cookie;
	int status;	     /* 0 or a getaddrinfo EAI_* code */
	struct addrinfo *ai; /* free with freeaddrinfo */
};

int resolver_new(struct resolver **out, unsigned threads, struct error *err);
/* Readable when results are waiting. */
int resolver_fd(const struct resolver *r);
void resolver_submit(struct resolver *r, uint64_t cookie, const char *host);
/* Takes one finished lookup; false when there is none. */
bool resolver_take(struct resolver *r, struct resolver_result *out);
/* Stops the workers. A worker still inside getaddrinfo finishes on its own
 * and frees what it shares; nothing waits for it. */
void resolver_free(struct resolver *r);
