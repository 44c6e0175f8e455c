/* `agent-sandbox rpc [--socket PATH] [--owner NAME] [--follow] METHOD [JSON]`:
 * one call to the executor API for shells and debugging. Everything the
 * daemon sends is printed as one JSON object per line, escaped so that no
 * string in it can act on a terminal and still the same JSON. Exit status:
 * 0 for a result, 1 for an error response or a lost daemon, 2 for usage. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/utf8.h"
#include "base/xalloc.h"
#include "cli/report.h"
#include "cli/verbs.h"
#include "serve/client.h"

DEFINE_CLEANUP_PTR_FUNC(struct json_object *, json_object_put)
DEFINE_CLEANUP_PTR_FUNC(struct json_tokener *, json_tokener_free)

#define RPC_EXIT_ERROR 1

static const char rpc_form[] = "agent-sandbox rpc [--socket PATH] [--owner NAME] [--follow] "
			       "METHOD [JSON]";

static const char rpc_usage[] =
    "usage: agent-sandbox rpc [--socket PATH] [--owner NAME] [--follow] METHOD [JSON]\n"
    "\n"
    "Sends initialize, then METHOD with the JSON object JSON as its params\n"
    "(default {}), to agent-sandbox serve. Prints each notification and then\n"
    "the response as one JSON object per line.\n"
    "\n"
    "  --socket PATH   the daemon's socket (default $XDG_RUNTIME_DIR/agent-sandbox/api.sock)\n"
    "  --owner NAME    act for this owner (the daemon's own user or root only)\n"
    "  --follow        after the response, print notifications until the process\n"
    "                  (or agent run) the call names has ended\n"
    "  JSON of -       read the params from stdin (for large ones: fs/write)\n"
    "\n"
    "A process started by rpc belongs to its connection and ends with it:\n"
    "keep rpc with --follow, or start it with \"detached\": true.\n"
    "\n"
    "exit status: 0 for a result, 1 for an error response (also a line on\n"
    "stderr) or a lost connection, 2 for bad arguments or a daemon of another\n"
    "user on the default socket.\n"
    "\n"
    "examples:\n"
    "  agent-sandbox rpc session/create '{\"key\": {\"user\": \"u1\", \"chat\": \"c1\"}}'\n"
    "  agent-sandbox rpc --follow process/start '{\"sessionId\": \"S\", \"argv\": [\"ls\"]}'\n";

struct rpc_args {
	const char *socket;
	const char *owner;
	bool follow;
	const char *method;
	const char *params;
};

/* A flag's value: "--flag VALUE" or "--flag=VALUE". 1 when *a is the flag
 * (a advanced past a separate value), 0 when it is another. */
static int flag_value(char ***a, const char *flag, const char **value, struct error *err)
{
	size_t n = strlen(flag);
	if (strncmp(**a, flag, n))
		return 0;
	if ((**a)[n] == '=') {
		*value = **a + n + 1;
		return 1;
	}
	if ((**a)[n])
		return 0;
	if (!(*a)[1])
		return error_set(err, ERROR_USAGE, "rpc %s needs a value: %s", flag, rpc_form);
	*value = *++*a;
	return 1;
}

/* 1 parsed, 0 help was asked for, -1 with err. */
static int parse_args(char **argv, struct rpc_args *args, struct error *err)
{
	bool flags_done = false;
	for (char **a = argv; *a; a++) {
		if (!flags_done && (*a)[0] == '-' && (*a)[1]) {
			if (!strcmp(*a, "--help") || !strcmp(*a, "-h"))
				return 0;
			if (!strcmp(*a, "--")) {
				flags_done = true;
				continue;
			}
			if (!strcmp(*a, "--follow")) {
				args->follow = true;
				continue;
			}
			int r = flag_value(&a, "--socket", &args->socket, err);
			if (r == 0)
				r = flag_value(&a, "--owner", &args->owner, err);
			if (r < 0)
				return -1;
			if (r == 0) {
				_cleanup_free_ char *shown = term_escape(*a);
				return error_set(err, ERROR_USAGE, "rpc: unknown flag \"%s\": %s",
						 shown, rpc_form);
			}
			continue;
		}
		if (!args->method) {
			args->method = *a;
		} else if (!args->params) {
			args->params = *a;
		} else {
			_cleanup_free_ char *shown = term_escape(*a);
			return error_set(err, ERROR_USAGE,
					 "rpc: one METHOD and one JSON, not \"%s\": %s", shown,
					 rpc_form);
		}
	}
	if (!args->method || !args->method[0])
		return error_set(err, ERROR_USAGE, "rpc: which method? %s", rpc_form);
	if (args->socket && !args->socket[0])
		return error_set(err, ERROR_USAGE, "rpc --socket: the path is empty");
	return 1;
}

/* Line and column (1-based, in characters) of byte offset in text. */
static void text_position(const char *text, size_t offset, unsigned *line, unsigned *column)
{
	*line = 1;
	*column = 1;
	const unsigned char *p = (const unsigned char *)text;
	for (size_t i = 0; i < offset;) {
		if (p[i] == '\n') {
			++*line;
			*column = 1;
			i++;
			continue;
		}
		uint32_t cp;
		size_t n = utf8_decode(p + i, offset - i, &cp);
		i += n ? n : 1;
		++*column;
	}
}

/* The params argument: one JSON object, nothing after it. */
static int parse_params(const char *text, size_t len, struct json_object **out, struct error *err)
{
	if (memchr(text, '\0', len))
		return error_set(err, ERROR_USAGE, "rpc: the JSON argument holds a NUL byte");
	/* As deep as the daemon takes. */
	_cleanup_(json_tokener_freep) struct json_tokener *tok = json_tokener_new_ex(RPC_DEPTH_MAX);
	if (!tok || len > INT32_MAX)
		return error_set(err, ERROR_USAGE, "rpc: the JSON argument is too large");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	_cleanup_(json_object_putp) struct json_object *v =
	    json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (e == json_tokener_continue)
		e = json_tokener_error_parse_eof;
	size_t rest = end;
	while (e == json_tokener_success && rest < len && strchr(" \t\r\n", text[rest]))
		rest++;
	if (e != json_tokener_success || rest != len) {
		unsigned line, column;
		text_position(text, e == json_tokener_success ? rest : end, &line, &column);
		return error_set(err, ERROR_USAGE, "rpc: the JSON argument, line %u column %u: %s",
				 line, column,
				 e == json_tokener_success ? "unexpected text after the object"
							   : json_tokener_error_desc(e));
	}
	if (!json_object_is_type(v, json_type_object))
		return error_set(err, ERROR_USAGE,
				 "rpc: the JSON argument must be an object (the method's params), "
				 "not %s",
				 v ? json_type_to_name(json_object_get_type(v)) : "null");
	*out = steal_ptr(&v);
	return 0;
}

/* JSON "-": the params from stdin, for what is too long for an argument
 * (fs/write of a large file). At most a line's worth. */
static int read_stdin(int fd, char **out, size_t *len, struct error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (;;) {
		strbuf_grow(&sb, 65536);
		ssize_t n = read(fd, sb.buf + sb.len, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_errno(err, ERROR_SETUP, errno,
					   "rpc: reading the JSON from stdin");
		if (n == 0)
			break;
		sb.len += (size_t)n;
		sb.buf[sb.len] = '\0';
		if (sb.len > SERVE_LINE_MAX)
			return error_set(
			    err, ERROR_USAGE,
			    "rpc: the JSON on stdin is longer than the daemon's line cap "
			    "of %u bytes",
			    (unsigned)SERVE_LINE_MAX);
	}
	*len = sb.len;
	*out = strbuf_detach(&sb);
	return 0;
}

/* One message as a line of JSON on fd. json-c escapes control characters
 * in strings but passes bidirectional controls, invisible characters and
 * bytes that are not UTF-8 through: TERM_ESCAPE_JSON turns those into JSON
 * escapes too. */
static int print_message(int fd, struct json_object *msg, struct error *err)
{
	const char *raw = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	term_escape_mode_add(&sb, raw, strlen(raw), TERM_ESCAPE_JSON);
	strbuf_addch(&sb, '\n');
	int r = write_all(fd, sb.buf, sb.len);
	return r < 0 ? cli_output_error(r, err) : 0;
}

/* What --follow waits for: the notification that ends what the call
 * started, and the member that names it (from the result, else from the
 * params, as for process/attach). */
struct follow_target {
	const char *end_method;
	const char *key;
	struct json_object *id; /* borrowed; NULL: until the daemon closes */
};

static void follow_target(const char *method, struct json_object *params,
			  struct json_object *result, struct follow_target *t)
{
	bool agent = !strncmp(method, "agent/", 6);
	t->end_method = agent ? "agent/completed" : "process/exited";
	t->key = agent ? "runId" : "processId";
	t->id = NULL;
	if (!(result && json_object_object_get_ex(result, t->key, &t->id)))
		json_object_object_get_ex(params, t->key, &t->id);
}

static bool ends_follow(struct json_object *note, const struct follow_target *t)
{
	struct json_object *method, *params, *id;
	return t && t->id && json_object_object_get_ex(note, "method", &method) &&
	       json_object_is_type(method, json_type_string) &&
	       !strcmp(json_object_get_string(method), t->end_method) &&
	       json_object_object_get_ex(note, "params", &params) &&
	       json_object_object_get_ex(params, t->key, &id) && json_object_equal(id, t->id);
}

/* Prints the notifications that arrived before the response, and only
 * those: what came after it is printed after it. *ended is set when one
 * of them ends what t follows (t may be NULL). */
static int print_queued(struct agent_sandbox_client *c, int fd, const struct follow_target *t,
			bool *ended, struct error *err)
{
	for (size_t n = agent_sandbox_client_queued(c); n; n--) {
		_cleanup_(json_object_putp) struct json_object *note = NULL;
		if (agent_sandbox_client_next(c, 0, &note, err) != 1)
			return error_set(err, ERROR_INTERNAL, "a queued notification went missing");
		if (print_message(fd, note, err) < 0)
			return -1;
		if (ended && ends_follow(note, t))
			*ended = true;
	}
	return 0;
}

/* An error response: its line on stdout, its message on stderr. */
static int report_response_error(const struct cli_io *io, const char *method,
				 struct json_object *response, struct error *err)
{
	if (print_message(io->out, response, err) < 0)
		return -1;
	_cleanup_error_ struct error rerr = ERROR_INIT;
	agent_sandbox_client_response_error(response, &rerr);
	error_prefix(&rerr, "%s", method);
	report_error(io->err, &rerr);
	return RPC_EXIT_ERROR;
}

static int call(struct agent_sandbox_client *c, const struct cli_io *io, const char *method,
		struct json_object *params, struct json_object **response, struct error *err)
{
	_cleanup_error_ struct error cerr = ERROR_INIT;
	if (agent_sandbox_client_call(c, method, params, response, &cerr) < 0) {
		/* Whatever came before the connection failed is still news;
		 * the failure is what is reported. */
		_cleanup_error_ struct error perr = ERROR_INIT;
		print_queued(c, io->out, NULL, NULL, &perr);
		*err = steal_struct(&cerr);
		return -1;
	}
	return 0;
}

static int initialize(struct agent_sandbox_client *c, const struct cli_io *io, const char *owner,
		      struct error *err)
{
	struct json_object *params = json_object_new_object();
	struct json_object *info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string("agent-sandbox-rpc"));
	json_object_object_add(info, "version", json_object_new_string(AGENT_SANDBOX_VERSION));
	json_object_object_add(params, "clientInfo", info);
	json_object_object_add(params, "protocolVersion", json_object_new_string("1"));
	if (owner)
		json_object_object_add(params, "owner", json_object_new_string(owner));
	_cleanup_(json_object_putp) struct json_object *response = NULL;
	if (call(c, io, "initialize", params, &response, err) < 0)
		return -1;
	if (!json_object_object_get_ex(response, "result", NULL))
		return report_response_error(io, "initialize", response, err);
	return 0;
}

static int follow(struct agent_sandbox_client *c, const struct cli_io *io,
		  const struct follow_target *t, struct error *err)
{
	for (;;) {
		_cleanup_(json_object_putp) struct json_object *note = NULL;
		if (agent_sandbox_client_next(c, -1, &note, err) < 0) {
			if (!t->id && agent_sandbox_client_closed(c)) {
				/* Nothing to wait for: the daemon's close ends it. */
				error_release(err);
				*err = (struct error)ERROR_INIT;
				return 0;
			}
			return -1;
		}
		if (print_message(io->out, note, err) < 0)
			return -1;
		if (ends_follow(note, t))
			return 0;
	}
}

int verb_rpc(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	struct rpc_args args = {0};
	int p = parse_args(cli->command, &args, err);
	if (p < 0)
		return -1;
	if (p == 0) {
		int r = write_str(io->out, rpc_usage);
		return r < 0 ? cli_output_error(r, err) : 0;
	}
	_cleanup_(json_object_putp) struct json_object *params = NULL;
	_cleanup_free_ char *input = NULL;
	size_t input_len = 0;
	if (args.params && !strcmp(args.params, "-") &&
	    read_stdin(io->in, &input, &input_len, err) < 0)
		return -1;
	const char *text = input ? input : args.params ? args.params : "{}";
	if (parse_params(text, input ? input_len : strlen(text), &params, err) < 0)
		return -1;

	_cleanup_client_ struct agent_sandbox_client *c = NULL;
	if ((args.socket ? agent_sandbox_client_connect(args.socket, &c, err)
			 : agent_sandbox_client_connect_default(envp, &c, err)) < 0)
		return -1;
	/* An initialize of the caller's own is sent as it is, alone. */
	if (strcmp(args.method, "initialize")) {
		int r = initialize(c, io, args.owner, err);
		if (r != 0)
			return r;
	}
	_cleanup_(json_object_putp) struct json_object *response = NULL;
	if (call(c, io, args.method, json_object_get(params), &response, err) < 0)
		return -1;
	struct json_object *result = NULL;
	bool ok = json_object_object_get_ex(response, "result", &result);
	struct follow_target t;
	follow_target(args.method, params, result, &t);
	/* A process/exited queued before the response (a daemon may send it
	 * first) ends --follow as well as one after it. */
	bool ended = false;
	if (print_queued(c, io->out, &t, &ended, err) < 0)
		return -1;
	if (!ok)
		return report_response_error(io, args.method, response, err);
	if (print_message(io->out, response, err) < 0)
		return -1;
	if (!args.follow || ended)
		return 0;
	return follow(c, io, &t, err);
}
