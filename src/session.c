/* This file joins the stages in order: working directory and home, config
 * layers (global, then project or --config, then the command line), presets,
 * built-in rules, and finally the policy. Each stage's result is printed
 * with --debug as soon as it is known. */
#include "session.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "env.h"
#include "path.h"
#include "pattern.h"
#include "preset.h"
#include "strbuf.h"
#include "xalloc.h"

static int resolve_cwd(const struct cli *cli, char **out, struct error *err)
{
	_cleanup_free_ char *here = getcwd(NULL, 0);
	if (!here)
		return error_errno(err, EXIT_SETUP, errno, "reading the working directory");
	_cleanup_free_ char *wanted = NULL;
	if (!cli->cwd)
		wanted = xstrdup(here);
	else if (cli->cwd[0] == '/')
		wanted = xstrdup(cli->cwd);
	else
		wanted = xasprintf("%s/%s", here, cli->cwd);

	bool is_dir = false;
	int r = path_resolve(wanted, out, NULL, &is_dir);
	if (r < 0)
		return error_errno(err, EXIT_USAGE, -r, "flag --cwd %s",
				   cli->cwd ? cli->cwd : here);
	if (!is_dir) {
		free(steal_ptr(out));
		return error_set(err, EXIT_USAGE, "flag --cwd %s: not a directory", cli->cwd);
	}
	return 0;
}

static char *find_home(char *const *envp)
{
	const char *home = env_get(envp, "HOME");
	if (home && home[0] == '/')
		return xstrdup(home);
	struct passwd *pw = getpwuid(geteuid());
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		return xstrdup(pw->pw_dir);
	return NULL;
}

static char *find_global_dir(char *const *envp, const char *home)
{
	const char *xdg = env_get(envp, "XDG_CONFIG_HOME");
	if (xdg && xdg[0] == '/')
		return xasprintf("%s/agent-sandbox", xdg);
	if (home)
		return xasprintf("%s/.config/agent-sandbox", home);
	return NULL;
}

static int load_layers(struct session *s, const struct cli *cli, const struct debug *dbg,
		       struct error *err)
{
	if (s->global_dir) {
		_cleanup_free_ char *global = NULL;
		if (config_find(s->global_dir, "config", &global, err) < 0)
			return -1;
		if (global && config_load_file(&s->cfg, global, LAYER_GLOBAL, err) < 0)
			return -1;
		if (!global)
			debug_line(dbg, "config: no global config in %s", s->global_dir);
	}

	_cleanup_free_ char *project = NULL;
	if (cli->config_path) {
		_cleanup_free_ char *here = getcwd(NULL, 0);
		if (!here)
			return error_errno(err, EXIT_SETUP, errno, "reading the working directory");
		project = cli->config_path[0] == '/' ? xstrdup(cli->config_path)
						     : xasprintf("%s/%s", here, cli->config_path);
		struct stat st;
		if (stat(project, &st) < 0)
			return error_errno(err, EXIT_USAGE, errno, "flag --config %s",
					   cli->config_path);
	} else if (config_find(s->cwd, ".agent-sandbox", &project, err) < 0) {
		return -1;
	}
	if (project && config_load_file(&s->cfg, project, LAYER_PROJECT, err) < 0)
		return -1;
	if (!project)
		debug_line(dbg, "config: no project config in %s", s->cwd);
	for (size_t i = 0; i < s->cfg.notes.len; i++)
		debug_line(dbg, "config: %s", s->cfg.notes.items[i]);
	return 0;
}

static void apply_cli(struct config *cfg, const struct cli *cli)
{
	for (size_t i = 0; i < cli->rules.len; i++) {
		const struct rule *r = &cli->rules.items[i];
		rule_list_add(&cfg->rules, r->pattern, r->level, LAYER_CLI, r->origin);
	}
	if (cli->network != UNSET)
		config_set_network_mode(
		    &cfg->network, cli->network == YES ? NETWORK_HOST : NETWORK_NONE, LAYER_CLI,
		    cli->network == YES ? "--network=true" : "--network=false");
	/* --allow-host asks for the filtered network even when a config file
	 * chose another mode. */
	for (size_t i = 0; i < cli->allow_hosts.len; i++)
		net_list_add(&cfg->network.allow, cli->allow_hosts.items[i], NULL, LAYER_CLI,
			     "--allow-host");
	if (cli->allow_hosts.len && cfg->network.mode != NETWORK_FILTERED)
		config_set_network_mode(&cfg->network, NETWORK_FILTERED, LAYER_CLI, "--allow-host");
	if (cli->docker != UNSET)
		config_set(&cfg->docker, cli->docker == YES, LAYER_CLI, "--docker");
	if (cli->read_only != UNSET)
		config_set(&cfg->read_only, cli->read_only == YES, LAYER_CLI, "--read-only");
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

static void add_builtin_rules(struct session *s)
{
	if (!s->docker_socket)
		return;
	_cleanup_free_ char *escaped = pattern_escape(s->docker_socket);
	if (s->cfg.docker.value)
		rule_list_add(&s->rules, escaped, ACCESS_RW, LAYER_BUILTIN, s->cfg.docker.origin);
	else
		rule_list_add(&s->rules, escaped, ACCESS_EXCLUDE, LAYER_BUILTIN,
			      "docker socket hidden (--docker exposes it)");
}

static const char *setting_origin(const struct config_setting *s)
{
	return s->layer == LAYER_BUILTIN ? "default" : s->origin;
}

static const char *network_origin(const struct network_config *n)
{
	return n->layer == LAYER_BUILTIN ? "default" : n->origin;
}

int session_build(struct session *s, const struct cli *cli, char *const *envp,
		  const struct debug *dbg, struct error *err)
{
	*s = (struct session){.rules = RULE_LIST_INIT};
	config_init(&s->cfg);

	if (resolve_cwd(cli, &s->cwd, err) < 0)
		return -1;
	debug_line(dbg, "cwd: %s%s", s->cwd, cli->cwd ? " (from --cwd)" : "");
	s->home = find_home(envp);
	s->global_dir = find_global_dir(envp, s->home);

	if (load_layers(s, cli, dbg, err) < 0)
		return -1;
	apply_cli(&s->cfg, cli);
	if (cli->rules.len)
		debug_line(dbg, "config: command line: %zu rule%s", cli->rules.len,
			   cli->rules.len == 1 ? "" : "s");
	debug_line(dbg, "merge: network=%s (%s), docker=%s (%s), read-only=%s (%s)",
		   network_mode_name(s->cfg.network.mode), network_origin(&s->cfg.network),
		   s->cfg.docker.value ? "exposed" : "hidden", setting_origin(&s->cfg.docker),
		   s->cfg.read_only.value ? "yes" : "no", setting_origin(&s->cfg.read_only));

	s->presets = preset_select(&s->cfg.presets);
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
	preset_describe(s->presets, &names);
	s->presets_text = strbuf_detach(&names);
	debug_line(dbg, "presets: %s", s->presets_text);

	if (s->presets & preset_lookup("@base")) {
		struct stat st;
		if (!s->home || stat(s->home, &st) < 0 || !S_ISDIR(st.st_mode)) {
			error_set(err, EXIT_SETUP,
				  "the home directory %s does not exist, and the @base preset "
				  "needs it",
				  s->home ? s->home : "(unknown: HOME is unset)");
			error_hint(err, "set HOME to an existing directory, or remove @base with "
					"\"presets\": [\"!@base\"]");
			return -1;
		}
	}

	s->docker_socket = find_docker_socket(envp);
	add_builtin_rules(s);
	struct preset_context pctx = {
	    .cwd = s->cwd,
	    .home = s->home,
	    .global_config_dir = s->global_dir,
	    .config_files = &s->cfg.files,
	};
	preset_expand(s->presets, &pctx, &s->rules);
	for (size_t i = 0; i < s->cfg.rules.len; i++) {
		const struct rule *r = &s->cfg.rules.items[i];
		rule_list_add(&s->rules, r->pattern, r->level, r->layer, r->origin);
	}

	struct policy_input in = {
	    .rules = &s->rules,
	    .cwd = s->cwd,
	    .home = s->home,
	    .read_only = s->cfg.read_only.value,
	};
	if (policy_resolve(&in, &s->policy, err) < 0)
		return -1;
	report_policy_notes(dbg, &s->policy);
	return 0;
}

void session_release(struct session *s)
{
	free(s->cwd);
	free(s->home);
	free(s->global_dir);
	free(s->docker_socket);
	free(s->presets_text);
	config_release(&s->cfg);
	rule_list_release(&s->rules);
	policy_release(&s->policy);
	*s = (struct session){0};
}
