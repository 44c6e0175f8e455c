/* Reading the audit log back: `agent-sandbox log`. */
#pragma once

#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"

struct audit_log_query {
	bool json;    /* print records as stored */
	bool blocked; /* only denials */
	long limit;   /* the last N records; -1 for all */
};

/* Appends the records the query selects to sb, as a table or as stored
 * (every outside string escaped for a terminal either way). */
int audit_log_format(const char *dir, const struct audit_log_query *q, struct strbuf *sb,
		     struct error *err);
