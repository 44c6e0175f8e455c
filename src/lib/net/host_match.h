/* Host names and addresses as the network policy sees them: normalising a
 * requested name, matching it against allow/deny patterns, recognising IP
 * literals, and classifying addresses that must not be reached by default. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "base/error.h"

/* The longest host name we accept (RFC 1035 limits names to 253). */
#define HOST_NAME_MAX_LEN 253

/* Lower-cases `host`, drops one trailing dot and the brackets around an IPv6
 * literal, and checks what is left: a DNS name (letters, digits, '-', '_',
 * labels of 1 to 63 bytes) or an IP literal. Returns a new string or NULL
 * when the name is not acceptable. */
char *host_normalize(const char *host, size_t len);

/* True for anything the C library would take as an address rather than a
 * name: dotted IPv4 in any of inet_aton's forms ("127.1", "0x7f.1",
 * "2130706433") and IPv6. Such names are never sent to the resolver. */
bool host_is_ip_literal(const char *normalized);

/* Checks an allow/deny pattern: "*" (any name), "*.example.com" (subdomains
 * only), "example.com", or an IP literal. */
int host_pattern_validate(const char *pattern, struct error *err);

/* Matches a normalised host against a pattern, by whole labels and
 * case-insensitively; a trailing dot on either side is ignored. IP literals
 * match only a pattern for the same address, never "*". */
bool host_pattern_matches(const char *pattern, const char *normalized_host);

/* True when a pattern names exactly one host (no wildcard). */
bool host_pattern_is_exact(const char *pattern);

/* Why an address is special: NULL for an ordinary public address, or
 * "loopback", "private", "link-local", "metadata", ... */
const char *host_address_class(const struct sockaddr *sa);

/* Parses a numeric address (IPv4 dotted quad or IPv6, no port) into sa with
 * the given port. Returns false for anything else. */
bool host_parse_address(const char *text, unsigned port, struct sockaddr_storage *sa,
			socklen_t *len);

/* "1.2.3.4" or "2001:db8::1" for an address, into buf (at least 64 bytes). */
const char *host_address_text(const struct sockaddr *sa, char *buf, size_t size);

/* A network.resolve value: an address with an optional port, "10.0.0.5",
 * "10.0.0.5:8080", "2001:db8::1" or "[2001:db8::1]:8443". Writes the
 * address in its canonical form into address (at least 64 bytes) and the
 * port, 0 when none is given. Returns false for anything else. */
bool host_parse_pin(const char *text, char *address, size_t size, unsigned *port);

/* The canonical text of a pin: "10.0.0.5", "10.0.0.5:8080" or
 * "[2001:db8::1]:8443". */
char *host_pin_text(const char *address, unsigned port);
