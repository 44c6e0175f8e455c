/* Processes of a session (API.md process/...). Each is started through the
 * session's control socket, the way exec-into starts one, with pipes or a
 * pty the daemon made: the sandbox's init forks it under the sandbox's
 * every layer. Its output is numbered chunk by chunk, kept in a ring for
 * process/attach and sent to the connection attached to it; process/exited
 * comes once it has exited and its output has been read to the end (or a
 * short grace has passed: a background child may hold the pipe). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "base/xalloc.h"
#include "inside/inside.h"
#include "inside/session.h"
#include "sandbox/control.h"
#include "serve/internal.h"

#define READ_CHUNK (64u * 1024)
/* After the exit, how long output still held open by a child it left
 * behind is waited for. */
#define EXIT_GRACE_MS 1000
/* Bytes of stdin queued for a process that does not read. */
#define STDIN_QUEUE_MAX (1u << 20)
/* Finished processes a session keeps for process/list and attach. */
#define FINISHED_KEPT 64

static const char *const stream_names[] = {"stdout", "stderr", "pty"};

static const struct {
	const char *name;
	int sig;
} signals[] = {
    {"INT", SIGINT},   {"TERM", SIGTERM},   {"HUP", SIGHUP},   {"QUIT", SIGQUIT},
    {"KILL", SIGKILL}, {"WINCH", SIGWINCH}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
    {"CONT", SIGCONT}, {"STOP", SIGSTOP},   {"TSTP", SIGTSTP},
};

static const char *signal_name(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		if (signals[i].sig == sig)
			return signals[i].name;
	return NULL;
}

void process_free(struct process *p)
{
	strv_release(&p->argv);
	free(p->tag);
	ring_release(&p->ring);
	strbuf_release(&p->exec_out);
	strbuf_release(&p->exec_err);
	strbuf_release(&p->stdin_queue);
	serve_pending_free(p->answer);
	free(p);
}

static void close_streams(struct server *srv, struct process *p)
{
	serve_close_watch(srv, &p->out);
	serve_close_watch(srv, &p->err);
	serve_close_watch(srv, &p->in);
}

void process_bury(struct server *srv, struct process *p)
{
	struct session *s = p->session;
	for (struct process **pp = &s->processes; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	close_streams(srv, p);
	serve_close_watch(srv, &p->ctl);
	serve_close_watch(srv, &p->timer);
	p->next = srv->dead_processes;
	srv->dead_processes = p;
}

static struct process *find(struct server *srv, struct conn *c, const char *id, struct error *err)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		for (struct process *p = s->processes; p; p = p->next) {
			if (strcmp(p->id, id) != 0)
				continue;
			if (strcmp(s->owner, c->owner) != 0) {
				error_set(err, ERROR_DENIED, "process %s belongs to another owner",
					  id);
				return NULL;
			}
			return p;
		}
	error_set(err, ERROR_NOT_FOUND, "no process %s", id);
	return NULL;
}

static int send_signal(struct process *p, int sig)
{
	if (p->ctl.fd < 0)
		return -ESRCH;
	struct control_header h = {CONTROL_MAGIC, CONTROL_VERSION, CONTROL_SIGNAL, 0, sig};
	return control_send(p->ctl.fd, &h, NULL, 0, NULL, 0);
}

int process_kill(struct process *p, int sig)
{
	return send_signal(p, sig);
}

static void arm(struct process *p, uint64_t ms)
{
	struct itimerspec its = {.it_value = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000}};
	if (!ms)
		its.it_value.tv_nsec = 1;
	(void)timerfd_settime(p->timer.fd, 0, &its, NULL);
}

/* Answers the request that started p (if any is owed): result taken, or
 * err. */
static void answer(struct server *srv, struct process *p, struct json_object *result,
		   const struct error *err)
{
	struct pending *a = p->answer;
	p->answer = NULL;
	if (a)
		serve_answer(srv, a, result, err);
	else
		json_object_put(result);
}

/* p never started: the request that asked for it fails with err. */
static void fail_start(struct server *srv, struct process *p, const struct error *err)
{
	answer(srv, p, NULL, err);
	if (p->sink && !p->finished) {
		p->finished = true;
		p->sink->done(srv, p, err);
	}
	process_bury(srv, p);
}

static struct json_object *argv_json(const struct process *p)
{
	struct json_object *argv = json_object_new_array();
	for (size_t i = 0; i < p->argv.len; i++)
		json_object_array_add(argv, json_object_new_string(p->argv.items[i]));
	return argv;
}

/* --- The end --- */

static struct json_object *status_fields(const struct process *p, struct json_object *o)
{
	bool signaled = p->killed || WIFSIGNALED(p->raw_status);
	json_object_object_add(o, "exitCode",
			       signaled ? NULL : json_object_new_int(WEXITSTATUS(p->raw_status)));
	const char *name = NULL;
	int sig = p->killed ? SIGKILL : signaled ? WTERMSIG(p->raw_status) : 0;
	if (sig)
		name = signal_name(sig);
	json_object_object_add(o, "signal",
			       !sig   ? NULL
			       : name ? json_object_new_string(name)
				      : json_object_new_int(sig));
	json_object_object_add(o, "timedOut", json_object_new_boolean(p->timed_out));
	return o;
}

static void finish(struct server *srv, struct process *p)
{
	if (p->finished)
		return;
	p->finished = true;
	p->end_ms = p->end_ms ? p->end_ms : serve_now_ms();
	close_streams(srv, p);
	serve_close_watch(srv, &p->ctl);
	serve_close_watch(srv, &p->timer);
	uint64_t duration = p->end_ms - p->start_ms;
	struct json_object *f = status_fields(p, json_object_new_object());
	json_object_object_add(f, "processId", json_object_new_string(p->id));
	json_object_object_add(f, "durationMs", json_object_new_int64((int64_t)duration));
	json_object_object_add(f, "bytes", json_object_new_int64((int64_t)p->delivered));
	audit_serve(&srv->audit, p->session->id, "serve_process_exit", p->session->owner,
		    json_object_get(f));
	json_object_object_del(f, "bytes");
	if (p->sink) {
		json_object_put(f);
		p->sink->done(srv, p, NULL);
		session_process_gone(srv, p->session);
		process_bury(srv, p);
		return;
	}
	if (p->exec) {
		if (p->answer) {
			struct json_object *r = status_fields(p, json_object_new_object());
			_cleanup_free_ char *o64 =
			    base64_encode(p->exec_out.buf, p->exec_out.len, NULL);
			json_object_object_add(r, "stdoutBase64", json_object_new_string(o64));
			json_object_put(f);
			f = NULL;
			_cleanup_free_ char *e64 =
			    base64_encode(p->exec_err.buf, p->exec_err.len, NULL);
			json_object_object_add(r, "stderrBase64", json_object_new_string(e64));
			json_object_object_add(r, "truncated",
					       json_object_new_boolean(p->exec_truncated));
			json_object_object_add(r, "durationMs",
					       json_object_new_int64((int64_t)duration));
			answer(srv, p, r, NULL);
		}
		json_object_put(f);
		session_process_gone(srv, p->session);
		process_bury(srv, p);
		return;
	}
	if (p->attached)
		serve_notify(srv, p->attached, "process/exited", f);
	else
		json_object_put(f);
	session_process_gone(srv, p->session);
	/* Keep the latest finished ones for process/list and attach. */
	size_t finished = 0;
	struct process *oldest = NULL;
	for (struct process *q = p->session->processes; q; q = q->next)
		if (q->finished) {
			finished++;
			oldest = q;
		}
	if (finished > FINISHED_KEPT && oldest)
		process_bury(srv, oldest);
}

static void maybe_finish(struct server *srv, struct process *p)
{
	if (p->exited && p->out.fd < 0 && p->err.fd < 0)
		finish(srv, p);
}

/* --- Output --- */

static void pause_output(struct server *srv, struct process *p, bool pause)
{
	if (p->out_paused == pause)
		return;
	p->out_paused = pause;
	uint32_t ev = pause ? 0 : EPOLLIN;
	if (p->out.fd >= 0)
		serve_rewatch(srv, &p->out, ev);
	if (p->err.fd >= 0)
		serve_rewatch(srv, &p->err, ev);
}

/* A process/output notification, written out rather than built with
 * json-c: the one message sent per chunk of output, whose every field is
 * ours (the id, the numbers, the stream's name) or base64, which needs no
 * escaping; building it as objects cost more than the transfer itself. */
static void send_output(struct server *srv, struct conn *c, const struct process *p, uint64_t seq,
			enum stream stream, const void *data, size_t n, bool capped)
{
	static const char head[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"process/output\",\"params\":{";
	char fields[160];
	int fl = snprintf(fields, sizeof(fields),
			  "\"processId\":\"%s\",\"seq\":%llu,\"stream\":\"%s\",%s\"dataBase64\":\"",
			  p->id, (unsigned long long)seq, stream_names[stream],
			  capped ? "\"capReached\":true," : "");
	size_t len = sizeof(head) - 1 + (size_t)fl + BASE64_ENCODED_LEN(n) + 4;
	char *line = xmalloc(len + 1);
	size_t at = 0;
	memcpy(line, head, sizeof(head) - 1);
	at += sizeof(head) - 1;
	memcpy(line + at, fields, (size_t)fl);
	at += (size_t)fl;
	at += base64_encode_to(line + at, data, n);
	memcpy(line + at, "\"}}\n", 4);
	at += 4;
	serve_send(srv, c, line, at);
}

static void deliver(struct server *srv, struct process *p, enum stream stream, const char *buf,
		    size_t n)
{
	if (p->cap && p->delivered >= p->cap) {
		p->exec_truncated = true;
		return;
	}
	if (p->cap && n > p->cap - p->delivered) {
		n = (size_t)(p->cap - p->delivered);
		p->exec_truncated = true;
	}
	p->delivered += n;
	if (p->sink) {
		p->sink->output(srv, p, stream, buf, n);
		struct conn *c = serve_conn(srv, p->attached);
		if (c && c->out_bytes > CONN_OUT_HIGH)
			pause_output(srv, p, true);
		return;
	}
	if (p->exec) {
		strbuf_add(stream == STREAM_STDERR ? &p->exec_err : &p->exec_out, buf, n);
		return;
	}
	uint64_t seq = ring_push(&p->ring, stream, buf, n);
	bool capped = p->cap && p->delivered >= p->cap;
	struct conn *c = serve_conn(srv, p->attached);
	if (!c)
		return;
	send_output(srv, c, p, seq, stream, buf, n, capped);
	if (c->out_bytes > CONN_OUT_HIGH)
		pause_output(srv, p, true);
}

/* final: the sandbox is gone; what is not there now never comes. */
static void stream_ready(struct server *srv, struct process *p, struct watch *w, enum stream st,
			 bool final)
{
	char buf[READ_CHUNK];
	for (int rounds = 0; (final || rounds < 4) && w->fd >= 0 && (final || !p->out_paused);
	     rounds++) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && !final)
			return;
		/* A pty's master reads EIO once no one holds its other end. */
		if (n <= 0) {
			serve_close_watch(srv, w);
			if (w == &p->out && p->pty)
				serve_close_watch(srv, &p->in);
			maybe_finish(srv, p);
			return;
		}
		deliver(srv, p, st, buf, (size_t)n);
	}
}

static void out_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct process *p = container_of(w, struct process, out);
	stream_ready(srv, p, w, p->pty ? STREAM_PTY : STREAM_STDOUT, false);
}

static void err_ready(struct server *srv, struct watch *w, uint32_t events)
{
	stream_ready(srv, container_of(w, struct process, err), w, STREAM_STDERR, false);
}

/* --- stdin --- */

static void in_flush(struct server *srv, struct process *p)
{
	while (p->in.fd >= 0 && p->stdin_queue.len) {
		ssize_t n = write(p->in.fd, p->stdin_queue.buf, p->stdin_queue.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			strbuf_reset(&p->stdin_queue);
			p->stdin_eof = true;
			break;
		}
		memmove(p->stdin_queue.buf, p->stdin_queue.buf + n, p->stdin_queue.len - (size_t)n);
		strbuf_setlen(&p->stdin_queue, p->stdin_queue.len - (size_t)n);
	}
	if (p->in.fd < 0)
		return;
	if (!p->stdin_queue.len && p->stdin_eof) {
		if (p->pty) {
			/* The terminal's end of file: its EOF character. */
			struct termios t;
			char eof = tcgetattr(p->in.fd, &t) == 0 ? (char)t.c_cc[VEOF] : 4;
			(void)!write(p->in.fd, &eof, 1);
			p->stdin_eof = false;
			serve_rewatch(srv, &p->in, 0);
			return;
		}
		serve_close_watch(srv, &p->in);
		return;
	}
	serve_rewatch(srv, &p->in, p->stdin_queue.len ? EPOLLOUT : 0);
}

static void in_ready(struct server *srv, struct watch *w, uint32_t events)
{
	in_flush(srv, container_of(w, struct process, in));
}

/* --- The control connection --- */

static pid_t pidfd_host_pid(int pidfd)
{
	_cleanup_free_ char *path = xasprintf("/proc/self/fdinfo/%d", pidfd);
	_cleanup_free_ char *text = NULL;
	size_t len;
	char link[64] = "";
	_cleanup_free_ char *fdpath = xasprintf("/proc/self/fd/%d", pidfd);
	ssize_t l = readlink(fdpath, link, sizeof(link) - 1);
	/* Only a pidfd says which process it is; anything else the sandbox
	 * could send is not believed. */
	if (l <= 0 || strcmp(link, "anon_inode:[pidfd]") != 0 ||
	    read_file(path, 4096, &text, &len) < 0)
		return 0;
	const char *pid = strstr(text, "\nPid:");
	return pid ? (pid_t)atoi(pid + 5) : 0;
}

static void timeout_or_grace(struct server *srv, struct process *p)
{
	if (!p->exited) {
		p->timed_out = true;
		/* The init kills its process group. */
		if (send_signal(p, SIGKILL) < 0)
			p->exited = p->killed = true;
		arm(p, 5000);
		return;
	}
	/* Exited, and a child it left holds its output: stop waiting. */
	close_streams(srv, p);
	maybe_finish(srv, p);
}

static void timer_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct process *p = container_of(w, struct process, timer);
	uint64_t n;
	if (read(w->fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return;
	timeout_or_grace(srv, p);
}

static struct json_object *started_json(const struct process *p)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "processId", json_object_new_string(p->id));
	json_object_object_add(r, "pid", p->pid_host ? json_object_new_int(p->pid_host) : NULL);
	return r;
}

static void exited(struct server *srv, struct process *p)
{
	p->exited = true;
	p->end_ms = serve_now_ms();
	serve_close_watch(srv, &p->ctl);
	if (p->out.fd >= 0 || p->err.fd >= 0) {
		if (p->timer.fd >= 0)
			arm(p, EXIT_GRACE_MS);
		else
			close_streams(srv, p);
	}
	maybe_finish(srv, p);
}

static void ctl_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct process *p = container_of(w, struct process, ctl);
	struct control_header h;
	char buf[64];
	_cleanup_free_ char *big = xmalloc(CONTROL_PAYLOAD_MAX);
	size_t len, nfds = 0;
	int fds[3];
	int n = control_recv(w->fd, &h, big, &len, fds, &nfds);
	(void)buf;
	if (n == -EAGAIN || n == -EINTR)
		return;
	if (n > 0 && h.kind == CONTROL_STARTED) {
		for (size_t i = 0; i < nfds; i++) {
			if (i == 0 && h.value > 0)
				p->pid_host = pidfd_host_pid(fds[i]);
			close(fds[i]);
		}
		if (h.value < 0) {
			_cleanup_error_ struct error err = ERROR_INIT;
			if (h.value == -EAGAIN)
				error_set(&err, ERROR_LIMIT,
					  "the session already runs %d processes",
					  CONTROL_EXECS_MAX);
			else
				error_errno(&err, ERROR_SETUP, -h.value, "starting the process");
			fail_start(srv, p, &err);
			return;
		}
		p->started = true;
		p->pid_inside = h.value;
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "processId", json_object_new_string(p->id));
		json_object_object_add(f, "argv", argv_json(p));
		json_object_object_add(f, "pid", json_object_new_int(p->pid_host));
		json_object_object_add(f, "detached", json_object_new_boolean(p->detached));
		if (p->tag)
			json_object_object_add(f, "tag", json_object_new_string(p->tag));
		audit_serve(&srv->audit, p->session->id, "serve_process_start", p->session->owner,
			    f);
		if (!p->exec)
			answer(srv, p, started_json(p), NULL);
		return;
	}
	if (n > 0 && h.kind == CONTROL_EXIT) {
		int32_t raw;
		if (len == sizeof(raw)) {
			memcpy(&raw, big, sizeof(raw));
			p->raw_status = raw;
		} else {
			p->raw_status = h.value > 128 ? h.value - 128 : (h.value & 0xff) << 8;
		}
		exited(srv, p);
		return;
	}
	if (n > 0) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		return;
	}
	/* The connection ended without an exit: the sandbox has. */
	if (!p->started) {
		_cleanup_error_ struct error err = ERROR_INIT;
		error_set(&err, ERROR_SETUP,
			  "the session's sandbox ended before the process started");
		fail_start(srv, p, &err);
		return;
	}
	p->killed = true;
	exited(srv, p);
}

/* --- Starting --- */

static int connect_control(const struct session *s, struct error *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (!s->control_socket || strlen(s->control_socket) >= sizeof(addr.sun_path))
		return error_set(err, ERROR_INTERNAL, "the session has no control socket");
	strcpy(addr.sun_path, s->control_socket);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "socket");
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int e = errno;
		close(fd);
		return error_errno(err, ERROR_SETUP, e, "connecting to the session's sandbox");
	}
	/* The socket must be held by the session's own supervisor. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.pid != s->supervisor) {
		close(fd);
		return error_set(err, ERROR_SETUP, "the session's control socket is not its own");
	}
	return fd;
}

struct start_params {
	struct strv argv;
	const char *cwd, *tag;
	struct strv env;
	bool stdin_pipe, detached, pty;
	int64_t cols, rows, timeout_ms, cap;
};

static int parse_start(struct json_object *params, bool exec, struct start_params *sp,
		       struct error *err)
{
	*sp = (struct start_params){.argv = STRV_INIT, .env = STRV_INIT, .cols = 80, .rows = 24};
	struct json_object *env = NULL, *pty = NULL;
	if (rpc_param_argv(params, "argv", true, &sp->argv, err) < 0 ||
	    rpc_param_string(params, "cwd", false, &sp->cwd, err) < 0 ||
	    rpc_param_string(params, "tag", false, &sp->tag, err) < 0 ||
	    rpc_param_bool(params, "stdin", &sp->stdin_pipe, err) < 0 ||
	    rpc_param_object(params, "env", &env, err) < 0 ||
	    rpc_param_int(params, "timeoutMs", false, 1, 1ll << 40, &sp->timeout_ms, err) < 0 ||
	    rpc_param_int(params, "outputBytesCap", false, 1, 1ll << 50, &sp->cap, err) < 0)
		return -1;
	if (!exec && (rpc_param_bool(params, "detached", &sp->detached, err) < 0 ||
		      rpc_param_object(params, "pty", &pty, err) < 0))
		return -1;
	if (exec && sp->cap > (int64_t)EXEC_OUTPUT_MAX)
		return error_set(err, ERROR_USAGE,
				 "process/exec collects at most %u bytes of output "
				 "(outputBytesCap); use process/start to stream more",
				 EXEC_OUTPUT_MAX);
	if (exec) {
		static const char *const not_exec[] = {"pty", "detached"};
		for (size_t i = 0; i < ARRAY_SIZE(not_exec); i++)
			if (json_object_object_get_ex(params, not_exec[i], NULL))
				return error_set(err, ERROR_USAGE,
						 "process/exec takes no \"%s\": use process/start",
						 not_exec[i]);
	}
	if (pty) {
		sp->pty = true;
		if (rpc_param_int(pty, "cols", false, 1, 10000, &sp->cols, err) < 0 ||
		    rpc_param_int(pty, "rows", false, 1, 10000, &sp->rows, err) < 0)
			return error_prefix(err, "pty");
	}
	if (env) {
		json_object_object_foreach(env, k, v)
		{
			size_t n = strlen(k);
			if (!n || strchr(k, '=') || !json_object_is_type(v, json_type_string) ||
			    strlen(json_object_get_string(v)) !=
				(size_t)json_object_get_string_len(v))
				return error_set(err, ERROR_USAGE,
						 "env must map names (no '=') to strings without "
						 "NUL bytes");
			strv_pushf(&sp->env, "%s%s=%s", SESSION_EXEC_ENV, k,
				   json_object_get_string(v));
		}
	}
	if (sp->cwd && !sp->cwd[0])
		return error_set(err, ERROR_USAGE, "cwd must not be empty");
	return 0;
}

static void start_params_release(struct start_params *sp)
{
	strv_release(&sp->argv);
	strv_release(&sp->env);
}

/* A channel for a process's output: [0] ours to read, [1] its to write.
 * An agent CLI's (an internal process's) is a socket pair: what it prints
 * becomes events the platform bills from, and a pipe can be opened again
 * through /proc/PID/fd/1 by any process of the sandbox (a tool the agent
 * runs) to print lines of its own there; a socket cannot be opened. */
static int out_channel(const struct process *p, int fds[2])
{
	if (!p->sink)
		return pipe2(fds, O_CLOEXEC);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
		return -1;
	/* One way, as a pipe is. */
	if (shutdown(fds[0], SHUT_WR) < 0 || shutdown(fds[1], SHUT_RD) < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		errno = e;
		return -1;
	}
	return 0;
}

/* The descriptors the process gets (the caller closes them) and ours. */
static int make_streams(struct process *p, const struct start_params *sp, int child[3],
			struct error *err)
{
	child[0] = child[1] = child[2] = -1;
	if (sp->pty) {
		int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		char name[128];
		if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 ||
		    ptsname_r(m, name, sizeof(name))) {
			int e = errno;
			if (m >= 0)
				close(m);
			return error_errno(err, ERROR_SETUP, e, "making a pty");
		}
		struct winsize ws = {.ws_row = (unsigned short)sp->rows,
				     .ws_col = (unsigned short)sp->cols};
		int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (slave < 0 || ioctl(m, TIOCSWINSZ, &ws) < 0) {
			int e = errno;
			close(m);
			if (slave >= 0)
				close(slave);
			return error_errno(err, ERROR_SETUP, e, "opening the pty");
		}
		p->out.fd = m;
		p->in.fd = fcntl(m, F_DUPFD_CLOEXEC, 3);
		child[0] = slave;
		child[1] = dup(slave);
		child[2] = dup(slave);
		if (p->in.fd < 0 || child[1] < 0 || child[2] < 0)
			return error_errno(err, ERROR_SETUP, errno, "dup");
		return 0;
	}
	int o[2], e[2];
	if (out_channel(p, o) < 0)
		return error_errno(err, ERROR_SETUP, errno, "pipe");
	p->out.fd = o[0];
	child[1] = o[1];
	if (out_channel(p, e) < 0)
		return error_errno(err, ERROR_SETUP, errno, "pipe");
	p->err.fd = e[0];
	child[2] = e[1];
	if (sp->stdin_pipe) {
		int i[2];
		if (pipe2(i, O_CLOEXEC) < 0)
			return error_errno(err, ERROR_SETUP, errno, "pipe");
		child[0] = i[0];
		p->in.fd = i[1];
	} else {
		child[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (child[0] < 0)
			return error_errno(err, ERROR_SETUP, errno, "/dev/null");
	}
	int fds[] = {p->out.fd, p->err.fd, p->in.fd};
	for (size_t k = 0; k < 3; k++)
		if (fds[k] >= 0 && fcntl(fds[k], F_SETFL, O_NONBLOCK) < 0)
			return error_errno(err, ERROR_SETUP, errno, "fcntl");
	return 0;
}

/* Starts what sp says in s for connection conn; takes sp's argv. The
 * process, or NULL with err. */
static struct process *launch(struct server *srv, struct session *s, struct start_params *sp,
			      bool exec, uint64_t conn, const struct process_sink *sink, void *ctx,
			      struct error *err)
{
	size_t running = 0;
	for (struct process *q = s->processes; q; q = q->next)
		running += !q->finished;
	if (running >= SESSION_PROCESSES_MAX) {
		error_set(err, ERROR_LIMIT, "the session already runs %d processes",
			  SESSION_PROCESSES_MAX);
		return NULL;
	}
	/* What the init runs: our helper, which gives the process its
	 * directory and variables and keeps it (and all it starts) from
	 * reaching into the sandbox's other processes: an agent CLI's output
	 * channel is what the platform bills from, and a process of the
	 * session (a hook running the agent's Makefile, one the agent left
	 * behind) could take it with pidfd_getfd, or make the CLI print
	 * through ptrace, to forge its events. */
	_cleanup_strv_ struct strv run = STRV_INIT;
	strv_push(&run, SANDBOX_SELF);
	strv_push(&run, SESSION_EXEC_ARG);
	strv_push(&run, SESSION_EXEC_NO_PTRACE);
	if (sp->cwd)
		strv_pushf(&run, "%s%s%s%s", SESSION_EXEC_CWD,
			   sp->cwd[0] == '/' ? "" : s->workspace, sp->cwd[0] == '/' ? "" : "/",
			   sp->cwd);
	for (size_t i = 0; i < sp->env.len; i++)
		strv_push(&run, sp->env.items[i]);
	strv_push(&run, "--");
	_cleanup_strbuf_ struct strbuf payload = STRBUF_INIT;
	for (size_t i = 0; i < sp->argv.len; i++)
		strv_push(&run, sp->argv.items[i]);
	for (size_t i = 0; i < run.len; i++)
		strbuf_add(&payload, run.items[i], strlen(run.items[i]) + 1);
	if (payload.len > CONTROL_PAYLOAD_MAX) {
		error_set(err, ERROR_LIMIT, "argv, cwd and env come to more than %d bytes",
			  CONTROL_PAYLOAD_MAX);
		return NULL;
	}

	struct process *p = xcalloc(1, sizeof(*p));
	snprintf(p->id, sizeof(p->id), "p-%llu", (unsigned long long)++srv->next_process);
	p->session = s;
	p->sink = sink;
	p->sink_ctx = ctx;
	p->argv = sp->argv;
	sp->argv = (struct strv)STRV_INIT;
	p->tag = sp->tag ? xstrdup(sp->tag) : NULL;
	p->exec = exec;
	p->pty = sp->pty;
	p->detached = sp->detached;
	p->started_by = conn;
	p->attached = exec ? 0 : conn;
	p->cap = sp->cap > 0 ? (uint64_t)sp->cap : exec ? EXEC_OUTPUT_DEFAULT : 0;
	p->ctl = (struct watch){.ready = ctl_ready, .fd = -1};
	p->out = (struct watch){.ready = out_ready, .fd = -1};
	p->err = (struct watch){.ready = err_ready, .fd = -1};
	p->in = (struct watch){.ready = in_ready, .fd = -1};
	p->timer = (struct watch){.ready = timer_ready, .fd = -1};
	p->exec_out = (struct strbuf)STRBUF_INIT;
	p->exec_err = (struct strbuf)STRBUF_INIT;
	p->stdin_queue = (struct strbuf)STRBUF_INIT;
	ring_init(&p->ring, sink ? 0 : srv->o->ring_bytes);
	p->start_ms = serve_now_ms();
	p->started_at = time(NULL);
	p->next = s->processes;
	s->processes = p;
	int child[3] = {-1, -1, -1};
	int r = make_streams(p, sp, child, err);
	uint64_t timeout = (uint64_t)sp->timeout_ms;
	if (r == 0 && (p->ctl.fd = connect_control(s, err)) < 0)
		r = -1;
	if (r == 0) {
		struct control_header h = {CONTROL_MAGIC, CONTROL_VERSION, CONTROL_EXEC, 0,
					   (int32_t)run.len};
		int e = control_send(p->ctl.fd, &h, payload.buf, payload.len, child, 3);
		if (e < 0)
			r = error_errno(err, ERROR_SETUP, -e, "sending the process to the sandbox");
	}
	for (int i = 0; i < 3; i++)
		if (child[i] >= 0)
			close(child[i]);
	if (r == 0 && timeout) {
		p->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (p->timer.fd < 0 || serve_watch(srv, &p->timer, EPOLLIN) < 0)
			r = error_errno(err, ERROR_SETUP, errno, "timerfd");
		else
			arm(p, timeout);
	} else if (r == 0) {
		/* Only for the grace after the exit. */
		p->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (p->timer.fd >= 0 && serve_watch(srv, &p->timer, EPOLLIN) < 0)
			serve_close_watch(srv, &p->timer);
	}
	if (r == 0 &&
	    (fcntl(p->ctl.fd, F_SETFL, O_NONBLOCK) < 0 || serve_watch(srv, &p->ctl, EPOLLIN) < 0 ||
	     (p->out.fd >= 0 && serve_watch(srv, &p->out, EPOLLIN) < 0) ||
	     (p->err.fd >= 0 && serve_watch(srv, &p->err, EPOLLIN) < 0) ||
	     (p->in.fd >= 0 && serve_watch(srv, &p->in, 0) < 0)))
		r = error_errno(err, ERROR_SETUP, errno, "epoll");
	if (r < 0) {
		/* The caller hears of it through err, not the sink. */
		p->sink = NULL;
		process_bury(srv, p);
		return NULL;
	}
	session_touch(s);
	return p;
}

static int start(struct server *srv, struct conn *c, struct json_object *params, bool exec,
		 struct pending **pending, struct error *err)
{
	const char *sid;
	if (rpc_param_string(params, "sessionId", true, &sid, err) < 0)
		return -1;
	struct session *s = session_find(srv, c, sid, true, err);
	if (!s)
		return -1;
	struct start_params sp;
	if (parse_start(params, exec, &sp, err) < 0) {
		start_params_release(&sp);
		return -1;
	}
	struct process *p = launch(srv, s, &sp, exec, c->id, NULL, NULL, err);
	start_params_release(&sp);
	if (!p)
		return -1;
	p->answer = *pending;
	return 1;
}

struct process *process_spawn(struct server *srv, struct session *s, const struct process_spawn *ps,
			      struct error *err)
{
	struct start_params sp = {.argv = STRV_INIT, .env = STRV_INIT, .cols = 80, .rows = 24};
	for (size_t i = 0; i < ps->argv->len; i++)
		strv_push(&sp.argv, ps->argv->items[i]);
	for (size_t i = 0; ps->env && i < ps->env->len; i++)
		strv_pushf(&sp.env, "%s%s", SESSION_EXEC_ENV, ps->env->items[i]);
	sp.cwd = ps->cwd;
	sp.tag = ps->tag;
	sp.timeout_ms = (int64_t)ps->timeout_ms;
	struct process *p = launch(srv, s, &sp, false, ps->conn, ps->sink, ps->ctx, err);
	start_params_release(&sp);
	return p;
}

int process_start(struct server *srv, struct conn *c, struct json_object *params,
		  struct pending **pending, struct json_object **result, struct error *err)
{
	return start(srv, c, params, false, pending, err);
}

int process_exec(struct server *srv, struct conn *c, struct json_object *params,
		 struct pending **pending, struct json_object **result, struct error *err)
{
	return start(srv, c, params, true, pending, err);
}

/* --- The other process methods --- */

static struct process *find_param(struct server *srv, struct conn *c, struct json_object *params,
				  struct error *err)
{
	const char *id;
	if (rpc_param_string(params, "processId", true, &id, err) < 0)
		return NULL;
	return find(srv, c, id, err);
}

int process_write(struct server *srv, struct conn *c, struct json_object *params,
		  struct pending **pending, struct json_object **result, struct error *err)
{
	struct process *p = find_param(srv, c, params, err);
	const char *data = NULL;
	bool eof = false;
	if (!p || rpc_param_string(params, "dataBase64", false, &data, err) < 0 ||
	    rpc_param_bool(params, "eof", &eof, err) < 0)
		return -1;
	if (p->in.fd < 0 || p->finished)
		return error_set(err, ERROR_USAGE,
				 p->finished
				     ? "process %s has exited"
				     : "process %s takes no input (start it with stdin: true "
				       "or a pty)",
				 p->id);
	size_t len = 0;
	_cleanup_free_ unsigned char *bytes = data ? base64_decode(data, strlen(data), &len) : NULL;
	if (data && !bytes)
		return error_set(err, ERROR_USAGE, "dataBase64 is not base64");
	if (p->stdin_queue.len + len > STDIN_QUEUE_MAX)
		return error_set(err, ERROR_BUSY,
				 "process %s has not read the %zu bytes it was sent already", p->id,
				 p->stdin_queue.len);
	if (p->stdin_eof && !p->pty)
		return error_set(err, ERROR_USAGE, "process %s's input was closed (eof)", p->id);
	if (len)
		strbuf_add(&p->stdin_queue, (const char *)bytes, len);
	p->stdin_eof = p->stdin_eof || eof;
	in_flush(srv, p);
	session_touch(p->session);
	*result = json_object_new_object();
	return 0;
}

int process_signal(struct server *srv, struct conn *c, struct json_object *params,
		   struct pending **pending, struct json_object **result, struct error *err)
{
	struct process *p = find_param(srv, c, params, err);
	if (!p)
		return -1;
	struct json_object *v = NULL;
	int sig = 0;
	json_object_object_get_ex(params, "signal", &v);
	if (v && json_object_is_type(v, json_type_int)) {
		int64_t n = json_object_get_int64(v);
		sig = n > 0 && n < 65 ? (int)n : 0;
	} else if (v && json_object_is_type(v, json_type_string)) {
		const char *name = json_object_get_string(v);
		if (!strncmp(name, "SIG", 3))
			name += 3;
		for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
			if (!strcmp(signals[i].name, name))
				sig = signals[i].sig;
	}
	if (!sig || !CONTROL_SIGNAL_OK(sig))
		return error_set(err, ERROR_USAGE,
				 "signal must be one of INT, TERM, HUP, QUIT, KILL, WINCH, USR1, "
				 "USR2, CONT, STOP, TSTP (or its number)");
	if (p->exited || !p->started)
		return error_set(err, ERROR_NOT_FOUND, "process %s is not running", p->id);
	int r = send_signal(p, sig);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "signalling process %s", p->id);
	*result = json_object_new_object();
	return 0;
}

int process_resize(struct server *srv, struct conn *c, struct json_object *params,
		   struct pending **pending, struct json_object **result, struct error *err)
{
	struct process *p = find_param(srv, c, params, err);
	int64_t cols = 0, rows = 0;
	if (!p || rpc_param_int(params, "cols", true, 1, 10000, &cols, err) < 0 ||
	    rpc_param_int(params, "rows", true, 1, 10000, &rows, err) < 0)
		return -1;
	if (!p->pty || p->in.fd < 0)
		return error_set(err, ERROR_USAGE, "process %s has no pty", p->id);
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
	if (ioctl(p->in.fd, TIOCSWINSZ, &ws) < 0)
		return error_errno(err, ERROR_SETUP, errno, "resizing the pty");
	*result = json_object_new_object();
	return 0;
}

int process_list(struct server *srv, struct conn *c, struct json_object *params,
		 struct pending **pending, struct json_object **result, struct error *err)
{
	const char *sid;
	if (rpc_param_string(params, "sessionId", true, &sid, err) < 0)
		return -1;
	struct session *s = session_find(srv, c, sid, false, err);
	if (!s)
		return -1;
	struct json_object *arr = json_object_new_array();
	for (struct process *p = s->processes; p; p = p->next) {
		if (!p->started)
			continue;
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "processId", json_object_new_string(p->id));
		json_object_object_add(o, "pid",
				       p->pid_host ? json_object_new_int(p->pid_host) : NULL);
		json_object_object_add(o, "argv", argv_json(p));
		json_object_object_add(o, "tag", p->tag ? json_object_new_string(p->tag) : NULL);
		json_object_object_add(o, "running", json_object_new_boolean(!p->finished));
		json_object_object_add(o, "startedAt", serve_time_json(p->started_at));
		json_object_array_add(arr, o);
	}
	*result = json_object_new_object();
	json_object_object_add(*result, "processes", arr);
	return 0;
}

int process_attach(struct server *srv, struct conn *c, struct json_object *params,
		   struct pending **pending, struct json_object **result, struct error *err)
{
	struct process *p = find_param(srv, c, params, err);
	int64_t from = 1;
	if (!p || rpc_param_int(params, "fromSeq", false, 0, INT64_MAX, &from, err) < 0)
		return -1;
	if (p->exec)
		return error_set(err, ERROR_USAGE, "process/exec processes answer once: no attach");
	if (p->sink)
		return error_set(
		    err, ERROR_USAGE,
		    "process %s belongs to an agent run: its output comes as agent/event", p->id);
	if (from < 1)
		from = 1;
	uint64_t first = ring_first_seq(&p->ring);
	bool gap = (uint64_t)from < first;
	uint64_t replay = gap ? first : (uint64_t)from;
	/* The answer, then the output from there, then whatever comes. */
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "gap", json_object_new_boolean(gap));
	json_object_object_add(r, "firstSeq", json_object_new_int64((int64_t)replay));
	struct pending *a = *pending;
	*pending = NULL;
	c->pending++;
	serve_answer(srv, a, r, NULL);
	uint64_t before = p->attached;
	p->attached = c->id;
	for (uint64_t seq = replay; seq < p->ring.next_seq; seq++) {
		const struct ring_chunk *ch = ring_get(&p->ring, seq);
		if (!ch)
			continue;
		send_output(srv, c, p, seq, (enum stream)ch->stream, ch->data, ch->len,
			    p->cap && seq + 1 == p->ring.next_seq && p->delivered >= p->cap);
	}
	if (p->finished) {
		struct json_object *f = status_fields(p, json_object_new_object());
		json_object_object_add(f, "processId", json_object_new_string(p->id));
		json_object_object_add(f, "durationMs",
				       json_object_new_int64((int64_t)(p->end_ms - p->start_ms)));
		serve_notify(srv, c->id, "process/exited", f);
	}
	/* The connection it streamed to before may have held it back. */
	if (before != c->id)
		pause_output(srv, p, c->out_bytes > CONN_OUT_HIGH);
	session_touch(p->session);
	return 1;
}

void process_conn_closed(struct server *srv, uint64_t conn)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		for (struct process *p = s->processes, *n; p; p = n) {
			n = p->next;
			if (p->attached == conn) {
				p->attached = 0;
				pause_output(srv, p, false);
			}
			if (p->started_by == conn && !p->detached && !p->finished && !p->exited) {
				/* Dies with its connection: the init kills its group. */
				p->started_by = 0;
				if (send_signal(p, SIGKILL) < 0)
					p->killed = true;
			}
		}
}

void process_resume_for(struct server *srv, uint64_t conn)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		for (struct process *p = s->processes; p; p = p->next)
			if (p->attached == conn && p->out_paused)
				pause_output(srv, p, false);
}

void process_session_ended(struct server *srv, struct session *s)
{
	while (s->processes) {
		struct process *p = s->processes;
		if (!p->finished) {
			if (!p->started) {
				_cleanup_error_ struct error err = ERROR_INIT;
				error_set(&err, ERROR_NOT_FOUND, "the session ended");
				answer(srv, p, NULL, &err);
				if (p->sink) {
					p->finished = true;
					p->sink->done(srv, p, &err);
				}
			} else {
				/* What it wrote before the end, then its end. */
				stream_ready(srv, p, &p->out, p->pty ? STREAM_PTY : STREAM_STDOUT,
					     true);
				stream_ready(srv, p, &p->err, STREAM_STDERR, true);
				if (!p->exited)
					p->killed = true;
				p->exited = true;
				finish(srv, p);
			}
		}
		if (s->processes == p)
			process_bury(srv, p);
	}
}
