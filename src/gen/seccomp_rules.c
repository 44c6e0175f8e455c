/* This file decides which system calls the sandbox may not make, as code
 * (the documented table, what and why, is seccomp_rules[] in
 * src/lib/sandbox/seccomp.c and README's "Security model"). Each denial
 * returns an errno rather than killing the process, so a program that
 * probes for a feature gets an ordinary error. It never decides paths or
 * hosts: those are the mounts', Landlock's and the proxy's.
 *
 * Two filters: the sandbox filter, loaded before our init runs, and the
 * command filter, stacked by the init (or a nested agent-sandbox) onto the
 * command alone, for rules the init itself must not be held to (a nested
 * run in a sandbox without a network keeps it from IP sockets). Unix
 * sockets are not filtered in a sandbox: the host's are masked (see
 * policy/host_sockets.c) and Landlock scopes the abstract ones; a nested
 * run on an older Landlock refuses new ones (add_no_unix_rules). Compat
 * architectures are filtered too: a 32-bit system call is another way to
 * reach the same code.
 *
 * This runs at build time only (src/gen/seccomp_gen.c); agent-sandbox
 * carries the programs it produces. */
#include "gen/seccomp_rules.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/net.h>

#include "base/cleanup.h"
#include "sandbox/seccomp.h"

/* Not every libc names the newest flag. */
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

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

/* The native architecture is the generator's own, which is the target's:
 * it is built with the same compiler as agent-sandbox. The compat ones are
 * what that kernel also runs. */
static size_t filter_arches(uint32_t arches[3])
{
	uint32_t native = seccomp_arch_native();
	size_t n = 0;
	arches[n++] = native;
	if (native == SCMP_ARCH_X86_64) {
		arches[n++] = SCMP_ARCH_X86;
		arches[n++] = SCMP_ARCH_X32;
	} else if (native == SCMP_ARCH_AARCH64) {
		arches[n++] = SCMP_ARCH_ARM;
	}
	return n;
}

/* A filter for ARCH alone. */
static int new_filter(uint32_t arch, scmp_filter_ctx *out, const char **what)
{
	*out = seccomp_init(SCMP_ACT_ALLOW);
	if (!*out) {
		*what = "creating the filter";
		return -ENOMEM;
	}
	uint32_t native = seccomp_arch_native();
	if (arch == native)
		return 0;
	int r = seccomp_arch_add(*out, arch);
	if (r == 0)
		r = seccomp_arch_remove(*out, native);
	if (r < 0)
		*what = "choosing the filter's architecture";
	return r;
}

/* A system call this libseccomp or the filter's architecture does not know
 * is skipped: a program cannot make a call that does not exist. (Handing
 * libseccomp a rule for a call an architecture lacks, such as socketcall
 * on x32, made it drop the load of the system call number and let every
 * call through.) */
static int deny(scmp_filter_ctx ctx, uint32_t arch, const char *name, int errnum, unsigned n_args,
		const struct scmp_arg_cmp *args, const char **what)
{
	if (seccomp_syscall_resolve_name_arch(arch, name) < 0)
		return 0;
	/* libseccomp takes the native number (or its stand-in for a call
	 * only another architecture has) and translates it. */
	int nr = seccomp_syscall_resolve_name(name);
	int r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errnum), nr, n_args, args);
	if (r < 0)
		*what = name;
	return r;
}

static int add_sandbox_rules(scmp_filter_ctx ctx, uint32_t arch, const char **what)
{
	/* Only the low 32 bits of an ioctl request are compared, as the
	 * kernel does, so that setting high bits cannot slip past. */
	static const unsigned long denied_ioctls[] = {TIOCSTI, TIOCLINUX};
	for (size_t i = 0; i < ARRAY_SIZE(denied_ioctls); i++) {
		struct scmp_arg_cmp cmp =
		    SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, denied_ioctls[i]);
		int r = deny(ctx, arch, "ioctl", EPERM, 1, &cmp, what);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls); i++) {
		int r = deny(ctx, arch, denied_syscalls[i], EPERM, 0, NULL, what);
		if (r < 0)
			return r;
	}

	/* Without capabilities every namespace but a user namespace is
	 * refused by the kernel already; a user namespace would hand them
	 * back. All flags are denied anyway, one rule per bit, since the
	 * filter can only test for equality under a mask. */
	for (size_t i = 0; i < ARRAY_SIZE(namespace_flags); i++) {
		unsigned long flag = namespace_flags[i];
		struct scmp_arg_cmp cmp = SCMP_A0_64(SCMP_CMP_MASKED_EQ, flag, flag);
		int r = deny(ctx, arch, "unshare", EPERM, 1, &cmp, what);
		if (r == 0)
			r = deny(ctx, arch, "clone", EPERM, 1, &cmp, what);
		if (r < 0)
			return r;
	}
	/* clone3 passes its flags in a structure the filter cannot read. */
	return deny(ctx, arch, "clone3", ENOSYS, 0, NULL, what);
}

/* SCMP_A0_32 without its half-initialised struct (clang warns): the low
 * 32 bits of argument ARG equal VALUE. */
static struct scmp_arg_cmp compare_low32(unsigned arg, uint32_t value)
{
	return (struct scmp_arg_cmp){
	    .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffu, .datum_b = value};
}

static int add_no_inet_rules(scmp_filter_ctx ctx, uint32_t arch, const char **what)
{
	static const int families[] = {AF_INET, AF_INET6, AF_PACKET};
	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		struct scmp_arg_cmp cmp = compare_low32(0, (uint32_t)families[i]);
		int r = deny(ctx, arch, "socket", EPERM, 1, &cmp, what);
		if (r < 0)
			return r;
	}
	/* 32-bit x86 can also create sockets through socketcall, whose
	 * arguments are in memory: refuse its socket() form outright. */
	struct scmp_arg_cmp cmp = compare_low32(0, SYS_SOCKET);
	return deny(ctx, arch, "socketcall", EPERM, 1, &cmp, what);
}

/* A nested run on a kernel whose Landlock cannot refuse connecting to a
 * pathname socket (before ABI 9): a unix socket would lead the command to
 * a process of the outer sandbox (its proxy, a tmux server) that has none
 * of the inner rules. A stream socketpair cannot be pointed anywhere else
 * (connect says EISCONN, sendto ignores the address); a datagram one
 * could, through sendto's address. */
static int add_no_unix_rules(scmp_filter_ctx ctx, uint32_t arch, const char **what)
{
	struct scmp_arg_cmp unix_family = compare_low32(0, AF_UNIX);
	int r = deny(ctx, arch, "socket", EPERM, 1, &unix_family, what);
	if (r < 0)
		return r;
	struct scmp_arg_cmp dgram_pair[] = {
	    unix_family,
	    {.arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xf, .datum_b = SOCK_DGRAM}};
	r = deny(ctx, arch, "socketpair", EPERM, 2, dgram_pair, what);
	if (r < 0)
		return r;
	/* 32-bit x86: both through socketcall, arguments in memory. */
	static const uint32_t calls[] = {SYS_SOCKET, SYS_SOCKETPAIR};
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		struct scmp_arg_cmp cmp = compare_low32(0, calls[i]);
		r = deny(ctx, arch, "socketcall", EPERM, 1, &cmp, what);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A process of a session of the daemon: nothing that writes into another
 * process of the sandbox. The agent CLI's output is what the platform
 * bills from; a tool it runs (same user, same sandbox) could otherwise
 * take that channel with pidfd_getfd, or make the CLI print through
 * process_vm_writev or ptrace's writing requests. Reading stays: a leak
 * checker (LeakSanitizer) and strace attach, read registers and memory. */
static const char *const process_write_syscalls[] = {"pidfd_getfd", "process_vm_writev"};

/* ptrace requests that change the tracee: its memory, registers, signal
 * or system call (x86's and 32-bit ARM's own ones included; the
 * numbers are unused elsewhere). */
static const uint32_t ptrace_writes[] = {
    4,	    /* POKETEXT */
    5,	    /* POKEDATA */
    6,	    /* POKEUSER */
    13,	    /* SETREGS */
    15,	    /* SETFPREGS */
    19,	    /* x86 SETFPXREGS, ARM SETWMMXREGS */
    23,	    /* ARM SET_SYSCALL */
    25,	    /* x86 SET_THREAD_AREA (i386 numbering) */
    26,	    /* x86 SET_THREAD_AREA, ARM SETCRUNCHREGS */
    28,	    /* ARM SETVFPREGS */
    30,	    /* x86 ARCH_PRCTL, ARM SETHBPREGS */
    0x4203, /* SETSIGINFO */
    0x4205, /* SETREGSET */
    0x420b, /* SETSIGMASK */
    0x4212, /* SET_SYSCALL_INFO */
};

static int add_no_ptrace_rules(scmp_filter_ctx ctx, uint32_t arch, const char **what)
{
	for (size_t i = 0; i < ARRAY_SIZE(process_write_syscalls); i++) {
		int r = deny(ctx, arch, process_write_syscalls[i], EPERM, 0, NULL, what);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < ARRAY_SIZE(ptrace_writes); i++) {
		struct scmp_arg_cmp cmp = compare_low32(0, ptrace_writes[i]);
		int r = deny(ctx, arch, "ptrace", EPERM, 1, &cmp, what);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Each architecture gets a filter of its own with the rules that exist
 * there; they are merged into one program that checks the architecture
 * first. */
static int build(unsigned flags, scmp_filter_ctx *out, const char **what)
{
	uint32_t arches[3];
	size_t n = filter_arches(arches);
	_cleanup_(seccomp_releasep) scmp_filter_ctx all = NULL;
	for (size_t i = 0; i < n; i++) {
		_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
		int r = new_filter(arches[i], &ctx, what);
		if (r == 0 && (flags & SECCOMP_COMMAND_SANDBOX_RULES))
			r = add_sandbox_rules(ctx, arches[i], what);
		if (r == 0 && (flags & SECCOMP_COMMAND_NO_INET))
			r = add_no_inet_rules(ctx, arches[i], what);
		if (r == 0 && (flags & SECCOMP_COMMAND_NO_UNIX))
			r = add_no_unix_rules(ctx, arches[i], what);
		if (r == 0 && (flags & SECCOMP_COMMAND_NO_PTRACE))
			r = add_no_ptrace_rules(ctx, arches[i], what);
		if (r < 0)
			return r;
		if (!all) {
			all = steal_ptr(&ctx);
			continue;
		}
		/* seccomp_merge releases what it merges, on success only. */
		r = seccomp_merge(all, ctx);
		if (r < 0) {
			*what = "merging the architectures' filters";
			return r;
		}
		ctx = NULL;
	}
	*out = steal_ptr(&all);
	return 0;
}

int seccomp_rules_sandbox(scmp_filter_ctx *out, const char **what)
{
	return build(SECCOMP_COMMAND_SANDBOX_RULES, out, what);
}

int seccomp_rules_command(unsigned flags, scmp_filter_ctx *out, const char **what)
{
	/* A nested run stacks the whole list again: the outer filter holds
	 * it already, but a filter is cheap and this one does not depend on
	 * how the outer sandbox was started. */
	return build(flags, out, what);
}

/* libseccomp of this age exports only to a file descriptor. */
int seccomp_rules_export(scmp_filter_ctx ctx, unsigned char **out, size_t *len, const char **what)
{
	_cleanup_close_ int fd = memfd_create("seccomp-export", MFD_CLOEXEC);
	if (fd < 0) {
		*what = "creating a memfd";
		return -errno;
	}
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0) {
		*what = "compiling the filter";
		return r;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		*what = "reading the compiled filter";
		return -errno;
	}
	size_t size = (size_t)st.st_size;
	_cleanup_free_ unsigned char *buf = malloc(size ? size : 1);
	if (!buf) {
		*what = "reading the compiled filter";
		return -ENOMEM;
	}
	for (size_t done = 0; done < size;) {
		ssize_t n = pread(fd, buf + done, size - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*what = "reading the compiled filter";
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	*out = steal_ptr(&buf);
	*len = size;
	return 0;
}
