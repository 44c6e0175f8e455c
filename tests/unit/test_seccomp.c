/* Unit tests for the seccomp filters agent-sandbox carries: each program is
 * byte for byte what libseccomp builds from the rules now (so the build
 * cannot drift from src/gen/seccomp_rules.c); each one, run in a small BPF
 * interpreter, answers every documented call on every architecture it
 * covers (the 32-bit ones included); and each one, loaded in a forked
 * child, refuses what it must with the documented errno and lets the rest
 * through with the answer the kernel gives without a filter. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/net.h>
#include <linux/seccomp.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "gen/seccomp_rules.h"
#include "sandbox/seccomp.h"
#include "sandbox/seccomp_programs.h"
#include "unit.h"

/* ------------------------------------------------------------------ */
/* The programs match the rules                                         */

static void assert_same_program(const struct seccomp_program *p, scmp_filter_ctx ctx,
				const char *name)
{
	const char *what = NULL;
	_cleanup_free_ unsigned char *bytes = NULL;
	size_t len = 0;
	int r = seccomp_rules_export(ctx, &bytes, &len, &what);
	seccomp_release(ctx);
	if (r < 0)
		unit_fail("%s: %s: %s", name, what, strerror(-r));
	if (len != p->len * sizeof(*p->filter))
		unit_fail("%s: carried program has %u instructions, libseccomp builds %zu", name,
			  p->len, len / sizeof(*p->filter));
	if (memcmp(bytes, p->filter, len) != 0)
		unit_fail("%s: carried program differs from what libseccomp builds", name);
}

static void sandbox_program_is_what_the_rules_build(void **state)
{
	const char *what = NULL;
	scmp_filter_ctx ctx = NULL;
	int r = seccomp_rules_sandbox(&ctx, &what);
	if (r < 0)
		unit_fail("building the sandbox filter: %s: %s", what, strerror(-r));
	assert_same_program(&seccomp_sandbox_program, ctx, "sandbox filter");
}

static void every_command_program_is_what_the_rules_build(void **state)
{
	size_t seen = 0;
	for (unsigned flags = 0; flags <= SECCOMP_COMMAND_ALL; flags++) {
		if (flags & ~(unsigned)SECCOMP_COMMAND_ALL)
			continue;
		const struct seccomp_program *p = NULL;
		for (size_t i = 0; i < seccomp_command_programs_len; i++)
			if (seccomp_command_programs[i].flags == flags)
				p = &seccomp_command_programs[i];
		if (!p)
			unit_fail("no command program for flags %#x", flags);
		const char *what = NULL;
		scmp_filter_ctx ctx = NULL;
		int r = seccomp_rules_command(flags, &ctx, &what);
		if (r < 0)
			unit_fail("flags %#x: %s: %s", flags, what, strerror(-r));
		char name[32];
		snprintf(name, sizeof(name), "command filter %#x", flags);
		assert_same_program(p, ctx, name);
		seen++;
	}
	assert_int_equal(seen, seccomp_command_programs_len);
}

static void unknown_command_flags_are_refused(void **state)
{
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(seccomp_filter_load_command(1u << 1, &err), -1);
	assert_int_equal(err.kind, ERROR_INTERNAL);
}

/* ------------------------------------------------------------------ */
/* The programs decide as documented, on every architecture             */

/* A conditional jump compares A with K or with X. */
static bool jump_taken(const struct sock_filter *f, uint32_t a, uint32_t x)
{
	uint32_t operand = BPF_SRC(f->code) == BPF_X ? x : f->k;
	switch (BPF_OP(f->code)) {
	case BPF_JEQ:
		return a == operand;
	case BPF_JGT:
		return a > operand;
	case BPF_JGE:
		return a >= operand;
	default: /* BPF_JSET */
		return (a & operand) != 0;
	}
}

/* Runs P on D as the kernel would; returns the filter's action. */
static uint32_t simulate(const struct seccomp_program *p, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	for (size_t pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->filter[pc];
		uint32_t k = f->k;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k % 4 != 0 || k + 4 > sizeof(*d))
				unit_fail("instruction %zu loads from offset %u", pc, k);
			memcpy(&a, (const char *)d + k, sizeof(a));
			break;
		case BPF_LD | BPF_IMM:
			a = k;
			break;
		case BPF_LDX | BPF_IMM:
			x = k;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				unit_fail("instruction %zu: scratch word %u", pc, k);
			if (f->code == (BPF_LD | BPF_MEM))
				a = mem[k];
			else if (f->code == (BPF_LDX | BPF_MEM))
				x = mem[k];
			else
				mem[k] = f->code == BPF_ST ? a : x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= k;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= k;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_JMP | BPF_JA:
			pc += k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_K:
		case BPF_JMP | BPF_JEQ | BPF_X:
		case BPF_JMP | BPF_JGT | BPF_X:
		case BPF_JMP | BPF_JGE | BPF_X:
		case BPF_JMP | BPF_JSET | BPF_X:
			pc += jump_taken(f, a, x) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return k;
		case BPF_RET | BPF_A:
			return a;
		default:
			unit_fail("instruction %zu: opcode %#x is not simulated", pc, f->code);
		}
	}
	unit_fail("the program runs off its end");
	return 0;
}

/* The architectures a filter covers: the native one and the compat ones
 * the same kernel runs, each a way into the same kernel code. */
static size_t expected_arches(uint32_t arches[3])
{
	size_t n = 0;
	arches[n++] = seccomp_arch_native();
	if (arches[0] == SCMP_ARCH_X86_64) {
		arches[n++] = SCMP_ARCH_X86;
		arches[n++] = SCMP_ARCH_X32;
	} else if (arches[0] == SCMP_ARCH_AARCH64) {
		arches[n++] = SCMP_ARCH_ARM;
	}
	return n;
}

struct call {
	const char *name;
	uint64_t args[2];
	unsigned denied_by; /* SECCOMP_COMMAND_* rules that refuse it; 0 for none */
	int errnum;
};

/* The calls with arguments; the plain ones come from seccomp_rules[]. */
static const struct call calls[] = {
    {"ioctl", {0, TIOCSTI}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"ioctl", {0, TIOCSTI | (1ull << 32)}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"ioctl", {0, TIOCLINUX}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"ioctl", {0, FIONREAD}, 0, 0},
    {"unshare", {CLONE_NEWUSER}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {CLONE_NEWNS | CLONE_FILES}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {CLONE_NEWPID}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {CLONE_NEWNET}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {CLONE_NEWUTS}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {CLONE_NEWIPC}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {CLONE_NEWCGROUP}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {0x80 /* CLONE_NEWTIME */}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"unshare", {CLONE_FILES}, 0, 0},
    {"clone", {CLONE_NEWUSER | SIGCHLD}, SECCOMP_COMMAND_SANDBOX_RULES, EPERM},
    {"clone", {SIGCHLD}, 0, 0},
    {"socket", {AF_INET}, SECCOMP_COMMAND_NO_INET, EPERM},
    {"socket", {AF_INET6}, SECCOMP_COMMAND_NO_INET, EPERM},
    {"socket", {AF_PACKET}, SECCOMP_COMMAND_NO_INET, EPERM},
    {"socket", {AF_INET | (1ull << 32)}, SECCOMP_COMMAND_NO_INET, EPERM},
    {"socket", {AF_UNIX}, SECCOMP_COMMAND_NO_UNIX, EPERM},
    {"socket", {AF_UNIX | (1ull << 32)}, SECCOMP_COMMAND_NO_UNIX, EPERM},
    {"socketpair", {AF_UNIX, SOCK_STREAM}, 0, 0},
    {"socketpair", {AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC}, 0, 0},
    {"socketpair", {AF_UNIX, SOCK_DGRAM}, SECCOMP_COMMAND_NO_UNIX, EPERM},
    {"socketpair",
     {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK},
     SECCOMP_COMMAND_NO_UNIX,
     EPERM},
    {"socketcall", {SYS_SOCKET}, SECCOMP_COMMAND_NO_INET | SECCOMP_COMMAND_NO_UNIX, EPERM},
    {"socketcall", {SYS_SOCKETPAIR}, SECCOMP_COMMAND_NO_UNIX, EPERM},
    {"socketcall", {SYS_CONNECT}, 0, 0},
    {"ptrace", {5 /* POKEDATA */}, SECCOMP_COMMAND_NO_PTRACE, EPERM},
    {"ptrace", {4 /* POKETEXT */}, SECCOMP_COMMAND_NO_PTRACE, EPERM},
    {"ptrace", {13 /* SETREGS */}, SECCOMP_COMMAND_NO_PTRACE, EPERM},
    {"ptrace", {0x4205 /* SETREGSET */}, SECCOMP_COMMAND_NO_PTRACE, EPERM},
    {"ptrace", {0x4205 | (1ull << 32)}, SECCOMP_COMMAND_NO_PTRACE, EPERM},
    {"ptrace", {16 /* ATTACH */}, 0, 0},
    {"ptrace", {0x4204 /* GETREGSET */}, 0, 0},
    {"ptrace", {2 /* PEEKDATA */}, 0, 0},
    {"pidfd_getfd", {3, 1}, SECCOMP_COMMAND_NO_PTRACE, EPERM},
    {"process_vm_writev", {1}, SECCOMP_COMMAND_NO_PTRACE, EPERM},
    {"process_vm_readv", {1}, 0, 0},
    {"getpid", {0}, 0, 0},
    {"read", {0}, 0, 0},
};

static void check_call(const struct seccomp_program *p, unsigned flags, uint32_t arch,
		       const char *name, const uint64_t args[2], unsigned denied_by, int errnum,
		       const char *program)
{
	int nr = seccomp_syscall_resolve_name_arch(arch, name);
	if (nr < 0)
		return; /* not a call on this architecture */
	/* The kernel reports an x32 call as x86_64 with bit 30 in the number,
	 * which libseccomp's x32 numbers carry. */
	uint32_t audit_arch = arch == SCMP_ARCH_X32 ? SCMP_ARCH_X86_64 : arch;
	struct seccomp_data d = {.nr = nr, .arch = audit_arch, .args = {args[0], args[1]}};
	uint32_t want =
	    (denied_by & flags) ? SECCOMP_RET_ERRNO | (uint32_t)errnum : SECCOMP_RET_ALLOW;
	uint32_t got = simulate(p, &d);
	if (got != want)
		unit_fail("%s, arch %#x: %s(%#llx, %#llx) gets %#x, expected %#x", program, arch,
			  name, (unsigned long long)args[0], (unsigned long long)args[1], got,
			  want);
}

/* A row of seccomp_rules[] that lists plain names is denied outright; the
 * rows with conditions are in calls[] with their arguments. */
static void check_documented_rows(const struct seccomp_program *p, unsigned flags, uint32_t arch,
				  const char *program)
{
	size_t plain_rows = 0;
	for (size_t i = 0; i < seccomp_rules_len; i++) {
		const struct seccomp_rule *rule = &seccomp_rules[i];
		if (strspn(rule->calls, "abcdefghijklmnopqrstuvwxyz0123456789_, ") !=
			strlen(rule->calls) ||
		    strstr(rule->calls, " with "))
			continue;
		if (strcmp(rule->result, "EPERM") != 0 && strcmp(rule->result, "ENOSYS") != 0)
			unit_fail("%s: result %s is not checked", rule->calls, rule->result);
		int errnum = strcmp(rule->result, "ENOSYS") == 0 ? ENOSYS : EPERM;
		_cleanup_free_ char *names = xstrdup(rule->calls);
		char *save = NULL;
		for (char *name = strtok_r(names, ", ", &save); name;
		     name = strtok_r(NULL, ", ", &save)) {
			const uint64_t none[2] = {0, 0};
			check_call(p, flags, arch, name, none, SECCOMP_COMMAND_SANDBOX_RULES,
				   errnum, program);
		}
		plain_rows++;
	}
	assert_true(plain_rows >= 8);
}

static void check_program(const struct seccomp_program *p, unsigned flags, const char *program)
{
	uint32_t arches[3];
	size_t n = expected_arches(arches);
	for (size_t a = 0; a < n; a++) {
		check_documented_rows(p, flags, arches[a], program);
		for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
			check_call(p, flags, arches[a], calls[i].name, calls[i].args,
				   calls[i].denied_by, calls[i].errnum, program);
	}
	/* Any other architecture is killed: a call in an ABI the filter
	 * does not know could be anything. */
	struct seccomp_data other = {.nr = 0, .arch = 0x12345678};
	assert_int_equal(simulate(p, &other), SECCOMP_RET_KILL_THREAD);
}

static void programs_decide_as_documented_on_every_architecture(void **state)
{
	check_program(&seccomp_sandbox_program, SECCOMP_COMMAND_SANDBOX_RULES, "sandbox filter");
	for (size_t i = 0; i < seccomp_command_programs_len; i++) {
		char name[32];
		snprintf(name, sizeof(name), "command filter %#x",
			 seccomp_command_programs[i].flags);
		check_program(&seccomp_command_programs[i], seccomp_command_programs[i].flags,
			      name);
	}
}

/* ------------------------------------------------------------------ */
/* The programs, loaded, refuse what they must                          */

/* Each probe makes one call and returns 0 or the errno it failed with.
 * Where it can, a probe passes arguments that the kernel would refuse with
 * another errno, so that the documented errno can only come from the
 * filter (probes_answer_otherwise_without_a_filter checks that). */
static int result(long r)
{
	return r < 0 ? errno : 0;
}

static int probe_keyctl(void)
{
	return result(syscall(SYS_keyctl, -1L, 0L, 0L, 0L, 0L)); /* no such operation */
}

static int probe_clone3(void)
{
	return result(syscall(SYS_clone3, NULL, (size_t)0)); /* too small for clone_args */
}

static int probe_unshare_user(void)
{
	return result(unshare(CLONE_NEWUSER));
}

static int probe_unshare_user_invalid(void)
{
	return result(unshare(CLONE_NEWUSER | CLONE_SETTLS)); /* not an unshare flag */
}

static int probe_clone_user_invalid(void)
{
	/* A new user namespace cannot share the filesystem information. */
	return result(
	    syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | CLONE_FS), 0L, 0L, 0L, 0L));
}

/* On a pipe: TIOCSTI is refused (no terminal), FIONREAD answers. */
static int probe_ioctl(unsigned long request)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	int arg = 0;
	int r = result(ioctl(fds[0], request, &arg));
	close(fds[0]);
	close(fds[1]);
	return r;
}

static int probe_tiocsti(void)
{
	return probe_ioctl(TIOCSTI);
}

static int probe_tiocsti_high_bits(void)
{
	/* The kernel reads the request as 32 bits; so must the filter. */
	return probe_ioctl((unsigned long)TIOCSTI | (1ul << 32));
}

static int probe_fionread(void)
{
	return probe_ioctl(FIONREAD);
}

static int probe_socket(int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int probe_socket_inet(void)
{
	return probe_socket(AF_INET, SOCK_STREAM);
}

static int probe_socket_inet6(void)
{
	return probe_socket(AF_INET6, SOCK_DGRAM);
}

static int probe_socket_packet_invalid(void)
{
	return probe_socket(AF_PACKET, 15); /* no such socket type */
}

static int probe_socket_unix(void)
{
	return probe_socket(AF_UNIX, SOCK_STREAM);
}

static int probe_socketpair(int type)
{
	int sv[2];
	int r = socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv);
	if (r == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	return result(r);
}

static int probe_socketpair_stream(void)
{
	return probe_socketpair(SOCK_STREAM);
}

static int probe_socketpair_dgram(void)
{
	return probe_socketpair(SOCK_DGRAM);
}

static int probe_unshare_nothing(void)
{
	return result(unshare(0));
}

struct probe {
	const char *name;
	int (*call)(void);
	unsigned denied_by; /* SECCOMP_COMMAND_* rules that refuse it; 0 for none */
	int errnum;	    /* what they answer */
	bool proof;	    /* without a filter the kernel answers otherwise */
};

static const struct probe probes[] = {
    {"keyctl", probe_keyctl, SECCOMP_COMMAND_SANDBOX_RULES, EPERM, true},
    {"clone3", probe_clone3, SECCOMP_COMMAND_SANDBOX_RULES, ENOSYS, true},
    {"unshare(CLONE_NEWUSER)", probe_unshare_user, SECCOMP_COMMAND_SANDBOX_RULES, EPERM, false},
    {"unshare(CLONE_NEWUSER|CLONE_SETTLS)", probe_unshare_user_invalid,
     SECCOMP_COMMAND_SANDBOX_RULES, EPERM, true},
    {"clone(CLONE_NEWUSER|CLONE_FS)", probe_clone_user_invalid, SECCOMP_COMMAND_SANDBOX_RULES,
     EPERM, true},
    {"ioctl(TIOCSTI)", probe_tiocsti, SECCOMP_COMMAND_SANDBOX_RULES, EPERM, true},
    {"ioctl(TIOCSTI | 1<<32)", probe_tiocsti_high_bits, SECCOMP_COMMAND_SANDBOX_RULES, EPERM, true},
    {"socket(AF_INET)", probe_socket_inet, SECCOMP_COMMAND_NO_INET, EPERM, true},
    {"socket(AF_INET6)", probe_socket_inet6, SECCOMP_COMMAND_NO_INET, EPERM, true},
    {"socket(AF_PACKET, 15)", probe_socket_packet_invalid, SECCOMP_COMMAND_NO_INET, EPERM, true},
    {"socket(AF_UNIX)", probe_socket_unix, SECCOMP_COMMAND_NO_UNIX, EPERM, true},
    {"socketpair(AF_UNIX, SOCK_DGRAM)", probe_socketpair_dgram, SECCOMP_COMMAND_NO_UNIX, EPERM,
     true},
    /* Allowed everywhere: the rules are no wider than they say. */
    {"ioctl(FIONREAD)", probe_fionread, 0, 0, false},
    {"socketpair(AF_UNIX, SOCK_STREAM)", probe_socketpair_stream, 0, 0, false},
    {"unshare(0)", probe_unshare_nothing, 0, 0, false},
};

enum loader { LOAD_NOTHING, LOAD_SANDBOX, LOAD_COMMAND };

/* Forks a child that loads a filter and runs every probe; fills results
 * (one errno or 0 per probe). */
static void run_probes(enum loader loader, unsigned flags, int *results)
{
	int pipefd[2];
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct error err = ERROR_INIT;
		int r = 0;
		if (loader == LOAD_SANDBOX)
			r = seccomp_filter_load_sandbox(&err);
		else if (loader == LOAD_COMMAND)
			r = seccomp_filter_load_command(flags, &err);
		if (r < 0)
			_exit(3);
		int out[ARRAY_SIZE(probes)];
		for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
			out[i] = probes[i].call();
		_exit(write_all(pipefd[1], out, sizeof(out)) < 0 ? 4 : 0);
	}
	close(pipefd[1]);
	size_t want = ARRAY_SIZE(probes) * sizeof(*results), got = 0;
	while (got < want) {
		ssize_t n = read(pipefd[0], (char *)results + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(pipefd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		unit_fail("loader %d flags %#x: child failed (status %#x)%s", loader, flags, status,
			  WIFEXITED(status) && WEXITSTATUS(status) == 3 ? ": loading the filter"
									: "");
	assert_int_equal(got, want);
}

static void check_filter(enum loader loader, unsigned flags, const char *name)
{
	int baseline[ARRAY_SIZE(probes)], filtered[ARRAY_SIZE(probes)];
	run_probes(LOAD_NOTHING, 0, baseline);
	run_probes(loader, flags, filtered);
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		const struct probe *p = &probes[i];
		int want = (p->denied_by & flags) ? p->errnum : baseline[i];
		if (filtered[i] != want)
			unit_fail("%s: %s answered %s, expected %s", name, p->name,
				  filtered[i] ? strerror(filtered[i]) : "success",
				  want ? strerror(want) : "success");
	}
}

static void probes_answer_otherwise_without_a_filter(void **state)
{
	int baseline[ARRAY_SIZE(probes)];
	run_probes(LOAD_NOTHING, 0, baseline);
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (probes[i].proof && baseline[i] == probes[i].errnum)
			unit_fail("%s answers %s without a filter: the probe proves nothing",
				  probes[i].name, strerror(baseline[i]));
	/* The allowed probes succeed, so a filter that let them through is
	 * seen to succeed too. */
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		if (!probes[i].denied_by && baseline[i] != 0)
			unit_fail("%s fails without a filter: %s", probes[i].name,
				  strerror(baseline[i]));
}

static void sandbox_filter_refuses_its_calls_and_allows_the_rest(void **state)
{
	check_filter(LOAD_SANDBOX, SECCOMP_COMMAND_SANDBOX_RULES, "sandbox filter");
}

static void command_filters_refuse_what_their_flags_select(void **state)
{
	for (size_t i = 0; i < seccomp_command_programs_len; i++) {
		unsigned flags = seccomp_command_programs[i].flags;
		char name[32];
		snprintf(name, sizeof(name), "command filter %#x", flags);
		check_filter(LOAD_COMMAND, flags, name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sandbox_program_is_what_the_rules_build),
	    cmocka_unit_test(every_command_program_is_what_the_rules_build),
	    cmocka_unit_test(unknown_command_flags_are_refused),
	    cmocka_unit_test(programs_decide_as_documented_on_every_architecture),
	    cmocka_unit_test(probes_answer_otherwise_without_a_filter),
	    cmocka_unit_test(sandbox_filter_refuses_its_calls_and_allows_the_rest),
	    cmocka_unit_test(command_filters_refuse_what_their_flags_select),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
