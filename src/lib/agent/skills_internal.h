/* Shared between the SKILL.md rules and the skills directory walk. */
#pragma once

#include <stddef.h>

/* s[0..len) as it may appear in an error: at most 64 bytes of it (cut at
 * a character boundary, "..." marking the cut), controls and bytes that
 * are not UTF-8 escaped as visible text. */
char *skill_shown(const char *s, size_t len);
