/* The sandbox's init. It runs inside the finished sandbox, so it dies on
 * error (there is nothing to clean up) and never touches the host.
 *
 * Signals: the host forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT that were
 * sent to it with kill(2). Those arrive here from an ancestor namespace, so
 * their sender pid reads as 0; only those are passed on to the command. A
 * signal sent by a process inside the sandbox (sender pid > 0) is dropped:
 * nothing inside can kill the init. Terminal-generated signals reach the
 * command directly when it shares the terminal's process group. */
#include "inside/init.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "audit/writer.h"
#include "base/error.h"
#include "base/io.h"
#include "inside/forwarder.h"
#include "inside/inside.h"
#include "sandbox/control.h"
#include "sandbox/landlock.h"
#include "sandbox/mount_plan.h"
#include "sandbox/seccomp.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

const int sandbox_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
const int sandbox_forwarded_signals_len = 4;

static _Noreturn __attribute__((format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *what = xvasprintf(fmt, ap);
	va_end(ap);
	/* What failed names paths and arguments: one line, escaped. */
	char *shown = term_escape(what); /* freed by _exit */
	fprintf(stderr, "agent-sandbox: init: %s\n", shown);
	_exit(EXIT_SETUP);
}

static long parse_number(const char *s, long max)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < 0 || v > max)
		die("invalid argument \"%s\"", s);
	return v;
}

static void noop_handler(int sig)
{
	(void)sig;
}

/* The binds bwrap leaves to us (masked files) are made first. Then, as a
 * path may change between the host's policy and the mounts (another
 * sandbox writing the same project swaps a file for a symlink to a
 * secret), everything mounted is checked against what the policy decided
 * on, inside the finished sandbox and before anything runs. */
static void set_up_mounts(int fd)
{
	struct mount_plan plan;
	struct error err = ERROR_INIT;
	if (mount_plan_read_fd(fd, &plan, &err) < 0)
		die("%s", err.msg);
	close(fd);
	if (mount_plan_apply(&plan, &err) < 0 || mount_plan_verify(&plan, &err) < 0)
		die("%s", err.msg);
	mount_plan_release(&plan);
}

/* bwrap gives the init CAP_SYS_ADMIN (and CAP_SETPCAP) in the sandbox's
 * user namespace only when it has binds to make. Whatever it was given,
 * nothing is kept: the bounding set is emptied, so that no exec can bring
 * a capability back (bwrap's no_new_privs holds too), then the ambient,
 * permitted, effective and inheritable sets. Checked, not assumed. */
static void drop_capabilities(void)
{
	for (unsigned long cap = 0; cap <= 63; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0 && errno == EINVAL)
			break; /* past the last capability this kernel knows */
		if (r == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			die("dropping capability %lu: %s", cap, strerror(errno));
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		die("clearing the ambient capabilities: %s", strerror(errno));
	struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {0};
	if (syscall(SYS_capset, &head, data) < 0)
		die("dropping capabilities: %s", strerror(errno));
	if (syscall(SYS_capget, &head, data) < 0)
		die("reading capabilities: %s", strerror(errno));
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			die("capabilities are left after dropping them");
}

/* What the init applies to the command, from its arguments. */
struct command_hardening {
	bool filtered_network;
	bool landlock; /* false only when told --no-landlock */
	char **writable;
	size_t writable_len;
	char **keep_dirs;
	size_t keep_dirs_len;
	char **sockets; /* listed unix sockets, for Landlock ABI 9 */
	size_t sockets_len;
	uint16_t *tcp_connect;
	size_t tcp_connect_len;
	unsigned pids;	    /* 0: no limit */
	rlim_t nproc;	    /* RLIMIT_NPROC from pids, reckoned once for every command */
	long address_space; /* bytes of RLIMIT_AS; 0: no limit */
	char **command_env; /* NAME=VALUE, for the command only */
	size_t command_env_len;
};

/* The layers that hold the command but not the init: the init keeps its
 * unix socket to the host's proxy (with Landlock ABI 9 the command cannot
 * connect to it) and its listening ports. Applied last,
 * in the child, so that nothing after them can fail for want of what they
 * take away. Any failure stops the run: the command never starts with
 * less than it was given. */
static void restrict_command(const struct command_hardening *cl)
{
	/* Blocked wrapped commands report through this descriptor, or, when
	 * a caller closed it, through a socket of their own (the audit socket
	 * is among the Landlock plan's sockets). No audit socket (no log, or
	 * a nested sandbox that keeps the outer one's): nothing to inherit. */
	(void)audit_inherit_socket();

	struct error err = ERROR_INIT;
	if (cl->landlock) {
		struct landlock_plan plan = {
		    .writable = cl->writable,
		    .writable_len = cl->writable_len,
		    .keep_dirs = cl->keep_dirs,
		    .keep_dirs_len = cl->keep_dirs_len,
		    .restrict_tcp = cl->filtered_network,
		    .tcp_connect = cl->tcp_connect,
		    .tcp_connect_len = cl->tcp_connect_len,
		    .sockets = cl->sockets,
		    .sockets_len = cl->sockets_len,
		};
		if (landlock_apply(&plan, &err) < 0)
			die("%s", err.msg);
	}
}

/* The sandbox's own user namespace makes RLIMIT_NPROC count only the
 * processes of this uid in it, that is, the sandbox's: the host's processes
 * of the same user are counted against the limit of the host's namespace,
 * not this one. The processes here already (the init and the command's
 * first process) come on top. Reckoned once, before the first command:
 * every command started later (exec-into) gets the same limit. The kernel
 * does not apply it to uid 0 of the host. */
static rlim_t reckon_nproc(unsigned pids)
{
	if (!pids)
		return 0;
	rlim_t present = 1; /* the command about to be forked */
	DIR *d = opendir("/proc");
	if (!d)
		die("counting the sandbox's processes: %s", strerror(errno));
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			present++;
	closedir(d);
	return pids + present;
}

static void limit_pids(rlim_t nproc)
{
	struct rlimit rl = {.rlim_cur = nproc, .rlim_max = nproc};
	if (nproc && setrlimit(RLIMIT_NPROC, &rl) < 0)
		die("limiting the number of processes: %s", strerror(errno));
}

static void reset_signals(unsigned long ignored, const sigset_t *original_mask)
{
	for (int i = 0; i < sandbox_forwarded_signals_len; i++) {
		int sig = sandbox_forwarded_signals[i];
		signal(sig, (ignored >> sig) & 1 ? SIG_IGN : SIG_DFL);
	}
	signal(SANDBOX_TERMINATE_SIGNAL, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, original_mask, NULL);
}

/* In the child, after its descriptors are in place: what every command of
 * the sandbox runs under, then the command. */
static _Noreturn void exec_command(char **command, const struct command_hardening *cl)
{
	limit_pids(cl->nproc);
	restrict_command(cl);
	for (size_t i = 0; i < cl->command_env_len; i++)
		if (putenv(cl->command_env[i]) != 0)
			_exit(EXIT_SETUP);
	/* Last: everything before may allocate (Landlock's rules, and a
	 * sanitizer's runtime reserves terabytes of address space). */
	if (cl->address_space) {
		struct rlimit rl = {.rlim_cur = (rlim_t)cl->address_space,
				    .rlim_max = (rlim_t)cl->address_space};
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			die("limiting the address space: %s", strerror(errno));
	}

	execvp(command[0], command);
	int saved = errno;
	char *shown = term_escape(command[0]); /* freed by _exit */
	fprintf(stderr, "agent-sandbox: %s: %s\n", shown,
		saved == ENOENT ? "command not found" : strerror(saved));
	_exit(saved == ENOENT ? 127 : 126);
}

/* Commands started later through the control socket (exec-into). */
#define EXECS_MAX CONTROL_EXECS_MAX
static struct {
	int fd; /* the host's end is the supervisor's relay; -1: none */
	const struct command_hardening *cl;
	const sigset_t *original_mask;
	struct {
		pid_t pid; /* 0: free */
		uint32_t id;
	} running[EXECS_MAX];
} control = {.fd = -1};

static void control_reply(uint32_t id, enum control_kind kind, int32_t value, const void *payload,
			  size_t len, int fd)
{
	struct control_header h = {CONTROL_MAGIC, CONTROL_VERSION, kind, id, value};
	/* Unchecked: the host gone, the answer has nobody to go to. */
	(void)control_send(control.fd, &h, payload, len, &fd, fd >= 0 ? 1 : 0);
}

static void control_start(uint32_t id, char *buf, size_t len, int32_t count, int fds[3])
{
	char **argv = control_parse_argv(buf, len, count);
	int slot = -1;
	for (int i = 0; i < EXECS_MAX && slot < 0; i++)
		if (!control.running[i].pid)
			slot = i;
	pid_t pid = -1;
	if (argv && slot >= 0)
		pid = fork();
	if (pid == 0) {
		reset_signals(0, control.original_mask);
		for (int i = 0; i < 3; i++)
			if (dup2(fds[i], i) < 0)
				_exit(EXIT_SETUP);
		/* Its own session: the first command's terminal signals and
		 * process group are not its. A terminal it was given (the
		 * daemon's pty) becomes its controlling terminal; one that
		 * already is another session's (exec-into's) stays that. */
		setsid();
		if (isatty(STDIN_FILENO))
			(void)ioctl(STDIN_FILENO, TIOCSCTTY, 0);
		exec_command(argv, control.cl);
	}
	int e = !argv ? EINVAL : slot < 0 ? EAGAIN : errno;
	free(argv);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (pid < 0) {
		control_reply(id, CONTROL_STARTED, -e, NULL, 0, -1);
		return;
	}
	control.running[slot].pid = pid;
	control.running[slot].id = id;
	/* Its pidfd tells the host its pid there; without one (an old
	 * kernel) the host knows only ours. */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	control_reply(id, CONTROL_STARTED, pid, NULL, 0, pidfd);
	if (pidfd >= 0)
		close(pidfd);
}

static void control_dispatch_init(void)
{
	static char buf[CONTROL_PAYLOAD_MAX];
	struct control_header h;
	size_t len, nfds;
	int fds[3];
	int r = control_recv(control.fd, &h, buf, &len, fds, &nfds);
	if (r == 0) {
		/* The host's end is gone: no more requests. */
		close(control.fd);
		control.fd = -1;
		return;
	}
	if (r < 0)
		return;
	if (h.kind == CONTROL_EXEC) {
		control_start(h.id, buf, len, h.value, fds);
		return;
	}
	if (h.kind != CONTROL_SIGNAL || !CONTROL_SIGNAL_OK(h.value))
		return;
	for (int i = 0; i < EXECS_MAX; i++)
		if (control.running[i].pid && control.running[i].id == h.id) {
			/* Its process group, as a terminal would. */
			if (kill(-control.running[i].pid, h.value) < 0)
				kill(control.running[i].pid, h.value);
		}
}

/* Handles one signal taken from the signalfd; exits when the command has. */
static void on_signal(const struct signalfd_siginfo *si, pid_t child)
{
	int sig = (int)si->ssi_signo;
	bool from_host = si->ssi_code == SI_USER && si->ssi_pid == 0;
	if (sig == SANDBOX_TERMINATE_SIGNAL) {
		/* -1 from pid 1: every process of the namespace but us. */
		if (from_host)
			kill(-1, SIGTERM);
		return;
	}
	if (sig != SIGCHLD) {
		if (from_host)
			kill(child, sig);
		return;
	}
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		if (pid != child) {
			for (int i = 0; i < EXECS_MAX; i++)
				if (control.running[i].pid == pid) {
					control.running[i].pid = 0;
					int32_t raw = status;
					control_reply(control.running[i].id, CONTROL_EXIT,
						      WIFSIGNALED(status) ? 128 + WTERMSIG(status)
									  : WEXITSTATUS(status),
						      &raw, sizeof(raw), -1);
				}
			continue;
		}
		/* Leaving takes the whole pid namespace with us: the
		 * kernel kills whatever the command left behind. */
		if (WIFSIGNALED(status))
			_exit(128 + WTERMSIG(status));
		_exit(WEXITSTATUS(status));
	}
}

/* Waits for signals and, with a filtered network, relays connections. */
static _Noreturn void init_loop(const sigset_t *wanted, pid_t child, struct forwarder *fw)
{
	int sfd = signalfd(-1, wanted, SFD_CLOEXEC | SFD_NONBLOCK);
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || epfd < 0)
		die("signalfd: %s", strerror(errno));
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	ev.data.u32 = 1;
	if (fw && epoll_ctl(epfd, EPOLL_CTL_ADD, forwarder_fd(fw), &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	ev.data.u32 = 2;
	if (control.fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, control.fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
	for (;;) {
		struct epoll_event events[2];
		int n = epoll_wait(epfd, events, 2, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait: %s", strerror(errno));
		}
		for (int i = 0; i < n; i++) {
			if (events[i].data.u32 == 1) {
				forwarder_dispatch(fw);
				continue;
			}
			if (events[i].data.u32 == 2) {
				int fd = control.fd;
				control_dispatch_init();
				if (control.fd < 0)
					epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
				continue;
			}
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				on_signal(&si, child);
		}
	}
}

_Noreturn void sandbox_init_main(int argc, char **argv)
{
	if (getpid() != 1 || argc < 7)
		die("%s is internal to agent-sandbox", SANDBOX_INIT_ARG);
	int ready_fd = (int)parse_number(argv[2], 1 << 20);
	int stderr_fd = (int)parse_number(argv[3], 1 << 20);
	unsigned long ignored = (unsigned long)parse_number(argv[4], 0x7fffffffL);
	int arg = 5;
	int mounts_fd = -1;
	bool seccomp_on = false, seccomp_off = false;
	const char *forward = NULL;
	bool landlock_off = false;
	/* At most one entry per argument: sized by argc. */
	struct command_hardening cl = {
	    .writable = xcalloc((size_t)argc, sizeof(char *)),
	    .keep_dirs = xcalloc((size_t)argc, sizeof(char *)),
	    .sockets = xcalloc((size_t)argc, sizeof(char *)),
	    .tcp_connect = xcalloc((size_t)argc, sizeof(uint16_t)),
	    .command_env = xcalloc((size_t)argc, sizeof(char *)),
	};
	for (; arg < argc && strcmp(argv[arg], "--") != 0; arg++) {
		if (!strncmp(argv[arg], MOUNT_PLAN_ARG, strlen(MOUNT_PLAN_ARG)))
			mounts_fd = (int)parse_number(argv[arg] + strlen(MOUNT_PLAN_ARG), 1 << 20);
		else if (!strcmp(argv[arg], SECCOMP_ARG))
			seccomp_on = true;
		else if (!strcmp(argv[arg], SECCOMP_OFF_ARG))
			seccomp_off = true;
		else if (!strncmp(argv[arg], FORWARD_ARG, strlen(FORWARD_ARG)))
			forward = argv[arg] + strlen(FORWARD_ARG);
		else if (!strncmp(argv[arg], LANDLOCK_RW_ARG, strlen(LANDLOCK_RW_ARG)))
			cl.writable[cl.writable_len++] = argv[arg] + strlen(LANDLOCK_RW_ARG);
		else if (!strncmp(argv[arg], LANDLOCK_KEEP_DIRS_ARG,
				  strlen(LANDLOCK_KEEP_DIRS_ARG)))
			cl.keep_dirs[cl.keep_dirs_len++] =
			    argv[arg] + strlen(LANDLOCK_KEEP_DIRS_ARG);
		else if (!strncmp(argv[arg], LANDLOCK_CONNECT_ARG, strlen(LANDLOCK_CONNECT_ARG)))
			cl.tcp_connect[cl.tcp_connect_len++] =
			    (uint16_t)parse_number(argv[arg] + strlen(LANDLOCK_CONNECT_ARG), 65535);
		else if (!strcmp(argv[arg], LANDLOCK_OFF_ARG))
			landlock_off = true;
		else if (!strncmp(argv[arg], LANDLOCK_SOCKET_ARG, strlen(LANDLOCK_SOCKET_ARG)))
			cl.sockets[cl.sockets_len++] = argv[arg] + strlen(LANDLOCK_SOCKET_ARG);
		else if (!strncmp(argv[arg], COMMAND_ENV_ARG, strlen(COMMAND_ENV_ARG)) &&
			 strchr(argv[arg] + strlen(COMMAND_ENV_ARG), '=') &&
			 argv[arg][strlen(COMMAND_ENV_ARG)] != '=')
			cl.command_env[cl.command_env_len++] = argv[arg] + strlen(COMMAND_ENV_ARG);
		else if (!strncmp(argv[arg], CONTROL_ARG, strlen(CONTROL_ARG)))
			control.fd = (int)parse_number(argv[arg] + strlen(CONTROL_ARG), 1 << 20);
		else if (!strncmp(argv[arg], PIDS_ARG, strlen(PIDS_ARG)))
			cl.pids = (unsigned)parse_number(argv[arg] + strlen(PIDS_ARG), 1 << 22);
		else if (!strncmp(argv[arg], ADDRESS_SPACE_ARG, strlen(ADDRESS_SPACE_ARG)))
			cl.address_space =
			    parse_number(argv[arg] + strlen(ADDRESS_SPACE_ARG), LONG_MAX);
		else
			die("%s is internal to agent-sandbox", SANDBOX_INIT_ARG);
	}
	/* Fail closed: Landlock is left out only when the host said so. */
	if (arg + 1 >= argc || (landlock_off == (cl.writable_len > 0)))
		die("%s is internal to agent-sandbox", SANDBOX_INIT_ARG);
	cl.landlock = !landlock_off;
	cl.filtered_network = forward != NULL;
	char **command = argv + arg + 1;

	/* Fail closed: no plan, no command; a filter, or word that there is
	 * none. */
	if (mounts_fd < 0 || seccomp_off == seccomp_on)
		die("%s is internal to agent-sandbox", SANDBOX_INIT_ARG);
	set_up_mounts(mounts_fd);
	drop_capabilities();
	/* Here rather than by bwrap, which would load it before the binds
	 * above (it refuses the mount calls). It then holds the init and all
	 * it starts. */
	struct error serr = ERROR_INIT;
	if (seccomp_on && seccomp_filter_load_sandbox(&serr) < 0)
		die("%s", serr.msg);

	/* Listening before the command starts, so that its first connection
	 * finds the proxy. */
	struct forwarder *fw = NULL;
	struct error err = ERROR_INIT;
	if (forward && forwarder_start(&fw, forward, &err) < 0)
		die("network: %s", err.msg);

	if (fcntl(ready_fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(stderr_fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    (control.fd >= 0 && fcntl(control.fd, F_SETFD, FD_CLOEXEC) < 0))
		die("inherited descriptors are missing: %s", strerror(errno));

	/* A pid 1 only receives signals it has a handler for, even blocked
	 * ones; the handler never runs because they are taken by the signalfd. */
	sigset_t wanted, original;
	sigemptyset(&wanted);
	sigaddset(&wanted, SIGCHLD);
	struct sigaction sa = {.sa_handler = noop_handler};
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < sandbox_forwarded_signals_len; i++) {
		sigaddset(&wanted, sandbox_forwarded_signals[i]);
		if (sigaction(sandbox_forwarded_signals[i], &sa, NULL) < 0)
			die("sigaction: %s", strerror(errno));
	}
	sigaddset(&wanted, SANDBOX_TERMINATE_SIGNAL);
	if (sigaction(SANDBOX_TERMINATE_SIGNAL, &sa, NULL) < 0)
		die("sigaction: %s", strerror(errno));
	if (sigaction(SIGCHLD, &sa, NULL) < 0 || sigprocmask(SIG_BLOCK, &wanted, &original) < 0)
		die("blocking signals: %s", strerror(errno));

	/* Ready before the fork: once the command can run, and so be seen
	 * running, a signal sent to agent-sandbox must be forwarded to it,
	 * not taken for an interrupted set-up. Signals are blocked here and
	 * wait in the signalfd for the loop below. */
	static const char ready = 'R';
	int written = write_all(ready_fd, &ready, 1);
	if (written < 0)
		die("telling agent-sandbox the sandbox is ready: %s", strerror(-written));
	cl.nproc = reckon_nproc(cl.pids);
	control.cl = &cl;
	control.original_mask = &original;
	pid_t child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		reset_signals(ignored, &original);
		if (dup2(stderr_fd, STDERR_FILENO) < 0)
			_exit(EXIT_SETUP);
		exec_command(command, &cl);
	}
	close(stderr_fd);
	close(ready_fd);

	init_loop(&wanted, child, fw);
}
