/* This file loads the seccomp filters: the sandbox filter (handed to bwrap
 * through --seccomp, or loaded by the sandbox's init) and the command
 * filter, stacked onto the command alone. Their rules are decided in
 * src/gen/seccomp_rules.c and compiled at build time into BPF programs
 * (seccomp_programs.h); this file only hands those to the kernel, so a run
 * neither compiles a filter nor needs libseccomp. The table below says
 * what each rule denies and why (README's "Security model"). */
#include "sandbox/seccomp.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "sandbox/seccomp_programs.h"

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
    {"ptrace, pidfd_getfd, process_vm_readv, process_vm_writev (processes `serve` starts)", "EPERM",
     "taking the agent CLI's output channel, or its memory, to print events the platform "
     "bills from"},
};
const size_t seccomp_rules_len = ARRAY_SIZE(seccomp_rules);

/* What libseccomp's seccomp_load did with our filters' attributes: the
 * filter needs no_new_privs (we hold no capability to go without it), and
 * no flags (no thread sync: the caller is single-threaded or means to
 * filter this thread only). */
static int load(const struct seccomp_program *p, struct error *err)
{
	struct sock_fprog prog = {.len = p->len, .filter = (struct sock_filter *)p->filter};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_errno(err, ERROR_SETUP, errno, "setting no_new_privs");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return error_errno(err, ERROR_SETUP, errno, "loading the seccomp filter");
	return 0;
}

int seccomp_filter_load_sandbox(struct error *err)
{
	return load(&seccomp_sandbox_program, err);
}

int seccomp_filter_load_command(unsigned flags, struct error *err)
{
	for (size_t i = 0; i < seccomp_command_programs_len; i++)
		if (seccomp_command_programs[i].flags == flags)
			return load(&seccomp_command_programs[i], err);
	return error_set(err, ERROR_INTERNAL, "no seccomp command filter for flags %#x", flags);
}
