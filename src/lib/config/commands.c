/* This file holds the `commands` table and the syntax of its values. It
 * does not look at the filesystem: scripts are found and checked when the
 * wrappers are planned. */
#include "config/commands.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/xalloc.h"

int command_name_validate(const char *name, struct error *err)
{
	if (!*name)
		return error_set(err, ERROR_CONFIG, "a command name must not be empty");
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return error_set(err, ERROR_CONFIG,
				 "\"%s\" is not a command name (wrappers cover a name on PATH, "
				 "not a path)",
				 name);
	/* The launcher tells itself from a wrapped command by this name. */
	if (!strcmp(name, "agent-sandbox"))
		return error_set(err, ERROR_CONFIG, "agent-sandbox itself cannot be wrapped");
	return 0;
}

int command_kind_parse(const char *value, enum command_kind *kind, struct error *err)
{
	if (!strcmp(value, "true"))
		*kind = COMMAND_RAW;
	else if (!strcmp(value, "false"))
		*kind = COMMAND_BLOCKED;
	else if (!strcmp(value, "@git"))
		*kind = COMMAND_GIT;
	else if (value[0] == '@')
		return error_set(err, ERROR_CONFIG,
				 "unknown command preset \"%s\" (known: \"@git\"; or give true, "
				 "false or a script path)",
				 value);
	else if (!*value)
		return error_set(
		    err, ERROR_CONFIG,
		    "an empty value (expected true, false, \"@git\" or a script path)");
	else
		*kind = COMMAND_SCRIPT;
	return 0;
}

void command_table_set(struct command_table *t, const char *name, enum command_kind kind,
		       const char *script, enum layer layer, const char *origin)
{
	struct command_setting *slot = NULL;
	for (size_t i = 0; i < t->len; i++)
		if (!strcmp(t->items[i].name, name))
			slot = &t->items[i];
	if (slot) {
		free(slot->script);
		free(slot->origin);
	} else {
		if (t->len == t->alloc) {
			t->alloc = t->alloc ? 2 * t->alloc : 4;
			t->items = xreallocarray(t->items, t->alloc, sizeof(*t->items));
		}
		slot = &t->items[t->len++];
		slot->name = xstrdup(name);
	}
	slot->kind = kind;
	slot->script = kind == COMMAND_SCRIPT ? xstrdup(script) : NULL;
	slot->layer = layer;
	slot->origin = xstrdup(origin);
}

int command_table_parse_flag(struct command_table *t, const char *spec, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(spec);
	for (char *save = NULL, *item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq)
			return error_set(
			    err, ERROR_CONFIG,
			    "flag --cmd: \"%s\" is not NAME=VALUE (e.g. --cmd rm=false "
			    "or --cmd git=true)",
			    item);
		*eq = '\0';
		enum command_kind kind;
		if (command_name_validate(item, err) < 0 ||
		    command_kind_parse(eq + 1, &kind, err) < 0)
			return error_prefix(err, "flag --cmd %s=%s", item, eq + 1);
		command_table_set(t, item, kind, eq + 1, LAYER_CLI, "--cmd");
	}
	return 0;
}

const char *command_kind_name(enum command_kind kind)
{
	switch (kind) {
	case COMMAND_RAW:
		return "raw";
	case COMMAND_BLOCKED:
		return "blocked";
	case COMMAND_GIT:
		return "@git";
	case COMMAND_SCRIPT:
		return "script";
	}
	return "?";
}

void command_table_release(struct command_table *t)
{
	for (size_t i = 0; i < t->len; i++) {
		free(t->items[i].name);
		free(t->items[i].script);
		free(t->items[i].origin);
	}
	free(t->items);
	*t = (struct command_table)COMMAND_TABLE_INIT;
}
