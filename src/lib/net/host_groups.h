/* The built-in host groups (@agents, @registries, @git-hosts): names that
 * network.allow and network.deny may use instead of listing every host. */
#pragma once

#include <stddef.h>

struct host_group {
	const char *name;	  /* "@agents" */
	const char *description;  /* for `policy` */
	const char *const *hosts; /* NULL-terminated patterns */
};

extern const struct host_group host_groups[];
extern const size_t host_groups_len;

/* The group of that name ("@agents"), or NULL. */
const struct host_group *host_group_lookup(const char *name);
