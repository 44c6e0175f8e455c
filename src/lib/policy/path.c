/* Path expansion, glob expansion and symlink resolution. This file reads the
 * filesystem (lstat, readlink, readdir) but never changes it. */
#include "policy/path.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "policy/pattern.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#define MAX_SYMLINK_HOPS 40

/* Appends s segment by segment; with `escape`, glob characters in it are
 * escaped so that a home or working directory named "a[1]" stays literal. */
static void append_normalized(struct strbuf *sb, const char *s, bool escape)
{
	while (*s) {
		const char *slash = strchrnul(s, '/');
		size_t n = (size_t)(slash - s);
		if (n && !(n == 1 && s[0] == '.')) {
			if (sb->len == 0 || sb->buf[sb->len - 1] != '/')
				strbuf_addch(sb, '/');
			if (escape) {
				_cleanup_free_ char *raw = xstrndup(s, n);
				_cleanup_free_ char *escaped = pattern_escape(raw);
				strbuf_addstr(sb, escaped);
			} else {
				strbuf_add(sb, s, n);
			}
		}
		s = *slash ? slash + 1 : slash;
	}
}

int path_expand(const char *text, const char *home, const char *cwd, char **out, struct error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (!*text)
		return error_set(err, ERROR_CONFIG, "empty path");
	if (text[0] == '~') {
		if (text[1] && text[1] != '/')
			return error_set(err, ERROR_CONFIG,
					 "\"%s\": only \"~\" and \"~/...\" are supported, not "
					 "\"~user\"",
					 text);
		if (!home)
			return error_set(err, ERROR_CONFIG,
					 "\"%s\": the home directory is not known (HOME is unset)",
					 text);
		append_normalized(&sb, home, true);
		append_normalized(&sb, text + 1, false);
	} else if (text[0] == '/') {
		append_normalized(&sb, text, false);
	} else {
		append_normalized(&sb, cwd, true);
		append_normalized(&sb, text, false);
	}
	if (sb.len == 0)
		strbuf_addch(&sb, '/');
	*out = strbuf_detach(&sb);
	return 0;
}

static int read_link_sized(const char *path, size_t hint, char **out)
{
	size_t size = hint ? hint + 1 : 128;
	for (;;) {
		char *buf = xmalloc(size);
		ssize_t n = readlink(path, buf, size);
		if (n < 0) {
			int saved = errno;
			free(buf);
			return -saved;
		}
		if ((size_t)n < size) {
			buf[n] = '\0';
			*out = buf;
			return 0;
		}
		free(buf);
		size *= 2;
	}
}

int path_read_link(const char *path, char **out)
{
	return read_link_sized(path, 0, out);
}

/* missing: when a component does not exist, where the path would be (the
 * part resolved so far and the rest as written); -EINVAL in place of
 * -ENOENT when the rest climbs with "..", which says nothing then. */
static int resolve(const char *abs, char **out, struct strv *links, struct stat *final,
		   char **missing)
{
	_cleanup_strbuf_ struct strbuf resolved = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf rest = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf candidate = STRBUF_INIT;
	int hops = 0;
	/* The lstat of the last component walked, when it names the result:
	 * the identity of what the caller decides on. */
	bool have_final = false;

	if (abs[0] != '/')
		return -EINVAL;
	strbuf_addstr(&rest, abs);
	size_t pos = 0;
	while (pos < rest.len) {
		const char *start = rest.buf + pos;
		const char *slash = strchrnul(start, '/');
		size_t n = (size_t)(slash - start);
		pos += n + (*slash ? 1 : 0);
		if (n == 0 || (n == 1 && start[0] == '.'))
			continue;
		if (n == 2 && start[0] == '.' && start[1] == '.') {
			char *last = strrchr(strbuf_str(&resolved), '/');
			if (last)
				strbuf_setlen(&resolved, (size_t)(last - resolved.buf));
			have_final = false;
			continue;
		}
		strbuf_reset(&candidate);
		strbuf_addstr(&candidate, strbuf_str(&resolved));
		strbuf_addch(&candidate, '/');
		strbuf_add(&candidate, start, n);

		struct stat st;
		if (lstat(candidate.buf, &st) < 0) {
			int e = errno;
			if (e != ENOENT || !missing)
				return -e;
			const char *left = rest.buf + pos;
			size_t left_len = strlen(left);
			if (!strcmp(left, "..") || !strncmp(left, "../", 3) ||
			    strstr(left, "/../") ||
			    (left_len >= 3 && !strcmp(left + left_len - 3, "/..")))
				return -EINVAL;
			*missing = xasprintf("%s%s%s", candidate.buf, *left ? "/" : "", left);
			/* Trailing or doubled slashes in the rest are not part of a name. */
			size_t end = strlen(*missing);
			while (end > 1 && (*missing)[end - 1] == '/')
				(*missing)[--end] = '\0';
			return -ENOENT;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++hops > MAX_SYMLINK_HOPS)
				return -ELOOP;
			_cleanup_free_ char *target = NULL;
			int r = read_link_sized(candidate.buf, (size_t)st.st_size, &target);
			if (r < 0)
				return r;
			if (links)
				strv_push(links, candidate.buf);
			/* Splice the target in front of what is left. */
			_cleanup_strbuf_ struct strbuf next = STRBUF_INIT;
			strbuf_addstr(&next, target);
			strbuf_addch(&next, '/');
			strbuf_addstr(&next, rest.buf + pos);
			strbuf_reset(&rest);
			strbuf_addstr(&rest, next.buf);
			pos = 0;
			if (target[0] == '/')
				strbuf_reset(&resolved);
			continue;
		}
		/* Anything after a non-directory is an error, as for open(2). */
		if (!S_ISDIR(st.st_mode) && rest.buf[pos + strspn(rest.buf + pos, "/")] != '\0')
			return -ENOTDIR;
		*final = st;
		have_final = true;
		strbuf_reset(&resolved);
		strbuf_addstr(&resolved, candidate.buf);
	}
	if (resolved.len == 0)
		strbuf_addch(&resolved, '/');
	/* The root, or a directory reached through "..": a symlink there now
	 * means it was swapped while we walked. */
	if (!have_final && lstat(resolved.buf, final) < 0)
		return -errno;
	if (S_ISLNK(final->st_mode))
		return -ELOOP;
	*out = strbuf_detach(&resolved);
	return 0;
}

int path_resolve(const char *abs, char **out, struct strv *links, bool *is_dir)
{
	struct stat st;
	int r = resolve(abs, out, links, &st, NULL);
	if (r == 0 && is_dir)
		*is_dir = S_ISDIR(st.st_mode);
	return r;
}

int path_resolve_stat(const char *abs, char **out, struct strv *links, struct stat *final)
{
	return resolve(abs, out, links, final, NULL);
}

int path_resolve_or_locate(const char *abs, char **out, struct strv *links, struct stat *final,
			   char **missing)
{
	return resolve(abs, out, links, final, missing);
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void glob_segment(const char *prefix, const char *segment, struct strv *out)
{
	DIR *dir = opendir(prefix);
	if (!dir)
		return;
	size_t first = out->len;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (pattern_match_segment(segment, de->d_name))
			strv_pushf(out, "%s%s%s", prefix, strcmp(prefix, "/") ? "/" : "",
				   de->d_name);
	}
	closedir(dir);
	if (out->len - first > 1)
		qsort(out->items + first, out->len - first, sizeof(char *), compare_strings);
}

void path_glob(const char *pattern, struct strv *out)
{
	_cleanup_strv_ struct strv current = STRV_INIT;
	strv_push(&current, "/");

	const char *s = pattern;
	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *slash = strchrnul(s, '/');
		_cleanup_free_ char *segment = xstrndup(s, (size_t)(slash - s));
		s = slash;

		_cleanup_strv_ struct strv next = STRV_INIT;
		if (pattern_has_glob(segment)) {
			for (size_t i = 0; i < current.len; i++)
				glob_segment(current.items[i], segment, &next);
		} else {
			_cleanup_free_ char *literal = pattern_unescape(segment);
			for (size_t i = 0; i < current.len; i++) {
				const char *p = current.items[i];
				strv_pushf(&next, "%s%s%s", p, strcmp(p, "/") ? "/" : "", literal);
			}
		}
		strv_release(&current);
		current = next;
		next = (struct strv)STRV_INIT;
	}
	for (size_t i = 0; i < current.len; i++) {
		struct stat st;
		if (lstat(current.items[i], &st) == 0)
			strv_push(out, current.items[i]);
	}
}

bool path_is_within(const char *path, const char *dir)
{
	if (!strcmp(dir, "/"))
		return path[0] == '/';
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int path_compare(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;
	/* '/' sorts before every other byte so that "a/b" < "a-b" < "a.b",
	 * which keeps a directory's subtree directly after it. */
	if (ca == '/')
		ca = 1;
	if (cb == '/')
		cb = 1;
	return (int)ca - (int)cb;
}

int path_resolve_missing(const char *abs, char **out)
{
	char *resolved = NULL;
	struct stat st;
	int r = resolve(abs, &resolved, NULL, &st, out);
	if (r == 0) {
		free(resolved);
		return -EEXIST;
	}
	return r == -ENOENT ? 0 : r;
}
