/* This file reads git's index just far enough to list its gitlinks: the
 * entries (mode 160000) that make `git status` descend into a submodule
 * and run git there, with that repository's configuration. The index is
 * written inside the sandbox, so it is untrusted input: every length is
 * checked against the buffer, and anything odd makes it unreadable rather
 * than half read. Format: git's Documentation/gitformat-index.txt,
 * versions 2 to 4, SHA-1 or SHA-256 object names. */
#include "git/index.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#define ENTRY_FIXED 40 /* ctime, mtime, dev, ino, mode, uid, gid, size */
#define MODE_GITLINK 0160000u
#define FLAG_EXTENDED 0x4000u
#define NAME_MASK 0x0fffu

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* git's offset varint (varint.c): 7 bits a byte, each continuation adds 1. */
static int read_varint(const unsigned char **p, const unsigned char *end, size_t *out)
{
	const unsigned char *s = *p;
	if (s >= end)
		return -1;
	unsigned char c = *s++;
	size_t v = c & 127;
	while (c & 128) {
		if (s >= end || v > (SIZE_MAX >> 8))
			return -1;
		c = *s++;
		v = ((v + 1) << 7) | (c & 127);
	}
	*p = s;
	*out = v;
	return 0;
}

/* The extensions after the entries: only "link" (a split index) matters,
 * naming the shared index that holds the other entries. */
static void read_extensions(const unsigned char *p, const unsigned char *end, size_t hash_len,
			    char *shared)
{
	while ((size_t)(end - p) >= 8 + hash_len) {
		uint32_t size = be32(p + 4);
		if ((size_t)(end - p) - 8 - hash_len < size)
			return;
		if (!memcmp(p, "link", 4) && size >= hash_len) {
			for (size_t i = 0; i < hash_len; i++)
				snprintf(shared + 2 * i, 3, "%02x", p[8 + i]);
			return;
		}
		p += 8 + size;
	}
}

static int parse(const unsigned char *buf, size_t len, size_t hash_len, struct strv *out,
		 char *shared)
{
	if (len < 12 || memcmp(buf, "DIRC", 4) != 0)
		return -1;
	uint32_t version = be32(buf + 4);
	uint32_t count = be32(buf + 8);
	if (version < 2 || version > 4)
		return -1;
	const unsigned char *p = buf + 12, *end = buf + len;
	_cleanup_strbuf_ struct strbuf name = STRBUF_INIT;
	size_t replaced = 0, replaced_gitlinks = 0;
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *entry = p;
		if ((size_t)(end - p) < ENTRY_FIXED + hash_len + 2)
			return -1;
		uint32_t mode = be32(p + 24);
		p += ENTRY_FIXED + hash_len;
		uint16_t flags = be16(p);
		p += 2;
		if (flags & FLAG_EXTENDED) {
			if (version < 3 || end - p < 2)
				return -1;
			p += 2;
		}
		if (version == 4) {
			size_t strip = 0;
			if (read_varint(&p, end, &strip) < 0 || strip > name.len)
				return -1;
			const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
			if (!nul)
				return -1;
			strbuf_setlen(&name, name.len - strip);
			strbuf_add(&name, p, (size_t)(nul - p));
			p = nul + 1;
		} else {
			const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
			if (!nul)
				return -1;
			strbuf_reset(&name);
			strbuf_add(&name, p, (size_t)(nul - p));
			/* NUL padding to a multiple of 8, counted from the entry. */
			size_t used = (size_t)(nul + 1 - entry);
			size_t padded = (used + 7) & ~(size_t)7;
			if ((size_t)(end - entry) < padded)
				return -1;
			for (const unsigned char *q = nul; q < entry + padded; q++)
				if (*q)
					return -1;
			p = entry + padded;
		}
		/* The length in the flags is exact below its cap: a mismatch
		 * means the object names are of another size. */
		if ((flags & NAME_MASK) != NAME_MASK && (flags & NAME_MASK) != name.len)
			return -1;
		/* An entry with no name replaces one of the shared index (a
		 * split index); its mode can make that one a gitlink, whose
		 * name only the shared index knows. */
		if (name.len == 0) {
			replaced++;
			if ((mode & 0170000u) == MODE_GITLINK)
				replaced_gitlinks++;
			continue;
		}
		if ((mode & 0170000u) == MODE_GITLINK)
			strv_push(out, strbuf_str(&name));
	}
	char link[65] = "";
	read_extensions(p, end, hash_len, link);
	if (replaced && !link[0])
		return -1; /* nameless entries belong to a split index only */
	if (shared)
		memcpy(shared, link, sizeof(link));
	if (replaced_gitlinks)
		strv_push(out, GIT_INDEX_UNNAMED_GITLINK);
	return 0;
}

int git_index_gitlinks(const void *buf, size_t len, struct strv *out)
{
	return git_index_read(buf, len, out, NULL);
}

int git_index_read(const void *buf, size_t len, struct strv *out, char *shared)
{
	if (shared)
		shared[0] = '\0';
	/* SHA-1 first; SHA-256 repositories have 32-byte names. */
	static const size_t hash_lens[] = {20, 32};
	for (size_t i = 0; i < 2; i++) {
		struct strv found = STRV_INIT;
		if (parse(buf, len, hash_lens[i], &found, shared) == 0) {
			strv_extend(out, &found);
			strv_release(&found);
			return 0;
		}
		strv_release(&found);
	}
	return -1;
}
