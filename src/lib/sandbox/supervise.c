/* This file owns the bwrap child process. It never decides policy; it only
 * starts what bwrap_render produced, passes signals on, and reports how it
 * ended. If the sandbox cannot be built, the command does not run: bwrap
 * exits before the init reports ready, and we say why. */
#include "sandbox/supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "inside/init.h"
#include "sandbox/cgroup.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

#define CAPTURE_LIMIT (64 * 1024)

int supervisor_prepare(struct supervisor *sv, int err_fd, struct error *err)
{
	*sv = (struct supervisor){
	    .ready_pipe = {-1, -1},
	    .stderr_pipe = {-1, -1},
	    .info_pipe = {-1, -1},
	    .stderr_copy = -1,
	};
	if (pipe2(sv->ready_pipe, O_CLOEXEC) < 0 || pipe2(sv->stderr_pipe, O_CLOEXEC) < 0 ||
	    pipe2(sv->info_pipe, O_CLOEXEC) < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating pipes for bwrap");
	sv->stderr_copy = fcntl(err_fd, F_DUPFD_CLOEXEC, 3);
	if (sv->stderr_copy < 0)
		return error_errno(err, ERROR_SETUP, errno, "duplicating stderr");
	for (int i = 0; i < sandbox_forwarded_signals_len; i++) {
		struct sigaction old;
		int sig = sandbox_forwarded_signals[i];
		if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			sv->ignored_signals |= 1ul << sig;
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void supervisor_release(struct supervisor *sv)
{
	for (int i = 0; i < 2; i++) {
		close_fd(&sv->ready_pipe[i]);
		close_fd(&sv->stderr_pipe[i]);
		close_fd(&sv->info_pipe[i]);
	}
	close_fd(&sv->stderr_copy);
}

static int args_memfd(const struct strv *args, size_t count, struct error *err)
{
	_cleanup_close_ int fd = memfd_create("bwrap-args", MFD_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating a memfd for bwrap arguments");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < count; i++)
		strbuf_add(&sb, args->items[i], strlen(args->items[i]) + 1);
	int r = write_all(fd, strbuf_str(&sb), sb.len);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "writing bwrap arguments");
	if (lseek(fd, 0, SEEK_SET) < 0)
		return error_errno(err, ERROR_SETUP, errno, "rewinding bwrap arguments");
	return steal_fd(&fd);
}

static int keep_open_across_exec(int fd)
{
	return fd < 0 ? 0 : fcntl(fd, F_SETFD, 0);
}

/* Every descriptor from 3 up is closed at exec unless kept after this:
 * bwrap hands whatever it inherits to the command, and a descriptor the
 * caller left open (a connection to a host socket, a listening socket, a
 * directory, through which /proc/self/fd/N reaches past every mount)
 * would be the command's. */
static int close_on_exec_from_3(void)
{
	if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) == 0)
		return 0;
	/* Before Linux 5.11: each open descriptor, as /proc lists them. */
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int self = dirfd(d), r = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		int fd = atoi(e->d_name);
		if (fd >= 3 && fd != self && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
			r = -1;
	}
	closedir(d);
	return r;
}

static _Noreturn void exec_bwrap(struct supervisor *sv, const struct supervise_request *req,
				 char **argv, int args_fd, const sigset_t *original_mask)
{
	if (dup2(req->in, STDIN_FILENO) < 0 || dup2(req->out, STDOUT_FILENO) < 0 ||
	    dup2(sv->stderr_pipe[1], STDERR_FILENO) < 0)
		_exit(127);
	if (close_on_exec_from_3() < 0 || keep_open_across_exec(req->inherited_fd) < 0 ||
	    keep_open_across_exec(args_fd) < 0 || keep_open_across_exec(req->mounts_fd) < 0 ||
	    keep_open_across_exec(sv->ready_pipe[1]) < 0 ||
	    keep_open_across_exec(sv->info_pipe[1]) < 0 ||
	    keep_open_across_exec(sv->stderr_copy) < 0 ||
	    keep_open_across_exec(req->control_fd) < 0)
		_exit(127);
	/* Terminal signals go to the whole foreground process group. bwrap
	 * must survive them (it would take the sandbox down); the command
	 * receives them itself, and the init restores its dispositions. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigprocmask(SIG_SETMASK, original_mask, NULL);
	/* Before bwrap exists: no process of the sandbox is outside. */
	if (sandbox_cgroup_enter(req->cgroup_procs_fds, req->cgroup_procs_len) < 0) {
		dprintf(STDERR_FILENO, "entering the sandbox's cgroup: %s\n", strerror(errno));
		_exit(127);
	}

	execve(req->bwrap, argv, req->envp);
	/* Unchecked: this child exits 127 either way, and stderr is the only
	 * place a failure to report could be reported. */
	dprintf(STDERR_FILENO, "executing %s: %s\n", req->bwrap, strerror(errno));
	_exit(127);
}

struct watch {
	pid_t bwrap;
	pid_t init; /* host pid of the sandbox's init, once known */
	bool exited;
	int status;
	bool ready;
	int ready_fd;		/* the caller's, told once ready; 0: none */
	bool stopped;		/* an event source asked for the sandbox to stop */
	bool stop_requested;	/* `stop` sent SANDBOX_TERMINATE_SIGNAL or _KILL_SIGNAL */
	bool timed_out;		/* the deadline passed: SIGTERM sent, SIGKILL next */
	int interrupted_by;	/* a signal that arrived before the sandbox was up */
	struct strbuf captured; /* bwrap's stderr before ready */
	struct strbuf info;
};

static void read_info(struct watch *w)
{
	struct json_object *obj = json_tokener_parse(strbuf_str(&w->info));
	struct json_object *pid = NULL;
	if (obj && json_object_object_get_ex(obj, "child-pid", &pid) &&
	    json_object_is_type(pid, json_type_int))
		w->init = (pid_t)json_object_get_int(pid);
	json_object_put(obj);
}

static void on_signal(struct watch *w, const struct signalfd_siginfo *si,
		      const struct supervise_request *req)
{
	int sig = (int)si->ssi_signo;
	if (sig == SIGCHLD) {
		int status;
		if (!w->exited && waitpid(w->bwrap, &status, WNOHANG) == w->bwrap) {
			w->exited = true;
			w->status = status;
		}
		return;
	}
	if (sig == SANDBOX_TERMINATE_SIGNAL || sig == SANDBOX_KILL_SIGNAL) {
		/* From `stop` (any process of our uid may signal us; none
		 * inside the sandbox can: it does not see our pid). */
		w->stop_requested = true;
		if (w->ready && w->init > 0) {
			kill(w->init,
			     sig == SANDBOX_KILL_SIGNAL ? SIGKILL : SANDBOX_TERMINATE_SIGNAL);
			return;
		}
	}
	if (!w->ready) {
		/* Interrupted while setting up: nothing has run yet. */
		if (!w->interrupted_by)
			w->interrupted_by = sig;
		kill(w->bwrap, SIGKILL);
		return;
	}
	/* A terminal-generated signal (SI_KERNEL) already reached the command
	 * when it shares our process group; sending it again would double it. */
	bool from_terminal = si->ssi_code == SI_KERNEL;
	if ((req->new_session || !from_terminal) && w->init > 0)
		kill(w->init, sig);
}

/* bwrap's and the init's own messages name paths from the policy: their
 * lines reach the terminal with anything else it would act on escaped.
 * (The command's output does not pass here; it has the terminal itself.) */
static void write_terminal(int fd, const char *text, size_t len)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	term_escape_mode_add(&sb, text, len, TERM_ESCAPE_LINES);
	/* Unchecked: fd is our stderr, where a failure would be reported,
	 * and the run's outcome does not depend on these lines arriving. */
	(void)write_all(fd, sb.buf, sb.len);
}

/* Returns false at end of file or on a hard error. */
static bool pump(int fd, struct watch *w, int kind, int err_fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	switch (kind) {
	case 0: /* ready */
		if (!w->ready) {
			w->ready = true;
			if (w->ready_fd > 2) {
				/* Unchecked: a caller that stopped listening
				 * learns of the sandbox some other way. */
				(void)write_all(w->ready_fd, "R", 1);
				w->ready_fd = 0;
			}
			if (w->captured.len)
				write_terminal(err_fd, w->captured.buf, w->captured.len);
			strbuf_reset(&w->captured);
		}
		break;
	case 1: /* bwrap stderr */
		if (w->ready)
			write_terminal(err_fd, buf, (size_t)n);
		else if (w->captured.len < CAPTURE_LIMIT)
			strbuf_add(&w->captured, buf, (size_t)n);
		break;
	case 2: /* info */
		if (w->info.len < CAPTURE_LIMIT)
			strbuf_add(&w->info, buf, (size_t)n);
		break;
	}
	return true;
}

static bool file_says(const char *path, const char *value)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file(path, 64, &text, &len) < 0)
		return false;
	text[strcspn(text, "\n")] = '\0';
	return !strcmp(text, value);
}

static void explain_setup_failure(const char *bwrap_says, struct error *err)
{
	bool namespaces = strstr(bwrap_says, "uid map") || strstr(bwrap_says, "namespace") ||
			  strstr(bwrap_says, "unshare") || strstr(bwrap_says, "clone");
	if (!namespaces)
		return;
	if (file_says("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"))
		error_hint(err,
			   "AppArmor forbids unprivileged user namespaces on this system "
			   "(kernel.apparmor_restrict_unprivileged_userns=1). Allow bwrap with an "
			   "AppArmor profile (/etc/apparmor.d/bwrap: abi <abi/4.0>, include "
			   "<tunables/global>, profile bwrap /usr/bin/bwrap flags=(unconfined) "
			   "{ userns, }), then sudo apparmor_parser -r /etc/apparmor.d/bwrap");
	else if (file_says("/proc/sys/user/max_user_namespaces", "0"))
		error_hint(err, "user namespaces are disabled (user.max_user_namespaces=0); "
				"enable them with sudo sysctl user.max_user_namespaces=15000");
	else
		error_hint(err, "bwrap needs unprivileged user namespaces. Inside a container, "
				"run it with --security-opt seccomp=unconfined --security-opt "
				"apparmor=unconfined (Docker's default profiles block unshare); on "
				"the host, check sysctl user.max_user_namespaces");
}

static void arm_timer(int timerfd, unsigned long long ms)
{
	struct itimerspec its = {
	    .it_value = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000}};
	/* Unchecked: a valid timerfd and a positive time cannot fail. */
	(void)timerfd_settime(timerfd, 0, &its, NULL);
}

/* The deadline: every process inside gets SIGTERM through the init, and
 * the grace starts; at its end the whole pid namespace dies with the init.
 * Before the init is up there is nothing to be graceful with. */
static void on_timer(struct watch *w, int timerfd)
{
	uint64_t expirations;
	if (read(timerfd, &expirations, sizeof(expirations)) != (ssize_t)sizeof(expirations))
		return;
	if (!w->timed_out && w->ready && w->init > 0) {
		w->timed_out = true;
		kill(w->init, SANDBOX_TERMINATE_SIGNAL);
		arm_timer(timerfd, SUPERVISE_GRACE_MS);
		return;
	}
	w->timed_out = true;
	if (w->init > 0)
		kill(w->init, SIGKILL);
	kill(w->bwrap, SIGKILL);
}

static int watch_loop(struct supervisor *sv, const struct supervise_request *req, struct watch *w,
		      int sigfd, int timerfd)
{
	struct pollfd pfd[5 + SUPERVISE_SOURCES_MAX] = {
	    {.fd = sigfd, .events = POLLIN},
	    {.fd = sv->ready_pipe[0], .events = POLLIN},
	    {.fd = sv->stderr_pipe[0], .events = POLLIN},
	    {.fd = sv->info_pipe[0], .events = POLLIN},
	    {.fd = timerfd, .events = POLLIN},
	};
	nfds_t count = 5;
	for (size_t i = 0; i < req->sources_len && i < SUPERVISE_SOURCES_MAX; i++)
		pfd[count++] = (struct pollfd){.fd = req->sources[i].fd, .events = POLLIN};
	while (!w->exited) {
		if (poll(pfd, count, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[4].revents & POLLIN)
			on_timer(w, timerfd);
		for (nfds_t i = 5; i < count; i++) {
			const struct supervise_source *src = &req->sources[i - 5];
			if (!(pfd[i].revents & POLLIN) || src->ready(src->ctx) == 0 || w->stopped)
				continue;
			w->stopped = true;
			if (w->init > 0)
				kill(w->init, SIGKILL);
			kill(w->bwrap, SIGKILL);
		}
		for (int k = 1; k < 4; k++) {
			if (!pfd[k].revents)
				continue;
			if (!pump(pfd[k].fd, w, k - 1, req->err))
				pfd[k].fd = -1;
			if (k == 3 && !w->init)
				read_info(w);
		}
		/* After the pipes: a signal that arrives with the init's ready
		 * byte in the same wakeup is for a running command, to be
		 * forwarded, not a reason to abandon the set-up. */
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				on_signal(w, &si, req);
		}
	}
	/* bwrap and the init are gone; take what is left of their output
	 * without waiting for writers that might linger. */
	int flags = fcntl(sv->stderr_pipe[0], F_GETFL);
	if (flags >= 0 && fcntl(sv->stderr_pipe[0], F_SETFL, flags | O_NONBLOCK) == 0) {
		struct pollfd p = {.fd = sv->stderr_pipe[0], .events = POLLIN};
		while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN) &&
		       pump(sv->stderr_pipe[0], w, 1, req->err))
			;
	}
	return 0;
}

static void restore_foreground(int tty_fd, bool was_foreground)
{
	if (!was_foreground || tcgetpgrp(tty_fd) == getpgrp())
		return;
	/* A shell inside may have taken the terminal for its own process
	 * group; take it back so the user's shell gets it when we exit. */
	sigset_t ttou, old;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(tty_fd, getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The host side may hold a descriptor pair per proxied connection; bwrap
 * and the sandbox keep the caller's limit (raised only after the fork). */
static void raise_descriptor_limit(void)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_cur >= lim.rlim_max)
		return;
	lim.rlim_cur = lim.rlim_max < 65536 ? lim.rlim_max : 65536;
	setrlimit(RLIMIT_NOFILE, &lim);
}

int supervisor_run(struct supervisor *sv, const struct supervise_request *req, struct error *err)
{
	_cleanup_close_ int args_fd = args_memfd(req->args, req->command_start, err);
	if (args_fd < 0)
		return -1;
	/* Options travel in the memfd; bwrap takes the command only from argv. */
	_cleanup_strv_ struct strv argv = STRV_INIT;
	strv_push(&argv, "bwrap");
	strv_push(&argv, "--args");
	strv_pushf(&argv, "%d", args_fd);
	for (size_t i = req->command_start; i < req->args->len; i++)
		strv_push(&argv, req->args->items[i]);

	sigset_t handled, original;
	sigemptyset(&handled);
	sigaddset(&handled, SIGCHLD);
	for (int i = 0; i < sandbox_forwarded_signals_len; i++)
		sigaddset(&handled, sandbox_forwarded_signals[i]);
	sigaddset(&handled, SANDBOX_TERMINATE_SIGNAL);
	sigaddset(&handled, SANDBOX_KILL_SIGNAL);
	if (sigprocmask(SIG_BLOCK, &handled, &original) < 0)
		return error_errno(err, ERROR_SETUP, errno, "blocking signals");
	_cleanup_close_ int sigfd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		sigprocmask(SIG_SETMASK, &original, NULL);
		return error_errno(err, ERROR_SETUP, errno, "creating a signalfd");
	}

	_cleanup_close_ int timerfd = -1;
	if (req->timeout_ms) {
		timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (timerfd < 0) {
			sigprocmask(SIG_SETMASK, &original, NULL);
			return error_errno(err, ERROR_SETUP, errno, "creating the timeout's timer");
		}
	}
	bool was_foreground = isatty(req->in) && tcgetpgrp(req->in) == getpgrp();
	struct watch w = {.captured = STRBUF_INIT, .info = STRBUF_INIT, .ready_fd = req->ready_fd};
	w.bwrap = fork();
	if (w.bwrap < 0) {
		sigprocmask(SIG_SETMASK, &original, NULL);
		return error_errno(err, ERROR_SETUP, errno, "starting bwrap");
	}
	if (w.bwrap == 0)
		exec_bwrap(sv, req, argv.items, args_fd, &original);
	raise_descriptor_limit();

	close_fd(&sv->ready_pipe[1]);
	close_fd(&sv->stderr_pipe[1]);
	close_fd(&sv->info_pipe[1]);
	close_fd(&sv->stderr_copy);

	if (timerfd >= 0)
		arm_timer(timerfd, req->timeout_ms);
	int r = watch_loop(sv, req, &w, sigfd, timerfd);
	sv->timed_out = w.timed_out;
	if (r < 0) {
		kill(w.bwrap, SIGKILL);
		waitpid(w.bwrap, NULL, 0);
	}
	restore_foreground(req->in, was_foreground);
	sigprocmask(SIG_SETMASK, &original, NULL);
	sv->stop_requested = w.stop_requested;

	int result;
	if (r < 0) {
		result = error_errno(err, ERROR_SETUP, -r, "watching bwrap");
	} else if (w.timed_out) {
		result = SUPERVISE_TIMEOUT_STATUS;
	} else if (w.stopped) {
		result = error_set(err, ERROR_SETUP, "the sandbox was stopped");
	} else if (w.interrupted_by) {
		result = 128 + w.interrupted_by;
	} else if (!w.ready) {
		_cleanup_free_ char *says = xstrdup(strbuf_str(&w.captured));
		size_t n = strlen(says);
		while (n && (says[n - 1] == '\n' || says[n - 1] == ' '))
			says[--n] = '\0';
		if (n)
			error_set(err, ERROR_SETUP, "cannot set up the sandbox: %s", says);
		else if (WIFSIGNALED(w.status))
			error_set(err, ERROR_SETUP,
				  "cannot set up the sandbox: bwrap was killed by signal %d",
				  WTERMSIG(w.status));
		else
			error_set(err, ERROR_SETUP,
				  "cannot set up the sandbox: bwrap exited with status %d",
				  WEXITSTATUS(w.status));
		explain_setup_failure(says, err);
		result = -1;
	} else if (WIFSIGNALED(w.status)) {
		result = 128 + WTERMSIG(w.status);
	} else {
		result = WEXITSTATUS(w.status);
	}
	strbuf_release(&w.captured);
	strbuf_release(&w.info);
	return result;
}
