/* The daemon's loop, its connections and the JSON-RPC dispatch (server.h).
 * Each connection is read a line at a time into a bounded buffer; its
 * answers wait in a queue that, when long, stops both the reading of its
 * requests and the processes streaming to it, so that a client that does
 * not read holds back only itself. */
#include "serve/server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/dirs.h"
#include "base/xalloc.h"
#include "sandbox/rundir.h"
#include "serve/internal.h"
#include "serve/mcp.h"

#define READ_CHUNK (64u * 1024)

uint64_t serve_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct json_object *serve_time_json(time_t t)
{
	struct tm tm;
	char buf[32];
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_object_new_string(buf);
}

char *serve_default_socket(char *const *envp)
{
	_cleanup_free_ char *dir = NULL;
	const char *xdg = NULL;
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, "XDG_RUNTIME_DIR=", 16))
			xdg = *e + 16;
	dir = rundir_base(xdg);
	return xasprintf("%s/api.sock", dir);
}

int serve_watch(struct server *srv, struct watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};
	return epoll_ctl(srv->epfd, EPOLL_CTL_ADD, w->fd, &ev);
}

int serve_rewatch(struct server *srv, struct watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};
	return epoll_ctl(srv->epfd, EPOLL_CTL_MOD, w->fd, &ev);
}

void serve_unwatch(struct server *srv, struct watch *w)
{
	if (w->fd >= 0)
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, w->fd, NULL);
}

void serve_close_watch(struct server *srv, struct watch *w)
{
	if (w->fd < 0)
		return;
	serve_unwatch(srv, w);
	close(w->fd);
	w->fd = -1;
}

/* --- Answers and notifications --- */

struct conn *serve_conn(struct server *srv, uint64_t id)
{
	for (struct conn *c = srv->conns; c && id; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void conn_flush(struct server *srv, struct conn *c);

void serve_send(struct server *srv, struct conn *c, char *line, size_t len)
{
	if (c->out.fd < 0) {
		free(line);
		return;
	}
	struct outbuf *b = xmalloc(sizeof(*b));
	*b = (struct outbuf){.data = line, .len = len};
	if (c->tail)
		c->tail->next = b;
	else
		c->head = b;
	c->tail = b;
	c->out_bytes += len;
	conn_flush(srv, c);
}

void serve_notify(struct server *srv, uint64_t conn, const char *method, struct json_object *params)
{
	struct conn *c = serve_conn(srv, conn);
	if (!c) {
		json_object_put(params);
		return;
	}
	size_t len;
	char *line = rpc_notification_line(method, params, &len);
	serve_send(srv, c, line, len);
}

struct pending *serve_pending(struct conn *c, struct json_object *id)
{
	struct pending *p = xcalloc(1, sizeof(*p));
	p->conn = c->id;
	p->id = json_object_get(id);
	c->pending++;
	return p;
}

void serve_pending_free(struct pending *p)
{
	if (!p)
		return;
	json_object_put(p->id);
	free(p);
}

static void conn_maybe_close(struct server *srv, struct conn *c);

void serve_answer(struct server *srv, struct pending *p, struct json_object *result,
		  const struct error *err)
{
	serve_answer_data(srv, p, result, err, NULL);
}

void serve_answer_data(struct server *srv, struct pending *p, struct json_object *result,
		       const struct error *err, struct json_object *data)
{
	struct conn *c = serve_conn(srv, p->conn);
	if (!c) {
		json_object_put(result);
		json_object_put(data);
		serve_pending_free(p);
		return;
	}
	size_t len;
	char *line = err ? rpc_error_line_with(p->id, rpc_code_for(err->kind), err, data, &len)
			 : rpc_result_line(p->id, result, &len);
	if (!err)
		json_object_put(data);
	if (err)
		json_object_put(result);
	c->pending--;
	serve_pending_free(p);
	serve_send(srv, c, line, len);
	conn_maybe_close(srv, c);
}

/* --- Connections --- */

static void conn_free(struct server *srv, struct conn *c)
{
	if (c->dead)
		return;
	for (struct conn **pp = &srv->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	srv->conns_len--;
	c->dead = true;
	if (c->out.fd != c->in.fd)
		serve_close_watch(srv, &c->out);
	else
		c->out.fd = -1;
	serve_close_watch(srv, &c->in);
	for (struct outbuf *b = c->head, *n; b; b = n) {
		n = b->next;
		free(b->data);
		free(b);
	}
	strbuf_release(&c->inbuf);
	uint64_t id = c->id;
	c->next = srv->dead_conns;
	srv->dead_conns = c;
	/* After it is gone, so that nothing is queued for it. */
	process_conn_closed(srv, id);
	if (srv->stdio)
		srv->stopping = true;
}

static void conn_maybe_close(struct server *srv, struct conn *c)
{
	if (c->eof && !c->pending && !c->head && !c->lines_waiting)
		conn_free(srv, c);
}

static void conn_update_out(struct server *srv, struct conn *c)
{
	/* Lines waiting are taken when the socket says it is writable. */
	uint32_t want = c->head || c->lines_waiting ? EPOLLOUT : 0;
	if (c->out.fd == c->in.fd)
		serve_rewatch(srv, &c->in, (c->in_paused || c->eof ? 0 : EPOLLIN) | want);
	else if (c->out.fd >= 0)
		serve_rewatch(srv, &c->out, want);
}

static void conn_flush(struct server *srv, struct conn *c)
{
	while (c->head) {
		struct outbuf *b = c->head;
		ssize_t n = write(c->out.fd, b->data + b->off, b->len - b->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			/* The client is gone: drop what it will never read. */
			for (struct outbuf *x = c->head, *nx; x; x = nx) {
				nx = x->next;
				free(x->data);
				free(x);
			}
			c->head = c->tail = NULL;
			c->out_bytes = 0;
			c->eof = true;
			/* Nor are its requests still buffered answered. */
			c->inbuf.len = 0;
			c->lines_waiting = false;
			break;
		}
		b->off += (size_t)n;
		c->out_bytes -= (size_t)n;
		if (b->off == b->len) {
			c->head = b->next;
			if (!c->head)
				c->tail = NULL;
			free(b->data);
			free(b);
		}
	}
	if (c->out_bytes < CONN_OUT_LOW)
		serve_conn_drained(srv, c);
	conn_update_out(srv, c);
}

void serve_conn_drained(struct server *srv, struct conn *c)
{
	if (c->in_paused) {
		c->in_paused = false;
		conn_update_out(srv, c);
	}
	process_resume_for(srv, c->id);
}

static const char *const owner_chars =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-";

bool serve_name_ok(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= 64 && s[0] != '.' && s[0] != '-' && strspn(s, owner_chars) == n;
}

static int method_initialize(struct server *srv, struct conn *c, struct json_object *params,
			     struct json_object **result, struct error *err)
{
	if (c->initialized)
		return error_set(err, ERROR_USAGE, "initialize was called already");
	const char *version = NULL, *owner = NULL;
	if (rpc_param_string(params, "protocolVersion", false, &version, err) < 0 ||
	    rpc_param_string(params, "owner", false, &owner, err) < 0)
		return -1;
	if (version && strcmp(version, "1") != 0)
		return error_set(err, ERROR_USAGE, "protocolVersion \"1\" is the one spoken here");
	if (owner) {
		if (!c->trusted)
			return error_set(err, ERROR_DENIED, "only root or uid %u may name an owner",
					 (unsigned)srv->uid);
		if (!serve_name_ok(owner) || !strncmp(owner, "uid-", 4))
			return error_set(err, ERROR_USAGE,
					 "owner must be 1 to 64 letters, digits, '.', '_', '@' "
					 "or '-', not starting with '.', '-' or \"uid-\"");
		c->owner = xstrdup(owner);
	} else {
		c->owner = xasprintf("uid-%u", (unsigned)c->uid);
	}
	c->initialized = true;
	struct json_object *r = json_object_new_object();
	struct json_object *info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string("agent-sandbox"));
	json_object_object_add(info, "version", json_object_new_string(AGENT_SANDBOX_VERSION));
	json_object_object_add(r, "serverInfo", info);
	json_object_object_add(r, "protocolVersion", json_object_new_string("1"));
	struct json_object *caps = json_object_new_object();
	struct json_object *backends = json_object_new_array();
	json_object_array_add(backends, json_object_new_string("bwrap"));
	json_object_object_add(caps, "backends", backends);
	struct json_object *agents = json_object_new_array();
	json_object_array_add(agents, json_object_new_string("claude"));
	json_object_array_add(agents, json_object_new_string("codex"));
	json_object_object_add(caps, "agents", agents);
	json_object_object_add(caps, "pty", json_object_new_boolean(true));
	json_object_object_add(caps, "attach", json_object_new_boolean(true));
	json_object_object_add(r, "capabilities", caps);
	json_object_object_add(r, "owner", json_object_new_string(c->owner));
	*result = r;
	return 0;
}

static const struct {
	const char *name;
	serve_method *fn;
} methods[] = {
    {"session/create", session_create},
    {"session/get", session_get},
    {"session/list", session_list},
    {"session/close", session_close},
    {"session/renew", session_renew},
    {"workspace/gc", workspace_gc},
    {"process/start", process_start},
    {"process/exec", process_exec},
    {"process/write", process_write},
    {"process/signal", process_signal},
    {"process/resize", process_resize},
    {"process/list", process_list},
    {"process/attach", process_attach},
    /* fs_method.c */
    {"fs/read", fs_read_method},
    {"fs/write", fs_write_method},
    {"fs/list", fs_list_method},
    {"fs/stat", fs_stat_method},
    {"fs/remove", fs_remove_method},
    {"fs/mkdir", fs_mkdir_method},
    /* agent.c */
    {"agent/run", agent_run_method},
    {"agent/interrupt", agent_interrupt_method},
    {"skills/validate", skills_validate_method},
};

static void send_error(struct server *srv, struct conn *c, struct json_object *id, int code,
		       const struct error *err)
{
	size_t len;
	char *line = rpc_error_line(id, code, err, &len);
	serve_send(srv, c, line, len);
}

static void handle_line(struct server *srv, struct conn *c, const char *line, size_t len)
{
	struct rpc_request req;
	int code;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (rpc_decode(line, len, &req, &code, &err) < 0) {
		send_error(srv, c, req.id, code, &err);
		rpc_request_release(&req);
		return;
	}
	if (!req.has_id) {
		/* A notification: nothing of the client's is one yet. */
		rpc_request_release(&req);
		return;
	}
	struct json_object *result = NULL;
	struct pending *pending = NULL;
	int r = -1;
	if (!strcmp(req.method, "initialize")) {
		r = method_initialize(srv, c, req.params, &result, &err);
	} else if (!c->initialized) {
		error_set(&err, ERROR_USAGE, "call initialize first");
		send_error(srv, c, req.id, RPC_INVALID_REQUEST, &err);
		rpc_request_release(&req);
		return;
	} else if (c->pending >= CONN_PENDING_MAX) {
		error_set(&err, ERROR_BUSY, "%d requests of this connection wait for their answer",
			  CONN_PENDING_MAX);
		error_hint(&err, "retry when some have been answered");
		r = -1;
	} else {
		serve_method *fn = NULL;
		for (size_t i = 0; i < ARRAY_SIZE(methods) && !fn; i++)
			if (!strcmp(methods[i].name, req.method))
				fn = methods[i].fn;
		if (!fn) {
			error_set(&err, ERROR_USAGE, "no method %s", req.method);
			send_error(srv, c, req.id, RPC_METHOD_NOT_FOUND, &err);
			rpc_request_release(&req);
			return;
		}
		/* The handler may answer later: the pending answer it takes
		 * holds the id. */
		pending = serve_pending(c, req.id);
		c->pending--;
		r = fn(srv, c, req.params, &pending, &result, &err);
		if (r == 1) {
			c->pending++;
			pending = NULL;
		}
	}
	serve_pending_free(pending);
	if (r == 0) {
		size_t len2;
		char *out = rpc_result_line(req.id, result, &len2);
		serve_send(srv, c, out, len2);
	} else if (r < 0) {
		json_object_put(result);
		send_error(srv, c, req.id, rpc_code_for(err.kind), &err);
	}
	rpc_request_release(&req);
}

/* Handles the complete lines buffered from scan on, until the answers
 * queued for the client pass CONN_OUT_HIGH: then the rest waits in inbuf
 * (lines_waiting) until they drain. Stopping only the reading would not
 * do: one read holds hundreds of requests, each of which may answer
 * megabytes. */
static void conn_take_lines(struct server *srv, struct conn *c, size_t scan)
{
	size_t start = 0;
	c->lines_waiting = false;
	for (;;) {
		if (c->out_bytes > CONN_OUT_HIGH)
			c->in_paused = true;
		char *nl = memchr(c->inbuf.buf + scan, '\n', c->inbuf.len - scan);
		if (!nl)
			break;
		if (c->in_paused) {
			c->lines_waiting = true;
			break;
		}
		size_t end = (size_t)(nl - c->inbuf.buf);
		if (c->skipping)
			c->skipping = false;
		else if (end > start)
			handle_line(srv, c, c->inbuf.buf + start, end - start);
		start = scan = end + 1;
	}
	/* Keep the rest, unless one line is already too long: then say so
	 * once and drop it up to its end. */
	size_t rest = c->inbuf.len - start;
	if (rest > SERVE_LINE_MAX && !c->lines_waiting) {
		if (!c->skipping) {
			_cleanup_error_ struct error err = ERROR_INIT;
			error_set(&err, ERROR_LIMIT, "a line is longer than %u bytes",
				  SERVE_LINE_MAX);
			send_error(srv, c, NULL, RPC_INVALID_REQUEST, &err);
		}
		c->skipping = true;
		rest = 0;
		start = c->inbuf.len;
	}
	memmove(c->inbuf.buf, c->inbuf.buf + start, rest);
	c->inbuf.len = rest;
	if (c->inbuf.alloc > 4 * READ_CHUNK && rest < READ_CHUNK) {
		/* A long line has passed: give its memory back. */
		struct strbuf small = STRBUF_INIT;
		strbuf_add(&small, c->inbuf.buf, rest);
		strbuf_release(&c->inbuf);
		c->inbuf = small;
	}
}

static void conn_read(struct server *srv, struct conn *c)
{
	for (int rounds = 0; rounds < 16 && !c->eof && !c->in_paused && !c->lines_waiting;
	     rounds++) {
		strbuf_grow(&c->inbuf, READ_CHUNK);
		ssize_t n = read(c->in.fd, c->inbuf.buf + c->inbuf.len, READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			c->eof = true;
			break;
		}
		size_t scan = c->inbuf.len;
		c->inbuf.len += (size_t)n;
		c->inbuf.buf[c->inbuf.len] = '\0';
		conn_take_lines(srv, c, scan);
	}
}

static void conn_in_ready(struct server *srv, struct watch *w, uint32_t events);

static void conn_ready(struct server *srv, struct conn *c, struct watch *w, uint32_t events)
{
	if (c->dead)
		return;
	if ((events & EPOLLOUT) || (w == &c->out))
		conn_flush(srv, c);
	if (c->lines_waiting && !c->in_paused)
		conn_take_lines(srv, c, 0);
	if (w == &c->in && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->in_paused)
		conn_read(srv, c);
	if (c->eof) {
		/* Nothing more is read; answers still owed are sent. */
		if (c->in.fd >= 0 && c->in.fd == c->out.fd && !c->head && !c->pending &&
		    !c->lines_waiting) {
			conn_free(srv, c);
			return;
		}
		if (c->in.fd != c->out.fd)
			serve_close_watch(srv, &c->in);
		else
			conn_update_out(srv, c);
		/* Its processes that do not outlive it end now. */
		process_conn_closed(srv, c->id);
		conn_maybe_close(srv, c);
	} else if (c->in_paused) {
		conn_update_out(srv, c);
	}
}

static void conn_in_ready(struct server *srv, struct watch *w, uint32_t events)
{
	conn_ready(srv, container_of(w, struct conn, in), w, events);
}

static void conn_out_ready(struct server *srv, struct watch *w, uint32_t events)
{
	conn_ready(srv, container_of(w, struct conn, out), w, events);
}

static void reap(struct server *srv)
{
	mcp_reap(srv);
	while (srv->dead_conns) {
		struct conn *c = srv->dead_conns;
		srv->dead_conns = c->next;
		free(c->owner);
		free(c);
	}
	while (srv->dead_processes) {
		struct process *p = srv->dead_processes;
		srv->dead_processes = p->next;
		process_free(p);
	}
	while (srv->dead_sessions) {
		struct session *s = srv->dead_sessions;
		srv->dead_sessions = s->next;
		session_free(s);
	}
}

static bool uid_allowed(const struct server *srv, uid_t uid)
{
	if (uid == srv->uid)
		return true;
	for (size_t i = 0; i < srv->o->allow_uids_len; i++)
		if (srv->o->allow_uids[i] == uid)
			return true;
	return false;
}

static struct conn *conn_new(struct server *srv, int in, int out, uid_t uid, pid_t pid)
{
	struct conn *c = xcalloc(1, sizeof(*c));
	c->id = ++srv->next_conn;
	c->in = (struct watch){.ready = conn_in_ready, .fd = in};
	c->out = (struct watch){.ready = conn_out_ready, .fd = out};
	c->uid = uid;
	c->pid = pid;
	c->trusted = uid == 0 || uid == srv->uid;
	c->inbuf = (struct strbuf)STRBUF_INIT;
	c->next = srv->conns;
	srv->conns = c;
	srv->conns_len++;
	return c;
}

/* Tells a client it is not taken, and closes it: the socket is new and
 * takes one line, so the client does not wait. */
static void refuse_busy(int fd, const char *why)
{
	_cleanup_error_ struct error err = ERROR_INIT;
	error_set(&err, ERROR_BUSY, "%s", why);
	size_t n;
	_cleanup_free_ char *line = rpc_error_line(NULL, RPC_OVERLOADED, &err, &n);
	(void)!write(fd, line, n);
	close(fd);
}

/* accept4 failed for want of descriptors: turns one waiting client away
 * through the spare, or stops listening until the next tick. */
static void accept_exhausted(struct server *srv)
{
	if (srv->spare_fd >= 0) {
		close(srv->spare_fd);
		int fd = accept4(srv->listen.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0)
			refuse_busy(fd, "the daemon has no file descriptors left");
		srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (srv->spare_fd >= 0)
			return;
	}
	if (serve_rewatch(srv, &srv->listen, 0) == 0)
		srv->accept_paused = true;
}

static void accept_ready(struct server *srv, struct watch *w, uint32_t events)
{
	for (int i = 0; i < 64; i++) {
		int fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			accept_exhausted(srv);
			continue;
		}
		if (fd < 0)
			return;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    !uid_allowed(srv, cred.uid) || srv->stopping) {
			close(fd);
			continue;
		}
		if (srv->conns_len >= SERVE_CONNS_MAX) {
			_cleanup_free_ char *why =
			    xasprintf("%d clients are connected", SERVE_CONNS_MAX);
			refuse_busy(fd, why);
			continue;
		}
		struct conn *c = conn_new(srv, fd, fd, cred.uid, cred.pid);
		if (serve_watch(srv, &c->in, EPOLLIN) < 0)
			conn_free(srv, c);
	}
}

static void signal_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct signalfd_siginfo si;
	while (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		srv->stopping = true;
}

static void tick_ready(struct server *srv, struct watch *w, uint32_t events)
{
	uint64_t n;
	(void)!read(w->fd, &n, sizeof(n));
	if (srv->accept_paused && srv->listen.fd >= 0 &&
	    serve_rewatch(srv, &srv->listen, EPOLLIN) == 0)
		srv->accept_paused = false;
	if (srv->spare_fd < 0)
		srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	sessions_tick(srv);
}

/* --- Listening --- */

static int listen_on(struct server *srv, const char *path, struct error *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path))
		return error_set(err, ERROR_USAGE, "socket path too long: %s", path);
	strcpy(addr.sun_path, path);
	_cleanup_free_ char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	struct stat st;
	if (lstat(dir[0] ? dir : "/", &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != srv->uid ||
	    (st.st_mode & 022))
		return error_set(err, ERROR_SETUP,
				 "the socket's directory %s must be ours, a directory, and not "
				 "writable by others",
				 dir);
	/* One daemon per socket: a live one answers, a stale file does not. */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return error_errno(err, ERROR_SETUP, errno, "socket");
	int cr = connect(probe, (struct sockaddr *)&addr, sizeof(addr));
	int ce = errno;
	close(probe);
	if (cr == 0)
		return error_set(err, ERROR_SETUP, "a daemon already listens on %s", path);
	if (ce == ECONNREFUSED) {
		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == srv->uid)
			unlink(path);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "socket");
	bool shared = srv->o->allow_uids_len > 0;
	mode_t old = umask(shared ? 0111 : 0177);
	int r = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	int e = errno;
	umask(old);
	if (r < 0) {
		close(fd);
		return error_errno(err, ERROR_SETUP, e, "binding %s", path);
	}
	if (listen(fd, 128) < 0) {
		e = errno;
		close(fd);
		return error_errno(err, ERROR_SETUP, e, "listening on %s", path);
	}
	srv->listen.fd = fd;
	return 0;
}

static int prepare_listening(struct server *srv, char **path_out, struct error *err)
{
	const struct serve_options *o = srv->o;
	if (o->listen_fd >= 0) {
		int fl = fcntl(o->listen_fd, F_GETFL);
		if (fl < 0 || fcntl(o->listen_fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
		    fcntl(o->listen_fd, F_SETFD, FD_CLOEXEC) < 0)
			return error_errno(err, ERROR_SETUP, errno, "the socket handed over");
		srv->listen.fd = o->listen_fd;
		return 0;
	}
	if (!o->socket_path) {
		if (o->allow_uids_len)
			return error_set(err, ERROR_USAGE,
					 "--allow-uid needs --socket PATH in a directory the other "
					 "users can reach (the runtime directory stays private)");
		const char *xdg = NULL;
		for (char *const *e = o->envp; e && *e; e++)
			if (!strncmp(*e, "XDG_RUNTIME_DIR=", 16))
				xdg = *e + 16;
		_cleanup_free_ char *dir = NULL;
		if (rundir_prepare(xdg, &dir, err) < 0)
			return -1;
		*path_out = xasprintf("%s/api.sock", dir);
	} else {
		*path_out = xstrdup(o->socket_path);
	}
	return listen_on(srv, *path_out, err);
}

static int server_init(struct server *srv, const struct serve_options *o, struct error *err)
{
	*srv = (struct server){.o = o, .epfd = -1, .spare_fd = -1, .uid = geteuid()};
	srv->listen = (struct watch){.ready = accept_ready, .fd = -1};
	srv->signals = (struct watch){.ready = signal_ready, .fd = -1};
	srv->tick = (struct watch){.ready = tick_ready, .fd = -1};
	srv->audit = (struct audit){.fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
	srv->stdio = o->stdio;
	/* Each process takes five descriptors and each client one: as many
	 * as the hard limit allows, and one in reserve. */
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &lim);
	}
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *home = dirs_home(o->envp);
	if (!home)
		return error_set(err, ERROR_SETUP, "no home directory: set HOME");
	srv->data_dir = dirs_data(o->envp, home);
	_cleanup_free_ char *state = dirs_state(o->envp, home);
	if (!srv->data_dir || !state)
		return error_set(err, ERROR_SETUP, "no data or state directory: set HOME");
	/* The audit log, as every run has it. */
	if (audit_open(&srv->audit, state, err) < 0)
		return -1;
	srv->state_dir = xasprintf("%s/serve", state);
	if (state_dir_prepare(srv->state_dir, err) < 0)
		return error_prefix(err, "the daemon's state");
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0)
		return error_errno(err, ERROR_SETUP, errno, "epoll");
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return error_errno(err, ERROR_SETUP, errno, "blocking signals");
	signal(SIGPIPE, SIG_IGN);
	srv->signals.fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	srv->tick.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = {.it_interval = {1, 0}, .it_value = {1, 0}};
	if (srv->signals.fd < 0 || srv->tick.fd < 0 ||
	    timerfd_settime(srv->tick.fd, 0, &its, NULL) < 0 ||
	    serve_watch(srv, &srv->signals, EPOLLIN) < 0 ||
	    serve_watch(srv, &srv->tick, EPOLLIN) < 0)
		return error_errno(err, ERROR_SETUP, errno, "setting up the loop");
	return 0;
}

static void server_release(struct server *srv)
{
	while (srv->conns)
		conn_free(srv, srv->conns);
	while (srv->sessions) {
		struct session *s = srv->sessions;
		srv->sessions = s->next;
		s->next = srv->dead_sessions;
		srv->dead_sessions = s;
	}
	reap(srv);
	serve_close_watch(srv, &srv->listen);
	serve_close_watch(srv, &srv->signals);
	serve_close_watch(srv, &srv->tick);
	if (srv->epfd >= 0)
		close(srv->epfd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	audit_close(&srv->audit);
	free(srv->state_dir);
	free(srv->data_dir);
}

int serve_run(const struct serve_options *o, struct error *err)
{
	struct server srv;
	int r = server_init(&srv, o, err);
	_cleanup_free_ char *path = NULL;
	if (r == 0 && o->stdio) {
		int fl0 = fcntl(STDIN_FILENO, F_GETFL), fl1 = fcntl(STDOUT_FILENO, F_GETFL);
		if (fl0 < 0 || fl1 < 0 || fcntl(STDIN_FILENO, F_SETFL, fl0 | O_NONBLOCK) < 0 ||
		    fcntl(STDOUT_FILENO, F_SETFL, fl1 | O_NONBLOCK) < 0) {
			r = error_errno(err, ERROR_SETUP, errno, "stdin and stdout");
		} else {
			struct conn *c =
			    conn_new(&srv, STDIN_FILENO, STDOUT_FILENO, srv.uid, getppid());
			if (serve_watch(&srv, &c->in, EPOLLIN) < 0 ||
			    serve_watch(&srv, &c->out, 0) < 0)
				r = error_errno(err, ERROR_SETUP, errno,
						"watching stdin and stdout");
		}
	} else if (r == 0) {
		r = prepare_listening(&srv, &path, err);
		if (r == 0 && serve_watch(&srv, &srv.listen, EPOLLIN) < 0)
			r = error_errno(err, ERROR_SETUP, errno, "epoll");
	}
	if (r < 0) {
		server_release(&srv);
		return -1;
	}
	audit_serve(&srv.audit, "", "serve_start", "", NULL);
	uint64_t stop_deadline = 0;
	for (;;) {
		if (srv.stopping) {
			if (!stop_deadline) {
				stop_deadline = serve_now_ms() + 15000;
				serve_close_watch(&srv, &srv.listen);
				sessions_shutdown(&srv);
			}
			if ((!srv.sessions_live && !srv.removals) || serve_now_ms() > stop_deadline)
				break;
		}
		struct epoll_event ev[64];
		int n = epoll_wait(srv.epfd, ev, 64, srv.stopping ? 200 : -1);
		if (n < 0 && errno != EINTR) {
			r = error_errno(err, ERROR_SETUP, errno, "epoll_wait");
			break;
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = ev[i].data.ptr;
			/* Closed by an earlier event of this round. */
			if (w->fd >= 0)
				w->ready(&srv, w, ev[i].events);
		}
		reap(&srv);
	}
	audit_serve(&srv.audit, "", "serve_end", "", NULL);
	if (path)
		unlink(path);
	server_release(&srv);
	return r;
}
