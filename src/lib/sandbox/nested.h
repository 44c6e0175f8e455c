/* A sandbox inside a sandbox. The inner agent-sandbox creates no
 * namespaces and no mounts (the outer seccomp filter refuses both): it
 * rides on the outer sandbox, refuses what would loosen it, applies what
 * tightens it through Landlock and seccomp, and execs the command. */
#pragma once

#include "cli/flags.h"
#include "base/error.h"
#include "sandbox/hardening.h"
#include "cli/report.h"
#include "spec/plan.h"

/* Returns only on error (or after --dry-run, with 0): on success the
 * process has become the command. */
int nested_run(struct session *s, const struct cli *cli, const struct layers *layers, int out,
	       const struct debug *dbg, struct error *err);
