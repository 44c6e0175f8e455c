/* Sessions (API.md session/..., workspace/gc): one sandbox per owner and key,
 * planned by the library exactly as a command-line run is, from a policy
 * file of the session's own (never a config the workspace holds: the agent
 * writes there). The sandbox's first command only holds it up; its
 * supervisor is a child of the daemon that reports, on a pipe, its control
 * socket and then the moment the sandbox is up. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-sandbox.h"
#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/dirs.h"
#include "base/io.h"
#include "base/units.h"
#include "base/xalloc.h"
#include "config/config.h"
#include "inside/init.h"
#include "inside/inside.h"
#include "inside/session.h"
#include "sandbox/launch.h"
#include "sandbox/prepare.h"
#include "policy/agent_profile.h"
#include "policy/env.h"
#include "policy/pattern.h"
#include "serve/internal.h"
#include "serve/mcp.h"
#include "workspace/instance.h"

/* How long a closed session stays visible to session/get. */
#define CLOSED_KEPT_MS (10u * 60 * 1000)

static const char *state_name(const struct session *s)
{
	switch (s->state) {
	case SESSION_STARTING:
		return "starting";
	case SESSION_READY:
		if (s->run)
			return "busy";
		for (struct process *p = s->processes; p; p = p->next)
			if (p->started && !p->finished)
				return "busy";
		return "ready";
	case SESSION_CLOSING:
		return "closing";
	case SESSION_CLOSED:
		return "closed";
	case SESSION_EXPIRED:
		return "expired";
	}
	return "closed";
}

static bool live(const struct session *s)
{
	return s->state == SESSION_STARTING || s->state == SESSION_READY;
}

static struct json_object *session_json(const struct session *s)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "sessionId", json_object_new_string(s->id));
	struct json_object *key = json_object_new_object();
	json_object_object_add(key, "user", json_object_new_string(s->user));
	json_object_object_add(key, "chat", json_object_new_string(s->chat));
	json_object_object_add(o, "key", key);
	json_object_object_add(o, "state", json_object_new_string(state_name(s)));
	json_object_object_add(o, "createdAt", serve_time_json(s->created_at));
	json_object_object_add(o, "lastUsedAt", serve_time_json(s->last_used_at));
	int n = 0;
	for (struct process *p = s->processes; p; p = p->next)
		n += p->started && !p->finished;
	json_object_object_add(o, "processes", json_object_new_int(n));
	json_object_object_add(o, "workspace", json_object_new_string(s->workspace));
	return o;
}

static struct json_object *created_json(const struct session *s)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "sessionId", json_object_new_string(s->id));
	json_object_object_add(o, "workspace", json_object_new_string(s->workspace));
	json_object_object_add(o, "hostWorkspace", json_object_new_string(s->workspace));
	json_object_object_add(o, "state", json_object_new_string("ready"));
	return o;
}

void session_touch(struct session *s)
{
	s->last_used_ms = serve_now_ms();
	s->last_used_at = time(NULL);
}

struct session *session_find(struct server *srv, struct conn *c, const char *id, bool need_live,
			     struct error *err)
{
	for (struct session *s = srv->sessions; s; s = s->next) {
		if (strcmp(s->id, id) != 0)
			continue;
		if (strcmp(s->owner, c->owner) != 0) {
			error_set(err, ERROR_DENIED, "session %s belongs to another owner", id);
			return NULL;
		}
		if (need_live && s->state != SESSION_READY) {
			error_set(err, ERROR_NOT_FOUND, "session %s is %s", id, state_name(s));
			if (s->ended_reason)
				error_hint(err, "%s", s->ended_reason);
			return NULL;
		}
		return s;
	}
	error_set(err, ERROR_NOT_FOUND, "no session %s", id);
	return NULL;
}

void session_free(struct session *s)
{
	mcp_session_free(s->mcp);
	for (size_t i = 0; i < s->hooks_before_len; i++)
		strv_release(&s->hooks_before[i]);
	for (size_t i = 0; i < s->hooks_after_len; i++)
		strv_release(&s->hooks_after[i]);
	free(s->hooks_before);
	free(s->hooks_after);
	free(s->skills_dir);
	free(s->agent_command[0]);
	free(s->agent_command[1]);
	if (s->planned)
		sandbox_spec_release(&s->spec);
	if (s->workspace_fd >= 0)
		close(s->workspace_fd);
	if (s->policy_file) {
		unlink(s->policy_file);
		free(s->policy_file);
	}
	strbuf_release(&s->ready_text);
	for (struct pending *p = s->waiting_create, *n; p; p = n) {
		n = p->next;
		serve_pending_free(p);
	}
	for (struct pending *p = s->waiting_close, *n; p; p = n) {
		n = p->next;
		serve_pending_free(p);
	}
	free(s->owner);
	free(s->user);
	free(s->chat);
	free(s->workspace);
	free(s->control_socket);
	free(s->ended_reason);
	free(s);
}

/* --- The workspace --- */

/* Opens (making it, 0700) each component beneath dirfd, never through a
 * symlink. Returns a descriptor or -errno. */
static int open_dirs_at(int dirfd, char *const *names, size_t n)
{
	int fd = dup(dirfd);
	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		if (mkdirat(fd, names[i], 0700) < 0 && errno != EEXIST) {
			int e = errno;
			close(fd);
			return -e;
		}
		int next = openat(fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next < 0)
			return -e;
		fd = next;
	}
	return fd;
}

static int mkdir_p(const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	return mkdir(p, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

/* workspaces/<owner>/<user>/chat-<chat>, and the marker beside it that
 * records its last use and retention. */
static int workspace_open(struct server *srv, struct session *s, struct error *err)
{
	_cleanup_free_ char *root = xasprintf("%s/workspaces", srv->data_dir);
	int r = mkdir_p(root);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "creating %s", root);
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (rootfd < 0 || fstat(rootfd, &st) < 0 || st.st_uid != srv->uid || (st.st_mode & 022))
		return error_set(err, ERROR_SETUP,
				 "%s must be our directory, not writable by others", root);
	_cleanup_free_ char *chat = xasprintf("chat-%s", s->chat);
	char *names[] = {s->owner, s->user, chat};
	int fd = open_dirs_at(rootfd, names, 3);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, -fd, "creating the workspace under %s", root);
	s->workspace_fd = fd;
	s->workspace = xasprintf("%s/%s/%s/%s", root, s->owner, s->user, chat);
	return 0;
}

static void marker_write(struct server *srv, const struct session *s, unsigned retain_days)
{
	_cleanup_free_ char *path = xasprintf("%s/workspaces/%s/%s/.chat-%s.json", srv->data_dir,
					      s->owner, s->user, s->chat);
	_cleanup_free_ char *text = xasprintf("{\"lastUsed\":%lld,\"retainDays\":%u}\n",
					      (long long)time(NULL), retain_days);
	/* Unchecked beyond the write: a lost marker only makes gc see the
	 * workspace as older than it is, which the live-session check
	 * covers. */
	(void)io_write_file_atomic(path, text, strlen(text), 0600);
}

/* --- Starting the sandbox --- */

static void fail_waiters(struct server *srv, struct pending **list, const struct error *err)
{
	while (*list) {
		struct pending *p = *list;
		*list = p->next;
		serve_answer(srv, p, NULL, err);
	}
}

static void answer_waiters(struct server *srv, struct pending **list,
			   struct json_object *(*make)(const struct session *),
			   const struct session *s)
{
	while (*list) {
		struct pending *p = *list;
		*list = p->next;
		serve_answer(srv, p, make ? make(s) : json_object_new_object(), NULL);
	}
}

static void audit_session(struct server *srv, const struct session *s, const char *event,
			  const char *reason)
{
	struct json_object *f = json_object_new_object();
	json_object_object_add(f, "user", json_object_new_string(s->user));
	json_object_object_add(f, "chat", json_object_new_string(s->chat));
	json_object_object_add(f, "workspace", json_object_new_string(s->workspace));
	if (reason)
		json_object_object_add(f, "reason", json_object_new_string(reason));
	audit_serve(&srv->audit, s->id, event, s->owner, f);
}

static void ready_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct session *s = container_of(w, struct session, ready);
	char buf[4096];
	ssize_t n = read(w->fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0 && s->ready_text.len < 64 * 1024)
		strbuf_add(&s->ready_text, buf, (size_t)n);
	/* "S<control socket>\n", then 'R' from the supervisor; or
	 * "E<message>\n" when it failed. */
	const char *t = strbuf_str(&s->ready_text);
	if (t[0] == 'S' && strchr(t, '\n')) {
		if (!s->control_socket)
			s->control_socket = xstrndup(t + 1, (size_t)(strchr(t, '\n') - t - 1));
		t = strchr(t, '\n') + 1;
	}
	if (s->control_socket && t[0] == 'R' && !s->ready_seen && s->state == SESSION_STARTING) {
		s->ready_seen = true;
		s->state = SESSION_READY;
		session_touch(s);
		audit_session(srv, s, "serve_session_start", NULL);
		answer_waiters(srv, &s->waiting_create, created_json, s);
	}
	if (n == 0)
		serve_close_watch(srv, w);
}

/* In the child: the supervisor of the session's sandbox. */
static _Noreturn void supervise_session(struct server *srv, struct session *s, int ready_w)
{
	/* Nothing of the daemon's but the pipe: its clients' sockets held
	 * here would keep them open after the daemon closed them. */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != ready_w)
			close(fd);
	if (ready_w > 3)
		syscall(SYS_close_range, (unsigned)ready_w + 1, ~0u, 0);
	setsid();
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	struct error err = ERROR_INIT;
	_cleanup_free_ char *name = xasprintf("session-%s", s->id);
	struct instance_claim claim = INSTANCE_CLAIM_INIT;
	if (instance_register(&s->spec, srv->o->envp, name, &claim, &err) < 0) {
		dprintf(ready_w, "E%s\n", err.msg);
		_exit(1);
	}
	if (dprintf(ready_w, "S%s\n", claim.control_socket) < 0)
		_exit(1);
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct sandbox_io io = {.in = devnull,
				.out = devnull,
				.err = STDERR_FILENO,
				.control_socket = claim.control_socket,
				.ready_fd = ready_w,
				.run_id = s->id};
	struct sandbox_result result = {0};
	int status = sandbox_launch(&s->spec, &io, &result, &err);
	/* Out of inotify instances or descriptors: a limit of the host's,
	 * not a fault ("L"). */
	if (status < 0)
		dprintf(ready_w, "%c%s\n", err.errnum == EMFILE || err.errnum == ENFILE ? 'L' : 'E',
			err.msg);
	instance_unregister(&claim);
	_exit(status < 0 ? 1 : status & 0xff);
}

static void child_ready(struct server *srv, struct watch *w, uint32_t events);

/* The directory holding the workspace (and its marker). */
static int workspace_parent_open(const struct session *s)
{
	_cleanup_free_ char *parent = xstrdup(s->workspace);
	*strrchr(parent, '/') = '\0';
	return open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void removal_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct session *s = container_of(w, struct session, removal);
	int status = 0;
	if (waitpid(s->remover, &status, WNOHANG) != s->remover)
		return;
	serve_close_watch(srv, w);
	s->remover = 0;
	srv->removals--;
	_cleanup_close_ int pfd = workspace_parent_open(s);
	_cleanup_free_ char *chat = xasprintf("chat-%s", s->chat);
	struct stat st;
	if (pfd >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    fstatat(pfd, chat, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
		_cleanup_free_ char *marker = xasprintf(".chat-%s.json", s->chat);
		unlinkat(pfd, marker, 0);
		audit_session(srv, s, "serve_workspace_remove", "deleteWorkspace");
	}
	answer_waiters(srv, &s->waiting_close, NULL, s);
}

/* Removes the workspace of an ended session in a child: a tree the agent
 * made may take long to remove, and the daemon answers everyone
 * meanwhile. Until it is done the key counts as in use. Returns 0, or -1
 * when no child could be started (then nothing is removed). */
static int removal_start(struct server *srv, struct session *s)
{
	_cleanup_close_ int pfd = workspace_parent_open(s);
	if (pfd < 0)
		return -1;
	_cleanup_free_ char *chat = xasprintf("chat-%s", s->chat);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* Nothing of the daemon's but the directory. */
		if (pfd > 3)
			syscall(SYS_close_range, 3u, (unsigned)pfd - 1, 0);
		syscall(SYS_close_range, (unsigned)pfd + 1, ~0u, 0);
		_exit(io_remove_tree_at(pfd, chat) < 0 ? 1 : 0);
	}
	s->remover = pid;
	s->removal =
	    (struct watch){.ready = removal_ready, .fd = (int)syscall(SYS_pidfd_open, pid, 0)};
	if (s->removal.fd < 0 || serve_watch(srv, &s->removal, EPOLLIN) < 0) {
		/* Waited for here, then: slow, but done. */
		if (s->removal.fd >= 0)
			serve_close_watch(srv, &s->removal);
		waitpid(pid, NULL, 0);
		s->remover = 0;
		return -1;
	}
	srv->removals++;
	return 0;
}

static int launch(struct server *srv, struct session *s, struct error *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_errno(err, ERROR_SETUP, errno, "pipe");
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return error_errno(err, ERROR_SETUP, e, "fork");
	}
	if (pid == 0) {
		close(pipefd[0]);
		supervise_session(srv, s, pipefd[1]);
	}
	close(pipefd[1]);
	s->supervisor = pid;
	s->ready = (struct watch){.ready = ready_ready, .fd = pipefd[0]};
	s->child = (struct watch){.ready = child_ready, .fd = (int)syscall(SYS_pidfd_open, pid, 0)};
	if (s->child.fd < 0 || serve_watch(srv, &s->child, EPOLLIN) < 0 ||
	    serve_watch(srv, &s->ready, EPOLLIN) < 0) {
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return error_errno(err, ERROR_SETUP, e, "watching the session's sandbox");
	}
	srv->sessions_live++;
	return 0;
}

static void bury_session(struct server *srv, struct session *s)
{
	for (struct session **pp = &srv->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	s->next = srv->dead_sessions;
	srv->dead_sessions = s;
}

static void child_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct session *s = container_of(w, struct session, child);
	int status = 0;
	if (waitpid(s->supervisor, &status, WNOHANG) != s->supervisor)
		return;
	/* The rest of its report first: an error it wrote before exiting. */
	while (s->ready.fd >= 0)
		ready_ready(srv, &s->ready, EPOLLIN);
	serve_close_watch(srv, w);
	srv->sessions_live--;
	s->supervisor = 0;
	mcp_session_end(srv, s);
	bool was_starting = s->state == SESSION_STARTING;
	if (was_starting) {
		const char *t = strbuf_str(&s->ready_text);
		const char *e = strstr(t, "\nE"), *l = strstr(t, "\nL");
		bool limit = t[0] == 'L' || l;
		const char *msg = t[0] == 'E' || t[0] == 'L' ? t + 1
				  : e			     ? e + 2
				  : l			     ? l + 2
							     : "the sandbox ended at once";
		_cleanup_error_ struct error err = ERROR_INIT;
		_cleanup_free_ char *m = xstrndup(msg, strcspn(msg, "\n"));
		error_set(&err, limit ? ERROR_LIMIT : ERROR_SETUP,
			  "the session's sandbox did not start: %s", m);
		if (limit)
			error_hint(&err,
				   "each session holds up to 3 inotify instances and about 100 "
				   "descriptors: raise fs.inotify.max_user_instances or the "
				   "descriptor limit, or close sessions");
		fail_waiters(srv, &s->waiting_create, &err);
		s->ended_reason = xstrdup(err.msg);
		process_session_ended(srv, s);
		s->state = SESSION_CLOSED;
		bury_session(srv, s);
		return;
	}
	if (live(s) || s->state == SESSION_CLOSING) {
		if (!s->ended_reason)
			s->ended_reason =
			    xstrdup(WIFEXITED(status) && WEXITSTATUS(status) == 124
					? "the session's time limit (limits.timeoutMs) "
					  "was reached"
					: "the session's sandbox ended");
		if (s->state != SESSION_EXPIRED)
			s->state = SESSION_CLOSED;
	}
	process_session_ended(srv, s);
	agent_run_session_ended(srv, s);
	audit_session(srv, s, "serve_session_close", s->ended_reason);
	if (s->delete_workspace && s->workspace_fd >= 0) {
		/* session/close is answered when the workspace is gone. */
		if (removal_start(srv, s) == 0)
			return;
	} else {
		marker_write(srv, s, 0);
	}
	answer_waiters(srv, &s->waiting_close, NULL, s);
}

void session_end(struct server *srv, struct session *s, enum session_state state,
		 const char *reason)
{
	if (!live(s))
		return;
	if (reason && !s->ended_reason)
		s->ended_reason = xstrdup(reason);
	s->state = state;
	/* The supervisor kills the init, and with it the whole pid
	 * namespace: nothing started in the sandbox survives. */
	if (s->supervisor > 0)
		kill(s->supervisor, SANDBOX_KILL_SIGNAL);
}

void session_process_gone(struct server *srv, struct session *s)
{
	session_touch(s);
}

/* --- Methods --- */

static int key_param(struct json_object *params, const char **user, const char **chat,
		     struct error *err)
{
	struct json_object *key;
	if (rpc_param_object(params, "key", &key, err) < 0)
		return -1;
	if (!key)
		return error_set(
		    err, ERROR_USAGE,
		    "missing the parameter \"key\" ({\"user\": NAME, \"chat\": NAME})");
	if (rpc_param_string(key, "user", true, user, err) < 0 ||
	    rpc_param_string(key, "chat", true, chat, err) < 0)
		return error_prefix(err, "key");
	if (!serve_name_ok(*user) || !serve_name_ok(*chat))
		return error_set(err, ERROR_USAGE,
				 "key.user and key.chat must be 1 to 64 letters, digits, '.', '_', "
				 "'@' or '-', not starting with '.' or '-'");
	return 0;
}

static int env_param(struct json_object *params, struct strv *out, struct error *err)
{
	struct json_object *env;
	if (rpc_param_object(params, "env", &env, err) < 0)
		return -1;
	if (!env)
		return 0;
	json_object_object_foreach(env, k, v)
	{
		size_t n = strlen(k);
		if (!n ||
		    n !=
			strspn(k,
			       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ||
		    (k[0] >= '0' && k[0] <= '9'))
			return error_set(err, ERROR_USAGE,
					 "env: a variable's name is letters, digits and '_', not "
					 "starting with a digit");
		if (!json_object_is_type(v, json_type_string) ||
		    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
			return error_set(err, ERROR_USAGE,
					 "env.%s must be a string without NUL bytes", k);
		strv_pushf(out, "%s=%s", k, json_object_get_string(v));
	}
	return 0;
}

static int limits_param(struct json_object *params, struct limit_request *l, struct error *err)
{
	struct json_object *o;
	if (rpc_param_object(params, "limits", &o, err) < 0 || !o)
		return o ? 0 : (err->kind ? -1 : 0);
	int64_t mem = 0, pids = 0, timeout = 0;
	if (rpc_param_int(o, "memoryBytes", false, 4ll << 20, 1ll << 50, &mem, err) < 0 ||
	    rpc_param_int(o, "pids", false, 1, 1 << 22, &pids, err) < 0 ||
	    rpc_param_int(o, "timeoutMs", false, 1, 1ll << 40, &timeout, err) < 0)
		return error_prefix(err, "limits");
	struct json_object *cpus = NULL;
	if (json_object_object_get_ex(o, "cpus", &cpus) &&
	    !json_object_is_type(cpus, json_type_null)) {
		double d = json_object_get_double(cpus);
		if ((!json_object_is_type(cpus, json_type_double) &&
		     !json_object_is_type(cpus, json_type_int)) ||
		    !(d >= 0.01 && d <= 4096))
			return error_set(err, ERROR_USAGE,
					 "limits.cpus must be a number from 0.01 to 4096");
		l->cpus = (unsigned long long)(d * 1000 + 0.5);
	}
	l->memory = (unsigned long long)mem;
	l->pids = (unsigned long long)pids;
	l->timeout = (unsigned long long)timeout;
	return 0;
}

static int backend_param(struct json_object *params, struct error *err)
{
	const char *backend = NULL;
	if (rpc_param_string(params, "backend", false, &backend, err) < 0)
		return -1;
	if (backend && strcmp(backend, "bwrap") != 0)
		return error_set(err, ERROR_USAGE,
				 "backend %s is not available here: this daemon runs \"bwrap\"",
				 !strcmp(backend, "docker") ? "docker" : "other than bwrap");
	return 0;
}

int session_mkdirs(struct session *s, const char *rel, mode_t mode, struct error *err)
{
	int d = openat(s->workspace_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return error_errno(err, ERROR_SETUP, errno, "the workspace");
	_cleanup_free_ char *copy = xstrdup(rel);
	char *save = NULL;
	for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (mkdirat(d, part, mode) < 0 && errno != EEXIST) {
			int e = errno;
			close(d);
			return error_errno(err, ERROR_SETUP, e, "making %s in the workspace", rel);
		}
		int next = openat(d, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(d);
		if (next < 0)
			return error_errno(err, ERROR_DENIED, e == ELOOP ? ENOTDIR : e,
					   "%s in the workspace is not a directory", rel);
		d = next;
	}
	close(d);
	return 0;
}

/* At most this many hooks in each phase. */
#define HOOKS_MAX 16

static int hook_list(struct json_object *hooks, const char *phase, struct strv **out, size_t *len,
		     struct error *err)
{
	struct json_object *v;
	if (!hooks || !json_object_object_get_ex(hooks, phase, &v) ||
	    json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) > HOOKS_MAX)
		return error_set(err, ERROR_USAGE,
				 "hooks.%s must be an array of at most %d argv arrays "
				 "([[\"make\", \"test\"], ...])",
				 phase, HOOKS_MAX);
	size_t n = json_object_array_length(v);
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		(*out)[i] = (struct strv)STRV_INIT;
		*len = i + 1;
		struct json_object *one = json_object_new_object();
		json_object_object_add(one, "argv",
				       json_object_get(json_object_array_get_idx(v, i)));
		int r = rpc_param_argv(one, "argv", true, &(*out)[i], err);
		json_object_put(one);
		if (r < 0)
			return error_prefix(err, "hooks.%s[%zu]", phase, i);
	}
	return 0;
}

/* hooks{before, after} and skills{dir} of session/create. */
static int agent_params(struct conn *c, struct json_object *params, struct session *s,
			struct error *err)
{
	struct json_object *hooks, *skills;
	if (rpc_param_object(params, "hooks", &hooks, err) < 0 ||
	    rpc_param_object(params, "skills", &skills, err) < 0)
		return -1;
	if (hooks) {
		json_object_object_foreach(hooks, k, v)
		{
			(void)v;
			if (strcmp(k, "before") && strcmp(k, "after"))
				return error_set(err, ERROR_USAGE,
						 "hooks takes \"before\" and \"after\" only");
		}
	}
	if (hook_list(hooks, "before", &s->hooks_before, &s->hooks_before_len, err) < 0 ||
	    hook_list(hooks, "after", &s->hooks_after, &s->hooks_after_len, err) < 0)
		return -1;
	const char *dir = NULL;
	if (rpc_param_string(skills, "dir", skills != NULL, &dir, err) < 0)
		return error_prefix(err, "skills");
	if (dir) {
		if (dir[0] != '/')
			return error_set(err, ERROR_USAGE, "skills.dir must be an absolute path");
		/* The daemon reads it as its own user and copies it into the
		 * workspace: a host path only a trusted caller may name. */
		if (!c->trusted)
			return error_set(
			    err, ERROR_POLICY,
			    "skills.dir is read on the host as the daemon's user: only "
			    "the daemon's own user (or root) may give one");
		s->skills_dir = xstrdup(dir);
	}
	return 0;
}

static int write_policy(struct server *srv, struct session *s, struct json_object *policy,
			struct error *err)
{
	s->policy_file = xasprintf("%s/session-%s.json", srv->state_dir, s->id);
	const char *text =
	    policy ? json_object_to_json_string_ext(policy, JSON_C_TO_STRING_PRETTY) : "{}";
	int r = io_write_file_atomic(s->policy_file, text, strlen(text), 0600);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "writing %s", s->policy_file);
	return 0;
}

static int plan(struct server *srv, struct conn *c, struct session *s, const struct strv *env,
		const struct limit_request *limits, struct error *err)
{
	static char *const hold[] = {SANDBOX_SELF, SESSION_HOLD_ARG, NULL};
	/* Every owner's workspaces (and the shelves beside them) are under
	 * the data directory, and the daemon's state under the state one:
	 * a session sees its own workspace and neither. */
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	rule_list_add(&rules, srv->data_dir, ACCESS_EXCLUDE, LAYER_CLI,
		      "serve: other sessions' workspaces");
	rule_list_add(&rules, srv->state_dir, ACCESS_EXCLUDE, LAYER_CLI,
		      "serve: the daemon's state");
	rule_list_add(&rules, s->workspace, ACCESS_RW, LAYER_CLI, "serve: the session's workspace");
	/* The sandbox runs as the daemon's uid, not the client's: a client
	 * of another uid (--allow-uid) must not read through it the home
	 * its own uid cannot. */
	_cleanup_free_ char *home = dirs_home(srv->o->envp);
	if (home && !c->trusted)
		rule_list_add(&rules, home, ACCESS_EXCLUDE, LAYER_CLI,
			      "serve: the daemon user's home (a client of another uid)");
	/* The agents of a session keep their state in its workspace
	 * (agent.c); the daemon user's own (logins, conversations, settings)
	 * is no session's to read or write. */
	for (size_t i = 0; home && c->trusted && i < agent_profiles_len; i++)
		for (const char *const *st = agent_profiles[i].state; st && *st; st++) {
			_cleanup_free_ char *path = xasprintf("%s%s", home, *st + 1);
			rule_list_add(&rules, path, ACCESS_EXCLUDE, LAYER_CLI,
				      "serve: the daemon user's agent state");
		}
	if (home && c->trusted) {
		_cleanup_free_ char *path = xasprintf("%s/.claude.json", home);
		rule_list_add(&rules, path, ACCESS_EXCLUDE, LAYER_CLI,
			      "serve: the daemon user's agent state");
	}
	/* Wherever the daemon user keeps it (outside the home too, for a
	 * client of any uid): the @agents preset would open that directory
	 * read-write as the agent's state, every chat's conversations in
	 * it. */
	static const char *const state_vars[] = {"CLAUDE_CONFIG_DIR", "CODEX_HOME"};
	for (size_t i = 0; i < ARRAY_SIZE(state_vars); i++) {
		const char *dir = env_get(srv->o->envp, state_vars[i]);
		if (dir && dir[0] == '/') {
			_cleanup_free_ char *escaped = pattern_escape(dir);
			rule_list_add(&rules, escaped, ACCESS_EXCLUDE, LAYER_CLI,
				      "serve: the daemon user's agent state");
		}
	}
	/* The daemon's credentials (serve --credential), but for one whose
	 * base URL the session's env sets: that endpoint wins (API.md). */
	static const struct {
		const char *name, *base_url;
	} base_urls[] = {{"anthropic", "ANTHROPIC_BASE_URL"}, {"openai", "OPENAI_BASE_URL"}};
	_cleanup_strv_ struct strv creds = STRV_INIT;
	for (size_t i = 0; i < srv->o->credentials_len; i++) {
		const char *name = srv->o->credentials[i];
		bool overridden = false;
		for (size_t k = 0; k < ARRAY_SIZE(base_urls); k++) {
			if (strcmp(base_urls[k].name, name))
				continue;
			size_t n = strlen(base_urls[k].base_url);
			for (size_t e = 0; env && e < env->len; e++)
				overridden |= !strncmp(env->items[e], base_urls[k].base_url, n) &&
					      env->items[e][n] == '=';
		}
		if (!overridden)
			strv_push(&creds, name);
	}
	struct sandbox_request req = {
	    .credentials = &creds,
	    .rules = &rules,
	    .cwd = s->workspace,
	    .envp = srv->o->envp,
	    .config_path = s->policy_file,
	    .env_set = env,
	    .command = hold,
	    .agent = "none",
	    .limits = limits,
	    /* The session's policy decides these, as a project config does
	     * for a CLI run: no front-end flag overrides it. */
	    .network = REQUEST_UNSET,
	    .docker = REQUEST_UNSET,
	    .read_only = REQUEST_UNSET,
	};
	mcp_session_binds(s->mcp, &req.run_bind_dirs, &req.run_bind_names);
	for (int round = 0; round < 2; round++) {
		if (sandbox_plan(&req, &s->spec, err) < 0)
			return error_prefix(err, "policy");
		s->planned = true;
		int r = sandbox_prepare_host(&s->spec, err);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		sandbox_spec_release(&s->spec);
		s->planned = false;
	}
	if (!s->planned)
		return error_set(err, ERROR_INTERNAL, "the plan changed twice");
	for (size_t i = 0; i < ARRAY_SIZE(s->agent_command); i++)
		if (s->spec.cfg.agent_commands[i])
			s->agent_command[i] = xstrdup(s->spec.cfg.agent_commands[i]);
	if (sandbox_spec_trust_refused(&s->spec) && !srv->o->allow_loosening && !c->trusted) {
		trust_refuse(&s->spec.trust, err);
		err->kind = ERROR_POLICY;
		error_hint(err, "the daemon accepts such a policy from a trusted owner or with "
				"serve --allow-loosening");
		return -1;
	}
	return 0;
}

static bool gc_removing(const struct server *srv, const char *owner, const char *user,
			const char *chat);

static bool workspace_in_use(struct server *srv, const char *owner, const char *user,
			     const char *chat)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		if ((live(s) || s->state == SESSION_CLOSING || s->supervisor > 0 ||
		     s->remover > 0) &&
		    !strcmp(s->owner, owner) && !strcmp(s->user, user) && !strcmp(s->chat, chat))
			return true;
	return gc_removing(srv, owner, user, chat);
}

int session_create(struct server *srv, struct conn *c, struct json_object *params,
		   struct pending **pending, struct json_object **result, struct error *err)
{
	const char *user, *chat;
	if (key_param(params, &user, &chat, err) < 0 || backend_param(params, err) < 0)
		return -1;
	for (struct session *s = srv->sessions; s; s = s->next) {
		if (!live(s) || strcmp(s->owner, c->owner) || strcmp(s->user, user) ||
		    strcmp(s->chat, chat))
			continue;
		/* GetOrCreate: the same key is the same session. */
		session_touch(s);
		if (s->state == SESSION_READY) {
			*result = created_json(s);
			return 0;
		}
		(*pending)->next = s->waiting_create;
		s->waiting_create = *pending;
		return 1;
	}
	if (srv->stopping)
		return error_set(err, ERROR_BUSY, "the daemon is stopping");
	/* A session of the key still going down may yet remove the
	 * workspace (deleteWorkspace): a new one must not be made in it. */
	if (workspace_in_use(srv, c->owner, user, chat)) {
		error_set(err, ERROR_BUSY, "the last session of this key is still closing");
		error_hint(err, "retry when its session/close is answered");
		return -1;
	}
	if (srv->sessions_live >= srv->o->max_sessions)
		return error_set(err, ERROR_LIMIT, "%u sessions are running (serve --max-sessions)",
				 srv->o->max_sessions);
	struct json_object *policy, *ws, *lifecycle;
	struct limit_request limits = {0};
	_cleanup_strv_ struct strv env = STRV_INIT;
	int64_t retain = 0, idle = srv->o->idle_timeout_s;
	const char *on_expire = NULL;
	if (rpc_param_object(params, "policy", &policy, err) < 0 ||
	    rpc_param_object(params, "workspace", &ws, err) < 0 ||
	    rpc_param_object(params, "lifecycle", &lifecycle, err) < 0 ||
	    limits_param(params, &limits, err) < 0 || env_param(params, &env, err) < 0 ||
	    rpc_param_int(ws, "retainDays", false, 0, 36500, &retain, err) < 0 ||
	    rpc_param_int(lifecycle, "idleTimeoutS", false, 1, 365ll * 86400, &idle, err) < 0 ||
	    rpc_param_string(lifecycle, "onExpire", false, &on_expire, err) < 0)
		return -1;
	if (on_expire && strcmp(on_expire, "delete") && strcmp(on_expire, "retain"))
		return error_set(err, ERROR_USAGE,
				 "lifecycle.onExpire must be \"delete\" or \"retain\"");
	struct mcp_session *mcp = NULL;
	if (mcp_param(params, c->trusted, &mcp, err) < 0)
		return -1;

	struct session *s = xcalloc(1, sizeof(*s));
	s->mcp = mcp;
	s->workspace_fd = -1;
	s->child.fd = s->ready.fd = s->removal.fd = -1;
	s->ready_text = (struct strbuf)STRBUF_INIT;
	if (audit_run_id(s->id) < 0) {
		session_free(s);
		return error_errno(err, ERROR_SETUP, errno, "choosing a session id");
	}
	s->owner = xstrdup(c->owner);
	s->user = xstrdup(user);
	s->chat = xstrdup(chat);
	s->created_at = time(NULL);
	session_touch(s);
	s->idle_timeout_s = (unsigned)idle;
	s->delete_on_expire = on_expire && !strcmp(on_expire, "delete");
	/* What the daemon writes for the agent (skills, .mcp.json) must exist
	 * before the sandbox starts: the workspace's agent configs are
	 * protected inside (read-only when present, kept from being made when
	 * not), so the daemon fills them from the host and the agent cannot
	 * change them. */
	if (agent_params(c, params, s, err) < 0 || workspace_open(srv, s, err) < 0 ||
	    (s->skills_dir && session_mkdirs(s, ".claude/skills", 0755, err) < 0) ||
	    write_policy(srv, s, policy, err) < 0 ||
	    mcp_session_open(s->mcp, srv->state_dir, s->id, err) < 0 ||
	    mcp_write_config(s, s->workspace_fd, err) < 0 ||
	    plan(srv, c, s, &env, &limits, err) < 0 || mcp_session_start(srv, s, err) < 0 ||
	    launch(srv, s, err) < 0) {
		session_free(s);
		return -1;
	}
	marker_write(srv, s, (unsigned)retain);
	s->state = SESSION_STARTING;
	s->next = srv->sessions;
	srv->sessions = s;
	s->waiting_create = *pending;
	return 1;
}

int session_get(struct server *srv, struct conn *c, struct json_object *params,
		struct pending **pending, struct json_object **result, struct error *err)
{
	const char *id;
	if (rpc_param_string(params, "sessionId", true, &id, err) < 0)
		return -1;
	struct session *s = session_find(srv, c, id, false, err);
	if (!s)
		return -1;
	*result = session_json(s);
	return 0;
}

int session_list(struct server *srv, struct conn *c, struct json_object *params,
		 struct pending **pending, struct json_object **result, struct error *err)
{
	struct json_object *arr = json_object_new_array();
	for (struct session *s = srv->sessions; s; s = s->next)
		if (!strcmp(s->owner, c->owner))
			json_object_array_add(arr, session_json(s));
	*result = json_object_new_object();
	json_object_object_add(*result, "sessions", arr);
	return 0;
}

int session_close(struct server *srv, struct conn *c, struct json_object *params,
		  struct pending **pending, struct json_object **result, struct error *err)
{
	const char *id;
	bool del = false;
	if (rpc_param_string(params, "sessionId", true, &id, err) < 0 ||
	    rpc_param_bool(params, "deleteWorkspace", &del, err) < 0)
		return -1;
	struct session *s = session_find(srv, c, id, false, err);
	if (!s)
		return -1;
	if (!live(s) && s->state != SESSION_CLOSING) {
		*result = json_object_new_object();
		return 0;
	}
	s->delete_workspace = s->delete_workspace || del;
	session_end(srv, s, SESSION_CLOSING, "closed by session/close");
	(*pending)->next = s->waiting_close;
	s->waiting_close = *pending;
	return 1;
}

int session_renew(struct server *srv, struct conn *c, struct json_object *params,
		  struct pending **pending, struct json_object **result, struct error *err)
{
	const char *id;
	int64_t idle = 0;
	if (rpc_param_string(params, "sessionId", true, &id, err) < 0 ||
	    rpc_param_int(params, "idleTimeoutS", true, 1, 365ll * 86400, &idle, err) < 0)
		return -1;
	struct session *s = session_find(srv, c, id, true, err);
	if (!s)
		return -1;
	s->idle_timeout_s = (unsigned)idle;
	session_touch(s);
	*result = json_object_new_object();
	return 0;
}

/* A workspace/gc under way: a child removes the workspaces chosen, one
 * result byte each on a pipe, and the answer is sent when it exits. */
struct gc_job {
	struct watch child; /* its pidfd */
	pid_t pid;
	int results; /* the pipe's read end */
	char *owner;
	struct strv users, chats;
	struct strv paths; /* host paths, for the answer and the log */
	int64_t *lasts;
	struct pending *answer;
	struct gc_job *next;
};

/* Removed at once, one pipe's worth: the next call takes the rest. */
#define GC_BATCH_MAX 4096

static bool gc_removing(const struct server *srv, const char *owner, const char *user,
			const char *chat)
{
	for (const struct gc_job *j = srv->gc_jobs; j; j = j->next)
		if (!strcmp(j->owner, owner))
			for (size_t i = 0; i < j->users.len; i++)
				if (!strcmp(j->users.items[i], user) &&
				    !strcmp(j->chats.items[i], chat))
					return true;
	return false;
}

static void gc_job_free(struct gc_job *j)
{
	if (j->results >= 0)
		close(j->results);
	free(j->owner);
	strv_release(&j->users);
	strv_release(&j->chats);
	strv_release(&j->paths);
	free(j->lasts);
	serve_pending_free(j->answer);
	free(j);
}

static void gc_ready(struct server *srv, struct watch *w, uint32_t events)
{
	struct gc_job *j = container_of(w, struct gc_job, child);
	if (waitpid(j->pid, NULL, WNOHANG) != j->pid)
		return;
	serve_close_watch(srv, w);
	for (struct gc_job **pp = &srv->gc_jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	srv->removals--;
	char done[GC_BATCH_MAX];
	ssize_t n = read(j->results, done, sizeof(done));
	struct json_object *removed = json_object_new_array();
	for (size_t i = 0; n > 0 && i < (size_t)n && i < j->paths.len; i++) {
		if (done[i] != '1')
			continue;
		json_object_array_add(removed, json_object_new_string(j->paths.items[i]));
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "workspace", json_object_new_string(j->paths.items[i]));
		json_object_object_add(f, "lastUsed", json_object_new_int64(j->lasts[i]));
		audit_serve(&srv->audit, "", "serve_workspace_remove", j->owner, f);
	}
	struct json_object *result = json_object_new_object();
	json_object_object_add(result, "removed", removed);
	struct pending *a = j->answer;
	j->answer = NULL;
	serve_answer(srv, a, result, NULL);
	gc_job_free(j);
}

/* In the child: removes each chosen workspace and its marker. */
static _Noreturn void gc_remove(int ofd, const struct gc_job *j, int out)
{
	for (size_t i = 0; i < j->users.len; i++) {
		int ufd =
		    openat(ofd, j->users.items[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *name = xasprintf("chat-%s", j->chats.items[i]);
		_cleanup_free_ char *marker = xasprintf(".chat-%s.json", j->chats.items[i]);
		bool ok = ufd >= 0 && io_remove_tree_at(ufd, name) == 0;
		if (ok)
			unlinkat(ufd, marker, 0);
		if (ufd >= 0)
			close(ufd);
		if (write(out, ok ? "1" : "0", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* Starts the child of j (its lists filled). Returns 0 or -1. */
static int gc_start(struct server *srv, int ofd, struct gc_job *j, struct error *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_errno(err, ERROR_SETUP, errno, "pipe");
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return error_errno(err, ERROR_SETUP, e, "fork");
	}
	if (pid == 0) {
		/* Nothing of the daemon's but the owner's directory and the
		 * pipe: its clients' sockets held here would outlive them. */
		unsigned lo = (unsigned)(ofd < p[1] ? ofd : p[1]);
		unsigned hi = (unsigned)(ofd < p[1] ? p[1] : ofd);
		if (lo > 3)
			syscall(SYS_close_range, 3u, lo - 1, 0);
		if (hi > lo + 1)
			syscall(SYS_close_range, lo + 1, hi - 1, 0);
		syscall(SYS_close_range, hi + 1, ~0u, 0);
		gc_remove(ofd, j, p[1]);
	}
	close(p[1]);
	j->pid = pid;
	j->results = p[0];
	j->child = (struct watch){.ready = gc_ready, .fd = (int)syscall(SYS_pidfd_open, pid, 0)};
	if (j->child.fd < 0 || serve_watch(srv, &j->child, EPOLLIN) < 0) {
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (j->child.fd >= 0)
			serve_close_watch(srv, &j->child);
		return error_errno(err, ERROR_SETUP, e, "watching the removal");
	}
	j->next = srv->gc_jobs;
	srv->gc_jobs = j;
	srv->removals++;
	return 0;
}

int workspace_gc(struct server *srv, struct conn *c, struct json_object *params,
		 struct pending **pending, struct json_object **result, struct error *err)
{
	int64_t days = -1;
	if (rpc_param_int(params, "olderThanDays", false, 0, 36500, &days, err) < 0)
		return -1;
	long long fallback = 30;
	_cleanup_free_ char *retention = NULL;
	_cleanup_error_ struct error rerr = ERROR_INIT;
	unsigned long long ms = 0;
	const char *why = NULL;
	if (days < 0 && config_global_retention(srv->o->envp, &retention, &rerr) == 0 &&
	    retention && duration_parse(retention, &ms, &why))
		fallback = (long long)(ms / 86400000ull);
	struct gc_job *j = xcalloc(1, sizeof(*j));
	*j = (struct gc_job){.results = -1,
			     .owner = xstrdup(c->owner),
			     .users = STRV_INIT,
			     .chats = STRV_INIT,
			     .paths = STRV_INIT};
	size_t lasts_alloc = 0;
	_cleanup_free_ char *dir = xasprintf("%s/workspaces/%s", srv->data_dir, c->owner);
	_cleanup_close_ int ofd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *users = ofd >= 0 ? fdopendir(dup(ofd)) : NULL;
	time_t now = time(NULL);
	for (struct dirent *u; users && (u = readdir(users)) && j->users.len < GC_BATCH_MAX;) {
		if (u->d_name[0] == '.' || !serve_name_ok(u->d_name))
			continue;
		_cleanup_close_ int ufd =
		    openat(ofd, u->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *chats = ufd >= 0 ? fdopendir(dup(ufd)) : NULL;
		for (struct dirent *e;
		     chats && (e = readdir(chats)) && j->users.len < GC_BATCH_MAX;) {
			if (strncmp(e->d_name, "chat-", 5) || !serve_name_ok(e->d_name + 5))
				continue;
			const char *chat = e->d_name + 5;
			if (workspace_in_use(srv, c->owner, u->d_name, chat))
				continue;
			_cleanup_free_ char *marker = xasprintf(".chat-%s.json", chat);
			_cleanup_free_ char *text = NULL;
			long long last = 0, keep = days >= 0 ? days : fallback;
			struct stat st;
			if (fstatat(ufd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				last = st.st_mtime;
			int mfd = openat(ufd, marker, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (mfd >= 0) {
				size_t len;
				if (read_fd(mfd, 4096, &text, &len) == 0) {
					struct json_object *m = json_tokener_parse(text);
					struct json_object *v;
					if (m && json_object_object_get_ex(m, "lastUsed", &v))
						last = json_object_get_int64(v);
					if (m && days < 0 &&
					    json_object_object_get_ex(m, "retainDays", &v) &&
					    json_object_get_int64(v) > 0)
						keep = json_object_get_int64(v);
					json_object_put(m);
				}
				close(mfd);
			}
			if (now - last < keep * 86400)
				continue;
			if (j->users.len == lasts_alloc) {
				lasts_alloc = lasts_alloc ? 2 * lasts_alloc : 16;
				j->lasts = xrealloc(j->lasts, lasts_alloc * sizeof(*j->lasts));
			}
			j->lasts[j->users.len] = last;
			strv_push(&j->users, u->d_name);
			strv_push(&j->chats, chat);
			strv_pushf(&j->paths, "%s/%s/%s", dir, u->d_name, e->d_name);
		}
		if (chats)
			closedir(chats);
	}
	if (users)
		closedir(users);
	if (!j->users.len) {
		gc_job_free(j);
		*result = json_object_new_object();
		json_object_object_add(*result, "removed", json_object_new_array());
		return 0;
	}
	/* The removal, which a tree the agent made can make long, runs in
	 * a child; its keys count as in use meanwhile. */
	if (gc_start(srv, ofd, j, err) < 0) {
		gc_job_free(j);
		return -1;
	}
	j->answer = *pending;
	*pending = NULL;
	return 1;
}

void sessions_tick(struct server *srv)
{
	uint64_t now = serve_now_ms();
	for (struct session *s = srv->sessions, *next; s; s = next) {
		next = s->next;
		if (s->state == SESSION_READY && !strcmp(state_name(s), "ready") &&
		    now - s->last_used_ms >= (uint64_t)s->idle_timeout_s * 1000) {
			s->delete_workspace = s->delete_on_expire;
			session_end(srv, s, SESSION_EXPIRED, "idle for lifecycle.idleTimeoutS");
		} else if ((s->state == SESSION_CLOSED || s->state == SESSION_EXPIRED) &&
			   s->supervisor <= 0 && s->remover <= 0 &&
			   now - s->last_used_ms > CLOSED_KEPT_MS) {
			bury_session(srv, s);
		}
	}
}

void sessions_shutdown(struct server *srv)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		session_end(srv, s, SESSION_CLOSED, "the daemon stopped");
}
