/* libFuzzer target for the proxy's SOCKS5 parser: a greeting followed by a
 * request, as a client sends them. Lengths come from the input, so this is
 * where an overread would show; a parsed request must name a host. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/socks5.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	int no_auth = 0;
	int used = socks5_parse_greeting(copy, size, &no_auth);
	if (used > (int)size)
		abort();
	if (used > 0) {
		struct socks5_request req;
		int reply = -1;
		int r = socks5_parse_request(copy + used, size - (size_t)used, &req, &reply);
		if (r > (int)(size - (size_t)used))
			abort();
		if (r > 0 && (!req.host[0] || req.port == 0 || strlen(req.host) > 255))
			abort();
		if (r < 0 && (reply < 1 || reply > 8))
			abort();
	}
	free(copy);
	return 0;
}
