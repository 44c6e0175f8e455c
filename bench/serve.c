/* The executor API against its peers, in one run:
 *   - session/create on a new and on an existing workspace;
 *   - process/exec of `true` against the command line's
 *     `agent-sandbox -- true` (the daemon's sandbox is up already);
 *   - streaming 1 GiB of output through process/output against `cat` to a
 *     pipe;
 *   - 100 sessions at once: the daemon's RSS, and the supervisors'.
 *
 *   build/bench/serve AGENT_SANDBOX [RUNS]    (bench/serve-api runs it)
 *
 * The daemon runs with private XDG directories under a temporary
 * directory; the client is the library's (serve/client.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/cleanup.h"
#include "base/xalloc.h"
#include "serve/client.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static pid_t daemon_pid;
static long instances_to_restore;

static void restore_instances(void)
{
	if (!instances_to_restore)
		return;
	FILE *fo = fopen("/proc/sys/fs/inotify/max_user_instances", "w");
	if (!fo || fprintf(fo, "%ld\n", instances_to_restore) < 0 || fclose(fo) != 0)
		fprintf(stderr, "bench/serve: could not put fs.inotify.max_user_instances back\n");
	instances_to_restore = 0;
}

static _Noreturn void die(const char *what, const struct error *err)
{
	if (daemon_pid > 0)
		kill(daemon_pid, SIGTERM);
	restore_instances();
	fprintf(stderr, "bench/serve: %s: %s\n", what,
		err && err->msg ? err->msg : strerror(errno));
	exit(1);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A call that must succeed: its result (owned by *response). */
static struct json_object *call(struct agent_sandbox_client *c, const char *method,
				struct json_object *params, struct json_object **response)
{
	struct error err = ERROR_INIT;
	if (agent_sandbox_client_call(c, method, params, response, &err) < 0)
		die(method, &err);
	struct json_object *r = NULL;
	if (!json_object_object_get_ex(*response, "result", &r)) {
		fprintf(stderr, "bench/serve: %s: %s\n", method,
			json_object_to_json_string(*response));
		exit(1);
	}
	return r;
}

static char *create(struct agent_sandbox_client *c, const char *user, const char *chat)
{
	struct json_object *p = json_object_new_object(), *key = json_object_new_object(), *resp;
	json_object_object_add(key, "user", json_object_new_string(user));
	json_object_object_add(key, "chat", json_object_new_string(chat));
	json_object_object_add(p, "key", key);
	struct json_object *r = call(c, "session/create", p, &resp);
	struct json_object *id;
	json_object_object_get_ex(r, "sessionId", &id);
	char *s = xstrdup(json_object_get_string(id));
	json_object_put(resp);
	return s;
}

static void close_session(struct agent_sandbox_client *c, const char *id)
{
	struct json_object *p = json_object_new_object(), *resp;
	json_object_object_add(p, "sessionId", json_object_new_string(id));
	call(c, "session/close", p, &resp);
	json_object_put(resp);
}

static struct json_object *argv_of(const char *const *argv)
{
	struct json_object *a = json_object_new_array();
	for (; *argv; argv++)
		json_object_array_add(a, json_object_new_string(*argv));
	return a;
}

static double run_cli(const char *as, const char *dir)
{
	double start = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || chdir(dir) < 0)
			_exit(127);
		execl(as, as, "--", "true", (char *)NULL);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("agent-sandbox -- true", NULL);
	return now_ms() - start;
}

/* Proportional set size: the pages a forked supervisor shares with the
 * daemon count once between them, not once in each. */
static long pss_kib(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "r");
	long kib = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Pss:", 4))
			kib = atol(line + 4);
	if (f)
		fclose(f);
	return kib;
}

/* User and system CPU time of a process, in ms. */
static double cpu_ms(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;
	/* After the name: state, then 11 fields, then utime and stime. */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long kib = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atol(line + 6);
	if (f)
		fclose(f);
	return kib;
}

/* The daemon's children (the sessions' supervisors), from /proc. */
static long children_rss_kib(pid_t parent, int *count)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	FILE *f = fopen(path, "r");
	long total = 0;
	int pid;
	*count = 0;
	while (f && fscanf(f, "%d", &pid) == 1) {
		total += pss_kib(pid);
		(*count)++;
	}
	if (f)
		fclose(f);
	return total;
}

static double stream_gib(struct agent_sandbox_client *c, const char *sid, unsigned long long *got)
{
	static const char *const argv[] = {"head", "-c", "1073741824", "/dev/zero", NULL};
	struct json_object *p = json_object_new_object(), *resp;
	json_object_object_add(p, "sessionId", json_object_new_string(sid));
	json_object_object_add(p, "argv", argv_of(argv));
	double start = now_ms();
	call(c, "process/start", p, &resp);
	json_object_put(resp);
	*got = 0;
	for (;;) {
		struct json_object *note = NULL, *m, *params, *data;
		struct error err = ERROR_INIT;
		if (agent_sandbox_client_next(c, -1, &note, &err) <= 0)
			die("reading the output", &err);
		json_object_object_get_ex(note, "method", &m);
		json_object_object_get_ex(note, "params", &params);
		const char *method = json_object_get_string(m);
		if (!strcmp(method, "process/exited")) {
			json_object_put(note);
			break;
		}
		if (!strcmp(method, "process/output") &&
		    json_object_object_get_ex(params, "dataBase64", &data)) {
			size_t n;
			unsigned char *bytes =
			    base64_decode(json_object_get_string(data),
					  (size_t)json_object_get_string_len(data), &n);
			if (!bytes)
				die("output that is not base64", NULL);
			*got += n;
			free(bytes);
		}
		json_object_put(note);
	}
	return now_ms() - start;
}

static double pipe_gib(void)
{
	double start = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "head -c 1073741824 /dev/zero | cat >/dev/null",
		      (char *)NULL);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("head | cat", NULL);
	return now_ms() - start;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s AGENT_SANDBOX [RUNS]\n", argv[0]);
		return 2;
	}
	const char *as = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	int runs = argc > 2 ? atoi(argv[2]) : 50;
	if (runs < 3)
		runs = 3;
	char dir[] = "/var/tmp/agent-sandbox-bench-serve.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp", NULL);
	_cleanup_free_ char *rt = xasprintf("%s/run", dir);
	_cleanup_free_ char *data = xasprintf("%s/data", dir);
	_cleanup_free_ char *state = xasprintf("%s/state", dir);
	_cleanup_free_ char *project = xasprintf("%s/project", dir);
	_cleanup_free_ char *sock = xasprintf("%s/api.sock", dir);
	mkdir(rt, 0700);
	mkdir(data, 0700);
	mkdir(state, 0700);
	mkdir(project, 0755);
	setenv("XDG_RUNTIME_DIR", rt, 1);
	setenv("XDG_DATA_HOME", data, 1);
	setenv("XDG_STATE_HOME", state, 1);

	/* 100 sessions hold up to 300 inotify instances, a per-user limit that is
	 * 128 by default: raised for the run when we may, and put back. */
	long instances = 0;
	FILE *fi = fopen("/proc/sys/fs/inotify/max_user_instances", "r");
	if (fi && fscanf(fi, "%ld", &instances) != 1)
		instances = 0;
	if (fi)
		fclose(fi);
	bool raised = false;
	if (instances && instances < 512) {
		FILE *fo = fopen("/proc/sys/fs/inotify/max_user_instances", "w");
		raised = fo && fprintf(fo, "512\n") > 0;
		if (fo && fclose(fo) != 0)
			raised = false;
		if (raised)
			instances_to_restore = instances;
		fprintf(stderr, "bench/serve: fs.inotify.max_user_instances %ld%s\n", instances,
			raised ? ", raised to 512 for the run" : ": 100 sessions may not fit");
	}
	pid_t daemon = fork();
	daemon_pid = daemon;
	if (daemon == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0)
			dup2(null, 2);
		execl(as, as, "serve", "--socket", sock, "--max-sessions", "200", (char *)NULL);
		_exit(127);
	}
	struct agent_sandbox_client *c = NULL;
	struct error err = ERROR_INIT;
	for (int i = 0; i < 500 && !c; i++) {
		error_release(&err);
		if (agent_sandbox_client_connect(sock, &c, &err) < 0)
			usleep(10000);
	}
	if (!c)
		die("connecting to the daemon", &err);
	struct json_object *resp, *p = json_object_new_object();
	json_object_object_add(p, "protocolVersion", json_object_new_string("1"));
	call(c, "initialize", p, &resp);
	json_object_put(resp);

	/* session/create: a new workspace, then the same one again. */
	int n = runs < 20 ? runs : 20;
	double *cold = xcalloc((size_t)n, sizeof(double)),
	       *warm = xcalloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		char chat[32];
		snprintf(chat, sizeof(chat), "c%d", i);
		double t = now_ms();
		_cleanup_free_ char *id = create(c, "bench", chat);
		cold[i] = now_ms() - t;
		close_session(c, id);
	}
	for (int i = 0; i < n; i++) {
		char chat[32];
		snprintf(chat, sizeof(chat), "c%d", i);
		double t = now_ms();
		_cleanup_free_ char *id = create(c, "bench", chat);
		warm[i] = now_ms() - t;
		close_session(c, id);
	}

	fprintf(stderr, "bench/serve: sessions created and closed\n");
	/* process/exec of true, alternating with the command line. */
	_cleanup_free_ char *sid = create(c, "bench", "exec");
	double *ex = xcalloc((size_t)runs, sizeof(double)),
	       *cli = xcalloc((size_t)runs, sizeof(double));
	static const char *const t_argv[] = {"true", NULL};
	for (int i = 0; i < runs; i++) {
		p = json_object_new_object();
		json_object_object_add(p, "sessionId", json_object_new_string(sid));
		json_object_object_add(p, "argv", argv_of(t_argv));
		double t = now_ms();
		call(c, "process/exec", p, &resp);
		ex[i] = now_ms() - t;
		json_object_put(resp);
		cli[i] = run_cli(as, project);
	}

	fprintf(stderr, "bench/serve: exec measured; streaming 1 GiB\n");
	unsigned long long got = 0;
	double daemon_cpu = cpu_ms(daemon);
	struct timespec self0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &self0);
	double stream = stream_gib(c, sid, &got);
	daemon_cpu = cpu_ms(daemon) - daemon_cpu;
	struct timespec self1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &self1);
	double client_cpu =
	    (self1.tv_sec - self0.tv_sec) * 1e3 + (self1.tv_nsec - self0.tv_nsec) / 1e6;
	double piped = pipe_gib();
	if (got != 1073741824ull) {
		fprintf(stderr, "bench/serve: streamed %llu bytes, not 1 GiB\n", got);
		return 1;
	}
	close_session(c, sid);

	fprintf(stderr, "bench/serve: streamed; 100 sessions\n");
	/* 100 sessions at once. */
	long rss_before = rss_kib(daemon);
	char *ids[100];
	double t100 = now_ms();
	for (int i = 0; i < 100; i++) {
		char chat[32];
		snprintf(chat, sizeof(chat), "many%d", i);
		ids[i] = create(c, "bench", chat);
	}
	t100 = now_ms() - t100;
	long rss_after = rss_kib(daemon);
	int supervisors = 0;
	long sup_rss = children_rss_kib(daemon, &supervisors);
	for (int i = 0; i < 100; i++) {
		close_session(c, ids[i]);
		free(ids[i]);
	}

	double cold_m = median(cold, (size_t)n), warm_m = median(warm, (size_t)n);
	double ex_m = median(ex, (size_t)runs), cli_m = median(cli, (size_t)runs);
	printf("session/create, new workspace      %8.2f ms (median of %d)\n", cold_m, n);
	printf("session/create, existing workspace %8.2f ms (median of %d)\n", warm_m, n);
	printf("process/exec true                  %8.2f ms (median of %d)\n", ex_m, runs);
	printf("agent-sandbox -- true (CLI)        %8.2f ms (median of %d)   daemon/CLI %.3f\n",
	       cli_m, runs, ex_m / cli_m);
	printf("1 GiB through process/output       %8.0f ms  %.0f MiB/s\n", stream,
	       1024.0 / (stream / 1000));
	printf("  CPU: daemon %.0f ms, this client (json-c parse, base64 decode) %.0f ms\n",
	       daemon_cpu, client_cpu);
	printf("1 GiB head | cat                   %8.0f ms  %.0f MiB/s   daemon/pipe %.2f\n",
	       piped, 1024.0 / (piped / 1000), stream / piped);
	printf("100 sessions created in            %8.0f ms\n", t100);
	printf("daemon RSS: %ld KiB idle, %ld KiB with 100 sessions (%.1f KiB a session)\n",
	       rss_before, rss_after, (rss_after - rss_before) / 100.0);
	printf("supervisors: %d, %ld KiB PSS in all (%.0f KiB each)\n", supervisors, sup_rss,
	       supervisors ? (double)sup_rss / supervisors : 0.0);
	agent_sandbox_client_close(c);
	kill(daemon, SIGTERM);
	restore_instances();
	int status;
	waitpid(daemon, &status, 0);
	pid_t rm = fork();
	if (rm == 0) {
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	waitpid(rm, NULL, 0);
	return 0;
}
