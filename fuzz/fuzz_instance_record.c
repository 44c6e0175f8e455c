/* libFuzzer target for the records of running sandboxes, which `list` and
 * `stop` read from a directory that a careless --rw could expose. Whatever
 * the text, parsing either refuses it or yields a record with a valid name
 * and a pid, which renders to a text that parses back to the same record. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/instance.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct instance in, again;
	if (instance_parse_record(text, &in)) {
		struct error err = ERROR_INIT;
		if (instance_check_name(in.name, &err) < 0 || in.pid <= 0)
			abort();
		char *round = instance_record_text(&in);
		if (!instance_parse_record(round, &again) || strcmp(in.name, again.name) ||
		    in.pid != again.pid || in.pid_start != again.pid_start ||
		    in.command.len != again.command.len)
			abort();
		instance_release(&again);
		free(round);
	}
	instance_release(&in);
	free(text);
	return 0;
}
