/* The seccomp filter loaded into the sandbox (through bwrap's --seccomp). */
#pragma once

#include "error.h"

/* Returns a file descriptor (close-on-exec, offset 0) holding the compiled
 * BPF program, or -1 with err set. */
int seccomp_filter_fd(struct error *err);
