/* Running sandboxes by name: one record per run in the runtime directory,
 * read back by `list` and `stop`. A record is only ever a hint: before a
 * signal goes anywhere, the process it names is checked to be a live
 * agent-sandbox supervisor of ours. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/strv.h"
#include "spec/spec.h"

#define INSTANCE_NAME_MAX 64

/* What a record says about one running sandbox. */
struct instance {
	char *name;
	pid_t pid;		      /* the supervising agent-sandbox process */
	unsigned long long pid_start; /* its start time, clock ticks after boot */
	long long started;	      /* wall clock, seconds since the epoch */
	char *project;
	char *branch; /* NULL outside branch mode */
	char *workdir;
	struct strv command;
	char *network; /* "host", "none" or "filtered" */
	char *policy_digest;
	struct sandbox_limits limits;
	char *control_socket;
};

void instance_release(struct instance *in);

struct instance_list {
	struct instance *items;
	size_t len;
};

void instance_list_release(struct instance_list *l);

DEFINE_CLEANUP_FUNC(struct instance_list, instance_list_release)
#define _cleanup_instance_list_ _cleanup_(instance_list_releasep)

/* A name a user may give: [A-Za-z0-9][A-Za-z0-9_.-]{0,63} without "..";
 * ERROR_USAGE naming the expected form otherwise. */
int instance_check_name(const char *name, struct error *err);

/* The name a run gets without --name (before it is made unique): the
 * project directory's name, "-" and the branch in branch mode, each
 * character a name may not hold turned into '-'. */
char *instance_default_name(const char *project_dir, const char *branch);

/* A record's text (one JSON object and a newline), and back. Parsing
 * accepts what instance_record_text writes and refuses a text without a
 * name or a pid; *in is to be released either way. */
char *instance_record_text(const struct instance *in);
bool instance_parse_record(const char *text, struct instance *in);

/* The record of this run while it is held; instance_unregister removes it. */
struct instance_claim {
	char *name;
	char *record;	      /* <dir>/<name>.json, NULL when nothing is held */
	char *control_socket; /* <dir>/<name>.sock */
};

#define INSTANCE_CLAIM_INIT                                                                        \
	{                                                                                          \
		.name = NULL, .record = NULL, .control_socket = NULL                               \
	}

/* Writes the record of a sandbox about to run under name, or under the
 * default name (the project's directory name, "-" and the branch in branch
 * mode) made unique with "-2", "-3", ... when name is NULL. The name is
 * claimed atomically: a given name in use is ERROR_USAGE. */
int instance_register(const struct sandbox_spec *spec, char *const *envp, const char *name,
		      struct instance_claim *out, struct error *err);

/* Removes the record and the control socket; safe to call twice. */
void instance_unregister(struct instance_claim *c);

DEFINE_CLEANUP_FUNC(struct instance_claim, instance_unregister)
#define _cleanup_instance_claim_ _cleanup_(instance_unregisterp)

/* The running sandboxes of this user, by name. Records whose supervisor is
 * gone (or whose pid now belongs to another process) are removed. */
int instance_list(char *const *envp, struct instance_list *out, struct error *err);

/* l as `list --json` prints it: an array of {"name", "pid", "project",
 * "branch", "workdir", "command", "network", "started" (ISO-8601 UTC),
 * "limits", "policy_digest"}, on one line. */
void instance_list_json(const struct instance_list *l, struct strbuf *sb);

/* The record named name in l, or NULL. */
const struct instance *instance_find(const struct instance_list *l, const char *name);

enum instance_stop_outcome {
	INSTANCE_STOPPED, /* ended within the grace period */
	INSTANCE_KILLED,  /* needed SANDBOX_KILL_SIGNAL */
	INSTANCE_GONE,	  /* had already ended */
};

/* Stopping a running sandbox, in two steps so that many stop at once.
 * instance_stop_begin sends SANDBOX_TERMINATE_SIGNAL to its supervisor
 * (the init then sends SIGTERM to every process of the sandbox), but only
 * when the record's pid is, right now, an agent-sandbox supervisor of this
 * user started when the record says (ERROR_DENIED otherwise, nothing
 * signalled). instance_stop_finish waits for the supervisor to exit until
 * deadline (CLOCK_MONOTONIC), then sends SANDBOX_KILL_SIGNAL (the whole
 * pid namespace dies) and waits again. */
struct instance_stopping {
	const struct instance *in;
	int pidfd; /* -1 once there is nothing to wait for */
	enum instance_stop_outcome outcome;
};

int instance_stop_begin(const struct instance *in, struct instance_stopping *st, struct error *err);
int instance_stop_finish(struct instance_stopping *st, const struct timespec *deadline,
			 struct error *err);
