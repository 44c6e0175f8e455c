/* Unit tests for rendering a plan as bwrap arguments: the isolation flags,
 * the base layout, one mount per access entry in parent-first order, and the
 * command after the "--" whose index bwrap_render returns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "sandbox/bwrap.h"
#include "base/cleanup.h"
#include "inside/inside.h"
#include "inside/init.h"
#include "unit.h"

static struct rule test_rule = {
    .pattern = "test", .level = ACCESS_RO, .layer = LAYER_CLI, .origin = "test"};

/* clang-format off */
#define ENTRY(p, lvl, dir) {.path = (p), .level = ACCESS_##lvl, .rule = &test_rule, .is_dir = (dir)}
/* clang-format on */

/* Sorted as policy_resolve sorts: every directory before its contents. */
static struct access_entry entries[] = {
    ENTRY("/home/u", RO, true),
    ENTRY("/home/u/.netrc", EXCLUDE, false),
    ENTRY("/home/u/.ssh", EXCLUDE, true),
    ENTRY("/home/u/.ssh/known_hosts", RO, false),
    ENTRY("/home/u/proj", RW, true),
    ENTRY("/home/u/proj/.git/hooks", RO, true),
    ENTRY("/home/u/proj/.secrets", EXCLUDE, true),
};

static const struct policy policy = {.entries = entries, .len = ARRAY_SIZE(entries)};

static char *const command[] = {"make", "test", "a b", "--", "", NULL};

static struct bwrap_input small_plan(void)
{
	return (struct bwrap_input){
	    .policy = &policy,
	    .host_network = false,
	    .new_session = false,
	    .self_exe = "/usr/bin/agent-sandbox",
	    .empty_file = "/run/user/1000/agent-sandbox/empty",
	    .runtime_dir = NULL,
	    .cwd = "/home/u/proj",
	    .seccomp = false,
	    .info_fd = 5,
	    .ready_fd = 6,
	    .stderr_fd = 7,
	    .mounts_fd = 8,
	    .ignored_signals = 0,
	    .command = command,
	    .tmp_size = 2ULL << 30,
	    .pids = 512,
	};
}

/* Index of the first occurrence of the NULL-terminated sequence in
 * args[from, to), or -1. */
static ssize_t find_seq(const struct strv *args, size_t from, size_t to, const char *const *seq)
{
	size_t n = 0;
	while (seq[n])
		n++;
	for (size_t i = from; i + n <= to; i++) {
		size_t j = 0;
		while (j < n && !strcmp(args->items[i + j], seq[j]))
			j++;
		if (j == n)
			return (ssize_t)i;
	}
	return -1;
}

#define SEQ(...) ((const char *const[]){__VA_ARGS__, NULL})

static ssize_t must_find(const struct strv *args, size_t end, const char *const *seq, size_t index)
{
	ssize_t at = find_seq(args, 0, end, seq);
	if (at < 0)
		unit_fail("case %zu: <%s %s ...> not among the options", index, seq[0],
			  seq[1] ? seq[1] : "");
	return at;
}

/* Each sequence found, each after the one before it. */
static void expect_in_order(const struct strv *args, size_t end, const char *const *const *expected,
			    size_t n)
{
	ssize_t previous = -1;
	for (size_t i = 0; i < n; i++) {
		ssize_t at = must_find(args, end, expected[i], i);
		if (at <= previous)
			unit_fail("case %zu: <%s> at %zd, not after case %zu", i, expected[i][0],
				  at, i - 1);
		previous = at;
	}
}

static void bwrap_render_isolates_namespaces_and_drops_capabilities(void **state)
{
	const char *const *expected[] = {
	    SEQ("--unshare-user"),	    SEQ("--unshare-ipc"),
	    SEQ("--unshare-pid"),	    SEQ("--unshare-uts"),
	    SEQ("--unshare-cgroup-try"),    SEQ("--die-with-parent"),
	    SEQ("--cap-drop", "ALL"),	    SEQ("--as-pid-1"),
	    SEQ("--info-fd", "5"),	    SEQ("--setenv", "AGENT_SANDBOX", "1"),
	    SEQ("--chdir", "/home/u/proj"),
	};
	struct bwrap_input plan = small_plan();
	_cleanup_strv_ struct strv args = STRV_INIT;
	size_t end = bwrap_render(&plan, &args, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++)
		must_find(&args, end, expected[i], i);
}

static void bwrap_render_adds_optional_flags_only_when_planned(void **state)
{
	static const struct {
		bool host_network;
		bool new_session;
		bool seccomp;
	} cases[] = {
	    {false, false, false},
	    {true, false, false},
	    {false, true, false},
	    {true, true, true},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct bwrap_input plan = small_plan();
		plan.host_network = cases[i].host_network;
		plan.new_session = cases[i].new_session;
		plan.seccomp = cases[i].seccomp;
		_cleanup_strv_ struct strv args = STRV_INIT;
		size_t end = bwrap_render(&plan, &args, NULL);
		if ((find_seq(&args, 0, end, SEQ("--unshare-net")) < 0) != cases[i].host_network)
			unit_fail("case %zu: --unshare-net %s", i,
				  cases[i].host_network ? "with host network" : "missing");
		if ((find_seq(&args, 0, end, SEQ("--new-session")) >= 0) != cases[i].new_session)
			unit_fail("case %zu: --new-session is wrong", i);
		/* The init loads the filter, after its binds: bwrap never
		 * gets it, and the init is told either it or that there is
		 * none. */
		if (find_seq(&args, 0, end, SEQ("--seccomp")) >= 0)
			unit_fail("case %zu: bwrap is given the filter", i);
		if ((find_seq(&args, end, args.len, SEQ(SECCOMP_ARG)) >= 0) != cases[i].seccomp)
			unit_fail("case %zu: " SECCOMP_ARG " is wrong", i);
		if ((find_seq(&args, end, args.len, SEQ(SECCOMP_OFF_ARG)) >= 0) == cases[i].seccomp)
			unit_fail("case %zu: " SECCOMP_OFF_ARG " is wrong", i);
	}
}

static void bwrap_render_lays_out_base_before_rules(void **state)
{
	struct bwrap_input plan = small_plan();
	plan.runtime_dir = "/run/user/1000";
	_cleanup_strv_ struct strv args = STRV_INIT;
	size_t end = bwrap_render(&plan, &args, NULL);
	/* In this order, and all before the first rule's mount. */
	const char *const *expected[] = {
	    SEQ("--ro-bind", "/", "/"),
	    SEQ("--dev", "/dev"),
	    SEQ("--size", "67108864", "--tmpfs", "/dev/shm"),
	    SEQ("--proc", "/proc"),
	    SEQ("--size", "2147483648", "--tmpfs", "/tmp"),
	    SEQ("--size", "67108864", "--tmpfs", "/run"),
	    SEQ("--perms", "0700", "--size", "67108864", "--tmpfs", "/run/user/1000"),
	    SEQ("--size", "16777216", "--tmpfs", SANDBOX_DIR),
	    SEQ("--ro-bind", "/usr/bin/agent-sandbox", SANDBOX_SELF),
	    SEQ("--ro-bind-try", "/home/u", "/home/u"),
	    SEQ("--chmod", "0111", SANDBOX_DIR),
	    SEQ("--remount-ro", SANDBOX_DIR),
	    /* Not before: a rule may mount into /dev. */
	    SEQ("--remount-ro", "/dev"),
	};
	expect_in_order(&args, end, expected, ARRAY_SIZE(expected));
	if (find_seq(&args, 0, end, SEQ("--bind", "/", "/")) >= 0)
		unit_fail("the host root is writable");
}

/* The front end's directories (the daemon's MCP sockets): read-only under
 * agent-sandbox's own directory, before it is made search-only and
 * read-only, each with its identity for the init's check. */
static void bwrap_render_binds_run_dirs_read_only_in_its_own_directory(void **state)
{
	struct bwrap_input plan = small_plan();
	const struct bwrap_copy binds[] = {
	    {.dest = SANDBOX_DIR "/mcp", .source = "/state/serve/mcp-1", .id = {.ino = 7}}};
	plan.run_binds = binds;
	plan.run_binds_len = 1;
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan mounts = {0};
	size_t end = bwrap_render(&plan, &args, &mounts);
	const char *const *expected[] = {
	    SEQ("--ro-bind", "/usr/bin/agent-sandbox", SANDBOX_SELF),
	    SEQ("--ro-bind", "/state/serve/mcp-1", SANDBOX_DIR "/mcp"),
	    SEQ("--chmod", "0111", SANDBOX_DIR),
	    SEQ("--remount-ro", SANDBOX_DIR),
	};
	expect_in_order(&args, end, expected, ARRAY_SIZE(expected));
	bool checked = false;
	for (size_t i = 0; i < mounts.len; i++)
		checked = checked || (!strcmp(mounts.items[i].path, SANDBOX_DIR "/mcp") &&
				      mounts.items[i].id.ino == 7 &&
				      (mounts.items[i].flags & MOUNT_READ_ONLY));
	if (!checked)
		unit_fail("the init does not check the run bind");
}

static void bwrap_render_renders_each_access_level(void **state)
{
	const char *const *expected[] = {
	    SEQ("--ro-bind-try", "/home/u", "/home/u"),
	    SEQ("--ro-bind", "/run/user/1000/agent-sandbox/empty", "/home/u/.netrc"),
	    SEQ("--size", "16777216", "--tmpfs", "/home/u/.ssh"),
	    SEQ("--ro-bind-try", "/home/u/.ssh/known_hosts", "/home/u/.ssh/known_hosts"),
	    SEQ("--bind-try", "/home/u/proj", "/home/u/proj"),
	    SEQ("--ro-bind-try", "/home/u/proj/.git/hooks", "/home/u/proj/.git/hooks"),
	    SEQ("--size", "16777216", "--tmpfs", "/home/u/proj/.secrets"),
	    /* Excluded directories become read-only last, deepest first, so that
	     * the mounts inside them are already in place. */
	    SEQ("--remount-ro", "/home/u/proj/.secrets"),
	    SEQ("--remount-ro", "/home/u/.ssh"),
	};
	struct bwrap_input plan = small_plan();
	_cleanup_strv_ struct strv args = STRV_INIT;
	size_t end = bwrap_render(&plan, &args, NULL);
	ssize_t previous = -1;
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		ssize_t at = must_find(&args, end, expected[i], i);
		if (at <= previous)
			unit_fail("case %zu: <%s %s> at %zd, not after case %zu", i, expected[i][0],
				  expected[i][1], at, i - 1);
		previous = at;
	}
	/* A file is hidden behind the empty file, never a tmpfs. */
	if (find_seq(&args, 0, end, SEQ("--tmpfs", "/home/u/.netrc")) >= 0)
		unit_fail("an excluded file became a tmpfs");
	if (find_seq(&args, 0, end, SEQ("--remount-ro", "/home/u/.netrc")) >= 0)
		unit_fail("an excluded file is remounted");
}

/* Each masked file is bound from its own stand-in, in policy order; one
 * without (fewer stand-ins than masked files) falls back to the shared
 * empty file, and a masked directory stays a tmpfs. */
/* Masked files (two of them with stand-ins), a masked directory, and a
 * writable directory with a masked file inside a writable project. */
static struct access_entry masked[] = {
    ENTRY("/home/u", RO, true),
    ENTRY("/home/u/.netrc", EXCLUDE, false),
    ENTRY("/home/u/.ssh", EXCLUDE, true),
    ENTRY("/home/u/proj", RW, true),
    ENTRY("/home/u/proj/.env", EXCLUDE, false),
    ENTRY("/home/u/proj/key.pem", EXCLUDE, false),
    ENTRY("/home/u/proj/sub", RW, true),
    ENTRY("/home/u/proj/sub/.env", EXCLUDE, false),
};
static const struct bwrap_copy stand_ins[] = {
    {.dest = "/home/u/.netrc", .source = "/run/m/0"},
    {.dest = "/home/u/proj/.env", .source = "/run/m/1"},
};

static void bwrap_render_binds_each_masked_file_from_its_own_stand_in(void **state)
{
	(void)state;
	const struct policy p = {.entries = masked, .len = ARRAY_SIZE(masked)};
	struct bwrap_input plan = small_plan();
	plan.policy = &p;
	plan.stand_ins = stand_ins;
	plan.stand_ins_len = ARRAY_SIZE(stand_ins);
	_cleanup_strv_ struct strv args = STRV_INIT;
	size_t end = bwrap_render(&plan, &args, NULL);
	assert_true(find_seq(&args, 0, end, SEQ("--ro-bind", "/run/m/0", "/home/u/.netrc")) >= 0);
	assert_true(find_seq(&args, 0, end, SEQ("--ro-bind", "/run/m/1", "/home/u/proj/.env")) >=
		    0);
	assert_true(find_seq(&args, 0, end,
			     SEQ("--ro-bind", "/run/user/1000/agent-sandbox/empty",
				 "/home/u/proj/key.pem")) >= 0);
	assert_true(find_seq(&args, 0, end, SEQ("--tmpfs", "/home/u/.ssh")) >= 0);
}

/* With the new mount API, the masked files' binds go to the init, and so
 * do binds of a path onto itself where the clone needs no flag cleared:
 * bwrap only stages the stand-ins and gives the init the capability to
 * bind them; the plan holds one record per bind, in policy order. */
static void bwrap_render_leaves_masked_files_to_the_init_when_asked(void **state)
{
	(void)state;
	const struct policy p = {.entries = masked, .len = ARRAY_SIZE(masked)};
	static const struct {
		bool init_binds;
		bool with_plan;
		bool expect_init;
	} cases[] = {
	    {true, true, true},
	    {false, true, false}, /* no new mount API, or the benchmark asks */
	    {true, false, false}, /* no plan to carry them */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct bwrap_input plan = small_plan();
		plan.policy = &p;
		plan.stand_ins = stand_ins;
		plan.stand_ins_len = ARRAY_SIZE(stand_ins);
		plan.stand_ins_dir = "/run/m";
		plan.init_binds = cases[i].init_binds;
		_cleanup_strv_ struct strv args = STRV_INIT;
		_cleanup_mount_plan_ struct mount_plan mounts = {0};
		size_t end = bwrap_render(&plan, &args, cases[i].with_plan ? &mounts : NULL);
		bool init = cases[i].expect_init;
		if ((find_seq(&args, 0, end, SEQ("--ro-bind", "/run/m/1", "/home/u/proj/.env")) <
		     0) != init)
			unit_fail("case %zu: bwrap binds .env: %s", i, init ? "yes" : "no");
		if ((find_seq(&args, 0, end, SEQ("--cap-add", "CAP_SYS_ADMIN")) >= 0) != init)
			unit_fail("case %zu: --cap-add is wrong", i);
		if ((find_seq(&args, 0, end, SEQ("--ro-bind", "/run/m", SANDBOX_STAGE_STAND_INS)) >=
		     0) != init)
			unit_fail("case %zu: the stand-ins are not staged", i);
		/* A masked directory stays bwrap's tmpfs either way. */
		if (find_seq(&args, 0, end, SEQ("--tmpfs", "/home/u/.ssh")) < 0)
			unit_fail("case %zu: no tmpfs on .ssh", i);
		if (!init)
			continue;
		/* proj stays bwrap's (writable under read-only), and so does
		 * /home/u, which holds bwrap's tmpfs and proj; sub is bound
		 * onto itself. */
		assert_int_equal(mount_plan_init_binds(&mounts), 5);
		if (find_seq(&args, 0, end, SEQ("--bind-try", "/home/u/proj", "/home/u/proj")) < 0)
			unit_fail("case %zu: proj is not bwrap's", i);
		if (find_seq(&args, 0, end, SEQ("--ro-bind-try", "/home/u", "/home/u")) < 0)
			unit_fail("case %zu: /home/u is not bwrap's", i);
		const char *const want[][2] = {
		    {"/home/u/.netrc", SANDBOX_STAGE_STAND_INS "/0"},
		    {"/home/u/proj/.env", SANDBOX_STAGE_STAND_INS "/1"},
		    {"/home/u/proj/key.pem", SANDBOX_STAGE_EMPTY},
		    {"/home/u/proj/sub", "/home/u/proj/sub"},
		    {"/home/u/proj/sub/.env", SANDBOX_STAGE_EMPTY},
		};
		size_t k = 0;
		for (size_t j = 0; j < mounts.len; j++) {
			const struct mount_expectation *e = &mounts.items[j];
			if (!(e->flags & MOUNT_BY_INIT))
				continue;
			assert_string_equal(e->path, want[k][0]);
			assert_string_equal(e->source, want[k][1]);
			assert_int_equal(e->flags & MOUNT_READ_ONLY,
					 strcmp(e->path, "/home/u/proj/sub") ? MOUNT_READ_ONLY : 0);
			k++;
		}
	}
}

static void bwrap_render_binds_root_writable_when_policy_says_so(void **state)
{
	struct access_entry with_root[] = {
	    ENTRY("/", RW, true),
	    ENTRY("/etc", RO, true),
	};
	const struct policy p = {.entries = with_root, .len = ARRAY_SIZE(with_root)};
	struct bwrap_input plan = small_plan();
	plan.policy = &p;
	_cleanup_strv_ struct strv args = STRV_INIT;
	size_t end = bwrap_render(&plan, &args, NULL);
	ssize_t root = find_seq(&args, 0, end, SEQ("--bind", "/", "/"));
	assert_true(root >= 0);
	assert_true(find_seq(&args, 0, end, SEQ("--ro-bind", "/", "/")) < 0);
	assert_true(find_seq(&args, 0, end, SEQ("--bind-try", "/", "/")) < 0);
	assert_true(find_seq(&args, 0, end, SEQ("--ro-bind-try", "/etc", "/etc")) > root);
}

static void bwrap_render_passes_landlock_paths_and_ports_to_the_init(void **state)
{
	(void)state;
	struct hardening layers = {
	    .landlock_fs = true, .landlock_net = true, .writable = STRV_INIT, .sockets = STRV_INIT};
	strv_push(&layers.writable, "/home/u/proj");
	strv_push(&layers.writable, "/tmp");
	strv_push(&layers.sockets, "/home/u/.colima/default/docker.sock");
	static const uint16_t localhost[] = {5432};
	struct sandbox_net net = {.proxy_socket = "/run/p.sock",
				  .http_port = 3128,
				  .socks_port = 1080,
				  .localhost = localhost,
				  .localhost_len = 1};
	struct bwrap_input plan = small_plan();
	plan.hardening = &layers;
	plan.net = &net;
	_cleanup_strv_ struct strv args = STRV_INIT;
	size_t end = bwrap_render(&plan, &args, NULL);
	ssize_t init = find_seq(&args, end, args.len, SEQ(SANDBOX_SELF, SANDBOX_INIT_ARG));
	assert_true(init > 0);
	assert_true(find_seq(&args, init, args.len,
			     SEQ(LANDLOCK_RW_ARG "/home/u/proj", LANDLOCK_RW_ARG "/tmp",
				 LANDLOCK_SOCKET_ARG "/home/u/.colima/default/docker.sock",
				 LANDLOCK_CONNECT_ARG "3128", LANDLOCK_CONNECT_ARG "1080",
				 LANDLOCK_CONNECT_ARG "5432", "--")) > init);
	assert_true(find_seq(&args, 0, args.len, SEQ(LANDLOCK_OFF_ARG)) < 0);
	strv_release(&layers.writable);
	strv_release(&layers.sockets);
}

static void bwrap_render_returns_index_of_separator_before_command(void **state)
{
	static const struct {
		unsigned long signals;
		const char *shown;
	} cases[] = {
	    {0, "0"},
	    {(1ul << 1) | (1ul << 14), "0x4002"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct bwrap_input plan = small_plan();
		plan.ignored_signals = cases[i].signals;
		_cleanup_strv_ struct strv args = STRV_INIT;
		strv_push(&args, "bwrap"); /* appended to, not replaced */
		size_t end = bwrap_render(&plan, &args, NULL);
		assert_string_equal(args.items[0], "bwrap");
		if (end >= args.len || strcmp(args.items[end], "--") != 0)
			unit_fail("case %zu: index %zu is not \"--\"", i, end);
		if (find_seq(&args, 0, end, SEQ("--")) >= 0)
			unit_fail("case %zu: a \"--\" among the options", i);

		/* Without layers the init is told plainly that Landlock is
		 * left out: it refuses to guess. */
		const char *const tail[] = {"--",
					    SANDBOX_SELF,
					    SANDBOX_INIT_ARG,
					    "6",
					    "7",
					    cases[i].shown,
					    MOUNT_PLAN_ARG "8",
					    SECCOMP_OFF_ARG,
					    PIDS_ARG "512",
					    LANDLOCK_OFF_ARG,
					    "--",
					    "make",
					    "test",
					    "a b",
					    "--",
					    ""};
		if (args.len != end + ARRAY_SIZE(tail))
			unit_fail("case %zu: %zu arguments after the options, expected %zu", i,
				  args.len - end, ARRAY_SIZE(tail));
		for (size_t j = 0; j < ARRAY_SIZE(tail); j++)
			if (strcmp(args.items[end + j], tail[j]) != 0)
				unit_fail("case %zu: argument %zu after the options is <%s>, "
					  "expected <%s>",
					  i, j, args.items[end + j], tail[j]);
		assert_null(args.items[args.len]);

		/* Pure: the same plan gives the same arguments. */
		_cleanup_strv_ struct strv again = STRV_INIT;
		strv_push(&again, "bwrap");
		assert_int_equal(bwrap_render(&plan, &again, NULL), end);
		assert_int_equal(again.len, args.len);
		for (size_t j = 0; j < args.len; j++)
			assert_string_equal(again.items[j], args.items[j]);
	}
}

/* The whole rendering of the small plan, argument by argument: a change to
 * any of it (order included) must be deliberate, and shows here. */
static const char *const golden_small[] = {
    "--unshare-user",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--unshare-net",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--as-pid-1",
    "--info-fd",
    "5",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--size",
    "67108864",
    "--tmpfs",
    "/dev/shm",
    "--proc",
    "/proc",
    "--ro-bind-try",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    "--ro-bind-try",
    "/proc/irq",
    "/proc/irq",
    "--ro-bind-try",
    "/proc/bus",
    "/proc/bus",
    "--size",
    "2147483648",
    "--tmpfs",
    "/tmp",
    "--size",
    "67108864",
    "--tmpfs",
    "/run",
    "--size",
    "16777216",
    "--tmpfs",
    "/run/agent-sandbox",
    "--ro-bind",
    "/usr/bin/agent-sandbox",
    "/run/agent-sandbox/agent-sandbox",
    "--ro-bind-try",
    "/home/u",
    "/home/u",
    "--ro-bind",
    "/run/user/1000/agent-sandbox/empty",
    "/home/u/.netrc",
    "--size",
    "16777216",
    "--tmpfs",
    "/home/u/.ssh",
    "--ro-bind-try",
    "/home/u/.ssh/known_hosts",
    "/home/u/.ssh/known_hosts",
    "--bind-try",
    "/home/u/proj",
    "/home/u/proj",
    "--ro-bind-try",
    "/home/u/proj/.git/hooks",
    "/home/u/proj/.git/hooks",
    "--size",
    "16777216",
    "--tmpfs",
    "/home/u/proj/.secrets",
    "--remount-ro",
    "/home/u/proj/.secrets",
    "--remount-ro",
    "/home/u/.ssh",
    "--chmod",
    "0111",
    "/run/agent-sandbox",
    "--remount-ro",
    "/run/agent-sandbox",
    "--remount-ro",
    "/dev",
    "--setenv",
    "AGENT_SANDBOX",
    "1",
    "--chdir",
    "/home/u/proj",
    "--",
    "/run/agent-sandbox/agent-sandbox",
    "--sandbox-init",
    "6",
    "7",
    "0",
    "--mounts=8",
    "--no-seccomp",
    "--pids=512",
    "--no-landlock",
    "--",
    "make",
    "test",
    "a b",
    "--",
    "",
};

static void bwrap_render_matches_the_golden_rendering(void **state)
{
	struct bwrap_input plan = small_plan();
	_cleanup_strv_ struct strv args = STRV_INIT;
	bwrap_render(&plan, &args, NULL);
	for (size_t i = 0; i < args.len && i < ARRAY_SIZE(golden_small); i++)
		if (strcmp(args.items[i], golden_small[i]))
			unit_fail("argument %zu: \"%s\", expected \"%s\"", i, args.items[i],
				  golden_small[i]);
	assert_int_equal(args.len, ARRAY_SIZE(golden_small));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bwrap_render_matches_the_golden_rendering),
	    cmocka_unit_test(bwrap_render_isolates_namespaces_and_drops_capabilities),
	    cmocka_unit_test(bwrap_render_adds_optional_flags_only_when_planned),
	    cmocka_unit_test(bwrap_render_lays_out_base_before_rules),
	    cmocka_unit_test(bwrap_render_binds_run_dirs_read_only_in_its_own_directory),
	    cmocka_unit_test(bwrap_render_renders_each_access_level),
	    cmocka_unit_test(bwrap_render_binds_each_masked_file_from_its_own_stand_in),
	    cmocka_unit_test(bwrap_render_leaves_masked_files_to_the_init_when_asked),
	    cmocka_unit_test(bwrap_render_binds_root_writable_when_policy_says_so),
	    cmocka_unit_test(bwrap_render_returns_index_of_separator_before_command),
	    cmocka_unit_test(bwrap_render_passes_landlock_paths_and_ports_to_the_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
