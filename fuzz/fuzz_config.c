/* libFuzzer target for config files: JSONC parsing plus schema validation.
 * Every input is either accepted or rejected with a message that names the
 * file and a line:column inside it; nothing may crash or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char name[] = "/fuzz/.agent-sandbox.jsonc";

static void check_message(const char *msg)
{
	static const char prefix[] = "loading config from ";
	if (msg && !strncmp(msg, prefix, strlen(prefix)))
		msg += strlen(prefix);
	size_t n = strlen(name);
	unsigned line, col;
	char colon;
	if (!msg || strncmp(msg, name, n) != 0 ||
	    sscanf(msg + n, ":%u:%u%c", &line, &col, &colon) != 3 || colon != ':' || line == 0 ||
	    col == 0) {
		fprintf(stderr, "config error without file:line:col: %s\n", msg ? msg : "(none)");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	if (config_load_text(&cfg, name, (const char *)data, size, LAYER_PROJECT, &err) < 0)
		check_message(err.msg);
	config_release(&cfg);
	return 0;
}
