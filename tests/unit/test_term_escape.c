/* Unit tests for the terminal escaping of outside strings: what each kind of
 * dangerous character becomes in each mode, that printable text (UTF-8
 * included) is left alone, and which code points count as unsafe. Inputs
 * are copied into exact-size buffers so that a read past len faults under
 * ASan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

#include "unit.h"

struct escape_case {
	const char *in;
	size_t len;
	const char *string; /* TERM_ESCAPE_STRING */
	const char *lines;  /* TERM_ESCAPE_LINES */
	const char *json;   /* TERM_ESCAPE_JSON */
};

/* sizeof keeps embedded NUL bytes in the input. */
#define CASE(literal, s, l, j)                                                                     \
	{                                                                                          \
		.in = (literal), .len = sizeof(literal) - 1, .string = (s), .lines = (l),          \
		.json = (j)                                                                        \
	}

static const struct escape_case cases[] = {
    CASE("", "", "", ""),
    CASE("/home/me/project", "/home/me/project", "/home/me/project", "/home/me/project"),
    CASE("a b~!", "a b~!", "a b~!", "a b~!"),
    /* Valid printable UTF-8 stays as it is. */
    CASE("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	 "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	 "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	 "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"),
    /* The backslash is doubled only for outside strings. */
    CASE("a\\b", "a\\\\b", "a\\b", "a\\b"),
    CASE("\\e", "\\\\e", "\\e", "\\e"),
    /* C0 controls by name or number. */
    CASE("a\nb", "a\\nb", "a\nb", "a\\u000ab"),
    CASE("a\rb\tc", "a\\rb\\tc", "a\\rb\\tc", "a\\u000db\\u0009c"),
    CASE("/x\x1b[1A\x1b[2K", "/x\\e[1A\\e[2K", "/x\\e[1A\\e[2K", "/x\\u001b[1A\\u001b[2K"),
    CASE("\x07\x08\x01\x1f", "\\x07\\x08\\x01\\x1f", "\\x07\\x08\\x01\\x1f",
	 "\\u0007\\u0008\\u0001\\u001f"),
    CASE("a\0b", "a\\x00b", "a\\x00b", "a\\u0000b"),
    CASE("del\x7f", "del\\x7f", "del\\x7f", "del\\u007f"),
    /* C1 controls, encoded and as raw bytes (not UTF-8 on their own). */
    CASE("\xc2\x9b"
	 "31m",
	 "\\u009b31m", "\\u009b31m", "\\u009b31m"),
    CASE("\xc2\x80\xc2\x9f", "\\u0080\\u009f", "\\u0080\\u009f", "\\u0080\\u009f"),
    CASE("\x9b"
	 "31m",
	 "\\x9b31m", "\\x9b31m", "\\ufffd31m"),
    CASE("\x9d"
	 "0;title\x07",
	 "\\x9d0;title\\x07", "\\x9d0;title\\x07", "\\ufffd0;title\\u0007"),
    /* Bidi controls. */
    CASE("evil\xe2\x80\xaetxt.exe", "evil\\u202etxt.exe", "evil\\u202etxt.exe",
	 "evil\\u202etxt.exe"),
    CASE("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", "\\u202a\\u202b\\u202c\\u202d",
	 "\\u202a\\u202b\\u202c\\u202d", "\\u202a\\u202b\\u202c\\u202d"),
    CASE("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "\\u2066\\u2067\\u2068\\u2069",
	 "\\u2066\\u2067\\u2068\\u2069", "\\u2066\\u2067\\u2068\\u2069"),
    CASE("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u200e\\u200f\\u061c", "\\u200e\\u200f\\u061c",
	 "\\u200e\\u200f\\u061c"),
    /* Invisible format characters and separators. */
    CASE("a\xe2\x80\x8b"
	 "b\xef\xbb\xbf",
	 "a\\u200bb\\ufeff", "a\\u200bb\\ufeff", "a\\u200bb\\ufeff"),
    CASE("\xe2\x80\xa8\xe2\x80\xa9", "\\u2028\\u2029", "\\u2028\\u2029", "\\u2028\\u2029"),
    CASE("\xc2\xad", "\\u00ad", "\\u00ad", "\\u00ad"),
    CASE("\xf3\xa0\x80\x81", "\\U000e0001", "\\U000e0001", "\\udb40\\udc01"),
    /* Not UTF-8: overlong forms, surrogates, cut-short sequences, stray
     * continuation bytes, bytes that never start a sequence. */
    CASE("\xc0\xaf", "\\xc0\\xaf", "\\xc0\\xaf", "\\ufffd\\ufffd"),
    CASE("\xed\xa0\x80", "\\xed\\xa0\\x80", "\\xed\\xa0\\x80", "\\ufffd\\ufffd\\ufffd"),
    CASE("ab\xe2\x80", "ab\\xe2\\x80", "ab\\xe2\\x80", "ab\\ufffd\\ufffd"),
    CASE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\\xf4\\x90\\x80\\x80",
	 "\\ufffd\\ufffd\\ufffd\\ufffd"),
    CASE("\xff\xfe", "\\xff\\xfe", "\\xff\\xfe", "\\ufffd\\ufffd"),
    CASE("\xe2\x80\xae\xe2", "\\u202e\\xe2", "\\u202e\\xe2", "\\u202e\\ufffd"),
};

static char *escape(const struct escape_case *c, enum term_escape_mode mode)
{
	_cleanup_free_ char *copy = xmalloc(c->len ? c->len : 1);
	memcpy(copy, c->in, c->len);
	struct strbuf sb = STRBUF_INIT;
	term_escape_mode_add(&sb, copy, c->len, mode);
	return strbuf_detach(&sb);
}

static void assert_escaped(const struct escape_case *c, size_t i, enum term_escape_mode mode,
			   const char *want)
{
	_cleanup_free_ char *got = escape(c, mode);
	if (strcmp(got, want) != 0)
		unit_fail("case %zu, mode %d: got <%s>, want <%s>", i, (int)mode, got, want);
}

static void escapes_each_case_in_every_mode(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_escaped(&cases[i], i, TERM_ESCAPE_STRING, cases[i].string);
		assert_escaped(&cases[i], i, TERM_ESCAPE_LINES, cases[i].lines);
		assert_escaped(&cases[i], i, TERM_ESCAPE_JSON, cases[i].json);
	}
}

/* Escaped text escaped again for the final write comes out the same: the
 * last line of defence does not double our escapes. */
static void lines_mode_leaves_escaped_text_unchanged(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *once = escape(&cases[i], TERM_ESCAPE_STRING);
		struct escape_case again = {.in = once, .len = strlen(once)};
		_cleanup_free_ char *twice = escape(&again, TERM_ESCAPE_LINES);
		if (strcmp(once, twice) != 0)
			unit_fail("case %zu: <%s> became <%s>", i, once, twice);
	}
}

static void term_escape_returns_a_new_string_and_names_null(void **state)
{
	_cleanup_free_ char *s = term_escape("x\x1b]0;pwned\x07");
	assert_string_equal(s, "x\\e]0;pwned\\x07");
	_cleanup_free_ char *n = term_escape(NULL);
	assert_string_equal(n, "(null)");
}

static void unsafe_code_points_are_controls_bidi_and_invisibles(void **state)
{
	static const uint32_t unsafe[] = {
	    0x00,   0x09,   0x0A,   0x1B,   0x1F,    0x7F,    0x80,    0x9B,   0x9F,
	    0xAD,   0x61C,  0x200B, 0x200D, 0x200E,  0x200F,  0x2028,  0x202A, 0x202E,
	    0x2060, 0x2066, 0x2069, 0xFEFF, 0x1D173, 0xE0001, 0xE007F,
	};
	static const uint32_t safe[] = {
	    ' ',    'a',    '~',    0xA0,   0xE9,   0x5D0,   0x627,   0x200A,
	    0x2010, 0x202F, 0x2070, 0x4E2D, 0xFFFD, 0x1F600, 0xE0080, 0x10FFFF,
	};
	for (size_t i = 0; i < ARRAY_SIZE(unsafe); i++)
		if (!term_escape_unsafe(unsafe[i]))
			unit_fail("U+%04X should be unsafe", (unsigned)unsafe[i]);
	for (size_t i = 0; i < ARRAY_SIZE(safe); i++)
		if (term_escape_unsafe(safe[i]))
			unit_fail("U+%04X should be safe", (unsigned)safe[i]);
}

/* Every byte value alone: the result holds no control byte and no byte of
 * 0x80 and above that the input did not have as part of valid UTF-8. */
static void no_single_byte_passes_through_unless_printable(void **state)
{
	for (unsigned b = 0; b < 256; b++) {
		char in = (char)b;
		struct strbuf sb = STRBUF_INIT;
		term_escape_mode_add(&sb, &in, 1, TERM_ESCAPE_STRING);
		for (size_t i = 0; i < sb.len; i++) {
			unsigned char c = (unsigned char)sb.buf[i];
			if (c < 0x20 || c >= 0x7F)
				unit_fail("byte 0x%02x came out as 0x%02x", b, c);
		}
		if (b >= 0x20 && b < 0x7F && b != '\\' && sb.len != 1)
			unit_fail("printable 0x%02x was changed", b);
		strbuf_release(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(escapes_each_case_in_every_mode),
	    cmocka_unit_test(lines_mode_leaves_escaped_text_unchanged),
	    cmocka_unit_test(term_escape_returns_a_new_string_and_names_null),
	    cmocka_unit_test(unsafe_code_points_are_controls_bidi_and_invisibles),
	    cmocka_unit_test(no_single_byte_passes_through_unless_printable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
