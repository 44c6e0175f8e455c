/* The control socket of a running sandbox (control.h): the framing shared
 * by the client, the supervisor and the init, the supervisor's relay, and
 * the client that `exec-into` runs. */
#include "sandbox/control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

int control_send(int fd, const struct control_header *h, const void *payload, size_t len,
		 const int *fds, size_t nfds)
{
	struct iovec iov[2] = {
	    {.iov_base = (void *)h, .iov_len = sizeof(*h)},
	    {.iov_base = (void *)payload, .iov_len = len},
	};
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	if (nfds > 3)
		return -EINVAL;
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
	for (;;) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n >= 0)
			return (size_t)n == sizeof(*h) + len ? 0 : -EMSGSIZE;
		if (errno != EINTR)
			return -errno;
	}
}

/* Closes every descriptor a message carried. */
static void close_passed(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int passed;
			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(passed);
		}
	}
}

int control_recv(int fd, struct control_header *h, char *buf, size_t *len, int fds[3], size_t *nfds)
{
	struct control_header got;
	struct iovec iov[2] = {
	    {.iov_base = &got, .iov_len = sizeof(got)},
	    {.iov_base = buf, .iov_len = CONTROL_PAYLOAD_MAX},
	};
	/* Room for more than we want, so that extra descriptors arrive (and
	 * are closed) instead of truncating the message. */
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
	    .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0 && !msg.msg_controllen)
		return 0;
	size_t got_fds = 0;
	bool bad = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n < sizeof(got) ||
		   got.magic != CONTROL_MAGIC || got.version != CONTROL_VERSION;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = true;
			continue;
		}
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (got_fds || k > 3) {
			bad = true;
			continue;
		}
		memcpy(fds, CMSG_DATA(c), k * sizeof(int));
		got_fds = k;
	}
	/* Descriptors come with CONTROL_EXEC, three of them, and with
	 * CONTROL_STARTED, one pidfd at most; never otherwise. */
	if (!bad && got.kind == CONTROL_EXEC ? got_fds != 3u
	    : got.kind == CONTROL_STARTED    ? got_fds > 1u
					     : got_fds != 0u)
		bad = true;
	if (bad) {
		close_passed(&msg);
		return -EBADMSG;
	}
	*h = got;
	*len = (size_t)n - sizeof(got);
	*nfds = got_fds;
	return 1;
}

char **control_parse_argv(char *buf, size_t len, int32_t count)
{
	if (count < 1 || (size_t)count > len || buf[len - 1] != '\0')
		return NULL;
	char **argv = xcalloc((size_t)count + 1, sizeof(char *));
	size_t at = 0;
	for (int32_t i = 0; i < count; i++) {
		if (at >= len) {
			free(argv);
			return NULL;
		}
		argv[i] = buf + at;
		at += strlen(buf + at) + 1;
	}
	if (at != len) {
		free(argv);
		return NULL;
	}
	return argv;
}

/* --- The supervisor's relay --- */

#define CONTROL_CLIENTS_MAX CONTROL_EXECS_MAX

struct client {
	int fd;	     /* -1: free slot */
	uint32_t id; /* forwarded to the init under this number */
	bool asked;  /* its one CONTROL_EXEC went to the init */
};

struct control {
	char *path;
	int listen_fd;
	int init_fd, init_end; /* our end, the init's end of the pair */
	int epfd;
	uint32_t next_id;
	struct client clients[CONTROL_CLIENTS_MAX];
};

#define EV_LISTEN 0xffffffffu
#define EV_INIT 0xfffffffeu

/* Only the sandbox's owner, from the host: a process in another sandbox
 * of the same user has the same uid but not our pid namespace (and a
 * sandbox never shows the socket; this holds if a policy ever did). */
static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid() ||
	    cred.pid <= 0)
		return false;
	static const char *const kinds[] = {"pid", "user"};
	for (size_t i = 0; i < 2; i++) {
		char mine[64] = "", theirs[64] = "";
		_cleanup_free_ char *own = xasprintf("/proc/self/ns/%s", kinds[i]);
		_cleanup_free_ char *peer = xasprintf("/proc/%d/ns/%s", (int)cred.pid, kinds[i]);
		ssize_t a = readlink(own, mine, sizeof(mine) - 1);
		ssize_t b = readlink(peer, theirs, sizeof(theirs) - 1);
		if (a <= 0 || b <= 0 || strcmp(mine, theirs) != 0)
			return false;
	}
	return true;
}

static int add_fd(struct control *c, int fd, uint32_t data)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = data};
	return epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int control_open(struct control **out, const char *path, struct error *err)
{
	*out = NULL;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path))
		return error_set(err, ERROR_SETUP, "control socket path too long: %s", path);
	strcpy(addr.sun_path, path);
	struct control *c = xcalloc(1, sizeof(*c));
	c->listen_fd = c->init_fd = c->init_end = c->epfd = -1;
	for (size_t i = 0; i < CONTROL_CLIENTS_MAX; i++)
		c->clients[i].fd = -1;
	int pair[2];
	c->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->listen_fd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		error_errno(err, ERROR_SETUP, errno, "making the control socket");
		control_close(c);
		return -1;
	}
	c->init_fd = pair[0];
	c->init_end = pair[1];
	/* A relay never waits on the init: a full pair drops the request. */
	int fl = fcntl(c->init_fd, F_GETFL);
	if (fl < 0 || fcntl(c->init_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		error_errno(err, ERROR_SETUP, errno, "making the control socket");
		control_close(c);
		return -1;
	}
	/* Owner only, whatever the umask; the directory is the owner's too. */
	mode_t old = umask(0177);
	int r = bind(c->listen_fd, (struct sockaddr *)&addr, sizeof(addr));
	int saved = errno;
	umask(old);
	if (r < 0) {
		error_errno(err, ERROR_SETUP, saved, "binding the control socket %s", path);
		control_close(c);
		return -1;
	}
	c->path = xstrdup(path);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (listen(c->listen_fd, 16) < 0 || c->epfd < 0 || add_fd(c, c->listen_fd, EV_LISTEN) < 0 ||
	    add_fd(c, c->init_fd, EV_INIT) < 0) {
		error_errno(err, ERROR_SETUP, errno, "listening on the control socket %s", path);
		control_close(c);
		return -1;
	}
	*out = c;
	return 0;
}

int control_init_end(const struct control *c)
{
	return c->init_end;
}

void control_started(struct control *c)
{
	if (c->init_end >= 0)
		close(c->init_end);
	c->init_end = -1;
}

int control_fd(const struct control *c)
{
	return c->epfd;
}

static void drop_client(struct control *c, struct client *cl)
{
	if (cl->asked && c->init_fd >= 0) {
		/* Its caller is gone: the command loses its terminal, as it
		 * would when a terminal closes. */
		struct control_header h = {CONTROL_MAGIC, CONTROL_VERSION, CONTROL_SIGNAL, cl->id,
					   SIGHUP};
		(void)control_send(c->init_fd, &h, NULL, 0, NULL, 0);
	}
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	*cl = (struct client){.fd = -1};
}

static struct client *client_by_id(struct control *c, uint32_t id)
{
	for (size_t i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (c->clients[i].fd >= 0 && c->clients[i].id == id)
			return &c->clients[i];
	return NULL;
}

static void accept_client(struct control *c)
{
	int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct client *free_slot = NULL;
	for (size_t i = 0; i < CONTROL_CLIENTS_MAX && !free_slot; i++)
		if (c->clients[i].fd < 0)
			free_slot = &c->clients[i];
	if (c->init_fd < 0 || !peer_allowed(fd)) {
		close(fd);
		return;
	}
	if (!free_slot) {
		/* Said, so that the caller does not take the sandbox for
		 * ended; the socket is new and has room for one message. */
		struct control_header h = {CONTROL_MAGIC, CONTROL_VERSION, CONTROL_STARTED, 0,
					   -EAGAIN};
		(void)control_send(fd, &h, NULL, 0, NULL, 0);
		close(fd);
		return;
	}
	*free_slot = (struct client){.fd = fd, .id = ++c->next_id};
	if (add_fd(c, fd, (uint32_t)(free_slot - c->clients)) < 0) {
		close(fd);
		*free_slot = (struct client){.fd = -1};
	}
}

/* A request from a client, passed on under the client's number. */
static void from_client(struct control *c, struct client *cl, char *buf)
{
	struct control_header h;
	int fds[3];
	bool exec = !cl->asked;
	size_t len, nfds = 0;
	int n = control_recv(cl->fd, &h, buf, &len, fds, &nfds);
	if (n == -EAGAIN)
		return;
	if (n <= 0 || h.kind != (exec ? CONTROL_EXEC : CONTROL_SIGNAL) ||
	    (h.kind == CONTROL_SIGNAL && !CONTROL_SIGNAL_OK(h.value))) {
		for (size_t i = 0; n > 0 && i < nfds; i++)
			close(fds[i]);
		drop_client(c, cl);
		return;
	}
	h.id = cl->id;
	int r = control_send(c->init_fd, &h, buf, len, exec ? fds : NULL, exec ? 3 : 0);
	if (exec)
		for (int i = 0; i < 3; i++)
			close(fds[i]);
	if (r < 0) {
		drop_client(c, cl);
		return;
	}
	cl->asked = true;
}

/* The init's answer, passed on to the client it is for: the exit
 * status's raw form (4 bytes) and the command's pidfd ride along. */
static void from_init(struct control *c, char *buf)
{
	struct control_header h;
	int fds[3];
	size_t len, nfds = 0;
	int n = control_recv(c->init_fd, &h, buf, &len, fds, &nfds);
	if (n == -EAGAIN || n == -EBADMSG)
		return;
	if (n <= 0) {
		/* The sandbox has ended: so has every command in it. */
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->init_fd, NULL);
		close(c->init_fd);
		c->init_fd = -1;
		for (size_t i = 0; i < CONTROL_CLIENTS_MAX; i++)
			if (c->clients[i].fd >= 0)
				drop_client(c, &c->clients[i]);
		return;
	}
	struct client *cl = client_by_id(c, h.id);
	if (!cl || (h.kind != CONTROL_STARTED && h.kind != CONTROL_EXIT) || len > sizeof(int32_t)) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		return;
	}
	h.id = 0;
	bool done = h.kind == CONTROL_EXIT || (h.kind == CONTROL_STARTED && h.value < 0);
	int r = control_send(cl->fd, &h, buf, len, fds, nfds);
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (r < 0 || done) {
		cl->asked = !done && cl->asked;
		drop_client(c, cl);
	}
}

int control_dispatch(void *ctx)
{
	struct control *c = ctx;
	_cleanup_free_ char *buf = xmalloc(CONTROL_PAYLOAD_MAX);
	struct epoll_event events[8];
	int n = epoll_wait(c->epfd, events, 8, 0);
	for (int i = 0; i < n; i++) {
		uint32_t d = events[i].data.u32;
		if (d == EV_LISTEN)
			accept_client(c);
		else if (d == EV_INIT)
			from_init(c, buf);
		else if (d < CONTROL_CLIENTS_MAX && c->clients[d].fd >= 0)
			from_client(c, &c->clients[d], buf);
	}
	return 0;
}

void control_close(struct control *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (c->clients[i].fd >= 0)
			close(c->clients[i].fd);
	if (c->path)
		unlink(c->path);
	int fds[] = {c->listen_fd, c->init_fd, c->init_end, c->epfd};
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(c->path);
	free(c);
}

/* --- The client --- */

int control_exec(const char *path, pid_t supervisor, char *const *argv, const int fds[3],
		 struct error *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path))
		return error_set(err, ERROR_USAGE, "control socket path too long: %s", path);
	strcpy(addr.sun_path, path);
	_cleanup_strbuf_ struct strbuf payload = STRBUF_INIT;
	int argc = 0;
	for (char *const *a = argv; *a; a++, argc++)
		strbuf_add(&payload, *a, strlen(*a) + 1);
	if (!argc)
		return error_set(err, ERROR_USAGE, "no command to run");
	if (payload.len > CONTROL_PAYLOAD_MAX)
		return error_set(err, ERROR_USAGE, "the command line is longer than %d bytes",
				 CONTROL_PAYLOAD_MAX);
	_cleanup_close_ int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return error_errno(err, ERROR_SETUP, errno, "socket");
	if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return error_errno(err, ERROR_SETUP, errno, "connecting to %s", path);
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) < 0 ||
	    cred.pid != supervisor || cred.uid != geteuid())
		return error_set(err, ERROR_DENIED,
				 "%s is not the control socket of the sandbox's agent-sandbox "
				 "(pid %d)",
				 path, (int)supervisor);

	sigset_t passed, original;
	sigemptyset(&passed);
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&passed, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &passed, &original) < 0)
		return error_errno(err, ERROR_SETUP, errno, "blocking signals");
	int sfd = signalfd(-1, &passed, SFD_CLOEXEC | SFD_NONBLOCK);
	int result = -1;
	_cleanup_free_ char *buf = xmalloc(CONTROL_PAYLOAD_MAX);
	struct control_header h = {CONTROL_MAGIC, CONTROL_VERSION, CONTROL_EXEC, 0, argc};
	int r = sfd < 0 ? -errno : control_send(sock, &h, payload.buf, payload.len, fds, 3);
	/* A relay that refused us (too many commands) said why and closed:
	 * the answer waits to be read. */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET) {
		error_errno(err, ERROR_SETUP, -r, "sending the command to %s", path);
		goto out;
	}
	for (;;) {
		struct pollfd p[2] = {{.fd = sock, .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			error_errno(err, ERROR_SETUP, errno, "poll");
			goto out;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				struct control_header s = {CONTROL_MAGIC, CONTROL_VERSION,
							   CONTROL_SIGNAL, 0,
							   (int32_t)si.ssi_signo};
				(void)control_send(sock, &s, NULL, 0, NULL, 0);
			}
		}
		if (!p[0].revents)
			continue;
		int got[3];
		size_t len, nfds;
		int n = control_recv(sock, &h, buf, &len, got, &nfds);
		for (size_t i = 0; n > 0 && i < nfds; i++)
			close(got[i]);
		/* A relay that closed with our request unread resets the
		 * connection; the kernel reports that before the answer it
		 * left, which the next read returns. */
		if (n == -ECONNRESET)
			continue;
		if (n <= 0) {
			error_set(err, ERROR_SETUP, "the sandbox ended before the command did");
			goto out;
		}
		if (h.kind == CONTROL_STARTED && h.value == -EAGAIN) {
			error_set(err, ERROR_SETUP,
				  "the sandbox already runs %d commands started from outside",
				  CONTROL_EXECS_MAX);
			error_hint(err, "try again when one of them has ended");
			goto out;
		}
		if (h.kind == CONTROL_STARTED && h.value < 0) {
			error_errno(err, ERROR_SETUP, -h.value,
				    "starting the command in the sandbox");
			goto out;
		}
		if (h.kind == CONTROL_EXIT) {
			result = h.value >= 0 && h.value <= 255 ? h.value : 255;
			goto out;
		}
	}
out:
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &original, NULL);
	return result;
}
