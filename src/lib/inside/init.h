/* The first process inside the sandbox: agent-sandbox itself, run by bwrap
 * as pid 1. It starts the command, passes on signals that come from the
 * host, reaps orphans, relays the filtered network's connections to the
 * host's proxy, and exits with the command's status. */
#pragma once

#include <signal.h>

/* argv: SANDBOX_SELF SANDBOX_INIT_ARG READY_FD STDERR_FD IGNORED_MASK
 * --mounts=FD (--seccomp | --no-seccomp) [--forward=SPEC] [--pids=N] [--address-space=N]
 * [--command-env=N=V...]
 * (--landlock-rw=PATH... [--landlock-connect=PORT...] | --no-landlock) -- CMD...
 * Never returns. */
/* The sealed memfd with the mount plan (mount_plan.h): the init checks
 * the sandbox against it before anything runs, and refuses to start
 * without it. */
#define MOUNT_PLAN_ARG "--mounts="
/* The sandbox's seccomp filter (built in): the init loads it once it has
 * made its binds and dropped its capabilities, before anything else runs,
 * and refuses to start without being told either to or that there is
 * none. */
#define SECCOMP_ARG "--seccomp"
#define SECCOMP_OFF_ARG "--no-seccomp"
#define LANDLOCK_RW_ARG "--landlock-rw="
/* Writable, but no directory beneath it removed or renamed. */
#define LANDLOCK_KEEP_DIRS_ARG "--landlock-keep-dirs="
#define LANDLOCK_CONNECT_ARG "--landlock-connect="
#define LANDLOCK_OFF_ARG "--no-landlock"
/* With the filtered network the command may not create unix sockets,
 * unless the policy exposes one on purpose (--docker). */
#define LANDLOCK_SOCKET_ARG "--landlock-socket="
/* The init's end of the control socket pair (sandbox/control.h): later
 * commands started by the sandbox's owner. */
#define CONTROL_ARG "--control="
/* How many processes the command may have at once (RLIMIT_NPROC). */
#define PIDS_ARG "--pids="
/* Bytes of address space each process of the command may have
 * (RLIMIT_AS): the memory limit where no memory cgroup holds it. */
#define ADDRESS_SPACE_ARG "--address-space="
/* A variable of the dynamic loader's, set for the command only: the init
 * itself never runs with one. */
#define COMMAND_ENV_ARG "--command-env="

_Noreturn void sandbox_init_main(int argc, char **argv);

/* Sent by the host to the init (stop, timeout): the init sends SIGTERM to
 * every other process of the sandbox, not only the command. A process
 * inside cannot ask for it: the init acts on it only when it comes from
 * outside its pid namespace. SIGKILL to the init then ends whatever is
 * left, the namespace going with it. */
#define SANDBOX_TERMINATE_SIGNAL (SIGRTMIN + 1)

/* Sent by `stop` to the supervising agent-sandbox: TERMINATE passes the
 * request on to the init; KILL, after the grace period, kills the init and
 * with it the sandbox's pid namespace. */
#define SANDBOX_KILL_SIGNAL (SIGRTMIN + 2)

/* The signals the host forwards into the sandbox. */
extern const int sandbox_forwarded_signals[];
extern const int sandbox_forwarded_signals_len;
