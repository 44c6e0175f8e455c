/* Strict UTF-8 decoding of a single sequence. It never reads past avail:
 * file names and host names handed to it may end anywhere. */
#include "base/utf8.h"

size_t utf8_decode(const unsigned char *p, size_t avail, uint32_t *code_point)
{
	unsigned char lead = p[0];
	size_t n;
	uint32_t cp, min;

	if (lead < 0x80) {
		*code_point = lead;
		return 1;
	}
	if (lead >= 0xC2 && lead <= 0xDF) {
		n = 2;
		cp = lead & 0x1F;
		min = 0x80;
	} else if (lead >= 0xE0 && lead <= 0xEF) {
		n = 3;
		cp = lead & 0x0F;
		min = 0x800;
	} else if (lead >= 0xF0 && lead <= 0xF4) {
		n = 4;
		cp = lead & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	*code_point = cp;
	return n;
}
