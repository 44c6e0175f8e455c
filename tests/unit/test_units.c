/* Unit tests for the limit parsers of base/units: sizes, durations and CPU
 * counts, each a table of accepted texts with their values and of refused
 * ones with the reason given (overflow, empty, fraction, negative, junk). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/units.h"
#include "unit.h"

static void size_parse_accepts_units_and_refuses_the_rest(void **state)
{
	static const struct {
		const char *text;
		unsigned long long bytes; /* when why is NULL */
		const char *why;	  /* part of the reason, or NULL: accepted */
	} cases[] = {
	    {"0", 0, NULL},
	    {"1048576", 1048576, NULL},
	    {"64m", 64ULL << 20, NULL},
	    {"64M", 64ULL << 20, NULL},
	    {"4g", 4ULL << 30, NULL},
	    {"4GiB", 4ULL << 30, NULL},
	    {"512kb", 512ULL << 10, NULL},
	    {"2t", 2ULL << 40, NULL},
	    {"", 0, "does not start with a number"},
	    {"g", 0, "does not start with a number"},
	    {"-1g", 0, "negative"},
	    {"1.5g", 0, "fraction"},
	    {"12q", 0, "unit"},
	    {"1g ", 0, "unit"},
	    {"1gg", 0, "unit"},
	    {" 1g", 0, "does not start with a number"},
	    {"18446744073709551615", 18446744073709551615ULL, NULL},
	    {"18446744073709551616", 0, "too large"},
	    {"17179869184g", 0, "too large"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned long long v = 7;
		const char *why = NULL;
		bool ok = size_parse(cases[i].text, &v, &why);
		if (!cases[i].why) {
			if (!ok)
				unit_fail("\"%s\" refused: %s", cases[i].text, why);
			if (v != cases[i].bytes)
				unit_fail("\"%s\" is %llu, not %llu", cases[i].text, v,
					  cases[i].bytes);
		} else {
			if (ok)
				unit_fail("\"%s\" accepted as %llu", cases[i].text, v);
			unit_assert_contains(why, cases[i].why, "\"%s\"", cases[i].text);
		}
	}
}

static void duration_parse_needs_a_unit_and_refuses_overflow(void **state)
{
	static const struct {
		const char *text;
		unsigned long long ms;
		const char *why;
	} cases[] = {
	    {"1500ms", 1500, NULL},
	    {"1s", 1000, NULL},
	    {"90s", 90000, NULL},
	    {"10m", 600000, NULL},
	    {"2h", 7200000, NULL},
	    {"0s", 0, NULL},
	    {"10", 0, "no unit"},
	    {"", 0, "does not start with a number"},
	    {"s", 0, "does not start with a number"},
	    {"-5s", 0, "negative"},
	    {"1.5s", 0, "fraction"},
	    {"10d", 864000000ULL, NULL},
	    {"10sec", 0, "unit"},
	    {"10ms ", 0, "unit"},
	    {"10S", 0, "unit"},
	    {"5124095576030431h", 0, "too large"},
	    {"99999999999999999999s", 0, "too large"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned long long v = 7;
		const char *why = NULL;
		bool ok = duration_parse(cases[i].text, &v, &why);
		if (!cases[i].why) {
			if (!ok)
				unit_fail("\"%s\" refused: %s", cases[i].text, why);
			if (v != cases[i].ms)
				unit_fail("\"%s\" is %llu ms, not %llu", cases[i].text, v,
					  cases[i].ms);
		} else {
			if (ok)
				unit_fail("\"%s\" accepted as %llu ms", cases[i].text, v);
			unit_assert_contains(why, cases[i].why, "\"%s\"", cases[i].text);
		}
	}
}

static void cpus_parse_takes_up_to_three_decimals(void **state)
{
	static const struct {
		const char *text;
		unsigned milli;
		const char *why;
	} cases[] = {
	    {"2", 2000, NULL},
	    {"0.5", 500, NULL},
	    {"1.25", 1250, NULL},
	    {"0.001", 1, NULL},
	    {"0.500", 500, NULL},
	    {"0", 0, "zero"},
	    {"0.0", 0, "zero"},
	    {"0.0001", 0, "three decimals"},
	    {"", 0, "does not start with a number"},
	    {".5", 0, "does not start with a number"},
	    {"1.", 0, "digit must follow"},
	    {"-1", 0, "negative"},
	    {"2x", 0, "not a number"},
	    {"1e3", 0, "not a number"},
	    {"99999999999", 0, "too large"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned v = 7;
		const char *why = NULL;
		bool ok = cpus_parse(cases[i].text, &v, &why);
		if (!cases[i].why) {
			if (!ok)
				unit_fail("\"%s\" refused: %s", cases[i].text, why);
			if (v != cases[i].milli)
				unit_fail("\"%s\" is %u, not %u", cases[i].text, v, cases[i].milli);
		} else {
			if (ok)
				unit_fail("\"%s\" accepted as %u", cases[i].text, v);
			unit_assert_contains(why, cases[i].why, "\"%s\"", cases[i].text);
		}
	}
}

static void formats_read_back_as_the_same_value(void **state)
{
	static const unsigned long long durations[] = {0,     1,     999,     1000,   1500,
						       60000, 90000, 3600000, 5400000};
	for (size_t i = 0; i < ARRAY_SIZE(durations); i++) {
		_cleanup_free_ char *text = duration_format(durations[i]);
		unsigned long long back = 0;
		const char *why = NULL;
		if (!duration_parse(text, &back, &why) || back != durations[i])
			unit_fail("%llu ms formats as \"%s\", which reads back otherwise",
				  durations[i], text);
	}
	static const unsigned cpus[] = {1, 10, 500, 1000, 1250, 2000, 4096000};
	for (size_t i = 0; i < ARRAY_SIZE(cpus); i++) {
		_cleanup_free_ char *text = cpus_format(cpus[i]);
		unsigned back = 0;
		const char *why = NULL;
		if (!cpus_parse(text, &back, &why) || back != cpus[i])
			unit_fail("%u formats as \"%s\", which reads back otherwise", cpus[i],
				  text);
	}
	_cleanup_free_ char *half = cpus_format(500);
	assert_string_equal(half, "0.5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(size_parse_accepts_units_and_refuses_the_rest),
	    cmocka_unit_test(duration_parse_needs_a_unit_and_refuses_overflow),
	    cmocka_unit_test(cpus_parse_takes_up_to_three_decimals),
	    cmocka_unit_test(formats_read_back_as_the_same_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
