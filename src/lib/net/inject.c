/* This file makes injected requests, a thread each. A thread per
 * connection keeps OpenSSL blocking and simple (no SSL_ERROR_WANT_* state
 * machine woven into the proxy's loop) and the loop clean: it never waits
 * on TLS. Agents open few such connections (one per API call), so threads
 * cost little. The state threads share with the loop is this file's result
 * queue, under one mutex; each thread owns its job, including its copy of
 * the key's header, which it wipes when done. */
#include "net/inject.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "net/host_match.h"
#include "net/http_request.h"

/* Connecting and the TLS handshake. */
#define CONNECT_TIMEOUT_SECONDS 15
/* The client has this long for each read of its body. */
#define CLIENT_TIMEOUT_SECONDS 30
/* A response may pause this long between bytes (a model thinking). */
#define IDLE_TIMEOUT_SECONDS 600

struct done {
	struct done *next;
	struct inject_result result;
};

/* A TLS context per CA source (NULL: the system store), made once: loading
 * the system store costs about 16 ms, too much for every request. */
struct tls_context {
	char *ca;
	SSL_CTX *ctx;
};

struct inject {
	pthread_mutex_t lock;
	struct done *done, **done_tail;
	int event_fd;
	unsigned refs; /* the owner and each running job */
	struct tls_context *contexts;
	size_t contexts_len;
};

struct job {
	struct inject *in;
	int client;
	uint64_t cookie;
	char *credential, *host, *pinned, *ca;
	unsigned port;
	char *head;
	size_t head_len;
	char *extra;
	size_t extra_len;
	uint64_t body_len;
	/* The outcome. */
	int status;
	char address[64];
	char *reason;
	uint64_t bytes_out, bytes_in;
};

static void drop_ref(struct inject *in)
{
	/* Called with the lock held; the last one out frees everything. */
	if (--in->refs) {
		pthread_mutex_unlock(&in->lock);
		return;
	}
	while (in->done) {
		struct done *d = in->done;
		in->done = d->next;
		free(d->result.address);
		free(d->result.reason);
		free(d);
	}
	for (size_t i = 0; i < in->contexts_len; i++) {
		free(in->contexts[i].ca);
		SSL_CTX_free(in->contexts[i].ctx);
	}
	free(in->contexts);
	pthread_mutex_unlock(&in->lock);
	pthread_mutex_destroy(&in->lock);
	close(in->event_fd);
	free(in);
}

int inject_new(struct inject **out, struct error *err)
{
	/* OpenSSL's first initialisation, before any thread uses it: by
	 * default it frees its global state in an exit handler, which runs
	 * while threads of this file may still be inside OpenSSL (a run
	 * ends with requests in flight) and crashes the process, whose core
	 * would hold the key. The memory goes back with the process. */
	if (OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS |
				 OPENSSL_INIT_LOAD_CRYPTO_STRINGS,
			     NULL) != 1) {
		ERR_clear_error();
		return error_set(err, ERROR_SETUP, "initialising OpenSSL");
	}
	struct inject *in = xcalloc(1, sizeof(*in));
	pthread_mutex_init(&in->lock, NULL);
	in->done_tail = &in->done;
	in->refs = 1;
	in->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (in->event_fd < 0) {
		int e = errno;
		pthread_mutex_lock(&in->lock);
		drop_ref(in);
		return error_errno(err, ERROR_SETUP, e, "creating the injection eventfd");
	}
	*out = in;
	return 0;
}

int inject_fd(const struct inject *in)
{
	return in->event_fd;
}

static void job_free(struct job *j)
{
	if (j->client >= 0)
		close(j->client);
	if (j->head) {
		explicit_bzero(j->head, j->head_len);
		free(j->head);
	}
	free(j->extra);
	free(j->credential);
	free(j->host);
	free(j->pinned);
	free(j->ca);
	free(j->reason);
	free(j);
}

static void set_failure(struct job *j, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_failure(struct job *j, int status, const char *fmt, ...)
{
	if (j->reason)
		return;
	va_list ap;
	va_start(ap, fmt);
	j->reason = xvasprintf(fmt, ap);
	va_end(ap);
	j->status = status;
}

static bool send_client(struct job *j, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = send(j->client, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
		j->bytes_in += (uint64_t)n;
	}
	return true;
}

/* Tells the client why nothing came back, in the words of the audit log. */
static void answer_failure(struct job *j)
{
	_cleanup_free_ char *body =
	    xasprintf("agent-sandbox: credential %s: %s\n", j->credential, j->reason);
	_cleanup_free_ char *resp =
	    xasprintf("HTTP/1.1 %d %s\r\n"
		      "Content-Type: text/plain; charset=utf-8\r\n"
		      "Content-Length: %zu\r\n"
		      "Connection: close\r\n"
		      "\r\n%s",
		      j->status, http_status_text(j->status), strlen(body), body);
	send_client(j, resp, strlen(resp));
}

/* A socket without its timeout could hold a thread for ever: failing to
 * set one fails the connection. */
static bool set_timeout(int fd, int which, int seconds)
{
	struct timeval tv = {.tv_sec = seconds};
	return setsockopt(fd, SOL_SOCKET, which, &tv, sizeof(tv)) == 0;
}

/* Connects to the pin, or to what the name resolves to. Resolved
 * addresses must be public: a name the user did not pin may not lead the
 * key to this machine or the local network. */
static int connect_upstream(struct job *j)
{
	struct sockaddr_storage pinned;
	socklen_t pinned_len = 0;
	struct addrinfo *list = NULL;
	if (j->pinned) {
		if (!host_parse_address(j->pinned, j->port, &pinned, &pinned_len)) {
			set_failure(j, 502, "the pin %s for %s is not an address", j->pinned,
				    j->host);
			return -1;
		}
	} else {
		struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
		char port[8];
		snprintf(port, sizeof(port), "%u", j->port);
		int r = getaddrinfo(j->host, port, &hints, &list);
		if (r) {
			set_failure(j, 502, "cannot resolve %s: %s", j->host, gai_strerror(r));
			return -1;
		}
		for (struct addrinfo *ai = list; ai; ai = ai->ai_next) {
			const char *what = host_address_class(ai->ai_addr);
			if (what) {
				char text[64];
				host_address_text(ai->ai_addr, text, sizeof(text));
				set_failure(j, 502,
					    "%s resolves to %s, a %s address; the key is sent to "
					    "public addresses only (pin the name with "
					    "network.resolve or --resolve to send it elsewhere)",
					    j->host, text, what);
				freeaddrinfo(list);
				return -1;
			}
		}
	}
	int last = 0, fd = -1;
	struct addrinfo one = {.ai_addr = (struct sockaddr *)&pinned, .ai_addrlen = pinned_len};
	for (struct addrinfo *ai = j->pinned ? &one : list; ai; ai = ai->ai_next) {
		host_address_text(ai->ai_addr, j->address, sizeof(j->address));
		fd = socket(ai->ai_addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			last = errno;
			continue;
		}
		/* A blocking connect gives up after SO_SNDTIMEO. */
		if (set_timeout(fd, SO_SNDTIMEO, CONNECT_TIMEOUT_SECONDS) &&
		    set_timeout(fd, SO_RCVTIMEO, CONNECT_TIMEOUT_SECONDS) &&
		    connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		last = errno;
		close(fd);
		fd = -1;
	}
	if (list)
		freeaddrinfo(list);
	if (fd < 0)
		set_failure(j, 502, "connecting to %s port %u (%s): %s", j->host, j->port,
			    j->address, strerror(last));
	return fd;
}

static void ssl_failure(struct job *j, const char *what, SSL *ssl)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";
	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	long verify = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
	if (verify != X509_V_OK)
		set_failure(j, 502, "%s %s port %u: the certificate is not trusted: %s", what,
			    j->host, j->port, X509_verify_cert_error_string(verify));
	else
		set_failure(j, 502, "%s %s port %u: %s", what, j->host, j->port,
			    buf[0] ? buf : "the connection closed");
	ERR_clear_error();
}

static bool same_ca(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The context for ca, with a reference for the caller, or NULL. Looked up
 * and kept under the lock; made outside it (slow), and a context another
 * thread kept meanwhile wins. */
static SSL_CTX *tls_context(struct job *j)
{
	struct inject *in = j->in;
	pthread_mutex_lock(&in->lock);
	for (size_t i = 0; i < in->contexts_len; i++)
		if (same_ca(in->contexts[i].ca, j->ca)) {
			SSL_CTX *ctx = in->contexts[i].ctx;
			SSL_CTX_up_ref(ctx);
			pthread_mutex_unlock(&in->lock);
			return ctx;
		}
	pthread_mutex_unlock(&in->lock);

	/* TLS 1.2 or later, the certificate checked against the system
	 * store (or the credential's CA file alone). */
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		ssl_failure(j, "TLS setup for", NULL);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	int loaded = j->ca ? SSL_CTX_load_verify_locations(ctx, j->ca, NULL)
			   : SSL_CTX_set_default_verify_paths(ctx);
	if (loaded != 1) {
		ssl_failure(j,
			    j->ca ? "loading the credential's CA file for"
				  : "loading the system CA store for",
			    NULL);
		SSL_CTX_free(ctx);
		return NULL;
	}
	pthread_mutex_lock(&in->lock);
	for (size_t i = 0; i < in->contexts_len; i++)
		if (same_ca(in->contexts[i].ca, j->ca)) {
			SSL_CTX_free(ctx);
			ctx = in->contexts[i].ctx;
			SSL_CTX_up_ref(ctx);
			pthread_mutex_unlock(&in->lock);
			return ctx;
		}
	in->contexts = xreallocarray(in->contexts, in->contexts_len + 1, sizeof(*in->contexts));
	in->contexts[in->contexts_len++] =
	    (struct tls_context){.ca = j->ca ? xstrdup(j->ca) : NULL, .ctx = ctx};
	SSL_CTX_up_ref(ctx);
	pthread_mutex_unlock(&in->lock);
	return ctx;
}

/* TLS with the upstream: its certificate checked against the context's
 * store and against its name. */
static SSL *open_tls(struct job *j, int fd, SSL_CTX **ctx_out)
{
	SSL_CTX *ctx = tls_context(j);
	if (!ctx)
		return NULL;
	*ctx_out = ctx;
	SSL *ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_set_tlsext_host_name(ssl, j->host) != 1 ||
	    SSL_set1_host(ssl, j->host) != 1) {
		ssl_failure(j, "TLS setup for", NULL);
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (SSL_connect(ssl) != 1) {
		ssl_failure(j, "TLS handshake with", ssl);
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

static bool ssl_write_all(SSL *ssl, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		size_t n = 0;
		if (SSL_write_ex(ssl, p, len, &n) != 1)
			return false;
		p += n;
		len -= n;
	}
	return true;
}

/* The request: the head, then exactly body_len bytes of body. Anything the
 * client sends after them is never read, so it cannot reach the upstream
 * as a second request on this connection. */
static bool send_request(struct job *j, SSL *ssl)
{
	if (!ssl_write_all(ssl, j->head, j->head_len))
		return false;
	explicit_bzero(j->head, j->head_len);
	j->bytes_out += j->head_len;
	size_t first = j->extra_len < j->body_len ? j->extra_len : (size_t)j->body_len;
	if (first && !ssl_write_all(ssl, j->extra, first))
		return false;
	j->bytes_out += first;
	uint64_t left = j->body_len - first;
	if (!set_timeout(j->client, SO_RCVTIMEO, CLIENT_TIMEOUT_SECONDS))
		return false;
	char buf[16384];
	while (left) {
		ssize_t n = recv(j->client, buf, left < sizeof(buf) ? left : sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			set_failure(j, 400, "the client sent %llu of %llu body bytes",
				    (unsigned long long)(j->body_len - left),
				    (unsigned long long)j->body_len);
			return false;
		}
		if (!ssl_write_all(ssl, buf, (size_t)n))
			return false;
		left -= (uint64_t)n;
		j->bytes_out += (uint64_t)n;
	}
	return true;
}

/* Waits for the upstream or the client. Returns 1 when the upstream has
 * bytes, 0 when the client hung up, -1 on a timeout. Bytes the client
 * sends meanwhile are read and dropped. */
static int wait_upstream(struct job *j, SSL *ssl, int fd)
{
	for (;;) {
		if (SSL_pending(ssl))
			return 1;
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
				      {.fd = j->client, .events = POLLIN}};
		int r = poll(p, 2, IDLE_TIMEOUT_SECONDS * 1000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (p[1].revents) {
			char sink[4096];
			ssize_t n = recv(j->client, sink, sizeof(sink), MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				return 0;
		}
		if (p[0].revents)
			return 1;
	}
}

/* The response: its head rewritten for Connection: close, then every byte
 * as it comes (an event stream event by event), until the upstream closes. */
static void relay_response(struct job *j, SSL *ssl, int fd)
{
	_cleanup_strbuf_ struct strbuf head = STRBUF_INIT;
	char buf[16384];
	bool head_sent = false;
	for (;;) {
		int w = wait_upstream(j, ssl, fd);
		if (w <= 0) {
			if (!head_sent)
				set_failure(j, 504, "%s port %u sent no response within %d seconds",
					    j->host, j->port, IDLE_TIMEOUT_SECONDS);
			return;
		}
		size_t n = 0;
		if (SSL_read_ex(ssl, buf, sizeof(buf), &n) != 1) {
			if (!head_sent)
				ssl_failure(j, "reading the response of", NULL);
			return;
		}
		if (head_sent) {
			if (!send_client(j, buf, n))
				return;
			continue;
		}
		strbuf_add(&head, buf, n);
		struct http_response resp;
		int r = http_response_close(head.buf, head.len, &resp);
		if (r == 0)
			continue;
		if (r < 0) {
			set_failure(j, 502, "%s port %u sent a malformed response head", j->host,
				    j->port);
			return;
		}
		j->status = resp.status;
		head_sent = true;
		bool ok = send_client(j, resp.head, resp.len) &&
			  send_client(j, head.buf + resp.head_len, head.len - resp.head_len);
		free(resp.head);
		strbuf_release(&head);
		if (!ok)
			return;
	}
}

static void finish(struct job *j)
{
	struct done *d = xcalloc(1, sizeof(*d));
	d->result = (struct inject_result){
	    .cookie = j->cookie,
	    .status = j->status,
	    .address = j->address[0] ? xstrdup(j->address) : NULL,
	    .reason = steal_ptr(&j->reason),
	    .bytes_out = j->bytes_out,
	    .bytes_in = j->bytes_in,
	};
	struct inject *in = j->in;
	pthread_mutex_lock(&in->lock);
	*in->done_tail = d;
	in->done_tail = &d->next;
	uint64_t one = 1;
	if (write(in->event_fd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow at one per request. */
	}
	drop_ref(in);
}

static char *copy_bytes(const char *data, size_t len)
{
	char *p = xmalloc(len + 1);
	memcpy(p, data, len);
	p[len] = '\0';
	return p;
}

static void *run(void *arg)
{
	struct job *j = arg;
	int fd = -1;
	if (set_timeout(j->client, SO_SNDTIMEO, IDLE_TIMEOUT_SECONDS))
		fd = connect_upstream(j);
	else
		set_failure(j, 502, "setting a timeout: %s", strerror(errno));
	SSL_CTX *ctx = NULL;
	SSL *ssl = fd >= 0 ? open_tls(j, fd, &ctx) : NULL;
	if (ssl) {
		if (set_timeout(fd, SO_RCVTIMEO, IDLE_TIMEOUT_SECONDS) &&
		    set_timeout(fd, SO_SNDTIMEO, IDLE_TIMEOUT_SECONDS) && send_request(j, ssl))
			relay_response(j, ssl, fd);
		else
			ssl_failure(j, "sending the request to", NULL);
		SSL_shutdown(ssl);
		SSL_free(ssl);
	}
	SSL_CTX_free(ctx);
	ERR_clear_error();
	if (fd >= 0)
		close(fd);
	if (j->reason && !j->bytes_in)
		answer_failure(j);
	shutdown(j->client, SHUT_RDWR);
	finish(j);
	job_free(j);
	return NULL;
}

int inject_start(struct inject *in, int client, const struct inject_request *req)
{
	struct job *j = xcalloc(1, sizeof(*j));
	*j = (struct job){
	    .in = in,
	    .client = client,
	    .cookie = req->cookie,
	    .credential = xstrdup(req->credential),
	    .host = xstrdup(req->host),
	    .pinned = req->pinned ? xstrdup(req->pinned) : NULL,
	    .ca = req->ca ? xstrdup(req->ca) : NULL,
	    .port = req->port,
	    .head = copy_bytes(req->head, req->head_len),
	    .head_len = req->head_len,
	    .extra = req->extra_len ? copy_bytes(req->extra, req->extra_len) : NULL,
	    .extra_len = req->extra_len,
	    .body_len = req->body_len,
	    .status = 502,
	};
	/* Blocking from here on: the thread waits on it alone. */
	int flags = fcntl(client, F_GETFL);
	if (flags >= 0)
		fcntl(client, F_SETFL, flags & ~O_NONBLOCK);
	/* Threads block every signal: the supervisor takes them through its
	 * signalfd, and a write to a closed upstream must fail with EPIPE
	 * rather than kill the run. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&in->lock);
	in->refs++;
	pthread_mutex_unlock(&in->lock);
	pthread_t t;
	int e = pthread_create(&t, &attr, run, j);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		pthread_mutex_lock(&in->lock);
		in->refs--;
		pthread_mutex_unlock(&in->lock);
		j->client = -1;
		job_free(j);
		return -e;
	}
	return 0;
}

bool inject_take(struct inject *in, struct inject_result *out)
{
	pthread_mutex_lock(&in->lock);
	struct done *d = in->done;
	if (d) {
		in->done = d->next;
		if (!in->done)
			in->done_tail = &in->done;
	} else {
		uint64_t count;
		if (read(in->event_fd, &count, sizeof(count)) < 0) {
			/* EAGAIN: already drained. */
		}
	}
	pthread_mutex_unlock(&in->lock);
	if (!d)
		return false;
	*out = d->result;
	free(d);
	return true;
}

void inject_free(struct inject *in)
{
	if (!in)
		return;
	pthread_mutex_lock(&in->lock);
	drop_ref(in);
}
