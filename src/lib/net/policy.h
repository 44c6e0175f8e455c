/* The network policy of a filtered run: the allow and deny lists with
 * groups expanded, the pinned names and the localhost ports, and the one
 * function that decides whether a requested host may be reached. Pure: no
 * sockets, no resolver, so `policy`, the proxy and the tests agree. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config/config.h"

struct net_rule {
	char *pattern;	    /* normalised host pattern */
	char *origin;	    /* "@agents (default)", "--allow-host", "<file>:L:C" */
	bool explicit_name; /* an exact name the user wrote, not a group's */
};

/* A pinned name reaches its address on `port` only, or on 80 and 443 when
 * the pin names no port: a pin to 127.0.0.1 must not open every port of
 * the host's loopback. */
struct net_pin {
	char *name;
	char *address; /* without the port */
	uint16_t port; /* 0: 80 and 443 */
	char *origin;
};

struct net_policy {
	enum network_mode mode;
	struct net_rule *allow;
	size_t allow_len;
	struct net_rule *deny;
	size_t deny_len;
	struct net_pin *resolve;
	size_t resolve_len;
	uint16_t *localhost; /* sorted, unique */
	size_t localhost_len;
	uint16_t http_port; /* loopback ports of the proxies inside the sandbox */
	uint16_t socks_port;
};

void net_policy_build(const struct network_config *cfg, struct net_policy *p);
void net_policy_release(struct net_policy *p);

struct net_verdict {
	bool allowed;
	bool explicit_name;	/* matched an exact entry the user wrote */
	const char *pinned;	/* network.resolve address for the host, or NULL */
	uint16_t pinned_port;	/* its port, 0 for 80 and 443 */
	char *host;		/* the normalised host, or NULL when it is not one */
	char *reason;		/* one line naming the host and the config key; NULL if allowed */
	const char *allowed_by; /* the allowing entry's origin (the policy's), or NULL */
};

/* Decides on a requested host name (as the client sent it) before anything
 * is resolved: deny wins, then allow; IP literals need an exact entry. */
void net_policy_check_host(const struct net_policy *p, const char *host, struct net_verdict *v);

/* Decides on an address the host resolved to: loopback, private,
 * link-local and metadata addresses need an exact, user-written entry.
 * Returns the refusal reason (to free) or NULL. */
char *net_policy_check_address(const struct net_policy *p, const struct net_verdict *v,
			       const struct sockaddr *sa);

/* Decides on the port of a request for a pinned name (v->pinned set).
 * Returns the refusal reason (to free) or NULL. */
char *net_policy_check_pin_port(const struct net_verdict *v, unsigned port);

bool net_policy_localhost_allowed(const struct net_policy *p, unsigned port);

void net_verdict_release(struct net_verdict *v);
