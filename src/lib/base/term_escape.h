/* Making strings from outside the program (config values, file names, host
 * names, audit fields, command arguments) safe to print on a terminal: every
 * printer passes them through here, so none of them can move the cursor,
 * recolour, retitle, reorder or hide text, or forge a line of our output. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

enum term_escape_mode {
	/* An outside string: everything that is not printable text becomes a
	 * visible escape (\n, \t, \e, \x7f, \u202e, \xNN for a byte that is
	 * not UTF-8), and a backslash becomes \\ so the result reads back
	 * unambiguously. */
	TERM_ESCAPE_STRING,
	/* Text we composed, with the outside strings in it escaped already:
	 * '\n' ends our own lines and backslashes are left alone (they are
	 * our escapes); anything else unsafe is escaped as above. The last
	 * line of defence before a write, a no-op on correct text. */
	TERM_ESCAPE_LINES,
	/* A JSON text to print as it is: the same characters become JSON
	 * escapes (\u001b, \u202e; a byte that is not UTF-8 becomes \ufffd), so
	 * the result is still JSON with the same meaning. */
	TERM_ESCAPE_JSON,
};

/* Appends s[0..len) to sb, escaped for mode. Reads no byte past len. */
void term_escape_mode_add(struct strbuf *sb, const char *s, size_t len, enum term_escape_mode mode);

/* Appends an outside string (TERM_ESCAPE_STRING); NULL appends "(null)". */
void term_escape_add(struct strbuf *sb, const char *s);

/* The same as a new string. */
char *term_escape(const char *s);

/* True for the code points a terminal acts on or does not show: C0
 * controls, DEL, C1 controls, bidirectional controls, and invisible format
 * characters (zero-width spaces and joiners, fillers, tags, ...). The
 * config loader refuses strings with these. */
bool term_escape_unsafe(uint32_t code_point);

/* For an unsafe code point, what it is ("control character", "bidirectional
 * control", "invisible character"); NULL for any other. */
const char *term_escape_kind(uint32_t code_point);
