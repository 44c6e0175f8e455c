/* SHA-256 as lower-case hex, from libmd: the trust store records the digest
 * of an approved config, the audit log the digest of the policy. One name
 * for the buffer size and no casts at the call sites. */
#pragma once

#include <sha2.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN (2 * SHA256_DIGEST_LENGTH)

/* The digest of data as 64 lower-case hex digits and a NUL. */
static inline void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	SHA256Data((const uint8_t *)data, len, hex);
}
