/* This file copies bytes between two sockets. It never blocks and never
 * interprets the bytes. */
#include "relay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xalloc.h"

/* Bounded work per call keeps one busy connection from starving others. */
#define PUMP_ROUNDS 8

void relay_init(struct relay *r, int fd0, int fd1)
{
	*r = (struct relay){.fd = {fd0, fd1}};
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
		ssize_t n = recv(src, d->buf, RELAY_BUFFER, 0);
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

uint32_t relay_events(const struct relay *r, int i)
{
	uint32_t ev = 0;
	if (!r->dir[i].eof && !r->dir[i].len)
		ev |= EPOLLIN;
	if (r->dir[1 - i].len)
		ev |= EPOLLOUT;
	return ev;
}

void relay_release(struct relay *r)
{
	for (int i = 0; i < 2; i++) {
		free(r->dir[i].buf);
		r->dir[i].buf = NULL;
	}
}
