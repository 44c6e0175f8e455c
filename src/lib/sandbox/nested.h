/* A sandbox inside a sandbox. The inner agent-sandbox creates no
 * namespaces and no mounts (the outer seccomp filter refuses both): it
 * rides on the outer sandbox, refuses what would loosen it, applies what
 * tightens it through Landlock and seccomp, and execs the command. */
#pragma once

#include "base/error.h"
#include "base/strv.h"
#include "spec/spec.h"

/* Checks the spec against the outer sandbox and lists the paths that stay
 * writable, as --dry-run shows them; a refusal is an error. */
int nested_render(const struct sandbox_spec *s, struct strv *writable, struct error *err);

/* Returns only on error: on success the process has become the command. */
int nested_run(const struct sandbox_spec *s, struct error *err);
