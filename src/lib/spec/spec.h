/* The request a front end makes and the spec the library plans from it.
 *
 * A front end (the command line, the daemon) fills a plain
 * sandbox_request: where, with which environment, which config files and
 * which settings of its own, and what to run. sandbox_plan turns it into a
 * sandbox_spec: every decision about the sandbox, backend-neutral, each
 * with where it came from. Planning reads (config files, stat, readlink,
 * the secret scan) but creates nothing, opens no log and starts nothing;
 * `policy`, --dry-run, doctor, the trust rule and every backend consume the
 * same spec. */
#pragma once

#include <stdbool.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/strv.h"
#include "config/commands.h"
#include "config/config.h"
#include "net/credential.h"
#include "policy/agent_profile.h"
#include "policy/env.h"
#include "policy/policy.h"
#include "policy/rule.h"
#include "policy/secrets.h"
#include "policy/trust.h"
#include "policy/wrappers.h"
#include "sandbox/hardening.h"

/* A setting the front end may leave to the config. */
enum request_setting {
	REQUEST_UNSET = -1,
	REQUEST_OFF = 0,
	REQUEST_ON = 1,
};

struct sandbox_request {
	const char *cwd;	 /* working directory; relative to the process's; NULL: that one */
	char *const *envp;	 /* the environment the command would inherit */
	const char *config_path; /* a config file instead of the project's, or NULL */
	/* Settings of the front end's own, the topmost config layer
	 * (LAYER_CLI); each origin says where it came from ("--ro"). */
	const struct rule_list *rules;	      /* may be NULL */
	const struct rule_list *sockets;      /* --socket; may be NULL */
	const struct command_table *commands; /* may be NULL */
	enum request_setting network;	      /* ON: host network, OFF: none */
	const struct strv *allow_hosts;	      /* asks for the filtered network; may be NULL */
	enum request_setting docker;
	enum request_setting read_only;
	const struct strv *env_allow;	/* name globs always passed; may be NULL */
	const struct strv *env_set;	/* NAME=VALUE, winning over env.set; may be NULL */
	const struct strv *env_block;	/* name globs always dropped; may be NULL */
	const struct strv *credentials; /* credential names turned on; may be NULL */
	const struct strv *localhost;	/* ports as text, like network.localhost; may be NULL */
	const struct strv *resolve;	/* NAME=ADDR[:PORT], like network.resolve; may be NULL */
	bool allow_degraded;		/* go on without layers the kernel lacks */
	char *const *command;		/* argv of what runs inside; may be empty */
	bool read_only_strict;		/* read-only leaves agents' state read-only too */
	/* The agent profile: a name from agent_profile.h, "none" for no
	 * profile, or NULL to pick one by the command's basename. */
	const char *agent;
	/* Branch mode: the branch, and the host repository's top directory
	 * (cwd is then the branch's worktree in the shelf); NULL otherwise. */
	const char *branch;
	const char *branch_host_top;
	/* --memory, --cpus, --pids, --timeout, --tmp-size, checked; NULL:
	 * none. */
	const struct limit_request *limits;
	/* Host directories shown read-only at /run/agent-sandbox/NAME (the
	 * daemon's MCP sockets): names[i] for dirs[i]. May be NULL. */
	const struct strv *run_bind_dirs, *run_bind_names;
};

/* Resource limits for the sandbox, from the config's "limits" and the
 * flags (pids and tmp have defaults). Every backend reads them from
 * here. */
struct sandbox_limits {
	unsigned long long memory_bytes; /* 0: no limit */
	unsigned cpus_milli;		 /* 0: no limit */
	unsigned pids;			 /* 0: no limit */
	unsigned long long timeout_ms;	 /* 0: no limit */
	unsigned long long tmp_bytes;	 /* size of /tmp; 0: the backend's default */
};

/* A repository's config file whose URLs carry credentials: the sandbox
 * shows text instead, the same file without them. */
struct git_config_copy {
	char *path; /* resolved host path */
	char *text; /* what the sandbox shows there */
	size_t len;
	size_t removed; /* URLs that lost their credentials */
};

struct sandbox_spec {
	char *cwd; /* effective working directory, resolved */
	/* The user's project: the working directory, or in branch mode the
	 * host repository's top directory. Names and lists sandboxes. */
	char *project_dir;
	char *branch; /* branch mode: the branch; NULL otherwise */
	/* Branch mode: the host repository's objects directory, written by
	 * `git push host`, whose fan-out directories the command may not
	 * remove or rename (hardening_keep_dirs). */
	char *branch_host_objects;
	bool cwd_given;		    /* the request named it */
	char *home;		    /* NULL when unknown */
	char *global_dir;	    /* $XDG_CONFIG_HOME/agent-sandbox */
	char *docker_socket;	    /* where the Docker socket would be, or NULL */
	struct strv listed_sockets; /* host sockets let through (canonical paths) */
	struct strv host_sockets;   /* host sockets bound now, from /proc/net/unix */
	struct config cfg;	    /* every layer merged: network, env, commands, audit, ... */
	unsigned presets;
	char *presets_text;
	struct rule_list rules;		   /* built-in, preset and config rules together */
	struct policy policy;		   /* the access table */
	struct secrets secrets;		   /* secret files found under cwd, masked */
	struct secrets host_secrets;	   /* branch mode: those of the host checkout */
	struct env_result env;		   /* the command's environment, and what was dropped */
	struct credential_set credentials; /* injected by the proxy; never the keys */
	char *audit_dir;		   /* where the audit log lives (hidden inside), or NULL */
	bool audit;			   /* a run of this spec writes the audit log */
	bool nested;			   /* inside a sandbox already */
	struct wrapper_plan wrappers;
	struct trust_check trust;      /* may the project config apply? */
	struct hardening hardening;    /* seccomp and Landlock, as the kernel allows */
	bool allow_degraded;	       /* a run may go without layers the kernel lacks */
	const char *claude_config_dir; /* the host's CLAUDE_CONFIG_DIR (in envp), or NULL */
	bool seed_claude;	       /* Claude Code inside uses ~/.claude/.claude.json */
	bool agent_dirs_missing;       /* a run makes directories the policy then mounts */
	/* The agent profile applied (agent_profile.h), or NULL. */
	const struct agent_profile *profile;
	const char *profile_reason;   /* "the command's name" or "--agent" */
	bool profile_state;	      /* its state rules apply (@agents is on) */
	struct strv profile_missing;  /* its state directories a run creates ("~/...") */
	struct strv profile_env;      /* NAME=VALUE it set */
	struct strv profile_env_lost; /* NAME it would set, which env.set or --env set */
	struct strv profile_dropped;  /* its key variables the secret filter dropped */
	/* "PORT NAME" for each variable inside (NAME_BASE_URL, ...) naming a
	 * host loopback port that the filtered network does not forward: the
	 * agent would retry against nothing. */
	struct strv unreached_loopback;
	bool read_only_strict;
	struct sandbox_limits limits;
	struct git_config_copy *git_config_copies;
	size_t git_config_copies_len;
	struct strv command; /* what runs inside */
	/* Host directories bound read-only at /run/agent-sandbox/NAME, by
	 * every backend: run_bind_names[i] for run_bind_dirs[i]. */
	struct strv run_bind_dirs, run_bind_names;
	char *const *envp; /* the request's environment (not owned) */
};

/* Pure: reads, never writes. On error, *spec is released. */
int sandbox_plan(const struct sandbox_request *req, struct sandbox_spec *spec, struct error *err);
void sandbox_spec_release(struct sandbox_spec *spec);

DEFINE_CLEANUP_FUNC(struct sandbox_spec, sandbox_spec_release)
#define _cleanup_sandbox_spec_ _cleanup_(sandbox_spec_releasep)

/* Whether a run of this spec must stop on the trust rule: the project
 * config loosens and its content was never approved (or has changed, or
 * the file was replaced). */
bool sandbox_spec_trust_refused(const struct sandbox_spec *spec);

/* Where the command's program is on the host when the sandbox does not
 * show that place, and why: the init then says "command not found", and
 * the front end can say what would show it. */
struct hidden_command {
	char *host_path;  /* the program (symlinks resolved when that is what is hidden) */
	char *hidden_by;  /* the private mount (/tmp, /run, /dev) or the excluded path */
	const char *rule; /* the excluding rule's origin; NULL for a private mount */
	bool ro_shows_it; /* --ro of the program's directory would show it */
};

/* Looks the name up in the command's PATH, as the init does. Returns
 * false when the program is not on the host or is visible inside. */
bool sandbox_spec_hidden_command(const struct sandbox_spec *spec, struct hidden_command *out);
void hidden_command_release(struct hidden_command *h);

/* What the agent profile does in this spec, for `policy` and --debug: one
 * "agent profile ..." line and indented lines under it, text of the
 * built-in table only. */
void sandbox_spec_describe_profile(const struct sandbox_spec *spec, struct strbuf *sb);
