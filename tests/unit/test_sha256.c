/* Unit tests for sha256_hex (libmd underneath): the FIPS 180-4 / NIST
 * example vectors and the padding boundaries (55, 56 and 64 bytes), as the
 * lower-case hex that the trust store and the audit log write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/sha256.h"
#include "unit.h"

static void sha256_matches_the_standard_test_vectors(void **state)
{
	static const struct {
		const char *input;
		const char *digest;
	} cases[] = {
	    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
	     "nopqrlmnopqrsmnopqrstnopqrstu",
	     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
	    /* 55 bytes: the length still fits in the first block. */
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	     "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
	    /* 56 bytes: the padding needs a second block. */
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	     "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
	    /* 64 bytes: exactly one block of data. */
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	     "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char hex[SHA256_HEX_LEN + 1];
		sha256_hex(cases[i].input, strlen(cases[i].input), hex);
		if (strcmp(hex, cases[i].digest))
			unit_fail("case %zu (%zu bytes): got %s, expected %s", i,
				  strlen(cases[i].input), hex, cases[i].digest);
	}
}

static void sha256_of_a_million_a_matches_the_standard(void **state)
{
	char *text = xmalloc(1000000);
	memset(text, 'a', 1000000);
	char hex[SHA256_HEX_LEN + 1];
	sha256_hex(text, 1000000, hex);
	free(text);
	assert_string_equal(hex,
			    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sha256_matches_the_standard_test_vectors),
	    cmocka_unit_test(sha256_of_a_million_a_matches_the_standard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
