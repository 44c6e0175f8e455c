/* This file reads and writes the secret scan's cache file. The file is a
 * hint, never an authority: anything that does not check out (another
 * format, binary, user, root or pattern list; a bad checksum; a field out
 * of range) makes the whole file ignored, and the scan reads the tree. It
 * only writes in scan_cache_store, which the launch calls, never the plan. */
#include "policy/scan_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "base/sha256.h"
#include "base/xalloc.h"

/* The file: a fixed header, then the records.
 *
 *   magic "AGSBSCAN", u32 format, key[32], i64 scan start (s), u32 (ns),
 *   u32 records, u32 entries, u64 body length, SHA-256 of all the rest[32]
 *
 * A record: u32 length, the path from the root and a NUL; u64 dev, u64 ino,
 * i64 ctime (s), u32 (ns); u32 files; u32 entries. An entry: u8 type, u8
 * flags, u8 action, u16 length, the name and a NUL; for MASK and CONTENT a
 * u32 argument; for CONTENT u64 ino, i64 ctime (s), u32 (ns), u8 verdict.
 * Integers are in the machine's order: a file from another machine has
 * another binary in its key. */
static const char magic[8] = {'A', 'G', 'S', 'B', 'S', 'C', 'A', 'N'};
#define HEADER_LEN (8 + 4 + SCAN_CACHE_KEY_LEN + 8 + 4 + 4 + 4 + 8 + SCAN_CACHE_KEY_LEN)
#define RECORD_MIN (4 + 1 + 8 + 8 + 8 + 4 + 4 + 4)
#define ENTRY_MIN (5 + 1 + 1)
#define REL_MAX 4096

/* The racy rule, as git's "racily clean" index entries. A ctime is the
 * kernel's coarse clock at the change (one tick late at most), or on some
 * filesystems whole seconds. A directory the scan read, then changed in the
 * same tick (or second), keeps the ctime the scan recorded, and a cache
 * keyed by it would hide the change. Every change after a scan started gets
 * a ctime no earlier than the start less a tick (or less the fraction of a
 * second): so a record is trusted only when its object's ctime lies at
 * least SCAN_CACHE_SETTLE_SEC before the start of the scan that made it.
 * Anything changed after that can then never show the recorded ctime. A
 * younger directory is read every time (and not recorded), until it has
 * settled. */
bool scan_cache_is_settled(const struct timespec *ctime, const struct timespec *scan_start)
{
	time_t limit = scan_start->tv_sec - SCAN_CACHE_SETTLE_SEC;
	if (ctime->tv_sec != limit)
		return ctime->tv_sec < limit;
	return ctime->tv_nsec <= scan_start->tv_nsec;
}

static void key_add(SHA2_CTX *ctx, const void *data, size_t len)
{
	SHA256Update(ctx, data, len);
}

static void key_add_u64(SHA2_CTX *ctx, uint64_t v)
{
	key_add(ctx, &v, sizeof(v));
}

static void key_add_str(SHA2_CTX *ctx, const char *s)
{
	key_add(ctx, s, strlen(s) + 1);
}

static void key_add_set(SHA2_CTX *ctx, const char *what, const struct pattern_set *set)
{
	key_add_str(ctx, what);
	key_add_u64(ctx, set->len);
	for (size_t i = 0; i < set->len; i++) {
		key_add_str(ctx, set->items[i].text);
		key_add_u64(ctx, (uint64_t)set->items[i].ignore_case << 1 | set->items[i].dir_only);
	}
}

/* The binary, by the file that runs: a rebuilt or upgraded agent-sandbox
 * may decide differently. Unknown, the key is random and matches nothing. */
static void key_add_binary(SHA2_CTX *ctx)
{
	struct stat st;
	if (stat("/proc/self/exe", &st) < 0) {
		uint8_t noise[16] = {0};
		(void)!getrandom(noise, sizeof(noise), 0);
		key_add(ctx, noise, sizeof(noise));
		return;
	}
	key_add_u64(ctx, st.st_dev);
	key_add_u64(ctx, st.st_ino);
	key_add_u64(ctx, (uint64_t)st.st_size);
	key_add_u64(ctx, (uint64_t)st.st_mtim.tv_sec);
	key_add_u64(ctx, (uint64_t)st.st_mtim.tv_nsec);
	key_add_u64(ctx, (uint64_t)st.st_ctim.tv_sec);
	key_add_u64(ctx, (uint64_t)st.st_ctim.tv_nsec);
}

/* Which directories the scan can read (and so walk rather than mask as
 * unreadable) depends on who runs it. */
static void key_add_credentials(SHA2_CTX *ctx)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0)
		ruid = euid = rgid = egid = (uid_t)-1;
	key_add_u64(ctx, ruid);
	key_add_u64(ctx, euid);
	key_add_u64(ctx, rgid);
	key_add_u64(ctx, egid);
	int n = getgroups(0, NULL);
	if (n > 0) {
		_cleanup_free_ gid_t *groups = xreallocarray(NULL, (size_t)n, sizeof(*groups));
		n = getgroups(n, groups);
		for (int i = 0; i < n; i++)
			key_add_u64(ctx, groups[i]);
	}
	key_add_u64(ctx, (uint64_t)n);
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct caps[2] = {0};
	if (syscall(SYS_capget, &hdr, caps) < 0)
		caps[0].effective = caps[1].effective = UINT32_MAX;
	key_add_u64(ctx, (uint64_t)caps[1].effective << 32 | caps[0].effective);
}

void scan_cache_key(const char *root, const struct pattern_set *patterns,
		    const struct pattern_set *allow, const struct pattern_set *skip,
		    bool check_content, uint8_t key[SCAN_CACHE_KEY_LEN])
{
	SHA2_CTX ctx;
	SHA256Init(&ctx);
	key_add_str(&ctx, "agent-sandbox scan cache");
	key_add_u64(&ctx, SCAN_CACHE_FORMAT);
	key_add_str(&ctx, AGENT_SANDBOX_VERSION);
	key_add_binary(&ctx);
	key_add_credentials(&ctx);
	key_add_str(&ctx, root);
	key_add_set(&ctx, "patterns", patterns);
	key_add_set(&ctx, "allow", allow);
	key_add_set(&ctx, "skip", skip);
	key_add_u64(&ctx, check_content);
	SHA256Final(key, &ctx);
}

/* Decoding: every read is checked against the end, and a short read
 * poisons the reader. */
struct reader {
	const char *at, *end;
	bool bad;
};

static void take(struct reader *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->at) < n) {
		r->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->at, n);
	r->at += n;
}

/* n bytes and a NUL, with no NUL among them; returned in place. */
static const char *take_string(struct reader *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->at) < n + 1 || r->at[n] != '\0' || memchr(r->at, 0, n)) {
		r->bad = true;
		return NULL;
	}
	const char *s = r->at;
	r->at += n + 1;
	return s;
}

/* A path from the root as the walk spells it: "", or names joined by
 * single slashes, none "." or "..". */
static bool rel_is_valid(const char *rel, size_t len)
{
	if (len == 0)
		return true;
	for (size_t i = 0; i < len;) {
		size_t seg = strcspn(rel + i, "/");
		if (i + seg > len)
			seg = len - i;
		if (seg == 0 || (seg == 1 && rel[i] == '.') ||
		    (seg == 2 && rel[i] == '.' && rel[i + 1] == '.'))
			return false;
		i += seg;
		if (i < len && ++i == len)
			return false; /* a trailing slash */
	}
	return true;
}

static bool name_is_valid(const char *name, size_t len)
{
	return len > 0 && !memchr(name, '/', len) && strcmp(name, ".") && strcmp(name, "..");
}

static bool type_is_valid(uint8_t type)
{
	switch (type) {
	case DT_FIFO:
	case DT_CHR:
	case DT_DIR:
	case DT_BLK:
	case DT_REG:
	case DT_LNK:
	case DT_SOCK:
		return true;
	default:
		return false;
	}
}

static void take_time(struct reader *r, struct timespec *t)
{
	int64_t sec;
	uint32_t nsec;
	take(r, &sec, sizeof(sec));
	take(r, &nsec, sizeof(nsec));
	if (nsec >= 1000000000u)
		r->bad = true;
	*t = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = nsec};
}

/* An entry as the scan writes it: each action on the type it applies to. */
static bool entry_is_consistent(const struct scan_cache_entry *e,
				const struct pattern_set *patterns)
{
	if ((e->flags & ~SCAN_FLAG_GIT) || e->action >= SCAN_ACTION_COUNT)
		return false;
	if ((e->flags & SCAN_FLAG_GIT) && strcmp(e->name, ".git"))
		return false;
	switch ((enum scan_action)e->action) {
	case SCAN_ACTION_NONE:
		return e->flags & SCAN_FLAG_GIT;
	case SCAN_ACTION_MASK:
		return e->arg < patterns->len && (e->type == DT_DIR || e->type == DT_REG) &&
		       patterns->items[e->arg].dir_only == (e->type == DT_DIR);
	case SCAN_ACTION_CONTENT:
		return e->arg < SCAN_CACHE_CONTENT_RULES && e->type == DT_REG;
	case SCAN_ACTION_DESCEND:
		return e->type == DT_DIR;
	case SCAN_ACTION_LINK:
		return e->type == DT_LNK;
	case SCAN_ACTION_SOCKET:
		return e->type == DT_SOCK;
	case SCAN_ACTION_COUNT:
		break;
	}
	return false;
}

static int take_entry(struct reader *r, struct scan_cache_entry *e,
		      const struct pattern_set *patterns)
{
	uint8_t head[3];
	take(r, head, sizeof(head));
	*e = (struct scan_cache_entry){.type = head[0], .flags = head[1], .action = head[2]};
	take(r, &e->name_len, sizeof(e->name_len));
	e->name = take_string(r, e->name_len);
	if (r->bad || !type_is_valid(e->type) || !name_is_valid(e->name, e->name_len))
		return -1;
	if (e->action == SCAN_ACTION_MASK || e->action == SCAN_ACTION_CONTENT)
		take(r, &e->arg, sizeof(e->arg));
	if (e->action == SCAN_ACTION_CONTENT) {
		uint8_t masked;
		take(r, &e->ino, sizeof(e->ino));
		take_time(r, &e->ctime);
		take(r, &masked, sizeof(masked));
		if (masked > 1)
			return -1;
		e->masked = masked;
	}
	if (r->bad || !entry_is_consistent(e, patterns))
		return -1;
	return 0;
}

static uint64_t hash_rel(const char *rel, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)rel[i]) * 0x100000001b3ull;
	return h;
}

/* Adds dir i to the table; false when its path is there already. */
static bool table_insert(struct scan_cache *c, size_t i)
{
	const struct scan_cache_dir *d = &c->dirs[i];
	for (size_t slot = hash_rel(d->rel, d->rel_len) & c->table_mask;;
	     slot = (slot + 1) & c->table_mask) {
		if (!c->table[slot]) {
			c->table[slot] = (uint32_t)i + 1;
			return true;
		}
		const struct scan_cache_dir *o = &c->dirs[c->table[slot] - 1];
		if (o->rel_len == d->rel_len && !memcmp(o->rel, d->rel, d->rel_len))
			return false;
	}
}

const struct scan_cache_dir *scan_cache_find(const struct scan_cache *c, const char *rel,
					     size_t rel_len)
{
	if (!c || !c->len)
		return NULL;
	for (size_t slot = hash_rel(rel, rel_len) & c->table_mask; c->table[slot];
	     slot = (slot + 1) & c->table_mask) {
		const struct scan_cache_dir *d = &c->dirs[c->table[slot] - 1];
		if (d->rel_len == rel_len && !memcmp(d->rel, rel, rel_len))
			return d;
	}
	return NULL;
}

static int take_record(struct reader *r, struct scan_cache *c, size_t *entries_used,
		       const struct pattern_set *patterns)
{
	struct scan_cache_dir *d = &c->dirs[c->len];
	uint32_t rel_len, count;
	take(r, &rel_len, sizeof(rel_len));
	if (r->bad || rel_len > REL_MAX)
		return -1;
	*d = (struct scan_cache_dir){.rel_len = rel_len};
	d->rel = take_string(r, rel_len);
	take(r, &d->dev, sizeof(d->dev));
	take(r, &d->ino, sizeof(d->ino));
	take_time(r, &d->ctime);
	take(r, &d->files, sizeof(d->files));
	take(r, &count, sizeof(count));
	if (r->bad || !rel_is_valid(d->rel, d->rel_len) || count > c->entries_len - *entries_used)
		return -1;
	d->entries = c->entries + *entries_used;
	d->len = count;
	for (size_t i = 0; i < count; i++) {
		struct scan_cache_entry *e = &d->entries[i];
		if (take_entry(r, e, patterns) < 0)
			return -1;
		d->needs_fd |= e->action == SCAN_ACTION_DESCEND || e->action == SCAN_ACTION_LINK ||
			       e->action == SCAN_ACTION_CONTENT;
	}
	*entries_used += count;
	if (!table_insert(c, c->len))
		return -1;
	c->len++;
	return 0;
}

static int parse(struct scan_cache *c, const uint8_t key[SCAN_CACHE_KEY_LEN],
		 const struct pattern_set *patterns, struct error *err)
{
	struct reader r = {.at = c->data, .end = c->data + c->size};
	char m[sizeof(magic)];
	uint32_t format, records, entries;
	uint8_t file_key[SCAN_CACHE_KEY_LEN], sum[SCAN_CACHE_KEY_LEN];
	uint64_t body_len;
	take(&r, m, sizeof(m));
	take(&r, &format, sizeof(format));
	take(&r, file_key, sizeof(file_key));
	take_time(&r, &c->scan_start);
	take(&r, &records, sizeof(records));
	take(&r, &entries, sizeof(entries));
	take(&r, &body_len, sizeof(body_len));
	take(&r, sum, sizeof(sum));
	if (r.bad || memcmp(m, magic, sizeof(magic)))
		return error_set(err, ERROR_SETUP, "not a scan cache");
	if (format != SCAN_CACHE_FORMAT)
		return error_set(err, ERROR_SETUP, "written in another format (%u)", format);
	if (memcmp(file_key, key, SCAN_CACHE_KEY_LEN))
		return error_set(err, ERROR_SETUP,
				 "written for another binary, user, directory or pattern list");
	if (body_len != (uint64_t)(r.end - r.at))
		return error_set(err, ERROR_SETUP, "truncated or extended");
	uint8_t have[SCAN_CACHE_KEY_LEN];
	SHA2_CTX ctx;
	SHA256Init(&ctx);
	SHA256Update(&ctx, (const uint8_t *)c->data, HEADER_LEN - SCAN_CACHE_KEY_LEN);
	SHA256Update(&ctx, (const uint8_t *)r.at, body_len);
	SHA256Final(have, &ctx);
	if (memcmp(have, sum, sizeof(sum)))
		return error_set(err, ERROR_SETUP, "its checksum does not match");
	if (records > body_len / RECORD_MIN || entries > body_len / ENTRY_MIN)
		return error_set(err, ERROR_SETUP, "more records than it holds");
	c->dirs = xreallocarray(NULL, records ? records : 1, sizeof(*c->dirs));
	c->entries = xreallocarray(NULL, entries ? entries : 1, sizeof(*c->entries));
	c->entries_len = entries;
	size_t cap = 16;
	while (cap < 2 * (size_t)records)
		cap *= 2;
	c->table = xcalloc(cap, sizeof(*c->table));
	c->table_mask = cap - 1;
	size_t used = 0;
	for (uint32_t i = 0; i < records; i++)
		if (take_record(&r, c, &used, patterns) < 0)
			return error_set(err, ERROR_SETUP, "record %u is malformed", i);
	if (used != entries || r.at != r.end)
		return error_set(err, ERROR_SETUP, "its counts do not match its records");
	return 0;
}

int scan_cache_parse(char *data, size_t size, const uint8_t key[SCAN_CACHE_KEY_LEN],
		     const struct pattern_set *patterns, struct scan_cache *out, struct error *err)
{
	*out = (struct scan_cache){.data = data, .size = size};
	if (parse(out, key, patterns, err) < 0) {
		scan_cache_release(out);
		return -1;
	}
	return 0;
}

int scan_cache_load(const char *path, const uint8_t key[SCAN_CACHE_KEY_LEN],
		    const struct pattern_set *patterns, struct scan_cache *out, struct error *err)
{
	*out = (struct scan_cache){0};
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? error_set(err, ERROR_SETUP, "none yet")
				       : error_errno(err, ERROR_SETUP, errno, "opening %s", path);
	/* Only what this user wrote: another user's file could say anything. */
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return error_set(err, ERROR_SETUP, "%s is not a private regular file of this user",
				 path);
	char *data = NULL;
	size_t len = 0;
	int r = read_fd(fd, SCAN_CACHE_MAX_BYTES, &data, &len);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "reading %s", path);
	return scan_cache_parse(data, len, key, patterns, out, err);
}

void scan_cache_release(struct scan_cache *c)
{
	free(c->data);
	free(c->dirs);
	free(c->entries);
	free(c->table);
	*c = (struct scan_cache){0};
}

void scan_cache_builder_init(struct scan_cache_builder *b, const uint8_t key[SCAN_CACHE_KEY_LEN])
{
	*b = (struct scan_cache_builder){.body = STRBUF_INIT};
	memcpy(b->key, key, SCAN_CACHE_KEY_LEN);
}

static void put(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_add(sb, data, len);
}

static void put_time(struct strbuf *sb, const struct timespec *t)
{
	int64_t sec = t->tv_sec;
	uint32_t nsec = (uint32_t)t->tv_nsec;
	put(sb, &sec, sizeof(sec));
	put(sb, &nsec, sizeof(nsec));
}

void scan_cache_builder_add(struct scan_cache_builder *b, const struct scan_cache_dir *d)
{
	struct strbuf *sb = &b->body;
	uint32_t rel_len = (uint32_t)d->rel_len, count = (uint32_t)d->len;
	put(sb, &rel_len, sizeof(rel_len));
	put(sb, d->rel, d->rel_len + 1);
	put(sb, &d->dev, sizeof(d->dev));
	put(sb, &d->ino, sizeof(d->ino));
	put_time(sb, &d->ctime);
	put(sb, &d->files, sizeof(d->files));
	put(sb, &count, sizeof(count));
	for (size_t i = 0; i < d->len; i++) {
		const struct scan_cache_entry *e = &d->entries[i];
		uint8_t head[3] = {e->type, e->flags, e->action};
		put(sb, head, sizeof(head));
		put(sb, &e->name_len, sizeof(e->name_len));
		put(sb, e->name, (size_t)e->name_len + 1);
		if (e->action == SCAN_ACTION_MASK || e->action == SCAN_ACTION_CONTENT)
			put(sb, &e->arg, sizeof(e->arg));
		if (e->action == SCAN_ACTION_CONTENT) {
			uint8_t masked = e->masked;
			put(sb, &e->ino, sizeof(e->ino));
			put_time(sb, &e->ctime);
			put(sb, &masked, sizeof(masked));
		}
	}
	b->records++;
	b->entries += d->len;
}

void scan_cache_builder_finish(const struct scan_cache_builder *b, struct strbuf *out)
{
	uint32_t format = SCAN_CACHE_FORMAT, records = (uint32_t)b->records,
		 entries = (uint32_t)b->entries;
	uint64_t body_len = b->body.len;
	strbuf_grow(out, HEADER_LEN + b->body.len);
	size_t start = out->len;
	put(out, magic, sizeof(magic));
	put(out, &format, sizeof(format));
	put(out, b->key, SCAN_CACHE_KEY_LEN);
	put_time(out, &b->scan_start);
	put(out, &records, sizeof(records));
	put(out, &entries, sizeof(entries));
	put(out, &body_len, sizeof(body_len));
	uint8_t sum[SCAN_CACHE_KEY_LEN];
	SHA2_CTX ctx;
	SHA256Init(&ctx);
	SHA256Update(&ctx, (const uint8_t *)out->buf + start, out->len - start);
	SHA256Update(&ctx, (const uint8_t *)b->body.buf, b->body.len);
	SHA256Final(sum, &ctx);
	put(out, sum, sizeof(sum));
	if (b->body.len)
		put(out, b->body.buf, b->body.len);
}

void scan_cache_builder_release(struct scan_cache_builder *b)
{
	strbuf_release(&b->body);
	*b = (struct scan_cache_builder){0};
}

char *scan_cache_path(const char *dir, const char *root)
{
	char name[SHA256_HEX_LEN + 1];
	sha256_hex(root, strlen(root), name);
	return xasprintf("%s/%s", dir, name);
}

struct cache_file {
	char *name;
	struct timespec mtime;
};

static int older_first(const void *a, const void *b)
{
	const struct timespec *x = &((const struct cache_file *)a)->mtime,
			      *y = &((const struct cache_file *)b)->mtime;
	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* One file per working directory ever used would grow without end: the
 * least recently written beyond SCAN_CACHE_MAX_FILES go (a later run in
 * their directory scans it whole once). */
static void prune(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct cache_file *files = NULL;
	size_t len = 0, alloc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (strlen(de->d_name) < SHA256_HEX_LEN ||
		    strspn(de->d_name, "0123456789abcdef") < SHA256_HEX_LEN ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (len == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			files = xreallocarray(files, alloc, sizeof(*files));
		}
		files[len++] = (struct cache_file){xstrdup(de->d_name), st.st_mtim};
	}
	if (len > SCAN_CACHE_MAX_FILES) {
		qsort(files, len, sizeof(*files), older_first);
		for (size_t i = 0; i < len - SCAN_CACHE_MAX_FILES; i++)
			(void)unlinkat(dirfd(d), files[i].name, 0);
	}
	for (size_t i = 0; i < len; i++)
		free(files[i].name);
	free(files);
	closedir(d);
}

int scan_cache_store(const struct scan_cache_builder *b, const char *path, struct error *err)
{
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return error_set(err, ERROR_INTERNAL, "no directory in %s", path);
	*slash = '\0';
	if (HEADER_LEN + b->body.len > SCAN_CACHE_MAX_BYTES) {
		/* Too large to be worth reading back: the next scan reads the
		 * tree, as it would with a stale cache, only sooner. */
		if (unlink(path) < 0 && errno != ENOENT)
			return error_errno(err, ERROR_SETUP, errno, "removing %s", path);
		return 0;
	}
	if (state_dir_prepare(dir, err) < 0)
		return -1;
	_cleanup_strbuf_ struct strbuf file = STRBUF_INIT;
	scan_cache_builder_finish(b, &file);
	/* A temporary file renamed over the old one: a reader sees one whole
	 * file or the other. Durability does not matter (a lost cache costs
	 * one full scan), so there is no fsync. */
	_cleanup_free_ char *tmp = xasprintf("%s.tmp-XXXXXX", path);
	_cleanup_close_ int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating %s", tmp);
	int r = write_all(fd, file.buf, file.len);
	if (r < 0) {
		unlink(tmp);
		return error_errno(err, ERROR_SETUP, -r, "writing %s", tmp);
	}
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return error_errno(err, ERROR_SETUP, e, "renaming %s to %s", tmp, path);
	}
	prune(dir);
	return 0;
}
