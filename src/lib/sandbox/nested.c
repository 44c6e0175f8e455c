/* This file runs a command inside an existing sandbox without building a
 * new one. It never loosens the outer sandbox: it could not (the outer
 * mounts, seccomp and Landlock stay in force whatever it does), and it
 * says so rather than pretend, refusing each request it cannot honour.
 *
 * What tightens, it applies without mounts, through Landlock (which the
 * outer seccomp filter leaves allowed: a ruleset can only take rights
 * away, so a nested run cannot loosen anything with it): fewer writable
 * paths (writes beneath the inner policy's rw paths only), and a second
 * ruleset that denies writing beneath a read-only path, reading and
 * writing beneath an excluded one, and executing or reading the programs
 * of a blocked command. No network (seccomp refuses IP sockets), a smaller
 * environment. Processes of the outer sandbox have none of these rules, so
 * the command is kept from reaching them over unix sockets. */
#include "sandbox/nested.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "policy/wrappers.h"
#include <stdlib.h>
#include "base/output.h"
#include "inside/forwarder.h"
#include "base/io.h"
#include "sandbox/landlock.h"
#include "policy/path.h"
#include "sandbox/seccomp.h"
#include "base/strv.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

/* Read-only in the outer sandbox: a read-only mount (the outer ro rules,
 * excluded directories, masked files and the host root are all mounted
 * that way). */
static bool outer_read_only(const char *path)
{
	struct statvfs sv;
	return statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

static bool empty_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return false;
	struct dirent *e;
	bool empty = true;
	while (empty && (e = readdir(d)) != NULL)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Hidden by the outer sandbox: empty and read-only, as its exclude rules
 * leave a path. */
static bool outer_hidden(const struct access_entry *e)
{
	struct stat st;
	if (stat(e->path, &st) < 0)
		return errno == ENOENT;
	if (!outer_read_only(e->path))
		return false;
	return S_ISDIR(st.st_mode) ? empty_dir(e->path) : st.st_size == 0;
}

static const char *origin(const struct access_entry *e)
{
	return e->rule && e->rule->origin ? e->rule->origin : "?";
}

static int refuse(struct error *err, const char *what, const char *hint)
{
	error_set(err, ERROR_DENIED, "inside a sandbox, %s", what);
	if (hint)
		error_hint(err, "%s", hint);
	return -1;
}

struct nested_plan {
	struct strv writable;	/* Landlock keeps writes beneath these */
	struct strv deny_paths; /* resolved; deny[i].path points into it */
	struct landlock_denial *deny;
	size_t deny_len;
	struct strv probe_names; /* for directories that cannot be listed */
	unsigned seccomp;
};

static void plan_release(struct nested_plan *n)
{
	strv_release(&n->writable);
	strv_release(&n->deny_paths);
	strv_release(&n->probe_names);
	free(n->deny);
	*n = (struct nested_plan){0};
}

DEFINE_CLEANUP_FUNC(struct nested_plan, plan_release)

static const char *deny_name(unsigned what)
{
	if (what & LANDLOCK_DENY_EXECUTE && !(what & LANDLOCK_DENY_WRITE))
		return "no executing or reading";
	if (what & LANDLOCK_DENY_READ)
		return "no reading, writing or executing";
	return "no writing";
}

/* A path the run takes rights away beneath, once resolved: Landlock
 * checks the file a path leads to, under that file's own ancestors. */
static void add_denial(struct nested_plan *n, const char *path, unsigned what, const char *why)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	if (!real)
		return;
	for (size_t i = 0; i < n->deny_len; i++)
		if (!strcmp(n->deny_paths.items[i], real)) {
			n->deny[i].what |= what;
			return;
		}
	/* A grant reaches everything beneath it: the directories above a
	 * denied path get none of the rights it takes away. */
	output_debug("nested: landlock: %s beneath %s (%s)%s", deny_name(what), real, why,
		     what & LANDLOCK_DENY_WRITE
			 ? "; nothing new can be made directly in the directories above it"
			 : "");
	strv_push(&n->deny_paths, real);
	n->deny = xreallocarray(n->deny, n->deny_len + 1, sizeof(*n->deny));
	n->deny[n->deny_len++] = (struct landlock_denial){.what = what};
}

/* Refuses entries that would loosen the outer sandbox; collects the paths
 * Landlock is to keep writable and those it is to take rights away
 * beneath. */
static int check_paths(const struct sandbox_spec *s, struct nested_plan *n, struct error *err)
{
	const struct policy *p = &s->policy;
	for (size_t i = 0; i < p->len; i++) {
		const struct access_entry *e = &p->entries[i];
		bool explicit_rule = e->rule && e->rule->layer >= LAYER_GLOBAL;
		if (e->level == ACCESS_RW) {
			if (!outer_read_only(e->path)) {
				strv_push(&n->writable, e->path);
				continue;
			}
			if (explicit_rule) {
				_cleanup_free_ char *what = xasprintf(
				    "%s cannot be made writable (%s): it is read-only in the "
				    "outer sandbox",
				    e->path, origin(e));
				return refuse(err, what,
					      "give the outer agent-sandbox the rule; a nested one "
					      "can only tighten");
			}
			output_debug("nested: rw %s (%s) stays read-only, as outside", e->path,
				     origin(e));
			continue;
		}
		/* The outer sandbox shows it: its contents become unreadable
		 * (an outer exclude shows an empty directory instead). */
		if (e->level == ACCESS_EXCLUDE && !outer_hidden(e))
			add_denial(n, e->path,
				   LANDLOCK_DENY_READ | LANDLOCK_DENY_WRITE | LANDLOCK_DENY_EXECUTE,
				   origin(e));
	}
	for (size_t i = 0; i < landlock_private_writable_len; i++)
		strv_push(&n->writable, landlock_private_writable[i]);
	/* A read-only path beneath a writable one (also beneath /tmp): the
	 * second ruleset takes the writes away, unless the outer sandbox
	 * made it read-only already. */
	for (size_t i = 0; i < p->len; i++) {
		const struct access_entry *e = &p->entries[i];
		if (e->level != ACCESS_RO || outer_read_only(e->path))
			continue;
		for (size_t j = 0; j < n->writable.len; j++)
			if (path_is_within(e->path, n->writable.items[j]) &&
			    strcmp(e->path, n->writable.items[j])) {
				add_denial(n, e->path, LANDLOCK_DENY_WRITE, origin(e));
				break;
			}
	}
	return 0;
}

/* The names a search-only directory (/run/agent-sandbox and those in it)
 * may hold: its own entries, and every program name on PATH, which is
 * what the outer sandbox keeps the real programs of wrapped commands
 * under. */
static void add_probe_names(const struct sandbox_spec *s, struct strv *out)
{
	static const char *const own[] = {"agent-sandbox", "bin",     "wrappers",
					  "presets",	   "blocked", "git-env"};
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		strv_push(out, own[i]);
	const char *path = env_get(strv_array((struct strv *)&s->env.envp), "PATH");
	for (const char *p = path ? path : ""; *p;) {
		const char *colon = strchrnul(p, ':');
		_cleanup_free_ char *dir = xstrndup(p, (size_t)(colon - p));
		p = *colon ? colon + 1 : colon;
		DIR *d = dir[0] == '/' ? opendir(dir) : NULL;
		for (struct dirent *e; d && (e = readdir(d)) != NULL;)
			if (e->d_name[0] != '.' && !strv_contains(out, e->d_name))
				strv_push(out, e->d_name);
		if (d)
			closedir(d);
	}
}

/* A blocked command: every program of that name on PATH (symlinks
 * resolved), and the real one the outer sandbox keeps for its own wrapper
 * of that name, may be neither executed nor read (which would let a copy,
 * or the dynamic loader, run it). */
static void check_commands(const struct sandbox_spec *s, struct nested_plan *n)
{
	bool outer_wrapped = false;
	for (size_t i = 0; i < s->wrappers.len; i++) {
		const struct wrapper *w = &s->wrappers.items[i];
		if (w->setting->kind != COMMAND_BLOCKED)
			continue;
		_cleanup_free_ char *why =
		    xasprintf("%s: blocked (%s)", w->setting->name, w->setting->origin);
		for (size_t t = 0; t < w->targets.len; t++)
			add_denial(n, w->targets.items[t],
				   LANDLOCK_DENY_EXECUTE | LANDLOCK_DENY_READ, why);
		_cleanup_free_ char *real = xasprintf(WRAPPER_BIN_DIR "/%s", w->setting->name);
		struct stat st;
		if (stat(real, &st) == 0) {
			add_denial(n, real, LANDLOCK_DENY_EXECUTE | LANDLOCK_DENY_READ, why);
			outer_wrapped = true;
		}
	}
	if (outer_wrapped)
		add_probe_names(s, &n->probe_names);
}

enum outer_network { OUTER_NONE, OUTER_FILTERED, OUTER_HOST };

static enum outer_network outer_network(void)
{
	struct stat st;
	if (stat(SANDBOX_PROXY_SOCKET, &st) == 0)
		return OUTER_FILTERED;
	/* Only loopback: the outer sandbox has a network namespace of its
	 * own without the proxy. /proc/self/net is this namespace's (sysfs
	 * would show the host's). */
	FILE *f = fopen("/proc/self/net/dev", "re");
	if (!f)
		return OUTER_HOST;
	enum outer_network n = OUTER_NONE;
	char line[512];
	for (int i = 0; fgets(line, sizeof(line), f); i++) {
		char *colon = strchr(line, ':');
		if (i < 2 || !colon)
			continue;
		*colon = '\0';
		if (strcmp(line + strspn(line, " "), "lo") != 0)
			n = OUTER_HOST;
	}
	fclose(f);
	return n;
}

static int check_network(const struct sandbox_spec *s, enum outer_network outer, unsigned *seccomp,
			 struct error *err)
{
	const struct network_config *net = &s->cfg.network;
	if (net->mode == NETWORK_NONE) {
		/* Tightens whatever the outer network is. */
		*seccomp |= SECCOMP_COMMAND_NO_INET;
		return 0;
	}
	for (size_t i = 0; i < net->allow.len; i++)
		if (net->allow.items[i].layer >= LAYER_GLOBAL) {
			_cleanup_free_ char *what =
			    xasprintf("network.allow %s (%s) cannot be applied: the outer "
				      "sandbox's proxy decides which hosts are reachable",
				      net->allow.items[i].name, net->allow.items[i].origin);
			return refuse(err, what, "allow the host in the outer sandbox's policy");
		}
	if (net->mode == NETWORK_HOST && outer != OUTER_HOST) {
		_cleanup_free_ char *what = xasprintf(
		    "the host network (%s) cannot be turned on: the outer sandbox has %s",
		    net->origin, outer == OUTER_FILTERED ? "the filtered network" : "no network");
		return refuse(err, what, NULL);
	}
	output_debug("nested: network as in the outer sandbox (%s)",
		     outer == OUTER_FILTERED ? "filtered"
		     : outer == OUTER_HOST   ? "host"
					     : "none");
	return 0;
}

static int check_docker(const struct sandbox_spec *s, struct error *err)
{
	struct stat st;
	if (!s->cfg.docker.value || !s->docker_socket || s->cfg.docker.layer < LAYER_GLOBAL)
		return 0;
	if (stat(s->docker_socket, &st) == 0 && S_ISSOCK(st.st_mode))
		return 0;
	_cleanup_free_ char *what =
	    xasprintf("the Docker socket (%s) cannot be exposed: the outer sandbox hides it",
		      s->cfg.docker.origin);
	return refuse(err, what, "run the outer agent-sandbox with --docker");
}

/* The writable paths, the denials and the seccomp flags of a nested run,
 * or a refusal. */
static int nested_plan(const struct sandbox_spec *s, struct nested_plan *n, struct error *err)
{
	enum outer_network outer = outer_network();
	n->seccomp = SECCOMP_COMMAND_SANDBOX_RULES;
	if (check_paths(s, n, err) < 0 || check_network(s, outer, &n->seccomp, err) < 0 ||
	    check_docker(s, err) < 0)
		return -1;
	check_commands(s, n);
	/* Every process of the outer sandbox is outside the inner rules:
	 * one listening on a pathname socket (the outer proxy, a tmux
	 * server, an editor) would write, read, run or connect for the
	 * command. From ABI 9 Landlock refuses connecting to a socket made
	 * outside the command; before, no new unix socket is allowed. */
	if (landlock_abi() < LANDLOCK_ABI_RESOLVE_UNIX) {
		n->seccomp |= SECCOMP_COMMAND_NO_UNIX;
		output_debug("nested: no new unix sockets: Landlock ABI %d cannot keep the command "
			     "from the outer sandbox's processes through them (needs %d)",
			     landlock_abi(), LANDLOCK_ABI_RESOLVE_UNIX);
	}
	for (size_t i = 0; i < n->deny_len; i++)
		n->deny[i].path = n->deny_paths.items[i];
	if (n->deny_len && !s->hardening.landlock_fs) {
		_cleanup_free_ char *what =
		    xasprintf("%s cannot be protected (%s): without Landlock a nested run has no "
			      "way to take rights away",
			      n->deny_paths.items[0], deny_name(n->deny[0].what));
		return refuse(err, what, "give the outer agent-sandbox the rule");
	}
	output_debug("nested: no new namespaces or mounts; landlock: writes beneath %zu paths, "
		     "rights taken away beneath %zu; seccomp: the sandbox's rules again%s%s",
		     n->writable.len, n->deny_len,
		     n->seccomp & SECCOMP_COMMAND_NO_INET ? ", no IP sockets" : "",
		     n->seccomp & SECCOMP_COMMAND_NO_UNIX ? ", no new unix sockets" : "");
	return 0;
}

int nested_render(const struct sandbox_spec *s, struct strv *writable, struct error *err)
{
	_cleanup_(plan_releasep) struct nested_plan n = {0};
	if (nested_plan(s, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n.writable.len; i++)
		strv_push(writable, n.writable.items[i]);
	return 0;
}

/* The command is a blocked one: the denial would stop it with "Permission
 * denied"; say why instead. */
static bool command_blocked(const struct sandbox_spec *s, const char *found)
{
	_cleanup_free_ char *real = found ? realpath(found, NULL) : NULL;
	for (size_t i = 0; real && i < s->wrappers.len; i++)
		if (s->wrappers.items[i].setting->kind == COMMAND_BLOCKED &&
		    strv_contains(&s->wrappers.items[i].targets, real))
			return true;
	return false;
}

/* Sets NAME's entry (NAME=VALUE) in env, in place of any there. */
static void env_replace(struct strv *env, const char *name, const char *entry)
{
	_cleanup_strv_ struct strv kept = STRV_INIT;
	size_t len = strlen(name);
	for (size_t i = 0; i < env->len; i++)
		if (strncmp(env->items[i], name, len) || env->items[i][len] != '=')
			strv_push(&kept, env->items[i]);
	strv_push(&kept, entry);
	struct strv tmp = *env;
	*env = kept;
	kept = tmp;
}

/* Taking writes away beneath /tmp takes away making files in /tmp itself
 * (a Landlock grant on a directory reaches everything beneath it): the
 * command gets a directory of its own there, as TMPDIR, made before the
 * rules so that they grant it. It lasts as long as the outer sandbox's
 * /tmp. */
static int private_tmpdir(const struct nested_plan *n, struct strv *env, struct error *err)
{
	bool needed = false;
	for (size_t i = 0; i < n->deny_len; i++)
		needed |= (n->deny[i].what & LANDLOCK_DENY_WRITE) &&
			  strcmp(n->deny[i].path, "/tmp") &&
			  path_is_within(n->deny[i].path, "/tmp");
	if (!needed)
		return 0;
	char dir[] = "/tmp/agent-sandbox-nested.XXXXXX";
	if (!mkdtemp(dir))
		return error_errno(err, ERROR_SETUP, errno, "making a temporary directory in /tmp");
	output_debug("nested: TMPDIR=%s: a write denied beneath /tmp takes away making files "
		     "in /tmp itself",
		     dir);
	_cleanup_free_ char *entry = xasprintf("TMPDIR=%s", dir);
	env_replace(env, "TMPDIR", entry);
	return 0;
}

static int make_dir(const char *path, struct error *err)
{
	if (mkdir(path, 0755) < 0)
		return error_errno(err, ERROR_SETUP, errno, "making %s", path);
	return 0;
}

static int make_link(const char *target, const char *dir, const char *name, struct error *err)
{
	_cleanup_free_ char *link = xasprintf("%s/%s", dir, name);
	if (symlink(target, link) < 0)
		return error_errno(err, ERROR_SETUP, errno, "making %s", link);
	return 0;
}

/* The entries of one wrapped command, in the layout launcher.c reads:
 * a launcher (this binary) under the command's name in the PATH
 * directory, a marker or the script, the real program. */
static int add_launcher(const char *base, const char *self, const struct wrapper *w,
			char *const *envp, struct error *err)
{
	const char *name = w->setting->name;
	_cleanup_free_ char *path_dir = xasprintf("%s/" WRAPPER_NESTED_PATH_DIR, base);
	_cleanup_free_ char *blocked = xasprintf("%s/" WRAPPER_BLOCKED_NAME, base);
	_cleanup_free_ char *presets = xasprintf("%s/" WRAPPER_PRESET_NAME, base);
	_cleanup_free_ char *scripts = xasprintf("%s/" WRAPPER_SCRIPT_NAME, base);
	_cleanup_free_ char *bin = xasprintf("%s/" WRAPPER_BIN_NAME, base);
	enum command_kind kind = w->setting->kind;
	/* The marker is a link to nowhere: the launcher only asks whether it
	 * is there. */
	if ((kind == COMMAND_BLOCKED && make_link("/", blocked, name, err) < 0) ||
	    (kind == COMMAND_GIT && make_link("/", presets, name, err) < 0) ||
	    (kind == COMMAND_SCRIPT && make_link(w->script, scripts, name, err) < 0))
		return -1;
	/* The real program is what PATH finds now, the outer sandbox's
	 * launcher or an outer nested run's included: each wrapper in turn. */
	_cleanup_free_ char *real = env_find_program(envp, name);
	if (kind != COMMAND_BLOCKED && real && make_link(real, bin, name, err) < 0)
		return -1;
	return make_link(self, path_dir, name, err);
}

/* An inner script or @git, and a blocked command's friendlier refusal: a
 * directory of launchers first on PATH, with the layout of the outer
 * /run/agent-sandbox, named in WRAPPER_NESTED_ENV for the launcher. A
 * deterrent, like the outer wrappers: the real program stays reachable by
 * its path (a blocked one's execution is denied by Landlock). The command
 * may change the directory: that gains it nothing it lacks (a denial
 * beneath it would cost making files in /tmp itself). */
static int plan_launchers(const struct sandbox_spec *s, struct strv *env, struct error *err)
{
	if (!s->wrappers.len)
		return 0;
	_cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
	if (!self)
		return error_errno(err, ERROR_SETUP, errno, "finding agent-sandbox itself");
	char base[] = "/tmp/agent-sandbox-wrappers.XXXXXX";
	if (!mkdtemp(base))
		return error_errno(err, ERROR_SETUP, errno, "making a directory in /tmp");
	static const char *const subdirs[] = {WRAPPER_NESTED_PATH_DIR, WRAPPER_BLOCKED_NAME,
					      WRAPPER_PRESET_NAME,     WRAPPER_SCRIPT_NAME,
					      WRAPPER_BIN_NAME,	       WRAPPER_START_ENV_NAME};
	for (size_t i = 0; i < ARRAY_SIZE(subdirs); i++) {
		_cleanup_free_ char *dir = xasprintf("%s/%s", base, subdirs[i]);
		if (make_dir(dir, err) < 0)
			return -1;
	}
	char *const *envp = strv_array(env);
	for (size_t i = 0; i < s->wrappers.len; i++)
		if (add_launcher(base, self, &s->wrappers.items[i], envp, err) < 0)
			return -1;
	_cleanup_free_ char *start_env = xasprintf("%s/" WRAPPER_START_ENV_NAME, base);
	for (size_t i = 0; i < s->wrappers.start_env.len; i++) {
		const char *entry = s->wrappers.start_env.items[i];
		size_t name_len = strcspn(entry, "=");
		_cleanup_free_ char *name = xstrndup(entry, name_len);
		if (make_link(entry + name_len, start_env, name, err) < 0)
			return -1;
	}
	const char *path = env_get(envp, "PATH");
	const char *outer = env_get(envp, WRAPPER_NESTED_ENV);
	_cleanup_free_ char *path_entry = xasprintf("PATH=%s/" WRAPPER_NESTED_PATH_DIR "%s%s", base,
						    path ? ":" : "", path ? path : "");
	_cleanup_free_ char *wrappers_entry =
	    xasprintf(WRAPPER_NESTED_ENV "=%s%s%s", base, outer ? ":" : "", outer ? outer : "");
	env_replace(env, "PATH", path_entry);
	env_replace(env, WRAPPER_NESTED_ENV, wrappers_entry);
	output_debug("nested: wrappers in %s, first on PATH", base);
	return 0;
}

int nested_run(const struct sandbox_spec *s, struct error *err)
{
	_cleanup_(plan_releasep) struct nested_plan n = {0};
	if (nested_plan(s, &n, err) < 0)
		return -1;
	char *const *command = strv_array((struct strv *)&s->command);
	_cleanup_strv_ struct strv env = STRV_INIT;
	for (size_t i = 0; i < s->env.envp.len; i++)
		strv_push(&env, s->env.envp.items[i]);
	if (plan_launchers(s, &env, err) < 0)
		return -1;
	if (s->hardening.landlock_fs && private_tmpdir(&n, &env, err) < 0)
		return -1;
	char *const *envp = strv_array(&env);
	if (chdir(s->cwd) < 0)
		return error_errno(err, ERROR_SETUP, errno, "changing to %s", s->cwd);
	_cleanup_free_ char *found =
	    strchr(command[0], '/') ? xstrdup(command[0]) : env_find_program(envp, command[0]);
	if (command_blocked(s, found)) {
		error_set(err, ERROR_EXEC, "%s is blocked by the sandbox policy", command[0]);
		err->errnum = EACCES;
		return -1;
	}
	if (s->hardening.landlock_fs) {
		struct landlock_plan plan = {.writable = n.writable.items,
					     .writable_len = n.writable.len,
					     .sockets = s->hardening.sockets.items,
					     .sockets_len = s->hardening.sockets.len,
					     .scope_signals = true};
		if (landlock_apply(&plan, err) < 0 ||
		    landlock_apply_denials(n.deny, n.deny_len, n.probe_names.items,
					   n.probe_names.len, err) < 0)
			return -1;
	}
	if (seccomp_filter_load_command(n.seccomp, err) < 0)
		return -1;
	/* Looked up in the command's PATH (execvpe would search ours), where
	 * the nested launchers come first. */
	if (found)
		execve(found, command, envp);
	else
		errno = ENOENT;
	if (errno == ENOENT) {
		error_set(err, ERROR_EXEC, "%s: command not found", command[0]);
		err->errnum = ENOENT;
		return -1;
	}
	return error_errno(err, ERROR_EXEC, errno, "%s", command[0]);
}
