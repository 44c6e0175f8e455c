/* Unit tests for the workspace's .mcp.json (serve/mcp.c mcp_write_config)
 * on a real scratch directory: our entries are merged into the agent's
 * file, and a symlink the agent planted there is replaced, never followed
 * for the read or the write. Also the mcpServers parameter's trust rule. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/io.h"
#include "base/xalloc.h"
#include "serve/internal.h"
#include "serve/mcp.h"
#include "unit.h"

static struct mcp_session *servers(bool trusted, struct error *err)
{
	struct json_object *p = json_tokener_parse(
	    "{\"mcpServers\":{\"demo\":{\"command\":[\"true\"],\"tools\":[\"echo\"]}}}");
	struct mcp_session *m = NULL;
	int r = mcp_param(p, trusted, &m, err);
	json_object_put(p);
	return r < 0 ? NULL : m;
}

static char *scratch(void)
{
	char t[] = "/tmp/test-mcp-config.XXXXXX";
	assert_non_null(mkdtemp(t));
	return xstrdup(t);
}

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len;
	assert_int_equal(read_file(path, 1 << 20, &text, &len), 0);
	return text;
}

static void mcp_write_config_merges_into_the_agents_servers(void **state)
{
	struct error err = ERROR_INIT;
	struct session s = {.mcp = servers(true, &err)};
	assert_non_null(s.mcp);
	_cleanup_free_ char *dir = scratch();
	_cleanup_free_ char *file = xasprintf("%s/.mcp.json", dir);
	const char *mine = "{\"mcpServers\":{\"own\":{\"command\":\"x\"},\"demo\":{\"command\":"
			   "\"evil\"}},\"other\":1}";
	assert_int_equal(io_write_file_atomic(file, mine, strlen(mine), 0644), 0);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(mcp_write_config(&s, fd, &err), 0);
	_cleanup_free_ char *text = slurp(file);
	struct json_object *o = json_tokener_parse(text), *sv, *demo, *cmd, *own, *other;
	assert_true(json_object_object_get_ex(o, "mcpServers", &sv));
	assert_true(json_object_object_get_ex(sv, "own", &own));
	assert_true(json_object_object_get_ex(o, "other", &other));
	assert_true(json_object_object_get_ex(sv, "demo", &demo));
	assert_true(json_object_object_get_ex(demo, "command", &cmd));
	assert_string_equal(json_object_get_string(cmd), "/run/agent-sandbox/agent-sandbox");
	json_object_put(o);
	close(fd);
	(void)io_remove_tree_at(AT_FDCWD, dir);
	mcp_session_free(s.mcp);
}

static void mcp_write_config_replaces_a_planted_symlink_without_following_it(void **state)
{
	struct error err = ERROR_INIT;
	struct session s = {.mcp = servers(true, &err)};
	_cleanup_free_ char *dir = scratch();
	_cleanup_free_ char *host = xasprintf("%s/host-file", dir);
	_cleanup_free_ char *ws = xasprintf("%s/ws", dir);
	_cleanup_free_ char *link = xasprintf("%s/ws/.mcp.json", dir);
	const char *secret = "{\"mcpServers\":{\"leak\":{\"command\":\"host secret\"}}}";
	assert_int_equal(io_write_file_atomic(host, secret, strlen(secret), 0600), 0);
	assert_int_equal(mkdir(ws, 0700), 0);
	assert_int_equal(symlink(host, link), 0);
	int fd = open(ws, O_RDONLY | O_DIRECTORY);
	assert_int_equal(mcp_write_config(&s, fd, &err), 0);
	/* The host file is as it was; .mcp.json is a file of ours, and
	 * nothing of the host file was read into it. */
	_cleanup_free_ char *after = slurp(host);
	assert_string_equal(after, secret);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	_cleanup_free_ char *text = slurp(link);
	assert_null(strstr(text, "host secret"));
	assert_non_null(strstr(text, "mcp-bridge"));
	close(fd);
	(void)io_remove_tree_at(AT_FDCWD, dir);
	mcp_session_free(s.mcp);
}

static void mcp_param_refuses_servers_from_an_untrusted_connection(void **state)
{
	struct error err = ERROR_INIT;
	assert_null(servers(false, &err));
	assert_int_equal(err.kind, ERROR_POLICY);
	error_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(mcp_write_config_merges_into_the_agents_servers),
	    cmocka_unit_test(mcp_write_config_replaces_a_planted_symlink_without_following_it),
	    cmocka_unit_test(mcp_param_refuses_servers_from_an_untrusted_connection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
