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

/* Whether the text read so far is inside a quoted string of its config
 * line, followed forward as the scan goes (a line end that no backslash
 * continues closes any quote). */
struct quoting {
	const char *pos;
	bool quoted;
};

static bool quoted_at(struct quoting *q, const char *to)
{
	for (; q->pos < to; q->pos++) {
		if (*q->pos == '\\')
			q->pos++;
		else if (*q->pos == '"')
			q->quoted = !q->quoted;
		else if (*q->pos == '\n')
			q->quoted = false;
	}
	return q->quoted;
}

/* Where a URL's authority ends: where git's credential_from_url ends it,
 * at the path, query or fragment, or where its value ends (a line end, a
 * comment outside quotes). Git reads a value with its quotes removed and
 * its escapes resolved, and a password may hold spaces, "'" and ";", so
 * none of these ends it ("u:TO\"K\"@h", "u:a;b@h" quoted, a token split
 * over two lines are one user:password to git). */
static size_t authority_len(const char *p, const char *end, bool quoted)
{
	size_t n = 0;
	while (p + n < end && p[n] != '\0') {
		if (p[n] == '"') {
			quoted = !quoted;
			n++;
		} else if (p[n] == '\\' && p + n + 1 < end) {
			bool crlf = p[n + 1] == '\r' && p + n + 2 < end && p[n + 2] == '\n';
			n += crlf ? 3 : 2;
		} else if (strchr("/?#\n", p[n]) || (p[n] == ';' && !quoted)) {
			break;
		} else {
			n++;
		}
	}
	return n;
}

/* Removes [from, to) from the copy. An odd number of unescaped quotes in
 * it leaves one, so that the rest of the line is quoted as git reads it. */
static void cut(struct strbuf *out, const char *from, const char *to)
{
	bool odd = false;
	for (const char *p = from; p < to; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			odd = !odd;
	}
	if (odd)
		strbuf_addch(out, '"');
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
	struct quoting q = {text, false};
	size_t changed = 0;
	while (p + 3 <= end) {
		const char *sep = memmem(p, (size_t)(end - p), "://", 3);
		if (!sep)
			break;
		const char *scheme = sep;
		while (scheme > copied && is_scheme_char(scheme[-1]))
			scheme--;
		const char *auth = sep + 3;
		size_t alen = authority_len(auth, end, quoted_at(&q, auth));
		const char *at = alen ? memrchr(auth, '@', alen) : NULL;
		/* An authority may end at the "://" of the next URL: its
		 * scheme's ":" is searched again. */
		p = auth + alen;
		if (alen && p[-1] == ':')
			p--;
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
		cut(out, cut_from, cut_to);
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

/* What of a value to remove, as [*from, *to): false to keep it all. */
typedef bool value_cut(const char *v, const char *ve, const char **from, const char **to);

/* The whole value of an extraHeader. */
static bool whole_value(const char *v, const char *ve, const char **from, const char **to)
{
	*from = v;
	*to = ve;
	return ve > v;
}

/* An inline credential helper ("!f() { echo password=T; }; f"), as CI
 * guides write one, holds the password itself: the helper goes whole. */
static bool helper_with_password(const char *v, const char *ve, const char **from, const char **to)
{
	static const char needle[] = "password=";
	for (const char *p = v; p + sizeof(needle) - 1 <= ve; p++)
		if (!strncasecmp(p, needle, sizeof(needle) - 1))
			return whole_value(v, ve, from, to);
	return false;
}

/* A proxy may be written without a scheme, "user:password@host:port",
 * which git reads as an http:// one (http.proxy, http.<url>.proxy,
 * remote.<name>.proxy): its user information goes as a URL's would. With
 * a scheme, the URL pass has removed it already. */
static bool proxy_userinfo(const char *v, const char *ve, const char **from, const char **to)
{
	if (memmem(v, (size_t)(ve - v), "://", 3))
		return false;
	const char *host = v;
	while (host < ve && *host == '"')
		host++;
	const char *stop = host;
	while (stop < ve && !memchr("/?#", *stop, 3))
		stop++;
	const char *at = stop > host ? memrchr(host, '@', (size_t)(stop - host)) : NULL;
	if (!at)
		return false;
	*from = host;
	*to = at + 1;
	return true;
}

/* Each value of key (any case) in text goes to out with what cut_of says
 * removed; returns how many were changed. */
static size_t strip_values(const char *text, size_t len, const char *key, value_cut *cut_of,
			   struct strbuf *out)
{
	const size_t klen = strlen(key);
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
		const char *ve = value_end(v, end), *from, *to;
		/* What a value holds is not a key, cut or not. */
		p = ve;
		/* A lone quote is what a cut leaves: nothing to remove. */
		if (!cut_of(v, ve, &from, &to) || (to - from == 1 && *from == '"'))
			continue;
		strbuf_add(out, copied, (size_t)(from - copied));
		cut(out, from, to);
		copied = to;
		changed++;
	}
	strbuf_add(out, copied, (size_t)(end - copied));
	return changed;
}

/* One round of the three passes. */
static size_t strip_round(const char *text, size_t len, struct strbuf *out)
{
	struct strbuf urls = STRBUF_INIT, headers = STRBUF_INIT, helpers = STRBUF_INIT;
	size_t changed = strip_urls(text, len, &urls);
	changed +=
	    strip_values(urls.buf ? urls.buf : "", urls.len, "extraheader", whole_value, &headers);
	changed += strip_values(headers.buf ? headers.buf : "", headers.len, "helper",
				helper_with_password, &helpers);
	changed +=
	    strip_values(helpers.buf ? helpers.buf : "", helpers.len, "proxy", proxy_userinfo, out);
	strbuf_release(&urls);
	strbuf_release(&headers);
	strbuf_release(&helpers);
	return changed;
}

/* A cut by one pass can join text that another pass then reads as a URL
 * or a value (quotes and line ends read differently in malformed lines),
 * so the rounds go on until one changes nothing. Every change shortens the
 * text; the cap bounds what a crafted file costs. */
#define STRIP_ROUNDS_MAX 16

size_t git_strip_url_credentials(const char *text, size_t len, struct strbuf *out)
{
	struct strbuf cur = STRBUF_INIT;
	size_t changed = strip_round(text, len, &cur);
	for (int round = 1; changed && round < STRIP_ROUNDS_MAX; round++) {
		struct strbuf next = STRBUF_INIT;
		size_t more = strip_round(cur.buf ? cur.buf : "", cur.len, &next);
		strbuf_release(&cur);
		cur = next;
		if (!more)
			break;
		changed += more;
	}
	strbuf_add(out, cur.buf ? cur.buf : "", cur.len);
	strbuf_release(&cur);
	return changed;
}
