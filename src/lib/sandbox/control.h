/* A running sandbox's control socket: how its owner runs another command
 * inside it (`exec-into`, and the daemon's sessions).
 *
 * The supervising agent-sandbox listens on a unix socket in the user's
 * state directory and relays each request to the sandbox's init over a
 * socket pair the init inherited. The init forks the command exactly as it
 * forked the first one: the same namespaces, mounts and seccomp filter
 * (inherited from the init itself), the same Landlock rules, process limit
 * and environment (applied in the child from the init's own copy). Nothing
 * is re-planned, so nothing can differ. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <signal.h>

#include "base/error.h"

/* Messages are SOCK_SEQPACKET datagrams: a header, then a payload. */
enum control_kind {
	CONTROL_EXEC = 1, /* client: payload = argv, NUL-terminated strings; 3 fds */
	/* value: the command's pid inside, or -errno; may carry a pidfd of
	 * the command (how the daemon learns its host pid). */
	CONTROL_STARTED,
	CONTROL_SIGNAL, /* client: value = a signal for the command */
	/* value: the exit status (128+N for signal N); payload: the raw
	 * wait status as an int32_t, to tell exit 130 from SIGINT. */
	CONTROL_EXIT,
};

struct control_header {
	uint32_t magic;
	uint16_t version;
	uint16_t kind;
	uint32_t id; /* the supervisor's number for the request */
	int32_t value;
};

#define CONTROL_MAGIC 0x58425341u /* "ASBX" */
#define CONTROL_VERSION 1
#define CONTROL_PAYLOAD_MAX (64 * 1024)
/* Commands started from outside that a sandbox runs at once. */
#define CONTROL_EXECS_MAX 64
/* Signals a client may send to the command it started. */
#define CONTROL_SIGNAL_OK(sig)                                                                     \
	((sig) == SIGINT || (sig) == SIGTERM || (sig) == SIGHUP || (sig) == SIGQUIT ||             \
	 (sig) == SIGKILL || (sig) == SIGWINCH || (sig) == SIGUSR1 || (sig) == SIGUSR2 ||          \
	 (sig) == SIGCONT || (sig) == SIGSTOP || (sig) == SIGTSTP)

/* Sends one message with up to 3 descriptors. Returns 0 or -errno. */
int control_send(int fd, const struct control_header *h, const void *payload, size_t len,
		 const int *fds, size_t nfds);

/* Receives one message, its payload into buf (CONTROL_PAYLOAD_MAX bytes)
 * and its length into *len, its descriptors (O_CLOEXEC) into fds and
 * their number into *nfds: three with CONTROL_EXEC, none or one with
 * CONTROL_STARTED, none otherwise.
 * Returns 1, 0 at end of file, or -errno; -EBADMSG for a message that is
 * not ours, truncated, or carrying other descriptors (closed). */
int control_recv(int fd, struct control_header *h, char *buf, size_t *len, int fds[3],
		 size_t *nfds);

/* The argv of a CONTROL_EXEC payload: exactly count NUL-terminated
 * strings, nothing after them; an array of pointers into buf (free it,
 * not the strings), or NULL. */
char **control_parse_argv(char *buf, size_t len, int32_t count);

/* The host side. */
struct control;

/* Listens on path (replacing nothing: an existing file is an error) and
 * makes the pair whose other end the init inherits. */
int control_open(struct control **out, const char *path, struct error *err);
/* The init's end, to be inherited through bwrap. */
int control_init_end(const struct control *c);
/* Once bwrap has started: our copy of the init's end is closed. */
void control_started(struct control *c);
/* A descriptor to poll; control_dispatch when readable. */
int control_fd(const struct control *c);
int control_dispatch(void *ctx);
/* Closes every connection and removes the socket. */
void control_close(struct control *c);

/* The client side: runs argv in the sandbox listening on path, with fds
 * as its standard input, output and error, passing on SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT sent to the caller. The socket must be held by
 * process supervisor (the sandbox's record says which): a socket put in
 * its place gets neither the command nor the descriptors. Returns the
 * command's exit status (128+N for signal N), or -1 with err set. */
int control_exec(const char *path, pid_t supervisor, char *const *argv, const int fds[3],
		 struct error *err);
