/* The vocabulary shared by config, presets and policy: access levels, the
 * layers a rule can come from, and the rules themselves. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

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
	/* A mount point only: the path gets the level of what covers it,
	 * so that it cannot be renamed away (taking the protected paths
	 * beneath it along) without being made any more writable. */
	bool pin;
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
/* Adds a pin rule (see struct rule) for a literal pattern. */
void rule_list_add_pin(struct rule_list *list, const char *pattern, enum layer layer,
		       const char *origin);
void rule_list_release(struct rule_list *list);

const char *access_level_name(enum access_level level);
const char *layer_name(enum layer layer);

static inline void cleanup_rule_listp(struct rule_list *list)
{
	rule_list_release(list);
}
#define _cleanup_rule_list_ __attribute__((cleanup(cleanup_rule_listp)))
