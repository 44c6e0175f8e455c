/* Base64 for the daemon's binary payloads: encoding through OpenSSL, and a
 * decoder that accepts only the canonical encoding of some bytes. */
#include "base/base64.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/xalloc.h"

char *base64_encode(const void *data, size_t len, size_t *out_len)
{
	size_t n = (len + 2) / 3 * 4;
	char *out = xmalloc(n + 1);
	size_t done = 0;
	/* EVP_EncodeBlock takes an int: go in chunks of a multiple of 3. */
	const size_t chunk = (size_t)3 << 20;
	for (size_t off = 0; off < len; off += chunk) {
		size_t part = len - off < chunk ? len - off : chunk;
		done += (size_t)EVP_EncodeBlock((unsigned char *)out + done,
						(const unsigned char *)data + off, (int)part);
	}
	out[done] = '\0';
	if (out_len)
		*out_len = done;
	return out;
}

size_t base64_decoded_max(size_t len)
{
	return len % 4 ? SIZE_MAX : len / 4 * 3;
}

static int value_of(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

bool base64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len)
{
	if (len % 4)
		return false;
	size_t pad = 0;
	if (len >= 1 && text[len - 1] == '=')
		pad++;
	if (len >= 2 && text[len - 2] == '=')
		pad++;
	unsigned char *buf = xmalloc(len / 4 * 3 + 1);
	size_t n = 0;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		uint32_t v = 0;
		for (size_t j = 0; j < 4; j++) {
			unsigned char c = (unsigned char)text[i + j];
			int d = value_of(c);
			if (d < 0) {
				/* '=' only as the final padding. */
				if (c != '=' || !last || j < 4 - pad) {
					free(buf);
					return false;
				}
				d = 0;
			}
			v = v << 6 | (uint32_t)d;
		}
		/* The bits padding leaves unused must be zero (canonical). */
		if (last && ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))) {
			free(buf);
			return false;
		}
		buf[n++] = (unsigned char)(v >> 16);
		if (!last || pad < 2)
			buf[n++] = (unsigned char)(v >> 8);
		if (!last || pad < 1)
			buf[n++] = (unsigned char)v;
	}
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	return true;
}
