/* libagent-sandbox: the one header a front end needs.
 *
 *   sandbox_plan()     request -> spec: every decision, pure (spec/spec.h)
 *   sandbox_prepare_host(), sandbox_withdraw_stale_trust(),
 *   sandbox_seed_agents()
 *                      the host writes a run makes around its plan
 *                      (sandbox/prepare.h)
 *   sandbox_render()   spec -> bwrap arguments, for --dry-run
 *   sandbox_launch()   spec -> a running sandbox and its exit status
 *                      (sandbox/launch.h)
 *
 * Errors are values with a kind (base/error.h); the library prints
 * nothing: --debug lines and notes reach the handler installed with
 * output_set_handler() (base/output.h). */
#pragma once

#include "base/error.h"
#include "base/output.h"
#include "sandbox/launch.h"
#include "sandbox/prepare.h"
#include "spec/spec.h"
