# Runs a command as on a kernel without Landlock: a seccomp filter makes
# landlock_create_ruleset answer ENOSYS, as it does where Landlock is not
# built in. The filter is inherited by everything the command starts.
#
#   python3 without-landlock.py CMD [ARGS...]
import ctypes
import errno
import os
import sys

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO = 0x00050000

libseccomp = ctypes.CDLL("libseccomp.so.2")
libseccomp.seccomp_init.restype = ctypes.c_void_p
libseccomp.seccomp_init.argtypes = [ctypes.c_uint32]
libseccomp.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
libseccomp.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
libseccomp.seccomp_load.argtypes = [ctypes.c_void_p]

ctx = libseccomp.seccomp_init(SCMP_ACT_ALLOW)
nr = libseccomp.seccomp_syscall_resolve_name(b"landlock_create_ruleset")
if not ctx or nr < 0 or libseccomp.seccomp_rule_add(ctx, SCMP_ACT_ERRNO | errno.ENOSYS, nr, 0) < 0:
    sys.exit("without-landlock: cannot build the filter")
if libseccomp.seccomp_load(ctx) < 0:
    sys.exit("without-landlock: cannot load the filter")
os.execvp(sys.argv[1], sys.argv[1:])
