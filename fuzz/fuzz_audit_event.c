/* libFuzzer target for the events that sandboxed programs send to the
 * host's audit socket. Whatever arrives, the parser must either refuse it or
 * return a record with exactly the expected fields, whose rendering is one
 * line (the log is one record per line). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *r = audit_event_parse((const char *)data, size);
	if (!r)
		return 0;
	if (json_object_object_length(r) != 3 || !json_object_object_get_ex(r, "command", NULL) ||
	    !json_object_object_get_ex(r, "argv", NULL) ||
	    !json_object_object_get_ex(r, "reason", NULL))
		abort();
	const char *text = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN);
	if (strchr(text, '\n') || strchr(text, '\r'))
		abort();
	json_object_put(r);
	return 0;
}
