/* Rendering the policy as bwrap arguments. Pure: the same plan always gives
 * the same arguments, which --dry-run prints and the tests compare. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/file_id.h"
#include "sandbox/hardening.h"
#include "sandbox/mount_plan.h"
#include "policy/policy.h"
#include "base/strv.h"
#include "policy/wrappers.h"

/* The filtered network, as the sandbox sees it. */
struct sandbox_net {
	const char *proxy_socket; /* host path of the proxy's unix socket */
	struct file_id proxy_socket_id;
	unsigned http_port; /* loopback ports inside for HTTP and SOCKS5 */
	unsigned socks_port;
	const uint16_t *localhost; /* network.localhost ports */
	size_t localhost_len;
	/* Credential endpoints: the port of endpoint i, which the forwarder
	 * hands to the proxy as endpoint i. */
	const uint16_t *credential_ports;
	size_t credential_ports_len;
};

/* A file shown read-only at dest in place of the host's: a copy of it
 * that the run made, identified like every other bound source. */
struct bwrap_copy {
	const char *dest;
	const char *source;
	struct file_id id;
};

struct bwrap_input {
	const struct policy *policy;
	bool host_network;	       /* share the host's network namespace */
	const struct sandbox_net *net; /* filtered network, or NULL */
	bool new_session;	       /* detach from the terminal (stdin is not one) */
	const char *self_exe;	       /* host path of this binary */
	const char *empty_file;	       /* host path of an empty read-only file */
	/* The identities the init checks the mounts of these against (all
	 * zero in a dry run: nothing is checked then). */
	struct file_id root_id, self_id, empty_id, audit_socket_id;
	int mounts_fd;		 /* the sealed memfd the init reads the mount plan from */
	const char *runtime_dir; /* $XDG_RUNTIME_DIR to give a private tmpfs, or NULL */
	const char *cwd;
	int info_fd;		       /* bwrap reports the init's host pid on it */
	int ready_fd;		       /* the init reports on it that the sandbox is up */
	int stderr_fd;		       /* the real stderr, for the init to hand to the command */
	int control_fd;		       /* the init's end of the control socket pair, or -1 */
	unsigned long ignored_signals; /* to stay ignored in the command */
	char *const *command;
	const char *audit_socket;	     /* host path of the audit socket, or NULL */
	const struct wrapper_plan *wrappers; /* NULL for none */
	bool nested;			     /* keep the outer sandbox's /run/agent-sandbox */
	char *const *loader_env;	   /* NAME=VALUE for the command only (env_split_loader) */
	const struct hardening *hardening; /* Landlock for the init to apply; NULL: none */
	unsigned long long tmp_size;	   /* bytes of /tmp; 0: BWRAP_TMP_DEFAULT */
	unsigned pids;			   /* processes the command may have; 0: no limit */
	unsigned long long address_space;  /* RLIMIT_AS of the command; 0: no limit */
	const struct bwrap_copy *copies;   /* shown in place of the host's files */
	size_t copies_len;
	/* Host directories shown read-only under agent-sandbox's own
	 * directory (dest there), like the daemon's MCP sockets. */
	const struct bwrap_copy *run_binds;
	size_t run_binds_len;
	/* Each masked file's own empty stand-in, in policy order (see
	 * secret_watch.h); a masked file without one gets empty_file. */
	const struct bwrap_copy *stand_ins;
	size_t stand_ins_len;
	const char *stand_ins_dir; /* the host directory that holds them all */
	/* The init makes the binds of masked files with the new mount API
	 * (the kernel has it), instead of bwrap; needs a mount plan. */
	bool init_binds;
	/* The init loads the sandbox's seccomp filter once its binds are
	 * made (bwrap would load it before them). */
	bool seccomp;
};

/* Set (to anything) in agent-sandbox's environment, this has bwrap make
 * the masked files' binds again instead of the init: only for the
 * benchmarks and the test that compares the two mount tables. */
#define BWRAP_MASKS_ENV "AGENT_SANDBOX_BENCH_BWRAP_MASKS"

/* Every tmpfs has a size, or it may take half of the host's memory (and
 * each one again). /tmp's comes from the config; the others hold sockets,
 * runtime files and POSIX shared memory, and get a fixed small one. */
#define BWRAP_TMP_DEFAULT (1ULL << 30)
#define BWRAP_RUN_SIZE (64ULL << 20)
#define BWRAP_SHM_SIZE (64ULL << 20)
#define BWRAP_SMALL_SIZE (16ULL << 20)

/* Appends the arguments (without the leading "bwrap") and returns the index
 * of the "--" that ends bwrap's options: bwrap reads options from --args but
 * the command only from its real argv. Unless mounts is NULL, every mount
 * rendered is also recorded there, for the init to check. */
size_t bwrap_render(const struct bwrap_input *plan, struct strv *args, struct mount_plan *mounts);
