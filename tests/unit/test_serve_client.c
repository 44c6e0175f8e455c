/* Unit tests for the executor API's C client against a real peer: a thread
 * on the other end of a socketpair (or a pipe pair) plays the daemon from a
 * script of canned lines, split and interleaved as a daemon may send them,
 * and the client must frame, match, queue and refuse exactly as promised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "serve/client.h"
#include "unit.h"

/* A script step: "<" reads one request line (kept in got[]), ">TEXT"
 * sends TEXT, "~N" sleeps N ms, "L" sends a line longer than the cap
 * (without its newline), "M" a notification exactly as long as the cap,
 * "x" closes the peer's end. */
struct peer {
	int read_fd, write_fd;
	const char *const *script;
	char *got[8];
	size_t ngot;
	pthread_t thread;
	bool joined;
};

static void peer_join(struct peer *p)
{
	if (!p->joined)
		pthread_join(p->thread, NULL);
	p->joined = true;
}

static void peer_send(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return; /* the client went away: the test says whether it should have */
		buf += n;
		len -= (size_t)n;
	}
}

static char *peer_read_line(int fd)
{
	struct strbuf sb = STRBUF_INIT;
	char ch;
	for (;;) {
		ssize_t n = read(fd, &ch, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || ch == '\n')
			break;
		strbuf_addch(&sb, ch);
	}
	return strbuf_detach(&sb);
}

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	for (const char *const *s = p->script; *s; s++) {
		const char *step = *s;
		if (step[0] == '<') {
			char *line = peer_read_line(p->read_fd);
			if (p->ngot < ARRAY_SIZE(p->got))
				p->got[p->ngot++] = line;
			else
				free(line);
		} else if (step[0] == '>') {
			peer_send(p->write_fd, step + 1, strlen(step + 1));
		} else if (step[0] == '~') {
			struct timespec ts = {0, atol(step + 1) * 1000000L};
			nanosleep(&ts, NULL);
		} else if (step[0] == 'L') {
			size_t len = SERVE_LINE_MAX + 16;
			char *big = xmalloc(len);
			memset(big, 'a', len);
			big[0] = '"';
			peer_send(p->write_fd, big, len);
			free(big);
		} else if (step[0] == 'M') {
			static const char head[] = "{\"method\":\"n\",\"params\":{\"text\":\"";
			size_t len = SERVE_LINE_MAX + 1;
			char *line = xmalloc(len);
			memcpy(line, head, strlen(head));
			memset(line + strlen(head), 'a', len - strlen(head));
			line[len - 1] = '\n';
			memcpy(line + len - 4, "\"}}", 3);
			peer_send(p->write_fd, line, len);
			free(line);
		} else if (step[0] == 'x') {
			close(p->write_fd);
			if (p->read_fd != p->write_fd)
				close(p->read_fd);
			p->read_fd = p->write_fd = -1;
		}
	}
	return NULL;
}

/* Starts the peer on a socketpair and connects a client to it. */
static struct agent_sandbox_client *start(struct peer *p, const char *const *script)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	*p = (struct peer){.read_fd = sv[1], .write_fd = sv[1], .script = script};
	struct agent_sandbox_client *c = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(agent_sandbox_client_open_fds(sv[0], sv[0], &c, &err), 0);
	assert_int_equal(pthread_create(&p->thread, NULL, peer_main, p), 0);
	return c;
}

static void finish(struct peer *p, struct agent_sandbox_client *c)
{
	agent_sandbox_client_close(c);
	peer_join(p);
	if (p->read_fd >= 0)
		close(p->read_fd);
	if (p->write_fd >= 0 && p->write_fd != p->read_fd)
		close(p->write_fd);
	for (size_t i = 0; i < p->ngot; i++)
		free(p->got[i]);
}

static const char *method_of(struct json_object *msg)
{
	struct json_object *m;
	assert_true(json_object_object_get_ex(msg, "method", &m));
	return json_object_get_string(m);
}

static const char *string_at(struct json_object *msg, const char *outer, const char *key)
{
	struct json_object *o, *v;
	assert_true(json_object_object_get_ex(msg, outer, &o));
	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_string(v);
}

static void expect_note(struct agent_sandbox_client *c, const char *method, const char *text)
{
	struct json_object *note = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(agent_sandbox_client_next(c, 1000, &note, &err), 1);
	assert_string_equal(method_of(note), method);
	assert_string_equal(string_at(note, "params", "text"), text);
	json_object_put(note);
}

static void expect_no_note(struct agent_sandbox_client *c)
{
	struct json_object *note = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(agent_sandbox_client_next(c, 0, &note, &err), 0);
	assert_null(note);
}

static void call_returns_its_response_and_queues_notifications_in_order(void **state)
{
	static const char *const script[] = {
	    "<", ">{\"jsonrpc\":\"2.0\",\"method\":\"n/one\",\"params\":{\"text\":\"a\"}}\n",
	    ">{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"stale\":true}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"n/two\",\"params\":{\"text\":\"b\"}}\n",
	    ">{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"mine\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"n/three\",\"params\":{\"text\":\"c\"}}\n",
	    NULL};
	struct peer p;
	struct agent_sandbox_client *c = start(&p, script);
	struct error err = ERROR_INIT;
	struct json_object *params = json_object_new_object();
	json_object_object_add(params, "k", json_object_new_string("v"));
	struct json_object *response = NULL;
	assert_int_equal(agent_sandbox_client_call(c, "m/x", params, &response, &err), 0);
	assert_string_equal(string_at(response, "result", "text"), "mine");
	assert_int_equal(agent_sandbox_client_response_error(response, &err), 0);
	json_object_put(response);
	/* Two came before the response; the third came with it, and stays
	 * after it. */
	assert_int_equal(agent_sandbox_client_queued(c), 2);
	/* Before the response, after it (read with it), in order; the
	 * stale response is not a notification. */
	expect_note(c, "n/one", "a");
	expect_note(c, "n/two", "b");
	expect_note(c, "n/three", "c");
	expect_no_note(c);
	peer_join(&p);
	assert_int_equal(p.ngot, 1);
	struct json_object *req = json_tokener_parse(p.got[0]);
	assert_non_null(req);
	assert_string_equal(method_of(req), "m/x");
	assert_string_equal(string_at(req, "params", "k"), "v");
	struct json_object *v;
	assert_true(json_object_object_get_ex(req, "jsonrpc", &v));
	assert_string_equal(json_object_get_string(v), "2.0");
	assert_true(json_object_object_get_ex(req, "id", &v));
	assert_int_equal(json_object_get_int64(v), 1);
	json_object_put(req);
	finish(&p, c);
}

static void calls_take_increasing_ids_and_params_may_be_null(void **state)
{
	static const char *const script[] = {
	    "<", ">{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", "<",
	    ">{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"second\":true}}\n", NULL};
	struct peer p;
	struct agent_sandbox_client *c = start(&p, script);
	struct error err = ERROR_INIT;
	struct json_object *response = NULL;
	assert_int_equal(agent_sandbox_client_call(c, "a", NULL, &response, &err), 0);
	json_object_put(response);
	assert_int_equal(agent_sandbox_client_call(c, "b", NULL, &response, &err), 0);
	struct json_object *v;
	assert_true(json_object_object_get_ex(response, "result", &v));
	assert_true(json_object_object_get_ex(v, "second", NULL));
	json_object_put(response);
	peer_join(&p);
	assert_int_equal(p.ngot, 2);
	unit_assert_contains(p.got[1], "\"id\":2", "second request");
	assert_null(strstr(p.got[0], "params"));
	finish(&p, c);
}

/* A line arriving in pieces, cut inside a UTF-8 character and between
 * "\r" and "\n", with blank lines around it, is one message. */
static void next_reads_a_line_split_across_writes(void **state)
{
	static const char *const script[] = {">\n  \n{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"par",
					     "~30",
					     ">ams\":{\"text\":\"caf\xc3",
					     "~30",
					     ">\xa9\"}}\r",
					     "~30",
					     ">\n",
					     NULL};
	struct peer p;
	struct agent_sandbox_client *c = start(&p, script);
	expect_note(c, "n", "caf\xc3\xa9");
	finish(&p, c);
}

static void a_line_exactly_at_the_cap_is_accepted(void **state)
{
	static const char *const script[] = {"M", NULL};
	struct peer p;
	struct agent_sandbox_client *c = start(&p, script);
	struct json_object *note = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(agent_sandbox_client_next(c, 5000, &note, &err), 1);
	const char *text = string_at(note, "params", "text");
	/* The line less the 35 bytes of its frame. */
	assert_int_equal(strlen(text), SERVE_LINE_MAX - 35);
	assert_int_equal(text[0], 'a');
	json_object_put(note);
	finish(&p, c);
}

static void next_times_out_when_nothing_arrives(void **state)
{
	static const char *const script[] = {"~300", NULL};
	struct peer p;
	struct agent_sandbox_client *c = start(&p, script);
	struct error err = ERROR_INIT;
	struct json_object *note = NULL;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(agent_sandbox_client_next(c, 50, &note, &err), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_true(ms >= 45 && ms < 250);
	assert_null(note);
	finish(&p, c);
}

static void eof_after_messages_delivers_them_then_says_the_daemon_closed(void **state)
{
	static const char *const script[] = {
	    ">{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"text\":\"last\"}}\n", "x", NULL};
	struct peer p;
	struct agent_sandbox_client *c = start(&p, script);
	expect_note(c, "n", "last");
	struct error err = ERROR_INIT;
	struct json_object *note = NULL;
	assert_int_equal(agent_sandbox_client_next(c, -1, &note, &err), -1);
	assert_int_equal(err.kind, ERROR_SETUP);
	assert_string_equal(err.msg, "the daemon closed the connection");
	assert_true(agent_sandbox_client_closed(c));
	error_release(&err);
	/* A call after the end fails too, instead of waiting forever. */
	struct json_object *response = NULL;
	assert_int_equal(agent_sandbox_client_call(c, "m", NULL, &response, &err), -1);
	assert_null(response);
	error_release(&err);
	finish(&p, c);
}

/* Each of these breaks the stream: the call fails with a message naming
 * it, and so does every call after it. */
static void bad_lines_break_the_connection(void **state)
{
	static const struct {
		const char *name;
		const char *const script[4];
		enum error_kind kind;
		const char *msg;
	} cases[] = {
	    {"not JSON", {"<", ">{\"id\":1,\"result\":\n", NULL}, ERROR_SETUP, "not JSON"},
	    {"trailing text",
	     {"<", ">{\"id\":1,\"result\":{}} {}\n", NULL},
	     ERROR_SETUP,
	     "not JSON"},
	    {"not an object", {"<", ">[1,2]\n", NULL}, ERROR_SETUP, "not a message object"},
	    {"half a message, then EOF",
	     {"<", ">{\"id\":1,\"res", "x", NULL},
	     ERROR_SETUP,
	     "in the middle of a message"},
	    {"over the cap", {"<", "L", NULL}, ERROR_LIMIT, "longer than"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct peer p;
		struct agent_sandbox_client *c = start(&p, cases[i].script);
		struct error err = ERROR_INIT;
		struct json_object *response = NULL;
		assert_int_equal(agent_sandbox_client_call(c, "m", NULL, &response, &err), -1);
		if (err.kind != cases[i].kind)
			unit_fail("%s: kind %d, not %d (%s)", cases[i].name, err.kind,
				  cases[i].kind, err.msg);
		unit_assert_contains(err.msg, cases[i].msg, "%s", cases[i].name);
		unit_assert_starts_with(err.msg, "m: ", "%s: the method in front", cases[i].name);
		error_release(&err);
		assert_false(agent_sandbox_client_closed(c));
		assert_int_equal(agent_sandbox_client_call(c, "m", NULL, &response, &err), -1);
		unit_assert_contains(err.msg, "broken", "%s: a later call", cases[i].name);
		error_release(&err);
		finish(&p, c);
	}
}

/* The NUL case above: json-c would stop at the NUL and accept the
 * response before it. Sent through a ">" step it is cut at the NUL by
 * strlen, so send it by hand. */
static void a_nul_byte_in_a_line_is_refused(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	static const char line[] = "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\0{}\n";
	assert_int_equal(write(sv[1], line, sizeof(line) - 1), (ssize_t)sizeof(line) - 1);
	struct agent_sandbox_client *c = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(agent_sandbox_client_open_fds(sv[0], sv[0], &c, &err), 0);
	struct json_object *note = NULL;
	assert_int_equal(agent_sandbox_client_next(c, 1000, &note, &err), -1);
	unit_assert_contains(err.msg, "NUL", "a NUL byte");
	error_release(&err);
	agent_sandbox_client_close(c);
	close(sv[1]);
}

/* Over a pipe pair (serve --stdio), a daemon that went away is an error
 * from call(), not a SIGPIPE that kills the caller. */
static void call_over_closed_pipe_fails_without_sigpipe(void **state)
{
	int to_daemon[2], from_daemon[2];
	assert_int_equal(pipe2(to_daemon, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from_daemon, O_CLOEXEC), 0);
	close(to_daemon[0]);
	struct agent_sandbox_client *c = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(agent_sandbox_client_open_fds(from_daemon[0], to_daemon[1], &c, &err), 0);
	struct json_object *response = NULL;
	assert_int_equal(agent_sandbox_client_call(c, "m", NULL, &response, &err), -1);
	unit_assert_contains(err.msg, "the daemon closed the connection", "closed pipe");
	error_release(&err);
	sigset_t pending;
	assert_int_equal(sigpending(&pending), 0);
	assert_false(sigismember(&pending, SIGPIPE));
	agent_sandbox_client_close(c);
	close(from_daemon[1]);
}

static void response_error_takes_kind_and_detail_from_the_daemon(void **state)
{
	static const struct {
		const char *response;
		int result; /* 0 or -1 */
		enum error_kind kind;
		const char *msg;
	} cases[] = {
	    {"{\"id\":1,\"result\":{}}", 0, ERROR_NONE, NULL},
	    {"{\"id\":1,\"error\":{\"code\":-32002,\"message\":\"not found\",\"data\":{\"kind\":"
	     "\"not_found\",\"detail\":\"no session s1\"}}}",
	     -1, ERROR_NOT_FOUND, "no session s1 (-32002)"},
	    /* data.kind wins over the code */
	    {"{\"id\":1,\"error\":{\"code\":-32603,\"message\":\"x\",\"data\":{\"kind\":\"setup\","
	     "\"detail\":\"bwrap failed\"}}}",
	     -1, ERROR_SETUP, "bwrap failed"},
	    /* no data: the code decides, the message says */
	    {"{\"id\":1,\"error\":{\"code\":-32004,\"message\":\"too many sessions\"}}", -1,
	     ERROR_LIMIT, "too many sessions (-32004)"},
	    {"{\"id\":1,\"error\":{\"code\":-32601,\"message\":\"no such method\"}}", -1,
	     ERROR_USAGE, "no such method"},
	    {"{\"id\":1,\"error\":{\"code\":-32003,\"data\":{\"kind\":\"nonsense\"}}}", -1,
	     ERROR_DENIED, "unknown error"},
	    {"{\"id\":1,\"error\":{\"code\":-32001,\"message\":\"busy\"}}", -1, ERROR_BUSY, "busy"},
	    {"{\"id\":1,\"error\":{\"code\":-32005,\"message\":\"loosens\"}}", -1, ERROR_POLICY,
	     "loosens"},
	    {"{\"id\":1}", -1, ERROR_INTERNAL, "neither a result nor an error"},
	    {"{\"id\":1,\"error\":\"text\"}", -1, ERROR_INTERNAL, "neither"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct json_object *r = json_tokener_parse(cases[i].response);
		assert_non_null(r);
		struct error err = ERROR_INIT;
		int got = agent_sandbox_client_response_error(r, &err);
		if (got != cases[i].result || err.kind != cases[i].kind)
			unit_fail("%s: returned %d kind %d", cases[i].response, got, err.kind);
		if (cases[i].msg)
			unit_assert_contains(err.msg, cases[i].msg, "%s", cases[i].response);
		error_release(&err);
		json_object_put(r);
	}
}

static void default_socket_is_api_sock_in_the_runtime_directory(void **state)
{
	char *dir = unit_tmpdir("xdg");
	assert_int_equal(chmod(dir, 0700), 0);
	char *xdg = xasprintf("XDG_RUNTIME_DIR=%s", dir);
	char *envp[] = {xdg, NULL};
	char *path = agent_sandbox_client_default_socket(envp);
	char *want = xasprintf("%s/agent-sandbox/api.sock", dir);
	assert_string_equal(path, want);
	free(path);
	free(want);
	char *none[] = {NULL};
	path = agent_sandbox_client_default_socket(none);
	want = xasprintf("/tmp/agent-sandbox-%u/api.sock", (unsigned)geteuid());
	assert_string_equal(path, want);
	free(path);
	free(want);
	free(xdg);
	unit_rmtree(dir);
	free(dir);
}

static void connect_to_a_missing_socket_says_to_start_the_daemon(void **state)
{
	struct agent_sandbox_client *c = NULL;
	struct error err = ERROR_INIT;
	assert_int_equal(
	    agent_sandbox_client_connect("/nonexistent/agent-sandbox/api.sock", &c, &err), -1);
	assert_int_equal(err.kind, ERROR_SETUP);
	unit_assert_contains(err.msg, "/nonexistent/agent-sandbox/api.sock", "message");
	unit_assert_contains(err.hint, "agent-sandbox serve", "hint");
	assert_null(c);
	error_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(call_returns_its_response_and_queues_notifications_in_order),
	    cmocka_unit_test(calls_take_increasing_ids_and_params_may_be_null),
	    cmocka_unit_test(next_reads_a_line_split_across_writes),
	    cmocka_unit_test(a_line_exactly_at_the_cap_is_accepted),
	    cmocka_unit_test(next_times_out_when_nothing_arrives),
	    cmocka_unit_test(eof_after_messages_delivers_them_then_says_the_daemon_closed),
	    cmocka_unit_test(bad_lines_break_the_connection),
	    cmocka_unit_test(a_nul_byte_in_a_line_is_refused),
	    cmocka_unit_test(call_over_closed_pipe_fails_without_sigpipe),
	    cmocka_unit_test(response_error_takes_kind_and_detail_from_the_daemon),
	    cmocka_unit_test(default_socket_is_api_sock_in_the_runtime_directory),
	    cmocka_unit_test(connect_to_a_missing_socket_says_to_start_the_daemon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
