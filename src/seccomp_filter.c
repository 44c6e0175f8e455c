/* This file decides which system calls the sandbox may not make. Every rule
 * says why. Each denial returns EPERM rather than killing the process, so a
 * program that probes for a feature gets an ordinary error.
 *
 * ioctl(TIOCSTI) pushes bytes into a terminal's input queue: a sandboxed
 * program sharing the user's terminal could type commands into the shell
 * that started it once the sandbox exits. TIOCLINUX can do the same on a
 * virtual console (selection paste). Only the low 32 bits of the request are
 * compared, as the kernel does, so that setting high bits cannot slip past
 * the filter. Compat architectures are filtered too: a 32-bit ioctl is
 * another way to reach the same code. */
#include "seccomp_filter.h"

#include <errno.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"

static void release_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

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

int seccomp_filter_fd(struct error *err)
{
	static const unsigned long denied_ioctls[] = {TIOCSTI, TIOCLINUX};

	__attribute__((cleanup(release_ctx))) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return error_set(err, EXIT_SETUP, "creating the seccomp filter failed");
	int r = add_compat_arches(ctx);
	if (r < 0)
		return error_errno(err, EXIT_SETUP, -r,
				   "adding architectures to the seccomp filter");

	for (size_t i = 0; i < ARRAY_SIZE(denied_ioctls); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
				     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffu, denied_ioctls[i]));
		if (r < 0)
			return error_errno(err, EXIT_SETUP, -r, "adding a seccomp rule for ioctl");
	}

	_cleanup_close_ int fd = memfd_create("agent-sandbox-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return error_errno(err, EXIT_SETUP, errno,
				   "creating a memfd for the seccomp filter");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return error_errno(err, EXIT_SETUP, -r, "compiling the seccomp filter");
	if (lseek(fd, 0, SEEK_SET) < 0)
		return error_errno(err, EXIT_SETUP, errno, "rewinding the seccomp filter");
	return steal_fd(&fd);
}
