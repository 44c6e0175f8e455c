/* The network benchmark's client and server (bench/network runs them).
 *
 *   netbench server PORTFILE            serve on 127.0.0.1, port written to PORTFILE
 *   netbench throughput HOST PORT BYTES [proxy]
 *   netbench latency HOST PORT COUNT [proxy]
 *   netbench hold HOST PORT COUNT READYFILE DONEFILE [proxy]
 *
 * With "proxy", connections go through a CONNECT tunnel to $HTTPS_PROXY
 * (http://127.0.0.1:PORT), as any client inside the sandbox would. The
 * server reads a one-byte command per connection: 'S' sink everything and
 * answer with the byte count, 'E' echo, 'H' hold until the client closes. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("write");
		p += n;
		len -= (size_t)n;
	}
}

static int tcp_connect(const char *ip, int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* A connection to host:port, directly or through a CONNECT tunnel. */
static int open_conn(const char *host, int port, int proxy)
{
	if (!proxy)
		return tcp_connect(host, port);
	const char *env = getenv("HTTPS_PROXY");
	int pport;
	if (!env || sscanf(env, "http://127.0.0.1:%d", &pport) != 1) {
		fprintf(stderr, "HTTPS_PROXY is not http://127.0.0.1:PORT\n");
		exit(1);
	}
	int fd = tcp_connect("127.0.0.1", pport);
	char req[512];
	int n = snprintf(req, sizeof(req), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", host,
			 port, host, port);
	write_all(fd, req, (size_t)n);
	/* Read the reply byte by byte up to the empty line. */
	char buf[1024];
	size_t len = 0;
	while (len < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + len, 1);
		if (r <= 0)
			die("reading the CONNECT reply");
		len++;
		if (len >= 4 && !memcmp(buf + len - 4, "\r\n\r\n", 4))
			break;
	}
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.1 200", 12)) {
		fprintf(stderr, "CONNECT refused: %s\n", buf);
		exit(1);
	}
	return fd;
}

static void serve(const char *portfile)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t alen = sizeof(a);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4096) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0)
		die("listen");
	FILE *f = fopen(portfile, "w");
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)l};
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	/* Per-descriptor state: the command byte and the bytes sunk. */
	static char mode[65536];
	static uint64_t count[65536];
	static char buf[256 * 1024];
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			int fd = (int)evs[i].data.u64;
			if (fd == l) {
				int c = accept(l, NULL, NULL);
				if (c < 0 || c >= 65536) {
					if (c >= 0)
						close(c);
					continue;
				}
				mode[c] = 0;
				count[c] = 0;
				struct epoll_event cev = {.events = EPOLLIN,
							  .data.u64 = (uint64_t)c};
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
				continue;
			}
			ssize_t r = read(fd, buf, sizeof(buf));
			if (r <= 0) {
				if (mode[fd] == 'S')
					write_all(fd, &count[fd], sizeof(count[fd]));
				close(fd);
				continue;
			}
			size_t off = 0;
			if (!mode[fd]) {
				mode[fd] = buf[0];
				off = 1;
			}
			if (mode[fd] == 'S')
				count[fd] += (uint64_t)r - off;
			else if (mode[fd] == 'E' && (size_t)r > off)
				write_all(fd, buf + off, (size_t)r - off);
		}
	}
}

static void throughput(const char *host, int port, uint64_t bytes, int proxy)
{
	static char buf[256 * 1024];
	memset(buf, 'x', sizeof(buf));
	int fd = open_conn(host, port, proxy);
	double t0 = now();
	write_all(fd, "S", 1);
	for (uint64_t left = bytes; left;) {
		size_t n = left < sizeof(buf) ? (size_t)left : sizeof(buf);
		write_all(fd, buf, n);
		left -= n;
	}
	shutdown(fd, SHUT_WR);
	uint64_t got = 0;
	size_t have = 0;
	while (have < sizeof(got)) {
		ssize_t r = read(fd, (char *)&got + have, sizeof(got) - have);
		if (r <= 0)
			die("reading the byte count");
		have += (size_t)r;
	}
	double t = now() - t0;
	if (got != bytes) {
		fprintf(stderr, "server received %llu of %llu bytes\n", (unsigned long long)got,
			(unsigned long long)bytes);
		exit(1);
	}
	printf("%.1f\n", (double)bytes / t / 1e6);
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void latency(const char *host, int port, int count, int proxy)
{
	double *t = calloc((size_t)count, sizeof(*t));
	for (int i = 0; i < count; i++) {
		double t0 = now();
		int fd = open_conn(host, port, proxy);
		write_all(fd, "Ex", 2);
		char c;
		if (read(fd, &c, 1) != 1)
			die("echo");
		t[i] = (now() - t0) * 1e6;
		close(fd);
	}
	qsort(t, (size_t)count, sizeof(*t), compare);
	printf("%.0f %.0f\n", t[count / 2], t[count * 99 / 100]);
}

static void hold(const char *host, int port, int count, const char *ready, const char *done,
		 int proxy)
{
	int *fds = calloc((size_t)count, sizeof(*fds));
	for (int i = 0; i < count; i++) {
		fds[i] = open_conn(host, port, proxy);
		write_all(fds[i], "H", 1);
	}
	FILE *f = fopen(ready, "w");
	fclose(f);
	struct stat st;
	while (stat(done, &st) < 0)
		usleep(20000);
	for (int i = 0; i < count; i++)
		close(fds[i]);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "server"))
		serve(argv[2]);
	else if (argc >= 5 && !strcmp(argv[1], "throughput"))
		throughput(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10), argc > 5);
	else if (argc >= 5 && !strcmp(argv[1], "latency"))
		latency(argv[2], atoi(argv[3]), atoi(argv[4]), argc > 5);
	else if (argc >= 7 && !strcmp(argv[1], "hold"))
		hold(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], argv[6], argc > 7);
	else {
		fprintf(stderr, "usage: see the comment at the top of bench/netbench.c\n");
		return 2;
	}
	return 0;
}
