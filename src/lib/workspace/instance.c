/* This file keeps the records of running sandboxes, <name>.json in the
 * private runtime directory, and stops sandboxes by them. A record is
 * written whole and claimed with link(), so no reader sees half of one and
 * two runs never hold one name; it never leads to a signal before the
 * process it names is proven to be our supervisor. */
#include "workspace/instance.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "audit/writer.h"
#include "base/io.h"
#include "base/xalloc.h"
#include "inside/init.h"
#include "policy/env.h"
#include "policy/path.h"
#include "sandbox/rundir.h"

#define RECORD_MAX (256 * 1024)
#define UNIQUE_MAX 1000
/* After SANDBOX_KILL_SIGNAL the pid namespace dies at once; the
 * supervisor then only reports. */
#define KILL_WAIT_MS 5000

void instance_release(struct instance *in)
{
	free(in->name);
	free(in->project);
	free(in->branch);
	free(in->workdir);
	free(in->network);
	free(in->policy_digest);
	free(in->control_socket);
	strv_release(&in->command);
	*in = (struct instance){.command = STRV_INIT};
}

void instance_list_release(struct instance_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		instance_release(&l->items[i]);
	free(l->items);
	l->items = NULL;
	l->len = 0;
}

static bool name_char(char c)
{
	return isascii((unsigned char)c) && (isalnum((unsigned char)c) || strchr("_.-", c));
}

static bool name_valid(const char *name)
{
	size_t len = strlen(name);
	bool ok = len >= 1 && len <= INSTANCE_NAME_MAX && isascii((unsigned char)name[0]) &&
		  isalnum((unsigned char)name[0]) && !strstr(name, "..");
	for (size_t i = 0; ok && i < len; i++)
		ok = name_char(name[i]);
	return ok;
}

int instance_check_name(const char *name, struct error *err)
{
	if (name_valid(name))
		return 0;
	return error_set(err, ERROR_USAGE,
			 "invalid sandbox name \"%s\": expected 1 to %d letters, digits, \"_\", "
			 "\".\" or \"-\", starting with a letter or digit, without \"..\"",
			 name, INSTANCE_NAME_MAX);
}

/* The start time of a process, field 22 of /proc/PID/stat; 0 when the
 * process is gone. The name in field 2 may hold anything: parse after its
 * last ')'. */
static unsigned long long proc_start_time(pid_t pid)
{
	_cleanup_free_ char *path = xasprintf("/proc/%d/stat", (int)pid);
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file(path, 4096, &text, &len) < 0)
		return 0;
	char *p = strrchr(text, ')');
	if (!p)
		return 0;
	p++;
	/* Fields 3..21 come before the start time. */
	for (int field = 3; field <= 22; field++) {
		p += strspn(p, " ");
		if (field == 22)
			return strtoull(p, NULL, 10);
		p += strcspn(p, " ");
	}
	return 0;
}

/* The value of a "Key:" line of /proc/PID/status, which (unlike exe and
 * ns/) any process of the same uid can read even when the process is not
 * dumpable, as a supervisor holding injected keys is not. */
static char *status_field(const char *status, const char *key)
{
	_cleanup_free_ char *needle = xasprintf("\n%s:", key);
	/* The first line has no newline before it. */
	size_t len = strlen(needle + 1);
	const char *p = status;
	if (strncmp(status, needle + 1, len)) {
		p = strstr(status, needle);
		if (!p)
			return NULL;
		p++;
	}
	p += len;
	p += strspn(p, " \t");
	return xstrndup(p, strcspn(p, "\n"));
}

static char *read_status(pid_t pid)
{
	_cleanup_free_ char *path =
	    pid ? xasprintf("/proc/%d/status", (int)pid) : xstrdup("/proc/self/status");
	char *text = NULL;
	size_t len;
	return read_file(path, 64 * 1024, &text, &len) < 0 ? NULL : text;
}

/* Real, effective and saved uid all ours. */
static bool uids_are_ours(const char *status)
{
	_cleanup_free_ char *uids = status_field(status, "Uid");
	unsigned long r, e, s;
	uid_t me = getuid();
	return uids && sscanf(uids, "%lu %lu %lu", &r, &e, &s) == 3 && r == me && e == me &&
	       s == me;
}

/* How deep in nested pid namespaces: the number of pids on NSpid. */
static size_t pid_ns_depth(const char *status)
{
	_cleanup_free_ char *pids = status_field(status, "NSpid");
	size_t n = 0;
	for (char *p = pids; p && *p; n++) {
		p += strspn(p, " \t");
		if (!*p)
			break;
		p += strcspn(p, " \t");
	}
	return n;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Whether the program of pid is ours: the same file, or one that was at
 * the same path before an upgrade replaced it. A process that is not
 * dumpable hides its exe: then its name must be ours. */
static bool proc_runs_us(pid_t pid, const char *status)
{
	_cleanup_free_ char *exe = xasprintf("/proc/%d/exe", (int)pid);
	if (same_file(exe, "/proc/self/exe"))
		return true;
	_cleanup_free_ char *theirs = NULL, *mine = NULL;
	int r = path_read_link(exe, &theirs);
	if (r == -EACCES || r == -EPERM) {
		_cleanup_free_ char *self = read_status(0);
		_cleanup_free_ char *name = status_field(status, "Name");
		_cleanup_free_ char *my_name = self ? status_field(self, "Name") : NULL;
		return name && my_name && !strcmp(name, my_name);
	}
	if (r < 0 || path_read_link("/proc/self/exe", &mine) < 0)
		return false;
	size_t n = strlen(mine);
	return !strncmp(theirs, mine, n) && !strcmp(theirs + n, " (deleted)");
}

/* Whether pid is, right now, what the record says: a process of our uid,
 * started when the record says, running agent-sandbox, in a pid namespace
 * as deep as ours (the sandbox's own init and wrappers run agent-sandbox
 * too, but one namespace deeper). */
static bool is_our_supervisor(const struct instance *in)
{
	if (in->pid <= 1 || in->pid_start == 0 || proc_start_time(in->pid) != in->pid_start)
		return false;
	_cleanup_free_ char *status = read_status(in->pid);
	_cleanup_free_ char *self = read_status(0);
	return status && self && uids_are_ours(status) &&
	       pid_ns_depth(status) == pid_ns_depth(self) && pid_ns_depth(self) > 0 &&
	       proc_runs_us(in->pid, status);
}

static int state_dir(char *const *envp, char **out, struct error *err)
{
	return rundir_prepare(env_get(envp, "XDG_RUNTIME_DIR"), out, err);
}

/* Held while records are claimed or removed as stale, so that a record
 * found stale is not replaced by a live one between the check and the
 * unlink. A lock on the directory itself: nothing more to create. */
static int lock_dir(const char *dir, struct error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening %s", dir);
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return error_errno(err, ERROR_SETUP, e, "locking %s", dir);
		}
	}
	return fd;
}

static struct json_object *limits_json(const struct sandbox_limits *l)
{
	struct json_object *o = json_object_new_object();
	if (l->memory_bytes)
		json_object_object_add(o, "memory_bytes",
				       json_object_new_int64((int64_t)l->memory_bytes));
	if (l->cpus_milli)
		json_object_object_add(o, "cpus_milli", json_object_new_int64(l->cpus_milli));
	if (l->pids)
		json_object_object_add(o, "pids", json_object_new_int64(l->pids));
	if (l->timeout_ms)
		json_object_object_add(o, "timeout_ms",
				       json_object_new_int64((int64_t)l->timeout_ms));
	if (l->tmp_bytes)
		json_object_object_add(o, "tmp_bytes",
				       json_object_new_int64((int64_t)l->tmp_bytes));
	return o;
}

static struct json_object *opt_string(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

char *instance_record_text(const struct instance *in)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(in->name));
	json_object_object_add(o, "pid", json_object_new_int64(in->pid));
	json_object_object_add(o, "pid_start", json_object_new_uint64(in->pid_start));
	json_object_object_add(o, "started", json_object_new_int64(in->started));
	json_object_object_add(o, "project", opt_string(in->project));
	json_object_object_add(o, "branch", opt_string(in->branch));
	json_object_object_add(o, "workdir", opt_string(in->workdir));
	struct json_object *cmd = json_object_new_array();
	for (size_t i = 0; i < in->command.len; i++)
		json_object_array_add(cmd, json_object_new_string(in->command.items[i]));
	json_object_object_add(o, "command", cmd);
	json_object_object_add(o, "network", opt_string(in->network));
	json_object_object_add(o, "policy_digest", opt_string(in->policy_digest));
	json_object_object_add(o, "limits", limits_json(&in->limits));
	json_object_object_add(o, "control_socket", opt_string(in->control_socket));
	char *text =
	    xasprintf("%s\n", json_object_to_json_string_ext(
				  o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return text;
}

static char *get_string(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return xstrdup(json_object_get_string(v));
}

static int64_t get_int(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return 0;
	int64_t n = json_object_get_int64(v);
	return n < 0 ? 0 : n;
}

bool instance_parse_record(const char *text, struct instance *in)
{
	*in = (struct instance){.command = STRV_INIT};
	struct json_object *o = json_tokener_parse(text);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return false;
	}
	in->name = get_string(o, "name");
	in->pid = (pid_t)get_int(o, "pid");
	struct json_object *v;
	if (json_object_object_get_ex(o, "pid_start", &v) && json_object_is_type(v, json_type_int))
		in->pid_start = json_object_get_uint64(v);
	in->started = get_int(o, "started");
	in->project = get_string(o, "project");
	in->branch = get_string(o, "branch");
	in->workdir = get_string(o, "workdir");
	in->network = get_string(o, "network");
	in->policy_digest = get_string(o, "policy_digest");
	in->control_socket = get_string(o, "control_socket");
	if (json_object_object_get_ex(o, "command", &v) && json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *a = json_object_array_get_idx(v, i);
			if (json_object_is_type(a, json_type_string))
				strv_push(&in->command, json_object_get_string(a));
		}
	if (json_object_object_get_ex(o, "limits", &v) &&
	    json_object_is_type(v, json_type_object)) {
		in->limits.memory_bytes = (unsigned long long)get_int(v, "memory_bytes");
		in->limits.cpus_milli = (unsigned)get_int(v, "cpus_milli");
		in->limits.pids = (unsigned)get_int(v, "pids");
		in->limits.timeout_ms = (unsigned long long)get_int(v, "timeout_ms");
		in->limits.tmp_bytes = (unsigned long long)get_int(v, "tmp_bytes");
	}
	json_object_put(o);
	return in->name && name_valid(in->name) && in->pid > 0;
}

/* Reads dir/file, a record of ours: a regular file we own, no symlink. */
static bool read_record(int dir_fd, const char *file, struct instance *in)
{
	*in = (struct instance){.command = STRV_INIT};
	_cleanup_close_ int fd =
	    openat(dir_fd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return false;
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_fd(fd, RECORD_MAX, &text, &len) < 0)
		return false;
	return instance_parse_record(text, in);
}

/* Removes name's record and control socket. */
static void remove_files(int dir_fd, const char *name)
{
	_cleanup_free_ char *record = xasprintf("%s.json", name);
	_cleanup_free_ char *sock = xasprintf("%s.sock", name);
	(void)unlinkat(dir_fd, record, 0);
	(void)unlinkat(dir_fd, sock, 0);
}

/* With the lock held: whether name is taken by a live sandbox; a stale
 * record of it is removed on the way. */
static bool name_taken(int dir_fd, const char *name)
{
	_cleanup_free_ char *file = xasprintf("%s.json", name);
	struct stat st;
	if (fstatat(dir_fd, file, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno != ENOENT;
	struct instance in;
	bool live =
	    read_record(dir_fd, file, &in) && !strcmp(in.name, name) && is_our_supervisor(&in);
	instance_release(&in);
	if (live)
		return true;
	remove_files(dir_fd, name);
	return fstatat(dir_fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

char *instance_default_name(const char *project, const char *branch)
{
	const char *base = project ? strrchr(project, '/') : NULL;
	base = base && base[1] ? base + 1 : "sandbox";
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, base);
	if (branch)
		strbuf_addf(&sb, "-%s", branch);
	for (size_t i = 0; i < sb.len; i++)
		if (!name_char(sb.buf[i]) || (sb.buf[i] == '.' && i > 0 && sb.buf[i - 1] == '.'))
			sb.buf[i] = '-';
	if (!isalnum((unsigned char)sb.buf[0])) {
		char *rest = strbuf_detach(&sb);
		strbuf_addf(&sb, "sandbox%s", rest);
		free(rest);
	}
	/* Room for "-NNN". */
	if (sb.len > INSTANCE_NAME_MAX - 4)
		strbuf_setlen(&sb, INSTANCE_NAME_MAX - 4);
	return strbuf_detach(&sb);
}

/* Writes the record into a temporary file and links it to its name, which
 * fails when the name exists: the claim and the whole content at once. */
static int claim(int dir_fd, const char *dir, const struct instance *in, bool *taken,
		 struct error *err)
{
	*taken = false;
	_cleanup_free_ char *text = instance_record_text(in);
	_cleanup_free_ char *tmp = xasprintf(".%s.json.%d", in->name, (int)getpid());
	(void)unlinkat(dir_fd, tmp, 0);
	_cleanup_close_ int fd =
	    openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating a record in %s", dir);
	int w = write_all(fd, text, strlen(text));
	if (w < 0) {
		(void)unlinkat(dir_fd, tmp, 0);
		return error_errno(err, ERROR_SETUP, -w, "writing a record in %s", dir);
	}
	_cleanup_free_ char *file = xasprintf("%s.json", in->name);
	int r = linkat(dir_fd, tmp, dir_fd, file, 0);
	int e = errno;
	(void)unlinkat(dir_fd, tmp, 0);
	if (r == 0)
		return 0;
	if (e == EEXIST) {
		*taken = true;
		return 0;
	}
	return error_errno(err, ERROR_SETUP, e, "creating %s/%s", dir, file);
}

int instance_register(const struct sandbox_spec *s, char *const *envp, const char *name,
		      struct instance_claim *out, struct error *err)
{
	*out = (struct instance_claim)INSTANCE_CLAIM_INIT;
	if (name && instance_check_name(name, err) < 0)
		return -1;
	_cleanup_free_ char *dir = NULL;
	if (state_dir(envp, &dir, err) < 0)
		return error_prefix(err, "naming the sandbox");
	_cleanup_close_ int dir_fd = lock_dir(dir, err);
	if (dir_fd < 0)
		return -1;

	_cleanup_free_ char *network = xstrdup(s->cfg.network.mode == NETWORK_HOST   ? "host"
					       : s->cfg.network.mode == NETWORK_NONE ? "none"
										     : "filtered");
	/* The digest the audit log's start record has, to match the two. */
	_cleanup_free_ char *digest =
	    audit_policy_digest(&s->policy, network, s->cfg.read_only.value);
	struct instance in = {
	    .pid = getpid(),
	    .pid_start = proc_start_time(getpid()),
	    .started = (long long)time(NULL),
	    .project = s->project_dir,
	    .branch = s->branch,
	    .workdir = s->cwd,
	    .command = s->command,
	    .network = network,
	    .policy_digest = digest,
	    .limits = s->limits,
	};
	_cleanup_free_ char *base =
	    name ? xstrdup(name)
		 : instance_default_name(s->project_dir ? s->project_dir : s->cwd, s->branch);
	for (unsigned n = 1; n <= UNIQUE_MAX; n++) {
		_cleanup_free_ char *candidate =
		    n == 1 ? xstrdup(base) : xasprintf("%s-%u", base, n);
		if (name_taken(dir_fd, candidate)) {
			if (name)
				break;
			continue;
		}
		_cleanup_free_ char *sock = xasprintf("%s/%s.sock", dir, candidate);
		in.name = candidate;
		in.control_socket = sock;
		bool taken;
		if (claim(dir_fd, dir, &in, &taken, err) < 0)
			return -1;
		if (taken) {
			if (name)
				break;
			continue;
		}
		out->record = xasprintf("%s/%s.json", dir, candidate);
		out->control_socket = steal_ptr(&sock);
		out->name = steal_ptr(&candidate);
		return 0;
	}
	if (name) {
		error_set(err, ERROR_USAGE, "a sandbox named \"%s\" is running already", name);
		error_hint(err, "pick another --name, or stop it: agent-sandbox stop %s", name);
		return -1;
	}
	return error_set(err, ERROR_SETUP, "no free sandbox name from \"%s\" to \"%s-%d\" in %s",
			 base, base, UNIQUE_MAX, dir);
}

void instance_unregister(struct instance_claim *c)
{
	if (c->record)
		(void)unlink(c->record);
	if (c->control_socket)
		(void)unlink(c->control_socket);
	free(c->record);
	free(c->control_socket);
	free(c->name);
	*c = (struct instance_claim)INSTANCE_CLAIM_INIT;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct instance *)a)->name, ((const struct instance *)b)->name);
}

int instance_list(char *const *envp, struct instance_list *out, struct error *err)
{
	*out = (struct instance_list){0};
	_cleanup_free_ char *dir = NULL;
	if (state_dir(envp, &dir, err) < 0)
		return error_prefix(err, "listing sandboxes");
	_cleanup_close_ int dir_fd = lock_dir(dir, err);
	if (dir_fd < 0)
		return -1;
	int list_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (list_fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "reading %s", dir);
	DIR *d = fdopendir(list_fd);
	if (!d) {
		close(list_fd);
		return error_errno(err, ERROR_SETUP, errno, "reading %s", dir);
	}
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len <= 5 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		_cleanup_free_ char *name = xstrndup(e->d_name, len - 5);
		struct instance in;
		/* A record under another file name than its own is not one
		 * of ours: it would let one name stop another sandbox. */
		if (!read_record(dir_fd, e->d_name, &in) || strcmp(in.name, name) ||
		    !is_our_supervisor(&in)) {
			instance_release(&in);
			remove_files(dir_fd, name);
			continue;
		}
		if (out->len == cap) {
			cap = cap ? 2 * cap : 8;
			out->items = xreallocarray(out->items, cap, sizeof(*out->items));
		}
		out->items[out->len++] = in;
	}
	closedir(d);
	if (out->len)
		qsort(out->items, out->len, sizeof(*out->items), by_name);
	return 0;
}

void instance_list_json(const struct instance_list *l, struct strbuf *sb)
{
	struct json_object *arr = json_object_new_array();
	for (size_t i = 0; i < l->len; i++) {
		const struct instance *in = &l->items[i];
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(in->name));
		json_object_object_add(o, "pid", json_object_new_int64(in->pid));
		json_object_object_add(o, "project", opt_string(in->project));
		json_object_object_add(o, "branch", opt_string(in->branch));
		json_object_object_add(o, "workdir", opt_string(in->workdir));
		struct json_object *cmd = json_object_new_array();
		for (size_t j = 0; j < in->command.len; j++)
			json_object_array_add(cmd, json_object_new_string(in->command.items[j]));
		json_object_object_add(o, "command", cmd);
		json_object_object_add(o, "network", opt_string(in->network));
		char when[32];
		time_t t = (time_t)in->started;
		struct tm tm;
		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
			json_object_object_add(o, "started", json_object_new_string(when));
		json_object_object_add(o, "limits", limits_json(&in->limits));
		json_object_object_add(o, "policy_digest", opt_string(in->policy_digest));
		json_object_array_add(arr, o);
	}
	strbuf_addstr(sb, json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
}

const struct instance *instance_find(const struct instance_list *l, const char *name)
{
	for (size_t i = 0; i < l->len; i++)
		if (!strcmp(l->items[i].name, name))
			return &l->items[i];
	return NULL;
}

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Waits up to ms for the process of pidfd to exit; true when it did. */
static bool wait_exit(int pidfd, unsigned ms)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long spent =
		    (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (spent >= ms)
			return false;
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		int r = poll(&p, 1, (int)(ms - spent));
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

int instance_stop_begin(const struct instance *in, struct instance_stopping *st, struct error *err)
{
	*st = (struct instance_stopping){.in = in, .pidfd = -1, .outcome = INSTANCE_GONE};
	/* The pidfd first: it keeps naming the process it was opened on, so
	 * what is checked below is what gets the signals. */
	_cleanup_close_ int pidfd = pidfd_open(in->pid);
	if (pidfd < 0 && errno == ESRCH)
		return 0;
	if (pidfd < 0)
		return error_errno(err, ERROR_SETUP, errno, "stopping %s: pidfd_open(%d)", in->name,
				   (int)in->pid);
	if (!is_our_supervisor(in)) {
		if (proc_start_time(in->pid) != in->pid_start)
			return 0;
		error_set(err, ERROR_DENIED,
			  "not stopping %s: process %d is not an agent-sandbox supervisor of "
			  "uid %u",
			  in->name, (int)in->pid, (unsigned)getuid());
		error_hint(err, "its record does not match the process; nothing was signalled");
		return -1;
	}
	if (pidfd_send_signal(pidfd, SANDBOX_TERMINATE_SIGNAL) < 0) {
		if (errno == ESRCH)
			return 0;
		return error_errno(err, ERROR_SETUP, errno, "stopping %s", in->name);
	}
	st->pidfd = steal_fd(&pidfd);
	st->outcome = INSTANCE_STOPPED;
	return 0;
}

static long long remaining_ms(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long ms =
	    (deadline->tv_sec - now.tv_sec) * 1000LL + (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? ms : 0;
}

int instance_stop_finish(struct instance_stopping *st, const struct timespec *deadline,
			 struct error *err)
{
	if (st->pidfd < 0)
		return 0;
	_cleanup_close_ int pidfd = steal_fd(&st->pidfd);
	if (wait_exit(pidfd, (unsigned)remaining_ms(deadline)))
		return 0;
	st->outcome = INSTANCE_KILLED;
	if (pidfd_send_signal(pidfd, SANDBOX_KILL_SIGNAL) < 0 && errno != ESRCH)
		return error_errno(err, ERROR_SETUP, errno, "killing %s", st->in->name);
	if (!wait_exit(pidfd, KILL_WAIT_MS))
		return error_set(err, ERROR_SETUP,
				 "%s (pid %d) did not exit %d s after SIGKILL of its sandbox",
				 st->in->name, (int)st->in->pid, KILL_WAIT_MS / 1000);
	return 0;
}
