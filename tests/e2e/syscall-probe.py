# Makes system calls by name and prints "NAME ERRNO" for each (0: it
# succeeded). Names resolve through libseccomp, so the numbers are this
# architecture's. Arguments are chosen so that, without a filter, the kernel
# would usually answer with something other than EPERM (a bad descriptor,
# address or command), which lets a test tell the filter's answer from the
# kernel's.
#
#   python3 syscall-probe.py NAME...      (no names: all of them)
import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000
SIGCHLD = 17
PROBES = {
    "keyctl": (999,),
    "add_key": (0, 0, 0, 0, 0),
    "request_key": (0, 0, 0, 0),
    "bpf": (999, 0, 0),
    "perf_event_open": (0, 0, -1, -1, 0),
    "userfaultfd": (0xFFFF,),
    "kexec_load": (0, 0, 0, 0),
    "kexec_file_load": (-1, -1, 0, 0, 0),
    "init_module": (0, 0, 0),
    "finit_module": (-1, 0, 0),
    "delete_module": (0, 0),
    "mount": (0, 0, 0, 0, 0),
    "umount2": (0, 0),
    "pivot_root": (0, 0),
    "open_tree": (-1, 0, 0),
    "move_mount": (-1, 0, -1, 0, 0),
    "fsopen": (0, 0),
    "fsconfig": (-1, 0, 0, 0, 0),
    "fsmount": (-1, 0, 0),
    "fspick": (-1, 0, 0),
    "mount_setattr": (-1, 0, 0, 0, 0),
    "io_uring_setup": (0, 0),
    "io_uring_enter": (-1, 0, 0, 0, 0, 0),
    "io_uring_register": (-1, 0, 0, 0),
    "unshare": (CLONE_NEWUSER,),
    "clone": (CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0),
    "clone3": (0, 0),
}

libc = ctypes.CDLL(None, use_errno=True)
libseccomp = ctypes.CDLL("libseccomp.so.2")
libseccomp.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]


def probe(name):
    nr = libseccomp.seccomp_syscall_resolve_name(name.encode())
    if nr < 0:
        return "unknown"
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in PROBES[name]])
    if r < 0:
        return ctypes.get_errno()
    if name == "clone":
        if r == 0:
            os._exit(0)
        os.waitpid(r, 0)
    return 0


for name in sys.argv[1:] or PROBES:
    print(name, probe(name), flush=True)
