/* This file decides which system calls the sandbox may not make. Every rule
 * says why (the table below, and README's "Security model"). Each denial
 * returns an errno rather than killing the process, so a program that
 * probes for a feature gets an ordinary error. It never decides paths or
 * hosts: those are the mounts', Landlock's and the proxy's.
 *
 * Two filters: the sandbox filter, loaded by bwrap just before it runs our
 * init, and the command filter, stacked by the init (or a nested
 * agent-sandbox) onto the command alone, for rules the init itself must not
 * be held to (a nested run in a sandbox without a network keeps it from IP
 * sockets). Unix sockets are not filtered: the host's are masked (see
 * policy/host_sockets.c) and Landlock scopes the abstract ones. Compat
 * architectures are filtered too: a 32-bit system call is another way to
 * reach the same code. */
#include "sandbox/seccomp.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/net.h>

#include "base/cleanup.h"

/* Not every libc names the newest flag. */
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

const struct seccomp_rule seccomp_rules[] = {
    {"ioctl(TIOCSTI), ioctl(TIOCLINUX)", "EPERM",
     "push bytes into the terminal's input: typing commands into the user's shell"},
    {"keyctl, add_key, request_key", "EPERM",
     "the kernel keyring is not namespaced: reading or planting the user's keys"},
    {"bpf", "EPERM", "loading kernel programs; a large attack surface"},
    {"perf_event_open", "EPERM", "profiling other processes and the kernel; side channels"},
    {"userfaultfd", "EPERM", "stalling the kernel mid-copy: a common exploit primitive"},
    {"kexec_load, kexec_file_load", "EPERM", "replacing the running kernel"},
    {"init_module, finit_module, delete_module", "EPERM", "loading or removing kernel code"},
    {"mount, umount2, pivot_root, open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, "
     "mount_setattr",
     "EPERM", "changing the mounts that hide and protect files"},
    {"unshare, clone with a namespace flag", "EPERM",
     "a new user namespace gives back every capability, and with it mount"},
    {"clone3", "ENOSYS",
     "its flags are in memory, out of the filter's reach: libc falls back to clone"},
    {"io_uring_setup, io_uring_enter, io_uring_register", "EPERM",
     "performs system calls that no filter sees; a large attack surface"},
};
const size_t seccomp_rules_len = ARRAY_SIZE(seccomp_rules);

static const char *const denied_syscalls[] = {
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "mount",
    "umount2",
    "umount",
    "pivot_root",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
};

static const unsigned long namespace_flags[] = {
    CLONE_NEWUSER, CLONE_NEWNS,	 CLONE_NEWPID,	  CLONE_NEWNET,
    CLONE_NEWUTS,  CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

DEFINE_CLEANUP_PTR_FUNC(scmp_filter_ctx, seccomp_release)

static int add_compat_arches(scmp_filter_ctx ctx)
{
	uint32_t native = seccomp_arch_native();
	int r = 0;
	if (native == SCMP_ARCH_X86_64) {
		r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
		if (r == 0 || r == -EEXIST)
			r = seccomp_arch_add(ctx, SCMP_ARCH_X32);
	} else if (native == SCMP_ARCH_AARCH64) {
		r = seccomp_arch_add(ctx, SCMP_ARCH_ARM);
	}
	return r == -EEXIST ? 0 : r;
}

static int new_filter(scmp_filter_ctx *out, struct error *err)
{
	*out = seccomp_init(SCMP_ACT_ALLOW);
	if (!*out)
		return error_set(err, ERROR_SETUP, "creating the seccomp filter failed");
	int r = add_compat_arches(*out);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r,
				   "adding architectures to the seccomp filter");
	return 0;
}

/* A system call this libseccomp or architecture does not know is skipped:
 * a program cannot make a call that does not exist. */
static int deny(scmp_filter_ctx ctx, const char *name, int errnum, unsigned n_args,
		const struct scmp_arg_cmp *args, struct error *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0;
	int r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errnum), nr, n_args, args);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "adding a seccomp rule for %s", name);
	return 0;
}

static int add_sandbox_rules(scmp_filter_ctx ctx, struct error *err)
{
	/* Only the low 32 bits of an ioctl request are compared, as the
	 * kernel does, so that setting high bits cannot slip past. */
	static const unsigned long denied_ioctls[] = {TIOCSTI, TIOCLINUX};
	for (size_t i = 0; i < ARRAY_SIZE(denied_ioctls); i++) {
		struct scmp_arg_cmp cmp =
		    SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, denied_ioctls[i]);
		if (deny(ctx, "ioctl", EPERM, 1, &cmp, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls); i++)
		if (deny(ctx, denied_syscalls[i], EPERM, 0, NULL, err) < 0)
			return -1;

	/* Without capabilities every namespace but a user namespace is
	 * refused by the kernel already; a user namespace would hand them
	 * back. All flags are denied anyway, one rule per bit, since the
	 * filter can only test for equality under a mask. */
	for (size_t i = 0; i < ARRAY_SIZE(namespace_flags); i++) {
		unsigned long flag = namespace_flags[i];
		struct scmp_arg_cmp cmp = SCMP_A0_64(SCMP_CMP_MASKED_EQ, flag, flag);
		if (deny(ctx, "unshare", EPERM, 1, &cmp, err) < 0 ||
		    deny(ctx, "clone", EPERM, 1, &cmp, err) < 0)
			return -1;
	}
	/* clone3 passes its flags in a structure the filter cannot read. */
	return deny(ctx, "clone3", ENOSYS, 0, NULL, err);
}

int seccomp_filter_fd(struct error *err)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	if (new_filter(&ctx, err) < 0 || add_sandbox_rules(ctx, err) < 0)
		return -1;

	_cleanup_close_ int fd = memfd_create("agent-sandbox-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno,
				   "creating a memfd for the seccomp filter");
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "compiling the seccomp filter");
	if (lseek(fd, 0, SEEK_SET) < 0)
		return error_errno(err, ERROR_SETUP, errno, "rewinding the seccomp filter");
	return steal_fd(&fd);
}

/* SCMP_A0_32 without its half-initialised struct (clang warns): the low
 * 32 bits of argument ARG equal VALUE. */
static struct scmp_arg_cmp compare_low32(unsigned arg, uint32_t value)
{
	return (struct scmp_arg_cmp){
	    .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffu, .datum_b = value};
}

static int deny_socket_family(scmp_filter_ctx ctx, int family, struct error *err)
{
	struct scmp_arg_cmp cmp = compare_low32(0, (uint32_t)family);
	return deny(ctx, "socket", EPERM, 1, &cmp, err);
}

int seccomp_filter_load_command(unsigned flags, struct error *err)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	if (new_filter(&ctx, err) < 0)
		return -1;
	/* A nested run stacks the whole list again: the outer filter holds
	 * it already, but a filter is cheap and this one does not depend on
	 * how the outer sandbox was started. */
	if ((flags & SECCOMP_COMMAND_SANDBOX_RULES) && add_sandbox_rules(ctx, err) < 0)
		return -1;
	if (flags & SECCOMP_COMMAND_NO_INET) {
		static const int families[] = {AF_INET, AF_INET6, AF_PACKET};
		for (size_t i = 0; i < ARRAY_SIZE(families); i++)
			if (deny_socket_family(ctx, families[i], err) < 0)
				return -1;
	}
	if (flags & SECCOMP_COMMAND_NO_INET) {
		/* 32-bit x86 can also create sockets through socketcall,
		 * whose arguments are in memory: refuse its socket() form
		 * outright. */
		struct scmp_arg_cmp cmp = compare_low32(0, SYS_SOCKET);
		if (deny(ctx, "socketcall", EPERM, 1, &cmp, err) < 0)
			return -1;
	}
	int r = seccomp_load(ctx);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "loading the seccomp filter");
	return 0;
}
