/* Reads of masked files, reported: every masked file is bound from its own
 * empty stand-in in a private directory of the run, and one inotify watch
 * on that directory sees each open made through the mounts inside the
 * sandbox (bwrap's binds and the init's O_PATH checks open nothing). The
 * watch only reports; the masking never depends on it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "audit/writer.h"
#include "base/error.h"
#include "base/strv.h"
#include "policy/policy.h"
#include "policy/secret_scan.h"
#include "sandbox/bwrap.h"

/* Set (to anything) in the environment of agent-sandbox, this turns the
 * watch off while keeping the stand-ins: only for bench/secret-watch, which
 * measures what the watch costs at start-up. */
#define SECRET_WATCH_BENCH_OFF_ENV "AGENT_SANDBOX_BENCH_NO_SECRET_WATCH"

/* Records per run: one per path per second at most, and this many in all. */
#define SECRET_WATCH_RECORDS_MAX 200

struct secret_watch;

/* One stand-in per masked file of the policy (exclude entries that are not
 * directories), in policy order, made in a new private directory of the runtime
 * directory (rundir.c); a dry run only names them. found is the secret
 * scan's result, for the pattern that masked each file. */
int secret_watch_prepare(struct secret_watch **out, const struct policy *policy,
			 const struct secret_scan_result *found, const char *xdg_runtime_dir,
			 bool dry_run, struct error *err);

/* The stand-ins, for bwrap_input: dest is the masked path. */
const struct bwrap_copy *secret_watch_stand_ins(const struct secret_watch *w, size_t *len);

/* The private directory that holds the stand-ins, or NULL with none. */
const char *secret_watch_dir(const struct secret_watch *w);

/* Starts watching, before bwrap starts. A watch that cannot be had (no
 * inotify instance left, say) leaves reporting off and the run going on:
 * --debug and the audit log say so. Returns the descriptor to poll, or -1
 * when nothing is watched. */
int secret_watch_arm(struct secret_watch *w, struct audit *audit, bool disabled);

/* Reads the events that are there (for the supervisor's loop); always 0. */
int secret_watch_dispatch(void *w);

/* After the sandbox has ended: takes the last events and writes the
 * records still owed. */
void secret_watch_finish(struct secret_watch *w);

/* The masked paths the command opened, in the order first seen; the strv
 * is the caller's. */
void secret_watch_take_reads(struct secret_watch *w, struct strv *out);

/* Removes the stand-ins and their directory, and frees w (NULL is fine). */
void secret_watch_free(struct secret_watch *w);
