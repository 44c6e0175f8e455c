/* The daemon's end of the MCP bridge (mcp.h). Each connection to a
 * session's NAME.sock is one run of `agent-sandbox mcp-bridge NAME` inside:
 * it gets its own upstream, and every line either way passes the filter.
 * Nothing here blocks the daemon: the relay is non-blocking with bounded
 * queues, and a command started on the host is reaped through its pidfd. */
#include "serve/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "base/xalloc.h"
#include "inside/inside.h"
#include "serve/internal.h"
#include "serve/mcp_filter.h"

/* Bytes queued toward one side beyond which the other is not read. */
#define MCP_QUEUE_HIGH (1u << 20)
/* Bridges of one server at once. Each may be a process on the host,
 * outside the session's limits, started at the agent's word: a run's CLI
 * takes one, and one more covers the previous run's still ending. */
#define MCP_BRIDGES_MAX 2
#define MCP_CONFIG ".mcp.json"
#define MCP_CONFIG_MAX (1u << 20)
/* The audit log is the host's disk: a refusal costs the agent nothing (it
 * is answered here), nor does an upstream that fails, so a session records
 * this many and then says it stops; a tool name is recorded up to the
 * longest a tools list takes. */
#define MCP_REFUSALS_LOGGED_MAX 1000
/* Bytes all the bridges of a session may hold (buffers as allocated): 16
 * servers of 2 bridges each holding a line short of MCP_LINE_MAX would be
 * 128 MiB of the daemon's (and more sessions, more), at the agent's word. */
#define MCP_SESSION_HELD_MAX (32u << 20)
/* A buffer emptied after a long line gives its memory back. */
#define MCP_BUFFER_KEEP 65536
#define MCP_TOOL_LOGGED_MAX 256

struct mcp_server {
	char *name;
	char *socket;	  /* upstream socket, or NULL */
	struct strv argv; /* or the command */
	bool all_tools;
	struct strv tools;
	struct watch listen;
	struct mcp_session *m;
	unsigned bridges;
};

/* One direction's end: a read watch and a write watch (a dup of a socket,
 * or the other pipe), the partial line read, and the bytes to write. */
struct side {
	struct watch r, w;
	bool r_on, w_on; /* in the epoll set */
	bool eof;	 /* nothing more to read */
	bool shut;	 /* our writing end is closed */
	struct strbuf in, out;
	size_t out_off;
};

struct mcp_bridge {
	struct mcp_server *srv_conf;
	struct session *s;
	struct side down, up; /* the bridge inside; the server */
	pid_t pid;	      /* the command, until reaped */
	struct watch child;   /* its pidfd */
	struct mcp_filter filter;
	bool closed;
	struct mcp_bridge *next;
};

struct mcp_session {
	struct mcp_server *servers;
	size_t len;
	char *dir;
	struct strv bind_dirs, bind_names;
	struct mcp_bridge *bridges;
	struct session *session; /* once started */
	unsigned refusals_logged;
};

/* --- Parameters --- */

static void server_release(struct mcp_server *c)
{
	free(c->name);
	free(c->socket);
	strv_release(&c->argv);
	strv_release(&c->tools);
}

static int tools_param(struct json_object *v, const char *name, struct mcp_server *c,
		       struct error *err)
{
	if (!v || json_object_is_type(v, json_type_null)) {
		c->all_tools = true;
		return 0;
	}
	size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
	if (!json_object_is_type(v, json_type_array) || n > 1024)
		return error_set(err, ERROR_USAGE,
				 "mcpServers.%s.tools must be an array of tool names", name);
	for (size_t i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(v, i);
		const char *s = json_object_get_string(t);
		size_t len = json_object_is_type(t, json_type_string)
				 ? (size_t)json_object_get_string_len(t)
				 : 0;
		if (!len || len > 256 || strlen(s) != len)
			return error_set(err, ERROR_USAGE,
					 "mcpServers.%s.tools[%zu] must be a tool name (1-256 "
					 "characters, no NUL)",
					 name, i);
		if (strv_contains(&c->tools, s))
			return error_set(err, ERROR_USAGE, "mcpServers.%s.tools names %s twice",
					 name, s);
		strv_push(&c->tools, s);
	}
	return 0;
}

static int server_param(const char *name, struct json_object *v, struct mcp_server *c,
			struct error *err)
{
	if (!mcp_name_ok(name))
		return error_set(err, ERROR_USAGE,
				 "mcpServers: %s is not a server name (1-64 of A-Z a-z 0-9 _ -, "
				 "without \"__\")",
				 name);
	if (!json_object_is_type(v, json_type_object))
		return error_set(err, ERROR_USAGE, "mcpServers.%s must be an object", name);
	json_object_object_foreach(v, key, val)
	{
		(void)val;
		if (strcmp(key, "socket") && strcmp(key, "command") && strcmp(key, "tools"))
			return error_set(err, ERROR_USAGE,
					 "mcpServers.%s: unknown key %s (socket, command, tools)",
					 name, key);
	}
	c->name = xstrdup(name);
	c->argv = (struct strv)STRV_INIT;
	c->tools = (struct strv)STRV_INIT;
	const char *sock = NULL;
	struct json_object *tools = NULL;
	json_object_object_get_ex(v, "tools", &tools);
	if (rpc_param_string(v, "socket", false, &sock, err) < 0 ||
	    rpc_param_argv(v, "command", false, &c->argv, err) < 0)
		return error_prefix(err, "mcpServers.%s", name);
	if (!sock == !c->argv.len)
		return error_set(err, ERROR_USAGE,
				 "mcpServers.%s needs exactly one of socket and command", name);
	if (sock && (sock[0] != '/' || strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)))
		return error_set(err, ERROR_USAGE,
				 "mcpServers.%s.socket must be an absolute path of at most %zu "
				 "bytes",
				 name, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	c->socket = sock ? xstrdup(sock) : NULL;
	return tools_param(tools, name, c, err);
}

static void session_conf_free(struct mcp_session *m)
{
	for (size_t i = 0; i < m->len; i++)
		server_release(&m->servers[i]);
	free(m->servers);
	free(m->dir);
	strv_release(&m->bind_dirs);
	strv_release(&m->bind_names);
	free(m);
}

int mcp_param(struct json_object *params, bool trusted, struct mcp_session **out, struct error *err)
{
	*out = NULL;
	struct json_object *v = NULL;
	if (!json_object_object_get_ex(params, "mcpServers", &v) ||
	    json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return error_set(err, ERROR_USAGE, "mcpServers must be an object of servers");
	size_t n = (size_t)json_object_object_length(v);
	if (!n)
		return 0;
	if (!trusted) {
		error_set(err, ERROR_POLICY,
			  "mcpServers reach the host (a command runs there, a socket may be "
			  "any of the daemon's user): only a trusted connection may name them");
		error_hint(err, "connect as root or as the daemon's user, the platform");
		return -1;
	}
	if (n > MCP_SERVERS_MAX)
		return error_set(err, ERROR_USAGE, "mcpServers: at most %d servers",
				 MCP_SERVERS_MAX);
	struct mcp_session *m = xcalloc(1, sizeof(*m));
	m->servers = xcalloc(n, sizeof(*m->servers));
	m->bind_dirs = (struct strv)STRV_INIT;
	m->bind_names = (struct strv)STRV_INIT;
	json_object_object_foreach(v, name, conf)
	{
		struct mcp_server *c = &m->servers[m->len++];
		c->listen.fd = -1;
		c->m = m;
		if (server_param(name, conf, c, err) < 0) {
			session_conf_free(m);
			return -1;
		}
	}
	*out = m;
	return 0;
}

/* --- The directory and its listeners --- */

static void remove_dir(struct mcp_session *m)
{
	if (!m->dir)
		return;
	for (size_t i = 0; i < m->len; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s.sock", m->dir, m->servers[i].name);
		unlink(p);
	}
	rmdir(m->dir);
}

int mcp_session_open(struct mcp_session *m, const char *state_dir, const char *session_id,
		     struct error *err)
{
	if (!m)
		return 0;
	m->dir = xasprintf("%s/mcp-%s", state_dir, session_id);
	if (mkdir(m->dir, 0700) < 0) {
		int e = errno;
		free(m->dir);
		m->dir = NULL;
		return error_errno(err, ERROR_SETUP, e, "creating the MCP directory");
	}
	for (size_t i = 0; i < m->len; i++) {
		struct mcp_server *c = &m->servers[i];
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s.sock", m->dir, c->name);
		if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
			return error_set(err, ERROR_SETUP,
					 "the MCP socket path under %s is too long", m->dir);
		c->listen.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->listen.fd < 0 ||
		    bind(c->listen.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    chmod(sa.sun_path, 0600) < 0 || listen(c->listen.fd, 16) < 0)
			return error_errno(err, ERROR_SETUP, errno, "listening on %s", sa.sun_path);
	}
	strv_push(&m->bind_dirs, m->dir);
	strv_push(&m->bind_names, MCP_RUN_NAME);
	return 0;
}

void mcp_session_binds(const struct mcp_session *m, const struct strv **dirs,
		       const struct strv **names)
{
	static const struct strv none = STRV_INIT;
	*dirs = m ? &m->bind_dirs : &none;
	*names = m ? &m->bind_names : &none;
}

/* --- Audit --- */

static void audit_bridge(struct server *srv, const struct mcp_bridge *b, const char *event,
			 struct json_object *f)
{
	if (!f)
		f = json_object_new_object();
	json_object_object_add(f, "server", json_object_new_string(b->srv_conf->name));
	audit_serve(&srv->audit, b->s->id, event, b->s->owner, f);
}

/* A record the agent causes for nothing (a refusal, an upstream that
 * fails), while the session has records left for them. */
static void audit_capped(struct server *srv, const struct mcp_bridge *b, const char *event,
			 struct json_object *f)
{
	struct mcp_session *m = b->srv_conf->m;
	if (m->refusals_logged > MCP_REFUSALS_LOGGED_MAX) {
		json_object_put(f);
		return;
	}
	if (m->refusals_logged++ == MCP_REFUSALS_LOGGED_MAX) {
		json_object_put(f);
		f = json_object_new_object();
		json_object_object_add(
		    f, "reason",
		    json_object_new_string(
			"too many refusals and failures: later ones are not recorded"));
		event = "serve_mcp_refused";
	}
	audit_bridge(srv, b, event, f);
}

/* The tool's name for a record: its head when long, cut at a character. */
static struct json_object *tool_logged(const char *tool)
{
	size_t n = strlen(tool);
	if (n <= MCP_TOOL_LOGGED_MAX)
		return json_object_new_string(tool);
	n = MCP_TOOL_LOGGED_MAX;
	while (n && ((unsigned char)tool[n] & 0xC0) == 0x80)
		n--;
	_cleanup_free_ char *head = xasprintf("%.*s...", (int)n, tool);
	return json_object_new_string(head);
}

/* --- The relay --- */

static void bridge_close(struct server *srv, struct mcp_bridge *b);
static void bridge_update(struct server *srv, struct mcp_bridge *b);

static void side_set(struct server *srv, struct watch *w, bool *on, bool want, uint32_t ev)
{
	if (w->fd < 0 || *on == want)
		return;
	if (want) {
		if (serve_watch(srv, w, ev) == 0)
			*on = true;
	} else {
		serve_unwatch(srv, w);
		*on = false;
	}
}

static void side_close(struct server *srv, struct side *sd)
{
	serve_close_watch(srv, &sd->r);
	serve_close_watch(srv, &sd->w);
	sd->r_on = sd->w_on = false;
	strbuf_release(&sd->in);
	strbuf_release(&sd->out);
}

static size_t queued(const struct side *sd)
{
	return sd->out.len - sd->out_off;
}

static void queue_line(struct side *to, const struct strbuf *line)
{
	if (to->shut)
		return;
	strbuf_add(&to->out, line->buf, line->len);
	strbuf_addch(&to->out, '\n');
}

/* Handles one complete line from `from`. Returns -1 when the bridge must
 * end. */
static int take_line(struct server *srv, struct mcp_bridge *b, bool from_down, const char *line,
		     size_t len)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	if (!from_down) {
		enum mcp_verdict v = mcp_filter_server(&b->filter, line, len, &out);
		if (v == MCP_FORWARD)
			queue_line(&b->down, &out);
		else if (v == MCP_REPLY)
			queue_line(&b->up, &out);
		return 0;
	}
	struct mcp_call call;
	enum mcp_verdict v = mcp_filter_client(&b->filter, line, len, &out, &call);
	if (call.is_call && call.tool) {
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "tool", tool_logged(call.tool));
		json_object_object_add(f, "allowed", json_object_new_boolean(call.allowed));
		if (call.allowed)
			audit_bridge(srv, b, "serve_mcp_call", f);
		else
			audit_capped(srv, b, "serve_mcp_call", f);
	}
	if (v == MCP_CLOSE) {
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "reason", json_object_new_string(call.why));
		audit_capped(srv, b, "serve_mcp_refused", f);
	}
	mcp_call_release(&call);
	if (v == MCP_FORWARD)
		queue_line(&b->up, &out);
	else if (v == MCP_REPLY)
		queue_line(&b->down, &out);
	return v == MCP_CLOSE ? -1 : 0;
}

/* A line over MCP_LINE_MAX: refused with a record, and the bridge ends. */
static void line_too_long(struct server *srv, struct mcp_bridge *b, bool from_down)
{
	struct json_object *f = json_object_new_object();
	json_object_object_add(f, "reason",
			       json_object_new_string(from_down
							  ? "a line from inside over 4 MiB"
							  : "a line from the server over 4 MiB"));
	audit_capped(srv, b, "serve_mcp_refused", f);
	bridge_close(srv, b);
}

static void trim(struct strbuf *sb)
{
	if (!sb->len && sb->alloc > MCP_BUFFER_KEEP)
		strbuf_release(sb);
}

static size_t side_held(const struct side *sd)
{
	return sd->in.alloc + sd->out.alloc;
}

static size_t session_held(const struct mcp_session *m)
{
	size_t n = 0;
	for (const struct mcp_bridge *b = m->bridges; b; b = b->next)
		n += side_held(&b->down) + side_held(&b->up);
	return n;
}

static void side_read(struct server *srv, struct mcp_bridge *b, bool from_down)
{
	struct side *from = from_down ? &b->down : &b->up;
	char buf[65536];
	ssize_t n = read(from->r.fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		from->eof = true;
		serve_close_watch(srv, &from->r);
		from->r_on = false;
		return;
	}
	size_t scan = from->in.len;
	strbuf_add(&from->in, buf, (size_t)n);
	size_t start = 0;
	for (char *nl; (nl = memchr(from->in.buf + scan, '\n', from->in.len - scan));) {
		size_t end = (size_t)(nl - from->in.buf);
		if (end - start > MCP_LINE_MAX) {
			line_too_long(srv, b, from_down);
			return;
		}
		if (take_line(srv, b, from_down, from->in.buf + start, end - start) < 0) {
			bridge_close(srv, b);
			return;
		}
		start = scan = end + 1;
	}
	if (from->in.len - start > MCP_LINE_MAX) {
		line_too_long(srv, b, from_down);
		return;
	}
	memmove(from->in.buf, from->in.buf + start, from->in.len - start);
	strbuf_setlen(&from->in, from->in.len - start);
	trim(&from->in);
	/* Over the session's budget: this bridge, the one that grew, ends. */
	if (session_held(b->srv_conf->m) > MCP_SESSION_HELD_MAX) {
		struct json_object *f = json_object_new_object();
		json_object_object_add(
		    f, "reason",
		    json_object_new_string("the session's MCP bridges hold over 32 MiB"));
		audit_capped(srv, b, "serve_mcp_refused", f);
		bridge_close(srv, b);
	}
}

static void side_write(struct server *srv, struct mcp_bridge *b, struct side *to)
{
	while (queued(to)) {
		ssize_t n = write(to->w.fd, to->out.buf + to->out_off, queued(to));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			bridge_close(srv, b);
			return;
		}
		to->out_off += (size_t)n;
	}
	strbuf_reset(&to->out);
	to->out_off = 0;
	trim(&to->out);
}

static void bridge_ready(struct server *srv, struct mcp_bridge *b, struct side *sd, struct watch *w,
			 uint32_t events)
{
	if (b->closed)
		return;
	if (w == &sd->r)
		side_read(srv, b, sd == &b->down);
	else
		side_write(srv, b, sd);
	if (!b->closed)
		bridge_update(srv, b);
}

static void down_r_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct mcp_bridge *b = container_of(w, struct mcp_bridge, down.r);
	bridge_ready(srv, b, &b->down, w, events);
}

static void down_w_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct mcp_bridge *b = container_of(w, struct mcp_bridge, down.w);
	bridge_ready(srv, b, &b->down, w, events);
}

static void up_r_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct mcp_bridge *b = container_of(w, struct mcp_bridge, up.r);
	bridge_ready(srv, b, &b->up, w, events);
}

static void up_w_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct mcp_bridge *b = container_of(w, struct mcp_bridge, up.w);
	bridge_ready(srv, b, &b->up, w, events);
}

/* Our writing end toward sd ends once its queue is out. */
static void side_shut(struct server *srv, struct side *sd, bool socket)
{
	if (sd->shut)
		return;
	sd->shut = true;
	if (socket && sd->w.fd >= 0)
		shutdown(sd->w.fd, SHUT_WR);
	serve_close_watch(srv, &sd->w);
	sd->w_on = false;
}

static void bridge_update(struct server *srv, struct mcp_bridge *b)
{
	/* The server said all it will, and it is out: done. */
	if (b->up.eof && !queued(&b->down)) {
		bridge_close(srv, b);
		return;
	}
	if (b->down.eof && !b->up.shut && !queued(&b->up))
		side_shut(srv, &b->up, b->srv_conf->socket != NULL);
	/* A side that does not read stops the other being read. */
	bool room_down = queued(&b->down) < MCP_QUEUE_HIGH;
	bool room_up = queued(&b->up) < MCP_QUEUE_HIGH;
	side_set(srv, &b->down.r, &b->down.r_on, !b->down.eof && room_up && room_down, EPOLLIN);
	side_set(srv, &b->up.r, &b->up.r_on, !b->up.eof && room_down, EPOLLIN);
	side_set(srv, &b->down.w, &b->down.w_on, queued(&b->down) > 0, EPOLLOUT);
	side_set(srv, &b->up.w, &b->up.w_on, !b->up.shut && queued(&b->up) > 0, EPOLLOUT);
}

static void bridge_free(struct mcp_bridge *b)
{
	mcp_filter_release(&b->filter);
	free(b);
}

static void bridge_unlink(struct mcp_session *m, struct mcp_bridge *b)
{
	for (struct mcp_bridge **pp = &m->bridges; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			return;
		}
}

/* Freed after the events at hand, once closed and its command reaped. */
static void bridge_bury(struct server *srv, struct mcp_bridge *b)
{
	bridge_unlink(b->srv_conf->m, b);
	b->next = srv->mcp_dead;
	srv->mcp_dead = b;
}

static void bridge_close(struct server *srv, struct mcp_bridge *b)
{
	if (b->closed)
		return;
	b->closed = true;
	b->srv_conf->bridges--;
	side_close(srv, &b->down);
	side_close(srv, &b->up);
	/* The group, and the process itself in case it has not made its
	 * group yet. */
	if (b->pid > 0) {
		kill(-b->pid, SIGKILL);
		kill(b->pid, SIGKILL);
	} else {
		bridge_bury(srv, b);
	}
}

static void child_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct mcp_bridge *b = container_of(w, struct mcp_bridge, child);
	if (waitpid(b->pid, NULL, WNOHANG) != b->pid)
		return;
	b->pid = 0;
	serve_close_watch(srv, w);
	/* The server is gone: what it wrote is still read to its end. */
	if (b->closed)
		bridge_bury(srv, b);
}

void mcp_reap(struct server *srv)
{
	while (srv->mcp_dead) {
		struct mcp_bridge *b = srv->mcp_dead;
		srv->mcp_dead = b->next;
		bridge_free(b);
	}
}

/* --- Upstreams --- */

static int connect_socket(const char *path, int *fd)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	*fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	if (connect(*fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(*fd);
		*fd = -1;
		return -e;
	}
	return 0;
}

/* In the child: the command, its stdin and stdout the pipes, stderr
 * /dev/null, in a session (and process group) of its own, with the
 * daemon's environment: the platform's own program, given what the
 * platform gave the daemon. Out of the daemon's group, it is killed with
 * the daemon however that ends (a sandbox dies with it the same way): a
 * server that never reads its stdin would not notice. */
static _Noreturn void exec_command(const struct mcp_server *c, int in, int out, char *const *envp,
				   pid_t daemon)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != daemon)
		_exit(127);
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || devnull < 0 || dup2(devnull, 2) < 0)
		_exit(127);
	syscall(SYS_close_range, 3u, ~0u, 0);
	setsid();
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execvpe(c->argv.items[0], c->argv.items, envp);
	_exit(127);
}

static int start_command(struct server *srv, struct mcp_bridge *b)
{
	int to[2], from[2];
	if (pipe2(to, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(from, O_CLOEXEC) < 0) {
		int e = errno;
		close(to[0]);
		close(to[1]);
		return -e;
	}
	pid_t self = getpid();
	pid_t pid = fork();
	if (pid == 0)
		exec_command(b->srv_conf, to[0], from[1], srv->o->envp, self);
	int e = errno;
	close(to[0]);
	close(from[1]);
	if (pid < 0) {
		close(to[1]);
		close(from[0]);
		return -e;
	}
	b->pid = pid;
	b->up.w.fd = to[1];
	b->up.r.fd = from[0];
	fcntl(to[1], F_SETFL, O_NONBLOCK);
	fcntl(from[0], F_SETFL, O_NONBLOCK);
	b->child = (struct watch){.ready = child_ready, .fd = (int)syscall(SYS_pidfd_open, pid, 0)};
	if (b->child.fd < 0 || serve_watch(srv, &b->child, EPOLLIN) < 0) {
		/* Unwatched, it is killed and waited for here. */
		e = errno;
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		b->pid = 0;
		if (b->child.fd >= 0)
			serve_close_watch(srv, &b->child);
		return -e;
	}
	return 0;
}

static void accept_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct mcp_server *c = container_of(w, struct mcp_server, listen);
	struct mcp_session *m = c->m;
	int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct session *s = m->session;
	if (!s || c->bridges >= MCP_BRIDGES_MAX) {
		close(fd);
		return;
	}
	struct mcp_bridge *b = xcalloc(1, sizeof(*b));
	*b = (struct mcp_bridge){.srv_conf = c, .s = s, .child = {.fd = -1}};
	b->down = (struct side){.r = {.ready = down_r_ready, .fd = fd},
				.w = {.ready = down_w_ready, .fd = dup(fd)},
				.in = STRBUF_INIT,
				.out = STRBUF_INIT};
	b->up = (struct side){.r = {.ready = up_r_ready, .fd = -1},
			      .w = {.ready = up_w_ready, .fd = -1},
			      .in = STRBUF_INIT,
			      .out = STRBUF_INIT};
	mcp_filter_init(&b->filter, c->name, c->all_tools ? NULL : &c->tools);
	c->bridges++;
	b->next = m->bridges;
	m->bridges = b;
	int r = 0;
	if (c->socket) {
		r = connect_socket(c->socket, &b->up.r.fd);
		if (r == 0)
			b->up.w.fd = dup(b->up.r.fd);
	} else {
		r = start_command(srv, b);
	}
	if (r < 0 || b->down.w.fd < 0 || b->up.w.fd < 0) {
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "reason",
				       json_object_new_string(strerror(r < 0 ? -r : EMFILE)));
		audit_capped(srv, b, "serve_mcp_upstream_failed", f);
		bridge_close(srv, b);
		return;
	}
	bridge_update(srv, b);
}

int mcp_session_start(struct server *srv, struct session *s, struct error *err)
{
	struct mcp_session *m = s->mcp;
	if (!m)
		return 0;
	for (size_t i = 0; i < m->len; i++) {
		m->servers[i].listen.ready = accept_ready;
		if (serve_watch(srv, &m->servers[i].listen, EPOLLIN) < 0)
			return error_errno(err, ERROR_SETUP, errno, "watching the MCP sockets");
	}
	m->session = s;
	return 0;
}

void mcp_session_end(struct server *srv, struct session *s)
{
	struct mcp_session *m = s->mcp;
	if (!m)
		return;
	for (size_t i = 0; i < m->len; i++)
		serve_close_watch(srv, &m->servers[i].listen);
	for (struct mcp_bridge *b = m->bridges, *next; b; b = next) {
		next = b->next;
		bridge_close(srv, b);
	}
	remove_dir(m);
}

void mcp_session_free(struct mcp_session *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->len; i++)
		if (m->servers[i].listen.fd >= 0)
			close(m->servers[i].listen.fd);
	/* Closed already (mcp_session_end); a command not reaped yet was
	 * killed then and is waited for now. */
	while (m->bridges) {
		struct mcp_bridge *b = m->bridges;
		m->bridges = b->next;
		if (b->pid > 0) {
			kill(-b->pid, SIGKILL);
			kill(b->pid, SIGKILL);
			waitpid(b->pid, NULL, 0);
		}
		if (b->child.fd >= 0)
			close(b->child.fd);
		for (struct side *sd = &b->down; sd; sd = sd == &b->down ? &b->up : NULL) {
			if (sd->r.fd >= 0)
				close(sd->r.fd);
			if (sd->w.fd >= 0)
				close(sd->w.fd);
			strbuf_release(&sd->in);
			strbuf_release(&sd->out);
		}
		bridge_free(b);
	}
	remove_dir(m);
	session_conf_free(m);
}

/* --- .mcp.json --- */

struct json_object *mcp_servers_json(const struct session *s)
{
	const struct mcp_session *m = s->mcp;
	if (!m)
		return NULL;
	struct json_object *o = json_object_new_object();
	for (size_t i = 0; i < m->len; i++) {
		const struct mcp_server *c = &m->servers[i];
		struct json_object *e = json_object_new_object();
		struct json_object *tools = NULL;
		if (!c->all_tools) {
			tools = json_object_new_array();
			for (size_t t = 0; t < c->tools.len; t++)
				json_object_array_add(tools,
						      json_object_new_string(c->tools.items[t]));
		}
		json_object_object_add(e, "tools", tools);
		json_object_object_add(o, c->name, e);
	}
	return o;
}

/* The agent's own .mcp.json, if it is a regular file: never read through
 * a symlink (it could name any host file the daemon's user reads). */
static struct json_object *read_config(int workspace_fd)
{
	int fd = openat(workspace_fd, MCP_CONFIG, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_fd(fd, MCP_CONFIG_MAX, &text, &len);
	close(fd);
	if (r < 0)
		return NULL;
	struct json_object *o = json_tokener_parse(text);
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int mcp_write_config(struct session *s, int workspace_fd, struct error *err)
{
	const struct mcp_session *m = s->mcp;
	if (!m || !m->len)
		return 0;
	struct json_object *root = read_config(workspace_fd);
	if (!root)
		root = json_object_new_object();
	struct json_object *servers = NULL;
	if (!json_object_object_get_ex(root, "mcpServers", &servers) ||
	    !json_object_is_type(servers, json_type_object)) {
		servers = json_object_new_object();
		json_object_object_add(root, "mcpServers", servers);
	}
	for (size_t i = 0; i < m->len; i++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "type", json_object_new_string("stdio"));
		json_object_object_add(e, "command", json_object_new_string(SANDBOX_SELF));
		struct json_object *args = json_object_new_array();
		json_object_array_add(args, json_object_new_string("mcp-bridge"));
		json_object_array_add(args, json_object_new_string(m->servers[i].name));
		json_object_object_add(e, "args", args);
		json_object_object_add(servers, m->servers[i].name, e);
	}
	_cleanup_free_ char *text =
	    xasprintf("%s\n", json_object_to_json_string_ext(
				  root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	/* The same already: left alone. The sandbox shows the file as it
	 * was at its start (read-only, an agent config), so it is written
	 * at session/create, before the sandbox starts. */
	_cleanup_free_ char *now = NULL;
	size_t now_len = 0;
	int cur = openat(workspace_fd, MCP_CONFIG, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (cur >= 0) {
		bool same = read_fd(cur, MCP_CONFIG_MAX, &now, &now_len) == 0 &&
			    now_len == strlen(text) && !memcmp(now, text, now_len);
		close(cur);
		if (same)
			return 0;
	}
	/* A new file of ours beside it, then renamed over it: the rename
	 * replaces whatever is there (a symlink too) and follows nothing. */
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return error_errno(err, ERROR_SETUP, errno, "getrandom");
	_cleanup_free_ char *tmp =
	    xasprintf(".mcp.json.%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3],
		      rnd[4], rnd[5], rnd[6], rnd[7]);
	int fd =
	    openat(workspace_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "writing the workspace's %s",
				   MCP_CONFIG);
	int r = write_all(fd, text, strlen(text));
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(workspace_fd, tmp, workspace_fd, MCP_CONFIG) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(workspace_fd, tmp, 0);
		return error_errno(err, ERROR_SETUP, -r, "writing the workspace's %s", MCP_CONFIG);
	}
	return 0;
}
