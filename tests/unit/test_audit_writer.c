/* Unit tests for the audit writer's failures: records that a full device
 * refuses are counted with their error, audit_write_failure() words the
 * count for the user, and the end record carries it once it can be
 * written. (A record cut short on a real full filesystem is covered end to
 * end in tests/e2e/audit.sh.) */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "unit.h"

/* Opens the log in dir and points its descriptor at /dev/full, which
 * refuses every write with ENOSPC. Returns the log's real descriptor. */
static int open_on_full_device(struct audit *a, const char *dir)
{
	_cleanup_error_ struct error err = {0};
	assert_int_equal(audit_open(a, dir, &err), 0);
	int real = dup(a->fd);
	assert_true(real >= 0);
	_cleanup_close_ int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (full < 0)
		skip();
	assert_true(dup2(full, a->fd) >= 0);
	return real;
}

static void quarantine_record(struct audit *a)
{
	audit_quarantine(a, "/work/.envrc", "/quarantine/1", "test", NULL);
}

static void audit_write_failure_is_null_when_every_record_was_written(void **state)
{
	_cleanup_audit_ struct audit a = {.fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
	_cleanup_error_ struct error err = {0};
	assert_int_equal(audit_open(&a, *state, &err), 0);
	quarantine_record(&a);
	quarantine_record(&a);
	assert_null(audit_write_failure(&a));
}

static void audit_write_failure_counts_records_a_full_device_refused(void **state)
{
	_cleanup_audit_ struct audit a = {.fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
	_cleanup_close_ int real = open_on_full_device(&a, *state);
	quarantine_record(&a);
	_cleanup_free_ char *one = audit_write_failure(&a);
	assert_string_equal(one, "1 record could not be written: No space left on device");
	quarantine_record(&a);
	_cleanup_free_ char *two = audit_write_failure(&a);
	assert_string_equal(two, "2 records could not be written: No space left on device");
}

static void end_record_carries_the_count_once_it_can_be_written(void **state)
{
	_cleanup_audit_ struct audit a = {.fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
	_cleanup_close_ int real = open_on_full_device(&a, *state);
	quarantine_record(&a);
	quarantine_record(&a);
	assert_true(dup2(real, a.fd) >= 0); /* room again */
	audit_run_end(&a, 3, NULL);

	_cleanup_free_ char *path = unit_path(*state, "audit.jsonl");
	_cleanup_free_ char *text = NULL;
	size_t len;
	assert_int_equal(read_file(path, 1 << 20, &text, &len), 0);
	/* Nothing of the refused records landed, so the end record is the
	 * log's only line and starts it. */
	unit_assert_starts_with(text, "{\"time\":", "the log");
	assert_int_equal(strchr(text, '\n') - text + 1, (long)len);
	unit_assert_contains(text, "\"event\":\"end\"", "the end record");
	unit_assert_contains(text, "\"write_errors\":2", "the end record");
	unit_assert_contains(text, "\"write_error\":\"No space left on device\"", "the end record");
	/* The end record itself was written: the count stays at two. */
	_cleanup_free_ char *lost = audit_write_failure(&a);
	assert_string_equal(lost, "2 records could not be written: No space left on device");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    unit_tmp_test(audit_write_failure_is_null_when_every_record_was_written),
	    unit_tmp_test(audit_write_failure_counts_records_a_full_device_refused),
	    unit_tmp_test(end_record_carries_the_count_once_it_can_be_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
