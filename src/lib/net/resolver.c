/* This file runs getaddrinfo on worker threads. It is the only code in
 * agent-sandbox that uses threads: the state they share is this file's
 * queues, under one mutex, and nothing else. */
#include "net/resolver.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/xalloc.h"

struct job {
	struct job *next;
	uint64_t cookie;
	int status;
	struct addrinfo *ai;
	char host[];
};

struct resolver {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct job *pending, **pending_tail;
	struct job *done, **done_tail;
	int event_fd;
	unsigned refs; /* the owner and each worker */
	bool stopping;
};

static void drop_ref(struct resolver *r)
{
	/* Called with the lock held; the last one out frees everything. */
	if (--r->refs) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	for (struct job *list[2] = {r->pending, r->done}, **l = list; l < list + 2; l++)
		while (*l) {
			struct job *j = *l;
			*l = j->next;
			if (j->ai)
				freeaddrinfo(j->ai);
			free(j);
		}
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->wake);
	close(r->event_fd);
	free(r);
}

static void *worker(void *arg)
{
	struct resolver *r = arg;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->pending && !r->stopping)
			pthread_cond_wait(&r->wake, &r->lock);
		if (r->stopping)
			break;
		struct job *j = r->pending;
		r->pending = j->next;
		if (!r->pending)
			r->pending_tail = &r->pending;
		pthread_mutex_unlock(&r->lock);

		struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
		j->status = getaddrinfo(j->host, NULL, &hints, &j->ai);
		if (j->status == EAI_SYSTEM && errno == ENOMEM)
			abort();

		pthread_mutex_lock(&r->lock);
		j->next = NULL;
		*r->done_tail = j;
		r->done_tail = &j->next;
		uint64_t one = 1;
		if (write(r->event_fd, &one, sizeof(one)) < 0) {
			/* The counter cannot overflow at one per lookup. */
		}
	}
	drop_ref(r);
	return NULL;
}

int resolver_new(struct resolver **out, unsigned threads, struct error *err)
{
	struct resolver *r = xcalloc(1, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	r->pending_tail = &r->pending;
	r->done_tail = &r->done;
	r->refs = 1;
	r->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->event_fd < 0) {
		int e = errno;
		pthread_mutex_lock(&r->lock);
		drop_ref(r);
		return error_errno(err, ERROR_SETUP, e, "creating the resolver's eventfd");
	}
	/* Workers block every signal: the supervisor takes them through its
	 * signalfd, which only works while no thread accepts them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (unsigned i = 0; i < threads; i++) {
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		pthread_mutex_lock(&r->lock);
		r->refs++;
		pthread_mutex_unlock(&r->lock);
		int e = pthread_create(&t, &attr, worker, r);
		pthread_attr_destroy(&attr);
		if (e) {
			pthread_mutex_lock(&r->lock);
			r->refs--;
			pthread_mutex_unlock(&r->lock);
			if (i == 0) {
				pthread_sigmask(SIG_SETMASK, &old, NULL);
				resolver_free(r);
				return error_errno(err, ERROR_SETUP, e,
						   "starting a resolver thread");
			}
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*out = r;
	return 0;
}

int resolver_fd(const struct resolver *r)
{
	return r->event_fd;
}

void resolver_submit(struct resolver *r, uint64_t cookie, const char *host)
{
	size_t n = strlen(host) + 1;
	struct job *j = xmalloc(sizeof(*j) + n);
	*j = (struct job){.cookie = cookie};
	memcpy(j->host, host, n);
	pthread_mutex_lock(&r->lock);
	*r->pending_tail = j;
	r->pending_tail = &j->next;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

bool resolver_take(struct resolver *r, struct resolver_result *out)
{
	pthread_mutex_lock(&r->lock);
	struct job *j = r->done;
	if (j) {
		r->done = j->next;
		if (!r->done)
			r->done_tail = &r->done;
	} else {
		uint64_t count;
		if (read(r->event_fd, &count, sizeof(count)) < 0) {
			/* EAGAIN: already drained. */
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (!j)
		return false;
	*out = (struct resolver_result){.cookie = j->cookie, .status = j->status, .ai = j->ai};
	free(j);
	return true;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	pthread_cond_broadcast(&r->wake);
	drop_ref(r);
}
