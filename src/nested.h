/* A sandbox inside a sandbox. The inner agent-sandbox creates no
 * namespaces and no mounts (the outer seccomp filter refuses both): it
 * rides on the outer sandbox, refuses what would loosen it, applies what
 * tightens it through Landlock and seccomp, and execs the command. */
#pragma once

#include "cli.h"
#include "error.h"
#include "layers.h"
#include "report.h"
#include "session.h"

/* Returns only on error (or after --dry-run, with 0): on success the
 * process has become the command. */
int nested_run(struct session *s, const struct cli *cli, const struct layers *layers, int out,
	       const struct debug *dbg, struct error *err);
