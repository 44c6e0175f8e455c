/* The executor API's client: frames JSON-RPC messages by lines over one
 * connection, matches responses to calls by id and queues everything else
 * in arrival order. Whatever the daemon sends is checked before use: a line
 * over SERVE_LINE_MAX or one that is not a JSON object breaks the
 * connection instead of growing memory or being guessed at. */
#include "serve/client.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/xalloc.h"
#include "policy/env.h"
#include "sandbox/rundir.h"

DEFINE_CLEANUP_PTR_FUNC(struct json_object *, json_object_put)
DEFINE_CLEANUP_PTR_FUNC(struct json_tokener *, json_tokener_free)

/* How much one read() asks for. */
#define CLIENT_READ_CHUNK 65536

struct agent_sandbox_client {
	int in_fd, out_fd;
	bool out_is_socket; /* send() with MSG_NOSIGNAL works on it */
	/* Bytes read and not yet framed: buf[start..len). */
	struct strbuf in;
	size_t start;
	/* Where the search for '\n' resumes, so that a long line arriving
	 * in many reads is scanned once. */
	size_t scanned;
	bool eof;
	/* Set by an error that leaves the stream out of step (a line too
	 * long, malformed JSON, a failed write): every later call fails. */
	char *broken;
	int64_t next_id;
	/* Messages that arrived while waiting for something else, oldest
	 * first: queue[head..len). */
	struct json_object **queue;
	size_t head, len, alloc;
};

char *agent_sandbox_client_default_socket(char *const *envp)
{
	_cleanup_free_ char *dir = rundir_base(env_get(envp, "XDG_RUNTIME_DIR"));
	return xasprintf("%s/api.sock", dir);
}

static struct agent_sandbox_client *client_new(int in_fd, int out_fd)
{
	struct agent_sandbox_client *c = xcalloc(1, sizeof(*c));
	c->in_fd = in_fd;
	c->out_fd = out_fd;
	int type;
	socklen_t len = sizeof(type);
	c->out_is_socket = getsockopt(out_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0;
	c->next_id = 1;
	return c;
}

int agent_sandbox_client_connect(const char *path, struct agent_sandbox_client **out,
				 struct error *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(addr.sun_path))
		return error_set(err, ERROR_USAGE,
				 "the socket path is too long (%zu bytes, at most %zu): %s",
				 strlen(path), sizeof(addr.sun_path) - 1, path);
	memcpy(addr.sun_path, path, strlen(path) + 1);
	_cleanup_close_ int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return error_errno(err, ERROR_SETUP, errno, "socket");
	int r;
	do
		r = connect(sock, (struct sockaddr *)&addr, sizeof(addr));
	while (r < 0 && errno == EINTR);
	/* A connect interrupted after it went through says so when repeated. */
	if (r < 0 && errno == EISCONN)
		r = 0;
	if (r < 0) {
		int e = errno;
		error_errno(err, ERROR_SETUP, e, "connecting to %s", path);
		if (e == ENOENT || e == ECONNREFUSED)
			error_hint(err, "is agent-sandbox serve running? (systemctl --user start "
					"agent-sandbox, or agent-sandbox serve &)");
		return -1;
	}
	*out = client_new(sock, sock);
	sock = -1;
	return 0;
}

int agent_sandbox_client_connect_default(char *const *envp, struct agent_sandbox_client **out,
					 struct error *err)
{
	_cleanup_free_ char *path = agent_sandbox_client_default_socket(envp);
	struct agent_sandbox_client *c = NULL;
	if (agent_sandbox_client_connect(path, &c, err) < 0)
		return -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(c->in_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		int e = errno;
		agent_sandbox_client_close(c);
		return error_errno(err, ERROR_SETUP, e, "checking who listens on %s", path);
	}
	if (cred.uid != geteuid()) {
		agent_sandbox_client_close(c);
		error_set(err, ERROR_DENIED,
			  "refusing the daemon on %s: it runs as uid %u, not as this user (uid %u)",
			  path, (unsigned)cred.uid, (unsigned)geteuid());
		error_hint(err,
			   "name its socket explicitly (rpc --socket PATH) if you mean to use it");
		return -1;
	}
	*out = c;
	return 0;
}

int agent_sandbox_client_open_fds(int in_fd, int out_fd, struct agent_sandbox_client **out,
				  struct error *err)
{
	if (in_fd < 0 || out_fd < 0) {
		if (in_fd >= 0)
			close(in_fd);
		if (out_fd >= 0 && out_fd != in_fd)
			close(out_fd);
		return error_set(err, ERROR_USAGE, "the client needs two open descriptors");
	}
	*out = client_new(in_fd, out_fd);
	return 0;
}

int agent_sandbox_client_fd(const struct agent_sandbox_client *c)
{
	return c->in_fd;
}

bool agent_sandbox_client_closed(const struct agent_sandbox_client *c)
{
	return c->eof && !c->broken;
}

void agent_sandbox_client_close(struct agent_sandbox_client *c)
{
	if (!c)
		return;
	for (size_t i = c->head; i < c->len; i++)
		json_object_put(c->queue[i]);
	free(c->queue);
	strbuf_release(&c->in);
	free(c->broken);
	close(c->in_fd);
	if (c->out_fd != c->in_fd)
		close(c->out_fd);
	free(c);
}

/* Marks the connection broken with err's message, for the calls after. */
static int client_break(struct agent_sandbox_client *c, struct error *err)
{
	if (!c->broken)
		c->broken = xstrdup(err->msg ? err->msg : "the connection failed");
	return -1;
}

static int client_check(struct agent_sandbox_client *c, struct error *err)
{
	if (c->broken)
		return error_set(err, ERROR_SETUP, "the connection to the daemon is broken: %s",
				 c->broken);
	return 0;
}

/* Milliseconds left until deadline (CLOCK_MONOTONIC), for poll(); -1 for
 * no deadline. */
static int remaining_ms(const struct timespec *deadline)
{
	if (!deadline)
		return -1;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (int64_t)(deadline->tv_sec - now.tv_sec) * 1000 +
		     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Waits until fd is ready for events. 1 ready, 0 at the deadline, -1 with
 * err. */
static int wait_fd(int fd, short events, const struct timespec *deadline, struct error *err)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, remaining_ms(deadline));
		if (r > 0)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return error_errno(err, ERROR_SETUP, errno, "waiting for the daemon");
	}
}

/* Writes to a descriptor that is not a socket, where MSG_NOSIGNAL does not
 * exist: SIGPIPE is held back for this thread while writing, and one it
 * raised is taken off the pending set, so that a daemon going away is an
 * error here rather than the caller's death. */
static ssize_t write_nosignal(int fd, const char *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigemptyset(&pending);
	if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old) != 0)
		return -1;
	bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	ssize_t n = write(fd, buf, len);
	int e = errno;
	if (n < 0 && e == EPIPE && !was_pending) {
		const struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return n;
}

/* The whole buffer, through EINTR, partial writes and a non-blocking
 * descriptor. */
static int send_all(struct agent_sandbox_client *c, const char *buf, size_t len, struct error *err)
{
	while (len) {
		ssize_t n = c->out_is_socket ? send(c->out_fd, buf, len, MSG_NOSIGNAL)
					     : write_nosignal(c->out_fd, buf, len);
		if (n < 0 && errno == ENOTSOCK && c->out_is_socket) {
			c->out_is_socket = false;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_fd(c->out_fd, POLLOUT, NULL, err) < 0)
				return -1;
			continue;
		}
		if (n < 0) {
			if (errno == EPIPE || errno == ECONNRESET)
				return error_set(err, ERROR_SETUP,
						 "the daemon closed the connection");
			return error_errno(err, ERROR_SETUP, errno, "writing to the daemon");
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Moves the unread part of a line to the front before reading more, so
 * that the buffer holds at most one line and one read (the move happens
 * once per line: after it the line starts at 0). */
static void compact(struct agent_sandbox_client *c)
{
	if (c->start == 0)
		return;
	size_t rest = c->in.len - c->start;
	memmove(c->in.buf, c->in.buf + c->start, rest);
	strbuf_setlen(&c->in, rest);
	c->scanned -= c->start;
	c->start = 0;
}

/* One read into the buffer. 1 read something, 0 at the deadline, -1 with
 * err (end of file included). */
static int fill(struct agent_sandbox_client *c, const struct timespec *deadline, struct error *err)
{
	if (c->eof)
		return error_set(err, ERROR_SETUP, "the daemon closed the connection");
	compact(c);
	for (;;) {
		int w = wait_fd(c->in_fd, POLLIN, deadline, err);
		if (w <= 0)
			return w;
		strbuf_grow(&c->in, CLIENT_READ_CHUNK);
		ssize_t n = read(c->in_fd, c->in.buf + c->in.len, CLIENT_READ_CHUNK);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n < 0) {
			if (errno == ECONNRESET) {
				c->eof = true;
				return error_set(err, ERROR_SETUP,
						 "the daemon closed the connection");
			}
			error_errno(err, ERROR_SETUP, errno, "reading from the daemon");
			return client_break(c, err);
		}
		if (n == 0) {
			c->eof = true;
			if (c->in.len > c->start) {
				error_set(err, ERROR_SETUP,
					  "the daemon closed the connection in the middle of a "
					  "message");
				return client_break(c, err);
			}
			return error_set(err, ERROR_SETUP, "the daemon closed the connection");
		}
		/* strbuf_grow left room for the bytes and a NUL. */
		c->in.len += (size_t)n;
		c->in.buf[c->in.len] = '\0';
		return 1;
	}
}

/* A JSON object from one line; anything else is a broken stream. */
static int parse_line(struct agent_sandbox_client *c, const char *line, size_t len,
		      struct json_object **out, struct error *err)
{
	/* json-c stops at a NUL byte and would take the text before it for
	 * the whole line. */
	if (memchr(line, '\0', len)) {
		error_set(err, ERROR_SETUP, "the daemon sent a line holding a NUL byte");
		return client_break(c, err);
	}
	_cleanup_(json_tokener_freep) struct json_tokener *tok = json_tokener_new_ex(RPC_DEPTH_MAX);
	if (!tok)
		return error_set(err, ERROR_INTERNAL, "json_tokener_new failed");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	_cleanup_(json_object_putp) struct json_object *v =
	    len > INT32_MAX ? NULL : json_tokener_parse_ex(tok, line, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	/* A complete value must end the line (bar trailing blanks). */
	size_t end = json_tokener_get_parse_end(tok);
	while (end < len && (line[end] == ' ' || line[end] == '\t' || line[end] == '\r'))
		end++;
	if (e == json_tokener_continue)
		e = json_tokener_error_parse_eof;
	if (!v || e != json_tokener_success || end != len) {
		error_set(err, ERROR_SETUP,
			  "the daemon sent a line that is not JSON (%s at byte %zu)",
			  e != json_tokener_success ? json_tokener_error_desc(e) : "trailing data",
			  json_tokener_get_parse_end(tok) + 1);
		return client_break(c, err);
	}
	if (!json_object_is_type(v, json_type_object)) {
		error_set(err, ERROR_SETUP, "the daemon sent a JSON %s, not a message object",
			  json_type_to_name(json_object_get_type(v)));
		return client_break(c, err);
	}
	*out = steal_ptr(&v);
	return 0;
}

/* The next message from the connection (not the queue). 1 with *out, 0 at
 * the deadline, -1 with err. Blank lines are skipped. */
static int read_message(struct agent_sandbox_client *c, const struct timespec *deadline,
			struct json_object **out, struct error *err)
{
	for (;;) {
		char *nl = c->in.len > c->scanned
			       ? memchr(c->in.buf + c->scanned, '\n', c->in.len - c->scanned)
			       : NULL;
		if (!nl) {
			c->scanned = c->in.len;
			/* The cap holds before the newline arrives: a daemon
			 * cannot make the client buffer without bound. */
			if (c->in.len - c->start > SERVE_LINE_MAX) {
				error_set(err, ERROR_LIMIT,
					  "the daemon sent a line longer than %u bytes",
					  (unsigned)SERVE_LINE_MAX);
				return client_break(c, err);
			}
			int r = fill(c, deadline, err);
			if (r <= 0)
				return r;
			continue;
		}
		const char *line = c->in.buf + c->start;
		size_t len = (size_t)(nl - line);
		c->start += len + 1;
		c->scanned = c->start;
		if (len > SERVE_LINE_MAX) {
			error_set(err, ERROR_LIMIT, "the daemon sent a line longer than %u bytes",
				  (unsigned)SERVE_LINE_MAX);
			return client_break(c, err);
		}
		size_t blank = 0;
		while (blank < len &&
		       (line[blank] == ' ' || line[blank] == '\t' || line[blank] == '\r'))
			blank++;
		if (blank == len)
			continue;
		if (parse_line(c, line, len, out, err) < 0)
			return -1;
		return 1;
	}
}

static void enqueue(struct agent_sandbox_client *c, struct json_object *msg)
{
	if (c->head && c->head == c->len)
		c->head = c->len = 0;
	if (c->len == c->alloc) {
		/* Reclaim the consumed front before growing. */
		if (c->head) {
			memmove(c->queue, c->queue + c->head,
				(c->len - c->head) * sizeof(*c->queue));
			c->len -= c->head;
			c->head = 0;
		}
		if (c->len == c->alloc) {
			c->alloc = c->alloc ? c->alloc * 2 : 16;
			c->queue = xreallocarray(c->queue, c->alloc, sizeof(*c->queue));
		}
	}
	c->queue[c->len++] = msg;
}

/* Removes queue item i (absolute index), keeping the order of the rest. */
static struct json_object *dequeue_at(struct agent_sandbox_client *c, size_t i)
{
	struct json_object *msg = c->queue[i];
	memmove(c->queue + i, c->queue + i + 1, (c->len - i - 1) * sizeof(*c->queue));
	c->len--;
	return msg;
}

/* A response answers a call: it has an id and no method. Anything else
 * (notifications, and requests should a daemon ever send them) goes to
 * agent_sandbox_client_next. */
static bool is_response(struct json_object *msg)
{
	return json_object_object_get_ex(msg, "id", NULL) &&
	       !json_object_object_get_ex(msg, "method", NULL);
}

static bool has_id(struct json_object *msg, int64_t id)
{
	struct json_object *v;
	return json_object_object_get_ex(msg, "id", &v) && json_object_is_type(v, json_type_int) &&
	       json_object_get_int64(v) == id;
}

int agent_sandbox_client_call(struct agent_sandbox_client *c, const char *method,
			      struct json_object *params, struct json_object **response,
			      struct error *err)
{
	_cleanup_(json_object_putp) struct json_object *owned_params = params;
	if (client_check(c, err) < 0)
		return -1;
	int64_t id = c->next_id++;
	_cleanup_(json_object_putp) struct json_object *req = json_object_new_object();
	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "method", json_object_new_string(method));
	if (owned_params)
		json_object_object_add(req, "params", steal_ptr(&owned_params));
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	/* json-c escapes '\n' in strings, so the message is one line. */
	strbuf_addstr(&line, json_object_to_json_string_ext(
				 req, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	strbuf_addch(&line, '\n');
	if (line.len > SERVE_LINE_MAX)
		return error_set(err, ERROR_LIMIT,
				 "%s: the request is %zu bytes, more than the daemon's line cap "
				 "of %u",
				 method, line.len, (unsigned)SERVE_LINE_MAX);
	if (send_all(c, line.buf, line.len, err) < 0) {
		error_prefix(err, "%s", method);
		return client_break(c, err);
	}
	for (size_t i = c->head; i < c->len; i++)
		if (has_id(c->queue[i], id) && is_response(c->queue[i])) {
			*response = dequeue_at(c, i);
			return 0;
		}
	for (;;) {
		struct json_object *msg = NULL;
		if (read_message(c, NULL, &msg, err) < 0)
			return error_prefix(err, "%s", method);
		if (is_response(msg) && has_id(msg, id)) {
			*response = msg;
			return 0;
		}
		enqueue(c, msg);
	}
}

int agent_sandbox_client_next(struct agent_sandbox_client *c, int timeout_ms,
			      struct json_object **note, struct error *err)
{
	for (size_t i = c->head; i < c->len; i++)
		if (!is_response(c->queue[i])) {
			*note = i == c->head ? c->queue[c->head++] : dequeue_at(c, i);
			return 1;
		}
	if (client_check(c, err) < 0)
		return -1;
	struct timespec deadline, *dl = NULL;
	if (timeout_ms >= 0) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		dl = &deadline;
	}
	for (;;) {
		struct json_object *msg = NULL;
		int r = read_message(c, dl, &msg, err);
		if (r <= 0)
			return r;
		if (!is_response(msg)) {
			*note = msg;
			return 1;
		}
		/* A response nobody waits for (its call failed half-way):
		 * kept, in order, should a caller look for it. */
		enqueue(c, msg);
	}
}

size_t agent_sandbox_client_queued(const struct agent_sandbox_client *c)
{
	size_t n = 0;
	for (size_t i = c->head; i < c->len; i++)
		n += !is_response(c->queue[i]);
	return n;
}

/* The kind named by error.data.kind, ERROR_NONE for a name we do not know. */
static enum error_kind kind_by_name(const char *name)
{
	for (enum error_kind k = ERROR_USAGE; k <= ERROR_POLICY; k++)
		if (!strcmp(error_kind_name(k), name))
			return k;
	return ERROR_NONE;
}

static enum error_kind kind_by_code(int64_t code)
{
	switch (code) {
	case RPC_PARSE_ERROR:
	case RPC_INVALID_REQUEST:
	case RPC_METHOD_NOT_FOUND:
	case RPC_INVALID_PARAMS:
		return ERROR_USAGE;
	case RPC_OVERLOADED:
		return ERROR_BUSY;
	case RPC_NOT_FOUND:
		return ERROR_NOT_FOUND;
	case RPC_DENIED:
		return ERROR_DENIED;
	case RPC_LIMIT:
		return ERROR_LIMIT;
	case RPC_POLICY:
		return ERROR_POLICY;
	}
	return ERROR_INTERNAL;
}

static const char *member_string(struct json_object *obj, const char *key)
{
	struct json_object *v;
	if (!obj || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int agent_sandbox_client_response_error(struct json_object *response, struct error *err)
{
	struct json_object *e, *code, *data = NULL;
	if (json_object_object_get_ex(response, "result", NULL))
		return 0;
	if (!json_object_object_get_ex(response, "error", &e) ||
	    !json_object_is_type(e, json_type_object))
		return error_set(err, ERROR_INTERNAL,
				 "the daemon's response has neither a result nor an error");
	json_object_object_get_ex(e, "data", &data);
	int64_t c =
	    json_object_object_get_ex(e, "code", &code) && json_object_is_type(code, json_type_int)
		? json_object_get_int64(code)
		: RPC_INTERNAL_ERROR;
	const char *name = member_string(data, "kind");
	enum error_kind kind = name ? kind_by_name(name) : ERROR_NONE;
	if (kind == ERROR_NONE)
		kind = kind_by_code(c);
	const char *detail = member_string(data, "detail");
	if (!detail)
		detail = member_string(e, "message");
	return error_set(err, kind, "%s (%" PRId64 ")", detail ? detail : "unknown error", c);
}
