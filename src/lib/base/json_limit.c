/* Counting a JSON text's values before json-c builds them (json_limit.h). */
#include "base/json_limit.h"

bool json_values_within(const char *text, size_t len, size_t max_containers, size_t max_commas)
{
	size_t containers = 0, commas = 0;
	bool in_string = false, escaped = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if ((c == '{' || c == '[') && ++containers > max_containers) {
			return false;
		} else if (c == ',' && ++commas > max_commas) {
			return false;
		}
	}
	return true;
}
