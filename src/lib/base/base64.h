/* Base64 (RFC 4648, with padding) for the executor API's binary data. */
#pragma once

#include <stddef.h>

/* A new NUL-terminated string; *out_len its length (may be NULL). */
char *base64_encode(const void *data, size_t len, size_t *out_len);

/* Decodes strictly: the standard alphabet, padding to a multiple of four,
 * no blanks. Returns a new buffer (NUL-terminated for convenience) with
 * *out_len bytes, or NULL for text that is not base64. */
unsigned char *base64_decode(const char *text, size_t len, size_t *out_len);
