/* This file removes credentials from a git config file's text: from URLs,
 * and the values of http.extraHeader (where CI checkouts keep their token
 * as "AUTHORIZATION: basic ..."). It works on bytes, not on git's syntax: a
 * URL is found wherever "://" follows a scheme, in values and in section
 * names ([url "..."] insteadOf, [credential "..."]) alike, so that no
 * spelling git accepts hides one. */
#include "git/url_credentials.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

static bool is_scheme_char(char c)
{
	return isalnum((unsigned char)c) || c == '+' || c == '-' || c == '.';
}

/* Where a URL's authority ends: at the path, query or fragment, or at what
 * ends a value or a quoted section name in a config file. Git reads a value
 * with its quotes removed and its escapes resolved, so a quote, an escaped
 * character or an escaped line end inside the authority does not end it
 * here either ("u:TO\"K\"@h" and a token split over two lines are one
 * user:password to git). */
static size_t authority_len(const char *p, const char *end)
{
	size_t n = 0;
	while (p + n < end && p[n] != '\0') {
		if (p[n] == '"') {
			n++;
		} else if (p[n] == '\\' && p + n + 1 < end) {
			bool crlf = p[n + 1] == '\r' && p + n + 2 < end && p[n + 2] == '\n';
			n += crlf ? 3 : 2;
		} else if (strchr("/?#\\' \t\r\n;", p[n])) {
			break;
		} else {
			n++;
		}
	}
	return n;
}

/* Schemes whose user name may be the token itself. */
static bool drops_user(const char *scheme, size_t len)
{
	static const char *const schemes[] = {"http", "https", "ftp", "ftps"};
	for (size_t i = 0; i < sizeof(schemes) / sizeof(*schemes); i++)
		if (strlen(schemes[i]) == len && !strncasecmp(scheme, schemes[i], len))
			return true;
	return false;
}

static size_t strip_urls(const char *text, size_t len, struct strbuf *out)
{
	const char *p = text, *end = text + len, *copied = text;
	size_t changed = 0;
	while (p + 3 <= end) {
		const char *sep = memmem(p, (size_t)(end - p), "://", 3);
		if (!sep)
			break;
		const char *scheme = sep;
		while (scheme > copied && is_scheme_char(scheme[-1]))
			scheme--;
		const char *auth = sep + 3;
		size_t alen = authority_len(auth, end);
		const char *at = alen ? memrchr(auth, '@', alen) : NULL;
		p = auth + alen;
		if (scheme == sep || !at)
			continue;
		const char *cut_from = auth;
		if (!drops_user(scheme, (size_t)(sep - scheme))) {
			cut_from = memchr(auth, ':', (size_t)(at - auth));
			if (!cut_from)
				continue;
		}
		/* Keep the "@" only when the user name stays. */
		const char *cut_to = cut_from == auth ? at + 1 : at;
		strbuf_add(out, copied, (size_t)(cut_from - copied));
		copied = cut_to;
		changed++;
	}
	strbuf_add(out, copied, (size_t)(end - copied));
	return changed;
}

/* Where the value that starts at p ends: at the end of its line, or at a
 * comment outside quotes. A backslash escapes the next byte, a line end
 * included, which continues the value on the next line, as git reads it. */
static const char *value_end(const char *start, const char *end)
{
	const char *p = start;
	bool quoted = false;
	while (p < end && *p != '\n') {
		if (*p == '\\' && p + 1 < end) {
			p += 2;
			continue;
		}
		if (*p == '"')
			quoted = !quoted;
		else if (!quoted && (*p == '#' || *p == ';'))
			break;
		p++;
	}
	/* A value ends before the spaces and the \r that close its line. */
	while (p > start && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r'))
		p--;
	return p;
}

/* The key extraHeader (any case) where a key may start: first on its
 * line, or after the "]" of a section header on the same line. A value
 * that merely contains the word is rarely more than that, and losing it in
 * the copy costs less than showing a header that carries a token. */
static bool is_key_start(const char *text, const char *k)
{
	const char *q = k;
	while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	return q == text || q[-1] == '\n' || q[-1] == ']';
}

static size_t strip_extra_headers(const char *text, size_t len, struct strbuf *out)
{
	static const char key[] = "extraheader";
	const size_t klen = sizeof(key) - 1;
	const char *p = text, *end = text + len, *copied = text;
	size_t changed = 0;
	while ((size_t)(end - p) >= klen) {
		if (strncasecmp(p, key, klen) != 0 || !is_key_start(text, p)) {
			p++;
			continue;
		}
		const char *v = p + klen;
		p = v;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		if (v >= end || *v != '=')
			continue;
		v++;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		const char *ve = value_end(v, end);
		if (ve <= v)
			continue;
		strbuf_add(out, copied, (size_t)(v - copied));
		copied = ve;
		p = ve;
		changed++;
	}
	strbuf_add(out, copied, (size_t)(end - copied));
	return changed;
}

size_t git_strip_url_credentials(const char *text, size_t len, struct strbuf *out)
{
	struct strbuf urls = STRBUF_INIT;
	size_t changed = strip_urls(text, len, &urls);
	changed += strip_extra_headers(urls.buf ? urls.buf : "", urls.len, out);
	strbuf_release(&urls);
	return changed;
}
