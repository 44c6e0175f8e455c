/* This file checks the host and proves the policy. Every promise is tested
 * by attempting to break it inside a real sandbox started from this binary;
 * nothing is taken on trust from the configuration. Probes that need files
 * get a private temporary project, removed afterwards: doctor never leaves
 * anything in the user's project. */
#include "sandbox/cgroup.h"
#include "cli/doctor.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "cli/flags.h"
#include "policy/env.h"
#include "base/io.h"
#include "policy/path.h"
#include "cli/report.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp.h"
#include "spec/spec.h"
#include "cli/verbs.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "policy/trust.h"
#include "base/xalloc.h"

#define PROBE_TIMEOUT_MS 60000

/* ------------------------------------------------------------------ */
/* The checklist                                                        */

struct checklist {
	int out;
	unsigned failed;
};

static void check_line(struct checklist *cl, const char *mark, const char *name, const char *fix,
		       const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void check_line(struct checklist *cl, const char *mark, const char *name, const char *fix,
		       const char *fmt, va_list ap)
{
	/* A check's name and detail are one line each and carry paths, probe
	 * output and error messages: escaped whole. A fix is our own text,
	 * some of it over several lines; callers escape what they put in it. */
	_cleanup_free_ char *detail = xvasprintf(fmt, ap);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%-5s ", mark);
	term_escape_add(&sb, name);
	strbuf_addstr(&sb, ": ");
	term_escape_add(&sb, detail);
	strbuf_addch(&sb, '\n');
	if (fix) {
		strbuf_addstr(&sb, "      fix: ");
		term_escape_mode_add(&sb, fix, strlen(fix), TERM_ESCAPE_LINES);
		strbuf_addch(&sb, '\n');
	}
	write_all(cl->out, sb.buf, sb.len);
}

static void check_ok(struct checklist *cl, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check_ok(struct checklist *cl, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	check_line(cl, "ok", name, NULL, fmt, ap);
	va_end(ap);
}

static void check_warn(struct checklist *cl, const char *name, const char *fix, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));
static void check_warn(struct checklist *cl, const char *name, const char *fix, const char *fmt,
		       ...)
{
	va_list ap;
	va_start(ap, fmt);
	check_line(cl, "warn", name, fix, fmt, ap);
	va_end(ap);
}

static void check_fail(struct checklist *cl, const char *name, const char *fix, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));
static void check_fail(struct checklist *cl, const char *name, const char *fix, const char *fmt,
		       ...)
{
	va_list ap;
	va_start(ap, fmt);
	check_line(cl, "FAIL", name, fix, fmt, ap);
	va_end(ap);
	cl->failed++;
}

/* ------------------------------------------------------------------ */
/* Running a program and collecting what it says                        */

struct spawned {
	int status; /* as from waitpid, or -1 when it could not start */
	struct strbuf out, err;
};

static void spawned_release(struct spawned *s)
{
	strbuf_release(&s->out);
	strbuf_release(&s->err);
}

/* Runs path with argv and envp, stdin from /dev/null, and collects stdout
 * and stderr apart. A run that outlasts PROBE_TIMEOUT_MS is killed. */
static void spawn_collect(const char *path, char *const *argv, char *const *envp,
			  struct spawned *res)
{
	*res = (struct spawned){.status = -1, .out = STRBUF_INIT, .err = STRBUF_INIT};
	int out_pipe[2], err_pipe[2];
	if (pipe2(out_pipe, O_CLOEXEC) < 0)
		return;
	if (pipe2(err_pipe, O_CLOEXEC) < 0) {
		close(out_pipe[0]);
		close(out_pipe[1]);
		return;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
	pid_t pid;
	int r = posix_spawn(&pid, path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(out_pipe[1]);
	close(err_pipe[1]);
	if (r != 0) {
		strbuf_addf(&res->err, "%s: %s", path, strerror(r));
		close(out_pipe[0]);
		close(err_pipe[0]);
		return;
	}
	struct pollfd fds[2] = {{.fd = out_pipe[0], .events = POLLIN},
				{.fd = err_pipe[0], .events = POLLIN}};
	struct strbuf *bufs[2] = {&res->out, &res->err};
	int open_fds = 2;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (open_fds) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent =
		    (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (spent >= PROBE_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			strbuf_addstr(&res->err, "timed out\n");
			break;
		}
		int n = poll(fds, 2, (int)(PROBE_TIMEOUT_MS - spent));
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2 && n > 0; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			char buf[4096];
			ssize_t got = read(fds[i].fd, buf, sizeof(buf));
			if (got > 0) {
				strbuf_add(bufs[i], buf, (size_t)got);
			} else if (got == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return;
	res->status = status;
}

static bool exited_zero(const struct spawned *s)
{
	return s->status >= 0 && WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0;
}

/* The first line of text, for one-line reasons. */
static char *first_line(const char *text)
{
	const char *start = text;
	while (*start == '\n')
		start++;
	return xstrndup(start, strcspn(start, "\n"));
}

/* ------------------------------------------------------------------ */
/* Host checks                                                          */

/* "X.Y.Z" (or "X.Y") at the start of text, as one number to compare. */
static bool parse_version(const char *text, unsigned long *out)
{
	unsigned long part[3] = {0, 0, 0};
	const char *p = text;
	for (int i = 0; i < 3; i++) {
		if (*p < '0' || *p > '9')
			return i >= 2;
		char *end;
		errno = 0;
		part[i] = strtoul(p, &end, 10);
		if (errno || part[i] > 9999)
			return false;
		*out = (part[0] * 10000 + part[1]) * 10000 + part[2];
		p = end;
		if (*p != '.')
			return i >= 1;
		p++;
	}
	return true;
}

#define VERSION_NUMBER(a, b, c) (((unsigned long)(a)*10000 + (b)) * 10000 + (c))

/* How bwrap makes each bind read-only, nosuid and nodev. Up to 0.12 it
 * remounts the bind and every mount beneath it, found by reading all of
 * /proc/self/mountinfo: one scan per bind, so start-up grows with the
 * square of the number of binds (masked files are binds). bubblewrap
 * 0.13.0 (its #756) sets the flags with one mount_setattr(2) per bind
 * when the kernel has it (Linux 5.12), and falls back otherwise. */
static void check_bind_kind(struct checklist *cl, const char *version)
{
	const char *number = version + strlen("bubblewrap ");
	unsigned long bwrap_version = 0, kernel_version = 0;
	struct utsname uts;
	if (!parse_version(number, &bwrap_version)) {
		check_ok(cl, "bind mounts",
			 "bwrap %s: version not recognised, cost per bind unknown", number);
		return;
	}
	bool kernel_known = uname(&uts) == 0 && parse_version(uts.release, &kernel_version);
	if (bwrap_version < VERSION_NUMBER(0, 13, 0))
		check_ok(cl, "bind mounts",
			 "bwrap %s: one mountinfo scan per bind (slow with many binds; bubblewrap "
			 "0.13.0 and later make one mount_setattr per bind on Linux 5.12+)",
			 number);
	else if (kernel_known && kernel_version < VERSION_NUMBER(5, 12, 0))
		check_ok(cl, "bind mounts",
			 "bwrap %s on Linux %s: one mountinfo scan per bind (slow with many binds; "
			 "mount_setattr needs Linux 5.12)",
			 number, uts.release);
	else
		check_ok(cl, "bind mounts", "bwrap %s: one mount_setattr per bind", number);
}

static char *check_bwrap(struct checklist *cl, char **envp)
{
	_cleanup_free_ char *bwrap = env_find_program(envp, "bwrap");
	if (!bwrap) {
		check_fail(cl, "bwrap",
			   "install it: sudo apt-get install bubblewrap (Debian, Ubuntu), "
			   "sudo dnf install bubblewrap (Fedora), sudo pacman -S "
			   "bubblewrap (Arch)",
			   "not found on PATH");
		return NULL;
	}
	char *argv[] = {"bwrap", "--version", NULL};
	struct spawned run;
	spawn_collect(bwrap, argv, envp, &run);
	_cleanup_free_ char *version = first_line(strbuf_str(&run.out));
	bool works = exited_zero(&run) && !strncmp(version, "bubblewrap ", 11);
	if (works) {
		check_ok(cl, "bwrap", "%s (%s)", bwrap, version);
		check_bind_kind(cl, version);
	} else
		check_fail(cl, "bwrap",
			   "reinstall bubblewrap, or put a working bwrap first on PATH",
			   "%s --version failed: %s", bwrap,
			   run.err.len ? strbuf_str(&run.err) : "no version printed");
	spawned_release(&run);
	return works ? steal_ptr(&bwrap) : NULL;
}

static long read_sysctl(const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file(path, 64, &text, &len) < 0)
		return -1;
	char *end;
	long v = strtol(text, &end, 10);
	return end == text ? -1 : v;
}

/* errno of unshare(CLONE_NEWUSER) in a child, or 0 when it works. */
static int probe_user_namespace(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) < 0 ? (errno & 0xff) : 0);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EINVAL;
}

static bool in_container(void)
{
	return access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0;
}

/* Names what stops user namespaces, and how to lift it. */
static void diagnose_user_namespaces(struct checklist *cl, const char *bwrap_error)
{
	int e = probe_user_namespace();
	long max = read_sysctl("/proc/sys/user/max_user_namespaces");
	long clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
	long apparmor = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	if (max == 0)
		check_fail(cl, "user namespaces",
			   "sudo sysctl -w user.max_user_namespaces=15000, and make it last in "
			   "/etc/sysctl.d/90-userns.conf",
			   "user.max_user_namespaces is 0: the kernel allows no user namespaces");
	else if (clone == 0)
		check_fail(cl, "user namespaces",
			   "sudo sysctl -w kernel.unprivileged_userns_clone=1, and make it last in "
			   "/etc/sysctl.d/90-userns.conf",
			   "kernel.unprivileged_userns_clone is 0 (Debian's switch)");
	else if (apparmor == 1)
		check_fail(cl, "user namespaces",
			   "allow bwrap to create them with an AppArmor profile, "
			   "/etc/apparmor.d/bwrap:\n"
			   "        abi <abi/4.0>,\n"
			   "        include <tunables/global>\n"
			   "        profile bwrap /usr/bin/bwrap flags=(unconfined) {\n"
			   "          userns,\n"
			   "          include if exists <local/bwrap>\n"
			   "        }\n"
			   "      then: sudo apparmor_parser -r /etc/apparmor.d/bwrap (or, for the "
			   "whole machine: sudo sysctl -w "
			   "kernel.apparmor_restrict_unprivileged_userns=0)",
			   "Ubuntu's kernel.apparmor_restrict_unprivileged_userns=1 stops "
			   "unconfined programs from creating user namespaces");
	else if (e == EPERM && in_container())
		check_fail(cl, "user namespaces",
			   "start the container with --security-opt seccomp=unconfined (or a "
			   "custom seccomp profile that allows unshare, clone with CLONE_NEWUSER, "
			   "mount and pivot_root), plus --security-opt apparmor=unconfined on "
			   "AppArmor hosts",
			   "this is a container whose seccomp profile (Docker's default) refuses "
			   "unshare(CLONE_NEWUSER)");
	else
		check_fail(
		    cl, "user namespaces",
		    "see bwrap's message; agent-sandbox needs what bwrap needs (user, mount, "
		    "pid and network namespaces)",
		    "bwrap cannot create its namespaces (unshare: %s): %s",
		    e ? strerror(e) : "works", bwrap_error);
}

static void check_user_namespaces(struct checklist *cl, const char *bwrap, char **envp)
{
	char *argv[] = {"bwrap", "--unshare-all", "--ro-bind", "/",  "/",    "--proc",
			"/proc", "--dev",	  "/dev",      "--", "true", NULL};
	/* As root bwrap needs no user namespace; ask the kernel directly too,
	 * because the sandbox runs ordinary users the same way. */
	struct spawned run;
	spawn_collect(bwrap, argv, envp, &run);
	if (exited_zero(&run)) {
		int e = probe_user_namespace();
		if (e)
			check_warn(cl, "user namespaces", NULL,
				   "bwrap works here, but unshare(CLONE_NEWUSER) fails (%s): "
				   "ordinary users may not be able to run sandboxes",
				   strerror(e));
		else
			check_ok(cl, "user namespaces", "bwrap creates its namespaces");
	} else {
		_cleanup_free_ char *why =
		    first_line(run.err.len ? strbuf_str(&run.err) : "it failed without a message");
		diagnose_user_namespaces(cl, why);
	}
	spawned_release(&run);
}

static void check_landlock(struct checklist *cl)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi >= LANDLOCK_ABI_RESOLVE_UNIX)
		check_ok(cl, "landlock",
			 "ABI %ld; unix sockets: the host's abstract ones out of reach, pathname "
			 "ones only when listed",
			 abi);
	else if (abi >= LANDLOCK_ABI_SCOPE)
		check_ok(cl, "landlock",
			 "ABI %ld; the host's abstract unix sockets are out of reach (pathname "
			 "ones are masked; ABI %d would also refuse them)",
			 abi, LANDLOCK_ABI_RESOLVE_UNIX);
	else if (abi >= 1)
		check_warn(cl, "landlock", "use a kernel of 6.12 or later (Landlock ABI 6)",
			   "ABI %ld: with --network=true the host's abstract unix sockets stay "
			   "reachable",
			   abi);
	else if (errno == EOPNOTSUPP)
		check_warn(cl, "landlock",
			   "add landlock to the lsm= list on the kernel command line",
			   "built into the kernel but disabled at boot; the second layer is off");
	else
		check_warn(cl, "landlock", "use a kernel of 5.13 or later built with Landlock",
			   "not available (%s); the second layer is off", strerror(errno));
}

/* Which limits this user can have held, and how: a cgroup holds them for
 * the sandbox as a whole; without one, rlimits hold less, or nothing. */
static void check_limits(struct checklist *cl)
{
	struct cgroup_support c;
	sandbox_cgroup_probe(&c);
	const char *fix =
	    geteuid() == 0 ? "mount the cgroup controllers (pids, memory, cpu) under /sys/fs/cgroup"
			   : "run where a cgroup v2 subtree is delegated to this user (systemd-run "
			     "--user --scope agent-sandbox ...), or as root";
	static const struct {
		const char *name;
		enum limit_kind kind;
	} rows[] = {
	    {"memory limit", LIMIT_MEMORY},
	    {"cpus limit", LIMIT_CPUS},
	    {"pids limit", LIMIT_PIDS},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		bool held = rows[i].kind == LIMIT_MEMORY ? c.memory
			    : rows[i].kind == LIMIT_CPUS ? c.cpu
							 : c.pids || geteuid() != 0;
		/* As a user, RLIMIT_NPROC in the user namespace holds pids. */
		const char *how = sandbox_limit_mechanism(&c, rows[i].kind);
		if (held)
			check_ok(cl, rows[i].name, "%s", how);
		else
			check_warn(cl, rows[i].name, fix, "%s", how);
	}
	check_ok(cl, "timeout",
		 "the supervisor's timer: SIGTERM to every process, SIGKILL 5s "
		 "later, exit 124");
}

static void check_seccomp(struct checklist *cl)
{
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
		check_fail(cl, "seccomp", "use a kernel built with CONFIG_SECCOMP_FILTER",
			   "the kernel has no seccomp (%s)", strerror(errno));
		return;
	}
	/* The filter is compiled in: load it where it can do no harm, in a
	 * child that then exits, as the sandbox's init will. */
	pid_t pid = fork();
	if (pid == 0) {
		struct error err = ERROR_INIT;
		_exit(seccomp_filter_load_sandbox(&err) < 0 ? 1 : 0);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		check_fail(cl, "seccomp", "use a kernel built with CONFIG_SECCOMP_FILTER",
			   "the kernel refuses the filter");
	else
		check_ok(cl, "seccomp",
			 "the filter is built in; the sandbox's init loads it into every sandbox");
}

/* ------------------------------------------------------------------ */
/* Outside: choosing the probes and reading their answers               */

/* A directory the policy makes read-only: home when it is, else any. */
static const char *pick_read_only(const struct sandbox_spec *s)
{
	if (s->home) {
		const struct access_entry *e = policy_entry_for(&s->policy, s->home);
		if (e && e->level == ACCESS_RO && e->is_dir)
			return s->home;
	}
	for (size_t i = 0; i < s->policy.len; i++) {
		const struct access_entry *e = &s->policy.entries[i];
		if (e->level == ACCESS_RO && e->is_dir)
			return e->path;
	}
	return "/usr"; /* the host root is read-only inside */
}

/* An excluded path that has something in it on the host and that we can
 * read there, so that seeing nothing inside proves the exclusion; one in
 * the home directory first (the credentials), before /etc/shadow and the
 * like, which only root can read anyway. */
static const char *pick_excluded_in(const struct sandbox_spec *s, const char *under)
{
	for (size_t i = 0; i < s->policy.len; i++) {
		const struct access_entry *e = &s->policy.entries[i];
		struct stat st;
		if (e->level != ACCESS_EXCLUDE || (under && !path_is_within(e->path, under)) ||
		    access(e->path, R_OK) < 0 || stat(e->path, &st) < 0)
			continue;
		if (S_ISREG(st.st_mode) && st.st_size > 0)
			return e->path;
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(e->path);
			bool has = false;
			for (struct dirent *de; d && !has && (de = readdir(d));)
				has = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
			if (d)
				closedir(d);
			if (has)
				return e->path;
		}
	}
	return NULL;
}

static const char *pick_excluded(const struct sandbox_spec *s)
{
	const char *in_home = s->home ? pick_excluded_in(s, s->home) : NULL;
	return in_home ? in_home : pick_excluded_in(s, NULL);
}

/* Reads "ok NAME: ..." and "FAIL NAME: ..." lines into the checklist, and
 * fails every expected name that did not answer. */
static void collect(struct checklist *cl, const struct spawned *run, const struct strv *expected,
		    const char *fix)
{
	_cleanup_strv_ struct strv answered = STRV_INIT;
	_cleanup_free_ char *copy = xstrdup(strbuf_str(&run->out));
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		bool ok = !strncmp(line, "ok ", 3);
		if (!ok && strncmp(line, "FAIL ", 5))
			continue;
		char *name = line + (ok ? 3 : 5);
		char *colon = strstr(name, ": ");
		if (!colon)
			continue;
		*colon = '\0';
		strv_push(&answered, name);
		if (ok)
			check_ok(cl, name, "%s", colon + 2);
		else
			check_fail(cl, name, fix, "%s", colon + 2);
	}
	_cleanup_free_ char *why = first_line(run->err.len ? strbuf_str(&run->err) : "no output");
	for (size_t i = 0; i < expected->len; i++)
		if (!strv_contains(&answered, expected->items[i]))
			check_fail(cl, expected->items[i],
				   "run agent-sandbox --debug true to see why the sandbox does not "
				   "start",
				   "the sandbox did not run the probe: %s", why);
}

/* cwd: a temporary project to run in, with its subdirectory "hidden"
 * excluded; NULL for the real working directory and policy. */
static void run_probes(struct checklist *cl, const char *self, char **envp, const char *cwd,
		       struct strv *specs, const char *fix)
{
	_cleanup_strv_ struct strv argv = STRV_INIT;
	_cleanup_strv_ struct strv expected = STRV_INIT;
	strv_push(&argv, "agent-sandbox");
	if (cwd) {
		strv_push(&argv, "-C");
		strv_push(&argv, cwd);
		strv_push(&argv, "--exclude");
		strv_push(&argv, "hidden");
	}
	strv_push(&argv, "--");
	strv_push(&argv, SANDBOX_SELF);
	strv_push(&argv, DOCTOR_PROBE_ARG);
	for (size_t i = 0; i < specs->len; i++) {
		strv_push(&argv, specs->items[i]);
		const char *name = strchr(specs->items[i], ':') + 1;
		strv_push_owned(&expected, xstrndup(name, strcspn(name, ":")));
	}
	struct spawned run;
	spawn_collect(self, strv_array(&argv), envp, &run);
	collect(cl, &run, &expected, fix);
	spawned_release(&run);
}

/* Removes the temporary project: only the names doctor created in it. */
static void remove_probe_project(const char *dir)
{
	static const char *const names[] = {".env", "hidden/probe.txt", "hidden"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, names[i]);
		if (unlink(path) < 0 && errno == EISDIR)
			rmdir(path);
	}
	rmdir(dir);
}

static int write_new_file(const char *path, const char *content)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	return write_all(fd, content, strlen(content));
}

static void prove_policy(struct checklist *cl, const char *self, char **envp)
{
	/* The policy as `agent-sandbox policy` would show it here. */
	char *argv[] = {"agent-sandbox", "policy", NULL};
	_cleanup_(cli_release) struct cli cli;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (cli_parse(2, argv, &cli, &err) < 0) {
		check_fail(cl, "policy", NULL, "%s", err.msg);
		return;
	}
	struct sandbox_request req;
	cli_request(&cli, envp, &req);
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	if (sandbox_plan(&req, &s, &err) < 0) {
		_cleanup_free_ char *hint = err.hint ? term_escape(err.hint) : NULL;
		check_fail(cl, "policy", hint, "%s", err.msg);
		return;
	}
	enum trust_state t = s.trust.state;
	if (t == TRUST_UNAPPROVED || t == TRUST_CHANGED) {
		_cleanup_free_ char *file = term_escape(s.trust.file);
		_cleanup_free_ char *fix =
		    xasprintf("review it, then: agent-sandbox trust %s", file);
		check_fail(cl, "project config", fix, "%s loosens the defaults and is not approved",
			   s.trust.file);
		return;
	}
	check_ok(cl, "project config", "%s",
		 t == TRUST_NO_FILE    ? "none here"
		 : t == TRUST_APPROVED ? "loosens, and this content is approved"
				       : "only tightens");

	_cleanup_strv_ struct strv specs = STRV_INIT;
	strv_pushf(&specs, "nowrite:read-only path:%s", pick_read_only(&s));
	const char *excluded = pick_excluded(&s);
	if (excluded)
		strv_pushf(&specs, "empty:excluded path:%s", excluded);
	if (s.audit_dir)
		strv_pushf(&specs, "audit:audit log:%s", s.audit_dir);
	switch (s.cfg.network.mode) {
	case NETWORK_FILTERED:
		strv_push(&specs, "proxy:unlisted host:-");
		strv_push(&specs, "direct:direct connection:1.1.1.1");
		break;
	case NETWORK_NONE:
		strv_push(&specs, "direct:direct connection:1.1.1.1");
		break;
	case NETWORK_HOST:
		check_warn(cl, "network", NULL,
			   "the host network is configured (%s): no host is refused",
			   s.cfg.network.origin);
		break;
	}
	run_probes(cl, self, envp, NULL, &specs,
		   "this promise does not hold: report it with the output of agent-sandbox "
		   "--debug true");

	/* Files the probes need go into a private temporary project. */
	const char *tmp = env_get(envp, "TMPDIR");
	_cleanup_free_ char *dir =
	    xasprintf("%s/agent-sandbox-doctor.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		check_fail(cl, "temporary project", NULL, "cannot create one in %s: %s", dir,
			   strerror(errno));
		return;
	}
	char token[SHA256_HEX_LEN + 1];
	_cleanup_free_ char *seed = xasprintf("%s %d %ld", dir, (int)getpid(), (long)time(NULL));
	sha256_hex(seed, strlen(seed), token);
	_cleanup_free_ char *secret = xasprintf("%s/.env", dir);
	_cleanup_free_ char *content = xasprintf("API_TOKEN=%s\n", token);
	_cleanup_free_ char *hidden = xasprintf("%s/hidden", dir);
	_cleanup_free_ char *probe = xasprintf("%s/probe.txt", hidden);
	int r = write_new_file(secret, content);
	if (r == 0 && mkdir(hidden, 0700) < 0)
		r = -errno;
	if (r == 0)
		r = write_new_file(probe, "visible only outside\n");
	if (r < 0) {
		check_fail(cl, "temporary project", NULL, "cannot write in %s: %s", dir,
			   strerror(-r));
		remove_probe_project(dir);
		return;
	}
	_cleanup_strv_ struct strv temp_specs = STRV_INIT;
	strv_pushf(&temp_specs, "secret:masked secret:%s:%s", secret, token);
	strv_pushf(&temp_specs, "empty:excluded directory:%s", hidden);
	run_probes(cl, self, envp, dir, &temp_specs,
		   "secret masking does not hold: check \"secrets\" in your configs");
	remove_probe_project(dir);
}

int doctor_main(char **envp, int out)
{
	struct checklist cl = {.out = out};
	_cleanup_free_ char *bwrap = check_bwrap(&cl, envp);
	if (bwrap)
		check_user_namespaces(&cl, bwrap, envp);
	check_landlock(&cl);
	check_seccomp(&cl);
	check_limits(&cl);

	_cleanup_free_ char *self = NULL;
	if (path_read_link("/proc/self/exe", &self) < 0)
		check_fail(&cl, "sandbox", NULL, "cannot find this binary in /proc/self/exe");
	else if (!bwrap || cl.failed)
		check_fail(&cl, "sandbox", "fix the checks above first",
			   "not started: the host cannot run sandboxes yet");
	else
		prove_policy(&cl, self, envp);

	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (cl.failed)
		strbuf_addf(&sb, "\n%u check%s failed\n", cl.failed, cl.failed == 1 ? "" : "s");
	else
		strbuf_addstr(&sb, "\nall checks hold\n");
	write_all(out, sb.buf, sb.len);
	return cl.failed ? 1 : 0;
}
