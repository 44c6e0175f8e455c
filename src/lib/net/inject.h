/* The upstream half of credential injection: one request, already parsed
 * and rewritten by the proxy (http_request_parse_origin, with the key's
 * header), goes over TLS to its fixed upstream, and the response comes
 * back with Connection: close. Each injected connection runs on a thread
 * of its own with blocking OpenSSL; the proxy's event loop only hands the
 * client's socket over and takes the outcome from an eventfd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct inject_request {
	uint64_t cookie;
	const char *credential; /* its name, for messages and the audit log */
	const char *host;	/* the upstream: SNI, certificate name, resolved unless pinned */
	unsigned port;		/* 443, or the pin's port */
	const char *pinned;	/* network.resolve address for host, or NULL */
	const char *ca;		/* a PEM file replacing the system store, or NULL */
	const char *head;	/* the rewritten request head, holding the key */
	size_t head_len;
	const char *extra; /* body bytes already read from the client */
	size_t extra_len;
	uint64_t body_len; /* the whole body, extra included */
};

struct inject_result {
	uint64_t cookie;
	int status; /* the upstream's status, or the one sent for a failure */
	char *address;
	char *reason; /* why it failed, or NULL */
	uint64_t bytes_out, bytes_in;
};

struct inject;

int inject_new(struct inject **out, struct error *err);
/* Readable when results are waiting. */
int inject_fd(const struct inject *in);
/* Takes the client's socket (it is closed when the request is done) and
 * copies what it needs from req. Returns 0, or -errno when no thread could
 * be started (the caller still owns the socket then). */
int inject_start(struct inject *in, int client, const struct inject_request *req);
/* Takes one finished request; false when there is none. The caller frees
 * address and reason. */
bool inject_take(struct inject *in, struct inject_result *out);
/* The threads still running finish on their own; nothing waits for them. */
void inject_free(struct inject *in);
