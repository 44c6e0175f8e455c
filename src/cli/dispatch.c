/* This file dispatches the verbs and runs the sandbox. It is the only place
 * that prints errors: everything below returns them. */
#include "cli/dispatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "audit/writer.h"
#include "audit/reader.h"
#include "sandbox/bwrap.h"
#include "base/cleanup.h"
#include "cli/flags.h"
#include "cli/doctor.h"
#include "policy/env.h"
#include "git/repo.h"
#include "sandbox/guard.h"
#include "inside/inside.h"
#include "base/io.h"
#include "inside/launcher.h"
#include "sandbox/hardening.h"
#include "sandbox/nested.h"
#include "net/policy.h"
#include "net/proxy.h"
#include "policy/path.h"
#include "cli/report.h"
#include "sandbox/rundir.h"
#include "inside/init.h"
#include "sandbox/seccomp.h"
#include "spec/plan.h"
#include "sandbox/supervise.h"
#include "policy/trust.h"
#include "base/xalloc.h"

static int check_platform(struct error *err)
{
	struct utsname u;
	if (uname(&u) < 0)
		return error_errno(err, ERROR_SETUP, errno, "uname");
	if (strcmp(u.sysname, "Linux") != 0)
		return error_set(err, ERROR_SETUP,
				 "agent-sandbox runs on Linux only (this is %s): it needs Linux "
				 "namespaces",
				 u.sysname);
	return 0;
}

/* Looks bwrap up on the PATH of the environment we were given. */
static int find_bwrap(char *const *envp, char **out, struct error *err)
{
	*out = env_find_program(envp, "bwrap");
	if (*out)
		return 0;
	error_set(err, ERROR_SETUP, "bwrap (bubblewrap) not found on PATH");
	error_hint(err, "install it: sudo apt-get install bubblewrap (Debian, Ubuntu), sudo dnf "
			"install bubblewrap (Fedora), sudo pacman -S bubblewrap (Arch)");
	return -1;
}

static int find_self(char **out, struct error *err)
{
	_cleanup_free_ char *exe = NULL;
	int r = path_read_link("/proc/self/exe", &exe);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "reading /proc/self/exe");
	if (strstr(exe, " (deleted)"))
		return error_set(err, ERROR_SETUP,
				 "the agent-sandbox binary was replaced or deleted while running "
				 "(%s); run it again",
				 exe);
	*out = steal_ptr(&exe);
	return 0;
}

static void cleanup_auditp(struct audit *a)
{
	audit_close(a);
}

static int open_audit(const struct session *s, const char *empty_file, struct audit *a,
		      struct error *err)
{
	if (audit_open(a, s->audit_dir, err) < 0)
		return -1;
	/* The socket goes next to the empty file, in the private runtime
	 * directory that rundir.c has checked. */
	_cleanup_free_ char *runtime = xstrdup(empty_file);
	*strrchr(runtime, '/') = '\0';
	return audit_listen(a, runtime, err);
}

/* A withdrawn approval is news to the user: the next run of the same
 * config needs `agent-sandbox trust` again. --debug has said it already,
 * among the other trust lines. */
static void note_withdrawn_approval(const struct session *s, const struct debug *dbg, int err_fd)
{
	if (dbg->enabled)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	trust_describe_withdrawal(&s->trust, &sb);
	if (sb.len) {
		write_str(err_fd, "agent-sandbox: ");
		write_all(err_fd, sb.buf, sb.len);
	}
}

/* Inside a sandbox, command settings are not applied (the outer wrappers
 * stay); say so rather than skip what the user asked for in silence. */
static void note_inherited_wrappers(const struct session *s, int err_fd)
{
	if (!s->nested)
		return;
	for (size_t i = 0; i < s->cfg.commands.len; i++)
		if (s->cfg.commands.items[i].layer != LAYER_BUILTIN) {
			write_str(err_fd, "agent-sandbox: note: inside a sandbox the outer "
					  "sandbox's command wrappers stay in force; \"commands\" "
					  "and --cmd are not applied\n");
			return;
		}
}

struct decision_sinks {
	const struct debug *dbg;
	struct audit *audit;
};

/* Every network decision of the proxy arrives here: into the audit log,
 * and onto stderr with --debug. */
static void network_decision(void *ctx, const struct proxy_decision *d)
{
	const struct decision_sinks *sinks = ctx;
	const struct debug *dbg = sinks->dbg;
	audit_network(sinks->audit, d);
	if (!d->allowed) {
		debug_line(dbg, "network: refused %s %s port %u: %s", d->protocol, d->host, d->port,
			   d->reason);
		return;
	}
	if (d->reason) {
		debug_line(dbg, "network: allowed %s %s port %u, failed after %.0f ms: %s",
			   d->protocol, d->host, d->port, d->duration_ms, d->reason);
		return;
	}
	debug_line(
	    dbg, "network: allowed %s %s port %u (%s): %llu bytes out, %llu bytes in, %.0f ms",
	    d->protocol, d->host, d->port, d->address ? d->address : "?",
	    (unsigned long long)d->bytes_out, (unsigned long long)d->bytes_in, d->duration_ms);
}

static int dispatch_proxy(void *proxy)
{
	proxy_dispatch(proxy);
	return 0;
}

static int dispatch_guard(void *guard)
{
	return guard_dispatch(guard);
}

/* Every path the guard moves goes into the audit log at once, and onto
 * stderr with --debug; the summary comes after the command. */
static void guard_reported(void *ctx, const struct guard_event *e)
{
	const struct decision_sinks *sinks = ctx;
	audit_quarantine(sinks->audit, e->path, e->moved_to, e->rule->origin, e->error);
	if (e->moved_to)
		debug_line(sinks->dbg, "guard: %s appeared (%s by %s): moved to %s", e->path,
			   access_level_name(e->rule->level), e->rule->origin, e->moved_to);
	else
		debug_line(sinks->dbg, "guard: %s appeared (%s by %s): %s", e->path,
			   access_level_name(e->rule->level), e->rule->origin, e->error);
}

static void cleanup_guardp(struct guard **g)
{
	guard_free(*g);
}

/* Starts watching the protected paths that do not exist, before anything
 * runs in the sandbox. */
static int start_guard(const struct session *s, const struct guard_plan *plan,
		       const struct audit *audit, struct decision_sinks *sinks,
		       const struct debug *dbg, struct guard **out, struct error *err)
{
	char session[17];
	if (audit->fd >= 0)
		memcpy(session, audit->session, sizeof(session));
	else if (audit_session_id(session) < 0)
		return error_errno(err, ERROR_SETUP, errno, "choosing a session id");
	_cleanup_free_ char *base = s->audit_dir ? xasprintf("%s/quarantine", s->audit_dir) : NULL;
	if (guard_start(out, plan, &s->policy, base, session, guard_reported, sinks, err) < 0)
		return -1;
	struct git_repo repo;
	bool in_repo = git_repo_find(s->cwd, &repo);
	if (in_repo) {
		_cleanup_free_ char *index = xasprintf("%s/index", repo.git_dir);
		guard_watch_repository(*out, repo.toplevel, index);
	}
	if (!s->secrets.skipped_root)
		guard_watch_tree(*out, s->cwd, in_repo ? repo.common : NULL, &s->secrets.skip,
				 &s->secrets.found.git_entries, s->secrets.found.unreadable);
	git_repo_release(&repo);
	report_guard_debug(dbg, plan);
	return 0;
}

/* The host side of a filtered network: the policy, a private directory and
 * the proxy listening in it. Released in reverse by network_stop. */
struct network_session {
	struct net_policy policy;
	struct sandbox_net net;
	char *dir;
	char *socket;
	struct proxy *proxy;
};

static int network_start(struct network_session *ns, const struct session *s, bool dry_run,
			 char *const *envp, const struct debug *dbg,
			 const struct decision_sinks *sinks, struct error *err)
{
	net_policy_build(&s->cfg.network, &ns->policy);
	for (size_t i = 0; i < ns->policy.allow_len; i++)
		debug_line(dbg, "network: allow %s (%s)", ns->policy.allow[i].pattern,
			   ns->policy.allow[i].origin);
	for (size_t i = 0; i < ns->policy.deny_len; i++)
		debug_line(dbg, "network: deny %s (%s)", ns->policy.deny[i].pattern,
			   ns->policy.deny[i].origin);
	if (dry_run)
		ns->socket = xstrdup("$XDG_RUNTIME_DIR/agent-sandbox/net-XXXXXX/proxy.sock");
	else if (rundir_session_dir(env_get(envp, "XDG_RUNTIME_DIR"), &ns->dir, err) < 0)
		return -1;
	else
		ns->socket = xasprintf("%s/proxy.sock", ns->dir);
	ns->net = (struct sandbox_net){
	    .proxy_socket = ns->socket,
	    .http_port = ns->policy.http_port,
	    .socks_port = ns->policy.socks_port,
	    .localhost = ns->policy.localhost,
	    .localhost_len = ns->policy.localhost_len,
	};
	if (dry_run)
		return 0;
	struct proxy_options opt = {
	    .policy = &ns->policy,
	    .socket_path = ns->socket,
	    .on_decision = network_decision,
	    .ctx = (void *)sinks,
	};
	if (proxy_start(&ns->proxy, &opt, err) < 0)
		return -1;
	debug_line(dbg,
		   "network: proxy listening on %s; inside: http 127.0.0.1:%u, socks5 "
		   "127.0.0.1:%u",
		   ns->socket, ns->net.http_port, ns->net.socks_port);
	return 0;
}

static void network_stop(struct network_session *ns)
{
	proxy_free(ns->proxy);
	if (ns->dir)
		rmdir(ns->dir);
	free(ns->dir);
	free(ns->socket);
	net_policy_release(&ns->policy);
	*ns = (struct network_session){0};
}

static inline void cleanup_network_sessionp(struct network_session *ns)
{
	network_stop(ns);
}

/* The identities of the files the sandbox is given besides the policy's
 * (which policy_resolve records): the init checks that bwrap mounted
 * these very objects. The binary is identified by what runs, not by its
 * path. */
static int identify_sources(struct sandbox_plan *plan, struct sandbox_net *net, struct error *err)
{
	struct {
		const char *path;
		struct file_id *id;
	} sources[] = {
	    {"/", &plan->root_id},
	    {"/proc/self/exe", &plan->self_id},
	    {plan->empty_file, &plan->empty_id},
	    {plan->audit_socket, &plan->audit_socket_id},
	    {plan->net ? net->proxy_socket : NULL, &net->proxy_socket_id},
	};
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++) {
		if (!sources[i].path)
			continue;
		int r = file_id_of(sources[i].path, sources[i].id);
		if (r < 0)
			return error_errno(err, ERROR_SETUP, -r, "identifying %s", sources[i].path);
	}
	return 0;
}

/* Seccomp and Landlock, with --debug saying which apply and which the
 * user let go. */
static int plan_layers(const struct session *s, const struct cli *cli, const struct debug *dbg,
		       struct layers *layers, struct error *err)
{
	bool filtered = s->cfg.network.mode == NETWORK_FILTERED;
	if (layers_plan(layers, &s->policy, filtered, cli->allow_degraded, err) < 0) {
		debug_line(dbg, "layers: landlock: ABI %d: %s", layers->landlock_abi, err->msg);
		return -1;
	}
	if (dbg->enabled) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		layers_describe(layers, &sb);
		for (char *line = strtok(sb.buf, "\n"); line; line = strtok(NULL, "\n"))
			debug_line(dbg, "%s", line + strspn(line, " "));
	}
	return 0;
}

static int run_sandbox(const struct cli *cli, char **envp, int in, int out, int err_fd,
		       const struct debug *dbg, struct error *err)
{
	_cleanup_session_ struct session s;
	if (session_build(&s, cli, envp, dbg, err) < 0)
		return -1;

	note_withdrawn_approval(&s, dbg, err_fd);
	note_inherited_wrappers(&s, err_fd);
	if (s.nested) {
		_cleanup_layers_ struct layers layers;
		if (plan_layers(&s, cli, dbg, &layers, err) < 0)
			return -1;
		return nested_run(&s, cli, &layers, out, dbg, err);
	}

	_cleanup_free_ char *bwrap = NULL;
	if (find_bwrap(envp, &bwrap, err) < 0 && !cli->dry_run)
		return -1;
	_cleanup_free_ char *self = NULL;
	if (find_self(&self, err) < 0)
		return -1;
	_cleanup_free_ char *empty = NULL;
	if (rundir_empty_file(env_get(envp, "XDG_RUNTIME_DIR"), &empty, err) < 0)
		return -1;
	_cleanup_close_ int seccomp_fd = seccomp_filter_fd(err);
	if (seccomp_fd < 0)
		return -1;
	_cleanup_layers_ struct layers layers;
	if (plan_layers(&s, cli, dbg, &layers, err) < 0)
		return -1;

	__attribute__((cleanup(cleanup_auditp))) struct audit audit = {
	    .fd = -1, .sock = -1, .stop_pipe = {-1, -1}};
	if (s.audit && open_audit(&s, empty, &audit, err) < 0)
		return -1;
	struct decision_sinks sinks = {.dbg = dbg, .audit = &audit};
	__attribute__((cleanup(cleanup_network_sessionp))) struct network_session ns = {0};
	bool filtered = s.cfg.network.mode == NETWORK_FILTERED;
	if (filtered && network_start(&ns, &s, cli->dry_run, envp, dbg, &sinks, err) < 0)
		return -1;

	_cleanup_guard_plan_ struct guard_plan guard_plan = {0};
	guard_plan_build(&s.policy, &guard_plan);
	__attribute__((cleanup(cleanup_guardp))) struct guard *guard = NULL;
	if (!cli->dry_run && start_guard(&s, &guard_plan, &audit, &sinks, dbg, &guard, err) < 0)
		return -1;

	struct supervisor sv;
	if (supervisor_prepare(&sv, err_fd, err) < 0) {
		supervisor_release(&sv);
		return -1;
	}
	const char *runtime_dir = env_get(envp, "XDG_RUNTIME_DIR");
	bool new_session = !isatty(in);
	_cleanup_strv_ struct strv host_env = STRV_INIT, loader_env = STRV_INIT;
	env_split_loader(strv_array(&s.env.envp), &host_env, &loader_env);
	_cleanup_close_ int mounts_fd = mount_plan_memfd_create(err);
	if (mounts_fd < 0) {
		supervisor_release(&sv);
		return -1;
	}
	struct sandbox_plan plan = {
	    .policy = &s.policy,
	    .host_network = s.cfg.network.mode == NETWORK_HOST,
	    .net = filtered ? &ns.net : NULL,
	    .new_session = new_session,
	    .self_exe = self,
	    .empty_file = empty,
	    .runtime_dir = runtime_dir && !strncmp(runtime_dir, "/run/", 5) ? runtime_dir : NULL,
	    .cwd = s.cwd,
	    .seccomp_fd = seccomp_fd,
	    .info_fd = sv.info_pipe[1],
	    .ready_fd = sv.ready_pipe[1],
	    .stderr_fd = sv.stderr_copy,
	    .ignored_signals = sv.ignored_signals,
	    .command = cli->command,
	    .audit_socket = audit.sock_path,
	    .wrappers = &s.wrappers,
	    .nested = s.nested,
	    .layers = &layers,
	    .allow_unix = s.cfg.docker.value,
	    .loader_env = strv_array(&loader_env),
	    .mounts_fd = mounts_fd,
	};
	if (!cli->dry_run && identify_sources(&plan, &ns.net, err) < 0) {
		supervisor_release(&sv);
		return -1;
	}
	_cleanup_strv_ struct strv args = STRV_INIT;
	_cleanup_mount_plan_ struct mount_plan mounts = {0};
	size_t command_start = bwrap_render(&plan, &args, &mounts);
	report_bwrap_args(dbg, &args);
	debug_line(dbg, "mount check: the init checks %zu mounts before the command starts",
		   mounts.len);

	if (cli->dry_run) {
		supervisor_release(&sv);
		report_dry_run(out, &args);
		/* The proxy is part of agent-sandbox, not of the bwrap command:
		 * say what it would allow, on stderr beside the listing. */
		_cleanup_strbuf_ struct strbuf net = STRBUF_INIT;
		report_network(&net, &s.cfg.network);
		write_all(err_fd, net.buf, net.len);
		return 0;
	}

	if (mount_plan_memfd_seal(mounts_fd, &mounts, err) < 0) {
		supervisor_release(&sv);
		return -1;
	}
	struct supervise_request req = {
	    .bwrap = bwrap,
	    .mounts_fd = mounts_fd,
	    .args = &args,
	    .command_start = command_start,
	    .envp = strv_array(&host_env),
	    .in = in,
	    .out = out,
	    .err = err_fd,
	    .seccomp_fd = seccomp_fd,
	    .new_session = new_session,
	};
	if (ns.proxy)
		req.sources[req.sources_len++] = (struct supervise_source){
		    .fd = proxy_fd(ns.proxy), .ready = dispatch_proxy, .ctx = ns.proxy};
	if (guard)
		req.sources[req.sources_len++] = (struct supervise_source){
		    .fd = guard_fd(guard), .ready = dispatch_guard, .ctx = guard};
	struct audit_start start = {
	    .cwd = s.cwd,
	    .command = cli->command,
	    .policy = &s.policy,
	    .network = s.cfg.network.mode == NETWORK_HOST   ? "host"
		       : s.cfg.network.mode == NETWORK_NONE ? "none"
							    : "filtered",
	    .read_only = s.cfg.read_only.value,
	    .secrets_masked = s.secrets.found.len,
	    .env_dropped = &s.env.dropped,
	    .degraded = &layers.degraded,
	};
	audit_session_start(&audit, &start);
	int status = supervisor_run(&sv, &req, err);
	supervisor_release(&sv);
	if (guard) {
		guard_finish(guard);
		if (status < 0 && guard_stop_reason(guard))
			error_set(err, ERROR_SETUP, "%s", guard_stop_reason(guard));
		report_quarantine(err_fd, guard);
	}
	audit_session_end(&audit, status, status < 0 ? err->msg : NULL);
	return status;
}

static int show_policy(const struct cli *cli, char **envp, int out, const struct debug *dbg,
		       struct error *err)
{
	_cleanup_session_ struct session s;
	if (session_build(&s, cli, envp, dbg, err) < 0)
		return -1;
	struct policy_summary summary = {
	    .cfg = &s.cfg,
	    .presets = s.presets_text,
	    .cwd = s.cwd,
	    .docker_socket = s.docker_socket,
	    .secrets = &s.secrets,
	    .env = &s.env,
	};
	report_policy(out, &s.policy, &summary);
	_cleanup_guard_plan_ struct guard_plan guard_plan = {0};
	guard_plan_build(&s.policy, &guard_plan);
	report_guard_plan(out, &guard_plan, dbg->enabled);
	report_wrappers(out, &s.cfg.commands, &s.wrappers);
	/* Describes the layers without refusing: `policy` runs nothing. */
	_cleanup_layers_ struct layers layers;
	_cleanup_error_ struct error ignored = ERROR_INIT;
	layers_plan(&layers, &s.policy, s.cfg.network.mode == NETWORK_FILTERED, true, &ignored);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addch(&sb, '\n');
	layers_describe(&layers, &sb);
	write_all(out, sb.buf, sb.len);
	_cleanup_strbuf_ struct strbuf trust = STRBUF_INIT;
	trust_describe(&s.trust, &trust);
	write_all(out, trust.buf, trust.len);
	return 0;
}

static int show_log(const struct cli *cli, char **envp, int out, struct error *err)
{
	const char *home = env_get(envp, "HOME");
	_cleanup_free_ char *dir = audit_dir(envp, home && home[0] == '/' ? home : NULL);
	if (!dir)
		return error_set(err, ERROR_SETUP,
				 "cannot locate the audit log: neither XDG_STATE_HOME nor HOME is "
				 "set");
	struct audit_log_query q = {
	    .json = cli->log_json, .blocked = cli->log_blocked, .limit = cli->log_limit};
	return audit_log_print(dir, &q, out, err);
}

int run(int argc, char **argv, char **envp, int in, int out, int err_fd)
{
	/* First: a wrapped command's arguments are its own, whatever they
	 * look like, so none of them can select the init or a verb. */
	if (launcher_applies(argc, argv))
		return launcher_main(argc, argv, envp, err_fd);
	if (argc > 1 && !strcmp(argv[1], SANDBOX_INIT_ARG))
		sandbox_init_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], DOCTOR_PROBE_ARG) && inside_sandbox())
		doctor_probe_main(argc, argv);

	_cleanup_error_ struct error err = ERROR_INIT;
	struct cli cli;
	int status;
	if (cli_parse(argc, argv, &cli, &err) < 0) {
		cli_release(&cli);
		return report_error(err_fd, &err);
	}
	struct debug dbg = {.enabled = cli.debug, .fd = err_fd};

	switch (cli.verb) {
	case VERB_HELP:
		write_str(out, cli_usage);
		status = 0;
		break;
	case VERB_VERSION:
		write_str(out, "agent-sandbox " AGENT_SANDBOX_VERSION "\n");
		status = 0;
		break;
	case VERB_CHECK:
		status = inside_sandbox() ? 0 : 1;
		write_str(out, status == 0 ? "inside sandbox\n" : "outside sandbox\n");
		break;
	case VERB_POLICY:
		status = check_platform(&err);
		if (status == 0)
			status = show_policy(&cli, envp, out, &dbg, &err);
		break;
	case VERB_LOG:
		status = show_log(&cli, envp, out, &err);
		break;
	case VERB_DOCTOR:
		status = check_platform(&err);
		if (status == 0)
			status = doctor_main(envp, out);
		break;
	case VERB_TRUST:
		status = trust_command(cli.command[0], envp, out, &err);
		break;
	case VERB_RUN:
		status = check_platform(&err);
		if (status == 0)
			status = run_sandbox(&cli, envp, in, out, err_fd, &dbg, &err);
		break;
	default:
		status = error_set(&err, ERROR_USAGE, "this verb is not supported yet");
		break;
	}
	cli_release(&cli);
	if (status < 0)
		return report_error(err_fd, &err);
	return status;
}
