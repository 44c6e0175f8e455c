/* Rule lists and the names of levels and layers as users see them. */
#include "policy/rule.h"

#include <stdlib.h>

#include "base/xalloc.h"

void rule_list_add(struct rule_list *list, const char *pattern, enum access_level level,
		   enum layer layer, const char *origin)
{
	if (list->len == list->alloc) {
		list->alloc = list->alloc ? list->alloc * 2 : 16;
		list->items = xreallocarray(list->items, list->alloc, sizeof(*list->items));
	}
	list->items[list->len++] = (struct rule){
	    .pattern = xstrdup(pattern),
	    .level = level,
	    .layer = layer,
	    .origin = xstrdup(origin),
	};
}

void rule_list_add_tightening(struct rule_list *list, const char *pattern, enum access_level level,
			      enum layer layer, const char *origin)
{
	rule_list_add(list, pattern, level, layer, origin);
	list->items[list->len - 1].tighten_only = true;
}

void rule_list_add_agent_state(struct rule_list *list, const char *pattern, enum layer layer,
			       const char *origin)
{
	rule_list_add(list, pattern, ACCESS_RW, layer, origin);
	list->items[list->len - 1].agent_state = true;
}

void rule_list_add_pinned(struct rule_list *list, const char *pattern, enum layer layer,
			  const char *origin)
{
	rule_list_add(list, pattern, ACCESS_RO, layer, origin);
	list->items[list->len - 1].pinned = true;
}

void rule_list_release(struct rule_list *list)
{
	for (size_t i = 0; i < list->len; i++) {
		free(list->items[i].pattern);
		free(list->items[i].origin);
	}
	free(list->items);
	*list = (struct rule_list)RULE_LIST_INIT;
}

const char *access_level_name(enum access_level level)
{
	switch (level) {
	case ACCESS_RW:
		return "rw";
	case ACCESS_RO:
		return "ro";
	case ACCESS_EXCLUDE:
		return "exclude";
	}
	return "?";
}

const char *layer_name(enum layer layer)
{
	switch (layer) {
	case LAYER_BUILTIN:
		return "built-in";
	case LAYER_PRESET:
		return "preset";
	case LAYER_GLOBAL:
		return "global";
	case LAYER_PROJECT:
		return "project";
	case LAYER_CLI:
		return "cli";
	}
	return "?";
}
