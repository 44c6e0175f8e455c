/* libFuzzer target for the scan cache's parser: the file the plan reads
 * from the state directory. An input whose first byte is odd is a body of
 * records (after two u32 counts), given a valid header and checksum so
 * that the records themselves are fuzzed; otherwise it is a whole file.
 * A cache that parses must hold only valid paths and names, find each of
 * its directories, and encode back to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "policy/scan_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct pattern_set *patterns(void)
{
	static struct pattern_set set;
	static bool built;
	if (!built) {
		char *texts[] = {".env", "*.pem", "certs/", "config/prod.key", ".aws/"};
		pattern_set_build(&set, texts, 5, true);
		built = true;
	}
	return &set;
}

static void check(const struct scan_cache *c)
{
	for (size_t i = 0; i < c->len; i++) {
		const struct scan_cache_dir *d = &c->dirs[i];
		if (strlen(d->rel) != d->rel_len || d->rel[0] == '/' || strstr(d->rel, "//") ||
		    scan_cache_find(c, d->rel, d->rel_len) != d)
			abort();
		for (size_t j = 0; j < d->len; j++) {
			const struct scan_cache_entry *e = &d->entries[j];
			if (strlen(e->name) != e->name_len || strchr(e->name, '/') ||
			    e->action >= SCAN_ACTION_COUNT ||
			    (e->action == SCAN_ACTION_MASK && e->arg >= patterns()->len))
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t key[SCAN_CACHE_KEY_LEN];
	memset(key, 0x5a, sizeof(key));
	if (size < 1)
		return 0;
	struct strbuf file = STRBUF_INIT;
	if (data[0] & 1) {
		if (size < 9)
			return 0;
		struct scan_cache_builder b;
		scan_cache_builder_init(&b, key);
		uint32_t records, entries;
		memcpy(&records, data + 1, sizeof(records));
		memcpy(&entries, data + 5, sizeof(entries));
		b.records = records;
		b.entries = entries;
		strbuf_add(&b.body, data + 9, size - 9);
		scan_cache_builder_finish(&b, &file);
		scan_cache_builder_release(&b);
	} else {
		strbuf_add(&file, data + 1, size - 1);
	}
	char *copy = xmalloc(file.len + 1);
	memcpy(copy, file.buf, file.len);
	struct scan_cache c;
	struct error err = ERROR_INIT;
	if (scan_cache_parse(copy, file.len, key, patterns(), &c, &err) < 0) {
		if (!err.msg || c.len || c.data)
			abort();
		error_release(&err);
		strbuf_release(&file);
		return 0;
	}
	check(&c);
	struct scan_cache_builder again;
	scan_cache_builder_init(&again, key);
	again.scan_start = c.scan_start;
	for (size_t i = 0; i < c.len; i++)
		scan_cache_builder_add(&again, &c.dirs[i]);
	struct strbuf out = STRBUF_INIT;
	scan_cache_builder_finish(&again, &out);
	if (out.len != file.len || memcmp(out.buf, file.buf, file.len))
		abort();
	strbuf_release(&out);
	scan_cache_builder_release(&again);
	scan_cache_release(&c);
	strbuf_release(&file);
	return 0;
}
