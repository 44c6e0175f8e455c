/* This file applies Landlock through its raw system calls (no library).
 * A sandbox's ruleset handles write rights and unix socket connections
 * only: reads are the mounts' business. A nested run, which has no mounts,
 * stacks a second ruleset that takes rights away beneath paths (reading,
 * writing, executing) by granting them everywhere else. It never decides
 * what is writable or denied; the policy does.
 *
 * ABI differences: REFER (rename and link across directories) is handled
 * from ABI 2, TRUNCATE from 3, TCP from 4, IOCTL_DEV (ioctl on device
 * files) from 5, the abstract unix socket scope from 6, RESOLVE_UNIX
 * (connecting to a pathname socket made outside the command) from 9. An
 * older kernel simply handles fewer rights: each is a right the kernel did
 * not control before Landlock either. */
#include "sandbox/landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "policy/path.h"

/* Our own copies of the kernel's definitions: the build host's headers may
 * be older than the kernel the sandbox runs on. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define CREATE_RULESET_VERSION (1U << 0)
#define RULE_PATH_BENEATH 1
#define RULE_NET_PORT 2

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)	     /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14)     /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15)    /* ABI 5 */
#define FS_RESOLVE_UNIX (1ULL << 16) /* ABI 9 */
#define NET_BIND_TCP (1ULL << 0)     /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)	/* ABI 6 */

#define FS_WRITE_ABI1                                                                              \
	(FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR |             \
	 FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)
/* The rights that mean something on a file rather than a directory. */
#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

struct path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

const char *const landlock_private_writable[] = {"/dev", "/tmp", "/run", "/proc"};
const size_t landlock_private_writable_len = ARRAY_SIZE(landlock_private_writable);

int landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

void landlock_masks_for(int abi, bool restrict_tcp, struct landlock_masks *m)
{
	*m = (struct landlock_masks){.fs = FS_WRITE_ABI1};
	if (abi >= 2)
		m->fs |= FS_REFER;
	if (abi >= 3)
		m->fs |= FS_TRUNCATE;
	if (abi >= 5)
		m->fs |= FS_IOCTL_DEV;
	/* Handled, and granted beneath no writable path: only the listed
	 * sockets (and those the command makes itself) can be reached. */
	if (abi >= LANDLOCK_ABI_RESOLVE_UNIX)
		m->fs |= FS_RESOLVE_UNIX;
	m->writable = m->fs & ~FS_RESOLVE_UNIX;
	m->socket = m->fs & FS_RESOLVE_UNIX;
	if (restrict_tcp && abi >= LANDLOCK_ABI_NET)
		m->net = NET_BIND_TCP | NET_CONNECT_TCP;
	if (abi >= LANDLOCK_ABI_SCOPE)
		m->scoped = SCOPE_ABSTRACT_UNIX;
	/* The kernel refuses a larger struct with fields it does not know
	 * unless they are zero; it knows only the first field before ABI 4. */
	m->attr_size = abi >= LANDLOCK_ABI_SCOPE ? sizeof(struct ruleset_attr)
		       : abi >= LANDLOCK_ABI_NET
			   ? offsetof(struct ruleset_attr, scoped)
			   : offsetof(struct ruleset_attr, handled_access_net);
}

static int add_path_rule(int ruleset, int fd, uint64_t allowed, const char *path, struct error *err)
{
	struct path_beneath_attr rule = {.allowed_access = allowed, .parent_fd = fd};
	if (syscall(__NR_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &rule, 0) < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: allowing %s", path);
	return 0;
}

static int allow_path(int ruleset, const char *path, uint64_t handled, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return error_errno(err, ERROR_SETUP, errno, "landlock: opening %s", path);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: %s", path);
	uint64_t allowed = handled;
	if (!S_ISDIR(st.st_mode))
		allowed &= FS_FILE_RIGHTS;
	/* /proc: writing a process's own settings, never creating or
	 * removing anything. */
	if (!strcmp(path, "/proc"))
		allowed &= FS_FILE_RIGHTS & ~FS_IOCTL_DEV;
	return add_path_rule(ruleset, fd, allowed, path, err);
}

/* A listed socket: connecting to it, nothing else. A socket that is not
 * there now is skipped (the mounts skipped it too). */
static int allow_socket(int ruleset, const char *path, uint64_t right, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT
			   ? 0
			   : error_errno(err, ERROR_SETUP, errno, "landlock: opening %s", path);
	return add_path_rule(ruleset, fd, right, path, err);
}

int landlock_apply(const struct landlock_plan *plan, struct error *err)
{
	int abi = landlock_abi();
	if (abi < LANDLOCK_ABI_FS)
		return error_set(err, ERROR_SETUP, "landlock: the kernel does not support it");
	if (plan->restrict_tcp && abi < LANDLOCK_ABI_NET)
		return error_set(err, ERROR_SETUP,
				 "landlock: ABI %d cannot restrict TCP (needs %d)", abi,
				 LANDLOCK_ABI_NET);

	struct landlock_masks m;
	landlock_masks_for(abi, plan->restrict_tcp, &m);
	struct ruleset_attr attr = {
	    .handled_access_fs = m.fs, .handled_access_net = m.net, .scoped = m.scoped};
	if (plan->scope_signals && abi >= LANDLOCK_ABI_SCOPE)
		attr.scoped |= SCOPE_SIGNAL;
	_cleanup_close_ int ruleset =
	    (int)syscall(__NR_landlock_create_ruleset, &attr, m.attr_size, 0);
	if (ruleset < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: creating the ruleset");

	for (size_t i = 0; i < plan->writable_len; i++)
		if (allow_path(ruleset, plan->writable[i], m.writable, err) < 0)
			return -1;
	for (size_t i = 0; i < plan->keep_dirs_len; i++)
		if (allow_path(ruleset, plan->keep_dirs[i], m.writable & ~FS_REMOVE_DIR, err) < 0)
			return -1;
	for (size_t i = 0; m.socket && i < plan->sockets_len; i++)
		if (allow_socket(ruleset, plan->sockets[i], m.socket, err) < 0)
			return -1;
	for (size_t i = 0; plan->restrict_tcp && i < plan->tcp_connect_len; i++) {
		struct net_port_attr rule = {.allowed_access = NET_CONNECT_TCP,
					     .port = plan->tcp_connect[i]};
		if (syscall(__NR_landlock_add_rule, ruleset, RULE_NET_PORT, &rule, 0) < 0)
			return error_errno(err, ERROR_SETUP, errno,
					   "landlock: allowing TCP port %u", plan->tcp_connect[i]);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_errno(err, ERROR_SETUP, errno, "setting no_new_privs");
	if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: restricting the command");
	return 0;
}

/* A denial resolved to rights on this kernel, with the file it names:
 * another name in the same directory for that file (a hard link, such as
 * perl and perl5.36.0) is denied the same. Rules attach to files, not
 * names: a file bind-mounted at several names (the outer sandbox's
 * launcher) is granted through any of them, so only a hard link, which
 * the split can find beside it, counts. */
struct denied {
	const char *path;
	uint64_t rights;
	bool hard_linked;
	dev_t dev;
	ino_t ino;
};

struct split {
	int ruleset;
	uint64_t handled;
	const struct denied *d;
	size_t len;
	char *const *probe;
	size_t probe_len;
};

static uint64_t denied_at(const struct split *sp, const char *path, const struct stat *st)
{
	uint64_t r = 0;
	for (size_t i = 0; i < sp->len; i++) {
		const struct denied *d = &sp->d[i];
		bool same_file = d->hard_linked && d->dev == st->st_dev && d->ino == st->st_ino;
		if (same_file || !strcmp(d->path, path))
			r |= d->rights;
	}
	return r;
}

static uint64_t denied_beneath(const struct split *sp, const char *path)
{
	uint64_t r = 0;
	for (size_t i = 0; i < sp->len; i++)
		if (strcmp(sp->d[i].path, path) && path_is_within(sp->d[i].path, path))
			r |= sp->d[i].rights;
	return r;
}

static int split_at(struct split *sp, const char *path, uint64_t above, struct error *err);

static int split_child(struct split *sp, const char *dir, const char *name, uint64_t above,
		       struct error *err)
{
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	_cleanup_free_ char *child = xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
	return split_at(sp, child, above, err);
}

/* The rules for path and, when something beneath it is denied, for what
 * it holds. A symbolic link needs none: access is checked on the file it
 * leads to, under that file's own ancestors. */
static int split_at(struct split *sp, const char *path, uint64_t above, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT
			   ? 0
			   : error_errno(err, ERROR_SETUP, errno, "landlock: opening %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: %s", path);
	if (S_ISLNK(st.st_mode))
		return 0;
	above |= denied_at(sp, path, &st);
	uint64_t beneath = S_ISDIR(st.st_mode) ? denied_beneath(sp, path) : 0;
	uint64_t grant = sp->handled & ~above & ~beneath;
	if (!S_ISDIR(st.st_mode))
		grant &= FS_FILE_RIGHTS;
	if (grant && add_path_rule(sp->ruleset, fd, grant, path, err) < 0)
		return -1;
	if (!beneath)
		return 0;
	DIR *dir = opendir(path);
	if (!dir) {
		if (errno != EACCES)
			return error_errno(err, ERROR_SETUP, errno, "landlock: listing %s", path);
		/* Search-only, as /run/agent-sandbox is: the names asked for
		 * are what can be found there. */
		for (size_t i = 0; i < sp->probe_len; i++)
			if (split_child(sp, path, sp->probe[i], above, err) < 0)
				return -1;
		return 0;
	}
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(dir)) != NULL;)
		r = split_child(sp, path, e->d_name, above, err);
	closedir(dir);
	return r;
}

static uint64_t denial_rights(unsigned what, const struct landlock_masks *m)
{
	uint64_t r = 0;
	if (what & LANDLOCK_DENY_WRITE)
		r |= m->writable;
	if (what & LANDLOCK_DENY_READ)
		r |= FS_READ_FILE;
	if (what & LANDLOCK_DENY_EXECUTE)
		r |= FS_EXECUTE;
	return r;
}

int landlock_apply_denials(const struct landlock_denial *denials, size_t len,
			   char *const *probe_names, size_t probe_names_len, struct error *err)
{
	if (!len)
		return 0;
	int abi = landlock_abi();
	if (abi < LANDLOCK_ABI_FS)
		return error_set(err, ERROR_SETUP, "landlock: the kernel does not support it");
	struct landlock_masks m;
	landlock_masks_for(abi, false, &m);
	_cleanup_free_ struct denied *d = xcalloc(len, sizeof(*d));
	size_t n = 0;
	uint64_t handled = 0;
	for (size_t i = 0; i < len; i++) {
		struct stat st;
		if (stat(denials[i].path, &st) < 0)
			continue;
		d[n] = (struct denied){.path = denials[i].path,
				       .rights = denial_rights(denials[i].what, &m),
				       .hard_linked = !S_ISDIR(st.st_mode) && st.st_nlink > 1,
				       .dev = st.st_dev,
				       .ino = st.st_ino};
		handled |= d[n++].rights;
	}
	if (!handled)
		return 0;
	/* REFER is handled by every ruleset whether asked or not: without a
	 * grant, moving a file to another directory would fail everywhere. */
	handled |= m.fs & FS_REFER;
	struct ruleset_attr attr = {.handled_access_fs = handled};
	_cleanup_close_ int ruleset =
	    (int)syscall(__NR_landlock_create_ruleset, &attr,
			 offsetof(struct ruleset_attr, handled_access_net), 0);
	if (ruleset < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: creating the ruleset");
	struct split sp = {.ruleset = ruleset,
			   .handled = handled,
			   .d = d,
			   .len = n,
			   .probe = probe_names,
			   .probe_len = probe_names_len};
	if (split_at(&sp, "/", 0, err) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_errno(err, ERROR_SETUP, errno, "setting no_new_privs");
	if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: restricting the command");
	return 0;
}
