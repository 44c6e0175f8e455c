/* Unit tests for configuration: what a config file may say, every way it can
 * be wrong (each error names file:line:column), finding the files, and how
 * the global, project and command-line layers merge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "cli/flags.h"
#include "config/config.h"
#include "cli/report.h"
#include "cli/verbs.h"
#include "spec/spec.h"
#include "unit.h"

static int load(struct config *cfg, const char *name, const char *text, enum layer layer,
		struct error *err)
{
	/* An exact-size copy without a NUL, so that reads past len fault. */
	size_t len = strlen(text);
	_cleanup_free_ char *copy = xmalloc(len ? len : 1);
	memcpy(copy, text, len);
	return config_load_text(cfg, name, copy, len, layer, err);
}

static void assert_rule(const struct rule *r, const char *pattern, enum access_level level,
			enum layer layer, const char *origin, size_t index)
{
	if (strcmp(r->pattern, pattern) != 0 || r->level != level || r->layer != layer ||
	    strcmp(r->origin, origin) != 0)
		unit_fail("rule %zu: got %s %s (%s, %s), expected %s %s (%s, %s)", index,
			  access_level_name(r->level), r->pattern, layer_name(r->layer), r->origin,
			  access_level_name(level), pattern, layer_name(layer), origin);
}

static void assert_setting(const struct config_setting *s, bool value, enum layer layer,
			   const char *origin, const char *what)
{
	if (s->value != value || s->layer != layer || strcmp(s->origin, origin) != 0)
		unit_fail("%s: got %d (%s, %s), expected %d (%s, %s)", what, s->value,
			  layer_name(s->layer), s->origin, value, layer_name(layer), origin);
}

static void assert_network(const struct network_config *n, enum network_mode mode, enum layer layer,
			   const char *origin, const char *what)
{
	if (n->mode != mode || n->layer != layer || strcmp(n->origin, origin) != 0)
		unit_fail("%s: got %s (%s, %s), expected %s (%s, %s)", what,
			  network_mode_name(n->mode), layer_name(n->layer), n->origin,
			  network_mode_name(mode), layer_name(layer), origin);
}

static const char valid_config[] = "{\n"
				   "\t// the filesystem rules\n"
				   "\t\"filesystem\": {\n"
				   "\t\t\"presets\": [\"!@lint/python\", \"@git-strict\"],\n"
				   "\t\t\"ro\": [\"src/auth/\", \"config/*/secrets.json\"],\n"
				   "\t\t\"rw\": [\".generated/\"],\n"
				   "\t\t\"exclude\": [\"~/.kube\",],\n"
				   "\t},\n"
				   "\t\"docker\": true,\n"
				   "\t\"read-only\": false,\n"
				   "\t\"network\": false,\n"
				   "}\n";

static void config_loads_every_supported_key_with_its_position(void **state)
{
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(load(&cfg, "g.jsonc", valid_config, LAYER_GLOBAL, &err), 0);
	assert_null(err.msg);

	assert_int_equal(cfg.rules.len, 4);
	assert_rule(&cfg.rules.items[0], "src/auth/", ACCESS_RO, LAYER_GLOBAL, "g.jsonc:5:10", 0);
	assert_rule(&cfg.rules.items[1], "config/*/secrets.json", ACCESS_RO, LAYER_GLOBAL,
		    "g.jsonc:5:23", 1);
	assert_rule(&cfg.rules.items[2], ".generated/", ACCESS_RW, LAYER_GLOBAL, "g.jsonc:6:10", 2);
	assert_rule(&cfg.rules.items[3], "~/.kube", ACCESS_EXCLUDE, LAYER_GLOBAL, "g.jsonc:7:15",
		    3);
	assert_int_equal(cfg.presets.len, 2);
	assert_string_equal(cfg.presets.items[0], "!@lint/python");
	assert_string_equal(cfg.presets.items[1], "@git-strict");
	assert_setting(&cfg.docker, true, LAYER_GLOBAL, "g.jsonc:9:12", "docker");
	assert_setting(&cfg.read_only, false, LAYER_GLOBAL, "g.jsonc:10:15", "read-only");
	assert_network(&cfg.network, NETWORK_NONE, LAYER_GLOBAL, "g.jsonc:11:13", "network");
	assert_int_equal(cfg.files.len, 1);
	assert_string_equal(cfg.files.items[0], "g.jsonc");
	assert_int_equal(cfg.notes.len, 1);
}

static void config_takes_retention_from_the_global_config_only(void **state)
{
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(load(&cfg, "g.json", "{\"retention\": \"14d\"}", LAYER_GLOBAL, &err), 0);
	assert_string_equal(cfg.retention, "14d");
	assert_int_equal(load(&cfg, "p.json", "{\"retention\": \"1d\"}", LAYER_PROJECT, &err), -1);
	unit_assert_contains(err.msg, "\"retention\" belongs in your global config", "project");
	error_release(&err);
	assert_int_equal(load(&cfg, "g.json", "{\"retention\": \"7 days\"}", LAYER_GLOBAL, &err),
			 -1);
	unit_assert_contains(err.msg, "expected a duration", "malformed");
	assert_string_equal(cfg.retention, "14d");
}

static void config_keeps_defaults_when_file_is_empty_object(void **state)
{
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(load(&cfg, "p.json", "{} // nothing\n", LAYER_PROJECT, &err), 0);
	assert_int_equal(cfg.rules.len, 0);
	assert_int_equal(cfg.presets.len, 0);
	assert_setting(&cfg.docker, false, LAYER_BUILTIN, "default", "docker");
	assert_setting(&cfg.read_only, false, LAYER_BUILTIN, "default", "read-only");
	assert_network(&cfg.network, NETWORK_FILTERED, LAYER_BUILTIN, "default", "network");
	assert_int_equal(cfg.network.allow.len, 3);
	assert_string_equal(cfg.network.allow.items[0].name, "@agents");
	assert_int_equal(cfg.files.len, 1);
	assert_true(cfg.limits.tmp.value == CONFIG_TMP_DEFAULT);
	assert_true(cfg.limits.pids.value == CONFIG_PIDS_DEFAULT);
	assert_string_equal(cfg.limits.tmp.origin, "default");
}

static void config_loads_limits_with_units_and_origins(void **state)
{
	static const struct {
		const char *text;
		unsigned long long tmp;
	} cases[] = {
	    {"\"2G\"", 2ULL << 30},	  {"\"2g\"", 2ULL << 30},	{"\"512M\"", 512ULL << 20},
	    {"\"512MiB\"", 512ULL << 20}, {"\"1536k\"", 1536ULL << 10}, {"\"1t\"", 1ULL << 40},
	    {"\"4194304\"", 4194304},	  {"4194304", 4194304},		{"\"3mb\"", 3ULL << 20},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_config_ struct config cfg;
		config_init(&cfg);
		_cleanup_error_ struct error err = ERROR_INIT;
		_cleanup_free_ char *text =
		    xasprintf("{\"limits\": {\"tmp\": %s, \"pids\": 64}}", cases[i].text);
		if (load(&cfg, "p.json", text, LAYER_PROJECT, &err) < 0)
			unit_fail("case %zu: %s", i, err.msg);
		if (cfg.limits.tmp.value != cases[i].tmp)
			unit_fail("case %zu: %llu bytes, expected %llu", i, cfg.limits.tmp.value,
				  cases[i].tmp);
		assert_true(cfg.limits.pids.value == 64);
		assert_string_equal(cfg.limits.tmp.origin, "p.json:1:20");
		assert_int_equal(cfg.limits.tmp.layer, LAYER_PROJECT);
	}
	/* memory, cpus and timeout, with no default of their own. */
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	assert_true(cfg.limits.memory.value == 0 && cfg.limits.cpus.value == 0 &&
		    cfg.limits.timeout.value == 0);
	_cleanup_error_ struct error err = ERROR_INIT;
	static const char text[] =
	    "{\"limits\": {\"memory\": \"4g\", \"cpus\": 0.5, \"timeout\": \"10m\"}}";
	if (load(&cfg, "p.json", text, LAYER_PROJECT, &err) < 0)
		unit_fail("%s", err.msg);
	assert_true(cfg.limits.memory.value == 4ULL << 30);
	assert_true(cfg.limits.cpus.value == 500);
	assert_true(cfg.limits.timeout.value == 600000);
	assert_string_equal(cfg.limits.cpus.origin, "p.json:1:37");
	_cleanup_free_ char *a = config_format_size(1ULL << 30);
	_cleanup_free_ char *b = config_format_size(1536ULL << 10);
	_cleanup_free_ char *c = config_format_size(1000);
	assert_string_equal(a, "1 GiB");
	assert_string_equal(b, "1536 KiB");
	assert_string_equal(c, "1000 bytes");
}

static void config_loads_sockets_with_their_layer_and_origin(void **state)
{
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	if (load(&cfg, "g.json", "{\"sockets\": [\"~/.colima/default/docker.sock\"]}", LAYER_GLOBAL,
		 &err) < 0 ||
	    load(&cfg, "p.json", "{\"sockets\": [\"/srv/app.sock\"]}", LAYER_PROJECT, &err) < 0)
		unit_fail("%s", err.msg);
	assert_int_equal(cfg.sockets.len, 2);
	assert_rule(&cfg.sockets.items[0], "~/.colima/default/docker.sock", ACCESS_RO, LAYER_GLOBAL,
		    "g.json:1:14", 0);
	assert_rule(&cfg.sockets.items[1], "/srv/app.sock", ACCESS_RO, LAYER_PROJECT, "p.json:1:14",
		    1);
	/* Not a filesystem rule of its own: the plan turns each into one. */
	assert_int_equal(cfg.rules.len, 0);
}

/* credentials: only in the global config, each entry checked with its
 * position, the last entry of a name kept for credential_plan. */
static void config_loads_credentials_from_the_global_config_only(void **state)
{
	(void)state;
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(
	    load(&cfg, "g.jsonc",
		 "{\"credentials\": {\"anthropic\": {\"env\": \"MY_KEY\", \"ca\": \"/c.pem\"},\n"
		 " \"x\": {\"file\": \"~/k\", \"hosts\": [\"API.X.example\"], "
		 "\"header\": \"Authorization: Token\", \"base-url-env\": \"X_URL\"}}}",
		 LAYER_GLOBAL, &err),
	    0);
	assert_int_equal(cfg.credentials.len, 2);
	assert_string_equal(cfg.credentials.items[0].name, "anthropic");
	assert_string_equal(cfg.credentials.items[0].env, "MY_KEY");
	assert_string_equal(cfg.credentials.items[0].ca, "/c.pem");
	assert_string_equal(cfg.credentials.items[0].origin, "g.jsonc:1:18");
	assert_string_equal(cfg.credentials.items[1].file, "~/k");
	assert_string_equal(cfg.credentials.items[1].hosts.items[0], "api.x.example");
	assert_string_equal(cfg.credentials.items[1].header, "Authorization: Token");
	static const struct {
		const char *text, *message;
	} bad[] = {
	    {"{\"credentials\": {\"x\": {\"env\": \"A B\"}}}", "is not a variable name"},
	    {"{\"credentials\": {\"x\": {\"env\": \"A\", \"file\": \"/k\"}}}", "both"},
	    {"{\"credentials\": {\"x\": {\"hosts\": [\"10.0.0.1\"]}}}", "is not a host name"},
	    {"{\"credentials\": {\"x\": {\"header\": \"X Y: b\"}}}", "expected a header"},
	    {"{\"credentials\": {\"X Y\": {}}}", "is not a credential name"},
	    {"{\"credentials\": {\"x\": {\"key\": \"sk-123\"}}}", "unknown key \"key\""},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_config_ struct config c2;
		config_init(&c2);
		_cleanup_error_ struct error e2 = ERROR_INIT;
		assert_int_equal(load(&c2, "g.jsonc", bad[i].text, LAYER_GLOBAL, &e2), -1);
		if (!strstr(e2.msg, bad[i].message))
			fail_msg("case %zu: <%s> lacks <%s>", i, e2.msg, bad[i].message);
	}
}

static void config_rejects_invalid_text_naming_file_line_and_column(void **state)
{
	static const struct {
		const char *text;
		const char *where; /* "LINE:COLUMN" */
		const char *message;
	} cases[] = {
	    {"{\"filesytem\": {}}", "1:2",
	     "unknown key \"filesytem\"; did you mean \"filesystem\"? (expected one of: "
	     "\"filesystem\", \"docker\", \"read-only\", \"network\", \"commands\", "
	     "\"secrets\", \"env\", \"audit\", \"limits\", \"sockets\", \"credentials\", "
	     "\"retention\", \"agents\")"},
	    {"{\"agents\": {\"gpt\": {}}}", "1:13", "unknown key \"gpt\" in \"agents\""},
	    {"{\"agents\": {\"claude\": {\"command\": \"my claude\"}}}", "1:35",
	     "agents.claude.command: expected the CLI's name or path"},
	    {"{\"agents\": {\"codex\": {\"cmd\": \"x\"}}}", "1:23",
	     "unknown key \"cmd\" in an agent of \"agents\""},
	    {"{\"credentials\": {\"anthropic\": {\"env\": \"ANTHROPIC_API_KEY\"}}}", "1:17",
	     "\"credentials\" belong in your global config"},
	    {"{\"sockets\": [\"~/.docker/run/*.sock\"]}", "1:14",
	     "in \"sockets\": \"~/.docker/run/*.sock\": a socket is one path, not a pattern "
	     "(no *, ? or [)"},
	    {"{\"sockets\": \"/x.sock\"}", "1:13", "expected an array of paths of unix sockets"},
	    {"{\"limits\": {\"tmp\": \"2X\"}}", "1:20",
	     "expected a size like \"1G\" or \"512M\" (k, m, g or t) for \"tmp\", but the "
	     "unit is not one of k, m, g or t"},
	    {"{\"limits\": {\"tmp\": \"G\"}}", "1:20",
	     "expected a size like \"1G\" or \"512M\" (k, m, g or t) for \"tmp\", but it "
	     "does not start with a number"},
	    {"{\"limits\": {\"tmp\": \"99999999999999999999k\"}}", "1:20",
	     "expected a size like \"1G\" or \"512M\" (k, m, g or t) for \"tmp\", but it is "
	     "too large"},
	    {"{\"limits\": {\"tmp\": \"17179869184T\"}}", "1:20",
	     "expected a size like \"1G\" or \"512M\" (k, m, g or t) for \"tmp\", but it is "
	     "too large"},
	    {"{\"limits\": {\"tmp\": \"1k\"}}", "1:20", "\"tmp\" must be from 1 MiB to 1 TiB"},
	    {"{\"limits\": {\"tmp\": -5}}", "1:20",
	     "expected a size like \"1G\" or \"512M\" (k, m, g or t) for \"tmp\", but it is "
	     "negative"},
	    {"{\"limits\": {\"tmp\": true}}", "1:20",
	     "expected a size like \"1G\" or \"512M\" for \"tmp\", not a boolean"},
	    {"{\"limits\": {\"pids\": \"100\"}}", "1:21",
	     "expected a number like 1024 for \"pids\", not a string"},
	    {"{\"limits\": {\"pids\": 3}}", "1:21", "\"pids\" must be from 16 to 4194304"},
	    {"{\"limits\": {\"memroy\": \"1G\"}}", "1:13",
	     "unknown key \"memroy\" in \"limits\"; did you mean \"memory\"?"},
	    {"{\"limits\": {\"memory\": \"1.5g\"}}", "1:23",
	     "expected a size like \"1G\" or \"512M\" (k, m, g or t) for \"memory\", but it has a "
	     "fraction (write 1536m, not 1.5g)"},
	    {"{\"limits\": {\"memory\": \"1m\"}}", "1:23",
	     "\"memory\" must be from 16 MiB to 1024 TiB"},
	    {"{\"limits\": {\"timeout\": \"10\"}}", "1:24",
	     "expected a duration like \"10m\" or \"90s\" (ms, s, m, h or d) for \"timeout\", but "
	     "it "
	     "has no unit"},
	    {"{\"limits\": {\"timeout\": 600}}", "1:24",
	     "expected a duration like \"10m\" or \"90s\" (ms, s, m, h or d) for \"timeout\", not "
	     "a "
	     "number"},
	    {"{\"limits\": {\"timeout\": \"10ms\"}}", "1:24",
	     "\"timeout\" must be from 100ms to 366 days"},
	    {"{\"limits\": {\"cpus\": -1}}", "1:21",
	     "expected a number of CPUs like 2 or 0.5 for \"cpus\", but it is negative"},
	    {"{\"limits\": {\"cpus\": 0}}", "1:21",
	     "expected a number of CPUs like 2 or 0.5 for \"cpus\", but it is zero"},
	    {"{\"limits\": {\"cpus\": \"two\"}}", "1:21",
	     "expected a number of CPUs like 2 or 0.5 for \"cpus\", but it does not start with a "
	     "number"},
	    {"{\"limits\": 5}", "1:12", "expected an object like"},
	    {"{\"dockr\": true}", "1:2", "unknown key \"dockr\"; did you mean \"docker\"?"},
	    {"{\"readonly\": true}", "1:2",
	     "unknown key \"readonly\"; did you mean \"read-only\"?"},
	    {"{\n\t\"docker\": true,\n\t\"netwrok\": false\n}", "3:2",
	     "unknown key \"netwrok\"; did you mean \"network\"?"},
	    {"{\"filesystem\": {\"r0\": []}}", "1:17",
	     "unknown key \"r0\" in \"filesystem\"; did you mean \"ro\"?"},
	    {"{\"filesystem\": {\"readonly\": []}}", "1:17",
	     "unknown key \"readonly\" in \"filesystem\" (expected one of: \"presets\", \"ro\", "
	     "\"rw\", \"exclude\")"},
	    {"{\"docker\": \"yes\"}", "1:12",
	     "expected true or false for \"docker\", not a string"},
	    {"{\"read-only\": 1}", "1:15",
	     "expected true or false for \"read-only\", not a number"},
	    {"{\"docker\": null}", "1:12", "expected true or false for \"docker\", not null"},
	    {"{\"network\": \"filtered\"}", "1:13",
	     "expected true (host network), false (no network) or an object like {\"allow\": "
	     "[...]} (filtered) for \"network\", not a string"},
	    {"{\"network\": {\"alow\": []}}", "1:14",
	     "unknown key \"alow\" in \"network\"; did you mean \"allow\"?"},
	    {"{\"network\": {\"allow\": \"x.com\"}}", "1:23",
	     "expected an array of host names, \"*.domain\" patterns or @groups for \"allow\", "
	     "not a string"},
	    {"{\"network\": {\"allow\": [\"a.*.com\"]}}", "1:24",
	     "in \"allow\": host pattern \"a.*.com\": \"*\" may only stand alone or as the "
	     "first label"},
	    {"{\"network\": {\"deny\": [\"http://x.com/\"]}}", "1:23",
	     "in \"deny\": host pattern \"http://x.com/\" is not a host name"},
	    {"{\"network\": {\"allow\": [\"@agent\"]}}", "1:24",
	     "unknown host group \"@agent\" in \"allow\"; did you mean \"@agents\"?"},
	    {"{\"network\": {\"allow\": [\"*.10.0.0.1\"]}}", "1:24",
	     "in \"allow\": host pattern \"*.10.0.0.1\": a wildcard cannot apply to an IP "
	     "address"},
	    {"{\"network\": {\"localhost\": [0]}}", "1:28",
	     "expected a port number from 1 to 65535 in \"localhost\", but element 1 is out of "
	     "range"},
	    {"{\"network\": {\"localhost\": [\"80\"]}}", "1:28",
	     "expected a port number from 1 to 65535 in \"localhost\", but element 1 is a "
	     "string"},
	    {"{\"network\": {\"localhost\": 80}}", "1:27",
	     "expected an array of port numbers like [5432, 3000] for \"localhost\", not a number"},
	    {"{\"network\": {\"resolve\": {\"a.test\": \"mirror\"}}}", "1:36",
	     "expected an IPv4 or IPv6 address, with an optional port (\"10.0.0.5:8080\", "
	     "\"[2001:db8::1]:8443\"), for \"a.test\" in \"resolve\""},
	    {"{\"network\": {\"resolve\": {\"a.test\": \"10.0.0.5:0\"}}}", "1:36",
	     "expected an IPv4 or IPv6 address, with an optional port"},
	    {"{\"network\": {\"resolve\": {\"a.test\": \"10.0.0.5:65536\"}}}", "1:36",
	     "expected an IPv4 or IPv6 address, with an optional port"},
	    {"{\"network\": {\"resolve\": {\"a.test\": \"10.0.0.5:\"}}}", "1:36",
	     "expected an IPv4 or IPv6 address, with an optional port"},
	    {"{\"network\": {\"resolve\": {\"a.test\": \"[10.0.0.5]:80\"}}}", "1:36",
	     "expected an IPv4 or IPv6 address, with an optional port"},
	    {"{\"network\": {\"resolve\": {\"a.test\": \"[::1]x\"}}}", "1:36",
	     "expected an IPv4 or IPv6 address, with an optional port"},
	    {"{\"network\": {\"resolve\": {\"10.0.0.1\": \"10.0.0.2\"}}}", "1:26",
	     "\"resolve\" key \"10.0.0.1\" is not a host name"},
	    {"{\"network\": {\"resolve\": []}}", "1:25",
	     "expected an object like {\"mirror.internal\": \"10.0.0.5\"} for \"resolve\", not "
	     "an array"},
	    {"{\"filesystem\": []}", "1:16",
	     "expected an object like {\"ro\": [...], \"rw\": [...]} for \"filesystem\", not an "
	     "array"},
	    {"{\"filesystem\": {\"ro\": \"src\"}}", "1:23",
	     "expected an array of paths for \"ro\", not a string"},
	    {"{\"filesystem\": {\"exclude\": {}}}", "1:28",
	     "expected an array of paths for \"exclude\", not an object"},
	    {"{\"filesystem\": {\"rw\": [\"a\", 3]}}", "1:29",
	     "expected an array of paths for \"rw\", but element 2 is a number"},
	    {"{\"filesystem\": {\"presets\": [true]}}", "1:29",
	     "expected an array of preset names like \"@git\" or \"!@lint/python\" for "
	     "\"presets\", but element 1 is a boolean"},
	    {"{\"docker\": true, \"docker\": false}", "1:18",
	     "duplicate key \"docker\" (first at 1:2)"},
	    {"{\n  \"filesystem\": {\n    \"ro\": [],\n    \"ro\": []\n  }\n}", "4:5",
	     "duplicate key \"ro\" (first at 3:5)"},
	    {"{\"filesystem\": {\"presets\": [\"@gti\"]}}", "1:29",
	     "unknown preset \"@gti\"; did you mean \"@git\"? (known presets: @all, @base, "
	     "@caches, @agents, @git, @git-strict, @agent-configs, @lint/all, @lint/ts, "
	     "@lint/go, @lint/python; prefix with \"!\" to remove one)"},
	    {"{\"filesystem\": {\"presets\": [\"@base\", \"!@lint/pyton\"]}}", "1:38",
	     "unknown preset \"!@lint/pyton\"; did you mean \"!@lint/python\"?"},
	    {"{\"filesystem\": {\"presets\": [\"base\"]}}", "1:29",
	     "unknown preset \"base\"; did you mean \"@base\"?"},
	    {"{\"filesystem\": {\"presets\": [\"@everything\"]}}", "1:29",
	     "unknown preset \"@everything\" (known presets: @all,"},
	    {"{\"filesystem\": {\"ro\": [\"a/**\"]}}", "1:24",
	     "in \"ro\": invalid glob \"a/**\": \"**\" is not supported"},
	    {"{\"filesystem\": {\"exclude\": [\"ok\", \"[abc\"]}}", "1:35",
	     "in \"exclude\": invalid glob \"[abc\": \"[\" at offset 0 is not closed"},
	    {"{\"filesystem\": {\"rw\": [\"x\\\\\"]}}", "1:24",
	     "in \"rw\": invalid glob \"x\\\": trailing backslash"},
	    {"{\"filesystem\": {\"rw\": [\"\"]}}", "1:24", "in \"rw\": empty path"},
	    {"[\"ro\"]", "1:1", "expected a JSON object at the top level, not an array"},
	    {"null // nothing", "1:1", "expected a JSON object at the top level, not null"},
	    {"{\"docker\": tru}", "1:12", "unquoted word 'tru'; strings need double quotes"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_config_ struct config cfg;
		config_init(&cfg);
		_cleanup_error_ struct error err = ERROR_INIT;
		if (load(&cfg, "t.jsonc", cases[i].text, LAYER_PROJECT, &err) != -1)
			unit_fail("case %zu <%s>: accepted", i, cases[i].text);
		if (err.kind != ERROR_CONFIG)
			unit_fail("case %zu: code %d, expected %d", i, (int)err.kind,
				  (int)ERROR_CONFIG);
		_cleanup_free_ char *expected = xasprintf("loading config from t.jsonc:%s: %s",
							  cases[i].where, cases[i].message);
		unit_assert_starts_with(err.msg, expected, "case %zu", i);
		if (cfg.files.len != 0)
			unit_fail("case %zu: a rejected file is recorded as loaded", i);
	}
}

static void config_load_file_names_the_file_in_errors(void **state)
{
	const char *dir = *state;
	unit_write(dir, "bad.jsonc", "{\n  \"docker\": true,\n  \"rx\": []\n}\n");
	unit_mkdir(dir, "dir.json");
	/* Just over the 1 MiB limit: a valid document, to show size alone counts. */
	_cleanup_free_ char *huge = xasprintf("{\"filesystem\": {\"ro\": [\"%0*d\"]}}", 1 << 20, 0);
	unit_write(dir, "big.json", huge);
	static const struct {
		const char *name;
		const char *message;
	} cases[] = {
	    {"bad.jsonc", ":3:3: unknown key \"rx\" (expected one of: \"filesystem\","},
	    {"missing.json", ": No such file or directory"},
	    {"dir.json", ": not a regular file"},
	    {"big.json", ": larger than 1048576 bytes"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_config_ struct config cfg;
		config_init(&cfg);
		_cleanup_error_ struct error err = ERROR_INIT;
		_cleanup_free_ char *path = unit_path(dir, cases[i].name);
		if (config_load_file(&cfg, path, LAYER_GLOBAL, &err) != -1)
			unit_fail("case %zu <%s>: accepted", i, path);
		_cleanup_free_ char *expected =
		    xasprintf("loading config from %s%s", path, cases[i].message);
		unit_assert_starts_with(err.msg, expected, "case %zu", i);
		assert_int_equal(err.kind, ERROR_CONFIG);
	}

	unit_write(dir, "good.json", "{\"filesystem\": {\"ro\": [\"a\"]}}");
	_cleanup_free_ char *good = unit_path(dir, "good.json");
	_cleanup_free_ char *origin = xasprintf("%s:1:24", good);
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(config_load_file(&cfg, good, LAYER_GLOBAL, &err), 0);
	assert_int_equal(cfg.rules.len, 1);
	assert_rule(&cfg.rules.items[0], "a", ACCESS_RO, LAYER_GLOBAL, origin, 0);
	assert_int_equal(cfg.files.len, 1);
	assert_string_equal(cfg.files.items[0], good);
}

static void config_find_picks_the_one_existing_file_and_refuses_both(void **state)
{
	const char *dir = *state;
	_cleanup_error_ struct error err = ERROR_INIT;
	char *found = (char *)dir;
	assert_int_equal(config_find(dir, "config", &found, &err), 0);
	assert_null(found);

	static const char *const names[] = {"config.json", "config.jsonc"};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		unit_write(dir, names[i], "{}");
		_cleanup_free_ char *path = unit_path(dir, names[i]);
		_cleanup_free_ char *got = NULL;
		assert_int_equal(config_find(dir, "config", &got, &err), 0);
		if (!got || strcmp(got, path) != 0)
			unit_fail("case %zu: found <%s>, expected <%s>", i, got, path);
		if (i == 0)
			assert_int_equal(remove(path), 0);
	}

	unit_write(dir, "config.json", "{}");
	found = (char *)dir;
	assert_int_equal(config_find(dir, "config", &found, &err), -1);
	assert_null(found);
	assert_int_equal(err.kind, ERROR_CONFIG);
	_cleanup_free_ char *expected =
	    xasprintf("both %s/config.json and %s/config.jsonc exist; keep one of them", dir, dir);
	assert_string_equal(err.msg, expected);
	assert_non_null(err.hint);
}

static void config_merges_layers_by_concatenating_arrays_and_overriding_scalars(void **state)
{
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(
	    load(&cfg, "g.json",
		 "{\"docker\": true, \"network\": false,\n"
		 " \"filesystem\": {\"presets\": [\"!@caches\"], \"ro\": [\"a\", \"b\"]}}",
		 LAYER_GLOBAL, &err),
	    0);
	assert_int_equal(load(&cfg, "p.json",
			      "{\"filesystem\": {\"rw\": [\"c\"], \"presets\": [\"@caches\"],\n"
			      "  \"ro\": [\"a\"]},\n"
			      " \"docker\": false, \"read-only\": true}",
			      LAYER_PROJECT, &err),
			 0);

	assert_int_equal(cfg.rules.len, 4);
	assert_rule(&cfg.rules.items[0], "a", ACCESS_RO, LAYER_GLOBAL, "g.json:2:49", 0);
	assert_rule(&cfg.rules.items[1], "b", ACCESS_RO, LAYER_GLOBAL, "g.json:2:54", 1);
	assert_rule(&cfg.rules.items[2], "c", ACCESS_RW, LAYER_PROJECT, "p.json:1:24", 2);
	assert_rule(&cfg.rules.items[3], "a", ACCESS_RO, LAYER_PROJECT, "p.json:2:10", 3);
	assert_int_equal(cfg.presets.len, 2);
	assert_string_equal(cfg.presets.items[0], "!@caches");
	assert_string_equal(cfg.presets.items[1], "@caches");
	assert_setting(&cfg.docker, false, LAYER_PROJECT, "p.json:3:12", "docker");
	assert_network(&cfg.network, NETWORK_NONE, LAYER_GLOBAL, "g.json:1:29", "network");
	assert_setting(&cfg.read_only, true, LAYER_PROJECT, "p.json:3:32", "read-only");
	assert_int_equal(cfg.files.len, 2);
	assert_string_equal(cfg.files.items[0], "g.json");
	assert_string_equal(cfg.files.items[1], "p.json");
}

/* A home, a global config under $XDG_CONFIG_HOME, a project with its own
 * config, and another config file for --config. */
static void make_layers(const char *dir)
{
	unit_mkdir(dir, "home");
	unit_mkdir(dir, "xdg");
	unit_mkdir(dir, "xdg/agent-sandbox");
	unit_write(dir, "xdg/agent-sandbox/config.jsonc",
		   "{\"docker\": true, \"network\": false, \"filesystem\": {\"ro\": [\"g\"]}}");
	unit_mkdir(dir, "proj");
	unit_write(dir, "proj/.agent-sandbox.jsonc",
		   "{\"network\": true, \"read-only\": true, \"filesystem\": {\"rw\": [\"p\"]}}");
	unit_write(dir, "other.jsonc", "{\"filesystem\": {\"exclude\": [\"o\"]}}");
}

static int build_session(const char *dir, char **argv, struct sandbox_spec *s, struct error *err)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	_cleanup_(cli_release) struct cli cli;
	if (cli_parse(argc, argv, &cli, err) < 0)
		unit_fail("cli_parse: %s", err->msg);
	_cleanup_free_ char *home = xasprintf("HOME=%s/home", dir);
	_cleanup_free_ char *xdg = xasprintf("XDG_CONFIG_HOME=%s/xdg", dir);
	char *envp[] = {home, xdg, NULL};
	struct sandbox_request req;
	cli_request(&cli, envp, &req);
	return sandbox_plan(&req, s, err);
}

static void config_layers_global_then_project_then_command_line(void **state)
{
	const char *dir = *state;
	make_layers(dir);
	_cleanup_free_ char *proj = unit_path(dir, "proj");
	char *argv[] = {"agent-sandbox", "-C", proj,	 "--read-only=false",
			"--exclude",	 "c",  "policy", NULL};
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (build_session(dir, argv, &s, &err) < 0)
		unit_fail("session_build: %s", err.msg);

	_cleanup_free_ char *global = unit_path(dir, "xdg/agent-sandbox/config.jsonc");
	_cleanup_free_ char *project = unit_path(dir, "proj/.agent-sandbox.jsonc");
	_cleanup_free_ char *g_origin = xasprintf("%s:1:58", global);
	_cleanup_free_ char *p_origin = xasprintf("%s:1:60", project);
	_cleanup_free_ char *docker_origin = xasprintf("%s:1:12", global);
	_cleanup_free_ char *network_origin = xasprintf("%s:1:13", project);
	assert_int_equal(s.cfg.files.len, 2);
	assert_string_equal(s.cfg.files.items[0], global);
	assert_string_equal(s.cfg.files.items[1], project);
	assert_int_equal(s.cfg.rules.len, 3);
	assert_rule(&s.cfg.rules.items[0], "g", ACCESS_RO, LAYER_GLOBAL, g_origin, 0);
	assert_rule(&s.cfg.rules.items[1], "p", ACCESS_RW, LAYER_PROJECT, p_origin, 1);
	assert_rule(&s.cfg.rules.items[2], "c", ACCESS_EXCLUDE, LAYER_CLI, "--exclude", 2);
	assert_setting(&s.cfg.docker, true, LAYER_GLOBAL, docker_origin, "docker");
	assert_network(&s.cfg.network, NETWORK_HOST, LAYER_PROJECT, network_origin, "network");
	assert_setting(&s.cfg.read_only, false, LAYER_CLI, "--read-only", "read-only");
}

static void config_flag_replaces_project_config_when_given(void **state)
{
	const char *dir = *state;
	make_layers(dir);
	_cleanup_free_ char *proj = unit_path(dir, "proj");
	_cleanup_free_ char *other = unit_path(dir, "other.jsonc");
	char *argv[] = {"agent-sandbox", "-C", proj, "-c", other, "policy", NULL};
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (build_session(dir, argv, &s, &err) < 0)
		unit_fail("session_build: %s", err.msg);

	_cleanup_free_ char *global = unit_path(dir, "xdg/agent-sandbox/config.jsonc");
	_cleanup_free_ char *o_origin = xasprintf("%s:1:29", other);
	assert_int_equal(s.cfg.files.len, 2);
	assert_string_equal(s.cfg.files.items[0], global);
	assert_string_equal(s.cfg.files.items[1], other);
	assert_int_equal(s.cfg.rules.len, 2);
	assert_rule(&s.cfg.rules.items[1], "o", ACCESS_EXCLUDE, LAYER_PROJECT, o_origin, 1);
	/* The project file's network=true and read-only=true were never read. */
	assert_int_equal(s.cfg.network.mode, NETWORK_NONE);
	assert_int_equal(s.cfg.network.layer, LAYER_GLOBAL);
	assert_false(s.cfg.read_only.value);
	assert_int_equal(s.cfg.read_only.layer, LAYER_BUILTIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(config_loads_every_supported_key_with_its_position),
	    cmocka_unit_test(config_keeps_defaults_when_file_is_empty_object),
	    cmocka_unit_test(config_loads_limits_with_units_and_origins),
	    cmocka_unit_test(config_loads_sockets_with_their_layer_and_origin),
	    cmocka_unit_test(config_takes_retention_from_the_global_config_only),
	    cmocka_unit_test(config_rejects_invalid_text_naming_file_line_and_column),
	    cmocka_unit_test(config_loads_credentials_from_the_global_config_only),
	    unit_tmp_test(config_load_file_names_the_file_in_errors),
	    unit_tmp_test(config_find_picks_the_one_existing_file_and_refuses_both),
	    cmocka_unit_test(config_merges_layers_by_concatenating_arrays_and_overriding_scalars),
	    unit_tmp_test(config_layers_global_then_project_then_command_line),
	    unit_tmp_test(config_flag_replaces_project_config_when_given),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
