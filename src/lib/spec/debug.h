/* --debug descriptions of each stage of a plan and of a launch. */
#pragma once

#include "base/strv.h"
#include "config/commands.h"
#include "policy/env.h"
#include "policy/policy.h"
#include "policy/secrets.h"
#include "policy/wrappers.h"
#include "sandbox/guard.h"

/* Skipped and overridden rules, and the access table. */
void debug_policy_notes(const struct policy *policy);
/* The bwrap command on one line, shell-quoted. */
void debug_bwrap_args(const struct strv *args);
/* What the secret scan looked at and what it masked, by pattern. */
void debug_secrets(const struct secrets *secrets);
/* Which variables were dropped and why, and which were set (names only,
 * never values). */
void debug_env(const struct env_result *env);
/* Each wrapper, what it covers and what was skipped. */
void debug_wrappers(const struct command_table *commands, const struct wrapper_plan *p);
/* Every path the guard holds, with its rule. */
void debug_guard(const struct guard_plan *plan);
