/* Unit tests for the trust rule as the plan applies it: a global config and
 * a project config on a scratch tree, planned with sandbox_plan, and the
 * verdict and loosenings of the spec checked, one table row per kind of
 * loosening and tightening. "@D@" in a config stands for the scratch
 * directory, which lies under the sandbox's private /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cmocka.h>

#include "base/cleanup.h"
#include "base/strbuf.h"
#include "spec/spec.h"
#include "unit.h"

struct row {
	const char *global;  /* the global config, or NULL for none */
	const char *project; /* the project config */
	bool host_network;   /* the request asks for the host network (--network=true) */
	const char *want[3]; /* a substring of each loosening; none: it only tightens */
};

/* The tree: a project with a wrapper script, a home with ~/.ssh and an
 * ssh-agent socket and a cache in it, a directory outside both, a Docker socket
 * stand-in. */
static void make_tree(const char *dir)
{
	static const char *const dirs[] = {"proj",	  "proj/src", "home", "home/.ssh",
					   "home/.cache", "outside",  "xdg",  "xdg/agent-sandbox"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		unit_mkdir(dir, dirs[i]);
	unit_write(dir, "proj/wrap.sh", "#!/bin/sh\nexec \"$AGENT_SANDBOX_REAL\" \"$@\"\n");
	_cleanup_free_ char *wrap = unit_path(dir, "proj/wrap.sh");
	if (chmod(wrap, 0755) < 0)
		unit_fail("chmod %s: %s", wrap, strerror(errno));
	unit_write(dir, "outside/note", "host data\n");
	unit_write(dir, "docker.sock", "");

	_cleanup_free_ char *sock = unit_path(dir, "home/agent.sock");
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(addr.sun_path))
		unit_fail("socket path too long: %s", sock);
	memcpy(addr.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		unit_fail("making the socket %s: %s", sock, strerror(errno));
	close(fd);
}

static char *expand(const char *text, const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = text; *p;) {
		if (!strncmp(p, "@D@", 3)) {
			strbuf_addstr(&sb, dir);
			p += 3;
		} else {
			strbuf_addch(&sb, *p++);
		}
	}
	return strbuf_detach(&sb);
}

static void write_config(const char *dir, const char *rel, const char *text)
{
	_cleanup_free_ char *path = unit_path(dir, rel);
	if (!text) {
		if (unlink(path) < 0 && errno != ENOENT)
			unit_fail("removing %s: %s", path, strerror(errno));
		return;
	}
	_cleanup_free_ char *expanded = expand(text, dir);
	unit_write(dir, rel, expanded);
}

static int plan_row(const char *dir, const struct row *row, struct sandbox_spec *s,
		    struct error *err)
{
	write_config(dir, "xdg/agent-sandbox/config.json", row->global);
	write_config(dir, "proj/.agent-sandbox.json", row->project);
	_cleanup_free_ char *cwd = unit_path(dir, "proj");
	_cleanup_free_ char *home = xasprintf("HOME=%s/home", dir);
	_cleanup_free_ char *xdg = xasprintf("XDG_CONFIG_HOME=%s/xdg", dir);
	_cleanup_free_ char *state = xasprintf("XDG_STATE_HOME=%s/state", dir);
	_cleanup_free_ char *docker = xasprintf("DOCKER_HOST=unix://%s/docker.sock", dir);
	_cleanup_free_ char *ssh = xasprintf("SSH_AUTH_SOCK=%s/home/agent.sock", dir);
	char *envp[] = {home, xdg, state, docker, ssh, "PATH=/usr/bin:/bin", NULL};
	const struct sandbox_request req = {
	    .cwd = cwd,
	    .envp = envp,
	    .network = row->host_network ? REQUEST_ON : REQUEST_UNSET,
	    .docker = REQUEST_UNSET,
	    .read_only = REQUEST_UNSET,
	};
	return sandbox_plan(&req, s, err);
}

/* clang-format off */
static const struct row rows[] = {
    /* Settings: read-only on < off, docker off < on, audit on < off. */
    {.global = "{\"read-only\": true}", .project = "{\"read-only\": false}",
     .want = {"1:15: \"read-only\": false makes the project writable (read-only by "}},
    {.project = "{\"read-only\": true, \"audit\": true, \"docker\": false}"},
    {.project = "{\"docker\": true}",
     .want = {"1:12: \"docker\": true exposes the Docker socket"}},
    {.global = "{\"docker\": true}", .project = "{\"docker\": true}"},
    {.project = "{\"audit\": false}", .want = {"1:11: \"audit\": false turns the audit log off"}},
    /* Network: none < filtered < host; more hosts, ports, pins. */
    {.project = "{\"network\": true}",
     .want = {"1:13: \"network\": true gives the sandbox the host network (was filtered, by "
	      "the default)"}},
    {.global = "{\"network\": true}", .project = "{\"network\": true}"},
    {.project = "{\"network\": true}", .host_network = true},
    {.project = "{\"network\": false}"},
    {.global = "{\"network\": false}", .project = "{\"network\": {}}",
     .want = {"1:13: \"network\": {...} opens the filtered network (was none"}},
    {.project = "{\"network\": {\"allow\": [\"@agents\", \"example.org\"]}}",
     .want = {"1:35: \"allow\": \"example.org\" lets the sandbox reach more hosts"}},
    {.global = "{\"network\": true}", .project = "{\"network\": {\"allow\": [\"example.org\"]}}"},
    {.project = "{\"network\": {\"deny\": [\"github.com\"]}}"},
    {.project = "{\"network\": {\"localhost\": [5432]}}",
     .want = {"1:28: \"localhost\": 5432 opens the host's loopback port 5432"}},
    {.global = "{\"network\": {\"localhost\": [5432]}}",
     .project = "{\"network\": {\"localhost\": [5432]}}"},
    {.project = "{\"network\": {\"resolve\": {\"a.example\": \"10.0.0.5\"}}}",
     .want = {"1:26: \"resolve\": \"a.example\" pins a name to 10.0.0.5"}},
    /* A pin's port is part of the pin: another port, or none (80 and
     * 443), is another pin; the same pin spelt otherwise is not. */
    {.global = "{\"network\": {\"resolve\": {\"a.example\": \"127.0.0.1:8080\"}}}",
     .project = "{\"network\": {\"resolve\": {\"a.example\": \"127.0.0.1:22\"}}}",
     .want = {"1:26: \"resolve\": \"a.example\" pins a name to 127.0.0.1:22"}},
    {.global = "{\"network\": {\"resolve\": {\"a.example\": \"127.0.0.1:8080\"}}}",
     .project = "{\"network\": {\"resolve\": {\"a.example\": \"127.0.0.1\"}}}",
     .want = {"1:26: \"resolve\": \"a.example\" pins a name to 127.0.0.1,"}},
    {.global = "{\"network\": {\"resolve\": {\"a.example\": \"[::1]:8080\"}}}",
     .project = "{\"network\": {\"resolve\": {\"a.example\": \"[0::0001]:8080\"}}}"},
    /* Commands: blocked, then @git, then a script or raw. */
    {.project = "{\"commands\": {\"git\": true}}",
     .want = {"1:22: \"commands\" \"git\": raw replaces @git (by the default)"}},
    {.project = "{\"commands\": {\"git\": \"./wrap.sh\"}}",
     .want = {"1:22: \"commands\" \"git\": ./wrap.sh replaces @git"}},
    {.global = "{\"commands\": {\"rm\": false}}", .project = "{\"commands\": {\"rm\": true}}",
     .want = {"\"commands\" \"rm\": raw replaces blocked (by "}},
    {.project = "{\"commands\": {\"rm\": false, \"git\": \"@git\", \"curl\": \"./wrap.sh\"}}"},
    /* The environment: filtered < passed. */
    {.project = "{\"env\": {\"filter-secrets\": false}}",
     .want = {"1:28: \"filter-secrets\": false passes variables that look like secrets"}},
    {.project = "{\"env\": {\"allow\": [\"NODE_ENV\", \"GITHUB_TOKEN\", \"MY_*\"]}}",
     .want = {"1:32: \"env.allow\": \"GITHUB_TOKEN\" passes a variable",
	      "1:48: \"env.allow\": \"MY_*\" passes variables"}},
    {.global = "{\"env\": {\"allow\": [\"GITHUB_TOKEN\"]}}",
     .project = "{\"env\": {\"allow\": [\"GITHUB_TOKEN\", \"!DEBUG\"]}}"},
    {.project = "{\"env\": {\"block\": [\"HOME_*\", \"!AWS_*\"]}}",
     .want = {"1:30: \"env.block\": \"!AWS_*\" lifts a block"}},
    {.project = "{\"env\": {\"set\": {\"NODE_ENV\": \"test\", \"API_TOKEN\": \"x\"}}}",
     .want = {"1:38: \"env.set\": \"API_TOKEN\" sets a variable that is filtered otherwise"}},
    /* Secret files: masked < unmasked, on the settings. */
    {.project = "{\"secrets\": {\"patterns\": [\"*.secret\", \"!*.pem\"]}}",
     .want = {"1:39: \"secrets.patterns\": \"!*.pem\" stops masking files named *.pem"}},
    {.project = "{\"secrets\": {\"allow\": [\"README\", \".env\", \"*.pem\"]}}",
     .want = {"1:34: \"secrets.allow\": \".env\" unmasks secret files",
	      "1:42: \"secrets.allow\": \"*.pem\" unmasks secret files"}},
    /* The @git guard takes the config files git reads at the start as
     * the sandbox's own. */
    {.project = "{\"env\": {\"set\": {\"GIT_CONFIG_GLOBAL\": \"@D@/proj/g\"}}}",
     .want = {"1:18: \"env.set\": \"GIT_CONFIG_GLOBAL\" chooses the config files git reads"}},
    {.global = "{\"env\": {\"set\": {\"XDG_CONFIG_HOME\": \"@D@/xdg\"}}}",
     .project = "{\"env\": {\"set\": {\"XDG_CONFIG_HOME\": \"@D@/xdg\"}}}"},
    /* A backslash escapes in the glob: this names DEPLOY_TOKEN. */
    {.project = "{\"env\": {\"allow\": [\"DEPLOY_TO\\\\KEN\"]}}",
     .want = {"1:20: \"env.allow\": \"DEPLOY_TO\\KEN\" passes a variable"}},
    /* A backslash escapes in the glob: these name .env and .env.local. */
    {.project = "{\"secrets\": {\"allow\": [\"\\\\.env\", \".en\\\\v.local\"]}}",
     .want = {"1:24: \"secrets.allow\": \"\\.env\" unmasks secret files",
	      "1:34: \"secrets.allow\": \".en\\v.local\" unmasks secret files"}},
    {.project = "{\"secrets\": {\"allow\": [\".env.example\"], \"skip\": [\"!node_modules\"]}}"},
    {.project = "{\"secrets\": {\"skip\": [\"vendor\"]}}",
     .want = {"1:23: \"secrets.skip\": \"vendor\" leaves secrets in such directories"}},
    /* Presets removed, as far as the policy had them. */
    {.project = "{\"filesystem\": {\"presets\": [\"!@git\"]}}",
     .want = {"1:29: \"!@git\" removes the protections of the @git preset"}},
    {.global = "{\"filesystem\": {\"presets\": [\"!@git\"]}}",
     .project = "{\"filesystem\": {\"presets\": [\"!@git\"]}}"},
    /* A preset the global config removed, added back: its rules are
     * judged like the project's own. */
    {.global = "{\"filesystem\": {\"presets\": [\"!@caches\"]}}",
     .project = "{\"filesystem\": {\"presets\": [\"@git-strict\", \"@caches\"]}}",
     .want = {"1:44: \"@caches\" adds rules that make @D@/home/.cache writable (it was "
	      "read-only, by @base)"}},
    {.project = "{\"filesystem\": {\"presets\": [\"@caches\", \"@git-strict\"]}}"},
    /* Paths: private < hidden < ro < rw. */
    {.project = "{\"filesystem\": {\"rw\": [\"src\", \"./new\"], \"ro\": [\"src\"], "
		"\"exclude\": [\"src\"]}}"},
    {.project = "{\"filesystem\": {\"rw\": [\"~/notes\"]}}",
     .want = {"1:24: \"rw\": \"~/notes\" makes a path outside the project writable"}},
    {.project = "{\"filesystem\": {\"ro\": [\"~/.ssh\"]}}",
     .want = {"1:24: \"ro\": \"~/.ssh\" makes @D@/home/.ssh read-only (it was hidden, by "}},
    {.project = "{\"filesystem\": {\"rw\": [\"/usr\"]}}",
     .want = {"\"rw\": \"/usr\" makes a path outside the project writable"}},
    {.project = "{\"filesystem\": {\"ro\": [\"/usr\"]}}"},
    /* The host-socket rules are on both sides: a socket hidden without
     * the project config and shown with it loosens, though ~ is
     * read-only. */
    {.project = "{\"filesystem\": {\"ro\": [\"~/agent.sock\"]}}",
     .want = {"makes @D@/home/agent.sock read-only (it was hidden, by ssh-agent socket"}},
    {.project = "{\"filesystem\": {\"exclude\": [\"~/agent.sock\"]}}"},
    /* The private /tmp and /run count as private, not as writable. */
    {.project = "{\"filesystem\": {\"ro\": [\"@D@/outside\"]}}",
     .want = {"makes @D@/outside read-only (it was private to the sandbox, under the "
	      "sandbox's own /tmp)"}},
    {.project = "{\"filesystem\": {\"exclude\": [\"@D@/outside/note\"]}}",
     .want = {"makes @D@/outside/note hidden (it was private to the sandbox, under the "
	      "sandbox's own /tmp)"}},
    {.project = "{\"filesystem\": {\"ro\": [\"/run\"]}}",
     .want = {"makes /run read-only (it was private to the sandbox, under the sandbox's "
	      "own /run)"}},
    /* Every loosening of a file, each once. */
    {.project = "{\"docker\": true, \"network\": true, \"filesystem\": {\"rw\": [\"~/x\"]}}",
     .want = {"1:12: \"docker\": true", "1:29: \"network\": true", "1:57: \"rw\": \"~/x\""}},
};
/* clang-format on */

static size_t wanted(const struct row *row)
{
	size_t n = 0;
	while (n < ARRAY_SIZE(row->want) && row->want[n])
		n++;
	return n;
}

static void trust_compares_the_plans_without_and_with_the_project_config(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	_cleanup_free_ char *project = unit_path(dir, "proj/.agent-sandbox.json");
	_cleanup_free_ char *prefix = xasprintf("%s:", project);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		_cleanup_sandbox_spec_ struct sandbox_spec s;
		_cleanup_error_ struct error err = ERROR_INIT;
		if (plan_row(dir, &rows[i], &s, &err) < 0)
			unit_fail("row %zu (%s): %s", i, rows[i].project, err.msg);
		const struct strv *found = &s.trust.loosenings;
		size_t n = wanted(&rows[i]);
		if (found->len != n)
			unit_fail("row %zu (%s): %zu loosenings, expected %zu; first: %s", i,
				  rows[i].project, found->len, n,
				  found->len ? found->items[0] : "(none)");
		assert_int_equal(s.trust.state, n ? TRUST_UNAPPROVED : TRUST_TIGHTENS);
		for (size_t k = 0; k < n; k++) {
			_cleanup_free_ char *want = expand(rows[i].want[k], dir);
			/* In file order, each naming the project entry. */
			unit_assert_starts_with(found->items[k], prefix, "row %zu", i);
			unit_assert_contains(found->items[k], want, "row %zu", i);
		}
	}
}

/* The side without the project config is planned only where it is
 * compared: without a project config, and inside a sandbox, there is
 * nothing to compare. */
static void trust_has_nothing_to_compare_without_a_project_config(void **state)
{
	const char *dir = *state;
	make_tree(dir);
	const struct row none = {.global = "{\"network\": true, \"docker\": true}"};
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	_cleanup_error_ struct error err = ERROR_INIT;
	if (plan_row(dir, &none, &s, &err) < 0)
		unit_fail("%s", err.msg);
	assert_int_equal(s.trust.state, TRUST_NO_FILE);
	assert_int_equal(s.trust.loosenings.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    unit_tmp_test(trust_compares_the_plans_without_and_with_the_project_config),
	    unit_tmp_test(trust_has_nothing_to_compare_without_a_project_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
