/* The probes `agent-sandbox doctor` starts inside real sandboxes: each
 * tries to break one promise of the policy (write a read-only path, read a
 * masked secret, reach the audit log, bypass the proxy) and prints one
 * "ok NAME: ..." or "FAIL NAME: ..." line. Code that runs inside: it may
 * exit. */
#include "inside/probe.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"
#include "inside/inside.h"

#define CONNECT_TIMEOUT_MS 3000

static void say(const char *mark, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const char *mark, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	_cleanup_free_ char *line = xasprintf("%s %s: %s\n", mark, name, msg);
	write_all(1, line, strlen(line));
}

/* A file created where nothing may be written. If it works, it is removed
 * at once: the probe must not leave what it proves possible. */
static void probe_no_write(const char *name, const char *dir)
{
	_cleanup_free_ char *path = xasprintf("%s/.agent-sandbox-doctor-%d", dir, (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		say("FAIL", name, "created %s", path);
		return;
	}
	say("ok", name, "writing in %s fails (%s)", dir, strerror(errno));
}

static void probe_empty(const char *name, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		say("ok", name, "%s is not there (%s)", path, strerror(errno));
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		size_t n = 0;
		for (struct dirent *e; d && (e = readdir(d));)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				n++;
		if (d)
			closedir(d);
		if (n)
			say("FAIL", name, "%s shows %zu entries", path, n);
		else
			say("ok", name, "%s is an empty directory", path);
		return;
	}
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_file(path, 1 << 20, &text, &len);
	if (r == 0 && len)
		say("FAIL", name, "%s reads %zu bytes", path, len);
	else
		say("ok", name, "%s reads nothing", path);
}

static void probe_secret(const char *name, const char *path, const char *token)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_file(path, 1 << 20, &text, &len);
	if (r == 0 && strstr(text, token))
		say("FAIL", name, "%s shows its secret", path);
	else
		say("ok", name, "%s reads nothing (%zu bytes)", path, r == 0 ? len : 0);
}

static void probe_audit(const char *name, const char *dir)
{
	_cleanup_free_ char *log = xasprintf("%s/audit.jsonl", dir);
	int fd = open(log, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		say("FAIL", name, "%s can be opened for writing", log);
		return;
	}
	say("ok", name, "%s cannot be written (%s)", log, strerror(errno));
}

/* Connects with a deadline; returns the socket or -errno. */
static int connect_within(const struct sockaddr_in *sa, int timeout_ms)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		if (errno != EINPROGRESS) {
			int e = errno;
			close(fd);
			return -e;
		}
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int e = 0;
		socklen_t len = sizeof(e);
		if (poll(&p, 1, timeout_ms) <= 0)
			e = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
			e = errno;
		if (e) {
			close(fd);
			return -e;
		}
	}
	int flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/* The proxy must refuse a host that no allow entry names. */
static void probe_proxy(const char *name)
{
	const char *proxy = getenv("HTTP_PROXY");
	unsigned port = 0;
	if (!proxy || sscanf(proxy, "http://127.0.0.1:%u", &port) != 1 || !port || port > 65535) {
		say("FAIL", name, "no proxy address in HTTP_PROXY (%s)", proxy ? proxy : "unset");
		return;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = connect_within(&sa, CONNECT_TIMEOUT_MS);
	if (fd < 0) {
		say("FAIL", name, "cannot reach the proxy at 127.0.0.1:%u (%s)", port,
		    strerror(-fd));
		return;
	}
	struct timeval tv = {.tv_sec = CONNECT_TIMEOUT_MS / 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	static const char request[] = "CONNECT " DOCTOR_UNLISTED_HOST ":443 HTTP/1.1\r\n"
				      "Host: " DOCTOR_UNLISTED_HOST ":443\r\n\r\n";
	char reply[256] = "";
	ssize_t got = -1;
	if (write_all(fd, request, sizeof(request) - 1) == 0)
		got = read(fd, reply, sizeof(reply) - 1);
	close(fd);
	reply[got > 0 ? got : 0] = '\0';
	reply[strcspn(reply, "\r\n")] = '\0';
	if (strstr(reply, " 403"))
		say("ok", name, "CONNECT %s is refused (%s)", DOCTOR_UNLISTED_HOST, reply);
	else
		say("FAIL", name, "CONNECT %s got \"%s\"", DOCTOR_UNLISTED_HOST, reply);
}

/* With no route out, a direct connection to a public address fails. */
static void probe_direct(const char *name, const char *address)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(443)};
	if (inet_pton(AF_INET, address, &sa.sin_addr) != 1) {
		say("FAIL", name, "bad address %s", address);
		return;
	}
	int fd = connect_within(&sa, CONNECT_TIMEOUT_MS);
	if (fd >= 0) {
		close(fd);
		say("FAIL", name, "connected to %s:443 directly", address);
		return;
	}
	say("ok", name, "%s:443 is unreachable (%s)", address, strerror(-fd));
}

void doctor_probe_main(int argc, char **argv)
{
	/* Specs: KIND:NAME:ARG[:ARG2]. NAME says what is proved. */
	for (int i = 2; i < argc; i++) {
		_cleanup_free_ char *spec = xstrdup(argv[i]);
		char *kind = spec, *name = strchr(kind, ':');
		if (!name)
			continue;
		*name++ = '\0';
		char *arg = strchr(name, ':');
		if (!arg)
			continue;
		*arg++ = '\0';
		if (!strcmp(kind, "nowrite"))
			probe_no_write(name, arg);
		else if (!strcmp(kind, "empty"))
			probe_empty(name, arg);
		else if (!strcmp(kind, "audit"))
			probe_audit(name, arg);
		else if (!strcmp(kind, "proxy"))
			probe_proxy(name);
		else if (!strcmp(kind, "direct"))
			probe_direct(name, arg);
		else if (!strcmp(kind, "secret")) {
			char *token = strrchr(arg, ':');
			if (token) {
				*token++ = '\0';
				probe_secret(name, arg, token);
			}
		}
	}
	exit(0);
}
