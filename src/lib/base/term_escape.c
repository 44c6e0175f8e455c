/* The one escaping rule for strings from outside the program. A terminal
 * acts on C0 and C1 controls (ESC and CSI redraw the screen), reorders text
 * around bidi controls and shows nothing for format characters; none of
 * these may reach it from a file name, a config value or a host name. This
 * file only builds strings: it never prints. */
#include "base/term_escape.h"

#include <string.h>

#include "base/cleanup.h"
#include "base/utf8.h"

static const char control[] = "control character";
static const char bidi[] = "bidirectional control";
static const char invisible[] = "invisible character";

/* Ranges of code points that are escaped, and what they are. */
static const struct {
	uint32_t first, last;
	const char *kind;
} unsafe_ranges[] = {
    {0x0000, 0x001F, control},	   /* C0: ESC starts every terminal sequence */
    {0x007F, 0x009F, control},	   /* DEL; C1: 0x9B is CSI, 0x9D OSC on many terminals */
    {0x00AD, 0x00AD, invisible},   /* soft hyphen */
    {0x034F, 0x034F, invisible},   /* combining grapheme joiner */
    {0x061C, 0x061C, bidi},	   /* Arabic letter mark */
    {0x115F, 0x1160, invisible},   /* Hangul fillers: blank letters */
    {0x17B4, 0x17B5, invisible},   /* Khmer inherent vowels */
    {0x180B, 0x180F, invisible},   /* Mongolian variation selectors, vowel separator */
    {0x200B, 0x200D, invisible},   /* zero-width space, non-joiner, joiner */
    {0x200E, 0x200F, bidi},	   /* LRM, RLM */
    {0x2028, 0x2029, control},	   /* line and paragraph separators */
    {0x202A, 0x202E, bidi},	   /* LRE RLE PDF LRO RLO */
    {0x2060, 0x2065, invisible},   /* word joiner, invisible operators */
    {0x2066, 0x2069, bidi},	   /* isolates LRI RLI FSI PDI */
    {0x206A, 0x206F, invisible},   /* deprecated format characters */
    {0x3164, 0x3164, invisible},   /* Hangul filler */
    {0xFEFF, 0xFEFF, invisible},   /* zero-width no-break space (BOM) */
    {0xFFA0, 0xFFA0, invisible},   /* halfwidth Hangul filler */
    {0xFFF9, 0xFFFB, invisible},   /* interlinear annotation controls */
    {0x1D173, 0x1D17A, invisible}, /* musical format controls */
    {0xE0000, 0xE007F, invisible}, /* tags: invisible copies of ASCII */
};

const char *term_escape_kind(uint32_t code_point)
{
	for (size_t i = 0; i < ARRAY_SIZE(unsafe_ranges); i++)
		if (code_point >= unsafe_ranges[i].first && code_point <= unsafe_ranges[i].last)
			return unsafe_ranges[i].kind;
	return NULL;
}

bool term_escape_unsafe(uint32_t code_point)
{
	return term_escape_kind(code_point) != NULL;
}

static void add_json_unit(struct strbuf *sb, uint32_t unit)
{
	strbuf_addf(sb, "\\u%04x", (unsigned)unit);
}

/* An unsafe code point, or a byte that is not UTF-8 (code_point then
 * UINT32_MAX), as a visible escape. */
static void add_escape(struct strbuf *sb, uint32_t code_point, unsigned char byte,
		       enum term_escape_mode mode)
{
	if (mode == TERM_ESCAPE_JSON) {
		if (code_point == UINT32_MAX) {
			add_json_unit(sb, 0xFFFD);
		} else if (code_point > 0xFFFF) {
			add_json_unit(sb, 0xD800 + ((code_point - 0x10000) >> 10));
			add_json_unit(sb, 0xDC00 + ((code_point - 0x10000) & 0x3FF));
		} else {
			add_json_unit(sb, code_point);
		}
		return;
	}
	switch (code_point) {
	case '\n':
		strbuf_addstr(sb, "\\n");
		return;
	case '\r':
		strbuf_addstr(sb, "\\r");
		return;
	case '\t':
		strbuf_addstr(sb, "\\t");
		return;
	case 0x1B:
		strbuf_addstr(sb, "\\e");
		return;
	case UINT32_MAX:
		strbuf_addf(sb, "\\x%02x", byte);
		return;
	}
	if (code_point < 0x80)
		strbuf_addf(sb, "\\x%02x", (unsigned)code_point);
	else if (code_point <= 0xFFFF)
		strbuf_addf(sb, "\\u%04x", (unsigned)code_point);
	else
		strbuf_addf(sb, "\\U%08x", (unsigned)code_point);
}

/* Bytes copied as they are: printable ASCII, except a backslash when it
 * must be doubled. */
static bool plain_ascii(unsigned char c, enum term_escape_mode mode)
{
	return c >= 0x20 && c < 0x7F && (c != '\\' || mode != TERM_ESCAPE_STRING);
}

void term_escape_mode_add(struct strbuf *sb, const char *s, size_t len, enum term_escape_mode mode)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		size_t run = i;
		while (i < len && plain_ascii(p[i], mode))
			i++;
		strbuf_add(sb, s + run, i - run);
		if (i >= len)
			break;
		if (p[i] == '\\') {
			strbuf_addstr(sb, "\\\\");
			i++;
			continue;
		}
		if (p[i] == '\n' && mode == TERM_ESCAPE_LINES) {
			strbuf_addch(sb, '\n');
			i++;
			continue;
		}
		uint32_t code_point;
		size_t n = utf8_decode(p + i, len - i, &code_point);
		if (!n) {
			add_escape(sb, UINT32_MAX, p[i], mode);
			i++;
		} else if (term_escape_unsafe(code_point)) {
			add_escape(sb, code_point, p[i], mode);
			i += n;
		} else {
			strbuf_add(sb, s + i, n);
			i += n;
		}
	}
}

void term_escape_add(struct strbuf *sb, const char *s)
{
	if (!s)
		s = "(null)";
	term_escape_mode_add(sb, s, strlen(s), TERM_ESCAPE_STRING);
}

char *term_escape(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	term_escape_add(&sb, s);
	return strbuf_detach(&sb);
}
