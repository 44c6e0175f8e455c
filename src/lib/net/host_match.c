/* This file decides what a host name is and whether it matches a pattern.
 * It never resolves names: a name that looks like an address is treated as
 * one, so that "2130706433" cannot reach 127.0.0.1 by way of the resolver. */
#include "net/host_match.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/xalloc.h"

static bool valid_label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static bool valid_dns_name(const char *s)
{
	size_t label = 0;
	if (!*s || strlen(s) > HOST_NAME_MAX_LEN)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!valid_label_char(*p) || ++label > 63)
			return false;
	}
	return label > 0;
}

static bool parse_ipv6(const char *s, struct in6_addr *a)
{
	return strchr(s, ':') && inet_pton(AF_INET6, s, a) == 1;
}

bool host_is_ip_literal(const char *normalized)
{
	struct in_addr a4;
	struct in6_addr a6;
	return inet_aton(normalized, &a4) != 0 || parse_ipv6(normalized, &a6);
}

char *host_normalize(const char *host, size_t len)
{
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
		_cleanup_free_ char *inner = xstrndup(host, len);
		struct in6_addr a6;
		if (strlen(inner) != len || !parse_ipv6(inner, &a6))
			return NULL;
		char buf[INET6_ADDRSTRLEN];
		return xstrdup(inet_ntop(AF_INET6, &a6, buf, sizeof(buf)));
	}
	if (len && host[len - 1] == '.')
		len--;
	if (len == 0 || len > HOST_NAME_MAX_LEN + 1 || memchr(host, '\0', len))
		return NULL;
	_cleanup_free_ char *s = xstrndup(host, len);
	for (char *p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	struct in6_addr a6;
	if (parse_ipv6(s, &a6)) {
		char buf[INET6_ADDRSTRLEN];
		return xstrdup(inet_ntop(AF_INET6, &a6, buf, sizeof(buf)));
	}
	struct in_addr a4;
	if (inet_aton(s, &a4)) {
		/* One spelling for every form inet_aton accepts. */
		char buf[INET_ADDRSTRLEN];
		return xstrdup(inet_ntop(AF_INET, &a4, buf, sizeof(buf)));
	}
	if (!valid_dns_name(s))
		return NULL;
	return steal_ptr(&s);
}

int host_pattern_validate(const char *pattern, struct error *err)
{
	if (!strcmp(pattern, "*"))
		return 0;
	const char *rest = pattern;
	if (!strncmp(pattern, "*.", 2))
		rest = pattern + 2;
	if (strchr(rest, '*'))
		return error_set(err, ERROR_CONFIG,
				 "host pattern \"%s\": \"*\" may only stand alone or as the first "
				 "label (\"*.example.com\")",
				 pattern);
	_cleanup_free_ char *norm = host_normalize(rest, strlen(rest));
	if (!norm)
		return error_set(err, ERROR_CONFIG,
				 "host pattern \"%s\" is not a host name, \"*.name\" or an IP "
				 "address",
				 pattern);
	if (rest != pattern && host_is_ip_literal(norm))
		return error_set(err, ERROR_CONFIG,
				 "host pattern \"%s\": a wildcard cannot apply to an IP address",
				 pattern);
	return 0;
}

bool host_pattern_is_exact(const char *pattern)
{
	return !strchr(pattern, '*');
}

bool host_pattern_matches(const char *pattern, const char *host)
{
	bool literal = host_is_ip_literal(host);
	if (!strcmp(pattern, "*"))
		return !literal;
	bool wildcard = !strncmp(pattern, "*.", 2);
	const char *base = wildcard ? pattern + 2 : pattern;
	_cleanup_free_ char *norm = host_normalize(base, strlen(base));
	if (!norm)
		return false;
	if (!wildcard)
		return !strcmp(norm, host);
	if (literal)
		return false;
	/* Subdomains only, and only at a label boundary: "*.example.com"
	 * matches "a.example.com" but not "example.com" or "badexample.com". */
	size_t hl = strlen(host), nl = strlen(norm);
	return hl > nl + 1 && host[hl - nl - 1] == '.' && !strcmp(host + hl - nl, norm);
}

static const char *class_v4(uint32_t a)
{
	static const struct {
		uint32_t net, mask;
		const char *what;
	} ranges[] = {
	    {0xA9FEA9FE, 0xFFFFFFFF, "metadata"},    /* 169.254.169.254 */
	    {0x00000000, 0xFF000000, "unspecified"}, /* 0.0.0.0/8 */
	    {0x0A000000, 0xFF000000, "private"},     /* 10/8 */
	    {0x64400000, 0xFFC00000, "private"},     /* 100.64/10, carrier-grade NAT */
	    {0x7F000000, 0xFF000000, "loopback"},    /* 127/8 */
	    {0xA9FE0000, 0xFFFF0000, "link-local"},  /* 169.254/16 */
	    {0xAC100000, 0xFFF00000, "private"},     /* 172.16/12 */
	    {0xC0000000, 0xFFFFFF00, "private"},     /* 192.0.0/24, IETF protocol assignments */
	    {0xC0A80000, 0xFFFF0000, "private"},     /* 192.168/16 */
	    {0xC6120000, 0xFFFE0000, "private"},     /* 198.18/15, benchmarking */
	    {0xE0000000, 0xF0000000, "multicast"},   /* 224/4 */
	    {0xF0000000, 0xF0000000, "reserved"},    /* 240/4 and broadcast */
	};
	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
		if ((a & ranges[i].mask) == ranges[i].net)
			return ranges[i].what;
	return NULL;
}

const char *host_address_class(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return class_v4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return "not an internet address";
	const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	const uint8_t *b = a->s6_addr;
	static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	uint32_t embedded;
	/* Addresses that carry an IPv4 address are judged by it. */
	if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a) || !memcmp(b, nat64, 12)) {
		memcpy(&embedded, b + 12, 4);
		if (IN6_IS_ADDR_V4COMPAT(a) && ntohl(embedded) <= 1)
			return ntohl(embedded) ? "loopback" : "unspecified";
		return class_v4(ntohl(embedded));
	}
	if (b[0] == 0x20 && b[1] == 0x02) { /* 6to4 */
		memcpy(&embedded, b + 2, 4);
		return class_v4(ntohl(embedded));
	}
	if (IN6_IS_ADDR_UNSPECIFIED(a))
		return "unspecified";
	if (IN6_IS_ADDR_LOOPBACK(a))
		return "loopback";
	if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_SITELOCAL(a))
		return "link-local";
	if ((b[0] & 0xfe) == 0xfc)
		return "private"; /* fc00::/7, unique local; AWS metadata is fd00:ec2::254 */
	if (IN6_IS_ADDR_MULTICAST(a))
		return "multicast";
	return NULL;
}

bool host_parse_address(const char *text, unsigned port, struct sockaddr_storage *sa,
			socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
	if (inet_pton(AF_INET, text, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		return true;
	}
	if (inet_pton(AF_INET6, text, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return true;
	}
	return false;
}

const char *host_address_text(const struct sockaddr *sa, char *buf, size_t size)
{
	const void *addr = sa->sa_family == AF_INET
			       ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
			       : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!inet_ntop(sa->sa_family, addr, buf, (socklen_t)size))
		snprintf(buf, size, "?");
	return buf;
}

bool host_parse_pin(const char *text, char *address, size_t size, unsigned *port)
{
	char buf[64];
	const char *port_text = NULL;
	size_t n = strlen(text);
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || (size_t)(close - text) - 1 >= sizeof(buf))
			return false;
		memcpy(buf, text + 1, (size_t)(close - text) - 1);
		buf[close - text - 1] = '\0';
		if (!strchr(buf, ':'))
			return false; /* brackets are for IPv6 only */
		if (close[1] == ':')
			port_text = close + 2;
		else if (close[1])
			return false;
	} else {
		const char *colon = strchr(text, ':');
		/* One colon: IPv4 and a port; more: a bare IPv6 address. */
		if (colon && !strchr(colon + 1, ':')) {
			port_text = colon + 1;
			n = (size_t)(colon - text);
		}
		if (n >= sizeof(buf))
			return false;
		memcpy(buf, text, n);
		buf[n] = '\0';
	}
	*port = 0;
	if (port_text) {
		unsigned long v = 0;
		size_t len = strlen(port_text);
		if (len == 0 || len > 5)
			return false;
		for (size_t i = 0; i < len; i++) {
			if (port_text[i] < '0' || port_text[i] > '9')
				return false;
			v = v * 10 + (unsigned long)(port_text[i] - '0');
		}
		if (v == 0 || v > 65535)
			return false;
		*port = (unsigned)v;
	}
	struct sockaddr_storage ss;
	socklen_t len;
	if (!host_parse_address(buf, 0, &ss, &len))
		return false;
	host_address_text((const struct sockaddr *)&ss, address, size);
	return true;
}

char *host_pin_text(const char *address, unsigned port)
{
	if (!port)
		return xstrdup(address);
	bool v6 = strchr(address, ':') != NULL;
	return xasprintf("%s%s%s:%u", v6 ? "[" : "", address, v6 ? "]" : "", port);
}
