/* A process's output kept for re-attaching: the latest bytes, at most a
 * set size, as the chunks they were sent in, each with its sequence
 * number. A client that lost its connection asks for everything from a
 * number on; what fell out of the ring is a gap it is told of. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct ring_chunk {
	uint64_t seq;
	int stream; /* the caller's: stdout, stderr, pty */
	size_t len;
	unsigned char *data;
};

struct ring {
	size_t capacity;	   /* bytes kept at most (a single larger chunk is kept whole) */
	size_t bytes;		   /* bytes held */
	struct ring_chunk *chunks; /* a circular array */
	size_t cap_chunks, first, count;
	uint64_t next_seq; /* the number the next chunk gets; starts at 1 */
};

void ring_init(struct ring *r, size_t capacity);
void ring_release(struct ring *r);
/* Copies a chunk in under the next sequence number, dropping the oldest
 * chunks beyond capacity; returns its number. */
uint64_t ring_push(struct ring *r, int stream, const void *data, size_t len);
/* The oldest number still held (next_seq when empty). */
uint64_t ring_first_seq(const struct ring *r);
/* The held chunk with number seq, or NULL. */
const struct ring_chunk *ring_get(const struct ring *r, uint64_t seq);
