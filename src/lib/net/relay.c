/* This file copies bytes between two sockets. It never blocks and never
 * interprets the bytes. Every pump runs each direction until it would
 * block, so the caller can watch the sockets edge-triggered and never
 * re-arm them. */
#include "net/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/xalloc.h"

/* Bounded work per call keeps one busy connection from starving others;
 * the caller pumps again when RELAY_MORE says work was left. */
#define PUMP_ROUNDS 8

/* splice_dir and copy_dir: the direction now drops or copies instead. */
#define PUMP_SWITCH 3

void relay_init(struct relay *r, int fd0, int fd1)
{
	*r = (struct relay){.fd = {fd0, fd1}, .can_read = {true, true}, .can_write = {true, true}};
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

int relay_open(struct relay *r)
{
	for (int i = 0; i < 2; i++) {
		struct relay_dir *d = &r->dir[i];
		if (d->pipe[0] >= 0)
			continue;
		if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			int e = errno;
			close_pipe(&r->dir[0]);
			return -e;
		}
		/* A new pipe has its default size (less for a user past
		 * fs.pipe-user-pages-soft); it grows in grow_pipe. */
		int size = fcntl(d->pipe[1], F_GETPIPE_SZ);
		d->pipe_size = size > 0 ? (size_t)size : 4096;
	}
	return 0;
}

/* A pipe that filled up carries bulk data: give it room for larger splices,
 * as much as the system allows up to RELAY_PIPE_SIZE. Idle and chatty
 * tunnels keep the default; the kernel takes a page only when bytes are
 * written, so even a grown pipe costs memory only while it holds data. */
static void grow_pipe(struct relay_dir *d)
{
	d->grown = true;
	for (size_t size = RELAY_PIPE_SIZE; size > d->pipe_size; size /= 2) {
		int got = fcntl(d->pipe[1], F_SETPIPE_SZ, (int)size);
		if (got > 0) {
			d->pipe_size = (size_t)got;
			return;
		}
	}
}

/* The zero-copy path: socket to pipe to socket, until both ends would
 * block. Returns RELAY_WAIT, RELAY_MORE, PUMP_SWITCH or -1. */
static int splice_dir(struct relay *r, struct relay_dir *d, int from)
{
	int src = r->fd[from], dst = r->fd[1 - from];
	for (int round = 0; round < PUMP_ROUNDS; round++) {
		bool moved = false;
		if (d->in_pipe && r->can_write[1 - from]) {
			ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->in_pipe,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n < 0 && errno == EINTR)
				moved = true; /* try again */
			else if (n < 0 && errno == EAGAIN)
				r->can_write[1 - from] = false;
			else if (n < 0) {
				if (errno != EPIPE && errno != ECONNRESET)
					return -1;
				/* The receiver left: drop what is left. */
				d->discard = true;
				d->in_pipe = 0;
				return PUMP_SWITCH;
			}
			if (n > 0) {
				d->in_pipe -= (size_t)n;
				d->bytes += (uint64_t)n;
				moved = true;
			}
		}
		if (d->limited && !d->left && !d->in_pipe) {
			/* Everything allowed went out: the rest is dropped. */
			d->discard = true;
			return PUMP_SWITCH;
		}
		size_t room = d->pipe_size - d->in_pipe;
		if (d->limited && d->left < room)
			room = (size_t)d->left;
		if (!d->eof && room && r->can_read[from]) {
			ssize_t n = splice(src, NULL, d->pipe[1], NULL, room,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n < 0 && errno == EINVAL && !d->in_pipe && !d->bytes) {
				d->copy = true;
				return PUMP_SWITCH;
			}
			if (n < 0 && errno == EINTR)
				moved = true;
			else if (n < 0 && errno == EAGAIN && !d->in_pipe)
				r->can_read[from] = false; /* else the pipe was full */
			else if (n < 0 && errno != EAGAIN)
				return -1;
			if (n == 0) {
				d->eof = true;
				moved = true;
			} else if (n > 0) {
				d->in_pipe += (size_t)n;
				if (d->limited)
					d->left -= (uint64_t)n;
				if (!d->grown && d->in_pipe == d->pipe_size)
					grow_pipe(d);
				moved = true;
			}
		}
		if (d->eof && !d->in_pipe) {
			if (!d->done)
				shutdown(dst, SHUT_WR);
			d->done = true;
			return RELAY_WAIT;
		}
		if (!moved)
			return RELAY_WAIT;
	}
	return RELAY_MORE;
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

/* Queued bytes, then (with d->copy) a copy through user memory, or (with
 * d->discard) reading and dropping. Returns RELAY_WAIT, RELAY_MORE,
 * PUMP_SWITCH (the queue is out: splice from now on) or -1. */
static int copy_dir(struct relay_dir *d, int src, int dst)
{
	for (int round = 0; round < PUMP_ROUNDS; round++) {
		if (d->len) {
			ssize_t n = send(dst, d->buf + d->off, d->len, MSG_NOSIGNAL);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN)
					return RELAY_WAIT;
				if (errno != EPIPE && errno != ECONNRESET)
					return -1;
				/* The receiver left. Keep draining the sender
				 * rather than closing on unread data, which
				 * would make TCP reset the connection and lose
				 * what the other direction still carries. */
				d->discard = true;
				d->len = d->off = 0;
				continue;
			}
			d->off += (size_t)n;
			d->len -= (size_t)n;
			d->bytes += (uint64_t)n;
			if (d->len)
				continue;
			d->off = 0;
		}
		if (d->limited && !d->left)
			d->discard = true;
		if (!d->discard && !d->copy && !d->eof) {
			free(d->buf);
			d->buf = NULL;
			return PUMP_SWITCH;
		}
		if (d->eof)
			break;
		if (!d->buf)
			d->buf = xmalloc(RELAY_BUFFER);
		size_t want = RELAY_BUFFER;
		if (d->limited && !d->discard && d->left < want)
			want = (size_t)d->left;
		ssize_t n = recv(src, d->buf, want, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				/* Idle: give the buffer back. */
				free(d->buf);
				d->buf = NULL;
				return RELAY_WAIT;
			}
			return -1;
		}
		if (n == 0) {
			d->eof = true;
			break;
		}
		if (!d->discard)
			d->len = (size_t)n;
		if (d->limited && !d->discard)
			d->left -= (uint64_t)n;
	}
	if (!d->eof || d->len)
		return RELAY_MORE;
	if (!d->done) {
		if (!d->discard)
			shutdown(dst, SHUT_WR);
		d->done = true;
		free(d->buf);
		d->buf = NULL;
	}
	return RELAY_WAIT;
}

static int pump_dir(struct relay *r, int from)
{
	struct relay_dir *d = &r->dir[from];
	int src = r->fd[from], dst = r->fd[1 - from];
	if (d->done)
		return RELAY_WAIT;
	/* Each switch sets a flag that stays set (or empties the queue, which
	 * only relay_queue fills, before the relay starts): this ends. */
	for (;;) {
		int s;
		if (!d->len && !d->discard && !d->copy && d->pipe[0] >= 0)
			s = splice_dir(r, d, from);
		else
			s = copy_dir(d, src, dst);
		if (s != PUMP_SWITCH)
			return s;
		if (!d->len && !d->discard && !d->copy && d->pipe[0] < 0)
			d->copy = true; /* no pipe: relay_open was not called */
	}
}

void relay_ready(struct relay *r, int i, uint32_t events)
{
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		r->can_read[i] = true;
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		r->can_write[i] = true;
}

int relay_pump(struct relay *r)
{
	int status = RELAY_WAIT;
	for (int i = 0; i < 2; i++) {
		int s = pump_dir(r, i);
		if (s < 0)
			return -1;
		if (s == RELAY_MORE)
			status = RELAY_MORE;
	}
	return r->dir[0].done && r->dir[1].done ? 0 : status;
}

void relay_limit(struct relay *r, int from, uint64_t bytes)
{
	r->dir[from].limited = true;
	r->dir[from].left = bytes;
}

void relay_release(struct relay *r)
{
	for (int i = 0; i < 2; i++) {
		free(r->dir[i].buf);
		r->dir[i].buf = NULL;
		close_pipe(&r->dir[i]);
	}
}
