/* This file reads inotify events for the watches of the supervisor's loop
 * (the masked files' stand-ins, the masked host sockets). */
#include "base/inotify_events.h"

#include <unistd.h>

void inotify_each_event(int fd, void (*fn)(const struct inotify_event *e, void *ctx), void *ctx)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return;
		for (char *p = buf; p + sizeof(struct inotify_event) <= buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			fn(e, ctx);
			p += sizeof(struct inotify_event) + e->len;
		}
	}
}
