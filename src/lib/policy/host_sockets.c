/* This file names the host's service sockets that the sandbox hides: a
 * unix socket on a read-only mount can still be connected to, and behind
 * these sit the user's keys and desktop session. It only adds exclude
 * rules; whether a path exists is the policy's business. A user rule for
 * the same path (say, --rw "$SSH_AUTH_SOCK") wins, as for any built-in.
 *
 * Already out of reach without a rule: the system bus and everything else
 * under /run (a private tmpfs, also the usual $XDG_RUNTIME_DIR with the
 * session bus, Wayland, gpg-agent and ssh-agent sockets), X11's
 * /tmp/.X11-unix (private /tmp), ~/.ssh and ~/.gnupg (@base excludes them),
 * abstract sockets (a new network namespace has its own; not with
 * --network=true), and Docker's socket (spec/plan.c). */
#include "policy/host_sockets.h"

#include <string.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "policy/pattern.h"
#include "base/xalloc.h"

static void hide(struct rule_list *rules, const char *path, const char *why)
{
	if (!path || path[0] != '/')
		return;
	_cleanup_free_ char *escaped = pattern_escape(path);
	rule_list_add(rules, escaped, ACCESS_EXCLUDE, LAYER_BUILTIN, why);
}

/* D-Bus addresses are "unix:path=/x,guid=..;tcp:..": each unix:path. */
static void hide_dbus(struct rule_list *rules, const char *address, const char *why)
{
	if (!address)
		return;
	const char *p = address;
	while ((p = strstr(p, "unix:path=")) != NULL) {
		p += strlen("unix:path=");
		size_t len = strcspn(p, ",;");
		_cleanup_free_ char *path = xstrndup(p, len);
		hide(rules, path, why);
		p += len;
	}
}

void host_sockets_add_rules(char *const *envp, const char *home, struct rule_list *rules)
{
	hide(rules, env_get(envp, "SSH_AUTH_SOCK"), "ssh-agent socket (SSH_AUTH_SOCK)");
	hide_dbus(rules, env_get(envp, "DBUS_SESSION_BUS_ADDRESS"), "D-Bus session bus");
	hide_dbus(rules, env_get(envp, "DBUS_SYSTEM_BUS_ADDRESS"), "D-Bus system bus");
	hide(rules, "/var/run/dbus/system_bus_socket", "D-Bus system bus");
	hide(rules, "/run/dbus/system_bus_socket", "D-Bus system bus");

	const char *gnupg = env_get(envp, "GNUPGHOME");
	_cleanup_free_ char *gnupg_dir = gnupg && gnupg[0] == '/' ? xstrdup(gnupg)
					 : home			  ? xasprintf("%s/.gnupg", home)
								  : NULL;
	if (gnupg_dir) {
		_cleanup_free_ char *escaped = pattern_escape(gnupg_dir);
		_cleanup_free_ char *agent = xasprintf("%s/S.gpg-agent*", escaped);
		rule_list_add(rules, agent, ACCESS_EXCLUDE, LAYER_BUILTIN, "gpg-agent sockets");
	}

	/* A Wayland display given as a path rather than a name in
	 * $XDG_RUNTIME_DIR. */
	const char *wayland = env_get(envp, "WAYLAND_DISPLAY");
	if (wayland && wayland[0] == '/')
		hide(rules, wayland, "Wayland display socket");
}
