/* The BPF programs of the seccomp filters, compiled at build time from the
 * rules in src/gen/seccomp_rules.c into $(BUILD)/gen/seccomp_programs.c by
 * src/gen/seccomp_gen.c. Read by seccomp.c and the unit tests only. */
#pragma once

#include <stddef.h>

#include <linux/filter.h>

struct seccomp_program {
	unsigned flags;			  /* SECCOMP_COMMAND_*, for a command filter */
	const struct sock_filter *filter; /* for the native architecture */
	unsigned short len;		  /* instructions */
};

extern const struct seccomp_program seccomp_sandbox_program;
/* One per combination of the SECCOMP_COMMAND_* flags. */
extern const struct seccomp_program seccomp_command_programs[];
extern const size_t seccomp_command_programs_len;
