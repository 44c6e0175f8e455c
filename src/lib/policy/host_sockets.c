/* This file names the host's unix sockets that the sandbox hides: a unix
 * socket on a read-only mount can still be connected to, and behind these
 * sit the user's keys, the desktop session and container engines. It only
 * adds exclude rules; whether a path exists is the policy's business. A
 * user rule for the same path (say, --socket "$SSH_AUTH_SOCK") wins, as
 * for any built-in.
 *
 * Three sources: the sockets the environment names; the places where
 * programs put theirs, hidden whether or not a socket is there now (one
 * that starts later binds in a directory that is already masked); and
 * every pathname socket bound on the host now, from /proc/net/unix.
 *
 * Already out of reach without a rule: everything under /run (a private
 * tmpfs: the system bus, $XDG_RUNTIME_DIR with the session bus, Wayland,
 * gpg-agent and ssh-agent, /run/user, /run/containerd, /run/podman,
 * /run/docker.sock), /tmp (X11's /tmp/.X11-unix), /dev; ~/.ssh and ~/.gnupg
 * (@base excludes them); Docker's socket (spec/plan.c); the host's abstract
 * sockets (a new network namespace has its own; with --network=true,
 * Landlock's scope from ABI 6). Not found here: a socket bound by a
 * relative name, or by a process in another network namespace. */
#include "policy/host_sockets.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/output.h"
#include "base/term_escape.h"
#include "policy/env.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "base/xalloc.h"

/* The sandbox's private mounts: nothing of the host's is there. */
static const char *const private_dirs[] = {"/run", "/tmp", "/dev", "/proc"};

/* Where programs bind their sockets beneath the home directory: Docker
 * Desktop, Colima, Rancher Desktop, Lima, 1Password's ssh agent and git's
 * credential cache (which hands out the cached token). */
static const char *const home_dirs[] = {
    ".docker/run", ".docker/desktop", ".colima", ".lima", ".1password", ".cache/git/credential",
};
/* Rancher Desktop keeps its programs beside its socket: only the socket. */
static const char *const home_files[] = {".rd/docker.sock"};
/* The system's daemons that are not under /run: LXD (snap and not) and
 * Incus. */
static const char *const system_files[] = {
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/lxd/unix.socket",
    "/var/lib/incus/unix.socket",
};

/* /proc/net/unix: a header line, then per socket
 * "Num: RefCount Protocol Flags Type St Inode[ Path]" with the path's bytes
 * as bound, '@' first for an abstract name. */
#define UNIX_FIELDS 7

/* Whether a line of /proc/net/unix starts an entry: "%pK: ", hex digits
 * then a colon and a space. */
static bool is_entry(const char *line, const char *end)
{
	const char *p = line;
	while (p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
		p++;
	return p > line && p + 1 < end && p[0] == ':' && p[1] == ' ';
}

size_t host_sockets_parse(const char *text, size_t len,
			  void (*fn)(const char *path, size_t path_len, unsigned long inode,
				     void *data),
			  void *data)
{
	size_t count = 0;
	const char *end = text + len;
	const char *line = memchr(text, '\n', len);
	if (!line)
		return 0;
	for (line++; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		const char *p = line;
		int fields = 0;
		unsigned long inode = 0;
		while (fields < UNIX_FIELDS && p < eol) {
			while (p < eol && *p == ' ')
				p++;
			if (p == eol)
				break;
			/* The last field is the socket's inode, in decimal. */
			bool number = true;
			for (inode = 0; p < eol && *p != ' '; p++) {
				number = number && *p >= '0' && *p <= '9' && inode < ULONG_MAX / 10;
				inode = number ? inode * 10 + (unsigned long)(*p - '0') : 0;
			}
			fields++;
		}
		/* One space, then the name (which may itself hold spaces, and
		 * line ends: the kernel prints its bytes as they are, so the
		 * lines up to the next entry are the rest of it). */
		if (fields == UNIX_FIELDS && p < eol && *p == ' ' && p + 1 < eol && p[1] != '@') {
			while (eol + 1 < end && !is_entry(eol + 1, end)) {
				const char *next = memchr(eol + 1, '\n', (size_t)(end - eol - 1));
				eol = next ? next : end;
			}
			/* Blank lines before the next entry end no name. */
			const char *name_end = eol;
			while (name_end[-1] == '\n')
				name_end--;
			fn(p + 1, (size_t)(name_end - p - 1), inode, data);
			count++;
		}
		line = eol + 1;
	}
	return count;
}

/* Whether the sandbox shows PATH: everything outside its private mounts,
 * and what the policy binds into them (the project or the home directory
 * may live under /tmp). */
static bool seen_inside(const char *path, const struct strv *binds)
{
	const char *private = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(private_dirs) && !private; i++)
		if (path_is_within(path, private_dirs[i]))
	private = private_dirs[i];
	if (!private)
		return true;
	/* A bind of "/" or /home does not reach into the private /tmp; one
	 * of /tmp itself (the home directory or the project there) shows
	 * the host's whole /tmp. */
	for (size_t i = 0; binds && i < binds->len; i++)
		if (path_is_within(binds->items[i], private) &&
		    path_is_within(path, binds->items[i]))
			return true;
	return false;
}

/* The device and inode of every unix socket bound to a file in this
 * network namespace, from the kernel's socket diagnostics (what "ss -x"
 * reads, open to every user): the file of a socket whose name is stale
 * (renamed, linked elsewhere, unlinked after a link, as OpenSSH's
 * ControlMaster does), relative or cut short is found by its inode. */
struct live_sockets {
	struct live_socket {
		dev_t dev;
		ino_t ino;
	} * items;
	size_t len, alloc;
	bool read;  /* the dump was asked for: once a run, and only when needed */
	bool known; /* the dump worked */
};

static void live_add(struct live_sockets *live, const struct unix_diag_vfs *vfs)
{
	if (live->len == live->alloc) {
		live->alloc = live->alloc ? live->alloc * 2 : 64;
		live->items = xreallocarray(live->items, live->alloc, sizeof(*live->items));
	}
	/* The kernel's own encoding: 12 bits of major above 20 of minor. */
	live->items[live->len++] = (struct live_socket){
	    .dev = makedev(vfs->udiag_vfs_dev >> 20, vfs->udiag_vfs_dev & 0xfffff),
	    .ino = vfs->udiag_vfs_ino,
	};
}

static void live_read(struct live_sockets *live)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return;
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} msg = {
	    .nlh = {.nlmsg_len = sizeof(msg),
		    .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		    .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	    .req = {.sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_VFS},
	};
	if (send(fd, &msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
		return;
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return;
		size_t left = (size_t)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				live->known = true;
				return;
			}
			if (h->nlmsg_type == NLMSG_ERROR ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
				return;
			struct unix_diag_msg *m = NLMSG_DATA(h);
			/* The attributes are laid out as rtattr ones. */
			int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, alen);
			     a = RTA_NEXT(a, alen))
				if (a->rta_type == UNIX_DIAG_VFS &&
				    RTA_PAYLOAD(a) >= (int)sizeof(struct unix_diag_vfs))
					live_add(live, RTA_DATA(a));
		}
	}
}

static int compare_live(const void *a, const void *b)
{
	const struct live_socket *x = a, *y = b;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

/* Reads the dump the first time it is needed and sorts it: a host with
 * thousands of sockets has each socket file of a directory looked up in
 * it. */
static const struct live_sockets *live_get(struct live_sockets *live)
{
	if (!live->read) {
		live->read = true;
		live_read(live);
		if (live->len > 1)
			qsort(live->items, live->len, sizeof(*live->items), compare_live);
	}
	return live;
}

static bool live_has(const struct live_sockets *live, const struct stat *st)
{
	struct live_socket key = {.dev = st->st_dev, .ino = st->st_ino};
	return live->len &&
	       bsearch(&key, live->items, live->len, sizeof(*live->items), compare_live);
}

struct scan {
	const struct strv *binds;
	struct strv *found;
	struct live_sockets live;
	struct strv listed_dirs; /* directories already looked through */
	const char *cwd, *home;
	struct strv deferred; /* names to resolve in the process holding them */
	unsigned long *deferred_inodes;
	size_t deferred_len, deferred_alloc;
};

static void add_found(struct scan *scan, const char *path)
{
	char *real = realpath(path, NULL);
	if (real && seen_inside(real, scan->binds) && !strv_contains(scan->found, real))
		strv_push_owned(scan->found, real);
	else
		free(real);
}

/* The sockets of a directory that a host process listens on: where a
 * socket was bound by a name that is gone, it usually lives on beside it
 * under another (bound to a temporary name, then renamed or linked). */
static void look_through(struct scan *scan, const char *dir)
{
	if (strv_contains(&scan->listed_dirs, dir) || !seen_inside(dir, scan->binds) ||
	    !live_get(&scan->live)->known)
		return;
	strv_push(&scan->listed_dirs, dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_type != DT_SOCK && e->d_type != DT_UNKNOWN)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISSOCK(st.st_mode) || !live_has(&scan->live, &st))
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, e->d_name);
		add_found(scan, path);
	}
	closedir(d);
}

/* A name as bound: the socket if it is still there, and its directory's
 * other live sockets. */
static void consider_path(struct scan *scan, const char *path)
{
	struct stat st;
	if (seen_inside(path, scan->binds) && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		add_found(scan, path);
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		look_through(scan, dir);
	}
}

/* The processes that hold the sockets of `want` (inodes of the socket
 * filesystem), found in one pass over their descriptors: /proc/PID/fd/N
 * reads "socket:[INODE]". Only the user's own processes can be read, which
 * are the ones that matter here. pids[i] stays 0 for one not found. */
static void find_holders(const unsigned long *want, size_t n, pid_t *pids)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		return;
	for (struct dirent *e; (e = readdir(proc)) != NULL;) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		_cleanup_free_ char *fds = xasprintf("/proc/%s/fd", e->d_name);
		DIR *d = opendir(fds);
		if (!d)
			continue;
		for (struct dirent *f; (f = readdir(d)) != NULL;) {
			char target[64];
			ssize_t len = readlinkat(dirfd(d), f->d_name, target, sizeof(target) - 1);
			if (len <= 8 || strncmp(target, "socket:[", 8) != 0)
				continue;
			target[len] = '\0';
			unsigned long inode = strtoul(target + 8, NULL, 10);
			for (size_t i = 0; i < n; i++)
				if (want[i] == inode && !pids[i])
					pids[i] = (pid_t)atoi(e->d_name);
		}
		closedir(d);
	}
	closedir(proc);
}

/* A name that leads nowhere from here, resolved in the process that bound
 * it: relative to its working directory, or through its own descriptor
 * ("/proc/self/fd/N/NAME", how a path longer than a socket address allows
 * is bound). The working directory may have changed since, and the
 * descriptor may be closed: then the name stays unresolved. */
static void resolve_in_holder(struct scan *scan, const char *name, pid_t pid)
{
	static const char *const self[] = {"/proc/self/", "/proc/thread-self/"};
	const char *rest = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(self) && !rest; i++)
		if (!strncmp(name, self[i], strlen(self[i])))
			rest = name + strlen(self[i]);
	_cleanup_free_ char *link = NULL;
	const char *tail = name;
	if (rest) {
		/* "fd/N/NAME": the directory is what fd N names now. */
		const char *slash = strncmp(rest, "fd/", 3) ? NULL : strchr(rest + 3, '/');
		if (!slash)
			return;
		link = xasprintf("/proc/%d/%.*s", (int)pid, (int)(slash - rest), rest);
		tail = slash + 1;
	} else {
		link = xasprintf("/proc/%d/cwd", (int)pid);
	}
	char dir[PATH_MAX];
	ssize_t n = readlink(link, dir, sizeof(dir) - 1);
	if (n <= 0 || dir[0] != '/')
		return;
	dir[n] = '\0';
	_cleanup_free_ char *joined = xasprintf("%s/%s", dir, tail);
	consider_path(scan, joined);
}

/* Names to resolve in their holders once the list is read. */
static void defer(struct scan *scan, const char *path, unsigned long inode)
{
	if (!inode)
		return;
	if (scan->deferred_len == scan->deferred_alloc) {
		scan->deferred_alloc = scan->deferred_alloc ? scan->deferred_alloc * 2 : 8;
		scan->deferred_inodes = xreallocarray(scan->deferred_inodes, scan->deferred_alloc,
						      sizeof(*scan->deferred_inodes));
	}
	scan->deferred_inodes[scan->deferred_len++] = inode;
	strv_push(&scan->deferred, path);
}

static void consider(const char *name, size_t len, unsigned long inode, void *data)
{
	struct scan *scan = data;
	char path[PATH_MAX];
	if (len >= sizeof(path) || memchr(name, '\0', len))
		return;
	memcpy(path, name, len);
	path[len] = '\0';
	if (path[0] != '/') {
		/* Bound relative to a working directory /proc/net/unix does
		 * not give: the likely ones are the project and the home
		 * directory, then the binding process's own. */
		const char *bases[] = {scan->cwd, scan->home};
		for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
			if (!bases[i])
				continue;
			_cleanup_free_ char *joined = xasprintf("%s/%s", bases[i], path);
			consider_path(scan, joined);
		}
		defer(scan, path, inode);
		return;
	}
	/* Stale names (the file renamed or removed, another file in its
	 * place) are common: what is there now decides. */
	consider_path(scan, path);
	if (!strncmp(path, "/proc/", 6))
		defer(scan, path, inode);
}

void host_sockets_scan(const struct strv *binds, const char *cwd, const char *home,
		       struct strv *found)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file("/proc/net/unix", 64u << 20, &text, &len) < 0)
		return;
	struct scan scan = {.binds = binds,
			    .found = found,
			    .listed_dirs = STRV_INIT,
			    .cwd = cwd,
			    .home = home,
			    .deferred = STRV_INIT};
	host_sockets_parse(text, len, consider, &scan);
	if (scan.deferred_len) {
		pid_t *pids = xcalloc(scan.deferred_len, sizeof(*pids));
		find_holders(scan.deferred_inodes, scan.deferred_len, pids);
		for (size_t i = 0; i < scan.deferred_len; i++)
			if (pids[i])
				resolve_in_holder(&scan, scan.deferred.items[i], pids[i]);
		free(pids);
	}
	free(scan.live.items);
	free(scan.deferred_inodes);
	strv_release(&scan.deferred);
	strv_release(&scan.listed_dirs);
}

void host_sockets_add_live(const struct strv *candidates, struct strv *found)
{
	struct scan scan = {.found = found, .listed_dirs = STRV_INIT, .deferred = STRV_INIT};
	for (size_t i = 0; i < candidates->len; i++) {
		struct stat st;
		if (lstat(candidates->items[i], &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    !live_get(&scan.live)->known || !live_has(&scan.live, &st))
			continue;
		/* Met by a walk of what the sandbox shows. */
		char *real = realpath(candidates->items[i], NULL);
		if (real && !strv_contains(found, real))
			strv_push_owned(found, real);
		else
			free(real);
	}
	free(scan.live.items);
	strv_release(&scan.listed_dirs);
}

static void hide(struct rule_list *rules, const char *path, const char *why)
{
	if (!path || path[0] != '/')
		return;
	_cleanup_free_ char *escaped = pattern_escape(path);
	rule_list_add(rules, escaped, ACCESS_EXCLUDE, LAYER_BUILTIN, why);
}

/* A socket the scan found, unless the user listed it or a rule here
 * hides it already. */
static void hide_found(struct rule_list *rules, const char *path, const struct strv *listed,
		       const struct strv *hidden)
{
	if (listed && strv_contains(listed, path))
		return;
	for (size_t i = 0; i < hidden->len; i++)
		if (path_is_within(path, hidden->items[i]))
			return;
	hide(rules, path, "host unix socket; list it with --socket PATH to allow");
}

/* D-Bus addresses are "unix:path=/x,guid=..;tcp:..": each unix:path. */
static void hide_dbus(struct rule_list *rules, const char *address, const char *why)
{
	if (!address)
		return;
	const char *p = address;
	while ((p = strstr(p, "unix:path=")) != NULL) {
		p += strlen("unix:path=");
		size_t len = strcspn(p, ",;");
		_cleanup_free_ char *path = xstrndup(p, len);
		hide(rules, path, why);
		p += len;
	}
}

/* $XDG_RUNTIME_DIR is a private tmpfs only under /run (sandbox/bwrap.c).
 * Elsewhere (WSL's /mnt/wslg/runtime-dir, one made by hand) services bind
 * their sockets there as they start, after the scan: hidden whole, unless
 * it holds the project or the home directory. agent-sandbox's own runtime
 * directory holds the proxy and audit sockets of every other sandbox of
 * the user, bound after this one started: hidden wherever it is seen,
 * under $XDG_RUNTIME_DIR or, with the home directory or the project at
 * /tmp, in /tmp. */
static void hide_runtime_dirs(const char *runtime_dir, const char *own_dir, const char *home,
			      const char *cwd, struct strv *hidden)
{
	/* The project and the home directory may live under /tmp. */
	_cleanup_strv_ struct strv binds = STRV_INIT;
	if (home)
		strv_push(&binds, home);
	if (cwd)
		strv_push(&binds, cwd);
	const char *dirs[] = {runtime_dir, own_dir};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (!dirs[i] || dirs[i][0] != '/')
			continue;
		_cleanup_free_ char *real = realpath(dirs[i], NULL);
		const char *path = real ? real : dirs[i];
		bool holds =
		    (home && path_is_within(home, path)) || (cwd && path_is_within(cwd, path));
		bool covered = false;
		for (size_t j = 0; j < hidden->len && !covered; j++)
			covered = path_is_within(path, hidden->items[j]);
		if (seen_inside(path, &binds) && !holds && !covered)
			strv_push(hidden, path);
	}
}

void host_sockets_add_rules(char *const *envp, const char *home, const char *cwd,
			    const char *own_dir, const struct strv *found,
			    const struct strv *listed, struct rule_list *rules)
{
	hide(rules, env_get(envp, "SSH_AUTH_SOCK"), "ssh-agent socket (SSH_AUTH_SOCK)");
	hide_dbus(rules, env_get(envp, "DBUS_SESSION_BUS_ADDRESS"), "D-Bus session bus");
	hide_dbus(rules, env_get(envp, "DBUS_SYSTEM_BUS_ADDRESS"), "D-Bus system bus");
	hide(rules, "/var/run/dbus/system_bus_socket", "D-Bus system bus");
	hide(rules, "/run/dbus/system_bus_socket", "D-Bus system bus");

	const char *gnupg = env_get(envp, "GNUPGHOME");
	_cleanup_free_ char *gnupg_dir = gnupg && gnupg[0] == '/' ? xstrdup(gnupg)
					 : home			  ? xasprintf("%s/.gnupg", home)
								  : NULL;
	if (gnupg_dir) {
		_cleanup_free_ char *escaped = pattern_escape(gnupg_dir);
		_cleanup_free_ char *agent = xasprintf("%s/S.*", escaped);
		rule_list_add(rules, agent, ACCESS_EXCLUDE, LAYER_BUILTIN,
			      "gpg-agent, dirmngr, keyboxd and scdaemon sockets");
	}

	/* A Wayland display given as a path rather than a name in
	 * $XDG_RUNTIME_DIR. */
	const char *wayland = env_get(envp, "WAYLAND_DISPLAY");
	if (wayland && wayland[0] == '/')
		hide(rules, wayland, "Wayland display socket");

	_cleanup_strv_ struct strv hidden = STRV_INIT;
	for (size_t i = 0; home && i < ARRAY_SIZE(home_dirs); i++)
		strv_pushf(&hidden, "%s/%s", home, home_dirs[i]);
	for (size_t i = 0; home && i < ARRAY_SIZE(home_files); i++)
		strv_pushf(&hidden, "%s/%s", home, home_files[i]);
	for (size_t i = 0; i < ARRAY_SIZE(system_files); i++)
		strv_push(&hidden, system_files[i]);
	hide_runtime_dirs(env_get(envp, "XDG_RUNTIME_DIR"), own_dir, home, cwd, &hidden);
	for (size_t i = 0; i < hidden.len; i++)
		if (!listed || !strv_contains(listed, hidden.items[i]))
			hide(rules, hidden.items[i], "where a service binds its unix socket");
	for (size_t i = 0; found && i < found->len; i++)
		hide_found(rules, found->items[i], listed, &hidden);
}
