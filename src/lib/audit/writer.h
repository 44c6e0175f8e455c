/* The audit log: one JSON object per line in
 * $XDG_STATE_HOME/agent-sandbox/audit.jsonl, written only by the host side.
 * Each record is one write(2) on an O_APPEND descriptor, so records from
 * several sandboxes running at once never interleave. Events from inside
 * (blocked wrapped commands) arrive as datagrams on a socket bind-mounted at
 * AUDIT_SOCKET_INSIDE and are checked before they are logged. */
#pragma once

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "inside/inside.h"
#include "policy/policy.h"
#include "net/proxy.h"
#include "base/strv.h"

#define AUDIT_SOCKET_INSIDE SANDBOX_DIR "/audit.sock"
#define AUDIT_EVENT_MAX 8192 /* bytes in one datagram from inside */
/* A datagram socket connected to AUDIT_SOCKET_INSIDE, which the init leaves
 * open at this number in the command: with a filtered network the command
 * may not create unix sockets, and the launcher still reports through it. */
#define AUDIT_FD_INSIDE 1000

/* Creates DIR and its missing parents (0700); refuses it unless it is a
 * directory of this user (not a symlink), and makes it private. The audit
 * log and the trust store live there. */
int state_dir_prepare(const char *dir, struct error *err);

struct audit {
	int fd;		 /* the log, or -1 when not logging */
	char run_id[17]; /* random hex id of this run (the log's "session") */
	struct timespec started;
	int sock;	  /* the datagram socket for events from inside, or -1 */
	char *sock_path;  /* its host path */
	int stop_pipe[2]; /* tells the receiver thread to finish */
	pthread_t receiver;
	bool receiving;
	/* Records the sandbox can cause (reports from inside, connections it
	 * opens) are capped per run, so it cannot fill the disk. */
	unsigned long blocked_logged, blocked_dropped; /* the receiver's */
	unsigned long network_logged, network_dropped; /* the proxy's */
	/* Records that could not be written (a full disk, an I/O error, a file
	 * size limit): how many, and the errno of the first failure. The
	 * receiver thread writes too, hence atomics. */
	atomic_ulong write_errors;
	atomic_int write_errno;
	atomic_bool cut_line; /* the log ends inside a record cut short */
	bool stopped;	      /* `agent-sandbox stop` ended the run: the end record says so */
};

#define AUDIT_BLOCKED_MAX 1000	/* blocked reports from inside, per run */
#define AUDIT_NETWORK_MAX 20000 /* network decisions, per run */

/* A new random run id (the log calls it "session"): 16 hex digits. Returns 0, or -1 with errno. */
int audit_run_id(char out[17]);

/* Creates the directory (0700) and opens the log. */
int audit_open(struct audit *a, const char *dir, struct error *err);

/* Creates the socket in the private runtime directory and starts receiving
 * events from it. Without a socket, events from inside are not logged. */
int audit_listen(struct audit *a, const char *runtime_dir, struct error *err);

struct audit_start {
	const char *cwd;
	char *const *command;
	const struct policy *policy;
	const char *network; /* "host", "none" or "filtered" */
	bool read_only;
	size_t secrets_masked;
	const struct strv *env_dropped;
	const struct strv *degraded; /* layers left out under --allow-degraded, or NULL */
};

void audit_run_start(struct audit *a, const struct audit_start *start);
/* status: the exit status, or -1 with error set when the sandbox failed. */
void audit_run_end(struct audit *a, int status, const char *error);

/* Records lost to failed writes, for the user: "N records could not be
 * written: No space left on device", or NULL when every record so far was
 * written. The caller frees it. The "end" record carries the same count
 * (write_errors, write_error) when it could itself be written. */
char *audit_write_failure(const struct audit *a);

/* Stops the receiver, removes the socket and closes the log. */
/* gc removed a branch worktree (last_use: seconds since the epoch); forced
 * when it had uncommitted changes and --force was given. */
void audit_gc_removal(struct audit *a, const char *worktree, const char *branch, long long last_use,
		      bool forced, bool shelf_removed);

/* A record of the executor API (serve/): event, the session's id in
 * "session", the owner, and fields (taken; may be NULL) merged in. */
void audit_serve(struct audit *a, const char *session, const char *event, const char *owner,
		 struct json_object *fields);

void audit_close(struct audit *a);
DEFINE_CLEANUP_FUNC(struct audit, audit_close)
#define _cleanup_audit_ _cleanup_(audit_closep)

/* "sha256:<64 hex digits>" over the access table and the settings that
 * shape the sandbox, to tell whether two runs had one policy. */
char *audit_policy_digest(const struct policy *policy, const char *network, bool read_only);

/* One decision of the network proxy: allowed or refused, with the bytes
 * moved and the time the connection lasted. */
void audit_network(struct audit *a, const struct proxy_decision *d);

/* The guard moved a protected path that appeared into quarantine
 * (moved_to), or could not (error). Not capped: the guard stops the
 * sandbox after a few repeats of one path. */
void audit_quarantine(struct audit *a, const char *path, const char *moved_to, const char *rule,
		      const char *error);

/* The command opened a masked file (path as the sandbox sees it; pattern
 * and rule: what masked it) count times since the last such record. The
 * caller (secret_watch.c) coalesces and caps these. */
void audit_secret_read(struct audit *a, const char *path, const char *pattern, const char *rule,
		       unsigned long count);
/* Reads of masked files are not (all) reported, and why. */
void audit_secret_watch(struct audit *a, const char *reason);

/* Checks an event from inside: a JSON object {"event": "blocked",
 * "command": NAME, "argv": [...], "reason": TEXT} within the size limits.
 * Returns a new record holding only those fields, or NULL. */
struct json_object *audit_event_parse(const char *buf, size_t len);

/* For the launcher inside: reports a blocked command to the host. Returns
 * 0, or -errno when there is no socket (then nothing is logged). */
int audit_report_blocked(const char *command, char *const *argv, const char *reason);

/* For the init: opens the socket that AUDIT_FD_INSIDE names and puts it
 * there (kept across exec). Returns 0, or -errno when there is no audit
 * socket (a run without the log, or a nested sandbox). */
int audit_inherit_socket(void);
