/* libFuzzer target for the control socket's messages (sandbox/control.h):
 * whatever a client sends arrives through control_recv as one datagram
 * (first byte: how many descriptors go with it), and a CONTROL_EXEC
 * payload is taken apart by control_parse_argv. Nothing may read past the
 * message, and an accepted argv is exactly what the payload holds. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "sandbox/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_argv(const struct control_header *h, char *buf, size_t len)
{
	char **argv = control_parse_argv(buf, len, h->value);
	if (!argv)
		return;
	size_t total = 0;
	int32_t n = 0;
	for (; argv[n]; n++)
		total += strlen(argv[n]) + 1;
	if (n != h->value || total != len)
		abort();
	free(argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > CONTROL_PAYLOAD_MAX)
		return 0;
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return 0;
	size_t nfds = data[0] % 5; /* 4: more than any message may carry */
	int fds[4];
	for (size_t i = 0; i < nfds; i++)
		fds[i] = dup(STDIN_FILENO);
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)(data + 1), .iov_len = size - 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	ssize_t sent = sendmsg(pair[0], &msg, 0);
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (sent >= 0) {
		_cleanup_free_ char *buf = xmalloc(CONTROL_PAYLOAD_MAX);
		struct control_header h;
		size_t len = 0, got = 0;
		int passed[3];
		int r = control_recv(pair[1], &h, buf, &len, passed, &got);
		if (r > 0) {
			/* Three with an exec, a pidfd at most with its start,
			 * none otherwise. */
			bool ok = h.kind == CONTROL_EXEC      ? got == 3u
				  : h.kind == CONTROL_STARTED ? got <= 1u
							      : got == 0u;
			if (!ok || len > CONTROL_PAYLOAD_MAX)
				abort();
			for (size_t i = 0; i < got; i++)
				close(passed[i]);
			if (h.kind == CONTROL_EXEC)
				check_argv(&h, buf, len);
		}
	}
	close(pair[0]);
	close(pair[1]);
	return 0;
}
