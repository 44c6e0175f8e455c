/* This file joins the stages in order: working directory and home, config
 * layers (global, then project or --config, then the request's own), presets,
 * built-in rules, the policy, the trust rule, the wrappers and the
 * protection layers. Each stage's result goes to --debug as soon as it is
 * known. Nothing here writes on the host: sandbox/prepare.c does, for a run. */
#include "spec/spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/dirs.h"
#include "base/output.h"
#include "spec/debug.h"
#include "policy/agent_profile.h"
#include "policy/agent_state.h"
#include "base/io.h"
#include "git/repo.h"
#include "git/config.h"
#include "git/url_credentials.h"
#include "audit/writer.h"
#include "policy/env.h"
#include "policy/host_sockets.h"
#include "inside/inside.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "policy/preset.h"
#include "base/strbuf.h"
#include "policy/trust.h"
#include "sandbox/rundir.h"
#include "base/xalloc.h"

/* The front end's directories for /run/agent-sandbox: each name one plain
 * component that is not already taken there, each directory absolute. */
static int run_binds_copy(const struct sandbox_request *req, struct sandbox_spec *s,
			  struct error *err)
{
	static const char *const taken[] = {"agent-sandbox", "staging", "proxy.sock", "audit.sock"};
	size_t n = req->run_bind_dirs ? req->run_bind_dirs->len : 0;
	if (n != (req->run_bind_names ? req->run_bind_names->len : 0))
		return error_set(err, ERROR_INTERNAL, "run binds: as many names as directories");
	for (size_t i = 0; i < n; i++) {
		const char *name = req->run_bind_names->items[i];
		const char *dir = req->run_bind_dirs->items[i];
		bool bad = !*name || strchr(name, '/') || name[0] == '.' || dir[0] != '/';
		for (size_t k = 0; k < ARRAY_SIZE(taken); k++)
			bad = bad || !strcmp(name, taken[k]);
		if (bad)
			return error_set(err, ERROR_INTERNAL, "run bind %s of %s", name, dir);
		strv_push(&s->run_bind_names, name);
		strv_push(&s->run_bind_dirs, dir);
	}
	return 0;
}

static int resolve_cwd(const struct sandbox_request *req, char **out, struct error *err)
{
	_cleanup_free_ char *here = getcwd(NULL, 0);
	if (!here)
		return error_errno(err, ERROR_SETUP, errno, "reading the working directory");
	_cleanup_free_ char *wanted = NULL;
	if (!req->cwd)
		wanted = xstrdup(here);
	else if (req->cwd[0] == '/')
		wanted = xstrdup(req->cwd);
	else
		wanted = xasprintf("%s/%s", here, req->cwd);

	bool is_dir = false;
	int r = path_resolve(wanted, out, NULL, &is_dir);
	if (r < 0)
		return error_errno(err, ERROR_USAGE, -r, "flag --cwd %s",
				   req->cwd ? req->cwd : here);
	if (!is_dir) {
		free(steal_ptr(out));
		return error_set(err, ERROR_USAGE, "flag --cwd %s: not a directory", req->cwd);
	}
	return 0;
}

/* `base` receives the layers below the project config (defaults and the
 * global config): the trust rule measures the project config against it. */
static int load_layers(struct sandbox_spec *s, const struct sandbox_request *req,
		       struct config *base, struct error *err)
{
	if (s->global_dir) {
		_cleanup_free_ char *global = NULL;
		if (config_find(s->global_dir, "config", &global, err) < 0)
			return -1;
		if (global && config_load_file(&s->cfg, global, LAYER_GLOBAL, err) < 0)
			return -1;
		if (global && config_load_file(base, global, LAYER_GLOBAL, err) < 0)
			return -1;
		if (!global)
			output_debug("config: no global config in %s", s->global_dir);
	}

	_cleanup_free_ char *project = NULL;
	if (req->config_path) {
		_cleanup_free_ char *here = getcwd(NULL, 0);
		if (!here)
			return error_errno(err, ERROR_SETUP, errno,
					   "reading the working directory");
		project = req->config_path[0] == '/' ? xstrdup(req->config_path)
						     : xasprintf("%s/%s", here, req->config_path);
		struct stat st;
		if (stat(project, &st) < 0)
			return error_errno(err, ERROR_USAGE, errno, "flag --config %s",
					   req->config_path);
	} else if (config_find(s->cwd, ".agent-sandbox", &project, err) < 0) {
		return -1;
	}
	if (project) {
		/* One read: the bytes that load are the bytes whose digest the
		 * trust store is asked about, from the file it identifies. */
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		_cleanup_close_ int fd = -1;
		if (config_read_file_fd(project, &fd, &text, &len, err) < 0 ||
		    config_load_text(&s->cfg, project, text, len, LAYER_PROJECT, err) < 0)
			return -1;
		if (trust_identify(&s->trust, project, text, len, fd, err) < 0)
			return -1;
	}
	if (!project)
		output_debug("config: no project config in %s", s->cwd);
	for (size_t i = 0; i < s->cfg.notes.len; i++)
		output_debug("config: %s", s->cfg.notes.items[i]);
	return 0;
}

static void add_request_list(struct strv *list, struct strv *origins, const struct strv *from,
			     const char *flag)
{
	for (size_t i = 0; from && i < from->len; i++)
		config_list_add(list, origins, from->items[i], flag);
}

/* The profile the request asks for: --agent NAME ("none": none), else the
 * one whose command is the basename of what runs. */
static const struct agent_profile *request_profile(const struct sandbox_request *req,
						   const char **reason)
{
	*reason = "--agent";
	if (req->agent)
		return strcmp(req->agent, "none") ? agent_profile_lookup(req->agent) : NULL;
	*reason = "the command's name";
	return req->command && req->command[0] ? agent_profile_for_command(req->command[0]) : NULL;
}

/* The profile's hosts join the allow list as if listed there; the
 * proxy's deny list still wins. Both sides of the trust rule get them:
 * they come from the command line, not from the project config. */
static void add_profile_hosts(struct config *cfg, const struct sandbox_request *req)
{
	const char *reason;
	const struct agent_profile *p = request_profile(req, &reason);
	if (!p || !p->hosts[0])
		return;
	_cleanup_free_ char *origin = xasprintf("agent profile %s", p->name);
	for (const char *const *h = p->hosts; *h; h++)
		net_list_add(&cfg->network.allow, *h, NULL, LAYER_PRESET, origin);
}

/* The request's own settings: the topmost layer. The trust rule's side
 * without the project config gets them too (compare_without_project):
 * what the command line decides, it decides on both sides. --env and
 * --env-block join the configured lists; --env NAME=VALUE comes after
 * env.set, so the command line wins. */
static void apply_request(struct config *cfg, const struct sandbox_request *req)
{
	struct config_origins *o = &cfg->origins;
	add_request_list(&cfg->env_allow, &o->env_allow, req->env_allow, "--env");
	add_request_list(&cfg->env_block, &o->env_block, req->env_block, "--env-block");
	add_request_list(&cfg->env_set, &o->env_set, req->env_set, "--env");
	for (size_t i = 0; req->rules && i < req->rules->len; i++) {
		const struct rule *r = &req->rules->items[i];
		rule_list_add(&cfg->rules, r->pattern, r->level, LAYER_CLI, r->origin);
	}
	for (size_t i = 0; req->sockets && i < req->sockets->len; i++) {
		const struct rule *r = &req->sockets->items[i];
		rule_list_add(&cfg->sockets, r->pattern, r->level, LAYER_CLI, r->origin);
	}
	if (req->network != REQUEST_UNSET)
		config_set_network_mode(
		    &cfg->network, req->network == REQUEST_ON ? NETWORK_HOST : NETWORK_NONE,
		    LAYER_CLI, req->network == REQUEST_ON ? "--network=true" : "--network=false");
	/* --allow-host asks for the filtered network even when a config file
	 * chose another mode. */
	size_t hosts = req->allow_hosts ? req->allow_hosts->len : 0;
	for (size_t i = 0; i < hosts; i++)
		net_list_add(&cfg->network.allow, req->allow_hosts->items[i], NULL, LAYER_CLI,
			     "--allow-host");
	if (hosts && cfg->network.mode != NETWORK_FILTERED)
		config_set_network_mode(&cfg->network, NETWORK_FILTERED, LAYER_CLI, "--allow-host");
	/* --localhost and --resolve, like --allow-host, are the user's own
	 * and ask for the filtered network. The front end validated them. */
	size_t ports = req->localhost ? req->localhost->len : 0;
	for (size_t i = 0; i < ports; i++) {
		net_list_add(&cfg->network.localhost, req->localhost->items[i], NULL, LAYER_CLI,
			     "--localhost");
		cfg->network.localhost.items[cfg->network.localhost.len - 1].port =
		    (uint16_t)strtoul(req->localhost->items[i], NULL, 10);
	}
	size_t pins = req->resolve ? req->resolve->len : 0;
	for (size_t i = 0; i < pins; i++) {
		_cleanup_free_ char *name = NULL, *pin = NULL;
		unsigned port = 0;
		if (!config_parse_resolve_flag(req->resolve->items[i], &name, &pin, &port))
			continue;
		net_list_add(&cfg->network.resolve, name, pin, LAYER_CLI, "--resolve");
		cfg->network.resolve.items[cfg->network.resolve.len - 1].port = (uint16_t)port;
	}
	if ((ports || pins) && cfg->network.mode != NETWORK_FILTERED)
		config_set_network_mode(&cfg->network, NETWORK_FILTERED, LAYER_CLI,
					ports ? "--localhost" : "--resolve");
	if (req->docker != REQUEST_UNSET)
		config_set(&cfg->docker, req->docker == REQUEST_ON, LAYER_CLI, "--docker");
	if (req->read_only != REQUEST_UNSET)
		config_set(&cfg->read_only, req->read_only == REQUEST_ON, LAYER_CLI, "--read-only");
	const struct limit_request *l = req->limits;
	if (l && l->memory)
		config_set_limit(&cfg->limits.memory, l->memory, LAYER_CLI, "--memory");
	if (l && l->cpus)
		config_set_limit(&cfg->limits.cpus, l->cpus, LAYER_CLI, "--cpus");
	if (l && l->pids)
		config_set_limit(&cfg->limits.pids, l->pids, LAYER_CLI, "--pids");
	if (l && l->timeout)
		config_set_limit(&cfg->limits.timeout, l->timeout, LAYER_CLI, "--timeout");
	if (l && l->tmp)
		config_set_limit(&cfg->limits.tmp, l->tmp, LAYER_CLI, "--tmp-size");
	for (size_t i = 0; req->commands && i < req->commands->len; i++) {
		const struct command_setting *c = &req->commands->items[i];
		command_table_set(&cfg->commands, c->name, c->kind, c->script, LAYER_CLI,
				  c->origin);
	}
	add_profile_hosts(cfg, req);
}

/* The command's environment, from the merged lists (apply_request added
 * the request's own). */
static void build_environment(struct sandbox_spec *s, char *const *envp)
{
	struct config *cfg = &s->cfg;
	struct env_rules rules = {
	    .filter_secrets = cfg->env_filter_secrets.value,
	    .allow = &cfg->env_allow,
	    .block = &cfg->env_block,
	    .set = &cfg->env_set,
	};
	env_filter(&rules, envp, &s->env);
	debug_env(&s->env);
}

/* The credentials the request turns on: each key checked on the host, each
 * endpoint given a port inside, the environment pointed at them, and a key
 * file hidden from the sandbox. They need the proxy: the filtered network. */
static const char *network_origin(const struct network_config *n);

static int plan_credentials(struct sandbox_spec *s, const struct sandbox_request *req,
			    char *const *envp, struct error *err)
{
	if (!req->credentials || !req->credentials->len)
		return 0;
	if (s->cfg.network.mode != NETWORK_FILTERED) {
		error_set(err, ERROR_USAGE,
			  "--credential needs the filtered network, but the network is %s (%s)",
			  network_mode_name(s->cfg.network.mode), network_origin(&s->cfg.network));
		error_hint(err, "the key is injected by the filtering proxy; drop --network");
		return -1;
	}
	struct net_list *lh = &s->cfg.network.localhost;
	_cleanup_free_ uint16_t *taken = xcalloc(lh->len + 2, sizeof(*taken));
	taken[0] = 3128, taken[1] = 1080;
	for (size_t i = 0; i < lh->len; i++)
		taken[i + 2] = lh->items[i].port;
	if (credential_plan(&s->cfg, req->credentials, envp, s->home, taken, lh->len + 2,
			    &s->credentials, err) < 0)
		return -1;
	credential_apply_env(&s->credentials, envp, &s->env);
	for (size_t i = 0; i < s->credentials.len; i++) {
		const struct credential *c = &s->credentials.items[i];
		_cleanup_free_ char *origin = xasprintf("--credential %s", c->name);
		if (c->file)
			rule_list_add(&s->cfg.rules, c->file, ACCESS_EXCLUDE, LAYER_CLI, origin);
		/* The key kept by hand in a home file (an export in ~/.bashrc,
		 * an agent's login file) would undo the rest: such files are
		 * hidden too. */
		_cleanup_strv_ struct strv holders = STRV_INIT;
		credential_find_key_files(c, envp, s->home, &holders);
		for (size_t k = 0; k < holders.len; k++) {
			output_debug("credential: %s: %s holds its key: hidden inside", c->name,
				     holders.items[k]);
			_cleanup_free_ char *escaped = pattern_escape(holders.items[k]);
			rule_list_add(&s->cfg.rules, escaped, ACCESS_EXCLUDE, LAYER_CLI, origin);
		}
		/* The agent's own login for that account is as good as the
		 * key: hidden too (Claude Code in a CLAUDE_CONFIG_DIR of the
		 * user's keeps it there). */
		_cleanup_strv_ struct strv logins = STRV_INIT;
		credential_stored_logins(c, &logins);
		_cleanup_free_ char *login_origin =
		    xasprintf("--credential %s (stored login)", c->name);
		for (size_t k = 0; k < logins.len; k++) {
			rule_list_add(&s->cfg.rules, logins.items[k], ACCESS_EXCLUDE, LAYER_CLI,
				      login_origin);
			const char *dir =
			    agent_state_users_claude_dir(envp, s->home, inside_sandbox());
			if (dir && dir[0] == '/' && !strncmp(logins.items[k], "~/.claude/", 10)) {
				_cleanup_free_ char *moved =
				    xasprintf("%s/%s", dir, logins.items[k] + 10);
				_cleanup_free_ char *escaped = pattern_escape(moved);
				rule_list_add(&s->cfg.rules, escaped, ACCESS_EXCLUDE, LAYER_CLI,
					      login_origin);
			}
		}
		for (size_t k = 0; k < c->endpoints_len; k++)
			output_debug("credential: %s (%s): %s is reached at http://127.0.0.1:%u "
				     "inside; the key stays in the proxy",
				     c->name, c->origin, c->endpoints[k].host,
				     c->endpoints[k].port);
	}
	return 0;
}

/* The profile's variables, over what the command inherits; env.set and
 * --env NAME=VALUE win. Its key variables that the secret filter dropped
 * are noted for the front end to name. */
static void apply_profile_env(struct sandbox_spec *s)
{
	const struct agent_profile *p = s->profile;
	if (!p)
		return;
	for (const char *const *e = p->env; *e; e++) {
		_cleanup_free_ char *name = xstrndup(*e, strcspn(*e, "="));
		if (strv_contains(&s->env.set, name)) {
			strv_push(&s->profile_env_lost, name);
			output_debug(
			    "agents: %s keeps the value env.set or --env gives it, not the "
			    "%s profile's %s",
			    name, p->name, *e);
			continue;
		}
		env_put(&s->env.envp, *e);
		strv_push(&s->env.set, name);
		strv_push(&s->profile_env, *e);
		output_debug("agents: %s for the %s profile", *e, p->name);
	}
	for (const char *const *k = p->keys; *k; k++) {
		/* An injected credential put its placeholder there: nothing
		 * to say. */
		if (env_get(strv_array(&s->env.envp), *k))
			continue;
		for (size_t i = 0; i < s->env.dropped.len; i++)
			if (!strcmp(s->env.dropped.items[i], *k) &&
			    !strncmp(s->env.reasons.items[i], "looks like a secret", 19))
				strv_push(&s->profile_dropped, *k);
	}
}

/* The profile's state directories that do not exist yet: a run creates
 * them on the host (sandbox_prepare_host), they are the agent's own state
 * and persist. Not inside a sandbox (the outer one decides), not without
 * @agents (which keeps what the agents run read-only), not when
 * read-only mode is strict (nothing could be written to them). */
static void check_profile_state(struct sandbox_spec *s)
{
	const struct agent_profile *p = s->profile;
	s->profile_state = p && (s->presets & preset_lookup("@agents"));
	if (p && !s->profile_state)
		output_debug("agents: without @agents the %s profile leaves its state "
			     "directories as the other rules say",
			     p->name);
	if (!s->profile_state || !s->home || inside_sandbox() ||
	    (s->cfg.read_only.value && s->read_only_strict))
		return;
	for (const char *const *d = p->state; *d; d++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", s->home, *d + 2);
		struct stat st;
		if (lstat(path, &st) < 0 && errno == ENOENT) {
			strv_push(&s->profile_missing, *d);
			output_debug("agents: %s does not exist: a run creates it for %s, and the "
				     "agent's state persists there",
				     *d, p->name);
		}
	}
}

/* A text of several lines, one --debug line each. */
static void debug_lines(struct strbuf *sb)
{
	for (char *line = sb->buf, *end; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		output_debug("%s", line);
	}
}

static void debug_profile(const struct sandbox_spec *s)
{
	if (!output_debug_enabled())
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	sandbox_spec_describe_profile(s, &sb);
	debug_lines(&sb);
}

/* With @agents, Claude Code inside works on a global config of its own
 * (agent_state.c). An env.set or --env of CLAUDE_CONFIG_DIR wins. */
static void point_claude_at_its_copy(struct sandbox_spec *s, char *const *envp)
{
	s->claude_config_dir = agent_state_users_claude_dir(envp, s->home, inside_sandbox());
	if (!(s->presets & preset_lookup("@agents")))
		return;
	_cleanup_free_ char *entry = agent_state_claude_env(envp, s->home);
	if (!entry || env_get(strv_array(&s->env.envp), "CLAUDE_CONFIG_DIR"))
		return;
	strv_push(&s->env.envp, entry);
	strv_push(&s->env.set, "CLAUDE_CONFIG_DIR");
	s->seed_claude = true;
	output_debug("agents: %s, so that Claude Code keeps its own copy of ~/.claude.json", entry);
}

/* A run makes the directories agent sessions source from before it plans
 * (sandbox/prepare.c), so that they are mounted read-only like any other;
 * the plan only says whether any is missing. Inside a sandbox, or in
 * strict read-only mode, nothing is made. */
static void check_agent_dirs(struct sandbox_spec *s)
{
	s->agent_dirs_missing = (s->presets & preset_lookup("@agents")) && s->home &&
				!inside_sandbox() &&
				!(s->cfg.read_only.value && s->read_only_strict) &&
				agent_state_sourced_dirs_missing(s->home, s->claude_config_dir);
}

/* The socket path, or NULL when there is no socket file to decide on
 * (tcp:// and ssh:// endpoints are network matters, not files). */
static char *find_docker_socket(char *const *envp)
{
	const char *host = env_get(envp, "DOCKER_HOST");
	const char *path = NULL;
	if (!host || !*host)
		path = "/var/run/docker.sock";
	else if (!strncmp(host, "unix://", 7) && host[7] == '/')
		path = host + 7;
	struct stat st;
	if (!path || stat(path, &st) < 0)
		return NULL;
	return xstrdup(path);
}

/* The paths a run may bind into its private /tmp and /run: the project,
 * the home directory and what a rule names (up to its first glob). More
 * than is bound costs a mask that is not needed, never a socket left out. */
static void bound_paths(const struct sandbox_spec *s, struct strv *binds)
{
	strv_push(binds, s->cwd);
	if (s->home)
		strv_push(binds, s->home);
	for (size_t i = 0; i < s->cfg.rules.len; i++) {
		const struct rule *r = &s->cfg.rules.items[i];
		if (r->level == ACCESS_EXCLUDE)
			continue;
		_cleanup_free_ char *prefix = xstrdup(r->pattern);
		prefix[strcspn(prefix, "*?[")] = '\0';
		char *slash = strrchr(prefix, '/');
		if (pattern_has_glob(r->pattern) && slash)
			*slash = '\0';
		_cleanup_free_ char *path = NULL;
		_cleanup_error_ struct error err = ERROR_INIT;
		if (*prefix && path_expand(prefix, s->home, s->cwd, &path, &err) == 0)
			strv_push(binds, path);
	}
}

/* The host's sockets cfg lets through: each listed one that is there now,
 * and the Docker socket with --docker, by canonical path (the scan of
 * /proc/net/unix names them so). A listed path that is something else
 * than a socket is refused: the entry would expose a file or a tree. */
static int listed_sockets(const struct sandbox_spec *s, const struct config *cfg, bool explain,
			  struct strv *out, struct error *err)
{
	for (size_t i = 0; i < cfg->sockets.len; i++) {
		const struct rule *r = &cfg->sockets.items[i];
		_cleanup_free_ char *path = NULL;
		if (path_expand(r->pattern, s->home, s->cwd, &path, err) < 0)
			return error_prefix(err, "socket %s (%s)", r->pattern, r->origin);
		struct stat st;
		if (stat(path, &st) < 0) {
			if (explain)
				output_debug(
				    "sockets: %s (%s) is not there now: nothing to let through",
				    path, r->origin);
			continue;
		}
		if (!S_ISSOCK(st.st_mode))
			return error_set(err, ERROR_CONFIG,
					 "socket %s (%s) is not a unix socket: a socket entry "
					 "never exposes a file or a directory",
					 path, r->origin);
		char *real = realpath(path, NULL);
		if (real)
			strv_push_owned(out, real);
	}
	if (cfg->docker.value && s->docker_socket) {
		char *real = realpath(s->docker_socket, NULL);
		if (real)
			strv_push_owned(out, real);
	}
	return 0;
}

static int collect_sockets(struct sandbox_spec *s, struct error *err)
{
	if (listed_sockets(s, &s->cfg, true, &s->listed_sockets, err) < 0)
		return -1;
	/* Inside a sandbox the outer one hid the host's sockets already;
	 * what is bound here now was made inside. */
	if (!inside_sandbox()) {
		_cleanup_strv_ struct strv binds = STRV_INIT;
		bound_paths(s, &binds);
		host_sockets_scan(&binds, s->cwd, s->home, &s->host_sockets);
	}
	output_debug("sockets: %zu bound on the host outside the private mounts, %zu let "
		     "through",
		     s->host_sockets.len, s->listed_sockets.len);
	return 0;
}

/* Landlock ABI 9 refuses the command every unix socket made outside it but
 * these: the listed ones and the audit socket, for a blocked command's
 * report when its caller closed the inherited descriptor. */
static void add_listed_sockets(struct sandbox_spec *s)
{
	for (size_t i = 0; i < s->listed_sockets.len; i++)
		hardening_add_socket(&s->hardening, s->listed_sockets.items[i]);
	hardening_add_socket(&s->hardening, AUDIT_SOCKET_INSIDE);
}

static void add_docker_rule(const struct sandbox_spec *s, const struct config *cfg,
			    struct rule_list *rules)
{
	if (!s->docker_socket)
		return;
	_cleanup_free_ char *escaped = pattern_escape(s->docker_socket);
	if (cfg->docker.value)
		rule_list_add(rules, escaped, ACCESS_RW, LAYER_BUILTIN, cfg->docker.origin);
	else
		rule_list_add(rules, escaped, ACCESS_EXCLUDE, LAYER_BUILTIN,
			      "docker socket hidden (--docker exposes it)");
}

/* Every rule a run gets, from one config: built-in rules (the Docker
 * socket, host service sockets, the audit log and trust store, secret
 * files), presets, then the config layers. The real policy and the one the
 * trust rule measures a project config against (the same config without
 * it) both come from here, so that neither can miss a rule the other has. */
static void build_rules(const struct sandbox_spec *s, const struct config *cfg, char *const *envp,
			struct rule_list *rules)
{
	add_docker_rule(s, cfg, rules);
	/* What this cfg lists: the trust rule's side without the project
	 * config keeps the sockets the project config lists hidden. Errors
	 * were the real config's to report (collect_sockets). */
	_cleanup_strv_ struct strv listed = STRV_INIT;
	_cleanup_error_ struct error ignored = ERROR_INIT;
	(void)listed_sockets(s, cfg, false, &listed, &ignored);
	_cleanup_free_ char *own_dir = rundir_base(env_get(envp, "XDG_RUNTIME_DIR"));
	host_sockets_add_rules(envp, s->home, s->cwd, own_dir, &s->host_sockets, &listed, rules);
	for (size_t i = 0; i < cfg->sockets.len; i++) {
		const struct rule *r = &cfg->sockets.items[i];
		rule_list_add(rules, r->pattern, r->level, r->layer, r->origin);
	}
	/* Before the presets: on the same path (@agents' ~/.claude), the
	 * first of equal rules decides, and this one stays rw in read-only
	 * mode. */
	if (s->profile_state) {
		_cleanup_free_ char *origin =
		    xasprintf("agent profile %s (state)", s->profile->name);
		for (const char *const *d = s->profile->state; *d; d++)
			rule_list_add_agent_state(rules, *d, LAYER_PRESET, origin);
	}
	/* Branch mode: the host checkout is seen read-only where it is, and
	 * @git opens its repository's objects and refs for `git push host`. */
	struct git_repo host = {0};
	if (s->branch && git_repo_find(s->project_dir, &host)) {
		_cleanup_free_ char *escaped = pattern_escape(s->project_dir);
		rule_list_add(rules, escaped, ACCESS_RO, LAYER_PRESET,
			      "branch mode (the host checkout)");
	}
	struct preset_context pctx = {
	    .branch_host_top = host.toplevel,
	    .branch_host_git = host.common,
	    .cwd = s->cwd,
	    .home = s->home,
	    .global_config_dir = s->global_dir,
	    .config_files = &cfg->files,
	    .git_entries = &s->secrets.found.git_entries,
	    .envp = envp,
	    .claude_config_dir = s->claude_config_dir,
	};
	preset_expand(preset_select(&cfg->presets), &pctx, rules);
	git_repo_release(&host);
	for (size_t i = 0; i < cfg->rules.len; i++) {
		const struct rule *r = &cfg->rules.items[i];
		rule_list_add(rules, r->pattern, r->level, r->layer, r->origin);
	}
	if (s->audit_dir) {
		_cleanup_free_ char *escaped = pattern_escape(s->audit_dir);
		rule_list_add(rules, escaped, ACCESS_EXCLUDE, LAYER_BUILTIN,
			      "audit log (written only from outside)");
	}
	secrets_add_rules(&s->secrets, &s->host_sockets, rules);
	if (s->branch)
		secrets_add_rules(&s->host_secrets, NULL, rules);
}

/* The access table a run of cfg gets: the real one and the trust rule's
 * side without the project config both come from here. */
static int resolve_policy(const struct sandbox_spec *s, const struct config *cfg, char *const *envp,
			  struct rule_list *rules, struct policy *policy, struct error *err)
{
	build_rules(s, cfg, envp, rules);
	struct policy_input in = {
	    .rules = rules,
	    .cwd = s->cwd,
	    .home = s->home,
	    .read_only = cfg->read_only.value,
	    .read_only_strict = s->read_only_strict,
	};
	return policy_resolve(&in, policy, err);
}

static const char *setting_origin(const struct config_setting *s)
{
	return s->layer == LAYER_BUILTIN ? "default" : s->origin;
}

/* Nested runs keep the outer sandbox's wrappers: the outer launchers stay
 * mounted over its PATH (the host root is bound recursively) and the outer
 * /run/agent-sandbox is carried in, so nothing here can lift them. */
static int build_wrappers(struct sandbox_spec *s, char *const *envp, struct error *err)
{
	s->nested = inside_sandbox();
	struct wrapper_input in = {
	    .commands = &s->cfg.commands,
	    .path_env = env_get(envp, "PATH"),
	    .cwd = s->cwd,
	    .home = s->home,
	    .policy = &s->policy,
	    .envp = strv_array(&s->env.envp),
	    .nested = s->nested,
	};
	if (wrapper_plan_build(&in, &s->wrappers, err) < 0)
		return -1;
	debug_wrappers(&s->cfg.commands, &s->wrappers);
	return 0;
}

static const char *network_origin(const struct network_config *n)
{
	return n->layer == LAYER_BUILTIN ? "default" : n->origin;
}

/* What the project config loosens: the run planned without it (the layers
 * below it and the request's own, through the same functions as the real
 * plan) against the real one. Planning the side without it skips only the
 * secret scan, which walks the tree: both sides mask the files the real
 * scan found, and what the project config changes in the scan's settings
 * is compared setting by setting (trust_compare). */
static void compare_without_project(struct sandbox_spec *s, const struct sandbox_request *req,
				    struct config *base, char *const *envp)
{
	apply_request(base, req);
	_cleanup_rule_list_ struct rule_list rules = RULE_LIST_INIT;
	_cleanup_policy_ struct policy before = {0};
	_cleanup_error_ struct error perr = ERROR_INIT;
	bool refused = resolve_policy(s, base, envp, &rules, &before, &perr) < 0;
	if (refused)
		strv_pushf(&s->trust.loosenings,
			   "%s: without this file the policy is refused (%s), with it the run "
			   "starts",
			   s->trust.file, perr.msg);
	const struct trust_side without = {.cfg = base, .policy = refused ? NULL : &before};
	const struct trust_side with = {.cfg = &s->cfg, .policy = &s->policy};
	trust_compare(&s->trust, &without, &with, s->cwd, s->home);
}

/* Whether the project config may apply, and what it loosens. A run of a
 * refused spec stops (sandbox_spec_trust_refused); `policy` shows the
 * verdict. Withdrawing a stale approval is the run's (sandbox/prepare.c). */
static void check_trust(struct sandbox_spec *s, const struct sandbox_request *req,
			struct config *base, char *const *envp)
{
	bool inside = inside_sandbox();
	_cleanup_free_ char *store = trust_store_dir(envp, s->home);
	if (!s->trust.file) {
		s->trust.state = TRUST_NO_FILE;
		if (!req->config_path && !inside)
			trust_find_gone(&s->trust, s->cwd, store);
	} else {
		/* Inside too: nothing is refused there (the outer sandbox
		 * bounds the run), but `policy` still names what it loosens. */
		compare_without_project(s, req, base, envp);
		trust_decide(&s->trust, store, inside);
	}
	if (!output_debug_enabled())
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	trust_describe(&s->trust, &sb);
	debug_lines(&sb);
}

bool sandbox_spec_trust_refused(const struct sandbox_spec *s)
{
	return s->trust.state == TRUST_UNAPPROVED || s->trust.state == TRUST_CHANGED ||
	       s->trust.state == TRUST_REPLACED;
}

/* Why the sandbox does not show path: an exclude rule, or the private
 * mount it lies under. --ro makes a host path visible under /tmp, /run
 * and beneath an excluded directory (the deeper rule wins); /dev and /proc
 * are made fresh and take no rules. */
static bool hidden_at(const struct policy *p, const char *path, struct hidden_command *out)
{
	const struct access_entry *e = policy_entry_for(p, path);
	if (policy_shows_host_path(e, path))
		return false;
	*out = (struct hidden_command){.host_path = xstrdup(path)};
	if (e && e->level == ACCESS_EXCLUDE) {
		out->hidden_by = xstrdup(e->path);
		out->rule = e->rule ? e->rule->origin : NULL;
		out->ro_shows_it = true;
		return true;
	}
	const struct base_mount *base = policy_base_for(path);
	out->hidden_by = xstrdup(base->path);
	out->ro_shows_it = base->kind == BASE_TMPFS;
	return true;
}

bool sandbox_spec_hidden_command(const struct sandbox_spec *s, struct hidden_command *out)
{
	*out = (struct hidden_command){0};
	if (!s->command.len || !s->command.items[0][0])
		return false;
	const char *name = s->command.items[0];
	_cleanup_free_ char *found =
	    !strchr(name, '/') ? env_find_program(strv_array((struct strv *)&s->env.envp), name)
	    : name[0] == '/'   ? xstrdup(name)
			       : xasprintf("%s/%s", s->cwd, name);
	if (!found)
		return false;
	_cleanup_free_ char *resolved = realpath(found, NULL);
	/* The name on PATH first; then where a symlink there leads (a
	 * ~/.local/bin entry pointing into the host's /tmp). */
	return resolved &&
	       (hidden_at(&s->policy, found, out) || hidden_at(&s->policy, resolved, out));
}

void hidden_command_release(struct hidden_command *h)
{
	free(h->host_path);
	free(h->hidden_by);
	*h = (struct hidden_command){0};
}

static void describe_list(struct strbuf *sb, const char *label, const char *const *items)
{
	if (!items[0])
		return;
	strbuf_addf(sb, "  %-17s", label);
	for (const char *const *i = items; *i; i++)
		strbuf_addf(sb, "%s%s", i == items ? "" : " ", *i);
	strbuf_addch(sb, '\n');
}

void sandbox_spec_describe_profile(const struct sandbox_spec *s, struct strbuf *sb)
{
	const struct agent_profile *p = s->profile;
	if (!p) {
		strbuf_addstr(sb, "agent profile      none (a command named like an agent, or "
				  "--agent NAME, applies one)\n");
		return;
	}
	strbuf_addf(sb, "agent profile      %s (from %s)\n", p->name, s->profile_reason);
	bool strict = s->cfg.read_only.value && s->read_only_strict;
	for (const char *const *d = p->state; *d; d++) {
		strbuf_addf(sb, "  state            %s  ", *d);
		if (!s->profile_state)
			strbuf_addstr(sb, "not applied: @agents is off\n");
		else
			strbuf_addf(sb, "%s%s\n",
				    strict		     ? "ro (--read-only=strict)"
				    : s->cfg.read_only.value ? "rw, also in read-only mode"
							     : "rw",
				    strv_contains(&s->profile_missing, *d)
					? "; missing: a run creates it (the agent's own state, "
					  "kept)"
					: "");
	}
	for (size_t i = 0; i < s->profile_env.len; i++)
		strbuf_addf(sb, "  env              %s\n", s->profile_env.items[i]);
	for (size_t i = 0; i < s->profile_env_lost.len; i++)
		strbuf_addf(sb, "  env              %s as env.set or --env says\n",
			    s->profile_env_lost.items[i]);
	if (s->cfg.network.mode == NETWORK_FILTERED)
		describe_list(sb, "hosts", p->hosts);
	for (size_t i = 0; i < s->profile_dropped.len; i++)
		strbuf_addf(sb, "  key              %s dropped (it looks like a secret)\n",
			    s->profile_dropped.items[i]);
	if (p->note)
		strbuf_addf(sb, "  note             %s\n", p->note);
}

#define GIT_CONFIG_MAX (4 * 1024 * 1024)

#define GIT_INCLUDE_DEPTH_MAX 10 /* git's own limit */

struct include_walk {
	struct sandbox_spec *s;
	struct strv *seen;
	const char *file; /* as git opens it: includes are relative to it */
	int depth;
};

static void add_git_config_copy(struct sandbox_spec *s, struct strv *seen, const char *file,
				int depth);

/* A file a config includes is read by git as part of it, so its URL
 * credentials are as much in view: each is shown without them too. */
static int follow_include(const char *key, const char *value, void *data)
{
	struct include_walk *w = data;
	_cleanup_free_ char *path = git_config_include_path(key, value, w->file, w->s->home);
	if (path && w->depth < GIT_INCLUDE_DEPTH_MAX)
		add_git_config_copy(w->s, w->seen, path, w->depth + 1);
	return 0;
}

/* One git config file, and those it includes, when their URLs or extra
 * headers carry credentials and the sandbox shows the file at all. */
static void add_git_config_copy(struct sandbox_spec *s, struct strv *seen, const char *file,
				int depth)
{
	_cleanup_free_ char *path = realpath(file, NULL);
	if (!path || strv_contains(seen, path))
		return;
	strv_push(seen, path);
	const struct access_entry *e = policy_entry_for(&s->policy, path);
	if (e && e->level == ACCESS_EXCLUDE)
		return;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file(path, GIT_CONFIG_MAX, &text, &len) < 0)
		return;
	struct include_walk walk = {.s = s, .seen = seen, .file = file, .depth = depth};
	/* A malformed line stops git's reading, and ours, there. */
	git_config_parse(text, len, follow_include, &walk);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	size_t removed = git_strip_url_credentials(text, len, &sb);
	if (!removed)
		return;
	s->git_config_copies = xreallocarray(s->git_config_copies, s->git_config_copies_len + 1,
					     sizeof(*s->git_config_copies));
	struct git_config_copy *c = &s->git_config_copies[s->git_config_copies_len++];
	c->path = steal_ptr(&path);
	c->len = sb.len;
	c->text = strbuf_detach(&sb);
	c->removed = removed;
	output_debug("git: %s shown without %zu credential%s (URLs, extraHeader values)", c->path,
		     removed, removed == 1 ? "" : "s");
}

/* The repository git finds from dir: its config and its worktree's. */
static void add_repo_config_copies(struct sandbox_spec *s, struct strv *seen, const char *dir)
{
	struct git_repo repo;
	if (!git_repo_find(dir, &repo))
		return;
	_cleanup_strv_ struct strv files = STRV_INIT;
	git_config_files(NULL, NULL, repo.git_dir, repo.common, &files);
	git_repo_release(&repo);
	/* The first is the system's, which the user's list covers. */
	for (size_t i = 1; i < files.len; i++)
		add_git_config_copy(s, seen, files.items[i], 0);
}

/* The config files a git inside reads, as git_config_files lists them:
 * the system's and the user's (where an insteadOf often carries a CI
 * token, and GIT_CONFIG_GLOBAL may name another file), the working
 * directory's repository's (which may lie above it) and that of every
 * repository beneath it that the secret scan met. */
static void plan_git_config_copies(struct sandbox_spec *s, char *const *envp)
{
	_cleanup_strv_ struct strv seen = STRV_INIT;
	_cleanup_strv_ struct strv user = STRV_INIT;
	git_config_files(envp, s->home, NULL, NULL, &user);
	for (size_t i = 0; i < user.len; i++)
		add_git_config_copy(s, &seen, user.items[i], 0);
	add_repo_config_copies(s, &seen, s->cwd);
	const struct strv *entries = &s->secrets.found.git_entries;
	for (size_t i = 0; i < entries->len; i++) {
		_cleanup_free_ char *dir = xstrdup(entries->items[i]);
		*strrchr(dir, '/') = '\0';
		add_repo_config_copies(s, &seen, dir);
	}
}

/* An agent that takes its API's address from its options gets them after
 * argv[0] when its credential is injected; only when argv[0] is the agent
 * itself (not `npx ...` chosen with --agent), where they are its options. */
static void add_profile_credential_args(struct sandbox_spec *s)
{
	const struct agent_profile *p = s->profile;
	if (!p || !p->credential_args || !s->command.len ||
	    agent_profile_for_command(s->command.items[0]) != p)
		return;
	const struct credential_endpoint *e = NULL;
	for (size_t i = 0; i < s->credentials.len && !e; i++) {
		const struct credential *c = &s->credentials.items[i];
		if (strcmp(c->name, p->credential))
			continue;
		for (size_t k = 0; k < c->endpoints_len && !e; k++)
			if (c->endpoints[k].base_url_env)
				e = &c->endpoints[k];
	}
	if (!e)
		return;
	_cleanup_free_ char *url = xasprintf("http://127.0.0.1:%u%s", e->port, e->base_url_path);
	struct strv args = STRV_INIT;
	size_t added = 0;
	strv_push(&args, s->command.items[0]);
	for (const char *const *a = p->credential_args; *a; a++) {
		const char *at = strstr(*a, "{base_url}");
		if (at)
			strv_pushf(&args, "%.*s%s%s", (int)(at - *a), *a, url, at + 10);
		else
			strv_push(&args, *a);
		added++;
	}
	for (size_t i = 1; i < s->command.len; i++)
		strv_push(&args, s->command.items[i]);
	strv_release(&s->command);
	s->command = args;
	output_debug("agents: %s gets its API's address from its options: %zu arguments "
		     "added after %s for the %s credential",
		     p->name, added, s->command.items[0], p->credential);
}

/* The port of an http(s) URL on the loopback ("http://127.0.0.1:8080/v1"),
 * or 0 when it names another host. */
static unsigned loopback_url_port(const char *url)
{
	unsigned port;
	if (!strncmp(url, "http://", 7))
		url += 7, port = 80;
	else if (!strncmp(url, "https://", 8))
		url += 8, port = 443;
	else
		return 0;
	static const char *const loopback[] = {"127.0.0.1", "localhost", "[::1]"};
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(loopback) && !n; i++)
		if (!strncasecmp(url, loopback[i], strlen(loopback[i])))
			n = strlen(loopback[i]);
	if (!n)
		return 0;
	url += n;
	if (*url == ':') {
		char *end;
		errno = 0;
		unsigned long v = strtoul(url + 1, &end, 10);
		if (errno || end == url + 1 || v == 0 || v > 65535 || (*end && *end != '/'))
			return 0;
		port = (unsigned)v;
	} else if (*url && *url != '/') {
		return 0; /* "localhost.example.com" */
	}
	return port;
}

static bool port_forwarded(const struct sandbox_spec *s, unsigned port)
{
	const struct net_list *lh = &s->cfg.network.localhost;
	for (size_t i = 0; i < lh->len; i++)
		if (lh->items[i].port == port)
			return true;
	for (size_t i = 0; i < s->credentials.len; i++)
		for (size_t k = 0; k < s->credentials.items[i].endpoints_len; k++)
			if (s->credentials.items[i].endpoints[k].port == port)
				return true;
	return false;
}

/* An agent pointed at an API on the host's loopback that the filtered
 * network does not forward retries against nothing, for minutes, saying
 * nothing: the variables that do that are noted for the front end. */
static void check_loopback_urls(struct sandbox_spec *s)
{
	if (s->cfg.network.mode != NETWORK_FILTERED)
		return;
	for (size_t i = 0; i < s->env.envp.len; i++) {
		const char *e = s->env.envp.items[i], *eq = strchr(e, '=');
		if (!eq)
			continue;
		size_t n = (size_t)(eq - e);
		bool url_var = (n > 9 && !strncmp(eq - 9, "_BASE_URL", 9)) ||
			       (n > 9 && !strncmp(eq - 9, "_API_BASE", 9));
		unsigned port = url_var ? loopback_url_port(eq + 1) : 0;
		if (!port || port_forwarded(s, port))
			continue;
		strv_pushf(&s->unreached_loopback, "%u %.*s", port, (int)n, e);
		output_debug("network: %.*s names the host's loopback port %u, which the sandbox "
			     "does not reach: --localhost %u forwards it",
			     (int)n, e, port, port);
	}
}

static int plan(const struct sandbox_request *req, struct sandbox_spec *s, struct error *err)
{
	char *const *envp = req->envp;
	if (req->agent && strcmp(req->agent, "none") && !agent_profile_lookup(req->agent)) {
		_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
		agent_profile_list_names(&names);
		error_set(err, ERROR_USAGE, "unknown agent profile \"%s\" (known: %s, or none)",
			  req->agent, names.buf);
		const char *nearest = agent_profile_suggest(req->agent);
		if (nearest)
			error_hint(err, "did you mean --agent %s?", nearest);
		return -1;
	}
	s->profile = request_profile(req, &s->profile_reason);
	s->read_only_strict = req->read_only_strict;
	if (run_binds_copy(req, s, err) < 0)
		return -1;
	if (resolve_cwd(req, &s->cwd, err) < 0)
		return -1;
	s->cwd_given = req->cwd != NULL;
	if (req->branch && req->branch_host_top) {
		s->branch = xstrdup(req->branch);
		s->project_dir = xstrdup(req->branch_host_top);
		output_debug("branch mode: branch %s of %s", s->branch, s->project_dir);
	} else {
		s->project_dir = xstrdup(s->cwd);
	}
	output_debug("cwd: %s%s", s->cwd, req->cwd ? " (from --cwd)" : "");
	s->home = dirs_home(envp);
	s->global_dir = dirs_config(envp, s->home);

	_cleanup_config_ struct config base;
	config_init(&base);
	if (load_layers(s, req, &base, err) < 0)
		return -1;
	apply_request(&s->cfg, req);
	if (req->rules && req->rules->len)
		output_debug("config: command line: %zu rule%s", req->rules->len,
			     req->rules->len == 1 ? "" : "s");
	output_debug("merge: network=%s (%s), docker=%s (%s), read-only=%s (%s)",
		     network_mode_name(s->cfg.network.mode), network_origin(&s->cfg.network),
		     s->cfg.docker.value ? "exposed" : "hidden", setting_origin(&s->cfg.docker),
		     s->cfg.read_only.value ? "yes" : "no", setting_origin(&s->cfg.read_only));

	build_environment(s, envp);
	if (plan_credentials(s, req, envp, err) < 0)
		return -1;
	if (s->profile)
		output_debug("agents: profile %s (from %s)", s->profile->name, s->profile_reason);
	apply_profile_env(s);
	check_loopback_urls(s);

	s->presets = preset_select(&s->cfg.presets);
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
	preset_describe(s->presets, &names);
	s->presets_text = strbuf_detach(&names);
	output_debug("presets: %s", s->presets_text);
	point_claude_at_its_copy(s, envp);

	if (s->presets & preset_lookup("@base")) {
		struct stat st;
		if (!s->home || stat(s->home, &st) < 0 || !S_ISDIR(st.st_mode)) {
			error_set(err, ERROR_SETUP,
				  "the home directory %s does not exist, and the @base preset "
				  "needs it",
				  s->home ? s->home : "(unknown: HOME is unset)");
			error_hint(err, "set HOME to an existing directory, or remove @base with "
					"\"presets\": [\"!@base\"]");
			return -1;
		}
	}

	s->docker_socket = find_docker_socket(envp);
	if (collect_sockets(s, err) < 0)
		return -1;
	/* The audit log is the host's record of what the sandbox did: it is
	 * hidden inside whether or not a run writes to it (build_rules).
	 * Inside a sandbox the outer agent-sandbox records the run. */
	s->audit_dir = dirs_state(envp, s->home);
	s->audit = s->cfg.audit.value && s->audit_dir && !inside_sandbox();
	/* The scan runs before the rules: @git protects the repositories it
	 * finds. Its cache lives in the state directory, hidden inside like
	 * the audit log; the plan only reads it (the launch writes it). Inside
	 * a sandbox there is none: the state directory is hidden there. */
	_cleanup_free_ char *scan_cache_dir =
	    s->audit_dir && !inside_sandbox() ? xasprintf("%s/scan-cache", s->audit_dir) : NULL;
	if (secrets_scan(&s->secrets, &s->cfg, s->cwd, scan_cache_dir, err) < 0)
		return -1;
	/* Branch mode shows the host checkout read-only: its secrets are
	 * masked as the working directory's are. */
	if (s->branch && secrets_scan(&s->host_secrets, &s->cfg, s->project_dir, NULL, err) < 0)
		return -1;
	/* A host process may listen on a socket in the project under a name
	 * /proc/net/unix does not give: the walk met every socket file. */
	if (!inside_sandbox())
		host_sockets_add_live(&s->secrets.found.sockets, &s->host_sockets);
	debug_secrets(&s->secrets);
	check_profile_state(s);
	check_agent_dirs(s);
	if (resolve_policy(s, &s->cfg, envp, &s->rules, &s->policy, err) < 0)
		return -1;
	debug_policy_notes(&s->policy);
	debug_profile(s);
	check_trust(s, req, &base, envp);
	if (build_wrappers(s, envp, err) < 0)
		return -1;
	hardening_plan(&s->hardening, &s->policy, s->cfg.network.mode == NETWORK_FILTERED);
	struct git_repo host = {0};
	if (s->branch && git_repo_find(s->project_dir, &host) && host.common)
		s->branch_host_objects = xasprintf("%s/objects", host.common);
	git_repo_release(&host);
	if (s->branch_host_objects)
		hardening_keep_dirs(&s->hardening, s->branch_host_objects);
	s->hardening.host_network = s->cfg.network.mode == NETWORK_HOST;
	add_listed_sockets(s);
	plan_git_config_copies(s, envp);
	s->allow_degraded = req->allow_degraded;
	s->limits.tmp_bytes = s->cfg.limits.tmp.value;
	s->limits.pids = (unsigned)s->cfg.limits.pids.value;
	s->limits.memory_bytes = s->cfg.limits.memory.value;
	s->limits.cpus_milli = (unsigned)s->cfg.limits.cpus.value;
	s->limits.timeout_ms = s->cfg.limits.timeout.value;
	for (char *const *a = req->command; a && *a; a++)
		strv_push(&s->command, *a);
	add_profile_credential_args(s);
	return 0;
}

int sandbox_plan(const struct sandbox_request *req, struct sandbox_spec *spec, struct error *err)
{
	*spec = (struct sandbox_spec){.rules = RULE_LIST_INIT,
				      .command = STRV_INIT,
				      .profile_missing = STRV_INIT,
				      .profile_env = STRV_INIT,
				      .profile_env_lost = STRV_INIT,
				      .unreached_loopback = STRV_INIT,
				      .profile_dropped = STRV_INIT,
				      .envp = req->envp};
	config_init(&spec->cfg);
	if (plan(req, spec, err) < 0) {
		sandbox_spec_release(spec);
		return -1;
	}
	return 0;
}

void sandbox_spec_release(struct sandbox_spec *s)
{
	free(s->cwd);
	free(s->project_dir);
	free(s->branch);
	free(s->branch_host_objects);
	free(s->home);
	free(s->global_dir);
	free(s->docker_socket);
	strv_release(&s->listed_sockets);
	strv_release(&s->host_sockets);
	free(s->presets_text);
	config_release(&s->cfg);
	rule_list_release(&s->rules);
	policy_release(&s->policy);
	secrets_release(&s->secrets);
	secrets_release(&s->host_secrets);
	env_result_release(&s->env);
	credential_set_release(&s->credentials);
	free(s->audit_dir);
	wrapper_plan_release(&s->wrappers);
	trust_check_release(&s->trust);
	hardening_release(&s->hardening);
	for (size_t i = 0; i < s->git_config_copies_len; i++) {
		free(s->git_config_copies[i].path);
		free(s->git_config_copies[i].text);
	}
	free(s->git_config_copies);
	strv_release(&s->command);
	strv_release(&s->run_bind_dirs);
	strv_release(&s->run_bind_names);
	strv_release(&s->profile_missing);
	strv_release(&s->profile_env);
	strv_release(&s->profile_env_lost);
	strv_release(&s->unreached_loopback);
	strv_release(&s->profile_dropped);
	*s = (struct sandbox_spec){0};
}
