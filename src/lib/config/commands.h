/* The `commands` setting: which commands are wrapped and how. A table of
 * name -> kind, merged by key across layers (the later layer wins), with
 * the origin of every entry for --debug and `policy`. */
#pragma once

#include <stddef.h>

#include "base/error.h"
#include "policy/rule.h"

enum command_kind {
	COMMAND_RAW,	 /* true: the real program, unwrapped */
	COMMAND_BLOCKED, /* false: refused with a message */
	COMMAND_GIT,	 /* "@git": the built-in git guard */
	COMMAND_SCRIPT,	 /* a wrapper script */
};

struct command_setting {
	char *name;
	enum command_kind kind;
	char *script; /* as written, for COMMAND_SCRIPT */
	enum layer layer;
	char *origin; /* "<file>:L:C", "--cmd", "default" */
};

struct command_table {
	struct command_setting *items;
	size_t len;
	size_t alloc;
};

#define COMMAND_TABLE_INIT                                                                         \
	{                                                                                          \
		.items = NULL, .len = 0, .alloc = 0                                                \
	}

/* Checks that a name can be a command: a plain file name, not our own. */
int command_name_validate(const char *name, struct error *err);

/* Parses a value as written in --cmd: true, false, @git or a script path. */
int command_kind_parse(const char *value, enum command_kind *kind, struct error *err);

/* Sets name's entry, replacing an earlier one. */
void command_table_set(struct command_table *t, const char *name, enum command_kind kind,
		       const char *script, enum layer layer, const char *origin);

/* Parses one --cmd value: NAME=VALUE[,NAME=VALUE...]. */
int command_table_parse_flag(struct command_table *t, const char *spec, struct error *err);

const char *command_kind_name(enum command_kind kind);

void command_table_release(struct command_table *t);
