/* This file writes the audit log and receives events from inside. It runs
 * only on the host side. Nothing from inside is written as it came: events
 * are parsed, checked and rebuilt field by field, and json-c escapes every
 * control character, so a record is always exactly one line. */
#include "audit/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/sha256.h"
#include "policy/env.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

DEFINE_CLEANUP_PTR_FUNC(struct json_tokener *, json_tokener_free)
DEFINE_CLEANUP_PTR_FUNC(struct json_object *, json_object_put)

#define EVENT_STRING_MAX 1024
#define EVENT_ARGV_MAX 256

int state_dir_prepare(const char *dir, struct error *err)
{
	_cleanup_free_ char *path = xstrdup(dir);
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return error_errno(err, ERROR_SETUP, errno, "creating %s", path);
		*p = saved;
		if (!saved)
			break;
	}
	struct stat st;
	if (lstat(dir, &st) < 0)
		return error_errno(err, ERROR_SETUP, errno, "checking %s", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return error_set(
		    err, ERROR_SETUP,
		    "refusing to use %s: it must be a directory owned by uid %u, not a "
		    "symlink",
		    dir, (unsigned)geteuid());
	if ((st.st_mode & 077) && chmod(dir, 0700) < 0)
		return error_errno(err, ERROR_SETUP, errno, "making %s private", dir);
	return 0;
}

int audit_run_id(char out[17])
{
	uint8_t id[8];
	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
		return -1;
	for (size_t i = 0; i < sizeof(id); i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	return 0;
}

static bool ends_inside_a_line(int fd)
{
	struct stat st;
	char last;
	if (fstat(fd, &st) < 0 || st.st_size == 0)
		return false;
	/* Unreadable: assume the worst; the cost is one empty line. */
	return pread(fd, &last, 1, st.st_size - 1) != 1 || last != '\n';
}

int audit_open(struct audit *a, const char *dir, struct error *err)
{
	*a = (struct audit){.fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
	if (state_dir_prepare(dir, err) < 0)
		return error_prefix(err, "audit log");
	_cleanup_free_ char *path = xasprintf("%s/audit.jsonl", dir);
	/* Read as well as append: only to see whether an earlier run left
	 * the log inside a record cut short by a full disk. */
	a->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (a->fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening the audit log %s", path);
	atomic_store(&a->cut_line, ends_inside_a_line(a->fd));
	if (audit_run_id(a->run_id) < 0)
		return error_errno(err, ERROR_SETUP, errno, "choosing a run id");
	clock_gettime(CLOCK_MONOTONIC, &a->started);
	return 0;
}

static struct json_object *new_record(const struct audit *a, const char *event)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tm tm;
	gmtime_r(&now.tv_sec, &tm);
	char stamp[64];
	size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + n, sizeof(stamp) - n, ".%03ldZ", now.tv_nsec / 1000000);
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "time", json_object_new_string(stamp));
	json_object_object_add(r, "session", json_object_new_string(a->run_id));
	json_object_object_add(r, "event", json_object_new_string(event));
	return r;
}

static void note_write_failure(struct audit *a, int error)
{
	int none = 0;
	atomic_compare_exchange_strong(&a->write_errno, &none, error);
	atomic_fetch_add(&a->write_errors, 1);
}

/* One write per record: O_APPEND makes each one land whole at the end,
 * whatever other sandboxes append at the same time. A regular file takes
 * less only when the filesystem fills or a size limit is reached; the rest
 * is then appended after it, and if that fails too the record is counted
 * as lost and the log ends inside it. The next record starts with a
 * newline, so that one cut record does not take the next with it. */
static void write_record(struct audit *a, struct json_object *record)
{
	if (a->fd < 0)
		return;
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	bool after_cut = atomic_exchange(&a->cut_line, false);
	if (after_cut)
		strbuf_addch(&line, '\n');
	size_t record_start = line.len;
	strbuf_addstr(&line, json_object_to_json_string_ext(
				 record, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	strbuf_addch(&line, '\n');
	size_t done = 0;
	while (done < line.len) {
		ssize_t n = write(a->fd, line.buf + done, line.len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			note_write_failure(a, n < 0 ? errno : EIO);
			/* Clean only when exactly the newline in front landed. */
			if (done != record_start)
				atomic_store(&a->cut_line, true);
			return;
		}
		done += (size_t)n;
	}
}

static struct json_object *string_array(char *const *items, size_t count)
{
	struct json_object *arr = json_object_new_array();
	for (size_t i = 0; i < count && items[i]; i++)
		json_object_array_add(arr, json_object_new_string(items[i]));
	return arr;
}

char *audit_policy_digest(const struct policy *policy, const char *network, bool read_only)
{
	/* SHA-256, as the trust store uses: two runs with the same digest
	 * ran under the same access table, and no one can craft a different
	 * table that passes for a given one. */
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	strbuf_addf(&text, "network=%s read-only=%d\n", network, read_only);
	for (size_t i = 0; i < policy->len; i++)
		strbuf_addf(&text, "%s\t%s\n", policy->entries[i].path,
			    access_level_name(policy->entries[i].level));
	char hex[SHA256_HEX_LEN + 1];
	sha256_hex(text.buf, text.len, hex);
	return xasprintf("sha256:%s", hex);
}

void audit_run_start(struct audit *a, const struct audit_start *s)
{
	struct json_object *r = new_record(a, "start");
	struct passwd *pw = getpwuid(getuid());
	json_object_object_add(r, "user",
			       json_object_new_string(pw && pw->pw_name ? pw->pw_name : "unknown"));
	json_object_object_add(r, "uid", json_object_new_int64(getuid()));
	json_object_object_add(r, "pid", json_object_new_int64(getpid()));
	json_object_object_add(r, "cwd", json_object_new_string(s->cwd));
	json_object_object_add(r, "command", string_array(s->command, SIZE_MAX));
	_cleanup_free_ char *digest = audit_policy_digest(s->policy, s->network, s->read_only);
	json_object_object_add(r, "policy_digest", json_object_new_string(digest));
	json_object_object_add(r, "network", json_object_new_string(s->network));
	json_object_object_add(r, "read_only", json_object_new_boolean(s->read_only));
	json_object_object_add(r, "secrets_masked",
			       json_object_new_int64((int64_t)s->secrets_masked));
	json_object_object_add(r, "env_dropped",
			       string_array(s->env_dropped->items, s->env_dropped->len));
	/* Only when something was left out: its presence is the warning. */
	if (s->degraded && s->degraded->len)
		json_object_object_add(r, "degraded",
				       string_array(s->degraded->items, s->degraded->len));
	write_record(a, r);
	json_object_put(r);
}

static void stop_receiver(struct audit *a);

void audit_run_end(struct audit *a, int status, const char *error)
{
	stop_receiver(a);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (int64_t)(now.tv_sec - a->started.tv_sec) * 1000 +
		     (now.tv_nsec - a->started.tv_nsec) / 1000000;
	struct json_object *r = new_record(a, "end");
	json_object_object_add(r, "status", json_object_new_int(status < 0 ? 1 : status));
	if (status > 128 && status < 128 + 65)
		json_object_object_add(r, "signal", json_object_new_int(status - 128));
	if (error)
		json_object_object_add(r, "error", json_object_new_string(error));
	json_object_object_add(r, "duration_ms", json_object_new_int64(ms));
	if (a->stopped)
		json_object_object_add(r, "stopped", json_object_new_boolean(true));
	if (a->blocked_dropped)
		json_object_object_add(r, "blocked_dropped",
				       json_object_new_int64((int64_t)a->blocked_dropped));
	if (a->network_dropped)
		json_object_object_add(r, "network_dropped",
				       json_object_new_int64((int64_t)a->network_dropped));
	unsigned long lost = atomic_load(&a->write_errors);
	if (lost) {
		json_object_object_add(r, "write_errors", json_object_new_int64((int64_t)lost));
		json_object_object_add(
		    r, "write_error",
		    json_object_new_string(strerror(atomic_load(&a->write_errno))));
	}
	write_record(a, r);
	json_object_put(r);
}

void audit_network(struct audit *a, const struct proxy_decision *d)
{
	if (a->fd < 0)
		return;
	if (a->network_logged >= AUDIT_NETWORK_MAX) {
		a->network_dropped++;
		return;
	}
	a->network_logged++;
	struct json_object *r = new_record(a, "network");
	json_object_object_add(r, "decision",
			       json_object_new_string(d->allowed ? "allowed" : "refused"));
	json_object_object_add(r, "protocol", json_object_new_string(d->protocol));
	json_object_object_add(r, "host", json_object_new_string(d->host ? d->host : ""));
	json_object_object_add(r, "port", json_object_new_int((int)d->port));
	if (d->address)
		json_object_object_add(r, "address", json_object_new_string(d->address));
	if (d->reason)
		json_object_object_add(r, "reason", json_object_new_string(d->reason));
	if (d->allowed_by)
		json_object_object_add(r, "allowed_by", json_object_new_string(d->allowed_by));
	/* The policy's decision and what came of it are two things: an
	 * allowed connection that could not be made is a failure. */
	if (d->allowed)
		json_object_object_add(r, "outcome",
				       json_object_new_string(d->reason ? "failed" : "connected"));
	/* The credential's name and the upstream's answer: never its key. */
	if (d->credential) {
		json_object_object_add(r, "credential", json_object_new_string(d->credential));
		if (d->status)
			json_object_object_add(r, "status", json_object_new_int(d->status));
	}
	if (d->allowed) {
		json_object_object_add(r, "bytes_out",
				       json_object_new_int64((int64_t)d->bytes_out));
		json_object_object_add(r, "bytes_in", json_object_new_int64((int64_t)d->bytes_in));
		json_object_object_add(r, "duration_ms",
				       json_object_new_int64((int64_t)d->duration_ms));
	}
	write_record(a, r);
	json_object_put(r);
}

void audit_quarantine(struct audit *a, const char *path, const char *moved_to, const char *rule,
		      const char *error)
{
	if (a->fd < 0)
		return;
	struct json_object *r = new_record(a, "quarantine");
	json_object_object_add(r, "path", json_object_new_string(path));
	if (moved_to)
		json_object_object_add(r, "moved_to", json_object_new_string(moved_to));
	json_object_object_add(r, "rule", json_object_new_string(rule));
	if (error)
		json_object_object_add(r, "error", json_object_new_string(error));
	write_record(a, r);
	json_object_put(r);
}

void audit_gc_removal(struct audit *a, const char *worktree, const char *branch, long long last_use,
		      bool forced, bool shelf_removed)
{
	if (a->fd < 0)
		return;
	struct json_object *r = new_record(a, "gc_remove");
	json_object_object_add(r, "path", json_object_new_string(worktree));
	json_object_object_add(r, "branch", json_object_new_string(branch));
	json_object_object_add(r, "last_use", json_object_new_int64(last_use));
	json_object_object_add(r, "forced", json_object_new_boolean(forced));
	json_object_object_add(r, "shelf_removed", json_object_new_boolean(shelf_removed));
	write_record(a, r);
	json_object_put(r);
}

void audit_serve(struct audit *a, const char *session, const char *event, const char *owner,
		 struct json_object *fields)
{
	if (a->fd < 0) {
		json_object_put(fields);
		return;
	}
	struct json_object *r = new_record(a, event);
	json_object_object_add(r, "session", json_object_new_string(session ? session : ""));
	json_object_object_add(r, "owner", json_object_new_string(owner ? owner : ""));
	if (fields) {
		json_object_object_foreach(fields, k, v)
		{
			if (!json_object_object_get_ex(r, k, NULL))
				json_object_object_add(r, k, json_object_get(v));
		}
		json_object_put(fields);
	}
	write_record(a, r);
	json_object_put(r);
}

void audit_secret_read(struct audit *a, const char *path, const char *pattern, const char *rule,
		       unsigned long count)
{
	if (a->fd < 0)
		return;
	struct json_object *r = new_record(a, "secret_read");
	json_object_object_add(r, "path", json_object_new_string(path));
	json_object_object_add(r, "pattern", json_object_new_string(pattern));
	json_object_object_add(r, "rule", json_object_new_string(rule));
	json_object_object_add(r, "count", json_object_new_int64((int64_t)count));
	write_record(a, r);
	json_object_put(r);
}

void audit_secret_watch(struct audit *a, const char *reason)
{
	if (a->fd < 0)
		return;
	struct json_object *r = new_record(a, "secret_watch");
	json_object_object_add(r, "reason", json_object_new_string(reason));
	write_record(a, r);
	json_object_put(r);
}

static bool get_string(struct json_object *obj, const char *key, size_t max, const char **out)
{
	struct json_object *v = NULL;
	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return false;
	size_t len = (size_t)json_object_get_string_len(v);
	*out = json_object_get_string(v);
	return len > 0 && len <= max && strlen(*out) == len;
}

struct json_object *audit_event_parse(const char *buf, size_t len)
{
	if (len == 0 || len > AUDIT_EVENT_MAX)
		return NULL;
	_cleanup_(json_tokener_freep) struct json_tokener *tok = json_tokener_new_ex(4);
	if (!tok)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	_cleanup_(json_object_putp) struct json_object *in =
	    json_tokener_parse_ex(tok, buf, (int)len);
	bool complete = in && json_tokener_get_error(tok) == json_tokener_success &&
			(size_t)json_tokener_get_parse_end(tok) == len;
	const char *event, *command, *reason;
	struct json_object *argv = NULL;
	if (!complete || !json_object_is_type(in, json_type_object) ||
	    !get_string(in, "event", 32, &event) || strcmp(event, "blocked") != 0 ||
	    !get_string(in, "command", EVENT_STRING_MAX, &command) ||
	    !get_string(in, "reason", EVENT_STRING_MAX, &reason) ||
	    !json_object_object_get_ex(in, "argv", &argv) ||
	    !json_object_is_type(argv, json_type_array) ||
	    json_object_array_length(argv) > EVENT_ARGV_MAX)
		return NULL;
	_cleanup_(json_object_putp) struct json_object *out = json_object_new_object();
	json_object_object_add(out, "command", json_object_new_string(command));
	struct json_object *args = json_object_new_array();
	json_object_object_add(out, "argv", args);
	for (size_t i = 0; i < json_object_array_length(argv); i++) {
		struct json_object *e = json_object_array_get_idx(argv, i);
		if (!json_object_is_type(e, json_type_string) ||
		    strlen(json_object_get_string(e)) != (size_t)json_object_get_string_len(e))
			return NULL;
		json_object_array_add(args, json_object_new_string(json_object_get_string(e)));
	}
	json_object_object_add(out, "reason", json_object_new_string(reason));
	return steal_ptr(&out);
}

static void *receive_events(void *arg)
{
	struct audit *a = arg;
	_cleanup_free_ char *buf = xmalloc(AUDIT_EVENT_MAX + 1);
	struct pollfd pfd[2] = {{.fd = a->sock, .events = POLLIN},
				{.fd = a->stop_pipe[0], .events = POLLIN}};
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		/* Drain what is queued before honouring a stop request, so
		 * that events sent just before the command exited are kept. */
		for (;;) {
			ssize_t n =
			    recv(a->sock, buf, AUDIT_EVENT_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
			if (n < 0)
				break;
			struct json_object *event = audit_event_parse(buf, (size_t)n);
			if (!event)
				continue;
			if (a->blocked_logged >= AUDIT_BLOCKED_MAX) {
				a->blocked_dropped++;
				json_object_put(event);
				continue;
			}
			a->blocked_logged++;
			struct json_object *r = new_record(a, "blocked");
			json_object_object_foreach(event, key, value)
			    json_object_object_add(r, key, json_object_get(value));
			json_object_object_add(r, "reported_from",
					       json_object_new_string("inside"));
			write_record(a, r);
			json_object_put(r);
			json_object_put(event);
		}
		if (pfd[1].revents)
			return NULL;
	}
}

int audit_listen(struct audit *a, const char *runtime_dir, struct error *err)
{
	a->sock_path = xasprintf("%s/audit-%s.sock", runtime_dir, a->run_id);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(a->sock_path) >= sizeof(addr.sun_path))
		return error_set(err, ERROR_SETUP, "the audit socket path %s is too long",
				 a->sock_path);
	memcpy(addr.sun_path, a->sock_path, strlen(a->sock_path) + 1);
	a->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (a->sock < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating the audit socket");
	unlink(a->sock_path);
	if (bind(a->sock, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return error_errno(err, ERROR_SETUP, errno, "binding the audit socket %s",
				   a->sock_path);
	if (pipe2(a->stop_pipe, O_CLOEXEC) < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating a pipe");
	/* The receiver must never take the signals the supervisor handles. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&a->receiver, NULL, receive_events, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return error_errno(err, ERROR_SETUP, r, "starting the audit receiver");
	a->receiving = true;
	return 0;
}

/* Lets the receiver take what is queued, then stops it: after this its
 * counters are final and nothing more is written from inside. */
static void stop_receiver(struct audit *a)
{
	if (!a->receiving)
		return;
	ssize_t n;
	do
		n = write(a->stop_pipe[1], "x", 1);
	while (n < 0 && errno == EINTR);
	/* An empty pipe of our own takes one byte; should it not, poll() is a
	 * cancellation point, and waiting forever for the thread is no option. */
	if (n != 1)
		pthread_cancel(a->receiver);
	pthread_join(a->receiver, NULL);
	a->receiving = false;
}

char *audit_write_failure(const struct audit *a)
{
	unsigned long lost = atomic_load(&a->write_errors);
	if (!lost)
		return NULL;
	return xasprintf("%lu %s could not be written: %s", lost, lost == 1 ? "record" : "records",
			 strerror(atomic_load(&a->write_errno)));
}

void audit_close(struct audit *a)
{
	stop_receiver(a);
	for (int i = 0; i < 2; i++)
		if (a->stop_pipe[i] >= 0)
			close(a->stop_pipe[i]);
	if (a->sock >= 0)
		close(a->sock);
	if (a->sock_path)
		unlink(a->sock_path);
	free(a->sock_path);
	if (a->fd >= 0)
		close(a->fd);
	*a = (struct audit){.fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
}

/* True when FD is a connected unix datagram socket. Its peer's address is
 * the host's path of the audit socket, which the sandbox does not know;
 * a command that put another socket there only misroutes its own reports,
 * which it could as well not make. */
static bool is_audit_socket(int fd)
{
	int value;
	socklen_t len = sizeof(value);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &len) < 0 || value != AF_UNIX)
		return false;
	len = sizeof(value);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &len) < 0 || value != SOCK_DGRAM)
		return false;
	struct sockaddr_un peer;
	socklen_t peer_len = sizeof(peer);
	return getpeername(fd, (struct sockaddr *)&peer, &peer_len) == 0;
}

int audit_report_blocked(const char *command, char *const *argv, const char *reason)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "event", json_object_new_string("blocked"));
	json_object_object_add(r, "command", json_object_new_string(command));
	json_object_object_add(r, "argv", string_array(argv, EVENT_ARGV_MAX));
	json_object_object_add(r, "reason", json_object_new_string(reason));
	const char *text = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN);
	int ret = 0;
	if (is_audit_socket(AUDIT_FD_INSIDE)) {
		if (send(AUDIT_FD_INSIDE, text, strlen(text), MSG_DONTWAIT) < 0)
			ret = -errno;
	} else {
		struct sockaddr_un addr = {.sun_family = AF_UNIX, .sun_path = AUDIT_SOCKET_INSIDE};
		_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || sendto(fd, text, strlen(text), MSG_DONTWAIT, (struct sockaddr *)&addr,
				     sizeof(addr)) < 0)
			ret = -errno;
	}
	json_object_put(r);
	return ret;
}

int audit_inherit_socket(void)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX, .sun_path = AUDIT_SOCKET_INSIDE};
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -errno;
	/* dup2 clears close-on-exec on the copy. */
	if (dup2(fd, AUDIT_FD_INSIDE) < 0)
		return -errno;
	return 0;
}
