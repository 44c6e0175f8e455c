/* This file reads git's config syntax the way git itself does (config.c in
 * git): one character at a time, CRLF taken as LF, a value's whitespace
 * folded unless quoted. It never opens a file and never interprets a key;
 * git_layout.c decides which keys matter. */
#include "git/config.h"

#include "policy/env.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

struct reader {
	const char *text;
	size_t len, pos;
};

/* The next character, with "\r\n" read as "\n", and the end of the input
 * read as a final "\n" (eof tells the two apart). A NUL byte reads as -2:
 * git refuses it, and so do we. */
static int next_char(struct reader *r, bool *eof)
{
	*eof = false;
	if (r->pos >= r->len) {
		*eof = true;
		return '\n';
	}
	unsigned char c = (unsigned char)r->text[r->pos++];
	if (c == '\r' && r->pos < r->len && r->text[r->pos] == '\n')
		c = (unsigned char)r->text[r->pos++];
	if (c == '\0')
		return -2;
	return c;
}

static bool is_key_char(int c)
{
	return c >= 0 && c < 128 && (isalnum(c) || c == '-');
}

/* `[section]`, `[section "subsection"]` or the old `[section.subsection]`;
 * the '[' is already read. The key prefix ("section." or
 * "section.subsection.") is left in key. */
static int read_section(struct reader *r, struct strbuf *key)
{
	bool eof;
	strbuf_reset(key);
	for (;;) {
		int c = next_char(r, &eof);
		if (eof || c < 0)
			return -1;
		if (c == ']')
			break;
		if (c == ' ' || c == '\t') {
			do
				c = next_char(r, &eof);
			while (!eof && (c == ' ' || c == '\t'));
			if (c != '"' || key->len == 0)
				return -1;
			strbuf_addch(key, '.');
			for (;;) {
				c = next_char(r, &eof);
				if (eof || c < 0 || c == '\n')
					return -1;
				if (c == '"')
					break;
				if (c == '\\') {
					c = next_char(r, &eof);
					if (eof || c < 0 || c == '\n')
						return -1;
				}
				strbuf_addch(key, (char)c);
			}
			if (next_char(r, &eof) != ']' || eof)
				return -1;
			break;
		}
		if (!is_key_char(c) && c != '.')
			return -1;
		strbuf_addch(key, (char)tolower(c));
	}
	if (key->len == 0)
		return -1;
	strbuf_addch(key, '.');
	return 0;
}

/* A value after "=": quotes toggle, whitespace outside them is folded to
 * single spaces between words and dropped at the ends, '#' and ';' outside
 * them start a comment, and a backslash escapes n, t, b, '"', '\\' or the
 * end of the line (a continuation). */
static int read_value(struct reader *r, struct strbuf *value)
{
	bool quoted = false, comment = false, eof;
	size_t spaces = 0;
	strbuf_reset(value);
	for (;;) {
		int c = next_char(r, &eof);
		if (c < 0)
			return -1;
		if (c == '\n') {
			if (quoted)
				return -1;
			return 0;
		}
		if (comment)
			continue;
		if (!quoted && isspace(c)) {
			if (value->len)
				spaces++;
			continue;
		}
		if (!quoted && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; spaces; spaces--)
			strbuf_addch(value, ' ');
		if (c == '\\') {
			c = next_char(r, &eof);
			if (c < 0)
				return -1;
			switch (c) {
			case '\n':
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return -1;
			}
			strbuf_addch(value, (char)c);
			continue;
		}
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		strbuf_addch(value, (char)c);
	}
}

/* A variable line; its first character c is already read. */
static int read_variable(struct reader *r, int c, struct strbuf *key, struct strbuf *value,
			 git_config_fn fn, void *data)
{
	size_t prefix = key->len;
	bool eof = false;
	while (is_key_char(c)) {
		strbuf_addch(key, (char)tolower(c));
		c = next_char(r, &eof);
		if (eof)
			break;
	}
	while (!eof && (c == ' ' || c == '\t'))
		c = next_char(r, &eof);
	int ret;
	if (c == '\n') {
		ret = fn(key->buf, NULL, data);
	} else if (c != '=') {
		ret = -1;
	} else if (read_value(r, value) < 0) {
		ret = -1;
	} else {
		ret = fn(key->buf, strbuf_str(value), data);
	}
	strbuf_setlen(key, prefix);
	return ret;
}

static int ignore(const char *key, const char *value, void *data)
{
	return 0;
}

int git_config_parse(const char *text, size_t len, git_config_fn fn, void *data)
{
	struct reader r = {.text = text, .len = len};
	/* A UTF-8 byte order mark is skipped, as git does. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
		r.pos = 3;
	_cleanup_strbuf_ struct strbuf key = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf value = STRBUF_INIT;
	bool in_section = false, eof;
	for (;;) {
		int c = next_char(&r, &eof);
		if (eof)
			return 0;
		if (c < 0)
			return -1;
		if (c == '\n' || isspace(c))
			continue;
		if (c == '#' || c == ';') {
			while (!eof && c != '\n' && c >= 0)
				c = next_char(&r, &eof);
			if (c < 0)
				return -1;
			continue;
		}
		if (c == '[') {
			if (read_section(&r, &key) < 0)
				return -1;
			in_section = true;
			continue;
		}
		if (c >= 128 || !isalpha(c))
			return -1;
		/* git accepts a variable before any section header, under a
		 * key no setting has; it is read and not reported. */
		int ret = read_variable(&r, c, &key, &value, in_section ? fn : ignore, data);
		if (ret)
			return ret;
	}
}

static const char *env_or(char *const *envp, const char *var)
{
	const char *value = envp ? env_get(envp, var) : NULL;
	return value && *value ? value : NULL;
}

void git_config_files(char *const *envp, const char *home, const char *git_dir, const char *common,
		      struct strv *out)
{
	const char *system = env_or(envp, "GIT_CONFIG_SYSTEM");
	strv_push(out, system ? system : "/etc/gitconfig");
	if (home) {
		const char *global = env_or(envp, "GIT_CONFIG_GLOBAL");
		if (global)
			strv_push(out, global);
		else
			strv_pushf(out, "%s/.gitconfig", home);
		const char *xdg = env_or(envp, "XDG_CONFIG_HOME");
		if (xdg)
			strv_pushf(out, "%s/git/config", xdg);
		else
			strv_pushf(out, "%s/.config/git/config", home);
	}
	if (common)
		strv_pushf(out, "%s/config", common);
	if (git_dir)
		strv_pushf(out, "%s/config.worktree", git_dir);
}

char *git_config_include_path(const char *key, const char *value, const char *file,
			      const char *home)
{
	if (!value || !value[0])
		return NULL;
	const char *name = strrchr(key, '.');
	if (!name || strcmp(name, ".path") != 0)
		return NULL;
	if (strcmp(key, "include.path") != 0 && strncmp(key, "includeif.", 10) != 0)
		return NULL;
	if (value[0] == '~') {
		if ((value[1] != '\0' && value[1] != '/') || !home)
			return NULL;
		return xasprintf("%s%s", home, value + 1);
	}
	if (value[0] == '/')
		return xstrdup(value);
	const char *slash = strrchr(file, '/');
	if (!slash)
		return xstrdup(value);
	return xasprintf("%.*s/%s", (int)(slash - file), file, value);
}
