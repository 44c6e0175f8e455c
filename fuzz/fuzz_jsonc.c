/* libFuzzer target for the JSONC front end. Every input must either be
 * rejected with a message that points inside the input, or yield a tree in
 * which every member and element has a position that lands on the first
 * character of its key or value, and in which no key or string holds a
 * character a terminal acts on or hides (term_escape_unsafe). An accepted
 * document must also be one that json-c's own parser reads to the same
 * values, so the scanner cannot drift from what json-c would have made. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "config/jsonc.h"
#include "base/term_escape.h"
#include "base/utf8.h"
#include "base/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Turns line:column back into a byte offset, independently of jsonc.c. */
struct text_map {
	const uint8_t *data;
	size_t size;
	size_t *code_points; /* byte offset of every code point */
	size_t n_code_points;
	size_t *line_starts; /* index into code_points of each line's first one */
	size_t n_lines;
};

static void text_map_init(struct text_map *map, const uint8_t *data, size_t size)
{
	*map = (struct text_map){.data = data, .size = size};
	map->code_points = xreallocarray(NULL, size + 1, sizeof(*map->code_points));
	map->line_starts = xreallocarray(NULL, size + 1, sizeof(*map->line_starts));
	map->line_starts[map->n_lines++] = 0;
	for (size_t i = 0; i < size; i++) {
		if ((data[i] & 0xC0) == 0x80)
			continue;
		map->code_points[map->n_code_points++] = i;
		if (data[i] == '\n')
			map->line_starts[map->n_lines++] = map->n_code_points;
	}
}

static void text_map_release(struct text_map *map)
{
	free(map->code_points);
	free(map->line_starts);
}

/* The offset of pos; the end of the input when allow_end and pos is there. */
static size_t text_map_offset(const struct text_map *map, struct jsonc_pos pos, bool allow_end)
{
	if (pos.line < 1 || pos.line > map->n_lines || pos.column < 1)
		abort();
	size_t first = map->line_starts[pos.line - 1];
	size_t next_line = pos.line < map->n_lines ? map->line_starts[pos.line] : SIZE_MAX;
	size_t index = first + (pos.column - 1);
	if (index < first || index >= next_line)
		abort();
	if (index < map->n_code_points)
		return map->code_points[index];
	if (allow_end && index == map->n_code_points)
		return map->size;
	abort();
}

static bool starts_value(enum json_type type, uint8_t c)
{
	switch (type) {
	case json_type_null:
		return c == 'n';
	case json_type_boolean:
		return c == 't' || c == 'f';
	case json_type_int:
	case json_type_double:
		return c == '-' || (c >= '0' && c <= '9');
	case json_type_string:
		return c == '"';
	case json_type_object:
		return c == '{';
	case json_type_array:
		return c == '[';
	}
	return false;
}

static void check_value_at(const struct text_map *map, struct json_object *value,
			   struct jsonc_pos pos)
{
	size_t off = text_map_offset(map, pos, false);
	if (!starts_value(json_object_get_type(value), map->data[off]))
		abort();
}

/* Accepted strings are printable text: valid UTF-8 without a character
 * the config loader must refuse. */
static void check_printable(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode(p + i, len - i, &cp);
		if (!n || term_escape_unsafe(cp))
			abort();
		i += n;
	}
}

static void check_tree(const struct text_map *map, struct json_object *value, unsigned depth)
{
	if (json_object_is_type(value, json_type_string))
		check_printable(json_object_get_string(value),
				(size_t)json_object_get_string_len(value));
	if (depth > 33)
		abort();
	struct jsonc_pos key_pos, value_pos;
	if (json_object_is_type(value, json_type_object)) {
		struct json_object_iterator it = json_object_iter_begin(value);
		struct json_object_iterator end = json_object_iter_end(value);
		for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
			const char *key = json_object_iter_peek_name(&it);
			check_printable(key, strlen(key));
			struct json_object *member = json_object_iter_peek_value(&it);
			if (!jsonc_member_pos(value, key, &key_pos, &value_pos))
				abort();
			size_t key_off = text_map_offset(map, key_pos, false);
			if (map->data[key_off] != '"' ||
			    key_off >= text_map_offset(map, value_pos, false))
				abort();
			check_value_at(map, member, value_pos);
			check_tree(map, member, depth + 1);
		}
	} else if (json_object_is_type(value, json_type_array)) {
		size_t len = json_object_array_length(value);
		for (size_t i = 0; i < len; i++) {
			struct json_object *element = json_object_array_get_idx(value, i);
			if (!jsonc_element_pos(value, i, &value_pos))
				abort();
			check_value_at(map, element, value_pos);
			check_tree(map, element, depth + 1);
		}
		if (jsonc_element_pos(value, len, &value_pos))
			abort();
	}
}

/* "LINE:COLUMN: message", with the position inside the input. */
static void check_error(const struct text_map *map, const struct error *err)
{
	if (err->kind != ERROR_CONFIG || !err->msg)
		abort();
	unsigned line, column;
	int consumed = 0;
	if (sscanf(err->msg, "%u:%u: %n", &line, &column, &consumed) != 2 || consumed == 0)
		abort();
	text_map_offset(map, (struct jsonc_pos){.line = line, .column = column}, true);
}

/* A NUL-terminated copy of an accepted document with its comments blanked
 * out: json-c 0.16 reads comments itself but misses the end of a block
 * comment written as two stars and a slash. Strings cannot hold a raw line
 * break, so a plain walk finds every comment. */
static char *without_comments(const uint8_t *data, size_t size)
{
	char *copy = xmalloc(size + 1);
	memcpy(copy, data, size);
	copy[size] = '\0';
	bool in_string = false;
	for (size_t i = 0; i < size; i++) {
		if (in_string) {
			if (copy[i] == '\\')
				i++;
			else if (copy[i] == '"')
				in_string = false;
		} else if (copy[i] == '"') {
			in_string = true;
		} else if (copy[i] == '/' && copy[i + 1] == '/') {
			while (i < size && copy[i] != '\n')
				copy[i++] = ' ';
		} else if (copy[i] == '/' && copy[i + 1] == '*') {
			size_t end = i + 2;
			while (!(copy[end] == '*' && copy[end + 1] == '/'))
				end++;
			memset(copy + i, ' ', end + 2 - i);
			i = end + 1;
		}
	}
	return copy;
}

static void tokener_freep(struct json_tokener **tok)
{
	if (*tok)
		json_tokener_free(*tok);
}

/* json-c (lax: it takes trailing commas) must read the same values, with
 * the same types, numbers and double text. */
static void check_same_as_json_c(const uint8_t *data, size_t size, struct json_object *root)
{
	_cleanup_free_ char *copy = without_comments(data, size);
	_cleanup_(tokener_freep) struct json_tokener *tok = json_tokener_new_ex(64);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
	struct json_object *theirs = json_tokener_parse_ex(tok, copy, (int)size + 1);
	if (json_tokener_get_error(tok) != json_tokener_success)
		abort();
	if (!json_object_equal(root, theirs))
		abort();
	_cleanup_free_ char *ours_text =
	    xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	if (strcmp(ours_text, json_object_to_json_string_ext(theirs, JSON_C_TO_STRING_PLAIN)) != 0)
		abort();
	json_object_put(theirs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_(text_map_release) struct text_map map;
	text_map_init(&map, data, size);

	_cleanup_error_ struct error err = ERROR_INIT;
	struct json_object *root = NULL;
	if (jsonc_parse((const char *)data, size, &root, &err) < 0) {
		check_error(&map, &err);
		return 0;
	}
	if (err.msg)
		abort();
	check_tree(&map, root, 0);
	check_same_as_json_c(data, size, root);
	json_object_put(root);
	return 0;
}
