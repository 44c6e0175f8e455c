/* Unit tests for the relay on real loopback TCP connections: bytes arrive
 * in order after queued ones, through the same pipe from start to end, the
 * pipe grows only for bulk data, a half-close is passed on while the other
 * direction goes on, and a limit drops what follows it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/relay.h"
#include "unit.h"

/* A connected pair of non-blocking TCP sockets on 127.0.0.1. */
static void tcp_pair(int *a, int *b)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in addr = {.sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(addr);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&addr, &len), 0);
	*a = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(*a >= 0);
	assert_true(connect(*a, (struct sockaddr *)&addr, sizeof(addr)) == 0 ||
		    errno == EINPROGRESS);
	*b = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	assert_true(*b >= 0);
	close(l);
}

/* client <-> fd[0] (relay) fd[1] <-> server */
struct rig {
	int client, server;
	struct relay r;
	int status;
};

static void rig_open(struct rig *g)
{
	int p0, p1;
	tcp_pair(&g->client, &p0);
	tcp_pair(&p1, &g->server);
	relay_init(&g->r, p0, p1);
	assert_int_equal(relay_open(&g->r), 0);
	g->status = RELAY_WAIT;
}

static void rig_close(struct rig *g)
{
	close(g->r.fd[0]);
	close(g->r.fd[1]);
	relay_release(&g->r);
	close(g->client);
	close(g->server);
}

/* One turn of an event loop: wait a little for the relay's sockets, tell
 * the relay what they reported, pump. */
static void turn(struct rig *g)
{
	struct pollfd pfd[2] = {{.fd = g->r.fd[0], .events = POLLIN | POLLOUT},
				{.fd = g->r.fd[1], .events = POLLIN | POLLOUT}};
	if (g->status == RELAY_WAIT)
		poll(pfd, 2, 10);
	for (int i = 0; i < 2; i++)
		relay_ready(&g->r, i, (uint32_t)pfd[i].revents);
	g->status = relay_pump(&g->r);
	assert_true(g->status >= 0);
}

static void pattern(char *buf, size_t len, size_t from)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)((from + i) * 7 % 251);
}

/* Sends `total` bytes of the pattern from one end, reads them at the
 * other, checking every byte after `prefix` (bytes the relay queued). */
static void transfer(struct rig *g, int from, int to, size_t total, const char *prefix)
{
	size_t sent = 0, got = 0, plen = strlen(prefix);
	static char out[65536], in[65536], want[65536];
	for (int i = 0; got < plen + total && i < 100000; i++) {
		if (sent < total) {
			size_t n = total - sent < sizeof(out) ? total - sent : sizeof(out);
			pattern(out, n, sent);
			ssize_t w = send(from, out, n, MSG_NOSIGNAL);
			if (w > 0)
				sent += (size_t)w;
		}
		turn(g);
		ssize_t r;
		while ((r = recv(to, in, sizeof(in), 0)) > 0) {
			for (ssize_t k = 0; k < r; k++, got++) {
				if (got < plen) {
					assert_int_equal(in[k], prefix[got]);
					continue;
				}
				pattern(want, 1, got - plen);
				if (in[k] != want[0])
					unit_fail("byte %zu differs", got - plen);
			}
		}
	}
	assert_int_equal(got, plen + total);
}

static void relay_carries_queued_then_bulk_bytes_through_one_pipe(void **state)
{
	struct rig g;
	rig_open(&g);
	relay_queue(&g.r, 1, "HTTP/1.1 200 ok\r\n\r\n", 19);
	int pipes[2][2];
	memcpy(pipes,
	       (int[2][2]){{g.r.dir[0].pipe[0], g.r.dir[0].pipe[1]},
			   {g.r.dir[1].pipe[0], g.r.dir[1].pipe[1]}},
	       sizeof(pipes));
	transfer(&g, g.server, g.client, 1000, "HTTP/1.1 200 ok\r\n\r\n");
	transfer(&g, g.client, g.server, 16 << 20, "");
	transfer(&g, g.server, g.client, 4 << 20, "");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(g.r.dir[i].pipe[0], pipes[i][0]);
		assert_int_equal(g.r.dir[i].pipe[1], pipes[i][1]);
	}
	assert_int_equal(g.r.dir[0].bytes, 16 << 20);
	assert_int_equal(g.r.dir[1].bytes, 19 + 1000 + (4 << 20));
	rig_close(&g);
}

static void relay_grows_a_pipe_only_for_bulk_data(void **state)
{
	struct rig g;
	rig_open(&g);
	int start = fcntl(g.r.dir[0].pipe[1], F_GETPIPE_SZ);
	transfer(&g, g.client, g.server, 100, "");
	assert_false(g.r.dir[0].grown);
	assert_int_equal(fcntl(g.r.dir[0].pipe[1], F_GETPIPE_SZ), start);
	transfer(&g, g.client, g.server, 32 << 20, "");
	/* A reader that keeps up may never let the pipe fill; when it did,
	 * the pipe grew as far as the system allows. */
	if (g.r.dir[0].grown)
		assert_true(fcntl(g.r.dir[0].pipe[1], F_GETPIPE_SZ) >= start);
	assert_false(g.r.dir[1].grown);
	rig_close(&g);
}

static void relay_passes_a_half_close_on_and_keeps_the_other_way(void **state)
{
	struct rig g;
	rig_open(&g);
	transfer(&g, g.client, g.server, 1 << 20, "");
	assert_int_equal(shutdown(g.client, SHUT_WR), 0);
	char c;
	ssize_t r = -1;
	for (int i = 0; i < 1000 && r < 0; i++) {
		turn(&g);
		r = recv(g.server, &c, 1, 0);
	}
	assert_int_equal(r, 0); /* the server saw the end */
	transfer(&g, g.server, g.client, 8 << 20, "");
	assert_int_equal(shutdown(g.server, SHUT_WR), 0);
	for (int i = 0; i < 1000 && g.status != 0; i++)
		turn(&g);
	assert_int_equal(g.status, 0);
	assert_int_equal(recv(g.client, &c, 1, 0), 0);
	rig_close(&g);
}

static void relay_limit_drops_what_follows(void **state)
{
	struct rig g;
	rig_open(&g);
	relay_queue(&g.r, 0, "GET / HTTP/1.1\r\n\r\n", 18);
	relay_limit(&g.r, 0, 10);
	char buf[4096];
	memset(buf, 'b', sizeof(buf));
	assert_int_equal(send(g.client, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	size_t got = 0;
	for (int i = 0; i < 200; i++) {
		turn(&g);
		ssize_t r = recv(g.server, buf, sizeof(buf), 0);
		if (r > 0)
			got += (size_t)r;
	}
	assert_int_equal(got, 18 + 10);
	assert_int_equal(g.r.dir[0].bytes, 18 + 10);
	rig_close(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(relay_carries_queued_then_bulk_bytes_through_one_pipe),
	    cmocka_unit_test(relay_grows_a_pipe_only_for_bulk_data),
	    cmocka_unit_test(relay_passes_a_half_close_on_and_keeps_the_other_way),
	    cmocka_unit_test(relay_limit_drops_what_follows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
