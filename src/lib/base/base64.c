/* Base64 (base64.h): OpenSSL's encoder, which the build links already; a
 * strict decoder of our own, since OpenSSL's accepts blanks and leaves
 * the padding's zero bytes in the result. */
#include "base/base64.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/xalloc.h"

char *base64_encode(const void *data, size_t len, size_t *out_len)
{
	char *out = xmalloc(BASE64_ENCODED_LEN(len) + 1);
	size_t at = base64_encode_to(out, data, len);
	if (out_len)
		*out_len = at;
	return out;
}

size_t base64_encode_to(char *out, const void *data, size_t len)
{
	size_t done = 0, at = 0;
	/* EVP_EncodeBlock takes an int: in slices, each a multiple of 3. */
	while (done < len) {
		size_t slice = len - done > (1u << 30) ? (1u << 30) : len - done;
		at += (size_t)EVP_EncodeBlock((unsigned char *)out + at,
					      (const unsigned char *)data + done, (int)slice);
		done += slice;
	}
	out[at] = '\0';
	return at;
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

unsigned char *base64_decode(const char *text, size_t len, size_t *out_len)
{
	if (len % 4)
		return NULL;
	size_t pad = 0;
	if (len && text[len - 1] == '=')
		pad = len >= 2 && text[len - 2] == '=' ? 2 : 1;
	unsigned char *out = xmalloc(len / 4 * 3 + 1);
	size_t o = 0;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		uint32_t v = 0;
		for (size_t k = 0; k < 4; k++) {
			int d;
			if (last && k >= 4 - pad)
				d = 0;
			else if ((d = value_of((unsigned char)text[i + k])) < 0) {
				free(out);
				return NULL;
			}
			v = v << 6 | (uint32_t)d;
		}
		out[o++] = (unsigned char)(v >> 16);
		if (!(last && pad == 2))
			out[o++] = (unsigned char)(v >> 8);
		if (!(last && pad >= 1))
			out[o++] = (unsigned char)v;
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}
