/* The SOCKS5 protocol (RFC 1928) as far as the proxy speaks it: the method
 * greeting (no authentication only) and the CONNECT request, with domain
 * names or addresses. Parsing and reply bytes only. */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum {
	SOCKS5_VERSION = 5,
	SOCKS5_REPLY_OK = 0,
	SOCKS5_REPLY_FAILURE = 1,
	SOCKS5_REPLY_NOT_ALLOWED = 2, /* "connection not allowed by ruleset" */
	SOCKS5_REPLY_HOST_UNREACHABLE = 4,
	SOCKS5_REPLY_REFUSED = 5,
	SOCKS5_REPLY_TTL_EXPIRED = 6,
	SOCKS5_REPLY_COMMAND_UNSUPPORTED = 7,
	SOCKS5_REPLY_ADDRESS_UNSUPPORTED = 8,
};

/* Parses VER NMETHODS METHODS. Returns the bytes it took (> 0), 0 when
 * incomplete, -1 when it is not a SOCKS5 greeting. *no_auth tells whether
 * the client offers method 0 (no authentication). */
int socks5_parse_greeting(const uint8_t *buf, size_t len, int *no_auth);

struct socks5_request {
	char host[256]; /* a domain name as sent, or an address in text form */
	uint16_t port;
};

/* Parses VER CMD RSV ATYP ADDR PORT. Returns the bytes it took (> 0), 0 when
 * incomplete, or -1 with *reply set to the SOCKS reply code to send. */
int socks5_parse_request(const uint8_t *buf, size_t len, struct socks5_request *req, int *reply);

/* Writes the 10-byte reply for a code (bound address 0.0.0.0:0). */
void socks5_reply(int code, uint8_t out[10]);
