/* Unit tests for SHA-256: the FIPS 180-4 / NIST example vectors, the
 * padding boundaries (55, 56 and 64 bytes), and that feeding the data in
 * pieces gives the same digest as feeding it at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	struct sha256 h;
	uint8_t digest[SHA256_DIGEST_LEN];
	char chunk[1000];
	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&h);
	for (int i = 0; i < 1000; i++)
		sha256_update(&h, chunk, sizeof(chunk));
	sha256_final(&h, digest);
	static const uint8_t expected[SHA256_DIGEST_LEN] = {
	    0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7,
	    0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97,
	    0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};
	assert_memory_equal(digest, expected, SHA256_DIGEST_LEN);
}

static void sha256_gives_the_same_digest_for_any_split(void **state)
{
	static const char text[] = "{\n  \"network\": true,\n  \"docker\": true\n}\n"
				   "padding padding padding padding padding padding padding";
	char whole[SHA256_HEX_LEN + 1];
	sha256_hex(text, sizeof(text) - 1, whole);
	for (size_t split = 0; split < sizeof(text); split++) {
		struct sha256 h;
		uint8_t digest[SHA256_DIGEST_LEN];
		sha256_init(&h);
		sha256_update(&h, text, split);
		sha256_update(&h, text + split, sizeof(text) - 1 - split);
		sha256_final(&h, digest);
		char hex[SHA256_HEX_LEN + 1];
		for (size_t i = 0; i < SHA256_DIGEST_LEN; i++)
			snprintf(hex + 2 * i, 3, "%02x", digest[i]);
		if (strcmp(hex, whole))
			unit_fail("split at %zu: %s, whole: %s", split, hex, whole);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sha256_matches_the_standard_test_vectors),
	    cmocka_unit_test(sha256_of_a_million_a_matches_the_standard),
	    cmocka_unit_test(sha256_gives_the_same_digest_for_any_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
