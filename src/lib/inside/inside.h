/* Where agent-sandbox lives inside a sandbox, and how a process tells that
 * it runs inside one. */
#pragma once

#include <stdbool.h>

#define SANDBOX_DIR "/run/agent-sandbox"
/* The agent-sandbox binary, bind-mounted read-only. Its mount is the mark of
 * the sandbox: nothing inside can create, remove or replace a mount. */
#define SANDBOX_SELF SANDBOX_DIR "/agent-sandbox"
/* Where the sources of the init's binds are staged (mount_plan_stage): the
 * masked files' stand-ins and the empty file. Covered with an empty
 * tmpfs before the command starts. */
#define SANDBOX_STAGE_DIR SANDBOX_DIR "/staging"
#define SANDBOX_STAGE_STAND_INS SANDBOX_STAGE_DIR "/stand-ins"
#define SANDBOX_STAGE_EMPTY SANDBOX_STAGE_DIR "/empty"
/* The hidden first argument that makes the binary the sandbox's init. */
#define SANDBOX_INIT_ARG "--sandbox-init"

/* True when SANDBOX_SELF exists and is a mount point. */
bool inside_sandbox(void);
