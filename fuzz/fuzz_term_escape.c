/* libFuzzer target for the terminal escaping. For every input and mode the
 * result must hold no control byte (C0, DEL) and no C1, bidi or invisible
 * character, must be valid UTF-8, may hold a raw '\n' only in the lines
 * mode, and must be the input itself when the input was printable ASCII
 * without a backslash. ASan catches any read past the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/utf8.h"
#include "base/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_output(const struct strbuf *sb, enum term_escape_mode mode)
{
	const unsigned char *p = (const unsigned char *)strbuf_str(sb);
	size_t i = 0;
	while (i < sb->len) {
		if (p[i] == '\n' && mode == TERM_ESCAPE_LINES) {
			i++;
			continue;
		}
		uint32_t cp;
		size_t n = utf8_decode(p + i, sb->len - i, &cp);
		if (!n || term_escape_unsafe(cp))
			abort();
		i += n;
	}
}

static bool plain(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (data[i] < 0x20 || data[i] >= 0x7F || data[i] == '\\')
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that a read past the end is caught. */
	_cleanup_free_ char *copy = xmalloc(size ? size : 1);
	memcpy(copy, data, size);
	static const enum term_escape_mode modes[] = {TERM_ESCAPE_STRING, TERM_ESCAPE_LINES,
						      TERM_ESCAPE_JSON};
	for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		term_escape_mode_add(&sb, copy, size, modes[m]);
		check_output(&sb, modes[m]);
		if (plain(data, size) && (sb.len != size || memcmp(sb.buf, data, size) != 0))
			abort();
	}
	return 0;
}
