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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
 * as bound, '@' first for an abstract name. A newline in a name is printed
 * as is: what follows it up to the next entry is the rest of the name. */
#define UNIX_FIELDS 7

/* Whether the line at P starts an entry: the socket's address (at least 8
 * hex digits; zeros when kernel pointers are hidden), then ": ". */
static bool starts_entry(const char *p, const char *eol)
{
	const char *q = p;
	while (q < eol &&
	       ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') || (*q >= 'A' && *q <= 'F')))
		q++;
	return q - p >= 8 && eol - q >= 2 && q[0] == ':' && q[1] == ' ';
}

/* The last field, the socket's inode number; 0 when it is not one. */
static unsigned long parse_inode(const char *p, const char *end)
{
	unsigned long inode = 0;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || inode > (ULONG_MAX - 9) / 10)
			return 0;
		inode = inode * 10 + (unsigned long)(*p - '0');
	}
	return inode;
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
		const char *field = p;
		while (fields < UNIX_FIELDS && p < eol) {
			while (p < eol && *p == ' ')
				p++;
			if (p == eol)
				break;
			field = p;
			while (p < eol && *p != ' ')
				p++;
			fields++;
		}
		/* One space, then the name (which may itself hold spaces). */
		if (fields == UNIX_FIELDS && p < eol && *p == ' ' && p + 1 < eol && p[1] != '@') {
			/* Lines up to the next entry belong to the name: cut
			 * at its first newline it would name another path,
			 * and the socket would stay in sight. */
			while (eol < end) {
				const char *next = eol + 1;
				const char *next_eol = memchr(next, '\n', (size_t)(end - next));
				if (!next_eol)
					next_eol = end;
				if (next == end || starts_entry(next, next_eol))
					break;
				eol = next_eol;
			}
			fn(p + 1, (size_t)(eol - p - 1), parse_inode(field, p), data);
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

/* A name that says nothing about where the socket is: bound by a relative
 * name, or through /proc/self (how programs bind a path longer than
 * sun_path holds: /proc/self/fd/N/NAME with N their directory). */
struct pending {
	unsigned long inode;
	char *name;
};

struct scan {
	const struct strv *binds;
	struct strv *found;
	struct pending *pending;
	size_t pending_len;
};

/* Adds what PATH leads to, canonical, to the found sockets when it is one
 * and the sandbox sees it. */
static bool take(struct scan *scan, const char *path)
{
	/* Stale names (the file renamed or removed, another file in its
	 * place) are common: what is there now decides. */
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return false;
	char *real = realpath(path, NULL);
	if (real && seen_inside(real, scan->binds) && !strv_contains(scan->found, real))
		strv_push_owned(scan->found, real);
	else
		free(real);
	return true;
}

static void say_not_found(const char *name, const char *why)
{
	if (!output_debug_enabled())
		return;
	_cleanup_free_ char *shown = term_escape(name);
	output_debug("host sockets: \"%s\" %s: not found, not hidden", shown, why);
}

static void consider(const char *name, size_t len, unsigned long inode, void *data)
{
	struct scan *scan = data;
	char path[PATH_MAX];
	if (len >= sizeof(path) || memchr(name, '\0', len))
		return;
	memcpy(path, name, len);
	path[len] = '\0';
	if (path[0] == '/' && !path_is_within(path, "/proc")) {
		if (seen_inside(path, scan->binds))
			take(scan, path);
		return;
	}
	if (!inode)
		return;
	scan->pending = xreallocarray(scan->pending, scan->pending_len + 1, sizeof(*scan->pending));
	scan->pending[scan->pending_len++] =
	    (struct pending){.inode = inode, .name = xstrdup(path)};
}

/* Where NAME leads as seen by PID, a process holding the socket: its
 * working directory for a relative name, its own /proc entries for
 * /proc/self. NULL for any other name. */
static char *owner_path(const char *pid, const char *name)
{
	if (name[0] != '/')
		return xasprintf("/proc/%s/cwd/%s", pid, name);
	static const char *const selves[] = {"/proc/self/", "/proc/thread-self/"};
	for (size_t i = 0; i < ARRAY_SIZE(selves); i++)
		if (!strncmp(name, selves[i], strlen(selves[i])))
			return xasprintf("/proc/%s/%s", pid, name + strlen(selves[i]));
	return NULL;
}

DEFINE_CLEANUP_PTR_FUNC(DIR *, closedir)

/* Looks each pending socket up among the descriptors of the processes
 * this user may inspect, and takes the path its name leads to for the
 * first that holds it. A process that has since changed directory or
 * closed the directory it bound through leads nowhere, or to another
 * socket, hidden as well: not found, as before. */
static void resolve_pending(struct scan *scan)
{
	_cleanup_(closedirp) DIR *proc = opendir("/proc");
	struct dirent *p;
	size_t left = scan->pending_len;
	while (left && proc && (p = readdir(proc)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		_cleanup_free_ char *fd_dir = xasprintf("/proc/%s/fd", p->d_name);
		_cleanup_(closedirp) DIR *fds = opendir(fd_dir);
		struct dirent *f;
		while (left && fds && (f = readdir(fds)) != NULL) {
			char link[64];
			unsigned long inode;
			char end;
			ssize_t n = readlinkat(dirfd(fds), f->d_name, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (sscanf(link, "socket:[%lu%c", &inode, &end) != 2 || end != ']')
				continue;
			for (size_t i = 0; i < scan->pending_len; i++) {
				struct pending *q = &scan->pending[i];
				if (!q->name || q->inode != inode)
					continue;
				_cleanup_free_ char *path = owner_path(p->d_name, q->name);
				if (!path || !take(scan, path))
					say_not_found(q->name,
						      "no longer leads to the socket from the "
						      "process that bound it");
				free(q->name);
				q->name = NULL;
				left--;
			}
		}
	}
}

void host_sockets_scan(const struct strv *binds, struct strv *found)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file("/proc/net/unix", 64u << 20, &text, &len) < 0)
		return;
	struct scan scan = {.binds = binds, .found = found};
	host_sockets_parse(text, len, consider, &scan);
	if (scan.pending_len)
		resolve_pending(&scan);
	for (size_t i = 0; i < scan.pending_len; i++) {
		if (scan.pending[i].name)
			say_not_found(scan.pending[i].name,
				      "names no place, and no process of this user holds it");
		free(scan.pending[i].name);
	}
	free(scan.pending);
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
