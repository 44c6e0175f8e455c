/* Unit tests for the network policy: normalising host names, matching
 * patterns by whole labels, classifying addresses, and the decisions built
 * from a configuration (deny wins, groups expand, IP literals and special
 * addresses need an exact entry the user wrote). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "config/config.h"
#include "net/host_match.h"
#include "net/policy.h"
#include "unit.h"

static void host_normalize_lowercases_and_checks_names(void **state)
{
	static const struct {
		const char *in;
		const char *out; /* NULL: refused */
	} cases[] = {
	    {"Example.COM", "example.com"},
	    {"example.com.", "example.com"},
	    {"a-b_c.example", "a-b_c.example"},
	    {"[::1]", "::1"},
	    {"[2001:DB8::1]", "2001:db8::1"},
	    {"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
	    {"127.1", "127.0.0.1"},
	    {"0x7f.1", "127.0.0.1"},
	    {"2130706433", "127.0.0.1"},
	    {"", NULL},
	    {".", NULL},
	    {"a..b", NULL},
	    {".a", NULL},
	    {"a b", NULL},
	    {"a/b", NULL},
	    {"a:80", NULL},
	    {"[1.2.3.4]", NULL},
	    {"[::1", NULL},
	    {"exa\xc3\xa9mple.com", NULL},
	    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *got = host_normalize(cases[i].in, strlen(cases[i].in));
		if ((got == NULL) != (cases[i].out == NULL) ||
		    (got && strcmp(got, cases[i].out) != 0))
			unit_fail("case %zu <%s>: got <%s>, expected <%s>", i, cases[i].in,
				  got ? got : "(refused)",
				  cases[i].out ? cases[i].out : "(refused)");
	}
}

static void host_pattern_matches_whole_labels_only(void **state)
{
	static const struct {
		const char *pattern;
		const char *host; /* normalised */
		bool match;
	} cases[] = {
	    {"example.com", "example.com", true},
	    {"Example.com.", "example.com", true},
	    {"example.com", "www.example.com", false},
	    {"*.example.com", "www.example.com", true},
	    {"*.example.com", "a.b.example.com", true},
	    {"*.example.com", "example.com", false},
	    {"*.example.com", "badexample.com", false},
	    {"*.example.com", "example.com.evil.org", false},
	    {"*.Example.COM", "x.example.com", true},
	    {"*", "anything.example", true},
	    {"*", "10.0.0.1", false},
	    {"10.0.0.1", "10.0.0.1", true},
	    {"10.0.0.1", "10.0.0.2", false},
	    {"::1", "::1", true},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (host_pattern_matches(cases[i].pattern, cases[i].host) != cases[i].match)
			unit_fail("case %zu: %s vs %s: expected %s", i, cases[i].pattern,
				  cases[i].host, cases[i].match ? "a match" : "no match");
}

static void host_address_class_names_special_addresses(void **state)
{
	static const struct {
		const char *address;
		const char *class; /* NULL: ordinary */
	} cases[] = {
	    {"93.184.216.34", NULL},
	    {"2606:2800:220:1::1", NULL},
	    {"127.0.0.1", "loopback"},
	    {"127.255.0.9", "loopback"},
	    {"10.1.2.3", "private"},
	    {"172.16.0.1", "private"},
	    {"172.32.0.1", NULL},
	    {"192.168.1.1", "private"},
	    {"100.64.0.1", "private"},
	    {"169.254.169.254", "metadata"},
	    {"169.254.1.1", "link-local"},
	    {"0.0.0.0", "unspecified"},
	    {"224.0.0.1", "multicast"},
	    {"255.255.255.255", "reserved"},
	    {"::1", "loopback"},
	    {"::", "unspecified"},
	    {"fe80::1", "link-local"},
	    {"fd00:ec2::254", "private"},
	    {"::ffff:127.0.0.1", "loopback"},
	    {"::ffff:10.0.0.1", "private"},
	    {"64:ff9b::a9fe:a9fe", "metadata"},
	    {"2002:7f00:1::", "loopback"},
	    {"ff02::1", "multicast"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sockaddr_storage ss;
		socklen_t len;
		if (!host_parse_address(cases[i].address, 80, &ss, &len))
			unit_fail("case %zu: cannot parse %s", i, cases[i].address);
		const char *got = host_address_class((struct sockaddr *)&ss);
		if ((got == NULL) != (cases[i].class == NULL) ||
		    (got && strcmp(got, cases[i].class) != 0))
			unit_fail("case %zu %s: got %s, expected %s", i, cases[i].address,
				  got ? got : "ordinary",
				  cases[i].class ? cases[i].class : "ordinary");
	}
}

static void host_pattern_validate_rejects_partial_wildcards(void **state)
{
	static const struct {
		const char *pattern;
		bool ok;
	} cases[] = {
	    {"example.com", true},
	    {"*.example.com", true},
	    {"*", true},
	    {"10.0.0.1", true},
	    {"::1", true},
	    {"a.*.com", false},
	    {"*example.com", false},
	    {"*.*.com", false},
	    {"*.10.0.0.1", false},
	    {"http://x", false},
	    {"", false},
	    {"x.com/path", false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_error_ struct error err = ERROR_INIT;
		if ((host_pattern_validate(cases[i].pattern, &err) == 0) != cases[i].ok)
			unit_fail("case %zu <%s>: expected %s", i, cases[i].pattern,
				  cases[i].ok ? "valid" : "invalid");
	}
}

static void build(struct config *cfg, struct net_policy *p, const char *text)
{
	config_init(cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	if (config_load_text(cfg, "p.json", text, strlen(text), LAYER_PROJECT, &err) < 0)
		unit_fail("config: %s", err.msg);
	net_policy_build(&cfg->network, p);
}

static void net_policy_decides_on_the_requested_name(void **state)
{
	_cleanup_config_ struct config cfg;
	struct net_policy p;
	build(&cfg, &p,
	      "{\"network\": {\"allow\": [\"*.corp.example\", \"10.0.0.7\", \"pinned.test\"],"
	      " \"deny\": [\"secret.corp.example\", \"@agents\"],"
	      " \"resolve\": {\"pinned.test\": \"127.0.0.1\"}}}");
	static const struct {
		const char *host;
		bool allowed;
		bool explicit_name;
		const char *pinned;
		const char *reason;
	} cases[] = {
	    {"a.corp.example", true, false, NULL, NULL},
	    {"A.Corp.Example.", true, false, NULL, NULL},
	    {"corp.example", false, false, NULL,
	     "corp.example is not in network.allow; allow it with --allow-host corp.example"},
	    {"secret.corp.example", false, false, NULL,
	     "secret.corp.example is denied by network.deny entry \"secret.corp.example\" "
	     "(p.json:1:79)"},
	    {"api.anthropic.com", false, false, NULL,
	     "api.anthropic.com is denied by network.deny entry \"api.anthropic.com\" (@agents "
	     "(p.json:1:102))"},
	    {"github.com", true, false, NULL, NULL},
	    {"pypi.org", true, false, NULL, NULL},
	    {"pinned.test", true, true, "127.0.0.1", NULL},
	    {"10.0.0.7", true, true, NULL, NULL},
	    {"[::1]", false, false, NULL,
	     "::1 is an IP address; addresses are refused unless network.allow lists them "
	     "exactly (--allow-host ::1)"},
	    {"2130706433", false, false, NULL, "127.0.0.1 is an IP address"},
	    {"bad host", false, false, NULL, "\"bad host\" is not a valid host name"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct net_verdict v;
		net_policy_check_host(&p, cases[i].host, &v);
		if (v.allowed != cases[i].allowed || v.explicit_name != cases[i].explicit_name)
			unit_fail("case %zu <%s>: allowed %d explicit %d (%s)", i, cases[i].host,
				  v.allowed, v.explicit_name, v.reason ? v.reason : "");
		if ((v.pinned == NULL) != (cases[i].pinned == NULL) ||
		    (v.pinned && strcmp(v.pinned, cases[i].pinned)))
			unit_fail("case %zu <%s>: pinned %s", i, cases[i].host,
				  v.pinned ? v.pinned : "(none)");
		if (cases[i].reason)
			unit_assert_starts_with(v.reason, cases[i].reason, "case %zu", i);
		net_verdict_release(&v);
	}
	net_policy_release(&p);
}

/* A pin opens its address on its own port, or on 80 and 443 without one. */
static void net_policy_ties_a_pin_to_its_port(void **state)
{
	_cleanup_config_ struct config cfg;
	struct net_policy p;
	build(&cfg, &p,
	      "{\"network\": {\"allow\": [\"a.test\", \"b.test\", \"c.test\", \"d.test\"],"
	      " \"resolve\": {\"a.test\": \"127.0.0.1:8080\", \"b.test\": \"127.0.0.1\","
	      " \"c.test\": \"[::1]:8443\"}}}");
	static const struct {
		const char *host;
		unsigned port;
		const char *refusal; /* NULL: allowed */
	} cases[] = {
	    {"a.test", 8080, NULL},
	    {"a.test", 80,
	     "a.test port 80: network.resolve pins a.test to 127.0.0.1:8080, which "
	     "opens that port only; pin \"127.0.0.1:80\" to reach this port"},
	    {"a.test", 22, "a.test port 22: network.resolve pins a.test to 127.0.0.1:8080"},
	    {"b.test", 80, NULL},
	    {"b.test", 443, NULL},
	    {"b.test", 8080,
	     "b.test port 8080: network.resolve pins b.test to 127.0.0.1, which "
	     "opens ports 80 and 443 only; pin \"127.0.0.1:8080\" to reach this port"},
	    {"c.test", 8443, NULL},
	    {"c.test", 443,
	     "c.test port 443: network.resolve pins c.test to [::1]:8443, which "
	     "opens that port only; pin \"[::1]:443\""},
	    {"d.test", 22, NULL}, /* not pinned: the resolver's answer is checked instead */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct net_verdict v;
		net_policy_check_host(&p, cases[i].host, &v);
		assert_true(v.allowed);
		_cleanup_free_ char *why = net_policy_check_pin_port(&v, cases[i].port);
		if (!cases[i].refusal && why)
			unit_fail("case %zu: refused: %s", i, why);
		if (cases[i].refusal)
			unit_assert_starts_with(why, cases[i].refusal, "case %zu", i);
		net_verdict_release(&v);
	}
	net_policy_release(&p);
}

static void net_policy_refuses_special_addresses_without_an_exact_entry(void **state)
{
	_cleanup_config_ struct config cfg;
	struct net_policy p;
	build(&cfg, &p, "{\"network\": {\"allow\": [\"*.corp.example\", \"db.corp.example\"]}}");
	static const struct {
		const char *host, *address;
		const char *refusal; /* NULL: allowed */
	} cases[] = {
	    {"a.corp.example", "93.184.216.34", NULL},
	    {"a.corp.example", "10.1.1.1",
	     "a.corp.example resolves to 10.1.1.1, a private address; only hosts listed by exact "
	     "name in network.allow (--allow-host a.corp.example) may reach such addresses"},
	    {"a.corp.example", "169.254.169.254",
	     "a.corp.example resolves to 169.254.169.254, a "
	     "metadata address"},
	    {"db.corp.example", "10.1.1.1", NULL},
	    {"github.com", "127.0.0.1", "github.com resolves to 127.0.0.1, a loopback address"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct net_verdict v;
		net_policy_check_host(&p, cases[i].host, &v);
		assert_true(v.allowed);
		struct sockaddr_storage ss;
		socklen_t len;
		assert_true(host_parse_address(cases[i].address, 443, &ss, &len));
		_cleanup_free_ char *why = net_policy_check_address(&p, &v, (struct sockaddr *)&ss);
		if (!cases[i].refusal && why)
			unit_fail("case %zu: refused: %s", i, why);
		if (cases[i].refusal)
			unit_assert_starts_with(why, cases[i].refusal, "case %zu", i);
		net_verdict_release(&v);
	}
	net_policy_release(&p);
}

static void net_policy_moves_proxy_ports_away_from_forwarded_ones(void **state)
{
	_cleanup_config_ struct config cfg;
	struct net_policy p;
	build(&cfg, &p, "{\"network\": {\"localhost\": [3128, 5432, 3128, 1080, 3129]}}");
	assert_int_equal(p.localhost_len, 4);
	assert_int_equal(p.localhost[0], 1080);
	assert_int_equal(p.localhost[3], 5432);
	assert_int_equal(p.http_port, 3130);
	assert_int_equal(p.socks_port, 1081);
	assert_true(net_policy_localhost_allowed(&p, 5432));
	assert_false(net_policy_localhost_allowed(&p, 22));
	net_policy_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(host_normalize_lowercases_and_checks_names),
	    cmocka_unit_test(host_pattern_matches_whole_labels_only),
	    cmocka_unit_test(host_address_class_names_special_addresses),
	    cmocka_unit_test(host_pattern_validate_rejects_partial_wildcards),
	    cmocka_unit_test(net_policy_decides_on_the_requested_name),
	    cmocka_unit_test(net_policy_ties_a_pin_to_its_port),
	    cmocka_unit_test(net_policy_refuses_special_addresses_without_an_exact_entry),
	    cmocka_unit_test(net_policy_moves_proxy_ports_away_from_forwarded_ones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
