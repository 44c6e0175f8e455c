/* This file runs a command inside an existing sandbox without building a
 * new one. It never loosens the outer sandbox: it could not (the outer
 * mounts, seccomp and Landlock stay in force whatever it does), and it
 * says so rather than pretend, refusing each request it cannot honour.
 *
 * What it can honour without mounts: fewer writable paths (Landlock keeps
 * writes beneath the inner policy's rw paths), no network (seccomp refuses
 * IP sockets), a smaller environment. What it cannot: hiding a file, or
 * making a path read-only beneath one that stays writable (Landlock rules
 * only add up) -- unless the outer sandbox has done it already. */
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

/* Refuses entries that would loosen the outer sandbox or that the inner
 * one cannot enforce; collects the paths Landlock is to keep writable. */
static int check_paths(const struct sandbox_spec *s, struct strv *writable, struct error *err)
{
	const struct policy *p = &s->policy;
	for (size_t i = 0; i < p->len; i++) {
		const struct access_entry *e = &p->entries[i];
		bool explicit_rule = e->rule && e->rule->layer >= LAYER_GLOBAL;
		if (e->level == ACCESS_RW) {
			if (!outer_read_only(e->path)) {
				strv_push(writable, e->path);
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
		if (e->level == ACCESS_EXCLUDE && !outer_hidden(e)) {
			_cleanup_free_ char *what = xasprintf(
			    "%s cannot be hidden (%s): a nested run creates no mounts, and the "
			    "outer sandbox shows it",
			    e->path, origin(e));
			return refuse(err, what, "hide it in the outer sandbox's policy");
		}
	}
	for (size_t i = 0; i < landlock_private_writable_len; i++)
		strv_push(writable, landlock_private_writable[i]);
	/* A read-only path beneath a writable one (also beneath /tmp): Landlock
	 * cannot carve it out, so the outer sandbox must have made it
	 * read-only already. */
	for (size_t i = 0; i < p->len; i++) {
		const struct access_entry *e = &p->entries[i];
		if (e->level != ACCESS_RO || outer_read_only(e->path))
			continue;
		for (size_t j = 0; j < writable->len; j++) {
			if (!path_is_within(e->path, writable->items[j]) ||
			    !strcmp(e->path, writable->items[j]))
				continue;
			_cleanup_free_ char *what = xasprintf(
			    "%s cannot be made read-only (%s) beneath the writable %s: a nested "
			    "run creates no mounts",
			    e->path, origin(e), writable->items[j]);
			return refuse(err, what, "make it read-only in the outer sandbox's policy");
		}
	}
	return 0;
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

/* The writable paths and the seccomp flags of a nested run, or a refusal. */
static int nested_plan(const struct sandbox_spec *s, struct strv *writable, unsigned *seccomp,
		       struct error *err)
{
	enum outer_network outer = outer_network();
	*seccomp = SECCOMP_COMMAND_SANDBOX_RULES;
	if (check_paths(s, writable, err) < 0 || check_network(s, outer, seccomp, err) < 0 ||
	    check_docker(s, err) < 0)
		return -1;
	output_debug("nested: no new namespaces or mounts; landlock: writes beneath %zu paths; "
		     "seccomp: the sandbox's rules again%s",
		     writable->len, *seccomp & SECCOMP_COMMAND_NO_INET ? ", no IP sockets" : "");
	return 0;
}

int nested_render(const struct sandbox_spec *s, struct strv *writable, struct error *err)
{
	unsigned seccomp;
	return nested_plan(s, writable, &seccomp, err);
}

int nested_run(const struct sandbox_spec *s, struct error *err)
{
	_cleanup_strv_ struct strv writable = STRV_INIT;
	unsigned seccomp;
	if (nested_plan(s, &writable, &seccomp, err) < 0)
		return -1;
	char *const *command = strv_array((struct strv *)&s->command);
	if (chdir(s->cwd) < 0)
		return error_errno(err, ERROR_SETUP, errno, "changing to %s", s->cwd);
	if (s->hardening.landlock_fs) {
		struct landlock_plan plan = {.writable = writable.items,
					     .writable_len = writable.len,
					     .sockets = s->hardening.sockets.items,
					     .sockets_len = s->hardening.sockets.len};
		if (landlock_apply(&plan, err) < 0)
			return -1;
	}
	if (seccomp_filter_load_command(seccomp, err) < 0)
		return -1;
	execvpe(command[0], command, strv_array((struct strv *)&s->env.envp));
	if (errno == ENOENT) {
		error_set(err, ERROR_EXEC, "%s: command not found", command[0]);
		err->errnum = ENOENT;
		return -1;
	}
	return error_errno(err, ERROR_EXEC, errno, "%s", command[0]);
}
