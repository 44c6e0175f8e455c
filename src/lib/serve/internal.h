/* What server.c, session.c and process.c share: the daemon's state. Not a
 * public interface. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "audit/writer.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "serve/ring.h"
#include "serve/rpc.h"
#include "serve/server.h"
#include "spec/spec.h"

struct server;

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Everything in the epoll set: ready() is called with the events. */
struct watch {
	void (*ready)(struct server *srv, struct watch *w, uint32_t events);
	int fd;
};

/* Bytes queued for a client beyond which the processes streaming to it
 * stop being read (their pipes fill and they wait), and below which they
 * are read again. */
#define CONN_OUT_HIGH (4u << 20)
#define CONN_OUT_LOW (1u << 20)
/* Requests of one connection waiting for their answer. */
#define CONN_PENDING_MAX 64
/* Connections at once. */
#define SERVE_CONNS_MAX 1024
/* Processes of one session at once (the init's limit). */
#define SESSION_PROCESSES_MAX 64
/* What process/exec collects of each stream by default (its answer is
 * one line, base64 makes it a third larger). */
#define EXEC_OUTPUT_DEFAULT (4u << 20)
/* The most process/exec collects at all, so that its answer (base64) stays
 * well within one line (SERVE_LINE_MAX) and the daemon's memory bounded:
 * more output is for process/start, which streams it. */
#define EXEC_OUTPUT_MAX (8u << 20)

struct outbuf {
	char *data;
	size_t len, off;
	struct outbuf *next;
};

struct conn {
	uint64_t id;
	struct watch in, out; /* the same descriptor but for --stdio */
	uid_t uid;
	pid_t pid;
	char *owner;  /* set by initialize */
	bool trusted; /* root or our uid: may name an owner, loosen policies */
	bool initialized;
	bool eof;	    /* no more requests: closed once its answers are out */
	bool skipping;	    /* discarding an oversize line up to its newline */
	bool in_paused;	    /* not read while its answers pile up */
	bool lines_waiting; /* complete lines in inbuf not handled yet */
	struct strbuf inbuf;
	struct outbuf *head, *tail;
	size_t out_bytes;
	unsigned pending;
	bool dead; /* freed after the events at hand */
	struct conn *next;
};

/* An answer owed: to a request of a connection (which may be gone). */
struct pending {
	uint64_t conn;
	struct json_object *id;
	struct pending *next;
};

enum session_state {
	SESSION_STARTING,
	SESSION_READY,
	SESSION_CLOSING,
	SESSION_CLOSED,
	SESSION_EXPIRED
};

struct process;
struct agent_run;

struct session {
	char id[17];
	char *owner, *user, *chat;
	enum session_state state;
	bool planned;
	struct sandbox_spec spec;
	char *workspace; /* host path; the sandbox sees it at the same path */
	int workspace_fd;
	char *policy_file;
	pid_t supervisor;
	struct watch child; /* pidfd of the supervising child */
	struct watch ready; /* its ready pipe */
	struct strbuf ready_text;
	bool ready_seen;
	char *control_socket;
	time_t created_at, last_used_at;
	uint64_t last_used_ms; /* monotonic, for the idle timeout */
	unsigned idle_timeout_s;
	bool delete_on_expire;
	bool delete_workspace; /* session/close asked for it */
	pid_t remover;	       /* the child removing the workspace, while it does */
	struct watch removal;  /* its pidfd */
	char *ended_reason;    /* why it closed, for the log and errors */
	struct pending *waiting_create, *waiting_close;
	struct process *processes;
	struct agent_run *run; /* the agent/run in progress, or NULL */
	/* session/create's hooks (argv lists) and skills directory. */
	struct strv *hooks_before, *hooks_after;
	size_t hooks_before_len, hooks_after_len;
	char *skills_dir;
	char *agent_command[2];	 /* the policy's agents.NAME.command, or NULL */
	struct mcp_session *mcp; /* its mcpServers (serve/mcp.h), or NULL */
	struct session *next;
};

enum stream { STREAM_STDOUT, STREAM_STDERR, STREAM_PTY };

/* Where an internal process's output and end go instead of a client's
 * notifications: the agent runner's hooks and agent CLIs. */
struct process_sink {
	void (*output)(struct server *srv, struct process *p, enum stream st, const char *buf,
		       size_t n);
	/* Once: err when it never started, NULL when it has finished (its
	 * status in p) and its output was read to the end. p is buried
	 * right after. */
	void (*done)(struct server *srv, struct process *p, const struct error *err);
};

/* An internal process: what it runs, and where its output goes. */
struct process_spawn {
	const struct strv *argv;
	const char *cwd;	/* NULL: the workspace */
	const struct strv *env; /* NAME=VALUE set for it; may be NULL */
	const char *tag;	/* shown by process/list */
	uint64_t timeout_ms;	/* 0: none */
	uint64_t conn;		/* dies with this connection; its output paused with it */
	const struct process_sink *sink;
	void *ctx;
};

struct process {
	char id[24];
	const struct process_sink *sink; /* NULL: a client's process */
	void *sink_ctx;
	struct session *session;
	struct strv argv;
	char *tag;
	uint64_t attached; /* the connection its notifications go to; 0: none */
	uint64_t started_by;
	bool detached, pty, exec;
	struct watch ctl;	   /* the control connection, while it runs */
	struct watch out, err;	   /* stdout/stderr pipes, or the pty's master (out) */
	struct watch in;	   /* stdin's write end, or the master again */
	struct strbuf stdin_queue; /* written when it reads */
	bool stdin_eof;		   /* close stdin once the queue is out */
	bool out_paused;
	pid_t pid_inside, pid_host;
	int pidfd;
	struct ring ring;
	uint64_t cap, delivered;
	bool cap_reached, cap_told;
	struct watch timer; /* the timeout, then the wait for the last output */
	bool timed_out;
	bool started, exited, finished;
	int raw_status; /* wait status, when exited */
	bool killed;	/* ended with the sandbox: no status came */
	uint64_t start_ms, end_ms;
	time_t started_at;
	struct pending *answer; /* process/start or process/exec, until answered */
	struct strbuf exec_out, exec_err;
	bool exec_truncated;
	struct process *next;
};

struct gc_job;
struct mcp_bridge;

struct server {
	const struct serve_options *o;
	int epfd;
	struct watch listen, signals, tick;
	/* Held to be given up when the descriptors run out: the one accept
	 * it frees tells a client so, rather than leave the listener
	 * ready forever (epoll would report it in a loop). */
	int spare_fd;
	bool accept_paused; /* no spare either: the tick listens again */
	struct conn *conns;
	size_t conns_len;
	/* Freed once the events at hand are handled: one of them may still
	 * name a watch of theirs. */
	struct conn *dead_conns;
	struct process *dead_processes;
	struct session *dead_sessions;
	struct mcp_bridge *mcp_dead; /* MCP bridges ended (serve/mcp.c) */
	uint64_t next_conn;
	struct session *sessions;
	size_t sessions_live;
	size_t removals;	/* workspaces being removed (a child each) */
	struct gc_job *gc_jobs; /* workspace/gc calls removing (session.c) */
	uint64_t next_process;
	uint64_t next_run;
	struct audit audit;
	uid_t uid;
	char *state_dir; /* policies of sessions live here */
	char *data_dir;	 /* workspaces/ under it */
	bool stopping;
	bool stdio;
};

uint64_t serve_now_ms(void);
/* RFC 3339, UTC, to the second. */
struct json_object *serve_time_json(time_t t);
/* epoll: add, change the events of, remove. */
int serve_watch(struct server *srv, struct watch *w, uint32_t events);
int serve_rewatch(struct server *srv, struct watch *w, uint32_t events);
void serve_unwatch(struct server *srv, struct watch *w);
void serve_close_watch(struct server *srv, struct watch *w);

struct conn *serve_conn(struct server *srv, uint64_t id);
/* Queue a line (taken) for a connection. */
void serve_send(struct server *srv, struct conn *c, char *line, size_t len);
void serve_notify(struct server *srv, uint64_t conn, const char *method,
		  struct json_object *params);
/* Answers a pending request (freed): result taken, or error when err. */
void serve_answer(struct server *srv, struct pending *p, struct json_object *result,
		  const struct error *err);
/* The same, with data's members added to an error's data (taken). */
void serve_answer_data(struct server *srv, struct pending *p, struct json_object *result,
		       const struct error *err, struct json_object *data);
struct pending *serve_pending(struct conn *c, struct json_object *id);
void serve_pending_free(struct pending *p);
/* A connection's paused readers may go on (its queue drained). */
void serve_conn_drained(struct server *srv, struct conn *c);

/* Method handlers: 0 with *result (answer now), 1 when the answer comes
 * later (pending taken), or -1 with err. */
typedef int serve_method(struct server *srv, struct conn *c, struct json_object *params,
			 struct pending **pending, struct json_object **result, struct error *err);

serve_method session_create, session_get, session_list, session_close, session_renew, workspace_gc;
serve_method process_start, process_exec, process_write, process_signal, process_resize,
    process_list, process_attach;
serve_method agent_run_method, agent_interrupt_method, skills_validate_method;
serve_method fs_read_method, fs_write_method, fs_list_method, fs_stat_method, fs_remove_method,
    fs_mkdir_method;

/* A session of the caller's owner, in a state that runs processes. */
struct session *session_find(struct server *srv, struct conn *c, const char *id, bool live,
			     struct error *err);
void session_touch(struct session *s);
/* Makes the directories of rel (relative) beneath the workspace, never
 * through a symlink planted there. */
int session_mkdirs(struct session *s, const char *rel, mode_t mode, struct error *err);
/* The session's sandbox has ended, or must: kill and forget processes. */
void session_end(struct server *srv, struct session *s, enum session_state state,
		 const char *reason);
void sessions_tick(struct server *srv);
/* The session's processes are gone: a run still waiting completes. */
void agent_run_session_ended(struct server *srv, struct session *s);
void sessions_shutdown(struct server *srv);
/* A process has finished: the session may answer a close. */
void session_process_gone(struct server *srv, struct session *s);

void process_conn_closed(struct server *srv, uint64_t conn);
/* Starts an internal process in s; its sink hears of it from then on. */
struct process *process_spawn(struct server *srv, struct session *s, const struct process_spawn *ps,
			      struct error *err);
/* Signals a running process (its group, through the init); -errno. */
int process_kill(struct process *p, int sig);
/* The sandbox is gone: every process ends now. */
void process_session_ended(struct server *srv, struct session *s);
void process_free(struct process *p);
void session_free(struct session *s);
/* Unlinks p from its session and closes its descriptors; freed later. */
void process_bury(struct server *srv, struct process *p);
bool serve_name_ok(const char *s);
void process_resume_for(struct server *srv, uint64_t conn);
