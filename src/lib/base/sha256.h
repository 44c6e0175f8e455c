/* SHA-256 (FIPS 180-4), for the trust store: approving a project config
 * records the digest of its exact content. Small and dependency-free so
 * that a static build needs no crypto library. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN (2 * SHA256_DIGEST_LEN)

struct sha256 {
	uint32_t state[8];
	uint64_t total; /* bytes hashed so far */
	uint8_t block[64];
	size_t used; /* bytes waiting in block */
};

void sha256_init(struct sha256 *h);
void sha256_update(struct sha256 *h, const void *data, size_t len);
void sha256_final(struct sha256 *h, uint8_t digest[SHA256_DIGEST_LEN]);

/* The digest of data as 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);
