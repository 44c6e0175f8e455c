/* This file turns a spec into a running sandbox with bwrap, in the order
 * that keeps a failure harmless: everything is found, made and rendered
 * before anything starts, the guard watches before the command runs, and
 * the audit log records the start only when bwrap is about to run. */
#include "sandbox/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/io.h"
#include "base/output.h"
#include "base/xalloc.h"
#include "git/repo.h"
#include "inside/inside.h"
#include "net/policy.h"
#include "net/proxy.h"
#include "policy/path.h"
#include "sandbox/bwrap.h"
#include "sandbox/control.h"
#include "sandbox/mount_plan.h"
#include "sandbox/nested.h"
#include "sandbox/cgroup.h"
#include "base/units.h"
#include "sandbox/rundir.h"
#include "sandbox/seccomp.h"
#include "sandbox/secret_watch.h"
#include "sandbox/socket_watch.h"
#include "sandbox/supervise.h"
#include "spec/debug.h"

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

/* Seccomp and Landlock as the spec has them; a layer the kernel lacks
 * stops the run unless the user let it go. */
static int require_hardening(const struct sandbox_spec *s, struct error *err)
{
	if (hardening_require(&s->hardening, s->allow_degraded, err) < 0) {
		output_debug("layers: landlock: ABI %d: %s", s->hardening.landlock_abi, err->msg);
		return -1;
	}
	if (output_debug_enabled()) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		hardening_describe(&s->hardening, &sb);
		for (char *line = strtok(sb.buf, "\n"); line; line = strtok(NULL, "\n"))
			output_debug("%s", line + strspn(line, " "));
	}
	return 0;
}

/* Every network decision of the proxy arrives here: into the audit log,
 * and to --debug. */
static void network_decision(void *ctx, const struct proxy_decision *d)
{
	audit_network(ctx, d);
	if (!d->allowed) {
		output_debug("network: refused %s %s port %u: %s", d->protocol, d->host, d->port,
			     d->reason);
		return;
	}
	/* A credential's request: the key went out only when TLS to the
	 * upstream was made; a failure says so first. */
	if (d->credential && d->reason) {
		output_debug("network: failed credential %s for %s port %u (%s) after %.0f ms: %s",
			     d->credential, d->host, d->port, d->address ? d->address : "?",
			     d->duration_ms, d->reason);
		return;
	}
	if (d->credential) {
		output_debug("network: injected credential %s for %s port %u (%s): status %d, %llu "
			     "bytes out, %llu bytes in, %.0f ms",
			     d->credential, d->host, d->port, d->address ? d->address : "?",
			     d->status, (unsigned long long)d->bytes_out,
			     (unsigned long long)d->bytes_in, d->duration_ms);
		return;
	}
	/* Allowed, yet not made: the line starts with what happened. */
	const char *by = d->allowed_by ? d->allowed_by : "the policy";
	if (d->reason) {
		output_debug("network: failed %s %s port %u (allowed by %s) after %.0f ms: %s",
			     d->protocol, d->host, d->port, by, d->duration_ms, d->reason);
		return;
	}
	output_debug("network: allowed %s %s port %u (by %s; %s): %llu bytes out, %llu bytes in, "
		     "%.0f ms",
		     d->protocol, d->host, d->port, by, d->address ? d->address : "?",
		     (unsigned long long)d->bytes_out, (unsigned long long)d->bytes_in,
		     d->duration_ms);
}

static int dispatch_proxy(void *proxy)
{
	proxy_dispatch(proxy);
	return 0;
}

static int dispatch_secrets(void *watch)
{
	return secret_watch_dispatch(watch);
}

static int dispatch_guard(void *guard)
{
	return guard_dispatch(guard);
}

static int dispatch_sockets(void *watch)
{
	return socket_watch_dispatch(watch);
}

/* Every path the guard moves goes into the audit log at once, and to
 * --debug; the front end reports the summary after the command. */
static void guard_reported(void *ctx, const struct guard_event *e)
{
	audit_quarantine(ctx, e->path, e->moved_to, e->rule->origin, e->error);
	if (e->moved_to)
		output_debug("guard: %s appeared (%s by %s): moved to %s", e->path,
			     access_level_name(e->rule->level), e->rule->origin, e->moved_to);
	else
		output_debug("guard: %s appeared (%s by %s): %s", e->path,
			     access_level_name(e->rule->level), e->rule->origin, e->error);
}

/* The host side of a filtered network: the policy, a private directory and
 * the proxy listening in it. */
struct network_run {
	struct net_policy policy;
	struct sandbox_net net;
	char *dir;
	char *socket;
	struct proxy *proxy;
	struct proxy_credential *credentials; /* one per endpoint */
	uint16_t *credential_ports;
	size_t credentials_len;
};

/* The credential endpoints for the proxy, with the keys read now from the
 * host's environment or files: they live in this process's memory only,
 * never in an argument, a variable or a file the sandbox can see. */
static int network_credentials(struct network_run *nr, const struct sandbox_spec *s, bool dry_run,
			       struct error *err)
{
	/* No core dump of this process from here on (one would land where
	 * the next session could read it, key and all), and no ptrace or
	 * /proc/PID/mem by other processes of the user. bwrap and the
	 * command get their own setting back at exec. */
	if (s->credentials.len && !dry_run && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_errno(err, ERROR_SETUP, errno, "making agent-sandbox undumpable");
	for (size_t i = 0; i < s->credentials.len; i++) {
		const struct credential *c = &s->credentials.items[i];
		char *key = NULL;
		if (!dry_run && credential_read_key(c, s->envp, &key, err) < 0)
			return -1;
		for (size_t k = 0; k < c->endpoints_len; k++) {
			const struct credential_endpoint *e = &c->endpoints[k];
			size_t n = nr->credentials_len++;
			nr->credentials =
			    xreallocarray(nr->credentials, n + 1, sizeof(*nr->credentials));
			nr->credential_ports = xreallocarray(nr->credential_ports, n + 1,
							     sizeof(*nr->credential_ports));
			nr->credentials[n] = (struct proxy_credential){
			    .name = c->name,
			    .host = e->host,
			    .header = e->header,
			    .header_line = key ? credential_header_line(e, key) : NULL,
			    .ca = c->ca,
			};
			nr->credential_ports[n] = e->port;
		}
		if (key) {
			explicit_bzero(key, strlen(key));
			free(key);
		}
	}
	return 0;
}

static int network_start(struct network_run *nr, const struct sandbox_spec *s, bool dry_run,
			 struct audit *audit, struct error *err)
{
	net_policy_build(&s->cfg.network, &nr->policy);
	for (size_t i = 0; i < nr->policy.allow_len; i++)
		output_debug("network: allow %s (%s)", nr->policy.allow[i].pattern,
			     nr->policy.allow[i].origin);
	for (size_t i = 0; i < nr->policy.deny_len; i++)
		output_debug("network: deny %s (%s)", nr->policy.deny[i].pattern,
			     nr->policy.deny[i].origin);
	if (dry_run)
		nr->socket = xstrdup("$XDG_RUNTIME_DIR/agent-sandbox/net-XXXXXX/proxy.sock");
	else if (rundir_net_dir(env_get(s->envp, "XDG_RUNTIME_DIR"), &nr->dir, err) < 0)
		return -1;
	else
		nr->socket = xasprintf("%s/proxy.sock", nr->dir);
	nr->net = (struct sandbox_net){
	    .proxy_socket = nr->socket,
	    .http_port = nr->policy.http_port,
	    .socks_port = nr->policy.socks_port,
	    .localhost = nr->policy.localhost,
	    .localhost_len = nr->policy.localhost_len,
	};
	if (network_credentials(nr, s, dry_run, err) < 0)
		return -1;
	nr->net.credential_ports = nr->credential_ports;
	nr->net.credential_ports_len = nr->credentials_len;
	if (dry_run)
		return 0;
	struct proxy_options opt = {
	    .policy = &nr->policy,
	    .socket_path = nr->socket,
	    .on_decision = network_decision,
	    .ctx = audit,
	    .credentials = nr->credentials,
	    .credentials_len = nr->credentials_len,
	};
	if (proxy_start(&nr->proxy, &opt, err) < 0)
		return -1;
	output_debug("network: proxy listening on %s; inside: http 127.0.0.1:%u, socks5 "
		     "127.0.0.1:%u",
		     nr->socket, nr->net.http_port, nr->net.socks_port);
	return 0;
}

static void network_stop(struct network_run *nr)
{
	proxy_free(nr->proxy);
	for (size_t i = 0; i < nr->credentials_len; i++) {
		char *line = (char *)nr->credentials[i].header_line;
		if (line) {
			explicit_bzero(line, strlen(line));
			free(line);
		}
	}
	free(nr->credentials);
	free(nr->credential_ports);
	if (nr->dir)
		rmdir(nr->dir);
	free(nr->dir);
	free(nr->socket);
	net_policy_release(&nr->policy);
	*nr = (struct network_run){0};
}

/* Starts watching the protected paths that do not exist, before anything
 * runs in the sandbox. */
static int start_guard(const struct sandbox_spec *s, const struct guard_plan *plan,
		       struct audit *audit, struct guard **out, struct error *err)
{
	char id[17];
	if (audit->fd >= 0)
		memcpy(id, audit->run_id, sizeof(id));
	else if (audit_run_id(id) < 0)
		return error_errno(err, ERROR_SETUP, errno, "choosing a run id");
	_cleanup_free_ char *base = s->audit_dir ? xasprintf("%s/quarantine", s->audit_dir) : NULL;
	if (guard_start(out, plan, &s->policy, base, id, guard_reported, audit, err) < 0)
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
	debug_guard(plan);
	return 0;
}

/* The identities of the files the sandbox is given besides the policy's
 * (which policy_resolve records): the init checks that bwrap mounted
 * these very objects. The binary is identified by what runs, not by its
 * path. */
static int identify_sources(struct bwrap_input *in, struct sandbox_net *net, struct error *err)
{
	struct {
		const char *path;
		struct file_id *id;
	} sources[] = {
	    {"/", &in->root_id},
	    {"/proc/self/exe", &in->self_id},
	    {in->empty_file, &in->empty_id},
	    {in->audit_socket, &in->audit_socket_id},
	    {in->net ? net->proxy_socket : NULL, &net->proxy_socket_id},
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

/* Everything a launch holds, released in reverse by launch_release. */
struct launch {
	char *bwrap;
	char *self;
	char *empty;
	struct audit audit;
	struct network_run net;
	struct guard_plan guard_plan;
	struct guard *guard;
	struct supervisor sv;
	bool sv_ready;
	struct strv host_env, loader_env;
	int mounts_fd;
	struct strv args;
	struct mount_plan mounts;
	size_t command_start;
	bool new_session;
	struct limit_plan limits; /* which limit is held by what */
	char *copies_dir;	  /* this run's copies, removed at the end */
	struct strv copy_files;
	struct bwrap_copy *copies;
	size_t copies_len;
	struct bwrap_copy *run_binds; /* dest owned */
	size_t run_binds_len;
	struct secret_watch *secrets; /* the masked files' stand-ins */
	struct socket_watch *sockets; /* the host sockets masked one by one */
	struct control *control;      /* exec-into's socket, or NULL */
};

static void launch_release(struct launch *l)
{
	if (l->sv_ready)
		supervisor_release(&l->sv);
	mount_plan_release(&l->mounts);
	control_close(l->control);
	strv_release(&l->args);
	if (l->mounts_fd >= 0)
		close(l->mounts_fd);
	strv_release(&l->host_env);
	strv_release(&l->loader_env);
	guard_free(l->guard);
	guard_plan_release(&l->guard_plan);
	network_stop(&l->net);
	audit_close(&l->audit);
	/* A dry run made none: its names are only shown. */
	for (size_t i = 0; l->copies_dir && i < l->copy_files.len; i++)
		unlink(l->copy_files.items[i]);
	if (l->copies_dir)
		rmdir(l->copies_dir);
	free(l->copies_dir);
	strv_release(&l->copy_files);
	free(l->copies);
	for (size_t i = 0; i < l->run_binds_len; i++)
		free((char *)l->run_binds[i].dest);
	free(l->run_binds);
	secret_watch_free(l->secrets);
	socket_watch_free(l->sockets);
	free(l->empty);
	free(l->self);
	free(l->bwrap);
}

DEFINE_CLEANUP_FUNC(struct launch, launch_release)

static int open_audit(const struct sandbox_spec *s, const char *empty_file, struct audit *a,
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

/* Writes the files shown in place of the host's (git configs without their
 * credentials) into a private directory of this run, read-only; a dry run
 * only names where they would go. */
static int make_copies(struct launch *l, const struct sandbox_spec *s, bool dry_run,
		       struct error *err)
{
	if (!s->git_config_copies_len)
		return 0;
	if (!dry_run &&
	    rundir_copies_dir(env_get(s->envp, "XDG_RUNTIME_DIR"), &l->copies_dir, err) < 0)
		return -1;
	l->copies = xcalloc(s->git_config_copies_len, sizeof(*l->copies));
	for (size_t i = 0; i < s->git_config_copies_len; i++) {
		const struct git_config_copy *c = &s->git_config_copies[i];
		strv_pushf(&l->copy_files, "%s/git-config-%zu",
			   dry_run ? "$XDG_RUNTIME_DIR/agent-sandbox/copies-XXXXXX" : l->copies_dir,
			   i);
		const char *file = l->copy_files.items[i];
		l->copies[l->copies_len++] = (struct bwrap_copy){.dest = c->path, .source = file};
		if (dry_run)
			continue;
		_cleanup_close_ int fd =
		    open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (fd < 0)
			return error_errno(err, ERROR_SETUP, errno, "creating %s", file);
		int r = write_all(fd, c->text, c->len);
		if (r < 0)
			return error_errno(err, ERROR_SETUP, -r, "writing %s", file);
		struct stat st;
		if (fstat(fd, &st) < 0)
			return error_errno(err, ERROR_SETUP, errno, "identifying %s", file);
		file_id_from_stat(&st, &l->copies[i].id);
	}
	return 0;
}

/* The front end's directories under agent-sandbox's own, identified now:
 * the init checks that these very directories were bound. */
static int make_run_binds(struct launch *l, const struct sandbox_spec *s, bool dry_run,
			  struct error *err)
{
	if (!s->run_bind_dirs.len)
		return 0;
	l->run_binds = xcalloc(s->run_bind_dirs.len, sizeof(*l->run_binds));
	for (size_t i = 0; i < s->run_bind_dirs.len; i++) {
		struct bwrap_copy *b = &l->run_binds[l->run_binds_len++];
		b->source = s->run_bind_dirs.items[i];
		b->dest = xasprintf("%s/%s", SANDBOX_DIR, s->run_bind_names.items[i]);
		int r = dry_run ? 0 : file_id_of(b->source, &b->id);
		if (r < 0)
			return error_errno(err, ERROR_SETUP, -r, "identifying %s", b->source);
	}
	return 0;
}

/* bwrap refuses more arguments than this (MAX_ARGS in bubblewrap.c, the
 * --args file included), and says only "Exceeded maximum number of
 * arguments". A command inside can leave any number of secret-named files
 * for the next run, each a mount of its own: say which, and how to mask
 * them in one. */
#define BWRAP_ARGS_MAX 9000
/* The init's binds have no such limit, but the kernel has one (fs.mount-max,
 * 100,000 mounts in a namespace by default) and each costs the start-up a
 * little: past this many, the run stops with the same way out. */
#define SANDBOX_MOUNTS_MAX 20000

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory that directly holds the most masked files, and how many. */
static char *busiest_secret_dir(const struct secret_scan_result *found, size_t *count)
{
	*count = 0;
	if (!found->len)
		return NULL;
	char **parents = xreallocarray(NULL, found->len, sizeof(*parents));
	for (size_t i = 0; i < found->len; i++) {
		const char *slash = strrchr(found->items[i].path, '/');
		parents[i] = xstrndup(found->items[i].path,
				      slash ? (size_t)(slash - found->items[i].path) : 0);
	}
	qsort(parents, found->len, sizeof(*parents), compare_strings);
	char *best = NULL;
	for (size_t i = 0, j; i < found->len; i = j) {
		for (j = i + 1; j < found->len && !strcmp(parents[i], parents[j]); j++)
			;
		if (j - i > *count) {
			*count = j - i;
			best = parents[i];
		}
	}
	best = xstrdup(best);
	for (size_t i = 0; i < found->len; i++)
		free(parents[i]);
	free(parents);
	return best;
}

static int check_args_fit(const struct sandbox_spec *s, size_t n, size_t mounts, struct error *err)
{
	const struct secret_scan_result *found = &s->secrets.found;
	if (n > BWRAP_ARGS_MAX)
		error_set(err, ERROR_CONFIG,
			  "the sandbox needs %zu bwrap arguments, more than the %d bwrap accepts: "
			  "%zu files in %s are masked one by one",
			  n, BWRAP_ARGS_MAX, found->len, s->cwd);
	else if (mounts > SANDBOX_MOUNTS_MAX)
		error_set(err, ERROR_CONFIG,
			  "the sandbox needs %zu mounts, more than the %d agent-sandbox makes: %zu "
			  "files in %s are masked one by one",
			  mounts, SANDBOX_MOUNTS_MAX, found->len, s->cwd);
	else
		return 0;
	size_t count;
	_cleanup_free_ char *dir = busiest_secret_dir(found, &count);
	size_t root_len = strlen(s->cwd);
	if (dir && path_is_within(dir, s->cwd) && strlen(dir) > root_len)
		error_hint(err,
			   "%s holds %zu of them: mask it whole with \"secrets\": {\"patterns\": "
			   "[\"%s/\"]}, or remove the files",
			   dir, count, dir + root_len + 1);
	else
		error_hint(err, "remove the files, or mask their directories whole with "
				"\"secrets\": {\"patterns\": [\"DIR/\"]}");
	return -1;
}

/* The init's binds need open_tree and move_mount (Linux 5.2) and
 * mount_setattr (5.12). A call with a size of 0 is refused by a kernel
 * that has it with EINVAL; without it (or under a filter of the host's
 * that refuses it) bwrap makes the binds, as before. */
static bool kernel_has_mount_api(void)
{
	long r = syscall(SYS_mount_setattr, -1, "", AT_EMPTY_PATH, NULL, 0);
	return r < 0 && errno == EINVAL;
}

/* Finds, makes and renders everything; with dry_run, nothing that would
 * change the host beyond the runtime directory's empty file, and nothing
 * starts. */
static int launch_prepare(struct launch *l, const struct sandbox_spec *s,
			  const struct sandbox_io *io, bool dry_run, struct error *err)
{
	if (find_bwrap(s->envp, &l->bwrap, err) < 0 && !dry_run)
		return -1;
	if (find_self(&l->self, err) < 0)
		return -1;
	if (rundir_empty_file(env_get(s->envp, "XDG_RUNTIME_DIR"), &l->empty, err) < 0)
		return -1;
	if (make_copies(l, s, dry_run, err) < 0 || make_run_binds(l, s, dry_run, err) < 0)
		return -1;
	if (secret_watch_prepare(&l->secrets, &s->policy, &s->secrets.found,
				 env_get(s->envp, "XDG_RUNTIME_DIR"), dry_run, err) < 0)
		return -1;
	if (require_hardening(s, err) < 0)
		return -1;
	sandbox_limits_plan(&s->limits, &l->limits);
	if (s->audit && !dry_run && open_audit(s, l->empty, &l->audit, err) < 0)
		return -1;
	/* The daemon's session: its records and the sandbox's share one id. */
	if (io->run_id && strlen(io->run_id) == sizeof(l->audit.run_id) - 1)
		memcpy(l->audit.run_id, io->run_id, sizeof(l->audit.run_id));
	bool filtered = s->cfg.network.mode == NETWORK_FILTERED;
	if (filtered && network_start(&l->net, s, dry_run, &l->audit, err) < 0)
		return -1;

	guard_plan_build(&s->policy, &l->guard_plan);
	if (!dry_run && start_guard(s, &l->guard_plan, &l->audit, &l->guard, err) < 0)
		return -1;
	if (!dry_run && socket_watch_start(&l->sockets, &s->policy, &s->host_sockets, err) < 0)
		return -1;

	if (!dry_run && io->control_socket &&
	    control_open(&l->control, io->control_socket, err) < 0)
		return -1;
	if (supervisor_prepare(&l->sv, io->err, err) < 0) {
		supervisor_release(&l->sv);
		return -1;
	}
	l->sv_ready = true;
	const char *runtime_dir = env_get(s->envp, "XDG_RUNTIME_DIR");
	l->new_session = !isatty(io->in);
	env_split_loader(strv_array((struct strv *)&s->env.envp), &l->host_env, &l->loader_env);
	l->mounts_fd = mount_plan_memfd_create(err);
	if (l->mounts_fd < 0)
		return -1;
	struct bwrap_input in = {
	    .policy = &s->policy,
	    .host_network = s->cfg.network.mode == NETWORK_HOST,
	    .net = filtered ? &l->net.net : NULL,
	    .new_session = l->new_session,
	    .self_exe = l->self,
	    .empty_file = l->empty,
	    .runtime_dir = runtime_dir && !strncmp(runtime_dir, "/run/", 5) ? runtime_dir : NULL,
	    .cwd = s->cwd,
	    .seccomp = true,
	    .info_fd = l->sv.info_pipe[1],
	    .ready_fd = l->sv.ready_pipe[1],
	    .stderr_fd = l->sv.stderr_copy,
	    .control_fd = l->control ? control_init_end(l->control) : -1,
	    .ignored_signals = l->sv.ignored_signals,
	    .command = strv_array((struct strv *)&s->command),
	    .audit_socket = l->audit.sock_path,
	    .wrappers = &s->wrappers,
	    .nested = s->nested,
	    .hardening = &s->hardening,
	    .loader_env = strv_array(&l->loader_env),
	    .mounts_fd = l->mounts_fd,
	    .tmp_size = s->limits.tmp_bytes,
	    .pids = s->limits.pids,
	    .address_space = l->limits.memory_rlimit ? s->limits.memory_bytes : 0,
	    .copies = l->copies,
	    .copies_len = l->copies_len,
	    .run_binds = l->run_binds,
	    .run_binds_len = l->run_binds_len,
	};
	in.stand_ins = secret_watch_stand_ins(l->secrets, &in.stand_ins_len);
	in.stand_ins_dir = secret_watch_dir(l->secrets);
	in.init_binds = !env_get(s->envp, BWRAP_MASKS_ENV) && kernel_has_mount_api();
	if (!dry_run && identify_sources(&in, &l->net.net, err) < 0)
		return -1;
	l->command_start = bwrap_render(&in, &l->args, &l->mounts);
	if (check_args_fit(s, l->command_start, l->mounts.len, err) < 0)
		return -1;
	debug_bwrap_args(&l->args);
	output_debug("mount check: the init checks %zu mounts before the command starts, "
		     "%zu of them its own binds",
		     l->mounts.len, mount_plan_init_binds(&l->mounts));
	return 0;
}

static void launch_init(struct launch *l)
{
	*l = (struct launch){
	    .audit = {.fd = -1, .sock = -1, .stop_pipe = {-1, -1}},
	    .host_env = STRV_INIT,
	    .loader_env = STRV_INIT,
	    .mounts_fd = -1,
	    .args = STRV_INIT,
	    .copy_files = STRV_INIT,
	};
}

void sandbox_rendering_release(struct sandbox_rendering *r)
{
	strv_release(&r->args);
	strv_release(&r->init_binds);
}

int sandbox_render(const struct sandbox_spec *s, const struct sandbox_io *io,
		   struct sandbox_rendering *out, struct error *err)
{
	*out = (struct sandbox_rendering){.args = STRV_INIT, .init_binds = STRV_INIT};
	if (s->nested) {
		out->nested = true;
		if (require_hardening(s, err) < 0)
			return -1;
		return nested_render(s, &out->args, err);
	}
	_cleanup_(launch_releasep) struct launch l;
	launch_init(&l);
	if (launch_prepare(&l, s, io, true, err) < 0)
		return -1;
	out->mounts = l.mounts.len;
	for (size_t i = 0; i < l.mounts.len; i++)
		if (l.mounts.items[i].flags & MOUNT_BY_INIT) {
			strv_push(&out->init_binds, l.mounts.items[i].source);
			strv_push(&out->init_binds, l.mounts.items[i].path);
			strv_push(&out->init_binds, l.mounts.items[i].flags & MOUNT_READ_ONLY
							? "read-only"
							: "writable");
		}
	out->args = l.args;
	l.args = (struct strv)STRV_INIT;
	return 0;
}

void sandbox_result_release(struct sandbox_result *r)
{
	guard_free(r->guard);
	r->guard = NULL;
	strv_release(&r->secret_reads);
}

/* "--memory" or "limits.memory at FILE:L:C": where a limit came from. */
static char *limit_source(const struct config_limit *c, const char *key)
{
	if (c->layer == LAYER_CLI)
		return xstrdup(c->origin);
	return xasprintf("limits.%s at %s", key, c->origin);
}

/* Before the command: the limits that hold less than they say, and why. */
static void note_weaker_limits(const struct sandbox_spec *s, const struct limit_plan *p)
{
	if (p->memory_rlimit) {
		_cleanup_free_ char *size = config_format_size(s->limits.memory_bytes);
		output_note("memory limit enforced as address-space limit (RLIMIT_AS): %s per "
			    "process, not for the sandbox as a whole; an allocation past it fails "
			    "inside instead of ending the sandbox (no memory cgroup can be made "
			    "for this user)",
			    size);
	}
	if (p->cpus_unenforced)
		output_note("cpus not enforced: no cpu cgroup can be made for this user, and no "
			    "rlimit bounds a share of CPUs (RLIMIT_CPU bounds CPU time)");
	if (p->pids_unenforced)
		output_note("pids not enforced: the kernel exempts uid 0 from RLIMIT_NPROC and no "
			    "pids cgroup can be made");
	output_debug("limits: cgroup v%d (pids %s, memory %s, cpu %s)", p->cgroup.version,
		     p->cgroup.pids ? "yes" : "no", p->cgroup.memory ? "yes" : "no",
		     p->cgroup.cpu ? "yes" : "no");
}

/* After the run: a limit that ended it says so on stderr, and the text
 * goes to the audit end record. NULL when no limit did. */
static char *limit_outcome(const struct sandbox_spec *s, const struct supervisor *sv,
			   const struct sandbox_cgroup *cg, int status)
{
	char *why = NULL;
	if (sv->timed_out) {
		_cleanup_free_ char *d = duration_format(s->limits.timeout_ms);
		_cleanup_free_ char *src = limit_source(&s->cfg.limits.timeout, "timeout");
		why = s->cfg.limits.timeout.layer == LAYER_CLI
			  ? xasprintf("the command ran out of time (%s %s)", src, d)
			  : xasprintf("the command ran out of time (%s, %s)", d, src);
	} else if (status >= 128 && sandbox_cgroup_oom(cg)) {
		_cleanup_free_ char *size = config_format_size(s->limits.memory_bytes);
		_cleanup_free_ char *src = limit_source(&s->cfg.limits.memory, "memory");
		why = xasprintf("the sandbox ran out of memory (limit %s, %s): the kernel killed "
				"its largest process",
				size, src);
	}
	if (why)
		output_note("%s", why);
	return why;
}

int sandbox_launch(const struct sandbox_spec *s, const struct sandbox_io *io,
		   struct sandbox_result *result, struct error *err)
{
	*result = (struct sandbox_result){.secret_reads = STRV_INIT};
	if (s->nested) {
		if (require_hardening(s, err) < 0)
			return -1;
		return nested_run(s, err);
	}
	_cleanup_(launch_releasep) struct launch l;
	launch_init(&l);
	if (launch_prepare(&l, s, io, false, err) < 0)
		return -1;
	if (mount_plan_memfd_seal(l.mounts_fd, &l.mounts, err) < 0)
		return -1;
	/* The plan only read the scan cache; a run that is about to start
	 * writes what its scan found, for the next one. A cache is an
	 * optimization: failing to write it stops nothing. */
	_cleanup_error_ struct error cache_err = ERROR_INIT;
	int saved = secrets_save_cache(&s->secrets, &cache_err);
	if (saved < 0)
		output_debug("secrets: scan cache not written: %s", cache_err.msg);
	else if (saved > 0)
		output_debug("secrets: scan cache written to %s", s->secrets.cache_path);
	_cleanup_sandbox_cgroup_ struct sandbox_cgroup cg = SANDBOX_CGROUP_INIT;
	if (sandbox_cgroup_create(&cg, &s->limits, &l.limits, err) < 0)
		return -1;
	note_weaker_limits(s, &l.limits);
	struct supervise_request req = {
	    .bwrap = l.bwrap,
	    .mounts_fd = l.mounts_fd,
	    .args = &l.args,
	    .command_start = l.command_start,
	    .envp = strv_array(&l.host_env),
	    .in = io->in,
	    .out = io->out,
	    .err = io->err,
	    .new_session = l.new_session,
	    .control_fd = l.control ? control_init_end(l.control) : -1,
	    .cgroup_procs_fds = cg.procs_fds,
	    .cgroup_procs_len = cg.len,
	    .timeout_ms = s->limits.timeout_ms,
	    /* Nested, the command reports blocked commands through the outer
	     * run's audit socket, which it inherits. */
	    .inherited_fd = inside_sandbox() ? AUDIT_FD_INSIDE : -1,
	    .ready_fd = io->ready_fd,
	};
	if (l.net.proxy)
		req.sources[req.sources_len++] = (struct supervise_source){
		    .fd = proxy_fd(l.net.proxy), .ready = dispatch_proxy, .ctx = l.net.proxy};
	if (l.guard)
		req.sources[req.sources_len++] = (struct supervise_source){
		    .fd = guard_fd(l.guard), .ready = dispatch_guard, .ctx = l.guard};
	if (l.sockets)
		req.sources[req.sources_len++] = (struct supervise_source){
		    .fd = socket_watch_fd(l.sockets), .ready = dispatch_sockets, .ctx = l.sockets};
	if (l.control)
		req.sources[req.sources_len++] = (struct supervise_source){
		    .fd = control_fd(l.control), .ready = control_dispatch, .ctx = l.control};
	struct audit_start start = {
	    .cwd = s->cwd,
	    .command = strv_array((struct strv *)&s->command),
	    .policy = &s->policy,
	    .network = s->cfg.network.mode == NETWORK_HOST   ? "host"
		       : s->cfg.network.mode == NETWORK_NONE ? "none"
							     : "filtered",
	    .read_only = s->cfg.read_only.value,
	    .secrets_masked = s->secrets.found.len,
	    .env_dropped = &s->env.dropped,
	    .degraded = &s->hardening.degraded,
	};
	audit_run_start(&l.audit, &start);
	/* After the start record, which a record saying reporting is off
	 * follows; before bwrap, whose binds open nothing. */
	int secrets_fd = secret_watch_arm(l.secrets, &l.audit,
					  env_get(s->envp, SECRET_WATCH_BENCH_OFF_ENV) != NULL);
	if (secrets_fd >= 0)
		req.sources[req.sources_len++] = (struct supervise_source){
		    .fd = secrets_fd, .ready = dispatch_secrets, .ctx = l.secrets};
	int status = supervisor_run(&l.sv, &req, err);
	result->stopped = l.audit.stopped = l.sv.stop_requested;
	_cleanup_free_ char *ended = limit_outcome(s, &l.sv, &cg, status);
	supervisor_release(&l.sv);
	l.sv_ready = false;
	if (l.guard) {
		guard_finish(l.guard);
		if (status < 0 && guard_stop_reason(l.guard))
			error_set(err, ERROR_SETUP, "%s", guard_stop_reason(l.guard));
		result->guard = steal_ptr(&l.guard);
	}
	if (status < 0 && socket_watch_stop_reason(l.sockets))
		error_set(err, ERROR_SETUP, "%s", socket_watch_stop_reason(l.sockets));
	secret_watch_finish(l.secrets);
	secret_watch_take_reads(l.secrets, &result->secret_reads);
	audit_run_end(&l.audit, status, status < 0 ? err->msg : ended);
	/* After the end record, whose own failure counts too, and before the
	 * log is closed: a log with holes must not pass for a whole one. */
	_cleanup_free_ char *lost = audit_write_failure(&l.audit);
	if (lost)
		output_note("audit log: %s", lost);
	return status;
}
