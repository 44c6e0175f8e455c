/* Unit tests for the records of running sandboxes (workspace/instance.c):
 * which names a user may give, the default name, and a record's text read
 * back as the same record while a forged or broken one is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "workspace/instance.h"
#include "unit.h"

static void instance_check_name_accepts_only_the_documented_form(void **state)
{
	static const struct {
		const char *name;
		bool ok;
	} cases[] = {
	    {"a", true},
	    {"proj", true},
	    {"proj-feature_x.2", true},
	    {"0day", true},
	    {"a.b", true},
	    {"", false},
	    {"-x", false},
	    {".hidden", false},
	    {"_x", false},
	    {"a/b", false},
	    {"..", false},
	    {"a..b", false},
	    {"a b", false},
	    {"a\nb", false},
	    {"caf\xc3\xa9", false},
	    {"1234567890123456789012345678901234567890123456789012345678901234", true},
	    {"12345678901234567890123456789012345678901234567890123456789012345", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		int r = instance_check_name(cases[i].name, &err);
		if ((r == 0) != cases[i].ok)
			unit_fail("name \"%s\": expected %s", cases[i].name,
				  cases[i].ok ? "accepted" : "refused");
		if (r < 0) {
			assert_int_equal(err.kind, ERROR_USAGE);
			unit_assert_contains(err.msg, "expected 1 to 64 letters", "name %zu", i);
		}
	}
}

static void instance_default_name_is_a_valid_name(void **state)
{
	static const struct {
		const char *project, *branch, *want;
	} cases[] = {
	    {"/home/u/proj", NULL, "proj"},
	    {"/home/u/proj", "feature/login", "proj-feature-login"},
	    {"/home/u/my project", NULL, "my-project"},
	    {"/home/u/.dotfiles", NULL, "sandbox.dotfiles"},
	    {"/", NULL, "sandbox"},
	    {"/home/u/a..b", "x..y", "a.-b-x.-y"},
	    {"/home/u/caf\xc3\xa9", NULL, "caf--"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *name =
		    instance_default_name(cases[i].project, cases[i].branch);
		if (strcmp(name, cases[i].want))
			unit_fail("case %zu: got \"%s\", want \"%s\"", i, name, cases[i].want);
		_cleanup_error_ struct error err = ERROR_INIT;
		assert_int_equal(instance_check_name(name, &err), 0);
	}
	/* Long names leave room for "-NNN". */
	char long_dir[200] = "/p/";
	memset(long_dir + 3, 'x', 150);
	long_dir[153] = '\0';
	_cleanup_free_ char *name = instance_default_name(long_dir, NULL);
	assert_int_equal(strlen(name), INSTANCE_NAME_MAX - 4);
}

static void instance_record_reads_back_as_written(void **state)
{
	struct instance in = {
	    .name = (char *)"proj-2",
	    .pid = 4242,
	    .pid_start = 987654321ull,
	    .started = 1795000000,
	    .project = (char *)"/home/u/proj",
	    .workdir = (char *)"/home/u/proj/sub",
	    .network = (char *)"filtered",
	    .policy_digest = (char *)"sha256:00",
	    .limits = {.memory_bytes = 1ull << 32, .pids = 512, .timeout_ms = 60000},
	    .control_socket = (char *)"/run/user/1000/agent-sandbox/proj-2.sock",
	};
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)"echo \"\n\x1b\"", NULL};
	in.command = (struct strv){.items = argv, .len = 3};
	_cleanup_free_ char *text = instance_record_text(&in);
	assert_non_null(strchr(text, '\n'));
	assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1);
	struct instance back;
	assert_true(instance_parse_record(text, &back));
	assert_string_equal(back.name, "proj-2");
	assert_int_equal(back.pid, 4242);
	assert_true(back.pid_start == 987654321ull);
	assert_int_equal(back.started, 1795000000);
	assert_null(back.branch);
	assert_string_equal(back.workdir, "/home/u/proj/sub");
	assert_int_equal(back.command.len, 3);
	assert_string_equal(back.command.items[2], "echo \"\n\x1b\"");
	assert_true(back.limits.memory_bytes == 1ull << 32);
	assert_int_equal(back.limits.pids, 512);
	assert_int_equal(back.limits.timeout_ms, 60000);
	assert_string_equal(back.control_socket, in.control_socket);
	instance_release(&back);
}

static void instance_parse_record_refuses_forged_and_broken_records(void **state)
{
	static const char *const cases[] = {
	    "",
	    "{",
	    "[]",
	    "{\"pid\":5}",
	    "{\"name\":\"a\"}",
	    "{\"name\":\"a\",\"pid\":0}",
	    "{\"name\":\"a\",\"pid\":-3}",
	    "{\"name\":\"a\",\"pid\":\"5\"}",
	    "{\"name\":\"../a\",\"pid\":5}",
	    "{\"name\":\"a/b\",\"pid\":5}",
	    "{\"name\":7,\"pid\":5}",
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct instance in;
		if (instance_parse_record(cases[i], &in))
			unit_fail("accepted: %s", cases[i]);
		instance_release(&in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(instance_check_name_accepts_only_the_documented_form),
	    cmocka_unit_test(instance_default_name_is_a_valid_name),
	    cmocka_unit_test(instance_record_reads_back_as_written),
	    cmocka_unit_test(instance_parse_record_refuses_forged_and_broken_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
