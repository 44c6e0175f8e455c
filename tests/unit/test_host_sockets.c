/* Unit tests for the host socket hiding: the /proc/net/unix parser on the
 * kernel's own format and on odd input (names with spaces, abstract and
 * unnamed sockets, relative names, short and unterminated lines), the
 * exclude rules, and the Landlock masks each ABI gets (ABI 9 cannot run on
 * every kernel, so its ruleset is checked here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/strv.h"
#include "policy/host_sockets.h"
#include "sandbox/landlock.h"
#include "unit.h"

#define HEADER "Num       RefCount Protocol Flags    Type St Inode Path\n"
#define ENTRY "0000000000000000: 00000002 00000000 00010000 0001 01 23456"

static void collect(const char *path, size_t len, unsigned long inode, void *data)
{
	strv_push_owned(data, xstrndup(path, len));
}

static void parse(const char *text, struct strv *out)
{
	size_t n = host_sockets_parse(text, strlen(text), collect, out);
	assert_int_equal(n, out->len);
}

static void parser_takes_pathnames_and_skips_abstract_and_unnamed(void **state)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	parse(HEADER ENTRY " /home/u/.docker/run/docker.sock\n" ENTRY " @/tmp/.X11-unix/X0\n" ENTRY
			   "\n" ENTRY " /var/lib/a b.sock\n" ENTRY " relative.sock\n",
	      &names);
	assert_int_equal(names.len, 3);
	assert_string_equal(names.items[0], "/home/u/.docker/run/docker.sock");
	/* A name may hold spaces: the rest of the line is the name. */
	assert_string_equal(names.items[1], "/var/lib/a b.sock");
	/* Relative names are passed on: the caller says why it skips them. */
	assert_string_equal(names.items[2], "relative.sock");
}

static void parser_survives_odd_input(void **state)
{
	static const char *const inputs[] = {
	    "",
	    "\n",
	    HEADER,
	    "no header newline",
	    HEADER "0000: 1 2 3\n",	    /* too few fields */
	    HEADER ENTRY,		    /* no name, no newline */
	    HEADER ENTRY " ",		    /* a space and nothing after it */
	    HEADER "       \n   \n",	    /* blanks only */
	    HEADER ENTRY "  /two/spaces\n", /* the name would start with a space */
	};
	for (size_t i = 0; i < ARRAY_SIZE(inputs); i++) {
		_cleanup_strv_ struct strv names = STRV_INIT;
		parse(inputs[i], &names);
		if (i == 8) {
			/* Passed as " /two/spaces": not absolute, so skipped
			 * by the caller, never a path elsewhere. */
			assert_int_equal(names.len, 1);
			assert_string_equal(names.items[0], " /two/spaces");
		} else {
			assert_int_equal(names.len, 0);
		}
	}
}

static void parser_reads_a_name_without_a_final_newline(void **state)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	parse(HEADER ENTRY " /srv/last.sock", &names);
	assert_int_equal(names.len, 1);
	assert_string_equal(names.items[0], "/srv/last.sock");
}

/* The kernel prints a name's bytes as they are: a line end in it starts a
 * line that is not an entry, and the name runs on to the next entry. */
static void parser_reads_a_name_with_line_ends_up_to_the_next_entry(void **state)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	parse(HEADER ENTRY " /home/u/odd\ndir/s.sock\n" ENTRY " /two\n\nlines\n" ENTRY " /last\n",
	      &names);
	assert_int_equal(names.len, 3);
	assert_string_equal(names.items[0], "/home/u/odd\ndir/s.sock");
	assert_string_equal(names.items[1], "/two\n\nlines");
	assert_string_equal(names.items[2], "/last");
}

static void collect_inode(const char *path, size_t len, unsigned long inode, void *data)
{
	*(unsigned long *)data = inode;
}

/* The inode (of the socket filesystem) finds the process holding a socket
 * whose name leads nowhere from outside it. */
static void parser_gives_each_names_inode(void **state)
{
	unsigned long inode = 0;
	const char *text = HEADER ENTRY " relative.sock\n";
	assert_int_equal(host_sockets_parse(text, strlen(text), collect_inode, &inode), 1);
	assert_int_equal(inode, 23456);
	text = HEADER "0000000000000000: 00000002 00000000 00010000 0001 01 2x3 /a.sock\n";
	assert_int_equal(host_sockets_parse(text, strlen(text), collect_inode, &inode), 1);
	assert_int_equal(inode, 0);
}

/* The header line is never an entry, whatever it says. */
static void parser_skips_the_header_line(void **state)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	parse(ENTRY " /looks/like/an/entry\n" ENTRY " /real.sock\n", &names);
	assert_int_equal(names.len, 1);
	assert_string_equal(names.items[0], "/real.sock");
}

static const struct rule *find_rule(const struct rule_list *rules, const char *pattern)
{
	for (size_t i = 0; i < rules->len; i++)
		if (!strcmp(rules->items[i].pattern, pattern))
			return &rules->items[i];
	return NULL;
}

static void found_sockets_are_hidden_unless_listed_or_hidden_already(void **state)
{
	_cleanup_strv_ struct strv found = STRV_INIT;
	strv_push(&found, "/home/u/work/x.sock");
	strv_push(&found, "/home/u/.docker/run/docker.sock"); /* its directory is hidden */
	strv_push(&found, "/srv/listed.sock");
	_cleanup_strv_ struct strv listed = STRV_INIT;
	strv_push(&listed, "/srv/listed.sock");
	struct rule_list rules = RULE_LIST_INIT;
	char *envp[] = {NULL};
	host_sockets_add_rules(envp, "/home/u", "/home/u/work", NULL, &found, &listed, &rules);

	const struct rule *r = find_rule(&rules, "/home/u/work/x.sock");
	assert_non_null(r);
	assert_int_equal(r->level, ACCESS_EXCLUDE);
	assert_int_equal(r->layer, LAYER_BUILTIN);
	unit_assert_contains(r->origin, "--socket", "the reason names the way out");
	assert_null(find_rule(&rules, "/home/u/.docker/run/docker.sock"));
	assert_non_null(find_rule(&rules, "/home/u/.docker/run"));
	assert_non_null(find_rule(&rules, "/home/u/.cache/git/credential"));
	assert_non_null(find_rule(&rules, "/var/lib/incus/unix.socket"));
	assert_null(find_rule(&rules, "/srv/listed.sock"));
	rule_list_release(&rules);
}

static void a_listed_known_location_is_not_hidden(void **state)
{
	_cleanup_strv_ struct strv listed = STRV_INIT;
	strv_push(&listed, "/home/u/.rd/docker.sock");
	struct rule_list rules = RULE_LIST_INIT;
	char *envp[] = {NULL};
	host_sockets_add_rules(envp, "/home/u", "/home/u/work", NULL, NULL, &listed, &rules);
	assert_null(find_rule(&rules, "/home/u/.rd/docker.sock"));
	assert_non_null(find_rule(&rules, "/home/u/.colima"));
	rule_list_release(&rules);
}

static void a_runtime_dir_outside_run_is_hidden_unless_it_holds_the_project(void **state)
{
	struct rule_list rules = RULE_LIST_INIT;
	char *outside[] = {"XDG_RUNTIME_DIR=/mnt/wslg/runtime-dir", NULL};
	host_sockets_add_rules(outside, "/home/u", "/home/u/work",
			       "/mnt/wslg/runtime-dir/agent-sandbox", NULL, NULL, &rules);
	assert_non_null(find_rule(&rules, "/mnt/wslg/runtime-dir"));
	/* Within the hidden directory: no rule of its own. */
	assert_null(find_rule(&rules, "/mnt/wslg/runtime-dir/agent-sandbox"));
	rule_list_release(&rules);

	/* Under /run it is a private tmpfs already: no rule. */
	char *under_run[] = {"XDG_RUNTIME_DIR=/run/user/1000", NULL};
	host_sockets_add_rules(under_run, "/home/u", "/home/u/work", "/run/user/1000/agent-sandbox",
			       NULL, NULL, &rules);
	assert_null(find_rule(&rules, "/run/user/1000"));
	assert_null(find_rule(&rules, "/run/user/1000/agent-sandbox"));
	rule_list_release(&rules);

	/* One that holds the project keeps it: only agent-sandbox's own
	 * directory (other sandboxes' proxy and audit sockets) goes. */
	char *holds[] = {"XDG_RUNTIME_DIR=/home/u", NULL};
	host_sockets_add_rules(holds, "/home/u", "/home/u/work", "/home/u/agent-sandbox", NULL,
			       NULL, &rules);
	assert_null(find_rule(&rules, "/home/u"));
	assert_non_null(find_rule(&rules, "/home/u/agent-sandbox"));
	rule_list_release(&rules);
}

/* Without a runtime directory it is /tmp/agent-sandbox-UID: private,
 * unless the home directory is /tmp. */
static void the_own_runtime_dir_in_tmp_is_hidden_when_the_home_is_tmp(void **state)
{
	struct rule_list rules = RULE_LIST_INIT;
	char *envp[] = {NULL};
	host_sockets_add_rules(envp, "/home/u", "/home/u/work", "/tmp/agent-sandbox-1000", NULL,
			       NULL, &rules);
	assert_null(find_rule(&rules, "/tmp/agent-sandbox-1000"));
	rule_list_release(&rules);
	host_sockets_add_rules(envp, "/tmp", "/srv/work", "/tmp/agent-sandbox-1000", NULL, NULL,
			       &rules);
	assert_non_null(find_rule(&rules, "/tmp/agent-sandbox-1000"));
	rule_list_release(&rules);
}

#define RESOLVE_UNIX (1ULL << 16)

static void landlock_handles_resolve_unix_only_from_abi_9(void **state)
{
	for (int abi = 1; abi <= 10; abi++) {
		struct landlock_masks m;
		landlock_masks_for(abi, true, &m);
		if (abi >= 9) {
			assert_true(m.fs & RESOLVE_UNIX);
			assert_int_equal(m.socket, RESOLVE_UNIX);
		} else {
			assert_false(m.fs & RESOLVE_UNIX);
			assert_int_equal(m.socket, 0);
		}
		/* A writable tree never grants connecting to sockets made
		 * outside the command: only a listed socket does. */
		assert_false(m.writable & RESOLVE_UNIX);
		assert_int_equal(m.writable, m.fs & ~RESOLVE_UNIX);
	}
}

static void landlock_scopes_abstract_sockets_from_abi_6(void **state)
{
	for (int abi = 1; abi <= 10; abi++) {
		struct landlock_masks m;
		landlock_masks_for(abi, false, &m);
		assert_int_equal(m.scoped, abi >= 6 ? 1 : 0);
		assert_int_equal(m.net, 0);
	}
}

/* The kernel knows one u64 before ABI 4, two before ABI 6, three since. */
static void landlock_passes_the_ruleset_size_the_kernel_knows(void **state)
{
	static const size_t sizes[] = {0, 8, 8, 8, 16, 16, 24, 24, 24, 24};
	for (int abi = 1; abi <= 9; abi++) {
		struct landlock_masks m;
		landlock_masks_for(abi, true, &m);
		assert_int_equal(m.attr_size, sizes[abi]);
		assert_int_equal(m.net, abi >= 4 ? 3 : 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parser_takes_pathnames_and_skips_abstract_and_unnamed),
	    cmocka_unit_test(parser_survives_odd_input),
	    cmocka_unit_test(parser_reads_a_name_without_a_final_newline),
	    cmocka_unit_test(parser_reads_a_name_with_line_ends_up_to_the_next_entry),
	    cmocka_unit_test(parser_gives_each_names_inode),
	    cmocka_unit_test(parser_skips_the_header_line),
	    cmocka_unit_test(found_sockets_are_hidden_unless_listed_or_hidden_already),
	    cmocka_unit_test(a_listed_known_location_is_not_hidden),
	    cmocka_unit_test(a_runtime_dir_outside_run_is_hidden_unless_it_holds_the_project),
	    cmocka_unit_test(the_own_runtime_dir_in_tmp_is_hidden_when_the_home_is_tmp),
	    cmocka_unit_test(landlock_handles_resolve_unix_only_from_abi_9),
	    cmocka_unit_test(landlock_scopes_abstract_sockets_from_abi_6),
	    cmocka_unit_test(landlock_passes_the_ruleset_size_the_kernel_knows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
