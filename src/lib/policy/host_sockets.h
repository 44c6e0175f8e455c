/* The host's unix sockets hidden inside the sandbox: the service sockets
 * the environment names (ssh-agent, D-Bus, gpg-agent, a Wayland display
 * given by path), the places container engines, password managers and git
 * put theirs, and every socket bound on the host outside the sandbox's
 * private mounts, as /proc/net/unix lists it. */
#pragma once

#include <stddef.h>

#include "base/strv.h"
#include "policy/rule.h"

/* Calls fn with each pathname (not abstract, not unnamed) in the text of
 * /proc/net/unix, as the kernel printed it: not NUL-terminated, possibly
 * relative, stale, or holding line ends; with the socket's inode (0 when
 * the field is not a number). The text is untrusted; nothing is
 * allocated. Returns the number of names passed. */
size_t host_sockets_parse(const char *text, size_t len,
			  void (*fn)(const char *path, size_t path_len, unsigned long inode,
				     void *data),
			  void *data);

/* The canonical paths of the unix sockets bound on the host right now
 * that a sandbox would see (by the name /proc/net/unix gives, relative
 * ones tried against cwd and home, and the other live sockets in the
 * directory of each): sockets beneath its private /run, /tmp, /dev
 * and /proc are left out unless within one of `binds` (the paths the
 * policy mounts there), and so is what is no longer a socket. Missing or
 * unreadable /proc/net/unix: none (the known locations still hold). */
void host_sockets_scan(const struct strv *binds, const char *cwd, const char *home,
		       struct strv *found);

/* Adds to found (canonical paths) each of candidates, socket files met
 * elsewhere (the project's walk), that a process of this network
 * namespace listens on now. A stale socket file left behind is not one. */
void host_sockets_add_live(const struct strv *candidates, struct strv *found);

/* Adds an exclude rule (layer built-in) for each such socket that the
 * environment names, for the known socket locations ($XDG_RUNTIME_DIR
 * among them when it is not under /run and holds neither `home` nor
 * `cwd`, and `own_dir`, agent-sandbox's runtime directory, when the
 * sandbox would see it), and for each socket of `found` that is not in
 * `listed` (the sockets the user lets through, canonical paths). */
void host_sockets_add_rules(char *const *envp, const char *home, const char *cwd,
			    const char *own_dir, const struct strv *found,
			    const struct strv *listed, struct rule_list *rules);
