/* The vocabulary shared by config, presets and policy: access levels, the
 * layers a rule can come from, and the rules themselves. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/cleanup.h"

/* Ordered by strictness: on a tie, the stricter level wins. */
enum access_level {
	ACCESS_RW,
	ACCESS_RO,
	ACCESS_EXCLUDE,
};

/* Ordered by precedence: on a tie, the later layer wins. */
enum layer {
	LAYER_BUILTIN,
	LAYER_PRESET,
	LAYER_GLOBAL,
	LAYER_PROJECT,
	LAYER_CLI,
};

struct rule {
	char *pattern; /* as written: "~/.ssh", "src/auth", "/abs/path" */
	enum access_level level;
	enum layer layer;
	char *origin; /* who asked: "@base", "<file>:4:12", "--rw" */
	/* Never looser than what covers the path: a protection that must
	 * not open a read-only or hidden tree. An rw rule of this kind is a
	 * mount point only (a pin): it keeps a directory from being renamed
	 * away, with the protected paths beneath it, and takes the level of
	 * what covers it. */
	bool tighten_only;
	/* A file that git rewrites by renaming a new one over it (a
	 * submodule's config), which a read-only mount would refuse: it is
	 * not mounted at all, and the guard keeps its bytes instead (see
	 * guard.h). */
	bool pinned;
	/* An agent's state directory (agent_profile.h): an rw rule of this
	 * kind stays rw in read-only mode, unless the mode is strict. */
	bool agent_state;
};

struct rule_list {
	struct rule *items;
	size_t len;
	size_t alloc;
};

#define RULE_LIST_INIT                                                                             \
	{                                                                                          \
		.items = NULL, .len = 0, .alloc = 0                                                \
	}

void rule_list_add(struct rule_list *list, const char *pattern, enum access_level level,
		   enum layer layer, const char *origin);
/* Adds a ro rule whose file the guard pins instead of a mount. */
void rule_list_add_pinned(struct rule_list *list, const char *pattern, enum layer layer,
			  const char *origin);
/* Adds an rw rule for an agent's state directory (see struct rule). */
void rule_list_add_agent_state(struct rule_list *list, const char *pattern, enum layer layer,
			       const char *origin);
/* Adds a rule that only tightens (see struct rule). */
void rule_list_add_tightening(struct rule_list *list, const char *pattern, enum access_level level,
			      enum layer layer, const char *origin);
void rule_list_release(struct rule_list *list);

const char *access_level_name(enum access_level level);
const char *layer_name(enum layer layer);

DEFINE_CLEANUP_FUNC(struct rule_list, rule_list_release)
#define _cleanup_rule_list_ _cleanup_(rule_list_releasep)
