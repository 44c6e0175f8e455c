/* Unit tests for the JSONC front end: what it rejects and where it says the
 * problem is, what it accepts, and the positions it records. Every input is
 * passed in an exact-size buffer without a NUL so that reads past len fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "config/jsonc.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

struct reject_case {
	const char *text;
	size_t len;
	const char *message;
};

/* sizeof keeps embedded NUL bytes in the input. */
#define REJECT(literal, msg)                                                                       \
	{                                                                                          \
		.text = (literal), .len = sizeof(literal) - 1, .message = (msg)                    \
	}

static int parse(const char *text, size_t len, struct json_object **root, struct error *err)
{
	_cleanup_free_ char *copy = xmalloc(len ? len : 1);
	memcpy(copy, text, len);
	return jsonc_parse(copy, len, root, err);
}

static struct json_object *parse_ok(const char *text)
{
	struct error err = ERROR_INIT;
	struct json_object *root = NULL;
	int r = parse(text, strlen(text), &root, &err);
	if (r < 0)
		print_error("unexpected error for <%s>: %s\n", text, err.msg);
	assert_int_equal(r, 0);
	assert_null(err.msg);
	assert_int_equal(err.kind, ERROR_NONE);
	return root;
}

static void assert_rejects_text(const char *text, size_t len, const char *message)
{
	_cleanup_error_ struct error err = ERROR_INIT;
	struct json_object *root = (struct json_object *)&err; /* must be reset */
	int r = parse(text, len, &root, &err);
	assert_int_equal(r, -1);
	assert_null(root);
	assert_int_equal(err.kind, ERROR_CONFIG);
	assert_non_null(err.msg);
	assert_string_equal(err.msg, message);
}

static void assert_rejects(const struct reject_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_rejects_text(cases[i].text, cases[i].len, cases[i].message);
}

static void jsonc_rejects_single_quotes(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("{'a': 1}", "1:2: single-quoted strings are not JSON; use double quotes"),
	    REJECT("{\n  'a': 1}", "2:3: single-quoted strings are not JSON; use double quotes"),
	    REJECT("[\"x\", 'y']", "1:7: single-quoted strings are not JSON; use double quotes"),
	    REJECT("'x'", "1:1: single-quoted strings are not JSON; use double quotes"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_unquoted_keys_and_words(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("{a: 1}", "1:2: unquoted key 'a'; object keys need double quotes"),
	    REJECT("{\"a\": 1, $b_2: 2}",
		   "1:10: unquoted key '$b_2'; object keys need double quotes"),
	    REJECT("{1: 2}", "1:2: unquoted key '1'; object keys need double quotes"),
	    REJECT("{\"a\": yes}", "1:7: unquoted word 'yes'; strings need double quotes"),
	    REJECT("[nul]", "1:2: unquoted word 'nul'; strings need double quotes"),
	    REJECT("[truex]", "1:2: unquoted word 'truex'; strings need double quotes"),
	    REJECT("[True]", "1:2: 'True' is not a JSON value; did you mean 'true'?"),
	    REJECT("[FALSE]", "1:2: 'FALSE' is not a JSON value; did you mean 'false'?"),
	    REJECT("Null", "1:1: 'Null' is not a JSON value; did you mean 'null'?"),
	    REJECT("[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]",
		   "1:2: unquoted word 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'; strings need "
		   "double quotes"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_nan_and_infinity(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("NaN", "1:1: NaN and Infinity are not JSON numbers"),
	    REJECT("[Infinity]", "1:2: NaN and Infinity are not JSON numbers"),
	    REJECT("[-Infinity]", "1:2: NaN and Infinity are not JSON numbers"),
	    REJECT("{\"a\": -nan}", "1:7: NaN and Infinity are not JSON numbers"),
	    REJECT("[inf]", "1:2: NaN and Infinity are not JSON numbers"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_malformed_numbers(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("[01]", "1:2: leading zeros are not allowed in numbers"),
	    REJECT("[-01]", "1:2: leading zeros are not allowed in numbers"),
	    REJECT("[00]", "1:2: leading zeros are not allowed in numbers"),
	    REJECT("[.5]", "1:2: numbers need a digit before '.' (write 0.5, not .5)"),
	    REJECT("[+1]", "1:2: numbers cannot start with '+'"),
	    REJECT("[1.]", "1:4: expected a digit after '.'"),
	    REJECT("[1.e5]", "1:4: expected a digit after '.'"),
	    REJECT("[1e]", "1:4: expected a digit in the exponent"),
	    REJECT("[1e+]", "1:5: expected a digit in the exponent"),
	    REJECT("[-]", "1:3: expected a digit after '-'"),
	    REJECT("[- 1]", "1:3: expected a digit after '-'"),
	    REJECT("-", "1:2: expected a digit after '-'"),
	    REJECT("[0x10]", "1:3: unexpected 'x' in a number"),
	    REJECT("[1.2.3]", "1:5: unexpected '.' in a number"),
	    REJECT("[12abc]", "1:4: unexpected 'a' in a number"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

#define UNSAFE_TAIL                                                                                \
	" in a string; expected printable text (no control, bidirectional or invisible "           \
	"characters, not even as escapes)"

static void jsonc_rejects_control_characters_in_strings(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("[\"a\x01"
		   "b\"]",
		   "1:4: control character U+0001" UNSAFE_TAIL),
	    REJECT("[\"\x1f\"]", "1:3: control character U+001F" UNSAFE_TAIL),
	    REJECT("[\"a\tb\"]", "1:4: control character U+0009" UNSAFE_TAIL),
	    REJECT("{\"a\": \"b\nc\"}", "1:7: unterminated string (strings cannot span lines)"),
	    REJECT("{\"a\": \"b\r\nc\"}", "1:7: unterminated string (strings cannot span lines)"),
	    REJECT("{\"a\nb\": 1}", "1:2: unterminated string (strings cannot span lines)"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

/* What a terminal acts on or hides is refused whether it is written raw or
 * as an escape, in values and in keys, at the character's own position. */
static void jsonc_rejects_terminal_controls_raw_and_escaped(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("{\"rw\": [\"/x\\u001b[1A\"]}", "1:12: control character U+001B" UNSAFE_TAIL),
	    REJECT("[\"\x1b[2K\"]", "1:3: control character U+001B" UNSAFE_TAIL),
	    REJECT("[\"a\\nb\"]", "1:4: control character U+000A" UNSAFE_TAIL),
	    REJECT("[\"a\\tb\"]", "1:4: control character U+0009" UNSAFE_TAIL),
	    REJECT("[\"a\\rb\"]", "1:4: control character U+000D" UNSAFE_TAIL),
	    REJECT("[\"\\b\"]", "1:3: control character U+0008" UNSAFE_TAIL),
	    REJECT("[\"\\f\"]", "1:3: control character U+000C" UNSAFE_TAIL),
	    REJECT("[\"del\x7f\"]", "1:6: control character U+007F" UNSAFE_TAIL),
	    REJECT("[\"\\u007f\"]", "1:3: control character U+007F" UNSAFE_TAIL),
	    REJECT("[\"\xc2\x9b"
		   "2J\"]",
		   "1:3: control character U+009B" UNSAFE_TAIL),
	    REJECT("[\"\\u009b\"]", "1:3: control character U+009B" UNSAFE_TAIL),
	    REJECT("[\"evil\xe2\x80\xaetxt\"]", "1:7: bidirectional control U+202E" UNSAFE_TAIL),
	    REJECT("[\"\\u202E\"]", "1:3: bidirectional control U+202E" UNSAFE_TAIL),
	    REJECT("[\"\\u2066\"]", "1:3: bidirectional control U+2066" UNSAFE_TAIL),
	    REJECT("[\"\\u061c\"]", "1:3: bidirectional control U+061C" UNSAFE_TAIL),
	    REJECT("[\"a\xe2\x80\x8b\"]", "1:4: invisible character U+200B" UNSAFE_TAIL),
	    REJECT("[\"\\udb40\\udc01\"]", "1:3: invisible character U+E0001" UNSAFE_TAIL),
	    REJECT("{\"a\\u001b\": 1}", "1:4: control character U+001B" UNSAFE_TAIL),
	    REJECT("{\"\xe2\x80\xae\": 1}", "1:3: bidirectional control U+202E" UNSAFE_TAIL),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_invalid_escapes(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("[\"\\x41\"]", "1:3: invalid escape '\\x' in a string"),
	    REJECT("[\"\\a\"]", "1:3: invalid escape '\\a' in a string"),
	    REJECT("[\"\\'\"]", "1:3: invalid escape '\\'' in a string"),
	    REJECT("[\"\\U0041\"]", "1:3: invalid escape '\\U' in a string"),
	    REJECT("[\"\\\xc3\xa9\"]", "1:3: invalid escape in a string"),
	    REJECT("[\"\\ \"]", "1:3: invalid escape in a string"),
	    REJECT("[\"\\u12\"]", "1:3: expected four hex digits after '\\u'"),
	    REJECT("[\"\\u00G0\"]", "1:3: expected four hex digits after '\\u'"),
	    REJECT("{\"k\\q\": 1}", "1:4: invalid escape '\\q' in a string"),
	    REJECT("[\"\\u0000\"]", "1:3: '\\u0000' (NUL) is not allowed in strings"),
	    REJECT("{\"a\\u0000b\": 1}", "1:4: '\\u0000' (NUL) is not allowed in strings"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_lone_surrogates(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("[\"\\uD83D\"]", "1:3: lone surrogate '\\uD83D' in a string"),
	    REJECT("[\"\\ud837\\uded8\"]",
		   "1:3: '\\uD837\\uDED8': write characters beyond U+FFFF as UTF-8, not as \\u "
		   "escapes (the JSON reader decodes some of these pairs wrongly)"),
	    REJECT("[\"\\uD83Dx\"]", "1:3: lone surrogate '\\uD83D' in a string"),
	    REJECT("[\"\\uDE00\"]", "1:3: lone surrogate '\\uDE00' in a string"),
	    REJECT("[\"\\uD83D\\u0041\"]", "1:3: lone surrogate '\\uD83D' in a string"),
	    REJECT("[\"\\ud83d\\ud83d\"]", "1:3: lone surrogate '\\uD83D' in a string"),
	    REJECT("[\"\\uD83D\\n\"]", "1:3: lone surrogate '\\uD83D' in a string"),
	    REJECT("[\"ab\\uD83D\\uZZZZ\"]", "1:11: expected four hex digits after '\\u'"),
	    REJECT("{\"\\uDFFF\": 1}", "1:3: lone surrogate '\\uDFFF' in a string"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_invalid_utf8(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("[\"\xff\"]", "1:3: invalid UTF-8 (byte 0xFF)"),
	    REJECT("[\"\xc3\"]", "1:3: invalid UTF-8 (byte 0xC3)"),		/* truncated */
	    REJECT("[\"\xc0\xaf\"]", "1:3: invalid UTF-8 (byte 0xC0)"),		/* overlong */
	    REJECT("[\"\xe0\x80\xaf\"]", "1:3: invalid UTF-8 (byte 0xE0)"),	/* overlong */
	    REJECT("[\"\xed\xa0\x80\"]", "1:3: invalid UTF-8 (byte 0xED)"),	/* surrogate */
	    REJECT("[\"\xf4\x90\x80\x80\"]", "1:3: invalid UTF-8 (byte 0xF4)"), /* > U+10FFFF */
	    REJECT("[\"\x80\"]", "1:3: invalid UTF-8 (byte 0x80)"),
	    REJECT("[\"\xf0\x9f\x98\"]", "1:3: invalid UTF-8 (byte 0xF0)"),
	    REJECT("{\"\xe2\x82\": 1}", "1:3: invalid UTF-8 (byte 0xE2)"),
	    REJECT("// \xff\n1", "1:4: invalid UTF-8 (byte 0xFF)"),
	    REJECT("/* \xfe */ 1", "1:4: invalid UTF-8 (byte 0xFE)"),
	    REJECT("[1, \xff]", "1:5: invalid UTF-8 (byte 0xFF)"),
	    REJECT("1 \xc3", "1:3: invalid UTF-8 (byte 0xC3)"),
	    REJECT("\xc3", "1:1: invalid UTF-8 (byte 0xC3)"),
	    REJECT("[\"\xc3\xa9\xff\"]", "1:4: invalid UTF-8 (byte 0xFF)"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_unterminated_strings_and_comments(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("{\"key\": \"valu", "1:9: unterminated string"),
	    REJECT("\"", "1:1: unterminated string"),
	    REJECT("[\"a\\", "1:2: unterminated string"),
	    REJECT("[\"\\u00", "1:2: unterminated string"),
	    REJECT("[\"\\uD83D\\uDE", "1:2: unterminated string"),
	    REJECT("{\"ke", "1:2: unterminated string"),
	    REJECT("/* x", "1:1: unterminated comment"),
	    REJECT("{} /* x *", "1:4: unterminated comment"),
	    REJECT("[1 /*/ ]", "1:4: unterminated comment"),
	    REJECT("{\n  \"a\": 1 /* x\n}", "2:10: unterminated comment"),
	    REJECT("[1] /", "1:5: expected '//' or '/*' to start a comment"),
	    REJECT("[1 / 2]", "1:4: expected '//' or '/*' to start a comment"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_empty_input(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("", "1:1: empty document; expected a JSON value"),
	    REJECT("   \n  ", "2:3: empty document; expected a JSON value"),
	    REJECT("// only a comment\n", "2:1: empty document; expected a JSON value"),
	    REJECT("/* c */", "1:8: empty document; expected a JSON value"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_trailing_garbage(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("{}x", "1:3: unexpected content after the root value"),
	    REJECT("{} {}", "1:4: unexpected content after the root value"),
	    REJECT("1 2", "1:3: unexpected content after the root value"),
	    REJECT("[1]]", "1:4: unexpected content after the root value"),
	    REJECT("\"a\" // c\n\"b\"", "2:1: unexpected content after the root value"),
	    REJECT("1,", "1:2: unexpected content after the root value"),
	    REJECT("true false", "1:6: unexpected content after the root value"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_doubled_and_leading_commas(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("[1,,2]", "1:4: unexpected ','; expected a value or ']'"),
	    REJECT("[,1]", "1:2: unexpected ','; expected a value or ']'"),
	    REJECT("[,]", "1:2: unexpected ','; expected a value or ']'"),
	    REJECT("[1,,]", "1:4: unexpected ','; expected a value or ']'"),
	    REJECT("[1, /* c */ ,]", "1:13: unexpected ','; expected a value or ']'"),
	    REJECT("{\"a\":1,,}", "1:8: unexpected ','; expected a string key or '}'"),
	    REJECT("{,\"a\":1}", "1:2: unexpected ','; expected a string key or '}'"),
	    REJECT("{,}", "1:2: unexpected ','; expected a string key or '}'"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_nul_bytes(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("\0", "1:1: NUL byte in the input"),
	    REJECT("[1,\0]", "1:4: NUL byte in the input"),
	    REJECT("[\"a\0\"]", "1:4: NUL byte in the input"),
	    REJECT("[\"\\\0\"]", "1:4: NUL byte in the input"),
	    REJECT("{\"a\"\0:1}", "1:5: NUL byte in the input"),
	    REJECT("// \0\n1", "1:4: NUL byte in the input"),
	    REJECT("/* \0 */1", "1:4: NUL byte in the input"),
	    REJECT("1\0", "1:2: NUL byte in the input"),
	    REJECT("{}\0", "1:3: NUL byte in the input"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_missing_separators(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("{\"a\" 1}", "1:6: expected ':' after an object key"),
	    REJECT("{\"a\" /* c */ 1}", "1:14: expected ':' after an object key"),
	    REJECT("{\"a\": 1 \"b\": 2}", "1:9: expected ',' or '}' after an object member"),
	    REJECT("{\n  \"ro\": [],\n  \"rw\": \"/a\" \"x\": 1\n}",
		   "3:14: expected ',' or '}' after an object member"),
	    REJECT("{\"a\": 1]", "1:8: expected ',' or '}' after an object member"),
	    REJECT("[1 2]", "1:4: expected ',' or ']' after an array element"),
	    REJECT("[1}", "1:3: expected ',' or ']' after an array element"),
	    REJECT("{\"a\": }", "1:7: expected a value"),
	    REJECT("[:]", "1:2: expected a value"),
	    REJECT("}", "1:1: expected a value"),
	    REJECT("{[]: 1}", "1:2: expected a string key or '}'"),
	    REJECT("[\xEF\xBB\xBF]", "1:2: expected a value"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_reports_unclosed_bracket_at_end_of_input(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("[", "1:2: unexpected end of input; '[' at 1:1 is never closed"),
	    REJECT("[1,", "1:4: unexpected end of input; '[' at 1:1 is never closed"),
	    REJECT("{\"a\": [1, 2", "1:12: unexpected end of input; '[' at 1:7 is never closed"),
	    REJECT("{\"a\": ", "1:7: unexpected end of input; '{' at 1:1 is never closed"),
	    REJECT("{\"a\"", "1:5: unexpected end of input; '{' at 1:1 is never closed"),
	    REJECT("{\n  \"a\": {\n", "3:1: unexpected end of input; '{' at 2:8 is never closed"),
	    REJECT("{\"a\": [] // c", "1:14: unexpected end of input; '{' at 1:1 is never closed"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_rejects_byte_order_mark(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("\xEF\xBB\xBF{}",
		   "1:1: byte order mark at the start; save the file as UTF-8 without one"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_reports_position_of_duplicate_key(void **state)
{
	static const struct reject_case cases[] = {
	    REJECT("{\n    \"ro\": [],\n    \"ro\": []\n}",
		   "3:5: duplicate key \"ro\" (first at 2:5)"),
	    REJECT("{\"a\": 1, \"\\u0061\": 2}", "1:10: duplicate key \"\\u0061\" (first at 1:2)"),
	    REJECT("{\"é\": 1, \"\\u00e9\": 2}", "1:10: duplicate key \"\\u00e9\" (first at 1:2)"),
	    REJECT("{\"a\": {\"b\": 1, \"b\": 2}}", "1:16: duplicate key \"b\" (first at 1:8)"),
	    REJECT("{\"\": 1, \"\": 2}", "1:9: duplicate key \"\" (first at 1:2)"),
	    REJECT("{\"a\": 1, \"b\": 2, \"a\": 3, \"b\": 4}",
		   "1:18: duplicate key \"a\" (first at 1:2)"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_reports_duplicate_key_in_large_object(void **state)
{
	/* Enough members to make the key set grow several times. */
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	strbuf_addstr(&text, "{\n");
	for (int i = 0; i < 300; i++)
		strbuf_addf(&text, "\"key%d\": %d,\n", i, i);
	strbuf_addstr(&text, "\"key137\": 0\n}");
	assert_rejects_text(text.buf, text.len, "302:1: duplicate key \"key137\" (first at 139:1)");
}

static void jsonc_accepts_same_key_in_different_objects(void **state)
{
	struct json_object *root = parse_ok("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, {\"a\": 2}]}");
	assert_non_null(root);
	json_object_put(root);
}

static void jsonc_rejects_nesting_deeper_than_32_levels(void **state)
{
	_cleanup_strbuf_ struct strbuf arrays = STRBUF_INIT;
	for (int i = 0; i < 33; i++)
		strbuf_addch(&arrays, '[');
	for (int i = 0; i < 33; i++)
		strbuf_addch(&arrays, ']');
	assert_rejects_text(arrays.buf, arrays.len, "1:33: nesting deeper than 32 levels");

	_cleanup_strbuf_ struct strbuf objects = STRBUF_INIT;
	for (int i = 0; i < 33; i++)
		strbuf_addstr(&objects, "{\"a\":\n");
	assert_rejects_text(objects.buf, objects.len, "33:1: nesting deeper than 32 levels");
}

static void jsonc_accepts_32_levels_of_nesting(void **state)
{
	_cleanup_strbuf_ struct strbuf arrays = STRBUF_INIT;
	for (int i = 0; i < 32; i++)
		strbuf_addch(&arrays, '[');
	strbuf_addstr(&arrays, "1");
	for (int i = 0; i < 32; i++)
		strbuf_addch(&arrays, ']');
	struct json_object *root = parse_ok(arrays.buf);
	assert_true(json_object_is_type(root, json_type_array));
	json_object_put(root);

	_cleanup_strbuf_ struct strbuf mixed = STRBUF_INIT;
	for (int i = 0; i < 16; i++)
		strbuf_addstr(&mixed, "{\"a\": [");
	strbuf_addstr(&mixed, "null");
	for (int i = 0; i < 16; i++)
		strbuf_addstr(&mixed, "]}");
	root = parse_ok(mixed.buf);
	assert_true(json_object_is_type(root, json_type_object));
	json_object_put(root);
}

static void jsonc_counts_columns_in_code_points(void **state)
{
	static const struct reject_case cases[] = {
	    /* ä is two bytes, 😀 four; each is one column. */
	    REJECT("[\"ä😀\", x]", "1:8: unquoted word 'x'; strings need double quotes"),
	    REJECT("{\"ä😀\": \"ü\" x}", "1:12: expected ',' or '}' after an object member"),
	    REJECT("// ünïcödé\n[\"日本語\" 1]", "2:8: expected ',' or ']' after an array element"),
	    /* A tab is one column. */
	    REJECT("[\t\t\tx]", "1:5: unquoted word 'x'; strings need double quotes"),
	    REJECT("[1,\r\n x]", "2:2: unquoted word 'x'; strings need double quotes"),
	};
	assert_rejects(cases, ARRAY_SIZE(cases));
}

static void jsonc_accepts_comments_in_every_position(void **state)
{
	struct json_object *root =
	    parse_ok("// leading line comment\n"
		     "/* leading block */ { // after '{'\n"
		     "  /* before key */ \"a\" /* after key */ : /* after ':' */\n"
		     "  [ /* after '[' */ 1 /* after element */ , /* after ',' */\n"
		     "    2 // before ']'\n"
		     "  ] /* after value */ , // after ','\n"
		     "  \"b\": \"// not a comment /* nor this */\",\n"
		     "  /** doc comment **/ \"c\": true /***/\n"
		     "} // trailing line comment\n"
		     "/* trailing block */ // no newline at the end");
	assert_true(json_object_is_type(root, json_type_object));
	assert_int_equal(json_object_object_length(root), 3);
	struct json_object *a = json_object_object_get(root, "a");
	assert_int_equal(json_object_array_length(a), 2);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(a, 0)), 1);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(a, 1)), 2);
	assert_string_equal(json_object_get_string(json_object_object_get(root, "b")),
			    "// not a comment /* nor this */");
	assert_true(json_object_get_boolean(json_object_object_get(root, "c")));
	json_object_put(root);
}

static void jsonc_accepts_block_comment_ending_in_two_stars(void **state)
{
	/* json-c 0.16 on its own would lose everything after the "**" + "/". */
	struct json_object *root = parse_ok("[1 /* a **/, 2, /***/ 3]");
	assert_int_equal(json_object_array_length(root), 3);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(root, 2)), 3);
	json_object_put(root);
}

static void jsonc_accepts_trailing_comma_in_array(void **state)
{
	static const char *const texts[] = {"[1,]", "[1, 2 , ]", "[1, /* c */ ]", "[[],\n]"};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct json_object *root = parse_ok(texts[i]);
		assert_true(json_object_is_type(root, json_type_array));
		json_object_put(root);
	}
	struct json_object *root = parse_ok("[\"a\", \"b\",]");
	assert_int_equal(json_object_array_length(root), 2);
	json_object_put(root);
}

static void jsonc_accepts_trailing_comma_in_object(void **state)
{
	struct json_object *root = parse_ok("{\"a\": 1, \"b\": {\"c\": [],},\n}");
	assert_int_equal(json_object_object_length(root), 2);
	assert_int_equal(json_object_object_length(json_object_object_get(root, "b")), 1);
	json_object_put(root);
}

static void jsonc_accepts_nested_structures(void **state)
{
	struct json_object *root = parse_ok("{\"a\": {\"b\": [1, {\"c\": [true, false, null]}]},"
					    " \"d\": [], \"e\": {}, \"f\": \"x\"}");
	struct json_object *b = json_object_object_get(json_object_object_get(root, "a"), "b");
	struct json_object *c = json_object_object_get(json_object_array_get_idx(b, 1), "c");
	assert_int_equal(json_object_array_length(c), 3);
	assert_null(json_object_array_get_idx(c, 2));
	assert_int_equal(json_object_array_length(json_object_object_get(root, "d")), 0);
	assert_int_equal(json_object_object_length(json_object_object_get(root, "e")), 0);
	json_object_put(root);
}

static void jsonc_accepts_scalar_roots(void **state)
{
	struct json_object *root = parse_ok("\"text\"");
	assert_string_equal(json_object_get_string(root), "text");
	json_object_put(root);

	root = parse_ok("-12");
	assert_int_equal(json_object_get_int(root), -12);
	json_object_put(root);

	root = parse_ok("true // comment");
	assert_true(json_object_get_boolean(root));
	json_object_put(root);

	/* JSON null is json-c's NULL. */
	root = (struct json_object *)&root;
	struct error err = ERROR_INIT;
	assert_int_equal(parse("null", 4, &root, &err), 0);
	assert_null(root);
	assert_null(err.msg);
}

static void jsonc_accepts_numbers(void **state)
{
	struct json_object *root = parse_ok("[0, -0, 1.5, -2e10, 3E+2, 4e-2, 123456789, 0.0]");
	assert_int_equal(json_object_array_length(root), 8);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(root, 6)), 123456789);
	assert_true(json_object_get_double(json_object_array_get_idx(root, 4)) == 300.0);
	json_object_put(root);
}

/* What each number becomes: json-c's reading of it (json_tokener), which the
 * config loader's type and range checks were written against. */
struct number_case {
	const char *text;
	enum json_type type;
	int64_t int64;	   /* json_object_get_int64 */
	uint64_t uint64;   /* json_object_get_uint64 */
	double value;	   /* json_object_get_double */
	const char *print; /* json_object_to_json_string */
};

static void jsonc_reads_numbers_as_json_c_does(void **state)
{
	static const struct number_case cases[] = {
	    {"0", json_type_int, 0, 0, 0.0, "0"},
	    {"-0", json_type_int, 0, 0, 0.0, "0"},
	    {"65535", json_type_int, 65535, 65535, 65535.0, "65535"},
	    {"-1", json_type_int, -1, 0, -1.0, "-1"},
	    {"9223372036854775807", json_type_int, INT64_MAX, INT64_MAX, 9223372036854775807.0,
	     "9223372036854775807"},
	    /* Above INT64_MAX: an unsigned integer, read as INT64_MAX by int64. */
	    {"9223372036854775808", json_type_int, INT64_MAX, 9223372036854775808u,
	     9223372036854775808.0, "9223372036854775808"},
	    {"18446744073709551615", json_type_int, INT64_MAX, UINT64_MAX, 18446744073709551615.0,
	     "18446744073709551615"},
	    /* Beyond 64 bits: clamped, not refused. */
	    {"18446744073709551616", json_type_int, INT64_MAX, UINT64_MAX, 18446744073709551615.0,
	     "18446744073709551615"},
	    {"-9223372036854775808", json_type_int, INT64_MIN, 0, -9223372036854775808.0,
	     "-9223372036854775808"},
	    {"-9223372036854775809", json_type_int, INT64_MIN, 0, -9223372036854775808.0,
	     "-9223372036854775808"},
	    /* A fraction or an exponent makes a double that prints as written. */
	    {"1.5", json_type_double, 1, 1, 1.5, "1.5"},
	    {"-0.0", json_type_double, 0, 0, -0.0, "-0.0"},
	    {"1E2", json_type_double, 100, 100, 100.0, "1E2"},
	    {"1e+2", json_type_double, 100, 100, 100.0, "1e+2"},
	    {"25e-1", json_type_double, 2, 2, 2.5, "25e-1"},
	    {"1.0", json_type_double, 1, 1, 1.0, "1.0"},
	    {"1e-400", json_type_double, 0, 0, 0.0, "1e-400"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct number_case *c = &cases[i];
		_cleanup_free_ char *text = xasprintf("[%s]", c->text);
		struct json_object *root = parse_ok(text);
		struct json_object *n = json_object_array_get_idx(root, 0);
		if (!json_object_is_type(n, c->type))
			fail_msg("%s: type %s", c->text,
				 json_type_to_name(json_object_get_type(n)));
		assert_true(json_object_get_int64(n) == c->int64);
		assert_true(json_object_get_uint64(n) == c->uint64);
		assert_true(json_object_get_double(n) == c->value);
		assert_string_equal(json_object_to_json_string(n), c->print);
		json_object_put(root);
	}

	/* Out of a double's range: infinity, as json-c's strtod makes it. */
	struct json_object *root = parse_ok("[1e400, -1e400]");
	assert_true(json_object_get_double(json_object_array_get_idx(root, 0)) > 1e308);
	assert_true(json_object_get_double(json_object_array_get_idx(root, 1)) < -1e308);
	json_object_put(root);
}

static void json_c_freep(struct json_object **value)
{
	json_object_put(*value);
}

/* The one parse makes the tree json-c's own parser makes of the same text:
 * types, nesting, member order, decoded strings, integers and doubles. */
static void jsonc_builds_the_tree_json_c_builds(void **state)
{
	static const char *const documents[] = {
	    "{}",
	    "[]",
	    "null",
	    "true",
	    "\"\"",
	    "-12",
	    "[null, true, false, 0, -1, 2.5, \"s\", [], {}]",
	    "{\"a\": {\"b\": [1, {\"c\": [true, false, null]}]}, \"d\": [], \"e\": {}, \"f\": "
	    "\"x\"}",
	    "{\"z\": 1, \"a\": 2, \"m\": 3, \"\": 4, \"\\u00e9\": 5, \"\\\"\": 6}",
	    "[\"\\\"\\\\\\/\", \"a\\u0041b\", \"\\u00e9\\u6771\", \"é😀\", \"\\u00a0\"]",
	    "[9223372036854775807, 9223372036854775808, 18446744073709551616, "
	    "-9223372036854775809, 1e400, -0.0, 0.1, 1E-7, 123456789012345678901234567890.5]",
	    "{\"network\": {\"localhost\": [5432, 3000]}, \"filesystem\": {\"ro\": [\"~/x\"]}}",
	    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	};
	for (size_t i = 0; i < ARRAY_SIZE(documents); i++) {
		_cleanup_(json_c_freep) struct json_object *ours = parse_ok(documents[i]);
		_cleanup_(json_c_freep) struct json_object *theirs =
		    json_tokener_parse(documents[i]);
		if (!json_object_equal(ours, theirs))
			fail_msg("<%s> differs from json-c's reading", documents[i]);
		_cleanup_free_ char *ours_text =
		    xstrdup(json_object_to_json_string_ext(ours, JSON_C_TO_STRING_PLAIN));
		assert_string_equal(ours_text,
				    json_object_to_json_string_ext(theirs, JSON_C_TO_STRING_PLAIN));
	}
}

static void jsonc_decodes_unicode_escapes(void **state)
{
	struct json_object *root = parse_ok("[\"\\u00e9\", \"\\u00e8\", \"\\\"\\\\\\/\","
					    " \"é😀\", \"\\u0041\\u00DF\\u6771\", \"\\u00a0\"]");
	static const char *const expected[] = {
	    "é", "è", "\"\\/", "é😀", "Aß東", "\xc2\xa0",
	};
	assert_int_equal(json_object_array_length(root), ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++)
		assert_string_equal(json_object_get_string(json_object_array_get_idx(root, i)),
				    expected[i]);
	json_object_put(root);
}

static void jsonc_reads_only_len_bytes(void **state)
{
	static const char text[] = "[1]xyz";
	struct json_object *root = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(parse(text, 3, &root, &err), 0);
	assert_int_equal(json_object_array_length(root), 1);
	json_object_put(root);

	assert_int_equal(parse("123", 2, &root, &err), 0);
	assert_int_equal(json_object_get_int(root), 12);
	json_object_put(root);
}

/* A document whose positions are worked out by hand in the tests below. */
static const char position_document[] = "{\n"
					"\t\"ro\": [\"/usr\", null, /* c */ \"/etc\"],\n"
					"\t\"é\": {\"k\": null},\n"
					"  \"n\" : 12,\n"
					"  \"\\u0072w\": [[], [null]]\n"
					"}\n";

static void assert_pos(struct jsonc_pos pos, unsigned line, unsigned column)
{
	assert_int_equal(pos.line, line);
	assert_int_equal(pos.column, column);
}

static void jsonc_member_pos_returns_line_and_column_of_key_and_value(void **state)
{
	struct json_object *root = parse_ok(position_document);
	struct jsonc_pos key, value;

	assert_true(jsonc_member_pos(root, "ro", &key, &value));
	assert_pos(key, 2, 2);
	assert_pos(value, 2, 8);

	assert_true(jsonc_member_pos(root, "é", &key, &value));
	assert_pos(key, 3, 2);
	assert_pos(value, 3, 7);

	assert_true(jsonc_member_pos(root, "n", &key, &value));
	assert_pos(key, 4, 3);
	assert_pos(value, 4, 9);

	/* Either output may be left out. */
	assert_true(jsonc_member_pos(root, "n", NULL, &value));
	assert_pos(value, 4, 9);
	assert_true(jsonc_member_pos(root, "n", &key, NULL));
	assert_pos(key, 4, 3);
	json_object_put(root);
}

static void jsonc_member_pos_finds_members_whose_value_is_null(void **state)
{
	struct json_object *root = parse_ok(position_document);
	struct json_object *inner = json_object_object_get(root, "é");
	struct jsonc_pos key, value;
	assert_true(jsonc_member_pos(inner, "k", &key, &value));
	assert_pos(key, 3, 8);
	assert_pos(value, 3, 13);
	json_object_put(root);
}

static void jsonc_member_pos_matches_decoded_keys(void **state)
{
	struct json_object *root = parse_ok(position_document);
	struct jsonc_pos key, value;
	assert_true(jsonc_member_pos(root, "rw", &key, &value));
	assert_pos(key, 5, 3);
	assert_pos(value, 5, 14);
	assert_false(jsonc_member_pos(root, "\\u0072w", &key, &value));
	json_object_put(root);
}

static void jsonc_member_pos_returns_false_without_such_member(void **state)
{
	struct json_object *root = parse_ok(position_document);
	struct jsonc_pos key = {0, 0}, value = {0, 0};
	assert_false(jsonc_member_pos(root, "missing", &key, &value));
	assert_false(jsonc_member_pos(root, "r", &key, &value));
	assert_false(jsonc_member_pos(root, NULL, &key, &value));
	/* Not an object, or not from jsonc_parse. */
	assert_false(jsonc_member_pos(json_object_object_get(root, "ro"), "ro", &key, &value));
	assert_false(jsonc_member_pos(json_object_object_get(root, "n"), "n", &key, &value));
	assert_false(jsonc_member_pos(NULL, "ro", &key, &value));
	struct json_object *fresh = json_object_new_object();
	json_object_object_add(fresh, "ro", NULL);
	assert_false(jsonc_member_pos(fresh, "ro", &key, &value));
	json_object_put(fresh);
	assert_pos(key, 0, 0);
	assert_pos(value, 0, 0);
	json_object_put(root);
}

static void jsonc_element_pos_returns_line_and_column_of_each_element(void **state)
{
	struct json_object *root = parse_ok(position_document);
	struct json_object *ro = json_object_object_get(root, "ro");
	struct jsonc_pos pos;
	static const unsigned columns[] = {9, 17, 31};
	for (size_t i = 0; i < ARRAY_SIZE(columns); i++) {
		assert_true(jsonc_element_pos(ro, i, &pos));
		assert_pos(pos, 2, columns[i]);
	}
	assert_true(jsonc_element_pos(ro, 1, NULL));

	struct json_object *rw = json_object_object_get(root, "rw");
	assert_true(jsonc_element_pos(rw, 0, &pos));
	assert_pos(pos, 5, 15);
	assert_true(jsonc_element_pos(rw, 1, &pos));
	assert_pos(pos, 5, 19);
	/* The null element of a nested array. */
	assert_true(jsonc_element_pos(json_object_array_get_idx(rw, 1), 0, &pos));
	assert_pos(pos, 5, 20);
	json_object_put(root);
}

static void jsonc_element_pos_returns_false_out_of_range(void **state)
{
	struct json_object *root = parse_ok(position_document);
	struct json_object *ro = json_object_object_get(root, "ro");
	struct jsonc_pos pos = {0, 0};
	assert_false(jsonc_element_pos(ro, 3, &pos));
	assert_false(jsonc_element_pos(ro, SIZE_MAX, &pos));
	assert_false(jsonc_element_pos(
	    json_object_array_get_idx(json_object_object_get(root, "rw"), 0), 0, &pos));
	assert_false(jsonc_element_pos(root, 0, &pos));
	assert_false(jsonc_element_pos(NULL, 0, &pos));
	assert_pos(pos, 0, 0);
	json_object_put(root);
}

static void jsonc_positions_count_code_points(void **state)
{
	struct json_object *root = parse_ok("{\"ä😀\": \"ü\", \"b\": [\"日本\", 1]}");
	struct jsonc_pos key, value;
	assert_true(jsonc_member_pos(root, "b", &key, &value));
	assert_pos(key, 1, 13);
	assert_pos(value, 1, 18);
	assert_true(jsonc_element_pos(json_object_object_get(root, "b"), 1, &value));
	assert_pos(value, 1, 25);
	json_object_put(root);
}

static void jsonc_positions_survive_in_scalar_and_nested_roots(void **state)
{
	struct json_object *root = parse_ok("[\n  {\"a\": 1},\n  [2]\n]");
	struct jsonc_pos pos;
	assert_true(jsonc_element_pos(root, 1, &pos));
	assert_pos(pos, 3, 3);
	assert_true(jsonc_member_pos(json_object_array_get_idx(root, 0), "a", NULL, &pos));
	assert_pos(pos, 2, 9);
	assert_true(jsonc_element_pos(json_object_array_get_idx(root, 1), 0, &pos));
	assert_pos(pos, 3, 4);
	json_object_put(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(jsonc_rejects_single_quotes),
	    cmocka_unit_test(jsonc_rejects_unquoted_keys_and_words),
	    cmocka_unit_test(jsonc_rejects_nan_and_infinity),
	    cmocka_unit_test(jsonc_rejects_malformed_numbers),
	    cmocka_unit_test(jsonc_rejects_control_characters_in_strings),
	    cmocka_unit_test(jsonc_rejects_terminal_controls_raw_and_escaped),
	    cmocka_unit_test(jsonc_rejects_invalid_escapes),
	    cmocka_unit_test(jsonc_rejects_lone_surrogates),
	    cmocka_unit_test(jsonc_rejects_invalid_utf8),
	    cmocka_unit_test(jsonc_rejects_unterminated_strings_and_comments),
	    cmocka_unit_test(jsonc_rejects_empty_input),
	    cmocka_unit_test(jsonc_rejects_trailing_garbage),
	    cmocka_unit_test(jsonc_rejects_doubled_and_leading_commas),
	    cmocka_unit_test(jsonc_rejects_nul_bytes),
	    cmocka_unit_test(jsonc_rejects_missing_separators),
	    cmocka_unit_test(jsonc_reports_unclosed_bracket_at_end_of_input),
	    cmocka_unit_test(jsonc_rejects_byte_order_mark),
	    cmocka_unit_test(jsonc_reports_position_of_duplicate_key),
	    cmocka_unit_test(jsonc_reports_duplicate_key_in_large_object),
	    cmocka_unit_test(jsonc_accepts_same_key_in_different_objects),
	    cmocka_unit_test(jsonc_rejects_nesting_deeper_than_32_levels),
	    cmocka_unit_test(jsonc_accepts_32_levels_of_nesting),
	    cmocka_unit_test(jsonc_counts_columns_in_code_points),
	    cmocka_unit_test(jsonc_accepts_comments_in_every_position),
	    cmocka_unit_test(jsonc_accepts_block_comment_ending_in_two_stars),
	    cmocka_unit_test(jsonc_accepts_trailing_comma_in_array),
	    cmocka_unit_test(jsonc_accepts_trailing_comma_in_object),
	    cmocka_unit_test(jsonc_accepts_nested_structures),
	    cmocka_unit_test(jsonc_accepts_scalar_roots),
	    cmocka_unit_test(jsonc_accepts_numbers),
	    cmocka_unit_test(jsonc_reads_numbers_as_json_c_does),
	    cmocka_unit_test(jsonc_builds_the_tree_json_c_builds),
	    cmocka_unit_test(jsonc_decodes_unicode_escapes),
	    cmocka_unit_test(jsonc_reads_only_len_bytes),
	    cmocka_unit_test(jsonc_member_pos_returns_line_and_column_of_key_and_value),
	    cmocka_unit_test(jsonc_member_pos_finds_members_whose_value_is_null),
	    cmocka_unit_test(jsonc_member_pos_matches_decoded_keys),
	    cmocka_unit_test(jsonc_member_pos_returns_false_without_such_member),
	    cmocka_unit_test(jsonc_element_pos_returns_line_and_column_of_each_element),
	    cmocka_unit_test(jsonc_element_pos_returns_false_out_of_range),
	    cmocka_unit_test(jsonc_positions_count_code_points),
	    cmocka_unit_test(jsonc_positions_survive_in_scalar_and_nested_roots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
