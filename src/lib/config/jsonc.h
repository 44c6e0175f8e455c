/* JSONC documents (JSON plus comments and trailing commas). One strict
 * scanner reads the text once, builds json-c values and records where every
 * member and element starts, so that config errors can name line and column.
 * Duplicate keys, single quotes, NaN/Infinity, leading zeros and raw control
 * characters in strings are errors here even though json-c tolerates them;
 * so are strings holding what a terminal acts on or hides (controls, bidi,
 * invisible characters; term_escape.h), raw or escaped. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/error.h"

struct jsonc_pos {
	unsigned line;	 /* 1-based */
	unsigned column; /* 1-based, in characters (UTF-8 code points) */
};

/* Parses text (not necessarily NUL-terminated). On success *root is a new
 * reference (release with json_object_put) carrying the position index. On
 * failure err->msg is "LINE:COLUMN: what was expected" and err->code is
 * ERROR_CONFIG; the caller puts the file name in front. */
int jsonc_parse(const char *text, size_t len, struct json_object **root, struct error *err);

/* Where member `key` of object `obj` (a value from jsonc_parse) starts: its
 * name and its value. False when obj has no such member or no index. */
bool jsonc_member_pos(struct json_object *obj, const char *key, struct jsonc_pos *key_pos,
		      struct jsonc_pos *value_pos);

/* Where element `index` of array `arr` starts. */
bool jsonc_element_pos(struct json_object *arr, size_t index, struct jsonc_pos *pos);
