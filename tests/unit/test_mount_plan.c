/* Unit tests for the mount plan: bwrap_render records an expectation for
 * every mount it renders (found by reading the arguments back, so a mount
 * added without one fails here), with the identity the policy decided on
 * and the read-only flag; and the plan survives encoding while malformed
 * bytes are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "audit/writer.h"
#include "sandbox/bwrap.h"
#include "base/cleanup.h"
#include "inside/forwarder.h"
#include "inside/inside.h"
#include "sandbox/mount_plan.h"
#include "unit.h"

static struct rule test_rule = {
    .pattern = "test", .level = ACCESS_RO, .layer = LAYER_CLI, .origin = "test"};

#define ID(n)                                                                                      \
	{                                                                                          \
		.dev_major = 8, .dev_minor = 1, .ino = (n), .type = S_IFDIR                        \
	}
#define FILE_ID(n)                                                                                 \
	{                                                                                          \
		.dev_major = 8, .dev_minor = 1, .ino = (n), .type = S_IFREG                        \
	}

/* clang-format off */
#define ENTRY(p, lvl, dir, i) \
	{.path = (p), .level = ACCESS_##lvl, .rule = &test_rule, .is_dir = (dir), .id = i}
/* clang-format on */

static struct access_entry entries[] = {
    ENTRY("/home/u", RO, true, ID(10)),
    ENTRY("/home/u/.netrc", EXCLUDE, false, FILE_ID(11)),
    ENTRY("/home/u/.ssh", EXCLUDE, true, ID(12)),
    ENTRY("/home/u/.ssh/known_hosts", RO, false, FILE_ID(13)),
    ENTRY("/home/u/proj", RW, true, ID(14)),
    ENTRY("/home/u/proj/.git/hooks", RO, true, ID(15)),
    ENTRY("/home/u/proj/.secrets", EXCLUDE, true, ID(16)),
    ENTRY("/usr/bin/git", RO, false, FILE_ID(17)),
};

static const struct policy policy = {.entries = entries, .len = ARRAY_SIZE(entries)};
static char *const command[] = {"true", NULL};

static struct command_setting git_setting = {.name = "git", .kind = COMMAND_GIT};
static struct command_setting make_setting = {.name = "make", .kind = COMMAND_BLOCKED};

struct fixture {
	struct wrapper items[2];
	struct wrapper_plan wrappers;
	struct sandbox_net net;
	struct bwrap_input plan;
};

/* Every kind of mount the renderer knows: base layout, runtime dir, audit
 * and proxy sockets, the access table, wrappers (launcher, real program,
 * marker). */
static void fixture_init(struct fixture *f)
{
	*f = (struct fixture){0};
	f->items[0] = (struct wrapper){.setting = &git_setting,
				       .real = "/usr/bin/git",
				       .real_id = FILE_ID(30),
				       .targets = STRV_INIT,
				       .skipped = STRV_INIT};
	strv_push(&f->items[0].targets, "/usr/bin/git");
	f->items[1] =
	    (struct wrapper){.setting = &make_setting, .targets = STRV_INIT, .skipped = STRV_INIT};
	strv_push(&f->items[1].targets, "/usr/bin/make");
	f->wrappers = (struct wrapper_plan){.items = f->items, .len = 2};
	f->net = (struct sandbox_net){
	    .proxy_socket = "/run/user/1000/net/proxy.sock",
	    .proxy_socket_id = {.dev_major = 0, .dev_minor = 40, .ino = 41, .type = S_IFSOCK},
	    .http_port = 3128,
	    .socks_port = 1080};
	f->plan = (struct bwrap_input){
	    .policy = &policy,
	    .self_exe = "/usr/bin/agent-sandbox",
	    .self_id = FILE_ID(20),
	    .empty_file = "/run/user/1000/agent-sandbox/empty",
	    .empty_id = FILE_ID(21),
	    .root_id = ID(2),
	    .audit_socket = "/run/user/1000/agent-sandbox/audit.sock",
	    .audit_socket_id = {.dev_major = 0, .dev_minor = 40, .ino = 22, .type = S_IFSOCK},
	    .runtime_dir = "/run/user/1000",
	    .cwd = "/home/u/proj",
	    .mounts_fd = 9,
	    .command = command,
	    .wrappers = &f->wrappers,
	    .net = &f->net,
	};
}

static void fixture_release(struct fixture *f)
{
	for (size_t i = 0; i < 2; i++)
		strv_release(&f->items[i].targets);
}

static const struct mount_expectation *find(const struct mount_plan *p, const char *path)
{
	for (size_t i = 0; i < p->len; i++)
		if (!strcmp(p->items[i].path, path))
			return &p->items[i];
	return NULL;
}

static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strcmp(dir, "/") || (!strncmp(path, dir, n) && (!path[n] || path[n] == '/'));
}

static void bwrap_render_records_an_expectation_for_every_mount(void **state)
{
	static const struct {
		const char *op;
		int argc; /* arguments after op; the destination is the last */
	} ops[] = {
	    {"--bind", 2},   {"--ro-bind", 2}, {"--bind-try", 2}, {"--ro-bind-try", 2},
	    {"--tmpfs", 1},  {"--dev", 1},     {"--proc", 1},	  {"--dev-bind", 2},
	    {"--mqueue", 1}, {"--overlay", 1}, {"--bind-fd", 2},  {"--ro-bind-fd", 2},
	};
	struct fixture f;
	fixture_init(&f);
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan mounts = {0};
	size_t end = bwrap_render(&f.plan, &args, &mounts);

	/* The destinations bwrap is asked to mount on, in order; a later
	 * mount hides earlier ones at or beneath its destination. */
	_cleanup_strv_ struct strv visible = STRV_INIT;
	for (size_t i = 0; i < end; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(ops); k++) {
			if (strcmp(args.items[i], ops[k].op))
				continue;
			const char *dest = args.items[i + (size_t)ops[k].argc];
			_cleanup_strv_ struct strv kept = STRV_INIT;
			for (size_t v = 0; v < visible.len; v++)
				if (!within(visible.items[v], dest))
					strv_push(&kept, visible.items[v]);
			strv_push(&kept, dest);
			strv_release(&visible);
			visible = kept;
			kept = (struct strv)STRV_INIT;
		}
	}
	assert_true(visible.len > 20);
	for (size_t v = 0; v < visible.len; v++)
		if (!find(&mounts, visible.items[v]))
			unit_fail("%s is mounted without an expectation", visible.items[v]);
	if (mounts.len != visible.len)
		unit_fail("%zu expectations for %zu visible mounts", mounts.len, visible.len);
	fixture_release(&f);
}

static void bwrap_render_records_the_identity_decided_on(void **state)
{
	struct fixture f;
	fixture_init(&f);
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan mounts = {0};
	bwrap_render(&f.plan, &args, &mounts);
	static const struct {
		const char *dest;
		uint64_t ino;
	} cases[] = {
	    {"/", 2},
	    {SANDBOX_SELF, 20},
	    {"/home/u/.netrc", 21}, /* the empty file, not the masked one */
	    {"/home/u", 10},
	    {"/home/u/.ssh/known_hosts", 13},
	    {"/home/u/proj", 14},
	    {"/home/u/proj/.git/hooks", 15},
	    {"/usr/bin/git", 20}, /* the launcher over the program */
	    {"/usr/bin/make", 20},
	    {WRAPPER_BIN_DIR "/git", 30},
	    {WRAPPER_PRESET_DIR "/git", 21},
	    {WRAPPER_BLOCKED_DIR "/make", 21},
	    {AUDIT_SOCKET_INSIDE, 22},
	    {SANDBOX_PROXY_SOCKET, 41},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct mount_expectation *e = find(&mounts, cases[i].dest);
		if (!e)
			unit_fail("case %zu: no expectation for %s", i, cases[i].dest);
		if (e->kind != MOUNT_BIND || e->id.ino != cases[i].ino)
			unit_fail("case %zu: %s expects kind %d inode %llu, not inode %llu", i,
				  cases[i].dest, e->kind, (unsigned long long)e->id.ino,
				  (unsigned long long)cases[i].ino);
	}
	fixture_release(&f);
}

static void bwrap_render_records_kind_and_read_only_flag(void **state)
{
	struct fixture f;
	fixture_init(&f);
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan mounts = {0};
	bwrap_render(&f.plan, &args, &mounts);
	enum { RO = MOUNT_READ_ONLY, OPT = MOUNT_OPTIONAL, TRY = MOUNT_TRY };
	static const struct {
		const char *dest;
		enum mount_kind kind;
		unsigned flags;
	} cases[] = {
	    {"/", MOUNT_BIND, RO},
	    {"/dev", MOUNT_TMPFS, RO}, /* bwrap cannot size it: read-only */
	    {"/dev/shm", MOUNT_TMPFS, 0},
	    {"/proc", MOUNT_PROC, 0},
	    {"/proc/sys", MOUNT_PROC, RO | OPT | TRY},
	    {"/proc/sysrq-trigger", MOUNT_PROC, RO | OPT | TRY},
	    {"/tmp", MOUNT_TMPFS, 0},
	    {"/run/user/1000", MOUNT_TMPFS, 0},
	    {SANDBOX_DIR, MOUNT_TMPFS, RO}, /* remounted read-only at the end */
	    {SANDBOX_SELF, MOUNT_BIND, RO},
	    {AUDIT_SOCKET_INSIDE, MOUNT_BIND, 0},
	    /* A policy path must be there: one missing at the check may
	     * have been mounted elsewhere through a swapped symlink. */
	    {"/home/u", MOUNT_BIND, RO | TRY},
	    {"/home/u/.netrc", MOUNT_BIND, RO},
	    {"/home/u/.ssh", MOUNT_TMPFS, RO},
	    {"/home/u/proj", MOUNT_BIND, TRY},
	    {"/home/u/proj/.secrets", MOUNT_TMPFS, RO},
	    {"/usr/bin/git", MOUNT_BIND, RO},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct mount_expectation *e = find(&mounts, cases[i].dest);
		if (!e)
			unit_fail("case %zu: no expectation for %s", i, cases[i].dest);
		if (e->kind != cases[i].kind || e->flags != cases[i].flags)
			unit_fail("case %zu: %s is kind %d flags %u, expected kind %d flags %u", i,
				  cases[i].dest, e->kind, e->flags, cases[i].kind, cases[i].flags);
	}
	/* The run is the same without a plan: --dry-run shows what runs. */
	_cleanup_strv_ struct strv again = STRV_INIT;
	bwrap_render(&f.plan, &again, NULL);
	assert_int_equal(again.len, args.len);
	for (size_t j = 0; j < args.len; j++)
		assert_string_equal(again.items[j], args.items[j]);
	fixture_release(&f);
}

static void mount_plan_keeps_only_the_last_mount_at_or_beneath_a_destination(void **state)
{
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan p = {0};
	struct mount_sink s = {.args = &args, .plan = &p};
	struct file_id a = FILE_ID(1), b = FILE_ID(2);
	mount_plan_bind(&s, MOUNT_READ_ONLY, "/src", &a, "/x/y");
	mount_plan_bind(&s, 0, "/src", &a, "/x/y/z");
	mount_plan_bind(&s, 0, "/src", &a, "/xy");
	mount_plan_tmpfs(&s, "/x", 1 << 20);
	mount_plan_bind(&s, MOUNT_READ_ONLY, "/other", &b, "/xy");
	mount_plan_remount_ro(&s, "/x");
	assert_int_equal(p.len, 2);
	assert_string_equal(p.items[0].path, "/x");
	assert_int_equal(p.items[0].kind, MOUNT_TMPFS);
	assert_int_equal(p.items[0].flags, MOUNT_READ_ONLY);
	assert_string_equal(p.items[1].path, "/xy");
	assert_int_equal(p.items[1].id.ino, 2);
	assert_int_equal(p.items[1].flags, MOUNT_READ_ONLY);
	/* The arguments are all there, in order. */
	assert_int_equal(args.len, 3 * 3 + 4 + 3 + 2);
	assert_string_equal(args.items[0], "--ro-bind");
	assert_string_equal(args.items[3], "--bind");
	assert_string_equal(args.items[9], "--size");
	assert_string_equal(args.items[10], "1048576");
	assert_string_equal(args.items[11], "--tmpfs");
	assert_string_equal(args.items[args.len - 2], "--remount-ro");
}

static void mount_plan_survives_encoding(void **state)
{
	struct fixture f;
	fixture_init(&f);
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan mounts = {0};
	bwrap_render(&f.plan, &args, &mounts);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	mount_plan_encode(&mounts, &sb);
	_cleanup_mount_plan_ struct mount_plan back = {0};
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(mount_plan_decode(sb.buf, sb.len, &back, &err), 0);
	assert_int_equal(back.len, mounts.len);
	for (size_t i = 0; i < back.len; i++) {
		assert_string_equal(back.items[i].path, mounts.items[i].path);
		assert_int_equal(back.items[i].kind, mounts.items[i].kind);
		assert_int_equal(back.items[i].flags, mounts.items[i].flags);
		/* Field by field: the struct has padding. */
		assert_int_equal(back.items[i].id.dev_major, mounts.items[i].id.dev_major);
		assert_int_equal(back.items[i].id.dev_minor, mounts.items[i].id.dev_minor);
		assert_int_equal(back.items[i].id.ino, mounts.items[i].id.ino);
		assert_int_equal(back.items[i].id.type, mounts.items[i].id.type);
		if (mounts.items[i].source)
			assert_string_equal(back.items[i].source, mounts.items[i].source);
		else
			assert_null(back.items[i].source);
	}
	fixture_release(&f);
}

/* Byte offsets in an encoded one-record plan: magic (8), count (4), then
 * kind, flags, reserved (2), type (4), major, minor, inode (8), path
 * length (4), source length (4), path, source. */
enum {
	AT_COUNT = 8,
	AT_KIND = 12,
	AT_FLAGS = 13,
	AT_PATH_LEN = 36,
	AT_SOURCE_LEN = 40,
	AT_PATH = 44
};

static void mount_plan_decode_refuses_malformed_plans(void **state)
{
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan p = {0};
	struct mount_sink s = {.args = &args, .plan = &p};
	struct file_id id = FILE_ID(7);
	mount_plan_bind(&s, MOUNT_READ_ONLY, "/a", &id, "/abc");
	_cleanup_strbuf_ struct strbuf good = STRBUF_INIT;
	mount_plan_encode(&p, &good);
	assert_int_equal(good.len, AT_PATH + 4);

	/* Every truncation, and a byte too many. */
	for (size_t len = 0; len <= good.len + 1; len++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_add(&sb, good.buf, good.len);
		strbuf_addch(&sb, 'x');
		_cleanup_mount_plan_ struct mount_plan out = {0};
		_cleanup_error_ struct error err = ERROR_INIT;
		int r = mount_plan_decode(sb.buf, len, &out, &err);
		if ((r == 0) != (len == good.len))
			unit_fail("length %zu of %zu: decode returned %d", len, good.len, r);
		if (r < 0 && out.len)
			unit_fail("length %zu: a refused plan keeps %zu entries", len, out.len);
	}

	static const struct {
		size_t at;
		char byte;
		const char *why;
	} cases[] = {
	    {0, 'X', "header"},
	    {AT_COUNT, 2, "truncated"},
	    {AT_COUNT + 3, 1, "truncated"},
	    {AT_KIND, 0, "malformed"},
	    {AT_KIND, 4, "malformed"},
	    {AT_FLAGS, 8, "malformed"},
	    {AT_PATH_LEN, 5, "truncated"},
	    {AT_PATH_LEN, 0, "truncated"},
	    {AT_PATH, 'a', "malformed"},			      /* not absolute */
	    {AT_PATH + 2, '\0', "malformed"},			      /* a NUL inside */
	    {AT_FLAGS, MOUNT_READ_ONLY | MOUNT_BY_INIT, "malformed"}, /* no source */
	    {AT_SOURCE_LEN, 2, "truncated"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_add(&sb, good.buf, good.len);
		sb.buf[cases[i].at] = cases[i].byte;
		_cleanup_mount_plan_ struct mount_plan out = {0};
		_cleanup_error_ struct error err = ERROR_INIT;
		if (mount_plan_decode(sb.buf, sb.len, &out, &err) == 0)
			unit_fail("case %zu: byte %zu = %d was accepted", i, cases[i].at,
				  cases[i].byte);
		unit_assert_contains(err.msg, cases[i].why, "case %zu", i);
	}
}

/* The init's binds carry their source; the decoder holds them to what
 * the host can render: read-only binds from an absolute path. */
static void mount_plan_decode_checks_the_init_binds(void **state)
{
	(void)state;
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan p = {0};
	struct mount_sink s = {.args = &args, .plan = &p, .init_binds = true};
	struct file_id id = FILE_ID(7);
	mount_plan_init_bind(&s, MOUNT_READ_ONLY, "/src", &id, "/abc");
	assert_int_equal(args.len, 0); /* nothing for bwrap */
	_cleanup_strbuf_ struct strbuf good = STRBUF_INIT;
	mount_plan_encode(&p, &good);
	assert_int_equal(good.len, AT_PATH + 4 + 4);
	_cleanup_mount_plan_ struct mount_plan back = {0};
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(mount_plan_decode(good.buf, good.len, &back, &err), 0);
	assert_string_equal(back.items[0].source, "/src");
	assert_int_equal(mount_plan_init_binds(&back), 1);

	static const struct {
		size_t at;
		char byte;
	} cases[] = {
	    {AT_FLAGS, MOUNT_BY_INIT | MOUNT_TRY}, /* -try is bwrap's */
	    {AT_FLAGS, MOUNT_READ_ONLY},	   /* a source, not the init's */
	    {AT_FLAGS, MOUNT_READ_ONLY | MOUNT_BY_INIT | MOUNT_STAGING},
	    {AT_KIND, MOUNT_TMPFS}, /* not a bind */
	    {AT_PATH + 4, 's'},	    /* source not absolute */
	    {AT_PATH + 6, '\0'},    /* a NUL in the source */
	    {AT_SOURCE_LEN, 0},	    /* no source */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_add(&sb, good.buf, good.len);
		sb.buf[cases[i].at] = cases[i].byte;
		_cleanup_mount_plan_ struct mount_plan out = {0};
		_cleanup_error_ struct error e = ERROR_INIT;
		if (mount_plan_decode(sb.buf, sb.len, &out, &e) == 0)
			unit_fail("case %zu: byte %zu = %d was accepted", i, cases[i].at,
				  cases[i].byte);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bwrap_render_records_an_expectation_for_every_mount),
	    cmocka_unit_test(bwrap_render_records_the_identity_decided_on),
	    cmocka_unit_test(bwrap_render_records_kind_and_read_only_flag),
	    cmocka_unit_test(mount_plan_keeps_only_the_last_mount_at_or_beneath_a_destination),
	    cmocka_unit_test(mount_plan_survives_encoding),
	    cmocka_unit_test(mount_plan_decode_refuses_malformed_plans),
	    cmocka_unit_test(mount_plan_decode_checks_the_init_binds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
