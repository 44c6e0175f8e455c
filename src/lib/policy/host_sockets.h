/* The host's service sockets hidden inside the sandbox: ssh-agent, D-Bus,
 * gpg-agent, a Wayland display given by path. */
#pragma once

#include "policy/rule.h"

/* Adds an exclude rule (layer built-in) for each such socket that the
 * environment names. */
void host_sockets_add_rules(char *const *envp, const char *home, struct rule_list *rules);
