/* The policy: rules in, a sorted access table out. This is where "most
 * specific path wins" is decided; policy, --dry-run and the tests all go
 * through policy_resolve, and nothing here runs a process. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/file_id.h"
#include "policy/rule.h"

/* The sandbox's fixed layout, in mount order, before any rule applies. */
enum base_mount_kind {
	BASE_HOST_ROOT, /* the host's / read-only */
	BASE_DEV,	/* a fresh minimal /dev */
	BASE_PROC,	/* a fresh /proc for the sandbox's own processes */
	BASE_TMPFS,	/* a private, empty, writable tmpfs */
};

struct base_mount {
	const char *path;
	enum base_mount_kind kind;
	const char *description;
};

extern const struct base_mount policy_base_mounts[];
extern const size_t policy_base_mounts_len;

struct access_entry {
	char *path; /* resolved host path: no symlinks, no globs */
	enum access_level level;
	const struct rule *rule; /* the rule that decided it */
	bool is_dir;
	bool from_glob;
	bool downgraded; /* rw turned ro by read-only mode */
	bool kept_rw;	 /* an agent's state, left rw by read-only mode */
	/* What the path named when it was resolved: the mount made from it
	 * must show this object, not whatever the path names by then. */
	struct file_id id;
};

/* A rule that did not make it into the table, or lost to another one. */
struct policy_note {
	char *path;
	const struct rule *rule;
	char *reason;
};

/* A rule for a path that does not exist. Nothing is mounted for it (bwrap
 * would create the path on the host); the guard enforces ro and exclude
 * ones should the path appear while the sandbox runs. */
struct absent_entry {
	char *path; /* where it would appear: its existing ancestors resolved */
	enum access_level level;
	const struct rule *rule;
	size_t order;
};

/* A rule whose last segment is a glob: names that appear in dir later and
 * match it fall under the rule too. */
struct glob_watch {
	char *source;  /* the directory as the rule names it */
	char *dir;     /* resolved (or where it would appear) */
	char *segment; /* the glob, as pattern_match_segment takes it */
	const struct rule *rule;
	size_t order;
};

/* A file whose rule is pinned (see struct rule): not mounted; the guard
 * keeps its bytes. */
struct pinned_entry {
	char *path;
	const struct rule *rule;
};

struct policy {
	struct access_entry *entries; /* sorted: every directory before its contents */
	size_t len;
	struct pinned_entry *pinned;
	size_t pinned_len;
	struct absent_entry *absent; /* sorted by path, one per path */
	size_t absent_len;
	struct glob_watch *globs;
	size_t globs_len;
	struct policy_note *skipped;
	size_t skipped_len;
	struct policy_note *overridden;
	size_t overridden_len;
};

struct policy_input {
	const struct rule_list *rules;
	const char *cwd;  /* resolved */
	const char *home; /* NULL when unknown */
	bool read_only;	  /* nothing writable but private temp dirs */
	/* With read_only: agents' state directories too (otherwise they stay
	 * writable: state is not the project). */
	bool read_only_strict;
};

int policy_resolve(const struct policy_input *in, struct policy *out, struct error *err);

/* The entry that decides access at a resolved path (the deepest one that
 * covers it), or NULL when only the base layout applies. */
const struct access_entry *policy_entry_for(const struct policy *p, const char *path);

/* The rule that decides a path appearing after the policy was made, the
 * way policy_resolve would have decided it had it existed: exact rules
 * (absent entries) beat globs, then the later layer, then the stricter
 * level. False when no rule names the path itself (it inherits from the
 * entry that covers its directory). */
bool policy_rule_for_new(const struct policy *p, const char *path, const struct rule **rule);

/* The base mount that covers a path when no entry does. */
const struct base_mount *policy_base_for(const char *path);

/* Whether the sandbox shows the host's object at path, given covering, the
 * deepest entry at or above it (NULL: none): under a bind of a host
 * directory or the host root, not under a fresh tmpfs (/tmp, /run, /dev,
 * /proc) or a masked path. */
bool policy_shows_host_path(const struct access_entry *covering, const char *path);

void policy_release(struct policy *p);

DEFINE_CLEANUP_FUNC(struct policy, policy_release)
#define _cleanup_policy_ _cleanup_(policy_releasep)
