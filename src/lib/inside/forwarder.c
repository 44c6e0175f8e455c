/* This file hands loopback connections inside the sandbox to the host's
 * proxy: each accepted socket travels over the proxy's unix socket
 * (SCM_RIGHTS), and the proxy talks to the client directly. It decides
 * nothing: the proxy checks every request, including the localhost
 * preamble, so a process that talks to the socket directly gains nothing.
 * Runs in the init. */
#include "inside/forwarder.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "net/proxy.h"
#include "base/xalloc.h"

struct fw_endpoint {
	int fd;
	unsigned port;	/* its port */
	bool localhost; /* a network.localhost port */
	int credential; /* a credential endpoint's index, or -1 */
};

struct forwarder {
	int epfd;
	struct fw_endpoint *listeners;
	size_t nlisteners;
};

static int listen_on(int family, unsigned port, int *out)
{
	_cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		a->sin6_addr = in6addr_loopback;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, SOMAXCONN) < 0)
		return -errno;
	*out = steal_fd(&fd);
	return 0;
}

static void add_listener(struct forwarder *fw, int fd, unsigned port, bool localhost,
			 int credential)
{
	fw->listeners = xreallocarray(fw->listeners, fw->nlisteners + 1, sizeof(*fw->listeners));
	fw->listeners[fw->nlisteners++] = (struct fw_endpoint){
	    .fd = fd, .port = port, .localhost = localhost, .credential = credential};
}

static void forwarder_free(struct forwarder *fw)
{
	for (size_t i = 0; i < fw->nlisteners; i++)
		close(fw->listeners[i].fd);
	free(fw->listeners);
	if (fw->epfd >= 0)
		close(fw->epfd);
	free(fw);
}
DEFINE_CLEANUP_PTR_FUNC(struct forwarder *, forwarder_free)

int forwarder_start(struct forwarder **out, const char *spec, struct error *err)
{
	_cleanup_(forwarder_freep) struct forwarder *fw = xcalloc(1, sizeof(*fw));
	fw->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (fw->epfd < 0)
		return error_errno(err, ERROR_SETUP, errno, "epoll_create1");
	_cleanup_free_ char *copy = xstrdup(spec);
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		char *end = NULL;
		long port = colon ? strtol(colon + 1, &end, 10) : 0;
		/* credential:PORT:INDEX names the endpoint after the port. */
		long index = -1;
		if (colon && !strncmp(item, "credential:", 11) && end && *end == ':') {
			char *iend = NULL;
			index = strtol(end + 1, &iend, 10);
			if (!iend || *iend || index < 0 || index > 255 || iend == end + 1)
				return error_set(err, ERROR_SETUP, "invalid forward \"%s\"", item);
			end = iend;
		}
		if (!colon || !end || *end || port < 1 || port > 65535)
			return error_set(err, ERROR_SETUP, "invalid forward \"%s\"", item);
		*colon = '\0';
		bool localhost = !strcmp(item, "localhost");
		if (!localhost && strcmp(item, "proxy") && strcmp(item, "credential"))
			return error_set(err, ERROR_SETUP, "invalid forward kind \"%s\"", item);
		int fd;
		int r = listen_on(AF_INET, (unsigned)port, &fd);
		if (r < 0)
			return error_errno(err, ERROR_SETUP, -r, "listening on 127.0.0.1 port %ld",
					   port);
		add_listener(fw, fd, (unsigned)port, localhost, (int)index);
		/* Clients that try ::1 first (for "localhost") find it too;
		 * a namespace without IPv6 simply has no ::1. */
		if (localhost && listen_on(AF_INET6, (unsigned)port, &fd) == 0)
			add_listener(fw, fd, (unsigned)port, localhost, -1);
	}
	for (size_t i = 0; i < fw->nlisteners; i++) {
		/* After the last add_listener: the array no longer moves. */
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &fw->listeners[i]};
		if (epoll_ctl(fw->epfd, EPOLL_CTL_ADD, fw->listeners[i].fd, &ev) < 0)
			return error_errno(err, ERROR_SETUP, errno, "watching port %u",
					   fw->listeners[i].port);
	}
	*out = steal_ptr(&fw);
	return 0;
}

int forwarder_fd(const struct forwarder *fw)
{
	return fw->epfd;
}

/* Returns a connected socket, or -errno. */
static int connect_proxy(void)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	strcpy(addr.sun_path, SANDBOX_PROXY_SOCKET);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -errno;
	return steal_fd(&fd);
}

/* How long a hand-off may wait for room on the proxy's socket: the init
 * serves every listener from one loop, so one stuck hand-off must not hold
 * up the others for long. */
#define HANDOFF_WAIT_MS 1000

static int wait_writable(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int r;
	do
		r = poll(&pfd, 1, HANDOFF_WAIT_MS);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

/* Passes the client's socket to the proxy, with the localhost preamble
 * when the client came to a network.localhost port. The message must
 * arrive whole, with the descriptor: once the proxy has the client's
 * socket it reads from that socket only, so bytes of the preamble sent
 * after a partial send would be lost. A partial send therefore fails the
 * hand-off like any other error. Returns 0 or -errno; on failure the
 * caller closes the client, which sees the connection close (the proxy,
 * having seen nothing, has nothing to log). */
static int hand_off(const struct fw_endpoint *l, int client)
{
	_cleanup_close_ int proxy = connect_proxy();
	if (proxy < 0)
		return proxy; /* the proxy is gone */
	uint8_t data[4] = {PROXY_HANDOFF, PROXY_LOCALHOST_PREAMBLE, (uint8_t)(l->port >> 8),
			   (uint8_t)l->port};
	struct iovec iov = {.iov_base = data, .iov_len = l->localhost ? 4 : 1};
	if (l->credential >= 0) {
		data[1] = PROXY_CREDENTIAL_PREAMBLE;
		data[2] = (uint8_t)l->credential;
		iov.iov_len = 3;
	}
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	memset(&control, 0, sizeof(control));
	struct msghdr msg = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = control.buf,
	    .msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &client, sizeof(int));
	for (;;) {
		ssize_t n = sendmsg(proxy, &msg, MSG_NOSIGNAL);
		if (n == (ssize_t)iov.iov_len)
			return 0;
		if (n >= 0)
			return -EPROTO;
		if (errno == EINTR)
			continue;
		/* The socket is non-blocking: a proxy slow to drain its
		 * queue gets a moment before the client is let go. */
		if (errno != EAGAIN)
			return -errno;
		int r = wait_writable(proxy);
		if (r < 0)
			return r;
	}
}

static void on_accept(const struct fw_endpoint *l)
{
	for (int i = 0; i < 64; i++) {
		int client = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (client < 0)
			return;
		int one = 1;
		setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* A failed hand-off needs no more than the close: the client
		 * sees its connection end, as when the proxy is gone. */
		(void)hand_off(l, client);
		close(client);
	}
}

void forwarder_dispatch(struct forwarder *fw)
{
	struct epoll_event events[64];
	int n = epoll_wait(fw->epfd, events, ARRAY_SIZE(events), 0);
	for (int i = 0; i < n; i++)
		on_accept(events[i].data.ptr);
}
