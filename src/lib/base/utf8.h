/* Decoding one UTF-8 sequence, strictly: the config scanner and the terminal
 * escaping agree on what is well-formed text. Reads at most avail bytes. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Length of the UTF-8 sequence at p, or 0 when it is not well-formed UTF-8
 * (overlong forms, encoded surrogates, values above U+10FFFF, and a sequence
 * cut short by avail included). avail must be at least 1. */
size_t utf8_decode(const unsigned char *p, size_t avail, uint32_t *code_point);
