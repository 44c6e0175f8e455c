/* libFuzzer target for the /proc/net/unix parser (policy/host_sockets.c).
 * Each name passed on must lie within the input, after a header line, and
 * not be abstract; it may hold newlines (the kernel prints them as they
 * are), never one that ends the input. The count returned must match the
 * calls. ASan catches
 * any read past the input, which is not NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/host_sockets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct bounds {
	const char *start, *end;
	size_t calls;
};

static void check(const char *path, size_t len, unsigned long inode, void *arg)
{
	struct bounds *b = arg;
	b->calls++;
	if (path < b->start || path + len > b->end || !len)
		abort();
	if (path[0] == '@' || (path + len == b->end && path[len - 1] == '\n'))
		abort();
	/* Never on the first line. */
	const char *first = memchr(b->start, '\n', (size_t)(b->end - b->start));
	if (!first || path <= first)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so that ASan sees a read past it. */
	char *text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	struct bounds b = {.start = text, .end = text + size};
	size_t n = host_sockets_parse(text, size, check, &b);
	if (n != b.calls)
		abort();
	free(text);
	return 0;
}
