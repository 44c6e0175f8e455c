/* Command wrappers: from the `commands` table and the sandbox's PATH to
 * the mounts that put the launcher in place of every copy of a wrapped
 * command. Planned before the sandbox starts, like the policy, so that
 * `policy`, --dry-run and --debug show the same wrappers a run uses. */
#pragma once

#include <stdbool.h>

#include "config/commands.h"
#include "base/error.h"
#include "base/file_id.h"
#include "sandbox/mount_plan.h"
#include "policy/policy.h"
#include "base/strbuf.h"
#include "base/strv.h"

/* Where the launcher finds, by command name, what to do (see launcher.c).
 * A nested run makes the same layout in a directory of its own, named in
 * WRAPPER_NESTED_ENV, with its launchers in WRAPPER_NESTED_PATH_DIR. */
#define WRAPPER_BIN_DIR "/run/agent-sandbox/bin"	 /* the real programs */
#define WRAPPER_SCRIPT_DIR "/run/agent-sandbox/wrappers" /* wrapper scripts */
#define WRAPPER_PRESET_DIR "/run/agent-sandbox/presets"	 /* markers: "use @git" */
#define WRAPPER_BLOCKED_DIR "/run/agent-sandbox/blocked" /* markers: "refuse" */
/* For @git: a symlink NAME -> "=VALUE" for each variable that chooses
 * git's config files and is set when the sandbox starts. */
#define WRAPPER_START_ENV_DIR "/run/agent-sandbox/git-env"
#define WRAPPER_BASE_DIR "/run/agent-sandbox"
#define WRAPPER_BIN_NAME "bin"
#define WRAPPER_SCRIPT_NAME "wrappers"
#define WRAPPER_PRESET_NAME "presets"
#define WRAPPER_BLOCKED_NAME "blocked"
#define WRAPPER_START_ENV_NAME "git-env"
#define WRAPPER_NESTED_PATH_DIR "path"
/* The nested runs' wrapper directories, innermost first, ':'-separated. */
#define WRAPPER_NESTED_ENV "AGENT_SANDBOX_NESTED_WRAPPERS"

struct wrapper {
	const struct command_setting *setting;
	char *script; /* resolved host path, for COMMAND_SCRIPT */
	char *real;   /* resolved host path of the program PATH finds first, or NULL */
	struct file_id script_id, real_id; /* what those paths named when resolved */
	struct strv targets;		   /* resolved host paths the launcher covers */
	struct strv skipped;		   /* "<path>: <why>" for --debug */
	bool first_on_path; /* a nested run's script or @git: a launcher first on PATH */
};

struct wrapper_plan {
	struct wrapper *items;
	size_t len;
	/* Inside a sandbox: the outer sandbox's wrappers and its
	 * /run/agent-sandbox stay as they are, and none are mounted; the
	 * items are the blocked commands (with their targets, to deny) and
	 * the scripts and @git settings of the inner run's own layers. */
	bool inherited;
	struct strv start_env; /* NAME=VALUE of git_guard_config_env, for @git */
};

struct wrapper_input {
	const struct command_table *commands;
	const char *path_env; /* the sandbox's PATH */
	const char *cwd;      /* resolved; for relative script paths */
	const char *home;     /* for ~ in script paths; NULL when unknown */
	const struct policy *policy;
	char *const *envp; /* the sandbox's environment at start */
	bool nested;	   /* this run is inside a sandbox already */
};

int wrapper_plan_build(const struct wrapper_input *in, struct wrapper_plan *out, struct error *err);

/* Appends the mounts, after the access table's (so that no rule's mount
 * covers a launcher). self is the launcher, empty the marker. */
void wrapper_plan_render(const struct wrapper_plan *p, const struct host_file *self,
			 const struct host_file *empty, struct mount_sink *out);

void wrapper_plan_release(struct wrapper_plan *p);

/* What a plan says about a sandbox inside a sandbox: it mounts no
 * launchers; a blocked command's programs are denied executing. */
#define WRAPPERS_INHERITED_NOTE                                                                    \
	"inherited from the outer sandbox (a sandbox inside a sandbox keeps the outer wrappers; "  \
	"it blocks a command by denying its programs execution and reading, through Landlock, "    \
	"and puts its own scripts and @git first on PATH)"

/* One line: the setting, where it came from and what it covers. */
void wrapper_describe(struct strbuf *sb, const struct wrapper *w);
