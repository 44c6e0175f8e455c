/* Base64 (RFC 4648, with padding) for the executor API's binary data. */
#pragma once

#include <stddef.h>

/* The length of len bytes encoded, padding included. */
#define BASE64_ENCODED_LEN(len) (4 * (((len) + 2) / 3))

/* Encodes into out, which holds BASE64_ENCODED_LEN(len) + 1 bytes; NUL
 * terminated; returns the length. */
size_t base64_encode_to(char *out, const void *data, size_t len);

/* A new NUL-terminated string; *out_len its length (may be NULL). */
char *base64_encode(const void *data, size_t len, size_t *out_len);

/* Decodes strictly: the standard alphabet, padding to a multiple of four,
 * no blanks. Returns a new buffer (NUL-terminated for convenience) with
 * *out_len bytes, or NULL for text that is not base64. */
unsigned char *base64_decode(const char *text, size_t len, size_t *out_len);
