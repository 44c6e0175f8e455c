/* This file decides which hosts a filtered sandbox may reach. Decisions use
 * the name the client asked for; addresses are checked again after
 * resolution, because an allowed name can point anywhere, including the
 * host's loopback or a cloud metadata service. */
#include "net/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "net/host_groups.h"
#include "net/host_match.h"
#include "base/xalloc.h"

static void add_rule(struct net_rule **rules, size_t *len, const char *pattern, char *origin,
		     bool explicit_name)
{
	*rules = xreallocarray(*rules, *len + 1, sizeof(**rules));
	char *norm = NULL;
	if (strcmp(pattern, "*") && strncmp(pattern, "*.", 2))
		norm = host_normalize(pattern, strlen(pattern));
	else if (!strncmp(pattern, "*.", 2)) {
		_cleanup_free_ char *base = host_normalize(pattern + 2, strlen(pattern + 2));
		norm = base ? xasprintf("*.%s", base) : NULL;
	}
	(*rules)[(*len)++] = (struct net_rule){
	    .pattern = norm ? norm : xstrdup(pattern),
	    .origin = origin,
	    .explicit_name = explicit_name,
	};
}

static const char *entry_origin(const struct net_entry *e)
{
	return e->layer == LAYER_BUILTIN ? "default" : e->origin;
}

static void expand(const struct net_list *list, struct net_rule **rules, size_t *len)
{
	for (size_t i = 0; i < list->len; i++) {
		const struct net_entry *e = &list->items[i];
		const struct host_group *g = e->name[0] == '@' ? host_group_lookup(e->name) : NULL;
		if (g) {
			for (const char *const *h = g->hosts; *h; h++)
				add_rule(rules, len, *h,
					 xasprintf("%s (%s)", g->name, entry_origin(e)), false);
			continue;
		}
		add_rule(rules, len, e->name, xstrdup(entry_origin(e)),
			 host_pattern_is_exact(e->name) && e->layer != LAYER_BUILTIN);
	}
}

static int compare_port(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static uint16_t free_port(const struct net_policy *p, uint16_t want, uint16_t taken)
{
	for (;; want++)
		if (want != taken && !net_policy_localhost_allowed(p, want))
			return want;
}

void net_policy_build(const struct network_config *cfg, struct net_policy *p)
{
	*p = (struct net_policy){.mode = cfg->mode};
	expand(&cfg->allow, &p->allow, &p->allow_len);
	expand(&cfg->deny, &p->deny, &p->deny_len);
	for (size_t i = 0; i < cfg->resolve.len; i++) {
		const struct net_entry *e = &cfg->resolve.items[i];
		/* A later layer pins the same name again: the later one wins. */
		size_t k = 0;
		while (k < p->resolve_len && strcmp(p->resolve[k].name, e->name))
			k++;
		if (k == p->resolve_len) {
			p->resolve =
			    xreallocarray(p->resolve, ++p->resolve_len, sizeof(*p->resolve));
			p->resolve[k].name = xstrdup(e->name);
		} else {
			free(p->resolve[k].address);
			free(p->resolve[k].origin);
		}
		char address[64];
		unsigned port = 0;
		if (!host_parse_pin(e->address, address, sizeof(address), &port))
			snprintf(address, sizeof(address), "%s", e->address);
		p->resolve[k].address = xstrdup(address);
		p->resolve[k].port = (uint16_t)port;
		p->resolve[k].origin = xstrdup(entry_origin(e));
	}
	p->localhost = xcalloc(cfg->localhost.len + 1, sizeof(*p->localhost));
	for (size_t i = 0; i < cfg->localhost.len; i++)
		p->localhost[i] = cfg->localhost.items[i].port;
	qsort(p->localhost, cfg->localhost.len, sizeof(*p->localhost), compare_port);
	for (size_t i = 0; i < cfg->localhost.len; i++)
		if (p->localhost_len == 0 || p->localhost[p->localhost_len - 1] != p->localhost[i])
			p->localhost[p->localhost_len++] = p->localhost[i];
	/* The usual proxy ports, unless the user forwards one of them. */
	p->http_port = free_port(p, 3128, 0);
	p->socks_port = free_port(p, 1080, p->http_port);
}

static void release_rules(struct net_rule *rules, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		free(rules[i].pattern);
		free(rules[i].origin);
	}
	free(rules);
}

void net_policy_release(struct net_policy *p)
{
	release_rules(p->allow, p->allow_len);
	release_rules(p->deny, p->deny_len);
	for (size_t i = 0; i < p->resolve_len; i++) {
		free(p->resolve[i].name);
		free(p->resolve[i].address);
		free(p->resolve[i].origin);
	}
	free(p->resolve);
	free(p->localhost);
	*p = (struct net_policy){0};
}

bool net_policy_localhost_allowed(const struct net_policy *p, unsigned port)
{
	for (size_t i = 0; i < p->localhost_len; i++)
		if (p->localhost[i] == port)
			return true;
	return false;
}

static const struct net_rule *find(const struct net_rule *rules, size_t len, const char *host,
				   bool want_explicit)
{
	for (size_t i = 0; i < len; i++)
		if ((!want_explicit || rules[i].explicit_name) &&
		    host_pattern_matches(rules[i].pattern, host))
			return &rules[i];
	return NULL;
}

void net_policy_check_host(const struct net_policy *p, const char *host, struct net_verdict *v)
{
	*v = (struct net_verdict){0};
	v->host = host_normalize(host, strlen(host));
	if (!v->host) {
		v->reason = xasprintf("\"%.*s\" is not a valid host name", HOST_NAME_MAX_LEN, host);
		return;
	}
	const struct net_rule *deny = find(p->deny, p->deny_len, v->host, false);
	if (deny) {
		v->reason = xasprintf("%s is denied by network.deny entry \"%s\" (%s)", v->host,
				      deny->pattern, deny->origin);
		return;
	}
	if (host_is_ip_literal(v->host)) {
		const struct net_rule *exact = find(p->allow, p->allow_len, v->host, true);
		if (!exact) {
			v->reason = xasprintf("%s is an IP address; addresses are refused unless "
					      "network.allow lists them exactly (--allow-host %s)",
					      v->host, v->host);
			return;
		}
		v->allowed = v->explicit_name = true;
		v->allowed_by = exact->origin;
		return;
	}
	const struct net_rule *allow = find(p->allow, p->allow_len, v->host, false);
	if (!allow) {
		v->reason = xasprintf("%s is not in network.allow; allow it with --allow-host %s "
				      "or \"network\": {\"allow\": [\"%s\"]}",
				      v->host, v->host, v->host);
		return;
	}
	v->allowed = true;
	v->allowed_by = allow->origin;
	v->explicit_name = find(p->allow, p->allow_len, v->host, true) != NULL;
	for (size_t i = 0; i < p->resolve_len; i++)
		if (!strcmp(p->resolve[i].name, v->host)) {
			v->pinned = p->resolve[i].address;
			v->pinned_port = p->resolve[i].port;
		}
}

char *net_policy_check_pin_port(const struct net_verdict *v, unsigned port)
{
	if (!v->pinned)
		return NULL;
	if (v->pinned_port ? port == v->pinned_port : port == 80 || port == 443)
		return NULL;
	_cleanup_free_ char *pin = host_pin_text(v->pinned, v->pinned_port);
	_cleanup_free_ char *want = host_pin_text(v->pinned, port);
	return xasprintf("%s port %u: network.resolve pins %s to %s, which opens %s only; "
			 "pin \"%s\" to reach this port",
			 v->host, port, v->host, pin,
			 v->pinned_port ? "that port" : "ports 80 and 443", want);
}

char *net_policy_check_address(const struct net_policy *p, const struct net_verdict *v,
			       const struct sockaddr *sa)
{
	(void)p;
	const char *what = host_address_class(sa);
	if (!what || v->explicit_name)
		return NULL;
	char text[64];
	host_address_text(sa, text, sizeof(text));
	return xasprintf("%s resolves to %s, a %s address; only hosts listed by exact name in "
			 "network.allow (--allow-host %s) may reach such addresses",
			 v->host, text, what, v->host);
}

void net_verdict_release(struct net_verdict *v)
{
	free(v->host);
	free(v->reason);
	*v = (struct net_verdict){0};
}
