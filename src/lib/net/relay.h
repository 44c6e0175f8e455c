/* Moving bytes both ways between two non-blocking sockets, for the proxy on
 * the host. Each direction has one pipe for the life of the tunnel, and
 * bytes go socket to pipe to socket with splice(2), never through user
 * memory; the pipe grows only once a direction carries bulk data. A full
 * pipe stops reading (back-pressure); the end of one direction is passed on
 * as a half-close. Bytes queued by the proxy itself (a reply, a rewritten
 * request head) go out first, from a buffer taken only while they wait. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RELAY_BUFFER (256 * 1024)

/* What a pipe grows to once it has been filled (F_SETPIPE_SZ; less when
 * /proc/sys/fs/pipe-max-size allows less). */
#ifndef RELAY_PIPE_SIZE
#define RELAY_PIPE_SIZE (1024 * 1024)
#endif

struct relay_dir {
	char *buf;
	size_t off, len;
	bool eof;	/* the source has no more to send */
	bool done;	/* eof passed on with shutdown(SHUT_WR) */
	bool discard;	/* the destination is gone: read and drop until eof */
	bool copy;	/* the sockets cannot splice: copy through buf */
	bool grown;	/* the pipe was sized for bulk data (or could not be) */
	int pipe[2];	/* the splice(2) path: bytes move through the kernel only */
	size_t in_pipe; /* bytes waiting in the pipe */
	size_t pipe_size;
	bool limited; /* only `left` more bytes are read from the source for the destination */
	uint64_t left;
	uint64_t bytes;
};

struct relay {
	int fd[2];
	struct relay_dir dir[2]; /* dir[i] carries fd[i] to fd[1 - i] */
	/* Whether fd[i] may have input, or room for output: cleared when a
	 * splice says it would block, set again by relay_ready, so an idle
	 * direction costs no system call per wake-up. */
	bool can_read[2], can_write[2];
};

void relay_init(struct relay *r, int fd0, int fd1);

/* Makes the two pipes. Returns 0, or -errno (EMFILE, ENFILE when out of
 * descriptors). */
int relay_open(struct relay *r);

/* Queues bytes to be written to fd[1 - from] after what is already queued
 * and before anything read later from fd[from] (a rewritten request head,
 * a proxy's reply). */
void relay_queue(struct relay *r, int from, const void *data, size_t len);

/* From now on at most `bytes` more read from fd[from] reach fd[1 - from];
 * what comes after them is read and dropped. */
void relay_limit(struct relay *r, int from, uint64_t bytes);

/* Records the epoll events fd[i] reported. */
void relay_ready(struct relay *r, int i, uint32_t events);

/* Moves what can move without blocking, up to a bounded amount. Returns
 * RELAY_WAIT when every direction waits for its sockets (both are meant to
 * be watched edge-triggered, for input and output, the whole time),
 * RELAY_MORE when work is left and the caller should pump again soon,
 * 0 when both directions are finished, -1 on a socket error. */
#define RELAY_WAIT 1
#define RELAY_MORE 2
int relay_pump(struct relay *r);

/* Frees the buffers and closes the pipes; does not close the sockets. */
void relay_release(struct relay *r);
