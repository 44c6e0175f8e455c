/* The seccomp filters: the sandbox's (loaded by the sandbox's init once it
 * has made its binds) and the command's (stacked in the process that is
 * about to exec it). Both are compiled at build time; see seccomp.c. */
#pragma once

#include <stddef.h>

#include "base/error.h"

/* One documented rule: which calls, what they return, and why. */
struct seccomp_rule {
	const char *calls;
	const char *result;
	const char *why;
};
extern const struct seccomp_rule seccomp_rules[];
extern const size_t seccomp_rules_len;

/* Loads the sandbox filter into the calling thread (and sets
 * no_new_privs, which it needs). Returns 0 or -1 with err set. */
int seccomp_filter_load_sandbox(struct error *err);

enum {
	SECCOMP_COMMAND_SANDBOX_RULES = 1 << 0, /* the sandbox filter's rules again */
	SECCOMP_COMMAND_NO_INET = 1 << 2,	/* no new IP or packet sockets */
	/* No new unix socket that could reach another process's: socket()
	 * and a datagram socketpair (sendto names any address); a stream
	 * socketpair stays. */
	SECCOMP_COMMAND_NO_UNIX = 1 << 3,
	/* Nothing written into another process of the sandbox (pidfd_getfd,
	 * process_vm_writev, ptrace's writing requests): the daemon's
	 * processes, so that a tool cannot take the agent CLI's output
	 * channel, or make it print, to forge events. */
	SECCOMP_COMMAND_NO_PTRACE = 1 << 4,
	SECCOMP_COMMAND_ALL = SECCOMP_COMMAND_SANDBOX_RULES | SECCOMP_COMMAND_NO_INET |
			      SECCOMP_COMMAND_NO_UNIX | SECCOMP_COMMAND_NO_PTRACE,
};

/* Loads a filter with the rules FLAGS select into the calling thread (and
 * sets no_new_privs, which it needs). Returns 0 or -1 with err set. */
int seccomp_filter_load_command(unsigned flags, struct error *err);
