/* The output ring (ring.h). */
#include "serve/ring.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void ring_init(struct ring *r, size_t capacity)
{
	*r = (struct ring){.capacity = capacity, .next_seq = 1};
}

void ring_release(struct ring *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->chunks[(r->first + i) % r->cap_chunks].data);
	free(r->chunks);
	*r = (struct ring){0};
}

static void drop_oldest(struct ring *r)
{
	struct ring_chunk *c = &r->chunks[r->first];
	r->bytes -= c->len;
	free(c->data);
	*c = (struct ring_chunk){0};
	r->first = (r->first + 1) % r->cap_chunks;
	r->count--;
}

uint64_t ring_push(struct ring *r, int stream, const void *data, size_t len)
{
	while (r->count && r->bytes + len > r->capacity)
		drop_oldest(r);
	if (r->count == r->cap_chunks) {
		/* Grow, unrolling the circle into the new array. */
		size_t n = r->cap_chunks ? r->cap_chunks * 2 : 16;
		struct ring_chunk *c = xcalloc(n, sizeof(*c));
		for (size_t i = 0; i < r->count; i++)
			c[i] = r->chunks[(r->first + i) % r->cap_chunks];
		free(r->chunks);
		r->chunks = c;
		r->cap_chunks = n;
		r->first = 0;
	}
	struct ring_chunk *c = &r->chunks[(r->first + r->count) % r->cap_chunks];
	c->seq = r->next_seq++;
	c->stream = stream;
	c->len = len;
	c->data = xmalloc(len ? len : 1);
	memcpy(c->data, data, len);
	r->bytes += len;
	r->count++;
	return c->seq;
}

uint64_t ring_first_seq(const struct ring *r)
{
	return r->count ? r->chunks[r->first].seq : r->next_seq;
}

const struct ring_chunk *ring_get(const struct ring *r, uint64_t seq)
{
	uint64_t first = ring_first_seq(r);
	if (seq < first || seq >= r->next_seq)
		return NULL;
	return &r->chunks[(r->first + (size_t)(seq - first)) % r->cap_chunks];
}
