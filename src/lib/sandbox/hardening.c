/* This file decides which of seccomp and Landlock a run gets and refuses
 * to go on without one the kernel lacks, unless the user said so. It never
 * applies them: the init does, just before exec. */
#include "sandbox/hardening.h"

#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "sandbox/landlock.h"
#include "sandbox/seccomp.h"
#include "base/xalloc.h"

static void add_writable(struct hardening *l, const struct policy *policy)
{
	for (size_t i = 0; i < policy->len; i++)
		if (policy->entries[i].level == ACCESS_RW)
			strv_push(&l->writable, policy->entries[i].path);
	for (size_t i = 0; i < landlock_private_writable_len; i++)
		strv_push(&l->writable, landlock_private_writable[i]);
}

void hardening_keep_dirs(struct hardening *l, const char *path)
{
	if (!strv_contains(&l->writable, path))
		return;
	struct strv rest = STRV_INIT;
	for (size_t i = 0; i < l->writable.len; i++)
		if (strcmp(l->writable.items[i], path) != 0)
			strv_push(&rest, l->writable.items[i]);
	strv_release(&l->writable);
	l->writable = rest;
	strv_push(&l->keep_dirs, path);
}

int hardening_require(const struct hardening *l, bool allow_degraded, struct error *err)
{
	if (!l->refusal || allow_degraded)
		return 0;
	error_set(err, ERROR_SETUP, "%s; refusing to run with less protection than configured",
		  l->refusal);
	error_hint(err, "use a kernel with Landlock (5.13 or later for files, 6.7 or later for "
			"TCP; built with CONFIG_SECURITY_LANDLOCK=y and \"landlock\" in the lsm= "
			"boot parameter, see /sys/kernel/security/lsm), or run with "
			"--allow-degraded to go on without it (the audit log records it)");
	return -1;
}

void hardening_plan(struct hardening *l, const struct policy *policy, bool filtered_network)
{
	*l = (struct hardening){.writable = STRV_INIT,
				.keep_dirs = STRV_INIT,
				.sockets = STRV_INIT,
				.degraded = STRV_INIT};
	l->filtered_network = filtered_network;
	l->landlock_abi = landlock_abi();
	add_writable(l, policy);

	if (l->landlock_abi >= LANDLOCK_ABI_FS) {
		l->landlock_fs = true;
	} else {
		l->refusal = xstrdup("the kernel has no Landlock, the second layer that limits "
				     "writes to the policy's writable paths");
		strv_push(&l->degraded, "landlock: no Landlock in this kernel; writes are "
					"limited by the mounts alone");
	}
	if (!filtered_network)
		return;
	if (l->landlock_abi >= LANDLOCK_ABI_NET) {
		l->landlock_net = true;
	} else if (l->landlock_abi >= LANDLOCK_ABI_FS) {
		if (!l->refusal)
			l->refusal = xasprintf("the kernel's Landlock (ABI %d) cannot limit TCP "
					       "connections to the proxy's ports (needs ABI %d)",
					       l->landlock_abi, LANDLOCK_ABI_NET);
		strv_pushf(&l->degraded,
			   "landlock: ABI %d cannot limit TCP; the network namespace alone "
			   "keeps connections to the proxy",
			   l->landlock_abi);
	}
}

void hardening_add_socket(struct hardening *l, const char *path)
{
	if (!strv_contains(&l->sockets, path))
		strv_push(&l->sockets, path);
}

void hardening_describe(const struct hardening *l, struct strbuf *out)
{
	strbuf_addf(out,
		    "layers:\n  namespaces and mounts (bwrap): user, pid, ipc, uts, cgroup%s\n",
		    l->filtered_network ? ", net (filtered through the proxy)" : "");
	strbuf_addf(out, "  seccomp: %zu rules (README, \"Security model\")\n", seccomp_rules_len);
	if (l->landlock_fs)
		strbuf_addf(out, "  landlock: ABI %d, writes only beneath %zu paths%s\n",
			    l->landlock_abi, l->writable.len,
			    l->landlock_net ? "; TCP connect only to the proxy's and "
					      "network.localhost ports, bind none"
					    : "");
	else
		strbuf_addf(out, "  landlock: not available in this kernel\n");
	if (l->landlock_abi >= LANDLOCK_ABI_RESOLVE_UNIX)
		strbuf_addf(out,
			    "  landlock: unix sockets made outside the command: only %zu listed\n",
			    l->sockets.len);
	if (l->landlock_abi >= LANDLOCK_ABI_SCOPE)
		strbuf_addf(out, "  landlock: the host's abstract unix sockets are out of reach\n");
	else if (l->host_network)
		strbuf_addf(out,
			    "  landlock: ABI %d has no abstract socket scope (needs %d): with "
			    "--network=true the host's abstract unix sockets stay reachable\n",
			    l->landlock_abi, LANDLOCK_ABI_SCOPE);
	for (size_t i = 0; i < l->degraded.len; i++)
		strbuf_addf(out, "  degraded (--allow-degraded): %s\n", l->degraded.items[i]);
}

void hardening_release(struct hardening *l)
{
	strv_release(&l->writable);
	strv_release(&l->keep_dirs);
	strv_release(&l->sockets);
	strv_release(&l->degraded);
	free(l->refusal);
	l->refusal = NULL;
}
