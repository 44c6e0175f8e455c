/* Reading the audit log back: `agent-sandbox log`. */
#pragma once

#include <stdbool.h>

#include "base/error.h"

struct audit_log_query {
	bool json;    /* print records as stored */
	bool blocked; /* only denials */
	long limit;   /* the last N records; -1 for all */
};

int audit_log_print(const char *dir, const struct audit_log_query *q, int out, struct error *err);
