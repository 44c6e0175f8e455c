/* This file applies Landlock through its raw system calls (no library).
 * It handles write rights and unix socket connections only: reads are the
 * mounts' business, and a Landlock rule cannot hide one path beneath an
 * allowed one. It never decides what is writable; the policy does.
 *
 * ABI differences: REFER (rename and link across directories) is handled
 * from ABI 2, TRUNCATE from 3, TCP from 4, IOCTL_DEV (ioctl on device
 * files) from 5, the abstract unix socket scope from 6, RESOLVE_UNIX
 * (connecting to a pathname socket made outside the command) from 9. An
 * older kernel simply handles fewer rights: each is a right the kernel did
 * not control before Landlock either. */
#include "sandbox/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/cleanup.h"

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

#define FS_WRITE_FILE (1ULL << 1)
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

#define FS_WRITE_ABI1                                                                              \
	(FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR |             \
	 FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)
/* The rights that mean something on a file rather than a directory. */
#define FS_FILE_RIGHTS (FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

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
	_cleanup_close_ int ruleset =
	    (int)syscall(__NR_landlock_create_ruleset, &attr, m.attr_size, 0);
	if (ruleset < 0)
		return error_errno(err, ERROR_SETUP, errno, "landlock: creating the ruleset");

	for (size_t i = 0; i < plan->writable_len; i++)
		if (allow_path(ruleset, plan->writable[i], m.writable, err) < 0)
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
