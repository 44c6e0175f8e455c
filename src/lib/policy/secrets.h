/* Secret files: the default patterns merged with the configured ones, the
 * scan of the working directory, and the exclude rules that mask what it
 * found. The scan result is kept for `policy`, --debug and the audit log. */
#pragma once

#include "config/config.h"
#include "base/error.h"
#include "policy/rule.h"
#include "policy/secret_scan.h"

struct secrets {
	struct pattern_set patterns, allow, skip;
	struct secret_scan_result found;
	char *cwd; /* the root scanned */
	double scan_ms;
	bool skipped_root; /* not scanned: the working directory is / */
	/* The scan cache: its file (NULL: none is used), why the one there
	 * was not used (NULL: it was), and what this scan would write. */
	char *cache_path;
	char *cache_unused;
	struct scan_cache_builder cache_next;
};

/* Scans cwd with the defaults and cfg's additions. With cache_dir, reads
 * the scan cache of cwd there (never writes it: see secrets_save_cache). */
int secrets_scan(struct secrets *s, const struct config *cfg, const char *cwd,
		 const char *cache_dir, struct error *err);

/* Writes the cache of the scan s made, when it differs from the one read.
 * Returns 1 when written, 0 when there was nothing to write, -1 on error. */
int secrets_save_cache(const struct secrets *s, struct error *err);

/* True when the secret scan, configured by cfg, would mask the file at rel
 * (relative to the working directory): the trust rule asks whether a
 * project's secrets.allow unmasks one. */
bool secrets_would_mask(const struct config *cfg, const char *rel);

/* One exclude rule per masked path, at the presets' layer, and a mount
 * point on each directory on the way to it and to each of sockets (the
 * host's, masked one by one) in the project (see secrets.c). */
void secrets_add_rules(const struct secrets *s, const struct strv *sockets,
		       struct rule_list *rules);

void secrets_release(struct secrets *s);
