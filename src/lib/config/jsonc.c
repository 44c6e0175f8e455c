/* JSONC documents: one strict scanner decides whether the text is valid,
 * builds the json-c values as it goes and hangs on every object and array
 * where its members or elements start. Nothing here reads past len, and
 * recursion never goes deeper than MAX_DEPTH. */
#include "config/jsonc.h"

#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/utf8.h"
#include "base/xalloc.h"

#define MAX_DEPTH 32

/* Longest unquoted word quoted back in an error message. */
#define MAX_WORD_IN_MESSAGE 40

struct position_entry {
	char *key; /* decoded; NULL for array elements */
	struct jsonc_pos key_pos;
	struct jsonc_pos value_pos;
};

/* The userdata of one json-c object or array: its members or elements in
 * document order. */
struct position_index {
	size_t len;
	size_t alloc;
	struct position_entry *entries;
};

struct scanner {
	const unsigned char *text;
	size_t len;
	size_t off;
	unsigned depth;
	size_t open_off; /* the innermost unclosed '{' or '[' while depth > 0 */
	struct error *err;
	struct strbuf string; /* the string being decoded */

	/* Positions are recorded in document order, so one cursor that only
	 * moves forward turns byte offsets into line:column in a single pass. */
	size_t cursor_off;
	struct jsonc_pos cursor;
};

/* Room for one more item in a growable array of *alloc items of size bytes. */
static void *grow_for_one_more(void *items, size_t len, size_t *alloc, size_t size)
{
	if (len < *alloc)
		return items;
	if (*alloc > SIZE_MAX / 2)
		abort();
	size_t new_alloc = *alloc ? *alloc * 2 : 8;
	items = xreallocarray(items, new_alloc, size);
	*alloc = new_alloc;
	return items;
}

static void position_index_delete(struct json_object *owner, void *userdata)
{
	struct position_index *index = userdata;
	for (size_t i = 0; i < index->len; i++)
		free(index->entries[i].key);
	free(index->entries);
	free(index);
}

static struct position_entry *position_index_add(struct position_index *index)
{
	index->entries =
	    grow_for_one_more(index->entries, index->len, &index->alloc, sizeof(*index->entries));
	struct position_entry *entry = &index->entries[index->len++];
	*entry = (struct position_entry){.key = NULL};
	return entry;
}

/* The member of an object's index with the given key, if any. */
static const struct position_entry *position_index_find(const struct position_index *index,
							const char *key)
{
	for (size_t i = 0; i < index->len; i++)
		if (strcmp(index->entries[i].key, key) == 0)
			return &index->entries[i];
	return NULL;
}

static void scanner_release(struct scanner *s)
{
	strbuf_release(&s->string);
}

static void json_putp(struct json_object **value)
{
	json_object_put(*value);
}

/* json-c returns NULL only when it cannot allocate, and allocation failure
 * aborts everywhere else too. */
static struct json_object *must(struct json_object *value)
{
	if (!value)
		abort();
	return value;
}

/* Line and column of `to`, given those of `from` (from <= to). Columns count
 * code points, which in valid UTF-8 are the bytes that are not continuation
 * bytes; the scanner validates text before it asks for a position in it. */
static void advance_pos(const unsigned char *text, size_t from, size_t to, struct jsonc_pos *pos)
{
	for (size_t i = from; i < to; i++) {
		if (text[i] == '\n') {
			pos->line++;
			pos->column = 1;
		} else if ((text[i] & 0xC0) != 0x80) {
			pos->column++;
		}
	}
}

static struct jsonc_pos pos_at(const unsigned char *text, size_t off)
{
	struct jsonc_pos pos = {.line = 1, .column = 1};
	advance_pos(text, 0, off, &pos);
	return pos;
}

static struct jsonc_pos scanner_pos(struct scanner *s, size_t off)
{
	if (off < s->cursor_off)
		return pos_at(s->text, off);
	advance_pos(s->text, s->cursor_off, off, &s->cursor);
	s->cursor_off = off;
	return s->cursor;
}

static int fail_at(struct scanner *s, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(struct scanner *s, size_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *what = xvasprintf(fmt, ap);
	va_end(ap);
	struct jsonc_pos pos = pos_at(s->text, off);
	return error_set(s->err, ERROR_CONFIG, "%u:%u: %s", pos.line, pos.column, what);
}

static int fail_nul(struct scanner *s, size_t off)
{
	return fail_at(s, off, "NUL byte in the input");
}

static int fail_utf8(struct scanner *s, size_t off)
{
	return fail_at(s, off, "invalid UTF-8 (byte 0x%02X)", s->text[off]);
}

static int fail_eof(struct scanner *s)
{
	if (s->depth == 0)
		return fail_at(s, s->len, "empty document; expected a JSON value");
	struct jsonc_pos open = pos_at(s->text, s->open_off);
	return fail_at(s, s->len, "unexpected end of input; '%c' at %u:%u is never closed",
		       s->text[s->open_off], open.line, open.column);
}

/* What was found at s->off is not what the grammar needs there. */
static int fail_unexpected(struct scanner *s, const char *what)
{
	if (s->off >= s->len)
		return fail_eof(s);
	unsigned char c = s->text[s->off];
	uint32_t cp;
	if (c == '\0')
		return fail_nul(s, s->off);
	if (c >= 0x80 && !utf8_decode(s->text + s->off, s->len - s->off, &cp))
		return fail_utf8(s, s->off);
	return fail_at(s, s->off, "%s", what);
}

static bool at(const struct scanner *s, char c)
{
	return s->off < s->len && s->text[s->off] == (unsigned char)c;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Characters of the unquoted words that lax parsers take as keys or values. */
static bool is_word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
	       c == '$';
}

static size_t word_end(const struct scanner *s, size_t start)
{
	size_t end = start;
	while (end < s->len && is_word_char(s->text[end]))
		end++;
	return end;
}

static bool word_is(const struct scanner *s, size_t start, size_t end, const char *word)
{
	return end - start == strlen(word) && memcmp(s->text + start, word, end - start) == 0;
}

static bool word_is_nocase(const struct scanner *s, size_t start, size_t end, const char *word)
{
	return end - start == strlen(word) &&
	       strncasecmp((const char *)s->text + start, word, end - start) == 0;
}

static bool word_is_nan_or_infinity(const struct scanner *s, size_t start, size_t end)
{
	return word_is_nocase(s, start, end, "nan") || word_is_nocase(s, start, end, "infinity") ||
	       word_is_nocase(s, start, end, "inf");
}

static int fail_word(struct scanner *s, size_t start, size_t end, const char *what,
		     const char *advice)
{
	size_t n = end - start;
	return fail_at(s, start, "unquoted %s '%.*s%s'; %s", what,
		       (int)(n > MAX_WORD_IN_MESSAGE ? MAX_WORD_IN_MESSAGE : n),
		       (const char *)s->text + start, n > MAX_WORD_IN_MESSAGE ? "..." : "", advice);
}

static int scan_comment(struct scanner *s)
{
	size_t start = s->off;
	if (start + 1 >= s->len || (s->text[start + 1] != '/' && s->text[start + 1] != '*'))
		return fail_at(s, start, "expected '//' or '/*' to start a comment");
	bool block = s->text[start + 1] == '*';
	size_t i = start + 2;
	for (;;) {
		if (i >= s->len) {
			if (block)
				return fail_at(s, start, "unterminated comment");
			break;
		}
		unsigned char c = s->text[i];
		if (!block && c == '\n')
			break;
		if (block && c == '*' && i + 1 < s->len && s->text[i + 1] == '/') {
			i += 2;
			break;
		}
		if (c == '\0')
			return fail_nul(s, i);
		if (c < 0x80) {
			i++;
			continue;
		}
		uint32_t cp;
		size_t n = utf8_decode(s->text + i, s->len - i, &cp);
		if (!n)
			return fail_utf8(s, i);
		i += n;
	}
	s->off = i;
	return 0;
}

/* Whitespace and comments, wherever JSON allows whitespace. */
static int skip_space(struct scanner *s)
{
	while (s->off < s->len) {
		unsigned char c = s->text[s->off];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			s->off++;
		} else if (c == '/') {
			if (scan_comment(s) < 0)
				return -1;
		} else {
			break;
		}
	}
	return 0;
}

static int hex_value(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The \uXXXX escape whose backslash is at esc: 1 when it is complete, 0 when
 * the input ends inside it, -1 when a character is not a hex digit. */
static int read_u_escape(const struct scanner *s, size_t esc, uint32_t *unit)
{
	uint32_t value = 0;
	for (size_t i = esc + 2; i < esc + 6; i++) {
		if (i >= s->len)
			return 0;
		int digit = hex_value(s->text[i]);
		if (digit < 0)
			return -1;
		value = value << 4 | (uint32_t)digit;
	}
	*unit = value;
	return 1;
}

static void add_utf8(struct strbuf *sb, uint32_t cp)
{
	if (cp < 0x80) {
		strbuf_addch(sb, (char)cp);
	} else if (cp < 0x800) {
		strbuf_addch(sb, (char)(0xC0 | cp >> 6));
		strbuf_addch(sb, (char)(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		strbuf_addch(sb, (char)(0xE0 | cp >> 12));
		strbuf_addch(sb, (char)(0x80 | (cp >> 6 & 0x3F)));
		strbuf_addch(sb, (char)(0x80 | (cp & 0x3F)));
	} else {
		strbuf_addch(sb, (char)(0xF0 | cp >> 18));
		strbuf_addch(sb, (char)(0x80 | (cp >> 12 & 0x3F)));
		strbuf_addch(sb, (char)(0x80 | (cp >> 6 & 0x3F)));
		strbuf_addch(sb, (char)(0x80 | (cp & 0x3F)));
	}
}

/* Every string in a config becomes a path, pattern, name, host or value
 * that is printed one day (policy, --debug, refusals, the audit log); one
 * that holds a character a terminal acts on or does not show can only be a
 * mistake or an attempt to disguise the config, written raw or as an
 * escape. The same rule as the printers' (term_escape.c), so that nothing
 * the config says ever needs escaping to be read. */
static int fail_unsafe(struct scanner *s, size_t off, uint32_t cp)
{
	return fail_at(s, off,
		       "%s U+%04X in a string; expected printable text (no control, "
		       "bidirectional or invisible characters, not even as escapes)",
		       term_escape_kind(cp), (unsigned)cp);
}

/* The escape whose backslash is at s->off, appended to decoded. */
static int scan_escape(struct scanner *s, size_t string_start, struct strbuf *decoded)
{
	size_t esc = s->off;
	if (esc + 1 >= s->len)
		return fail_at(s, string_start, "unterminated string");
	static const char simple_escapes[] = "\"\\/bfnrt";
	static const char simple_decoded[] = "\"\\/\b\f\n\r\t";
	unsigned char c = s->text[esc + 1];
	if (c == '\0')
		return fail_nul(s, esc + 1);
	const char *simple = strchr(simple_escapes, c);
	if (simple) {
		char ch = simple_decoded[simple - simple_escapes];
		if (term_escape_unsafe((unsigned char)ch))
			return fail_unsafe(s, esc, (unsigned char)ch);
		strbuf_addch(decoded, ch);
		s->off = esc + 2;
		return 0;
	}
	if (c != 'u') {
		if (c > 0x20 && c < 0x7F)
			return fail_at(s, esc, "invalid escape '\\%c' in a string", c);
		return fail_at(s, esc, "invalid escape in a string");
	}

	uint32_t unit;
	int r = read_u_escape(s, esc, &unit);
	if (r == 0)
		return fail_at(s, string_start, "unterminated string");
	if (r < 0)
		return fail_at(s, esc, "expected four hex digits after '\\u'");
	s->off = esc + 6;
	uint32_t cp = unit;
	if (unit >= 0xD800 && unit <= 0xDBFF) {
		uint32_t low = 0;
		size_t low_esc = s->off;
		bool paired = false;
		if (low_esc + 1 < s->len && s->text[low_esc] == '\\' &&
		    s->text[low_esc + 1] == 'u') {
			r = read_u_escape(s, low_esc, &low);
			if (r == 0)
				return fail_at(s, string_start, "unterminated string");
			if (r < 0)
				return fail_at(s, low_esc, "expected four hex digits after '\\u'");
			paired = low >= 0xDC00 && low <= 0xDFFF;
		}
		if (!paired)
			return fail_at(s, esc, "lone surrogate '\\u%04X' in a string", unit);
		cp = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
		if (term_escape_unsafe(cp))
			return fail_unsafe(s, esc, cp);
		/* Refused though this scanner could decode it: json-c's own
		 * reader decodes some valid pairs as U+FFFD ("\\ud837\\uded8"),
		 * and a config must mean the same to every json-c reader. */
		return fail_at(s, esc,
			       "'\\u%04X\\u%04X': write characters beyond U+FFFF as UTF-8, not as "
			       "\\u escapes (the JSON reader decodes some of these pairs wrongly)",
			       unit, low);
	} else if (unit >= 0xDC00 && unit <= 0xDFFF) {
		return fail_at(s, esc, "lone surrogate '\\u%04X' in a string", unit);
	} else if (unit == 0) {
		/* Keys and config values end up as C strings: an embedded NUL
		 * would silently cut them short (json-c itself truncates keys). */
		return fail_at(s, esc, "'\\u0000' (NUL) is not allowed in strings");
	}
	if (term_escape_unsafe(cp))
		return fail_unsafe(s, esc, cp);
	add_utf8(decoded, cp);
	return 0;
}

/* The string starting at s->off; its decoded text is appended to decoded. */
static int scan_string(struct scanner *s, struct strbuf *decoded)
{
	size_t start = s->off;
	size_t i = start + 1;
	size_t run = i; /* start of the bytes not yet copied to decoded */
	for (;;) {
		if (i >= s->len)
			return fail_at(s, start, "unterminated string");
		unsigned char c = s->text[i];
		if (c == '"')
			break;
		if (c == '\\') {
			strbuf_add(decoded, s->text + run, i - run);
			s->off = i;
			if (scan_escape(s, start, decoded) < 0)
				return -1;
			i = run = s->off;
			continue;
		}
		if (c == '\0')
			return fail_nul(s, i);
		if (c == '\n' || c == '\r')
			return fail_at(s, start, "unterminated string (strings cannot span lines)");
		uint32_t cp;
		size_t n = utf8_decode(s->text + i, s->len - i, &cp);
		if (!n)
			return fail_utf8(s, i);
		if (term_escape_unsafe(cp))
			return fail_unsafe(s, i, cp);
		i += n;
	}
	strbuf_add(decoded, s->text + run, i - run);
	s->off = i + 1;
	return 0;
}

static size_t skip_digits(const struct scanner *s, size_t i)
{
	while (i < s->len && is_digit(s->text[i]))
		i++;
	return i;
}

/* The value json-c's own reader (json_tokener, 0.16) makes of a number, so
 * that a config means what it meant to json-c: a number without fraction or
 * exponent is an int64 (strtoll, so clamped at INT64_MIN), or when positive
 * and above INT64_MAX a uint64 (strtoull, clamped at UINT64_MAX); any other
 * is a double that keeps its text for printing. */
static struct json_object *number_value(const char *text, bool is_double)
{
	if (is_double) {
		/* json-c reads doubles in the "C" locale, whatever the process's. */
		locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
		if (!c_locale)
			abort();
		double d = strtod_l(text, NULL, c_locale);
		freelocale(c_locale);
		return must(json_object_new_double_s(d, text));
	}
	/* These fail only on text without digits, which the scanner refused. */
	if (text[0] == '-') {
		int64_t n;
		if (json_parse_int64(text, &n) != 0)
			abort();
		return must(json_object_new_int64(n));
	}
	uint64_t u;
	if (json_parse_uint64(text, &u) != 0)
		abort();
	if (u <= INT64_MAX)
		return must(json_object_new_int64((int64_t)u));
	return must(json_object_new_uint64(u));
}

/* RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int scan_number(struct scanner *s, struct json_object **value)
{
	size_t start = s->off;
	size_t i = start;
	bool is_double = false;
	if (s->text[i] == '-') {
		i++;
		if (i >= s->len || !is_digit(s->text[i])) {
			if (word_is_nan_or_infinity(s, i, word_end(s, i)))
				return fail_at(s, start, "NaN and Infinity are not JSON numbers");
			return fail_at(s, i, "expected a digit after '-'");
		}
	}
	if (s->text[i] == '0') {
		i++;
		if (i < s->len && is_digit(s->text[i]))
			return fail_at(s, start, "leading zeros are not allowed in numbers");
	} else {
		i = skip_digits(s, i);
	}
	if (i < s->len && s->text[i] == '.') {
		is_double = true;
		i++;
		if (i >= s->len || !is_digit(s->text[i]))
			return fail_at(s, i, "expected a digit after '.'");
		i = skip_digits(s, i);
	}
	if (i < s->len && (s->text[i] == 'e' || s->text[i] == 'E')) {
		is_double = true;
		i++;
		if (i < s->len && (s->text[i] == '+' || s->text[i] == '-'))
			i++;
		if (i >= s->len || !is_digit(s->text[i]))
			return fail_at(s, i, "expected a digit in the exponent");
		i = skip_digits(s, i);
	}
	if (i < s->len && (is_word_char(s->text[i]) || s->text[i] == '.'))
		return fail_at(s, i, "unexpected '%c' in a number", s->text[i]);
	_cleanup_free_ char *text = xstrndup((const char *)s->text + start, i - start);
	*value = number_value(text, is_double);
	s->off = i;
	return 0;
}

static int scan_word(struct scanner *s, struct json_object **value)
{
	static const char *const literals[] = {"true", "false", "null"};
	size_t start = s->off;
	size_t end = word_end(s, start);
	if (word_is(s, start, end, "true") || word_is(s, start, end, "false")) {
		*value = must(json_object_new_boolean(s->text[start] == 't'));
		s->off = end;
		return 0;
	}
	if (word_is(s, start, end, "null")) {
		*value = NULL; /* json-c's null */
		s->off = end;
		return 0;
	}
	if (word_is_nan_or_infinity(s, start, end))
		return fail_at(s, start, "NaN and Infinity are not JSON numbers");
	for (size_t i = 0; i < ARRAY_SIZE(literals); i++) {
		if (word_is_nocase(s, start, end, literals[i]))
			return fail_at(s, start, "'%.*s' is not a JSON value; did you mean '%s'?",
				       (int)(end - start), (const char *)s->text + start,
				       literals[i]);
	}
	return fail_word(s, start, end, "word", "strings need double quotes");
}

static int scan_string_value(struct scanner *s, struct json_object **value)
{
	strbuf_reset(&s->string);
	if (scan_string(s, &s->string) < 0)
		return -1;
	/* Shorter than the document, which is shorter than INT_MAX. */
	*value = must(json_object_new_string_len(strbuf_str(&s->string), (int)s->string.len));
	return 0;
}

static int scan_value(struct scanner *s, struct json_object **value);

/* A new object or array, with an empty position index as its userdata. */
static struct json_object *new_container(struct json_object *container)
{
	struct position_index *index = xcalloc(1, sizeof(*index));
	json_object_set_userdata(must(container), index, position_index_delete);
	return container;
}

/* Entering the '{' or '[' at s->off. */
static int enter_container(struct scanner *s)
{
	if (s->depth >= MAX_DEPTH)
		return fail_at(s, s->off, "nesting deeper than %d levels", MAX_DEPTH);
	s->open_off = s->off;
	s->depth++;
	s->off++;
	return 0;
}

static void leave_container(struct scanner *s, size_t outer_open)
{
	s->open_off = outer_open;
	s->depth--;
	s->off++;
}

static int scan_member(struct scanner *s, struct json_object *obj, struct position_index *index)
{
	size_t key_off = s->off;
	if (!at(s, '"')) {
		if (at(s, '\''))
			return fail_at(s, key_off,
				       "single-quoted strings are not JSON; use double quotes");
		if (at(s, ','))
			return fail_at(s, key_off, "unexpected ','; expected a string key or '}'");
		if (s->off < s->len && is_word_char(s->text[s->off]))
			return fail_word(s, key_off, word_end(s, key_off), "key",
					 "object keys need double quotes");
		return fail_unexpected(s, "expected a string key or '}'");
	}
	strbuf_reset(&s->string);
	if (scan_string(s, &s->string) < 0)
		return -1;
	struct jsonc_pos key_pos = scanner_pos(s, key_off);
	/* json-c's own table finds an earlier member with this key in constant
	 * time; only the error message walks the index for its position. */
	if (json_object_object_get_ex(obj, strbuf_str(&s->string), NULL)) {
		struct jsonc_pos first_pos =
		    position_index_find(index, strbuf_str(&s->string))->key_pos;
		/* The key as written (between its quotes): valid UTF-8 without
		 * control characters, so it is safe to show on a terminal. */
		return fail_at(s, key_off, "duplicate key \"%.*s\" (first at %u:%u)",
			       (int)(s->off - key_off - 2), (const char *)s->text + key_off + 1,
			       first_pos.line, first_pos.column);
	}
	struct position_entry *entry = position_index_add(index);
	entry->key = xstrndup(strbuf_str(&s->string), s->string.len);
	entry->key_pos = key_pos;

	if (skip_space(s) < 0)
		return -1;
	if (!at(s, ':'))
		return fail_unexpected(s, "expected ':' after an object key");
	s->off++;
	if (skip_space(s) < 0)
		return -1;
	entry->value_pos = scanner_pos(s, s->off);
	struct json_object *value = NULL;
	if (scan_value(s, &value) < 0)
		return -1;
	/* json-c copies the key; it is new, so json-c need not look it up. */
	if (json_object_object_add_ex(obj, entry->key, value, JSON_C_OBJECT_ADD_KEY_IS_NEW) < 0)
		abort();
	return 0;
}

static int scan_object(struct scanner *s, struct json_object **value)
{
	size_t outer_open = s->open_off;
	if (enter_container(s) < 0)
		return -1;
	_cleanup_(json_putp) struct json_object *obj = new_container(json_object_new_object());
	struct position_index *index = json_object_get_userdata(obj);
	for (;;) {
		/* Reached after '{' or ',': a '}' here is an empty object or
		 * the one trailing comma JSONC allows. */
		if (skip_space(s) < 0)
			return -1;
		if (at(s, '}'))
			break;
		if (scan_member(s, obj, index) < 0)
			return -1;
		if (skip_space(s) < 0)
			return -1;
		if (at(s, '}'))
			break;
		if (!at(s, ','))
			return fail_unexpected(s, "expected ',' or '}' after an object member");
		s->off++;
	}
	leave_container(s, outer_open);
	*value = steal_ptr(&obj);
	return 0;
}

static int scan_array(struct scanner *s, struct json_object **value)
{
	size_t outer_open = s->open_off;
	if (enter_container(s) < 0)
		return -1;
	_cleanup_(json_putp) struct json_object *arr = new_container(json_object_new_array());
	struct position_index *index = json_object_get_userdata(arr);
	for (;;) {
		/* As in scan_object: ']' right after '[' or ','. */
		if (skip_space(s) < 0)
			return -1;
		if (at(s, ']'))
			break;
		if (at(s, ','))
			return fail_at(s, s->off, "unexpected ','; expected a value or ']'");
		position_index_add(index)->value_pos = scanner_pos(s, s->off);
		struct json_object *element = NULL;
		if (scan_value(s, &element) < 0)
			return -1;
		if (json_object_array_add(arr, element) < 0)
			abort();
		if (skip_space(s) < 0)
			return -1;
		if (at(s, ']'))
			break;
		if (!at(s, ','))
			return fail_unexpected(s, "expected ',' or ']' after an array element");
		s->off++;
	}
	leave_container(s, outer_open);
	*value = steal_ptr(&arr);
	return 0;
}

/* The value at s->off, as a new reference in *value (NULL for null). */
static int scan_value(struct scanner *s, struct json_object **value)
{
	if (s->off >= s->len)
		return fail_eof(s);
	unsigned char c = s->text[s->off];
	switch (c) {
	case '{':
		return scan_object(s, value);
	case '[':
		return scan_array(s, value);
	case '"':
		return scan_string_value(s, value);
	case '-':
	case '0' ... '9':
		return scan_number(s, value);
	case '\'':
		return fail_at(s, s->off, "single-quoted strings are not JSON; use double quotes");
	case '+':
		return fail_at(s, s->off, "numbers cannot start with '+'");
	case '.':
		return fail_at(s, s->off, "numbers need a digit before '.' (write 0.5, not .5)");
	}
	if (is_word_char(c))
		return scan_word(s, value);
	return fail_unexpected(s, "expected a value");
}

static int scan_document(struct scanner *s, struct json_object **value)
{
	if (s->len >= 3 && memcmp(s->text, "\xEF\xBB\xBF", 3) == 0)
		return fail_at(s, 0,
			       "byte order mark at the start; save the file as UTF-8 without one");
	if (skip_space(s) < 0 || scan_value(s, value) < 0 || skip_space(s) < 0)
		return -1;
	if (s->off < s->len)
		return fail_unexpected(s, "unexpected content after the root value");
	return 0;
}

int jsonc_parse(const char *text, size_t len, struct json_object **root, struct error *err)
{
	*root = NULL;
	/* json-c sizes strings with an int; the bound also keeps every line
	 * and column number within an unsigned. */
	if (len >= INT_MAX)
		return error_set(err, ERROR_CONFIG, "1:1: document is too large (%zu bytes)", len);

	_cleanup_(scanner_release) struct scanner s = {
	    .text = (const unsigned char *)text,
	    .len = len,
	    .err = err,
	    .string = STRBUF_INIT,
	    .cursor = {.line = 1, .column = 1},
	};
	_cleanup_(json_putp) struct json_object *value = NULL;
	if (scan_document(&s, &value) < 0)
		return -1;
	*root = steal_ptr(&value);
	return 0;
}

/* Only this file sets userdata on objects and arrays (json-c itself uses it
 * only on doubles, for their original text). */
static const struct position_index *index_of(struct json_object *value, enum json_type type)
{
	if (!value || json_object_get_type(value) != type)
		return NULL;
	return json_object_get_userdata(value);
}

bool jsonc_member_pos(struct json_object *obj, const char *key, struct jsonc_pos *key_pos,
		      struct jsonc_pos *value_pos)
{
	const struct position_index *index = index_of(obj, json_type_object);
	if (!index || !key)
		return false;
	const struct position_entry *entry = position_index_find(index, key);
	if (!entry)
		return false;
	if (key_pos)
		*key_pos = entry->key_pos;
	if (value_pos)
		*value_pos = entry->value_pos;
	return true;
}

bool jsonc_element_pos(struct json_object *arr, size_t index, struct jsonc_pos *pos)
{
	const struct position_index *positions = index_of(arr, json_type_array);
	if (!positions || index >= positions->len)
		return false;
	if (pos)
		*pos = positions->entries[index].value_pos;
	return true;
}
