/* This file parses SOCKS5 from inside the sandbox. Every length comes from
 * the client, so every length is checked against what has arrived before
 * it is used. Only CONNECT is offered: BIND and UDP ASSOCIATE would open
 * paths the policy does not see. */
#include "net/socks5.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

int socks5_parse_greeting(const uint8_t *buf, size_t len, int *no_auth)
{
	if (len < 1)
		return 0;
	if (buf[0] != SOCKS5_VERSION)
		return -1;
	if (len < 2)
		return 0;
	size_t n = buf[1];
	if (n == 0)
		return -1;
	if (len < 2 + n)
		return 0;
	*no_auth = memchr(buf + 2, 0, n) != NULL;
	return (int)(2 + n);
}

int socks5_parse_request(const uint8_t *buf, size_t len, struct socks5_request *req, int *reply)
{
	*reply = SOCKS5_REPLY_FAILURE;
	if (len < 4)
		return 0;
	if (buf[0] != SOCKS5_VERSION || buf[2] != 0)
		return -1;
	size_t addr_len;
	switch (buf[3]) {
	case 1:
		addr_len = 4;
		break;
	case 4:
		addr_len = 16;
		break;
	case 3:
		if (len < 5)
			return 0;
		addr_len = 1 + (size_t)buf[4];
		if (buf[4] == 0)
			return -1;
		break;
	default:
		*reply = SOCKS5_REPLY_ADDRESS_UNSUPPORTED;
		return -1;
	}
	size_t total = 4 + addr_len + 2;
	if (len < total)
		return 0;
	if (buf[1] != 1) {
		*reply = SOCKS5_REPLY_COMMAND_UNSUPPORTED;
		return -1;
	}
	const uint8_t *a = buf + 4;
	if (buf[3] == 3) {
		if (memchr(a + 1, '\0', a[0]))
			return -1;
		memcpy(req->host, a + 1, a[0]);
		req->host[a[0]] = '\0';
	} else if (!inet_ntop(buf[3] == 1 ? AF_INET : AF_INET6, a, req->host, sizeof(req->host))) {
		return -1;
	}
	req->port = (uint16_t)(buf[4 + addr_len] << 8 | buf[4 + addr_len + 1]);
	if (req->port == 0)
		return -1;
	return (int)total;
}

void socks5_reply(int code, uint8_t out[10])
{
	memset(out, 0, 10);
	out[0] = SOCKS5_VERSION;
	out[1] = (uint8_t)code;
	out[3] = 1;
}
