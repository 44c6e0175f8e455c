/* libFuzzer target for SKILL.md's front matter rules (libyaml's event
 * parser and our checks over it). Any bytes give a verdict, and every
 * error is one line of printable UTF-8 that begins with "SKILL.md:", as
 * the daemon sends errors to clients as they are. ASan catches the rest. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/skills.h"
#include "base/strv.h"
#include "base/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const char *s)
{
	if (strncmp(s, "SKILL.md:", 9) != 0)
		abort();
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	while (len > 0) {
		uint32_t cp;
		size_t n = utf8_decode(p, len, &cp);
		if (n == 0 || cp < 0x20 || cp == 0x7f)
			abort();
		p += n;
		len -= n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strv errors = STRV_INIT;
	skills_validate_text("pdf-tools", (const char *)data, size, &errors);
	for (size_t i = 0; i < errors.len; i++)
		check_line(errors.items[i]);
	strv_release(&errors);
	return 0;
}
