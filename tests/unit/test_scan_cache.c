/* Unit tests for the secret scan's cache: the racy rule, a cached scan
 * that finds exactly what a full scan finds while reading only changed
 * directories, records never trusted for directories younger than the
 * settling time, and a cache file refused whole for any defect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/io.h"
#include "config/config.h"
#include "policy/scan_cache.h"
#include "policy/secrets.h"
#include "unit.h"

static void scan_cache_settles_only_two_seconds_before_the_scan_start(void **state)
{
	(void)state;
	const struct timespec start = {.tv_sec = 1000, .tv_nsec = 500};
	static const struct {
		time_t sec;
		long nsec;
		bool settled;
	} cases[] = {
	    {997, 999999999, true}, {998, 500, true},	{998, 499, true},  {998, 501, false},
	    {999, 0, false},	    {1000, 500, false}, {1001, 0, false},  {0, 0, true},
	    {-5, 0, true},	    {998, 0, true},	{999, 999, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct timespec ctime = {.tv_sec = cases[i].sec, .tv_nsec = cases[i].nsec};
		if (scan_cache_is_settled(&ctime, &start) != cases[i].settled)
			unit_fail("ctime %ld.%09ld against a start of 1000.000000500: expected %s",
				  (long)cases[i].sec, cases[i].nsec,
				  cases[i].settled ? "settled" : "racy");
	}
}

/* A project with something for every kind of entry: masked by name and by
 * directory, skipped, a repository, a link, content rules. */
static void make_project(const char *root)
{
	static const char *const dirs[] = {"src",	"src/a",	"src/a/b", "src/a/b/c",
					   "certs",	"node_modules", ".git",	   "keys",
					   "src/other", "src/other/x"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		unit_mkdir(root, dirs[i]);
	unit_write(root, ".env", "TOKEN=1\n");
	unit_write(root, "src/a/b/c/main.c", "int main;\n");
	unit_write(root, "src/a/b/server.pem", "pem\n");
	unit_write(root, "certs/ca.crt", "crt\n");
	unit_write(root, "node_modules/.env", "skipped\n");
	unit_write(root, "keys/id_deploy", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
	unit_write(root, "keys/id_map.go", "package id\n");
	unit_write(root, ".npmrc", "registry=https://example.org/\n");
	unit_write(root, "src/other/x/notes.txt", "notes\n");
	unit_symlink("src/a/b/server.pem", root, "pem-link");
}

static char *describe(const struct secrets *s)
{
	struct strbuf sb = STRBUF_INIT;
	const struct secret_scan_result *f = &s->found;
	strbuf_addf(&sb, "files %zu dirs %zu unreadable %zu\n", f->files, f->dirs, f->unreadable);
	for (size_t i = 0; i < f->len; i++)
		strbuf_addf(&sb, "%s %s %d\n", f->items[i].path, f->items[i].pattern,
			    f->items[i].is_dir);
	for (size_t i = 0; i < f->git_entries.len; i++)
		strbuf_addf(&sb, "git %s\n", f->git_entries.items[i]);
	return strbuf_detach(&sb);
}

struct scan {
	char *text;
	size_t dirs, cached;
	bool changed;
};

static struct scan scan(const char *root, const char *cache_dir, bool save)
{
	struct config cfg;
	config_init(&cfg);
	struct secrets s;
	struct error err = ERROR_INIT;
	if (secrets_scan(&s, &cfg, root, cache_dir, &err) < 0)
		unit_fail("scanning %s: %s", root, err.msg);
	if (save && secrets_save_cache(&s, &err) < 0)
		unit_fail("saving the cache: %s", err.msg);
	struct scan out = {describe(&s), s.found.dirs, s.found.cached_dirs, s.cache_next.changed};
	secrets_release(&s);
	config_release(&cfg);
	return out;
}

static void wait_to_settle(void)
{
	struct timespec t = {.tv_sec = SCAN_CACHE_SETTLE_SEC, .tv_nsec = 100 * 1000 * 1000};
	nanosleep(&t, NULL);
}

static void scan_cache_records_no_directory_younger_than_the_settling_time(void **state)
{
	const char *root = *state;
	_cleanup_free_ char *tree = unit_path(root, "p"), *cache = unit_path(root, "cache");
	unit_mkdir(root, "p");
	make_project(tree);
	struct scan first = scan(tree, cache, true);
	struct scan second = scan(tree, cache, false);
	assert_int_equal(second.cached, 0);
	assert_string_equal(first.text, second.text);
	free(first.text);
	free(second.text);
}

static void scan_cache_finds_what_a_full_scan_finds_and_reads_only_changed_directories(void **state)
{
	const char *root = *state;
	_cleanup_free_ char *tree = unit_path(root, "p"), *cache = unit_path(root, "cache");
	unit_mkdir(root, "p");
	make_project(tree);
	wait_to_settle();
	struct scan full = scan(tree, NULL, false);
	struct scan recorded = scan(tree, cache, true);
	struct scan warm = scan(tree, cache, true);
	assert_string_equal(full.text, recorded.text);
	assert_string_equal(full.text, warm.text);
	assert_int_equal(recorded.cached, 0);
	assert_int_equal(warm.cached, warm.dirs);
	assert_false(warm.changed);

	/* A secret deep down, a key written into a file that was none, and a
	 * subdirectory replaced by one of the same name. */
	unit_write(tree, "src/a/b/c/.env", "NEW=1\n");
	unit_write(tree, "keys/id_map.go", "-----BEGIN RSA PRIVATE KEY-----\n");
	_cleanup_free_ char *x = unit_path(tree, "src/other/x");
	unit_rmtree(x);
	unit_mkdir(tree, "src/other/x");
	unit_write(tree, "src/other/x/prod.key", "key\n");
	struct scan changed = scan(tree, cache, true);
	struct scan changed_full = scan(tree, NULL, false);
	assert_string_equal(changed.text, changed_full.text);
	unit_assert_contains(changed.text, "/src/a/b/c/.env .env", "a new .env deep down");
	unit_assert_contains(changed.text, "/keys/id_map.go id_* holding a private key",
			     "a file that became a key");
	unit_assert_contains(changed.text, "/src/other/x/prod.key *.key", "a replaced directory");
	/* c, other and x changed; keys' entries did not (its file did). */
	assert_int_equal(changed.cached, changed.dirs - 3);
	assert_true(changed.changed);
	char *texts[] = {full.text, recorded.text, warm.text, changed.text, changed_full.text};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++)
		free(texts[i]);
}

/* The rule on the reading side: a record is trusted only against the
 * start of the scan that wrote it. The same tree, recorded by a scan said
 * to have started a second after its directories changed, is read again
 * whole. */
static void scan_cache_distrusts_records_of_a_scan_that_started_too_soon(void **state)
{
	const char *root = *state;
	_cleanup_free_ char *tree = unit_path(root, "p"), *cache = unit_path(root, "cache");
	unit_mkdir(root, "p");
	make_project(tree);
	wait_to_settle();
	struct config cfg;
	config_init(&cfg);
	struct secrets s;
	struct error err = ERROR_INIT;
	assert_int_equal(secrets_scan(&s, &cfg, tree, cache, &err), 0);
	assert_true(s.cache_next.records > 0);
	struct stat st;
	assert_int_equal(stat(tree, &st), 0);
	s.cache_next.scan_start = st.st_ctim;
	s.cache_next.scan_start.tv_sec += 1;
	assert_int_equal(secrets_save_cache(&s, &err), 1);
	secrets_release(&s);
	config_release(&cfg);
	struct scan warm = scan(tree, cache, false);
	assert_int_equal(warm.cached, 0);
	free(warm.text);
}

/* A cache file is used whole or not at all. */
static void scan_cache_refuses_a_file_with_any_defect(void **state)
{
	const char *root = *state;
	_cleanup_free_ char *tree = unit_path(root, "p"), *cache = unit_path(root, "cache");
	unit_mkdir(root, "p");
	make_project(tree);
	wait_to_settle();
	free(scan(tree, cache, true).text);
	struct config cfg;
	config_init(&cfg);
	struct secrets s;
	struct error err = ERROR_INIT;
	assert_int_equal(secrets_scan(&s, &cfg, tree, cache, &err), 0);
	assert_null(s.cache_unused);
	assert_int_equal(s.found.cached_dirs, s.found.dirs);
	char *data;
	size_t len;
	assert_int_equal(read_file(s.cache_path, SCAN_CACHE_MAX_BYTES, &data, &len), 0);
	uint8_t key[SCAN_CACHE_KEY_LEN];
	memcpy(key, s.cache_next.key, sizeof(key));
	static const struct {
		const char *what;
		size_t at; /* from the end when negative below */
		bool from_end, truncate;
		const char *why;
	} cases[] = {
	    {"a byte of a record changed", 3, true, false, "checksum"},
	    {"a byte of the scan start changed", 44, false, false, "checksum"},
	    {"a byte of the key changed", 20, false, false, "another binary"},
	    {"the magic changed", 0, false, false, "not a scan cache"},
	    {"the last record cut short", 5, true, true, "truncated"},
	    {"cut inside the header", 60, false, true, "not a scan cache"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *copy = xmalloc(len);
		memcpy(copy, data, len);
		size_t at = cases[i].from_end ? len - cases[i].at : cases[i].at;
		size_t size = len;
		if (cases[i].truncate)
			size = at;
		else
			copy[at] ^= 0x20;
		struct scan_cache c;
		struct error why = ERROR_INIT;
		if (scan_cache_parse(copy, size, key, &s.patterns, &c, &why) == 0)
			unit_fail("%s: the cache was used", cases[i].what);
		unit_assert_contains(why.msg, cases[i].why, "%s", cases[i].what);
		error_release(&why);
	}
	char *copy = xmalloc(len);
	memcpy(copy, data, len);
	struct scan_cache c;
	assert_int_equal(scan_cache_parse(copy, len, key, &s.patterns, &c, &err), 0);
	assert_int_equal(c.len, s.found.dirs);
	scan_cache_release(&c);
	/* Another pattern list is another key. */
	uint8_t other[SCAN_CACHE_KEY_LEN];
	scan_cache_key(tree, &s.patterns, &s.allow, &s.patterns, true, other);
	assert_memory_not_equal(other, key, sizeof(key));
	free(data);
	secrets_release(&s);
	config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(scan_cache_settles_only_two_seconds_before_the_scan_start),
	    unit_tmp_test(scan_cache_records_no_directory_younger_than_the_settling_time),
	    unit_tmp_test(
		scan_cache_finds_what_a_full_scan_finds_and_reads_only_changed_directories),
	    unit_tmp_test(scan_cache_distrusts_records_of_a_scan_that_started_too_soon),
	    unit_tmp_test(scan_cache_refuses_a_file_with_any_defect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
