/* Base64 (RFC 4648, standard alphabet, padded) for binary data carried in
 * JSON. The decoder is strict: it is fed untrusted text, and a lenient one
 * would give two spellings to the same bytes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A new NUL-terminated string of 4 * ceil(len / 3) characters. */
char *base64_encode(const void *data, size_t len, size_t *out_len);

/* The decoded size of text of len characters, or SIZE_MAX when len is not
 * a multiple of 4. An upper bound: padding is not yet counted. */
size_t base64_decoded_max(size_t len);

/* Decodes text into a new buffer of *out_len bytes (NUL-terminated for
 * convenience). Returns false on anything but the canonical encoding:
 * a length not a multiple of 4, a character outside the alphabet,
 * whitespace, padding other than one or two '=' at the end, or unused
 * bits that are not zero. */
bool base64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len);
