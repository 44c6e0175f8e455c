/* The host side of the filtered network: an event-driven proxy (one epoll
 * loop, non-blocking sockets, no thread per connection) listening on a unix
 * socket that the sandbox reaches through a bind mount. It speaks HTTP/1.1
 * CONNECT, absolute-form HTTP and SOCKS5, plus agent-sandbox's own one-byte
 * preamble for network.localhost ports. The supervisor polls proxy_fd()
 * and calls proxy_dispatch() when it is readable. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "net/policy.h"

/* The first byte the in-sandbox forwarder sends for a network.localhost
 * connection, followed by the port (two bytes, network order). No HTTP
 * method or SOCKS greeting starts with it. */
#define PROXY_LOCALHOST_PREAMBLE 0x00

/* The byte that carries a client's own TCP socket (SCM_RIGHTS) from the
 * forwarder to the proxy, so bytes cross one relay instead of two. Data
 * after it (a localhost preamble) belongs to the client's stream. */
#define PROXY_HANDOFF 0x01

/* One decision, with what became of it. */
struct proxy_decision {
	const char *protocol; /* "connect", "http", "socks5" or "localhost" */
	const char *host;     /* normalised when valid, else as sent */
	unsigned port;
	bool allowed;
	const char *reason;	/* why refused, or why an allowed connection failed */
	const char *allowed_by; /* the allowing entry's origin, or NULL */
	const char *address;	/* the address connected to, or NULL */
	uint64_t bytes_out;	/* sandbox to the world */
	uint64_t bytes_in;	/* the world to the sandbox */
	double duration_ms;
};

typedef void (*proxy_decision_fn)(void *ctx, const struct proxy_decision *d);

struct proxy_options {
	const struct net_policy *policy;
	const char *socket_path;
	proxy_decision_fn on_decision;
	void *ctx;
};

struct proxy;

int proxy_start(struct proxy **out, const struct proxy_options *opt, struct error *err);
/* An epoll descriptor: readable when proxy_dispatch has work. */
int proxy_fd(const struct proxy *p);
/* Handles what is ready without blocking. */
void proxy_dispatch(struct proxy *p);
/* Closes every connection and removes the socket. */
void proxy_free(struct proxy *p);
