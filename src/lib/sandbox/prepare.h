/* What a run changes on the host around its plan, and nothing else does:
 * `policy` and --dry-run leave the host as it is. */
#pragma once

#include "base/error.h"
#include "spec/spec.h"

/* Before the last plan: the audit log's directory (or the trust store's,
 * when the log is off) exists, so that it can be hidden inside; the
 * directories agent sessions source from exist, so that they are mounted
 * read-only. Returns 1 when it made something the plan must see (plan
 * again: once, on the first run that needs them), 0 when not, -1 with err
 * set. */
int sandbox_prepare_host(const struct sandbox_spec *s, struct error *err);

/* Removes an approval the trust rule found stale (the file changed, was
 * replaced or is gone), so that the same bytes written again need a new
 * approval. */
int sandbox_withdraw_stale_trust(struct sandbox_spec *s, struct error *err);

/* Last, once the run is sure to start: Claude Code's own copy of its
 * global config. What cannot be made costs Claude Code its onboarding
 * state, not the run; --debug says why. */
void sandbox_seed_agents(const struct sandbox_spec *s);
