/* This file copies bytes between two sockets. It never blocks and never
 * interprets the bytes. */
#include "net/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/xalloc.h"

/* Bounded work per call keeps one busy connection from starving others. */
#define PUMP_ROUNDS 8

void relay_init(struct relay *r, int fd0, int fd1)
{
	*r = (struct relay){.fd = {fd0, fd1}};
	for (int i = 0; i < 2; i++)
		r->dir[i].pipe[0] = r->dir[i].pipe[1] = -1;
}

static void close_pipe(struct relay_dir *d)
{
	for (int i = 0; i < 2; i++)
		if (d->pipe[i] >= 0)
			close(d->pipe[i]);
	d->pipe[0] = d->pipe[1] = -1;
}

/* The zero-copy path, once nothing is queued in user memory: socket to
 * pipe to socket. Returns like pump_dir. */
static int splice_dir(struct relay *r, struct relay_dir *d, int src, int dst)
{
	int moved = 0;
	for (int round = 0; round < PUMP_ROUNDS; round++) {
		if (d->in_pipe) {
			ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->in_pipe,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN)
					return moved;
				if (errno != EPIPE && errno != ECONNRESET)
					return -1;
				d->discard = true;
				d->in_pipe = 0;
				close_pipe(d);
				return 2; /* go on with the buffered path */
			}
			d->in_pipe -= (size_t)n;
			d->bytes += (uint64_t)n;
			moved = 1;
			if (d->in_pipe)
				continue;
		}
		if (d->eof)
			break;
		if (d->pipe[0] < 0) {
			if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
				return 2;
			fcntl(d->pipe[1], F_SETPIPE_SZ, RELAY_BUFFER);
		}
		size_t want = d->limited && d->left < RELAY_BUFFER ? (size_t)d->left : RELAY_BUFFER;
		if (!want) {
			close_pipe(d);
			return 2; /* the limit is reached: the buffered path drops the rest */
		}
		ssize_t n =
		    splice(src, NULL, d->pipe[1], NULL, want, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				close_pipe(d);
				return moved;
			}
			if (errno == EINVAL)
				return 2; /* not spliceable: use the buffer */
			return -1;
		}
		if (n == 0) {
			d->eof = true;
			moved = 1;
			break;
		}
		d->in_pipe = (size_t)n;
		if (d->limited)
			d->left -= (uint64_t)n;
		moved = 1;
	}
	(void)r;
	if (d->eof && !d->in_pipe && !d->done) {
		shutdown(dst, SHUT_WR);
		d->done = true;
		close_pipe(d);
	}
	return moved;
}

void relay_queue(struct relay *r, int from, const void *data, size_t len)
{
	struct relay_dir *d = &r->dir[from];
	if (!len)
		return;
	size_t need = d->len + len;
	char *buf = xmalloc(need > RELAY_BUFFER ? need : RELAY_BUFFER);
	if (d->len)
		memcpy(buf, d->buf + d->off, d->len);
	memcpy(buf + d->len, data, len);
	free(d->buf);
	d->buf = buf;
	d->off = 0;
	d->len = need;
}

/* Returns 1 if something moved, 0 if blocked, -1 on error. */
static int pump_dir(struct relay *r, int from)
{
	struct relay_dir *d = &r->dir[from];
	int src = r->fd[from], dst = r->fd[1 - from];
	int moved = 0;
	if (d->limited && !d->left)
		d->discard = true;
	if (!d->len && !d->discard) {
		int s = splice_dir(r, d, src, dst);
		if (s != 2)
			return s;
	}
	for (int round = 0; round < PUMP_ROUNDS; round++) {
		if (d->len) {
			ssize_t n = send(dst, d->buf + d->off, d->len, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN)
					return moved;
				if (errno != EPIPE && errno != ECONNRESET)
					return -1;
				/* The receiver left. Keep draining the sender
				 * rather than closing on unread data, which
				 * would make TCP reset the connection and lose
				 * what the other direction still carries. */
				d->discard = true;
				d->len = d->off = 0;
				moved = 1;
				continue;
			}
			d->off += (size_t)n;
			d->len -= (size_t)n;
			d->bytes += (uint64_t)n;
			moved = 1;
			if (d->len)
				continue;
			d->off = 0;
		}
		if (d->eof)
			break;
		if (!d->buf)
			d->buf = xmalloc(RELAY_BUFFER);
		size_t want = RELAY_BUFFER;
		if (d->limited && !d->discard && d->left < want)
			want = (size_t)d->left;
		if (!want)
			d->discard = true;
		ssize_t n = recv(src, d->buf, d->discard ? RELAY_BUFFER : want, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				/* Idle: give the buffer back. */
				free(d->buf);
				d->buf = NULL;
				return moved;
			}
			return -1;
		}
		if (n == 0) {
			d->eof = true;
			moved = 1;
			break;
		}
		if (!d->discard)
			d->len = (size_t)n;
		if (d->limited && !d->discard)
			d->left -= (uint64_t)n;
		moved = 1;
	}
	if (d->eof && !d->len && !d->done) {
		if (!d->discard)
			shutdown(dst, SHUT_WR);
		d->done = true;
		free(d->buf);
		d->buf = NULL;
	}
	return moved;
}

int relay_pump(struct relay *r)
{
	for (int i = 0; i < 2; i++)
		if (pump_dir(r, i) < 0)
			return -1;
	return r->dir[0].done && r->dir[1].done ? 0 : 1;
}

void relay_limit(struct relay *r, int from, uint64_t bytes)
{
	r->dir[from].limited = true;
	r->dir[from].left = bytes;
}

uint32_t relay_events(const struct relay *r, int i)
{
	uint32_t ev = 0;
	if (!r->dir[i].eof && !r->dir[i].len && !r->dir[i].in_pipe)
		ev |= EPOLLIN;
	if (r->dir[1 - i].len || r->dir[1 - i].in_pipe)
		ev |= EPOLLOUT;
	return ev;
}

void relay_release(struct relay *r)
{
	for (int i = 0; i < 2; i++) {
		free(r->dir[i].buf);
		r->dir[i].buf = NULL;
		close_pipe(&r->dir[i]);
	}
}
