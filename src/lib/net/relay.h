/* Moving bytes both ways between two non-blocking sockets, for the proxy on
 * the host and the forwarder inside the sandbox. Each direction has one
 * buffer, taken only while it holds data, so idle connections cost no
 * buffer memory; a full buffer stops reading (back-pressure); the end of
 * one direction is passed on as a half-close. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RELAY_BUFFER (256 * 1024)

struct relay_dir {
	char *buf;
	size_t off, len;
	bool eof;	/* the source has no more to send */
	bool done;	/* eof passed on with shutdown(SHUT_WR) */
	bool discard;	/* the destination is gone: read and drop until eof */
	int pipe[2];	/* splice(2) path: bytes move through the kernel only */
	size_t in_pipe; /* bytes waiting in the pipe */
	bool limited;	/* only `left` more bytes are read from the source for the destination */
	uint64_t left;
	uint64_t bytes;
};

struct relay {
	int fd[2];
	struct relay_dir dir[2]; /* dir[i] carries fd[i] to fd[1 - i] */
};

void relay_init(struct relay *r, int fd0, int fd1);

/* Queues bytes to be written to fd[1 - from] after what is already queued
 * and before anything read later from fd[from] (a rewritten request head,
 * a proxy's reply). */
void relay_queue(struct relay *r, int from, const void *data, size_t len);

/* From now on at most `bytes` more read from fd[from] reach fd[1 - from];
 * what comes after them is read and dropped. */
void relay_limit(struct relay *r, int from, uint64_t bytes);

/* Moves what can move without blocking. Returns 1 while data can still
 * flow, 0 when both directions are finished, -1 on a socket error. */
int relay_pump(struct relay *r);

/* The epoll events fd[i] waits for (0: none now). */
uint32_t relay_events(const struct relay *r, int i);

/* Frees the buffers; does not close the descriptors. */
void relay_release(struct relay *r);
