/* Unit tests for reading gitlinks out of git's index: versions 2, 3 and 4
 * (prefix-compressed names), SHA-1 and SHA-256 object names, and the
 * malformed indexes a sandboxed program could write, each of which must be
 * refused whole. The indexes are built here byte by byte, as git lays them
 * out (gitformat-index). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "git/index.h"
#include "base/strbuf.h"
#include "unit.h"

#define GITLINK 0160000u
#define REGULAR 0100644u

static void put32(struct strbuf *sb, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 8), (unsigned char)v};
	strbuf_add(sb, b, 4);
}

static void put16(struct strbuf *sb, uint16_t v)
{
	unsigned char b[2] = {(unsigned char)(v >> 8), (unsigned char)v};
	strbuf_add(sb, b, 2);
}

static void header(struct strbuf *sb, uint32_t version, uint32_t count)
{
	strbuf_add(sb, "DIRC", 4);
	put32(sb, version);
	put32(sb, count);
}

/* One entry; for version 4, strip and suffix give the compressed name. */
static void entry(struct strbuf *sb, uint32_t version, size_t hash_len, uint32_t mode,
		  const char *name, size_t strip, const char *suffix)
{
	size_t start = sb->len;
	for (int i = 0; i < 6; i++)
		put32(sb, 0); /* ctime, mtime, dev, ino */
	put32(sb, mode);
	for (int i = 0; i < 3; i++)
		put32(sb, 0); /* uid, gid, size */
	for (size_t i = 0; i < hash_len; i++)
		strbuf_addch(sb, 'h');
	put16(sb, (uint16_t)(strlen(name) & 0x0fff));
	if (version == 4) {
		strbuf_addch(sb, (char)strip);
		strbuf_add(sb, suffix, strlen(suffix) + 1);
		return;
	}
	strbuf_add(sb, name, strlen(name) + 1);
	while ((sb->len - start) % 8)
		strbuf_addch(sb, '\0');
}

static void expect_links(const struct strbuf *index, const char *expected)
{
	_cleanup_strv_ struct strv links = STRV_INIT;
	assert_int_equal(git_index_gitlinks(index->buf, index->len, &links), 0);
	_cleanup_strbuf_ struct strbuf got = STRBUF_INIT;
	for (size_t i = 0; i < links.len; i++)
		strbuf_addf(&got, "%s%s", i ? " " : "", links.items[i]);
	assert_string_equal(strbuf_str(&got), expected);
}

static void expect_refused(const struct strbuf *index)
{
	_cleanup_strv_ struct strv links = STRV_INIT;
	assert_int_equal(git_index_gitlinks(index->buf, index->len, &links), -1);
	assert_int_equal(links.len, 0);
}

static void git_index_lists_gitlinks_only_in_versions_2_and_3(void **state)
{
	for (uint32_t version = 2; version <= 3; version++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		header(&sb, version, 3);
		entry(&sb, version, 20, REGULAR, "README", 0, NULL);
		entry(&sb, version, 20, GITLINK, "libs/sub", 0, NULL);
		entry(&sb, version, 20, GITLINK, "tools/x", 0, NULL);
		expect_links(&sb, "libs/sub tools/x");
	}
}

static void git_index_expands_prefix_compressed_names_in_version_4(void **state)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	header(&sb, 4, 3);
	entry(&sb, 4, 20, REGULAR, "src/a.c", 0, "src/a.c");
	entry(&sb, 4, 20, GITLINK, "src/deps/z", 3, "deps/z"); /* "src/" + "deps/z" */
	entry(&sb, 4, 20, GITLINK, "src/deps/y", 1, "y");
	expect_links(&sb, "src/deps/z src/deps/y");
}

static void git_index_reads_sha256_object_names(void **state)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	header(&sb, 2, 2);
	entry(&sb, 2, 32, GITLINK, "deep/sub", 0, NULL);
	entry(&sb, 2, 32, REGULAR, "f", 0, NULL);
	expect_links(&sb, "deep/sub");
}

static void git_index_refuses_what_git_would_not_write(void **state)
{
	_cleanup_strbuf_ struct strbuf good = STRBUF_INIT;
	header(&good, 2, 1);
	entry(&good, 2, 20, GITLINK, "sub", 0, NULL);

	/* Every truncation of a valid index. */
	for (size_t cut = 0; cut < good.len; cut++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_add(&sb, good.buf, cut);
		expect_refused(&sb);
	}
	/* A wrong signature, an unknown version, more entries than there are. */
	_cleanup_strbuf_ struct strbuf sig = STRBUF_INIT;
	strbuf_add(&sig, good.buf, good.len);
	sig.buf[0] = 'X';
	expect_refused(&sig);
	_cleanup_strbuf_ struct strbuf ver = STRBUF_INIT;
	header(&ver, 5, 1);
	entry(&ver, 2, 20, GITLINK, "sub", 0, NULL);
	expect_refused(&ver);
	_cleanup_strbuf_ struct strbuf count = STRBUF_INIT;
	header(&count, 2, 2);
	entry(&count, 2, 20, GITLINK, "sub", 0, NULL);
	expect_refused(&count);
	/* Padding that is not NUL. */
	_cleanup_strbuf_ struct strbuf pad = STRBUF_INIT;
	strbuf_add(&pad, good.buf, good.len);
	pad.buf[pad.len - 1] = 'x';
	expect_refused(&pad);
	/* Version 4 stripping more than the previous name holds. */
	_cleanup_strbuf_ struct strbuf strip = STRBUF_INIT;
	header(&strip, 4, 2);
	entry(&strip, 4, 20, REGULAR, "ab", 0, "ab");
	entry(&strip, 4, 20, GITLINK, "x", 5, "x");
	expect_refused(&strip);
	/* An empty name. */
	_cleanup_strbuf_ struct strbuf empty = STRBUF_INIT;
	header(&empty, 2, 1);
	entry(&empty, 2, 20, GITLINK, "", 0, NULL);
	expect_refused(&empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(git_index_lists_gitlinks_only_in_versions_2_and_3),
	    cmocka_unit_test(git_index_expands_prefix_compressed_names_in_version_4),
	    cmocka_unit_test(git_index_reads_sha256_object_names),
	    cmocka_unit_test(git_index_refuses_what_git_would_not_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
