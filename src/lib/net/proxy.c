/* This file is the proxy's event loop: accept, read a request, decide with
 * netpolicy, resolve (on the resolver's threads), connect, then relay. It
 * never lets a byte through before the policy said yes, and every decision
 * leaves through one function, emit_decision(), which is where audit
 * records will be written. A refusal is answered at once: 403 with a
 * one-line reason, or SOCKS reply 2. A client that sends no complete request
 * in time, or connects past the connection cap, is refused the same way
 * (408, 503), so a flood costs bounded descriptors and is on record. */
#include "net/proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "net/host_match.h"
#include "net/http_request.h"
#include "net/relay.h"
#include "net/resolver.h"
#include "net/socks5.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

/* Resolving and connecting together must finish within this. */
#define CONNECT_DEADLINE_SECONDS 15
#define RESOLVER_THREADS 4
#define MAX_ADDRESSES 8

/* A client has this long to send its whole request (head, SOCKS greeting
 * and request): a connection that idles before deciding holds a
 * descriptor and proves nothing, and a flood of them (slowloris) must not
 * pile up. The in-sandbox forwarder hands the socket over at once, so the
 * clock starts when the client connected. */
#define HEAD_TIMEOUT_SECONDS 10

/* The most connections one run's proxy serves at once. A connection past
 * it is refused with 503 (SOCKS: general failure) once its request is read,
 * so the client learns why; past the headroom on top of that it is closed
 * without reading, which bounds the descriptors a flood can take. Only
 * bench/network builds a copy with another cap, to measure more tunnels. */
#ifndef PROXY_MAX_CONNECTIONS
#define PROXY_MAX_CONNECTIONS 512
#endif
#define MAX_CONNECTIONS PROXY_MAX_CONNECTIONS
#define REFUSE_HEADROOM 64

enum endpoint_kind { EP_LISTENER, EP_RESOLVER, EP_TIMER, EP_CONN };

struct endpoint {
	enum endpoint_kind kind;
	int fd;
	uint32_t events;
	bool added;
	struct conn *conn;
	int side; /* 0: the sandbox's side, 1: the upstream server */
};

enum conn_state {
	ST_HEAD,
	ST_SOCKS_REQUEST,
	ST_RESOLVING,
	ST_CONNECTING,
	ST_RELAY,
	ST_LINGER, /* refused: our side is shut, reading the client out */
	ST_CLOSED,
};

/* How long a refused client may keep sending before it is cut off. */
#define LINGER_SECONDS 2
enum conn_proto { PROTO_UNKNOWN, PROTO_HTTP, PROTO_SOCKS, PROTO_LOCAL };

struct address {
	struct sockaddr_storage ss;
	socklen_t len;
};

struct conn {
	struct proxy *proxy;
	struct conn *next, *prev;
	uint64_t id;
	enum conn_state state;
	enum conn_proto proto;
	bool http_forward;
	bool dead;
	bool decided;  /* the decision has been emitted */
	bool handed;   /* ep[0] is the client's own socket, passed by the forwarder */
	bool over_cap; /* accepted past MAX_CONNECTIONS: refused once its request is read */
	struct endpoint ep[2];
	struct strbuf head; /* bytes read before the request was complete */
	size_t head_used;   /* how many of them the request took */
	char *forward_head; /* plain http: the rewritten head */
	size_t forward_len;
	uint64_t body_len; /* plain http: the request's body, the last bytes forwarded */
	struct net_verdict verdict;
	char *raw_host; /* as sent, for messages when it is not a valid name */
	unsigned port;
	struct address addrs[MAX_ADDRESSES];
	size_t naddrs, next_addr;
	char address[64];
	char *failure;
	struct relay relay;
	struct timespec start;
	time_t deadline;
};

struct proxy {
	int epfd;
	struct endpoint listener, resolver_ep, timer;
	char *socket_path;
	const struct net_policy *policy;
	proxy_decision_fn on_decision;
	void *ctx;
	struct resolver *resolver;
	struct conn *conns;
	struct conn *dead;
	uint64_t next_id;
	size_t waiting;	 /* connections on a deadline: see is_timed */
	size_t open;	 /* connections not yet closed */
	size_t over_cap; /* of them, how many are over MAX_CONNECTIONS */
	int reserve_fd;	 /* given up to accept and close when out of descriptors */
	bool closing;	 /* proxy_free: close at once, no lingering */
};

static time_t now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void ep_update(struct proxy *p, struct endpoint *ep, uint32_t want)
{
	if (ep->fd < 0)
		return;
	if (!want) {
		if (ep->added)
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
		ep->added = false;
		ep->events = 0;
		return;
	}
	if (ep->added && ep->events == want)
		return;
	struct epoll_event ev = {.events = want, .data.ptr = ep};
	if (epoll_ctl(p->epfd, ep->added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, ep->fd, &ev) == 0) {
		ep->added = true;
		ep->events = want;
	}
}

/* Asks epoll to look at ep again: an edge-triggered endpoint whose work was
 * cut short is reported once more if it is still ready, so the rest is
 * done on the next round, after other connections had their turn. */
static void ep_rearm(struct proxy *p, struct endpoint *ep)
{
	if (ep->fd < 0 || !ep->added)
		return;
	struct epoll_event ev = {.events = ep->events, .data.ptr = ep};
	epoll_ctl(p->epfd, EPOLL_CTL_MOD, ep->fd, &ev);
}

static const char *proto_name(const struct conn *c)
{
	switch (c->proto) {
	case PROTO_HTTP:
		return c->http_forward ? "http" : "connect";
	case PROTO_SOCKS:
		return "socks5";
	case PROTO_LOCAL:
		return "localhost";
	case PROTO_UNKNOWN:
		break;
	}
	return "unknown";
}

/* The one place decisions leave the proxy: --debug today, the audit log
 * once it exists. */
static void emit_decision(struct conn *c, bool allowed, const char *reason)
{
	if (c->decided)
		return;
	c->decided = true;
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	struct proxy_decision d = {
	    .protocol = proto_name(c),
	    .host = c->verdict.host ? c->verdict.host
		    : c->raw_host   ? c->raw_host
				    : "?",
	    .port = c->port,
	    .allowed = allowed,
	    .reason = reason,
	    .allowed_by = allowed ? c->verdict.allowed_by : NULL,
	    .address = c->address[0] ? c->address : NULL,
	    .bytes_out = c->relay.dir[0].bytes,
	    .bytes_in = c->relay.dir[1].bytes,
	    .duration_ms = (double)(end.tv_sec - c->start.tv_sec) * 1e3 +
			   (double)(end.tv_nsec - c->start.tv_nsec) / 1e6,
	};
	if (c->proxy->on_decision)
		c->proxy->on_decision(c->proxy->ctx, &d);
}

static bool is_timed(enum conn_state st)
{
	return st == ST_HEAD || st == ST_SOCKS_REQUEST || st == ST_RESOLVING ||
	       st == ST_CONNECTING || st == ST_LINGER;
}

static void set_waiting(struct conn *c, bool waiting)
{
	struct proxy *p = c->proxy;
	bool was = is_timed(c->state);
	if (was == waiting)
		return;
	p->waiting += waiting ? 1 : (size_t)-1;
	struct itimerspec its = {0};
	if (p->waiting == 1 && waiting)
		its.it_value.tv_sec = its.it_interval.tv_sec = 1;
	if ((p->waiting == 1 && waiting) || p->waiting == 0)
		timerfd_settime(p->timer.fd, 0, &its, NULL);
}

static void set_state(struct conn *c, enum conn_state st)
{
	set_waiting(c, is_timed(st));
	c->state = st;
}

static void conn_close(struct conn *c)
{
	if (c->dead)
		return;
	if (c->state == ST_RELAY)
		emit_decision(c, true, NULL);
	/* Closing a TCP socket with unread input resets it, and the reset can
	 * destroy a refusal the client has not read yet: end our side, read
	 * the client out for a moment, then close. */
	if (c->handed && c->state != ST_RELAY && c->state != ST_LINGER && c->ep[0].fd >= 0 &&
	    !c->proxy->closing) {
		shutdown(c->ep[0].fd, SHUT_WR);
		if (c->ep[1].fd >= 0) {
			ep_update(c->proxy, &c->ep[1], 0);
			close(c->ep[1].fd);
			c->ep[1].fd = -1;
		}
		set_state(c, ST_LINGER);
		c->deadline = now_seconds() + LINGER_SECONDS;
		ep_update(c->proxy, &c->ep[0], EPOLLIN);
		return;
	}
	set_state(c, ST_CLOSED);
	c->dead = true;
	c->proxy->open--;
	if (c->over_cap)
		c->proxy->over_cap--;
	for (int i = 0; i < 2; i++) {
		/* Explicitly: a passed socket may still be open in the sandbox
		 * for a moment, and epoll would go on reporting it. */
		ep_update(c->proxy, &c->ep[i], 0);
		if (c->ep[i].fd >= 0)
			close(c->ep[i].fd);
		c->ep[i].fd = -1;
	}
	struct proxy *p = c->proxy;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = p->dead;
	p->dead = c;
}

static void conn_free(struct conn *c)
{
	relay_release(&c->relay);
	strbuf_release(&c->head);
	free(c->forward_head);
	free(c->raw_host);
	free(c->failure);
	net_verdict_release(&c->verdict);
	free(c);
}

/* Best effort: the reply is small and the socket buffer empty, and the
 * sandbox's side is a unix socket, which keeps what was written readable
 * after we close. */
static void send_now(struct conn *c, const void *data, size_t len)
{
	ssize_t r;
	do
		r = send(c->ep[0].fd, data, len, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
}

static void reply_http_error(struct conn *c, int status, const char *reason)
{
	_cleanup_free_ char *body = xasprintf("agent-sandbox: %s\n", reason);
	_cleanup_free_ char *resp = xasprintf("HTTP/1.1 %d %s\r\n"
					      "Content-Type: text/plain; charset=utf-8\r\n"
					      "Content-Length: %zu\r\n"
					      "Connection: close\r\n"
					      "\r\n%s",
					      status, http_status_text(status), strlen(body), body);
	send_now(c, resp, strlen(resp));
}

static void reply_socks(struct conn *c, int code)
{
	uint8_t reply[10];
	socks5_reply(code, reply);
	send_now(c, reply, sizeof(reply));
}

/* Refused by the policy, or a bad request: answer and close. */
static void refuse(struct conn *c, int http_status, int socks_code, const char *reason)
{
	if (c->proto == PROTO_HTTP)
		reply_http_error(c, http_status, reason);
	else if (c->proto == PROTO_SOCKS && c->state == ST_SOCKS_REQUEST)
		reply_socks(c, socks_code);
	emit_decision(c, false, reason);
	conn_close(c);
}

/* Allowed, but it did not work out: say why and close. */
static void fail(struct conn *c, int http_status, int socks_code, const char *reason)
{
	if (c->proto == PROTO_HTTP)
		reply_http_error(c, http_status, reason);
	else if (c->proto == PROTO_SOCKS)
		reply_socks(c, socks_code);
	emit_decision(c, true, reason);
	conn_close(c);
}

/* Both sockets of a tunnel are watched edge-triggered, for input and
 * output, from start to end: relay_pump runs every direction until it would
 * block, so there is nothing to re-arm per chunk. */
#define RELAY_EVENTS (EPOLLIN | EPOLLOUT | EPOLLET)

static void pump_relay(struct conn *c)
{
	int r = relay_pump(&c->relay);
	if (r <= 0) {
		conn_close(c);
		return;
	}
	if (r == RELAY_MORE)
		for (int i = 0; i < 2; i++)
			ep_rearm(c->proxy, &c->ep[i]);
}

static void start_relay(struct conn *c)
{
	struct proxy *p = c->proxy;
	int upstream = c->ep[1].fd;
	int one = 1;
	setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	relay_init(&c->relay, c->ep[0].fd, upstream);
	/* The pipes live as long as the tunnel. Out of descriptors, the
	 * client hears why and the decision is on record, like any failure
	 * after an allowed decision. */
	int e = relay_open(&c->relay);
	if (e < 0) {
		_cleanup_free_ char *why =
		    xasprintf("out of file descriptors for the tunnel to %s port %u (%s); "
			      "close some connections and try again",
			      c->verdict.host, c->port, strerror(-e));
		fail(c, 503, SOCKS5_REPLY_FAILURE, why);
		return;
	}
	if (c->proto == PROTO_HTTP && !c->http_forward) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		relay_queue(&c->relay, 1, ok, sizeof(ok) - 1);
	} else if (c->proto == PROTO_HTTP) {
		relay_queue(&c->relay, 0, c->forward_head, c->forward_len);
	} else if (c->proto == PROTO_SOCKS) {
		uint8_t reply[10];
		socks5_reply(SOCKS5_REPLY_OK, reply);
		relay_queue(&c->relay, 1, reply, sizeof(reply));
	}
	/* Whatever the client sent after its request (a TLS hello, a body)
	 * goes on to the server. */
	size_t extra = c->head.len - c->head_used;
	if (c->http_forward) {
		/* Plain http: this one request and its body, nothing after it.
		 * A pipelined second request would reach this server whatever
		 * host it named, without a decision; the server was told
		 * Connection: close, so the client asks again on a new one. */
		if (extra > c->body_len)
			extra = (size_t)c->body_len;
		relay_limit(&c->relay, 0, c->body_len - extra);
	}
	if (extra)
		relay_queue(&c->relay, 0, c->head.buf + c->head_used, extra);
	strbuf_release(&c->head);
	set_state(c, ST_RELAY);
	ep_update(p, &c->ep[0], RELAY_EVENTS);
	ep_update(p, &c->ep[1], RELAY_EVENTS);
	pump_relay(c);
}

static void try_connect(struct conn *c)
{
	struct proxy *p = c->proxy;
	int last_error = 0;
	while (c->next_addr < c->naddrs) {
		const struct address *a = &c->addrs[c->next_addr++];
		host_address_text((const struct sockaddr *)&a->ss, c->address, sizeof(c->address));
		int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			last_error = errno;
			continue;
		}
		if (connect(fd, (const struct sockaddr *)&a->ss, a->len) == 0 ||
		    errno == EINPROGRESS) {
			c->ep[1].fd = fd;
			c->ep[1].added = false;
			set_state(c, ST_CONNECTING);
			ep_update(p, &c->ep[1], EPOLLOUT);
			return;
		}
		last_error = errno;
		close(fd);
	}
	if (!last_error)
		last_error = ECONNREFUSED;
	_cleanup_free_ char *why = xasprintf("connecting to %s port %u (%s): %s", c->verdict.host,
					     c->port, c->address, strerror(last_error));
	fail(c, 502,
	     last_error == ECONNREFUSED ? SOCKS5_REPLY_REFUSED : SOCKS5_REPLY_HOST_UNREACHABLE,
	     why);
}

static void finish_connect(struct conn *c)
{
	int error = 0;
	socklen_t len = sizeof(error);
	if (getsockopt(c->ep[1].fd, SOL_SOCKET, SO_ERROR, &error, &len) < 0)
		error = errno;
	if (error == 0) {
		ep_update(c->proxy, &c->ep[1], 0);
		start_relay(c);
		return;
	}
	ep_update(c->proxy, &c->ep[1], 0);
	close(c->ep[1].fd);
	c->ep[1].fd = -1;
	if (c->next_addr < c->naddrs) {
		try_connect(c);
		return;
	}
	_cleanup_free_ char *why = xasprintf("connecting to %s port %u (%s): %s", c->verdict.host,
					     c->port, c->address, strerror(error));
	fail(c, 502, error == ECONNREFUSED ? SOCKS5_REPLY_REFUSED : SOCKS5_REPLY_HOST_UNREACHABLE,
	     why);
}

static bool add_address(struct conn *c, const struct sockaddr *sa, socklen_t len)
{
	_cleanup_free_ char *why = net_policy_check_address(c->proxy->policy, &c->verdict, sa);
	if (why) {
		refuse(c, 403, SOCKS5_REPLY_NOT_ALLOWED, why);
		return false;
	}
	if (c->naddrs < MAX_ADDRESSES) {
		struct address *a = &c->addrs[c->naddrs++];
		memcpy(&a->ss, sa, len);
		a->len = len;
		((struct sockaddr_in *)&a->ss)->sin_port = htons((uint16_t)c->port);
	}
	return true;
}

static void on_resolved(struct conn *c, const struct resolver_result *res)
{
	if (res->status) {
		_cleanup_free_ char *why =
		    xasprintf("cannot resolve %s: %s", c->verdict.host, gai_strerror(res->status));
		fail(c, 502, SOCKS5_REPLY_HOST_UNREACHABLE, why);
		return;
	}
	/* Every address must pass: a name that resolves to a public and a
	 * private address is refused rather than half-allowed. */
	for (const struct addrinfo *ai = res->ai; ai; ai = ai->ai_next)
		if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
		    !add_address(c, ai->ai_addr, ai->ai_addrlen))
			return;
	if (!c->naddrs) {
		_cleanup_free_ char *why = xasprintf("%s has no address", c->verdict.host);
		fail(c, 502, SOCKS5_REPLY_HOST_UNREACHABLE, why);
		return;
	}
	try_connect(c);
}

static int ensure_resolver(struct proxy *p)
{
	if (p->resolver)
		return 0;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (resolver_new(&p->resolver, RESOLVER_THREADS, &err) < 0)
		return -1;
	p->resolver_ep = (struct endpoint){.kind = EP_RESOLVER, .fd = resolver_fd(p->resolver)};
	ep_update(p, &p->resolver_ep, EPOLLIN);
	return 0;
}

static void refuse_over_cap(struct conn *c)
{
	_cleanup_free_ char *why =
	    xasprintf("the proxy already has %d connections open, the most one run may have; "
		      "try again once some have closed",
		      MAX_CONNECTIONS);
	refuse(c, 503, SOCKS5_REPLY_FAILURE, why);
}

/* The request is complete: decide, then resolve or connect. */
static void decide(struct conn *c, const char *host, unsigned port)
{
	struct proxy *p = c->proxy;
	c->raw_host = xstrdup(host);
	c->port = port;
	ep_update(p, &c->ep[0], 0);
	if (c->over_cap) {
		refuse_over_cap(c);
		return;
	}
	net_policy_check_host(p->policy, host, &c->verdict);
	if (!c->verdict.allowed) {
		refuse(c, 403, SOCKS5_REPLY_NOT_ALLOWED, c->verdict.reason);
		return;
	}
	_cleanup_free_ char *pin_refusal = net_policy_check_pin_port(&c->verdict, port);
	if (pin_refusal) {
		refuse(c, 403, SOCKS5_REPLY_NOT_ALLOWED, pin_refusal);
		return;
	}
	c->deadline = now_seconds() + CONNECT_DEADLINE_SECONDS;
	struct sockaddr_storage ss;
	socklen_t len;
	const char *literal = c->verdict.pinned ? c->verdict.pinned : c->verdict.host;
	if (host_parse_address(literal, port, &ss, &len)) {
		if (add_address(c, (struct sockaddr *)&ss, len))
			try_connect(c);
		return;
	}
	if (ensure_resolver(p) < 0) {
		fail(c, 502, SOCKS5_REPLY_FAILURE, "the resolver could not be started");
		return;
	}
	set_state(c, ST_RESOLVING);
	resolver_submit(p->resolver, c->id, c->verdict.host);
}

static void decide_localhost(struct conn *c, unsigned port)
{
	c->raw_host = xstrdup("localhost");
	c->verdict.host = xstrdup("localhost");
	c->port = port;
	ep_update(c->proxy, &c->ep[0], 0);
	if (c->over_cap) {
		refuse_over_cap(c);
		return;
	}
	if (!net_policy_localhost_allowed(c->proxy->policy, port)) {
		_cleanup_free_ char *why =
		    xasprintf("localhost port %u is not in network.localhost", port);
		refuse(c, 0, 0, why);
		return;
	}
	c->verdict.allowed = true;
	c->verdict.allowed_by = "network.localhost";
	c->deadline = now_seconds() + CONNECT_DEADLINE_SECONDS;
	/* Servers listen on either loopback address; try both. */
	static const char *const loopback[] = {"127.0.0.1", "::1"};
	for (size_t i = 0; i < ARRAY_SIZE(loopback); i++) {
		struct address *a = &c->addrs[c->naddrs];
		if (host_parse_address(loopback[i], port, &a->ss, &a->len))
			c->naddrs++;
	}
	try_connect(c);
}

/* Looks at what the client sent so far. */
static void process_head(struct conn *c)
{
	const uint8_t *buf = (const uint8_t *)c->head.buf;
	size_t len = c->head.len;
	if (c->proto == PROTO_UNKNOWN) {
		if (buf[0] == SOCKS5_VERSION)
			c->proto = PROTO_SOCKS;
		else if (buf[0] == PROXY_LOCALHOST_PREAMBLE)
			c->proto = PROTO_LOCAL;
		else
			c->proto = PROTO_HTTP;
	}
	if (c->proto == PROTO_LOCAL) {
		if (len < 3)
			return;
		c->head_used = 3;
		decide_localhost(c, (unsigned)buf[1] << 8 | buf[2]);
		return;
	}
	if (c->proto == PROTO_HTTP) {
		struct http_request req;
		struct http_error e = {0};
		int r = http_request_parse(c->head.buf, len, &req, &e);
		if (r == 0)
			return;
		if (r < 0) {
			refuse(c, e.status, 0, e.reason);
			return;
		}
		c->http_forward = req.kind == HTTP_FORWARD;
		c->head_used = req.head_len;
		c->forward_head = steal_ptr(&req.forward_head);
		c->forward_len = req.forward_len;
		c->body_len = req.body_len;
		decide(c, req.host, req.port);
		http_request_release(&req);
		return;
	}
	if (c->state == ST_HEAD) {
		int no_auth = 0;
		int used = socks5_parse_greeting(buf, len, &no_auth);
		if (used == 0)
			return;
		if (used < 0 || !no_auth) {
			static const uint8_t no_method[2] = {SOCKS5_VERSION, 0xff};
			if (used > 0)
				send_now(c, no_method, sizeof(no_method));
			refuse(c, 0, 0, "not a SOCKS5 greeting offering \"no authentication\"");
			return;
		}
		static const uint8_t accept_no_auth[2] = {SOCKS5_VERSION, 0};
		send_now(c, accept_no_auth, sizeof(accept_no_auth));
		memmove(c->head.buf, c->head.buf + used, c->head.len - (size_t)used);
		strbuf_setlen(&c->head, c->head.len - (size_t)used);
		c->state = ST_SOCKS_REQUEST;
		if (!c->head.len)
			return;
		buf = (const uint8_t *)c->head.buf;
		len = c->head.len;
	}
	struct socks5_request req;
	int code = 0;
	int used = socks5_parse_request(buf, len, &req, &code);
	if (used == 0)
		return;
	if (used < 0) {
		refuse(c, 0, code, "malformed or unsupported SOCKS5 request (only CONNECT)");
		return;
	}
	c->head_used = (size_t)used;
	decide(c, req.host, req.port);
}

/* Only a connected TCP socket may stand in for the unix connection: not a
 * listener, not a file, not a socket of another kind. */
static bool is_client_socket(int fd)
{
	int type = 0, domain = 0, listening = 1;
	socklen_t len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
		return false;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    (domain != AF_INET && domain != AF_INET6))
		return false;
	len = sizeof(int);
	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && !listening;
}

/* The first message on a unix connection may carry the client's socket:
 * from then on the proxy reads and writes the client directly. */
static ssize_t receive_first(struct conn *c, char *buf, size_t size)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} control;
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr msg = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = control.buf,
	    .msg_controllen = sizeof(control.buf),
	};
	ssize_t n = recvmsg(c->ep[0].fd, &msg, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n;
	int passed = -1;
	bool bad = (msg.msg_flags & MSG_CTRUNC) != 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (passed < 0 && !bad)
				passed = fd;
			else
				close(fd);
		}
	}
	if (passed < 0 && !bad)
		return n; /* a client speaking on the unix socket itself */
	if (bad || buf[0] != PROXY_HANDOFF || !is_client_socket(passed) ||
	    fcntl(passed, F_SETFL, O_NONBLOCK) < 0) {
		if (passed >= 0)
			close(passed);
		errno = EPROTO;
		return -1;
	}
	ep_update(c->proxy, &c->ep[0], 0);
	close(c->ep[0].fd);
	c->ep[0].fd = passed;
	c->handed = true;
	ep_update(c->proxy, &c->ep[0], EPOLLIN);
	memmove(buf, buf + 1, (size_t)n - 1);
	if (n == 1) {
		errno = EAGAIN;
		return -1;
	}
	return n - 1;
}

static void read_head(struct conn *c)
{
	char buf[4096];
	size_t room = HTTP_HEAD_MAX + 1 - c->head.len;
	size_t want = room < sizeof(buf) ? room : sizeof(buf);
	bool first = !c->handed && !c->head.len;
	ssize_t n = first ? receive_first(c, buf, want) : recv(c->ep[0].fd, buf, want, 0);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(c);
		return;
	}
	if (n == 0) {
		/* Gone before finishing its request: nothing was decided. */
		conn_close(c);
		return;
	}
	strbuf_add(&c->head, buf, (size_t)n);
	process_head(c);
}

static void on_conn_event(struct endpoint *ep, uint32_t events)
{
	struct conn *c = ep->conn;
	if (c->dead)
		return;
	switch (c->state) {
	case ST_HEAD:
	case ST_SOCKS_REQUEST:
		if (ep->side == 0)
			read_head(c);
		return;
	case ST_RESOLVING:
		return;
	case ST_CONNECTING:
		if (ep->side == 1)
			finish_connect(c);
		return;
	case ST_CLOSED:
		return;
	case ST_LINGER: {
		char sink[4096];
		ssize_t n = 1;
		for (int i = 0; i < 64 && n > 0; i++)
			n = recv(c->ep[0].fd, sink, sizeof(sink), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	case ST_RELAY:
		relay_ready(&c->relay, ep->side, events);
		pump_relay(c);
		return;
	}
}

static void on_accept(struct proxy *p)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(p->listener.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE) && p->reserve_fd >= 0) {
				/* Out of descriptors: take the connection with the
				 * spare one and close it, so that the client sees
				 * an error instead of waiting in the backlog and we
				 * do not spin on a listener that stays readable. */
				close(p->reserve_fd);
				fd = accept(p->listener.fd, NULL, NULL);
				if (fd >= 0)
					close(fd);
				p->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
				continue;
			}
			return;
		}
		bool over_cap = p->open >= MAX_CONNECTIONS;
		if (over_cap && p->over_cap >= REFUSE_HEADROOM) {
			close(fd);
			continue;
		}
		struct conn *c = xcalloc(1, sizeof(*c));
		c->proxy = p;
		c->id = ++p->next_id;
		c->over_cap = over_cap;
		p->open++;
		p->over_cap += over_cap;
		c->state = ST_CLOSED;
		set_state(c, ST_HEAD);
		c->deadline = now_seconds() + HEAD_TIMEOUT_SECONDS;
		clock_gettime(CLOCK_MONOTONIC, &c->start);
		c->ep[0] = (struct endpoint){.kind = EP_CONN, .fd = fd, .conn = c, .side = 0};
		c->ep[1] = (struct endpoint){.kind = EP_CONN, .fd = -1, .conn = c, .side = 1};
		relay_init(&c->relay, -1, -1);
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		ep_update(p, &c->ep[0], EPOLLIN);
	}
}

static struct conn *find_conn(struct proxy *p, uint64_t id)
{
	for (struct conn *c = p->conns; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void on_resolver(struct proxy *p)
{
	struct resolver_result res;
	while (resolver_take(p->resolver, &res)) {
		struct conn *c = find_conn(p, res.cookie);
		if (c && c->state == ST_RESOLVING)
			on_resolved(c, &res);
		if (res.ai)
			freeaddrinfo(res.ai);
	}
}

static void on_timer(struct proxy *p)
{
	uint64_t ticks;
	if (read(p->timer.fd, &ticks, sizeof(ticks)) < 0) {
		/* EAGAIN: nothing to read. */
	}
	time_t now = now_seconds();
	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (c->state == ST_LINGER && now >= c->deadline) {
			conn_close(c);
			continue;
		}
		if ((c->state == ST_HEAD || c->state == ST_SOCKS_REQUEST) && now >= c->deadline) {
			_cleanup_free_ char *why =
			    xasprintf("no complete request within %d seconds of connecting",
				      HEAD_TIMEOUT_SECONDS);
			refuse(c, 408, SOCKS5_REPLY_FAILURE, why);
			continue;
		}
		if ((c->state == ST_RESOLVING || c->state == ST_CONNECTING) && now >= c->deadline) {
			_cleanup_free_ char *why =
			    xasprintf("%s %s port %u took longer than %d seconds",
				      c->state == ST_RESOLVING ? "resolving" : "connecting to",
				      c->verdict.host, c->port, CONNECT_DEADLINE_SECONDS);
			fail(c, 504, SOCKS5_REPLY_TTL_EXPIRED, why);
		}
	}
}

void proxy_dispatch(struct proxy *p)
{
	struct epoll_event events[64];
	int n = epoll_wait(p->epfd, events, ARRAY_SIZE(events), 0);
	for (int i = 0; i < n; i++) {
		struct endpoint *ep = events[i].data.ptr;
		switch (ep->kind) {
		case EP_LISTENER:
			on_accept(p);
			break;
		case EP_RESOLVER:
			on_resolver(p);
			break;
		case EP_TIMER:
			on_timer(p);
			break;
		case EP_CONN:
			on_conn_event(ep, events[i].events);
			break;
		}
	}
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		conn_free(c);
	}
}

int proxy_fd(const struct proxy *p)
{
	return p->epfd;
}

int proxy_start(struct proxy **out, const struct proxy_options *opt, struct error *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(opt->socket_path) >= sizeof(addr.sun_path))
		return error_set(err, ERROR_SETUP,
				 "the proxy socket path %s is longer than a unix socket allows",
				 opt->socket_path);
	strcpy(addr.sun_path, opt->socket_path);

	struct proxy *p = xcalloc(1, sizeof(*p));
	*p = (struct proxy){
	    .epfd = -1,
	    .listener = {.kind = EP_LISTENER, .fd = -1},
	    .resolver_ep = {.kind = EP_RESOLVER, .fd = -1},
	    .timer = {.kind = EP_TIMER, .fd = -1},
	    .policy = opt->policy,
	    .on_decision = opt->on_decision,
	    .ctx = opt->ctx,
	    .reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC),
	};
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->listener.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	p->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->epfd < 0 || p->listener.fd < 0 || p->timer.fd < 0) {
		int e = errno;
		proxy_free(p);
		return error_errno(err, ERROR_SETUP, e, "starting the network proxy");
	}
	if (bind(p->listener.fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(p->listener.fd, SOMAXCONN) < 0) {
		int e = errno;
		proxy_free(p);
		return error_errno(err, ERROR_SETUP, e, "listening on %s", opt->socket_path);
	}
	p->socket_path = xstrdup(opt->socket_path);
	ep_update(p, &p->listener, EPOLLIN);
	ep_update(p, &p->timer, EPOLLIN);
	*out = p;
	return 0;
}

void proxy_free(struct proxy *p)
{
	if (!p)
		return;
	p->closing = true;
	while (p->conns)
		conn_close(p->conns);
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		conn_free(c);
	}
	if (p->socket_path)
		unlink(p->socket_path);
	free(p->socket_path);
	if (p->listener.fd >= 0)
		close(p->listener.fd);
	if (p->timer.fd >= 0)
		close(p->timer.fd);
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->reserve_fd >= 0)
		close(p->reserve_fd);
	resolver_free(p->resolver);
	free(p);
}
