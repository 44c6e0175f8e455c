/* A bound on what json-c builds from one text: it spends some hundreds of
 * bytes on each value (an object is a hash table), so a few MiB of "{},"
 * become a GiB for a moment. Untrusted text is counted first, its
 * containers and its commas outside strings, and refused past a limit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The limits the daemon's parsers of untrusted lines use. */
#define JSON_CONTAINERS_MAX 65536
#define JSON_COMMAS_MAX 262144

/* Whether text holds at most max_containers objects and arrays and at
 * most max_commas commas outside strings. Counts only: the text need not
 * be valid JSON. */
bool json_values_within(const char *text, size_t len, size_t max_containers, size_t max_commas);
