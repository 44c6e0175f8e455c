/* agent/run and agent/interrupt (API.md "Agent events", "Hooks, skills,
 * MCP"): a run is the session's before-hooks, the agent CLI, then its
 * after-hooks, one after the other, each an internal process of the
 * session (process_spawn) whose output comes here instead of to a
 * client. The CLI's stdout goes through the stream parser (agent/events.h)
 * into agent/event notifications; its end, with the parser's result,
 * becomes agent/completed. One run at a time per session. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/command.h"
#include "agent/events.h"
#include "agent/skills.h"
#include "base/cleanup.h"
#include "base/xalloc.h"
#include "inside/inside.h"
#include "serve/internal.h"
#include "serve/mcp.h"

DEFINE_CLEANUP_PTR_FUNC(struct json_object *, json_object_put)

/* After SIGINT, and again after SIGTERM, before the next signal. */
#define RUN_GRACE_MS 5000
/* What a hook may take when the run gives no timeout. */
#define HOOK_TIMEOUT_MS (10ull * 60 * 1000)
/* Tool calls of a run remembered for their results' audit records. */
#define RUN_CALLS_KEPT 4096
/* The last bytes of the CLI's stderr kept for an error result. */
#define STDERR_TAIL 4096
/* Where the agents keep their state: in the workspace, so that a chat's
 * conversations (resume) stay with it and no two chats share one. */
#define STATE_DIR ".agent-state"

enum run_phase { PHASE_BEFORE, PHASE_AGENT, PHASE_AFTER };

struct agent_run {
	char id[24];
	struct server *srv;
	struct session *session;
	uint64_t conn;
	enum agent_kind kind;
	enum run_phase phase;
	size_t hook;
	struct process *proc; /* the step running, or NULL between steps */
	struct strv argv, env;
	struct strv disallowed;
	struct strv calls;	  /* callId, tool name, ... of the run's tool calls */
	struct strv skills;	  /* installed for this run */
	struct strv skill_errors; /* said as error events at the start */
	bool begun;		  /* the first step has been started */
	struct agent_stream *stream;
	uint64_t seq;
	uint64_t start_ms, timeout_ms;
	bool interrupted, silent, agent_ran, hook_failed;
	char *hook_failure;
	int signals_sent; /* 0, then 1 after SIGINT, 2 after SIGTERM, 3 after KILL */
	struct watch timer;
	struct strbuf stderr_tail;
	struct json_object *completion;
	int wait_status;
};

static void advance(struct server *srv, struct agent_run *r);

static void run_free(struct server *srv, struct agent_run *r)
{
	serve_close_watch(srv, &r->timer);
	strv_release(&r->argv);
	strv_release(&r->env);
	strv_release(&r->disallowed);
	strv_release(&r->calls);
	strv_release(&r->skills);
	strv_release(&r->skill_errors);
	if (r->stream)
		agent_stream_free(r->stream);
	strbuf_release(&r->stderr_tail);
	json_object_put(r->completion);
	free(r->hook_failure);
	free(r);
}

static void audit_run(struct server *srv, struct agent_run *r, const char *event,
		      struct json_object *f)
{
	json_object_object_add(f, "runId", json_object_new_string(r->id));
	audit_serve(&srv->audit, r->session->id, event, r->session->owner, f);
}

static bool strv_has(const struct strv *v, const char *s)
{
	for (size_t i = 0; i < v->len; i++)
		if (!strcmp(v->items[i], s))
			return true;
	return false;
}

/* Every event goes out numbered; tool calls and refusals are also
 * recorded (what the agent tried is what an operator audits). */
static void emit(void *ctx, struct json_object *ev)
{
	struct agent_run *r = ctx;
	struct server *srv = r->srv;
	struct json_object *t;
	const char *type =
	    json_object_object_get_ex(ev, "type", &t) ? json_object_get_string(t) : "";
	if (!strcmp(type, "started")) {
		/* Our skills, whatever the agent lists. */
		struct json_object *list;
		if (!json_object_object_get_ex(ev, "skills", &list) ||
		    !json_object_is_type(list, json_type_array)) {
			list = json_object_new_array();
			json_object_object_add(ev, "skills", list);
		}
		for (size_t i = 0; i < r->skills.len; i++) {
			bool have = false;
			for (size_t k = 0; k < json_object_array_length(list); k++) {
				const char *n =
				    json_object_get_string(json_object_array_get_idx(list, k));
				have |= n && !strcmp(n, r->skills.items[i]);
			}
			if (!have)
				json_object_array_add(list,
						      json_object_new_string(r->skills.items[i]));
		}
	} else if (!strcmp(type, "tool_call")) {
		struct json_object *name, *server, *id;
		json_object_object_get_ex(ev, "name", &name);
		bool has_server = json_object_object_get_ex(ev, "server", &server);
		json_object_object_get_ex(ev, "callId", &id);
		const char *n = json_object_get_string(name);
		struct json_object *f = json_object_new_object();
		json_object_object_add(f, "tool", json_object_new_string(n ? n : ""));
		if (has_server)
			json_object_object_add(f, "server", json_object_get(server));
		json_object_object_add(f, "callId", json_object_get(id));
		json_object_object_add(f, "disallowed",
				       json_object_new_boolean(n && strv_has(&r->disallowed, n)));
		audit_run(srv, r, "agent_tool_call", f);
		/* Remembered for the result: which tool a refusal was for. */
		if (r->calls.len < 2 * RUN_CALLS_KEPT) {
			const char *cid = json_object_get_string(id);
			strv_push(&r->calls, cid ? cid : "");
			strv_push(&r->calls, n ? n : "");
		}
	} else if (!strcmp(type, "tool_result")) {
		struct json_object *denied, *id;
		if (json_object_object_get_ex(ev, "denied", &denied) &&
		    json_object_get_boolean(denied)) {
			/* The CLI refused the call (a disallowed tool, a permission
			 * rule): the agent tried, and the log says so. */
			json_object_object_get_ex(ev, "callId", &id);
			const char *cid = json_object_get_string(id);
			const char *tool = "";
			for (size_t i = 0; cid && i + 1 < r->calls.len; i += 2)
				if (!strcmp(r->calls.items[i], cid))
					tool = r->calls.items[i + 1];
			struct json_object *f = json_object_new_object();
			json_object_object_add(f, "tool", json_object_new_string(tool));
			json_object_object_add(f, "callId", json_object_get(id));
			audit_run(srv, r, "agent_tool_blocked", f);
		}
	}
	struct json_object *params = json_object_new_object();
	json_object_object_add(params, "runId", json_object_new_string(r->id));
	json_object_object_add(params, "seq", json_object_new_int64((int64_t)++r->seq));
	json_object_object_add(params, "event", ev);
	serve_notify(srv, r->conn, "agent/event", params);
}

static void hook_event(struct agent_run *r, const char *phase, const struct process *p,
		       const struct error *err)
{
	struct json_object *ev = json_object_new_object();
	json_object_object_add(ev, "type", json_object_new_string("hook"));
	json_object_object_add(ev, "phase", json_object_new_string(phase));
	struct json_object *argv = json_object_new_array();
	for (size_t i = 0; i < p->argv.len; i++)
		json_object_array_add(argv, json_object_new_string(p->argv.items[i]));
	json_object_object_add(ev, "argv", argv);
	bool exited = !err && !p->killed && WIFEXITED(p->raw_status);
	json_object_object_add(ev, "exitCode",
			       exited ? json_object_new_int(WEXITSTATUS(p->raw_status)) : NULL);
	if (err)
		json_object_object_add(ev, "error",
				       json_object_new_string(err->msg ? err->msg : ""));
	else if (!exited)
		json_object_object_add(
		    ev, "signal",
		    json_object_new_int(p->killed ? SIGKILL : WTERMSIG(p->raw_status)));
	if (p->timed_out)
		json_object_object_add(ev, "timedOut", json_object_new_boolean(true));
	emit(r, ev);
}

/* --- The timer: the silence watchdog, then the interrupt's steps --- */

static void arm(struct agent_run *r, uint64_t ms)
{
	if (r->timer.fd < 0)
		return;
	struct itimerspec its = {.it_value = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000}};
	if (!ms)
		its.it_value.tv_nsec = 1;
	(void)timerfd_settime(r->timer.fd, 0, &its, NULL);
}

/* The next signal of an interrupt: INT, TERM after a grace, then KILL. */
static void escalate(struct agent_run *r)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGKILL};
	if (!r->proc || r->signals_sent >= 3)
		return;
	/* A hook has no conversation to save: it ends at once. */
	int sig = r->phase == PHASE_AGENT ? sigs[r->signals_sent] : SIGKILL;
	r->signals_sent = sig == SIGKILL ? 3 : r->signals_sent + 1;
	if (process_kill(r->proc, sig) < 0)
		return;
	if (r->signals_sent < 3)
		arm(r, RUN_GRACE_MS);
}

static void timer_ready(struct server *srv, struct watch *w, uint32_t events)
{
	(void)events;
	struct agent_run *r = container_of(w, struct agent_run, timer);
	uint64_t n;
	if (read(w->fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return;
	if (!r->begun) {
		r->begun = true;
		for (size_t i = 0; i < r->skill_errors.len; i++) {
			struct json_object *ev = json_object_new_object();
			json_object_object_add(ev, "type", json_object_new_string("error"));
			json_object_object_add(ev, "kind", json_object_new_string("skill"));
			json_object_object_add(ev, "message",
					       json_object_new_string(r->skill_errors.items[i]));
			emit(r, ev);
		}
		advance(srv, r);
		return;
	}
	if (!r->signals_sent && r->phase == PHASE_AGENT) {
		/* Nothing from the agent for the watchdog's time: stuck. */
		r->silent = true;
	}
	escalate(r);
}

/* --- The steps --- */

static void output(struct server *srv, struct process *p, enum stream st, const char *buf, size_t n)
{
	(void)srv;
	struct agent_run *r = p->sink_ctx;
	if (r->phase != PHASE_AGENT)
		return; /* a hook's output is its own business */
	if (st == STREAM_STDERR) {
		strbuf_add(&r->stderr_tail, buf, n);
		if (r->stderr_tail.len > STDERR_TAIL) {
			size_t cut = r->stderr_tail.len - STDERR_TAIL;
			memmove(r->stderr_tail.buf, r->stderr_tail.buf + cut, STDERR_TAIL);
			strbuf_setlen(&r->stderr_tail, STDERR_TAIL);
		}
		return;
	}
	if (!r->signals_sent && srv->o->agent_silence_ms)
		arm(r, srv->o->agent_silence_ms);
	agent_stream_feed(r->stream, buf, n, emit, r);
}

static void done(struct server *srv, struct process *p, const struct error *err)
{
	struct agent_run *r = p->sink_ctx;
	r->proc = NULL;
	r->signals_sent = 0;
	/* Between steps nothing is watched: disarmed. */
	(void)timerfd_settime(r->timer.fd, 0, &(struct itimerspec){0}, NULL);
	switch (r->phase) {
	case PHASE_BEFORE: {
		hook_event(r, "before", p, err);
		bool ok = !err && !p->killed && WIFEXITED(p->raw_status) &&
			  WEXITSTATUS(p->raw_status) == 0;
		if (!ok) {
			r->hook_failed = true;
			r->hook_failure =
			    err ? xasprintf("before-hook %s could not start: %s", p->argv.items[0],
					    err->msg ? err->msg : "")
			    : p->timed_out ? xasprintf("before-hook %s timed out", p->argv.items[0])
			    : WIFEXITED(p->raw_status)
				? xasprintf("before-hook %s exited %d", p->argv.items[0],
					    WEXITSTATUS(p->raw_status))
				: xasprintf("before-hook %s was killed by signal %d",
					    p->argv.items[0],
					    p->killed ? SIGKILL : WTERMSIG(p->raw_status));
		}
		r->hook++;
		break;
	}
	case PHASE_AGENT: {
		int status = err ? -1 : p->killed ? (SIGKILL & 0x7f) : p->raw_status;
		r->wait_status = status;
		_cleanup_free_ char *why = NULL;
		const char *tail = r->stderr_tail.len ? r->stderr_tail.buf : NULL;
		if (err)
			tail = why =
			    xasprintf("the agent could not start: %s", err->msg ? err->msg : "");
		else if (r->silent)
			tail = why =
			    xasprintf("the agent said nothing for %llu ms (silence watchdog)",
				      (unsigned long long)srv->o->agent_silence_ms);
		agent_stream_finish(r->stream, status, p->timed_out, r->interrupted || r->silent,
				    tail, emit, r);
		r->completion = agent_stream_completion(r->stream, status);
		if (r->silent)
			json_object_object_add(r->completion, "terminalReason",
					       json_object_new_string("silence"));
		r->phase = PHASE_AFTER;
		r->hook = 0;
		break;
	}
	case PHASE_AFTER:
		hook_event(r, "after", p, err);
		r->hook++;
		break;
	}
	advance(srv, r);
}

static const struct process_sink sink = {.output = output, .done = done};

static int spawn(struct server *srv, struct agent_run *r, const struct strv *argv,
		 const struct strv *env, const char *tag, uint64_t timeout_ms, struct error *err)
{
	struct process_spawn ps = {
	    .argv = argv,
	    .env = env,
	    .tag = tag,
	    .timeout_ms = timeout_ms,
	    .conn = r->conn,
	    .sink = &sink,
	    .ctx = r,
	};
	r->proc = process_spawn(srv, r->session, &ps, err);
	return r->proc ? 0 : -1;
}

static struct json_object *usage_zero(void)
{
	struct json_object *u = json_object_new_object();
	static const char *const k[] = {"input", "output", "cacheRead", "cacheCreation"};
	for (size_t i = 0; i < ARRAY_SIZE(k); i++)
		json_object_object_add(u, k[i], json_object_new_int(0));
	return u;
}

/* A run that ended before the agent did anything: an error result of
 * ours, as an event and as the completion. */
static void fail_early(struct agent_run *r, const char *message, const char *reason)
{
	uint64_t ms = serve_now_ms() - r->start_ms;
	struct json_object *ev = json_object_new_object();
	json_object_object_add(ev, "type", json_object_new_string("result"));
	json_object_object_add(ev, "isError", json_object_new_boolean(true));
	json_object_object_add(ev, "result", json_object_new_string(message));
	json_object_object_add(ev, "numTurns", json_object_new_int(0));
	json_object_object_add(ev, "totalCostUsd", NULL);
	json_object_object_add(ev, "usage", usage_zero());
	json_object_object_add(ev, "durationMs", json_object_new_int64((int64_t)ms));
	json_object_object_add(ev, "terminalReason", json_object_new_string(reason));
	emit(r, ev);
	struct json_object *c = json_object_new_object();
	json_object_object_add(c, "isError", json_object_new_boolean(true));
	json_object_object_add(c, "result", json_object_new_string(message));
	json_object_object_add(c, "usage", usage_zero());
	json_object_object_add(c, "totalCostUsd", NULL);
	json_object_object_add(c, "numTurns", json_object_new_int(0));
	json_object_object_add(c, "durationMs", json_object_new_int64((int64_t)ms));
	json_object_object_add(c, "exitCode", NULL);
	json_object_object_add(c, "terminalReason", json_object_new_string(reason));
	json_object_put(r->completion);
	r->completion = c;
}

static void complete(struct server *srv, struct agent_run *r)
{
	struct session *s = r->session;
	struct json_object *params = r->completion ? r->completion : json_object_new_object();
	r->completion = NULL;
	json_object_object_add(params, "runId", json_object_new_string(r->id));
	/* The whole run's time, hooks included, unless the agent said. */
	struct json_object *d;
	if (!json_object_object_get_ex(params, "durationMs", &d) || !d)
		json_object_object_add(
		    params, "durationMs",
		    json_object_new_int64((int64_t)(serve_now_ms() - r->start_ms)));
	const char *sid = r->stream ? agent_stream_session_id(r->stream) : NULL;
	if (sid)
		json_object_object_add(params, "agentSessionId", json_object_new_string(sid));
	struct json_object *f = json_object_new_object();
	struct json_object *v;
	if (json_object_object_get_ex(params, "isError", &v))
		json_object_object_add(f, "isError", json_object_get(v));
	if (json_object_object_get_ex(params, "terminalReason", &v))
		json_object_object_add(f, "terminalReason", json_object_get(v));
	if (json_object_object_get_ex(params, "totalCostUsd", &v))
		json_object_object_add(f, "totalCostUsd", json_object_get(v));
	if (json_object_object_get_ex(params, "usage", &v))
		json_object_object_add(f, "usage", json_object_get(v));
	audit_run(srv, r, "agent_run_end", f);
	serve_notify(srv, r->conn, "agent/completed", params);
	s->run = NULL;
	session_touch(s);
	run_free(srv, r);
}

static const struct strv *hook_argv(const struct session *s, enum run_phase phase, size_t i)
{
	const struct strv *list = phase == PHASE_BEFORE ? s->hooks_before : s->hooks_after;
	size_t n = phase == PHASE_BEFORE ? s->hooks_before_len : s->hooks_after_len;
	return i < n ? &list[i] : NULL;
}

/* Starts the next step, or completes the run. */
static void advance(struct server *srv, struct agent_run *r)
{
	struct session *s = r->session;
	_cleanup_error_ struct error err = ERROR_INIT;
	for (;;) {
		if (s->state != SESSION_READY) {
			if (!r->completion)
				fail_early(r, "the session ended during the run", "session_ended");
			break;
		}
		if (r->phase == PHASE_BEFORE) {
			if (r->hook_failed || r->interrupted) {
				fail_early(r,
					   r->hook_failure ? r->hook_failure
							   : "interrupted before the agent started",
					   r->hook_failed ? "hook_failed" : "interrupted");
				/* The agent never ran: nothing for the after-hooks. */
				break;
			}
			const struct strv *h = hook_argv(s, PHASE_BEFORE, r->hook);
			if (h) {
				if (spawn(srv, r, h, NULL, "hook-before", HOOK_TIMEOUT_MS, &err) <
				    0) {
					r->hook_failed = true;
					r->hook_failure =
					    xasprintf("before-hook %s could not start: %s",
						      h->items[0], err.msg ? err.msg : "");
					continue;
				}
				return;
			}
			r->phase = PHASE_AGENT;
			r->agent_ran = true;
			if (spawn(srv, r, &r->argv, &r->env, "agent", r->timeout_ms, &err) < 0) {
				_cleanup_free_ char *m = xasprintf("the agent could not start: %s",
								   err.msg ? err.msg : "");
				fail_early(r, m, "start_failed");
				r->phase = PHASE_AFTER;
				r->hook = 0;
				error_release(&err);
				continue;
			}
			if (srv->o->agent_silence_ms)
				arm(r, srv->o->agent_silence_ms);
			return;
		}
		if (r->phase == PHASE_AFTER) {
			const struct strv *h = hook_argv(s, PHASE_AFTER, r->hook);
			if (!h)
				break;
			if (spawn(srv, r, h, NULL, "hook-after", HOOK_TIMEOUT_MS, &err) < 0) {
				struct json_object *ev = json_object_new_object();
				json_object_object_add(ev, "type", json_object_new_string("hook"));
				json_object_object_add(ev, "phase",
						       json_object_new_string("after"));
				struct json_object *argv = json_object_new_array();
				for (size_t i = 0; i < h->len; i++)
					json_object_array_add(argv,
							      json_object_new_string(h->items[i]));
				json_object_object_add(ev, "argv", argv);
				json_object_object_add(ev, "exitCode", NULL);
				json_object_object_add(
				    ev, "error", json_object_new_string(err.msg ? err.msg : ""));
				emit(r, ev);
				error_release(&err);
				r->hook++;
				continue;
			}
			return;
		}
		break;
	}
	complete(srv, r);
}

/* --- The methods --- */

static int strv_param(struct json_object *params, const char *name, struct strv *out,
		      struct error *err)
{
	struct json_object *v;
	if (!json_object_object_get_ex(params, name, &v) || json_object_is_type(v, json_type_null))
		return 0;
	return rpc_param_argv(params, name, false, out, err);
}

static const char *sandbox_env(const struct session *s, const char *name)
{
	size_t n = strlen(name);
	const struct strv *e = &s->spec.env.envp;
	for (size_t i = 0; i < e->len; i++)
		if (!strncmp(e->items[i], name, n) && e->items[i][n] == '=')
			return e->items[i] + n + 1;
	return NULL;
}

/* Codex inside: its own sandbox and approvals off (its sandbox cannot
 * start inside this one, which is the boundary; nobody is there to
 * approve, and without it MCP tools are not offered), no git repository required of the
 * workspace, and, since it reads no base-URL variable for its built-in
 * provider, a provider of its own at the sandbox's OPENAI_BASE_URL (the
 * credential's endpoint, or the session's env), as the codex profile
 * does for the CLI. Inserted after "exec", before the prompt's "--". */
static void codex_options(const struct session *s, struct json_object *mcp, struct strv *argv)
{
	_cleanup_strv_ struct strv extra = STRV_INIT;
	/* MCP servers: the bridge inside, by name ([A-Za-z0-9_-], checked at
	 * session/create, so a plain TOML key). */
	if (mcp) {
		json_object_object_foreach(mcp, name, v)
		{
			(void)v;
			strv_push(&extra, "-c");
			strv_pushf(&extra, "mcp_servers.%s.command=\"%s\"", name, SANDBOX_SELF);
			strv_push(&extra, "-c");
			strv_pushf(&extra, "mcp_servers.%s.args=[\"mcp-bridge\",\"%s\"]", name,
				   name);
		}
	}
	strv_push(&extra, "--skip-git-repo-check");
	strv_push(&extra, "--dangerously-bypass-approvals-and-sandbox");
	const char *base = sandbox_env(s, "OPENAI_BASE_URL");
	/* The value goes into TOML: only a plain URL is passed. */
	if (base && !strpbrk(base, "\"\\\n\r") && !strncmp(base, "http", 4)) {
		strv_push(&extra, "-c");
		strv_push(&extra, "model_provider=\"agent-sandbox\"");
		strv_push(&extra, "-c");
		strv_pushf(&extra,
			   "model_providers.agent-sandbox={name=\"agent-sandbox\",base_url=\"%s\","
			   "env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}",
			   base);
	}
	_cleanup_strv_ struct strv out = STRV_INIT;
	for (size_t i = 0; i < argv->len; i++) {
		strv_push(&out, argv->items[i]);
		if (i == 1)
			for (size_t k = 0; k < extra.len; k++)
				strv_push(&out, extra.items[k]);
	}
	strv_release(argv);
	*argv = out;
	out = (struct strv)STRV_INIT;
}

static void busy(struct server *srv, struct session *s, struct pending **pending)
{
	_cleanup_error_ struct error err = ERROR_INIT;
	error_set(&err, ERROR_BUSY, "session %s is running agent run %s", s->id, s->run->id);
	error_hint(&err, "wait for its agent/completed, or agent/interrupt it");
	struct json_object *data = json_object_new_object();
	json_object_object_add(data, "runId", json_object_new_string(s->run->id));
	serve_answer_data(srv, *pending, NULL, &err, data);
	*pending = NULL;
}

int agent_run_method(struct server *srv, struct conn *c, struct json_object *params,
		     struct pending **pending, struct json_object **result, struct error *err)
{
	const char *sid, *agent, *prompt, *system_prompt = NULL, *model = NULL, *mode = NULL,
					  *resume = NULL;
	int64_t max_turns = 0, timeout = 0;
	bool partial = false, raw = false;
	struct json_object *history = NULL;
	if (rpc_param_string(params, "sessionId", true, &sid, err) < 0 ||
	    rpc_param_string(params, "agent", true, &agent, err) < 0 ||
	    rpc_param_string(params, "prompt", true, &prompt, err) < 0 ||
	    rpc_param_string(params, "systemPrompt", false, &system_prompt, err) < 0 ||
	    rpc_param_string(params, "model", false, &model, err) < 0 ||
	    rpc_param_string(params, "permissionMode", false, &mode, err) < 0 ||
	    rpc_param_string(params, "resume", false, &resume, err) < 0 ||
	    rpc_param_int(params, "maxTurns", false, 1, AGENT_MAX_TURNS, &max_turns, err) < 0 ||
	    rpc_param_int(params, "timeoutMs", false, 1, 1ll << 40, &timeout, err) < 0 ||
	    rpc_param_bool(params, "includePartial", &partial, err) < 0 ||
	    rpc_param_bool(params, "raw", &raw, err) < 0)
		return -1;
	struct agent_run_request req = {
	    .prompt = prompt,
	    .system_prompt = system_prompt,
	    .model = model,
	    .max_turns = (int)max_turns,
	    .permission_mode = mode,
	    .resume = resume,
	    .include_partial = partial,
	};
	if (agent_kind_parse(agent, &req.kind, err) < 0)
		return error_prefix(err, "agent");
	if (json_object_object_get_ex(params, "history", &history) &&
	    !json_object_is_type(history, json_type_null) &&
	    !json_object_is_type(history, json_type_array))
		return error_set(err, ERROR_USAGE,
				 "history must be an array of {\"role\": ..., \"content\": ...}");
	size_t nh = history && json_object_is_type(history, json_type_array)
			? json_object_array_length(history)
			: 0;
	_cleanup_free_ struct agent_message *msgs = nh ? xcalloc(nh, sizeof(*msgs)) : NULL;
	for (size_t i = 0; i < nh; i++) {
		struct json_object *m = json_object_array_get_idx(history, i);
		if (!json_object_is_type(m, json_type_object) ||
		    rpc_param_string(m, "role", true, &msgs[i].role, err) < 0 ||
		    rpc_param_string(m, "content", true, &msgs[i].content, err) < 0)
			return error_set(
			    err, ERROR_USAGE,
			    "history[%zu] must be {\"role\": STRING, \"content\": STRING}", i);
	}
	req.history = msgs;
	req.history_len = nh;
	_cleanup_strv_ struct strv allowed = STRV_INIT, disallowed = STRV_INIT;
	if (strv_param(params, "allowedTools", &allowed, err) < 0 ||
	    strv_param(params, "disallowedTools", &disallowed, err) < 0)
		return -1;
	req.allowed_tools = allowed.len ? &allowed : NULL;
	req.disallowed_tools = disallowed.len ? &disallowed : NULL;

	struct session *s = session_find(srv, c, sid, true, err);
	if (!s)
		return -1;
	if (s->run) {
		busy(srv, s, pending);
		return 1;
	}
	req.command = s->agent_command[req.kind];
	/* The session's MCP servers, through the bridge: Claude Code reads the
	 * .mcp.json written at session/create, Codex takes them as options
	 * (codex_options). */
	_cleanup_(json_object_putp) struct json_object *mcp = mcp_servers_json(s);
	_cleanup_free_ char *mcp_config = NULL;
	if (mcp && req.kind == AGENT_CLAUDE) {
		mcp_config = xasprintf("%s/.mcp.json", s->workspace);
		req.mcp_config = mcp_config;
	}

	_cleanup_strv_ struct strv argv = STRV_INIT;
	if (agent_command(&req, &argv, err) < 0)
		return -1;

	struct agent_run *r = xcalloc(1, sizeof(*r));
	r->srv = srv;
	r->session = s;
	r->conn = c->id;
	r->kind = req.kind;
	r->argv = (struct strv)STRV_INIT;
	r->env = (struct strv)STRV_INIT;
	r->disallowed = disallowed;
	disallowed = (struct strv)STRV_INIT;
	r->skills = (struct strv)STRV_INIT;
	r->calls = (struct strv)STRV_INIT;
	r->skill_errors = (struct strv)STRV_INIT;
	r->stderr_tail = (struct strbuf)STRBUF_INIT;
	r->timer = (struct watch){.ready = timer_ready, .fd = -1};
	r->timeout_ms = (uint64_t)timeout;
	r->start_ms = serve_now_ms();
	snprintf(r->id, sizeof(r->id), "r-%llu", (unsigned long long)++srv->next_run);
	r->argv = argv;
	argv = (struct strv)STRV_INIT;
	if (req.kind == AGENT_CODEX)
		codex_options(s, mcp, &r->argv);
	const char *state = req.kind == AGENT_CLAUDE ? STATE_DIR "/claude" : STATE_DIR "/codex";
	if (session_mkdirs(s, state, 0700, err) < 0) {
		run_free(srv, r);
		return -1;
	}
	strv_pushf(&r->env, "%s=%s/%s",
		   req.kind == AGENT_CLAUDE ? "CLAUDE_CONFIG_DIR" : "CODEX_HOME", s->workspace,
		   state);
	/* Claude Code refuses bypassPermissions as root outside a sandbox. */
	if (req.kind == AGENT_CLAUDE)
		strv_push(&r->env, "IS_SANDBOX=1");
	r->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (r->timer.fd < 0 || serve_watch(srv, &r->timer, EPOLLIN) < 0) {
		error_errno(err, ERROR_SETUP, errno, "timerfd");
		run_free(srv, r);
		return -1;
	}
	r->stream = agent_stream_new(req.kind, partial, raw);
	s->run = r;

	/* Skills: the valid ones copied in now, the others said. */
	struct skill_reports reports = {0};
	bool skill_setup_failed = false;
	_cleanup_error_ struct error serr = ERROR_INIT;
	if (s->skills_dir && skills_install(s->skills_dir, s->workspace_fd, &reports, &serr) < 0)
		skill_setup_failed = true;

	struct json_object *f = json_object_new_object();
	json_object_object_add(f, "agent", json_object_new_string(agent_kind_name(req.kind)));
	struct json_object *jargv = json_object_new_array();
	for (size_t i = 0; i < r->argv.len; i++)
		json_object_array_add(jargv, json_object_new_string(r->argv.items[i]));
	json_object_object_add(f, "argv", jargv);
	audit_run(srv, r, "agent_run_start", f);

	for (size_t i = 0; i < reports.len; i++) {
		if (reports.items[i].ok) {
			strv_push(&r->skills, reports.items[i].name);
			continue;
		}
		_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;
		strbuf_addf(&m, "skill %s skipped:", reports.items[i].name);
		for (size_t k = 0; k < reports.items[i].errors.len; k++)
			strbuf_addf(&m, "%s %s", k ? ";" : "", reports.items[i].errors.items[k]);
		strv_push(&r->skill_errors, m.buf);
	}
	skill_reports_release(&reports);
	if (skill_setup_failed)
		strv_pushf(&r->skill_errors, "skills: %s", serr.msg ? serr.msg : "");

	*result = json_object_new_object();
	json_object_object_add(*result, "runId", json_object_new_string(r->id));
	/* The first step starts from the timer, once this answer is out:
	 * no event comes before the runId it carries. */
	arm(r, 0);
	return 0;
}

int agent_interrupt_method(struct server *srv, struct conn *c, struct json_object *params,
			   struct pending **pending, struct json_object **result, struct error *err)
{
	(void)pending;
	const char *id;
	if (rpc_param_string(params, "runId", true, &id, err) < 0)
		return -1;
	for (struct session *s = srv->sessions; s; s = s->next) {
		if (!s->run || strcmp(s->run->id, id) != 0)
			continue;
		if (strcmp(s->owner, c->owner) != 0)
			return error_set(err, ERROR_DENIED, "run %s belongs to another owner", id);
		struct agent_run *r = s->run;
		if (!r->interrupted) {
			r->interrupted = true;
			struct json_object *f = json_object_new_object();
			json_object_object_add(f, "by", json_object_new_string(c->owner));
			audit_run(srv, r, "agent_run_interrupt", f);
			if (r->begun)
				escalate(r);
		}
		*result = json_object_new_object();
		return 0;
	}
	return error_set(err, ERROR_NOT_FOUND, "no run %s in progress", id);
}

int skills_validate_method(struct server *srv, struct conn *c, struct json_object *params,
			   struct pending **pending, struct json_object **result, struct error *err)
{
	(void)srv;
	(void)pending;
	const char *dir;
	if (rpc_param_string(params, "dir", true, &dir, err) < 0)
		return -1;
	/* The daemon reads the directory as its own user: only a trusted
	 * caller may have it look at a path of the host. */
	if (!c->trusted)
		return error_set(err, ERROR_POLICY,
				 "skills/validate reads a host directory: only the daemon's own "
				 "user (or root) may ask");
	struct skill_reports reports = {0};
	if (skills_validate_dir(dir, &reports, err) < 0)
		return -1;
	*result = skill_reports_json(&reports);
	skill_reports_release(&reports);
	return 0;
}

void agent_run_session_ended(struct server *srv, struct session *s)
{
	/* Its processes have ended (each advanced the run); a run between
	 * steps (not begun yet) completes now. */
	if (s->run && !s->run->proc)
		advance(srv, s->run);
}
