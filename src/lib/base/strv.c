/* String vectors. The array always has room for a terminating NULL. */
#include "base/strv.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void strv_push_owned(struct strv *v, char *s)
{
	if (v->len + 2 > v->alloc) {
		v->alloc = v->alloc ? v->alloc * 2 : 8;
		v->items = xreallocarray(v->items, v->alloc, sizeof(*v->items));
	}
	v->items[v->len++] = s;
	v->items[v->len] = NULL;
}

void strv_push(struct strv *v, const char *s)
{
	strv_push_owned(v, xstrdup(s));
}

void strv_pushf(struct strv *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strv_push_owned(v, xvasprintf(fmt, ap));
	va_end(ap);
}

void strv_extend(struct strv *v, const struct strv *from)
{
	for (size_t i = 0; i < from->len; i++)
		strv_push(v, from->items[i]);
}

bool strv_contains(const struct strv *v, const char *s)
{
	for (size_t i = 0; i < v->len; i++)
		if (strcmp(v->items[i], s) == 0)
			return true;
	return false;
}

char **strv_array(struct strv *v)
{
	if (!v->items) {
		v->alloc = 8;
		v->items = xcalloc(v->alloc, sizeof(*v->items));
	}
	return v->items;
}

void strv_release(struct strv *v)
{
	for (size_t i = 0; i < v->len; i++)
		free(v->items[i]);
	free(v->items);
	v->items = NULL;
	v->len = v->alloc = 0;
}
