/* Reading an inotify descriptor: every pending event, handed over one at a
 * time. Shared by the watches that run in the supervisor's loop. */
#pragma once

#include <sys/inotify.h>

/* Reads fd (non-blocking) until no event is pending and calls fn with each
 * event, IN_Q_OVERFLOW included. */
void inotify_each_event(int fd, void (*fn)(const struct inotify_event *e, void *ctx), void *ctx);
