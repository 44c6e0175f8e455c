/* This file turns a plan into bwrap arguments, in mount order: the host root
 * read-only, fresh /dev /proc /tmp /run (every tmpfs with a size, /dev
 * read-only as bwrap cannot size it), agent-sandbox's own directory, then
 * the access table with every directory before its contents, and last the
 * remounts that make excluded directories read-only (they must come after
 * anything mounted inside them). */
#include "sandbox/bwrap.h"

#include <string.h>
#include <sys/stat.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "inside/forwarder.h"
#include "inside/inside.h"
#include "inside/init.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "policy/path.h"

static void add(struct strv *args, const char *a)
{
	strv_push(args, a);
}

static void add2(struct strv *args, const char *a, const char *b)
{
	strv_push(args, a);
	strv_push(args, b);
}

static void add3(struct strv *args, const char *a, const char *b, const char *c)
{
	strv_push(args, a);
	strv_push(args, b);
	strv_push(args, c);
}

/* Events from inside (blocked commands) reach the host's audit log through
 * this socket; the log file itself stays hidden. */
static void render_audit_socket(const struct bwrap_input *plan, struct mount_sink *out)
{
	if (plan->audit_socket)
		mount_plan_bind(out, 0, plan->audit_socket, &plan->audit_socket_id,
				AUDIT_SOCKET_INSIDE);
}

static unsigned long long tmp_size(const struct bwrap_input *plan)
{
	return plan->tmp_size ? plan->tmp_size : BWRAP_TMP_DEFAULT;
}

static const char *const proc_covered[] = {"sys", "sysrq-trigger", "irq", "bus"};

static void render_base(const struct bwrap_input *plan, struct mount_sink *out)
{
	const struct access_entry *root = NULL;
	for (size_t i = 0; i < plan->policy->len; i++)
		if (!strcmp(plan->policy->entries[i].path, "/"))
			root = &plan->policy->entries[i];

	for (size_t i = 0; i < policy_base_mounts_len; i++) {
		const struct base_mount *m = &policy_base_mounts[i];
		switch (m->kind) {
		case BASE_HOST_ROOT:
			mount_plan_bind(out, root && root->level == ACCESS_RW ? 0 : MOUNT_READ_ONLY,
					"/", &plan->root_id, "/");
			break;
		case BASE_DEV: {
			/* bwrap's --dev takes no --size: the tmpfs stays
			 * read-only (made so at the end, after anything
			 * mounted into it), and the one place programs write
			 * to, shm, is a tmpfs of its own with a size. */
			mount_plan_dev(out, m->path);
			_cleanup_free_ char *shm = xasprintf("%s/shm", m->path);
			mount_plan_tmpfs(out, shm, BWRAP_SHM_SIZE);
			break;
		}
		case BASE_PROC:
			mount_plan_proc(out, m->path);
			/* A sandbox run by root is uid 0 inside, and the
			 * kernel checks little more than that for writes to
			 * sysctls or the SysRq trigger: cover them read-only. */
			for (size_t k = 0; k < ARRAY_SIZE(proc_covered); k++) {
				_cleanup_free_ char *p =
				    xasprintf("%s/%s", m->path, proc_covered[k]);
				mount_plan_proc_cover(out, p);
			}
			break;
		case BASE_TMPFS:
			mount_plan_tmpfs(out, m->path,
					 !strcmp(m->path, "/tmp") ? tmp_size(plan)
								  : BWRAP_RUN_SIZE);
			break;
		}
	}
	if (plan->runtime_dir) {
		add2(out->args, "--perms", "0700");
		mount_plan_tmpfs(out, plan->runtime_dir, BWRAP_RUN_SIZE);
	}

	if (plan->nested)
		/* The outer sandbox's launchers need its wrappers, markers and
		 * real programs, which a fresh tmpfs would hide. No identity
		 * is known for it (nested.c runs without bwrap today), so the
		 * init would refuse this bind rather than trust it. */
		mount_plan_bind(out, MOUNT_READ_ONLY, SANDBOX_DIR, NULL, SANDBOX_DIR);
	else
		mount_plan_tmpfs(out, SANDBOX_DIR, BWRAP_SMALL_SIZE);
	mount_plan_bind(out, MOUNT_READ_ONLY, plan->self_exe, &plan->self_id, SANDBOX_SELF);
	for (size_t i = 0; i < plan->run_binds_len; i++)
		mount_plan_bind(out, MOUNT_READ_ONLY, plan->run_binds[i].source,
				&plan->run_binds[i].id, plan->run_binds[i].dest);
	render_audit_socket(plan, out);
	if (out->init_binds) {
		if (plan->stand_ins_dir)
			mount_plan_stage(out, plan->stand_ins_dir, SANDBOX_STAGE_STAND_INS);
		mount_plan_stage(out, plan->empty_file, SANDBOX_STAGE_EMPTY);
	}
}

static const struct bwrap_copy *copy_for(const struct bwrap_input *plan, const char *path)
{
	for (size_t i = 0; i < plan->copies_len; i++)
		if (!strcmp(plan->copies[i].dest, path))
			return &plan->copies[i];
	return NULL;
}

static void bind_copy(struct mount_sink *out, const struct bwrap_copy *c)
{
	mount_plan_bind(out, MOUNT_READ_ONLY, c->source, &c->id, c->dest);
}

/* A copy replaces the entry at its path, read-only whatever the entry
 * says; one at a path no entry names is bound after the entries, on top
 * of what covers it. */
static void render_copies_without_entry(const struct bwrap_input *plan, struct mount_sink *out)
{
	for (size_t i = 0; i < plan->copies_len; i++) {
		const struct access_entry *e = policy_entry_for(plan->policy, plan->copies[i].dest);
		if (!e || strcmp(e->path, plan->copies[i].dest) != 0)
			bind_copy(out, &plan->copies[i]);
	}
}

/* The masked file's own stand-in: they come in policy order, so one
 * cursor walks them beside the entries. */
static void bind_masked_file(const struct bwrap_input *plan, const struct access_entry *e,
			     bool by_init, size_t *next_stand_in, struct mount_sink *out)
{
	/* A host socket may go away (its server ended) before the init
	 * binds: nothing is left to hide then, and one bound there again
	 * during the run stops it (socket_watch.c). */
	unsigned flags = MOUNT_READ_ONLY | (e->id.type == S_IFSOCK ? MOUNT_OPTIONAL : 0);
	const struct bwrap_copy *s =
	    *next_stand_in < plan->stand_ins_len ? &plan->stand_ins[*next_stand_in] : NULL;
	if (s && !strcmp(s->dest, e->path)) {
		(*next_stand_in)++;
		if (by_init) {
			/* The stand-in by the same name, where it is staged. */
			const char *name = strrchr(s->source, '/');
			_cleanup_free_ char *staged = xasprintf("%s/%s", SANDBOX_STAGE_STAND_INS,
								name ? name + 1 : s->source);
			mount_plan_init_bind(out, flags, staged, &s->id, e->path);
		} else {
			mount_plan_bind(out, MOUNT_READ_ONLY, s->source, &s->id, e->path);
		}
		return;
	}
	if (by_init)
		mount_plan_init_bind(out, flags, SANDBOX_STAGE_EMPTY, &plan->empty_id, e->path);
	else
		mount_plan_bind(out, MOUNT_READ_ONLY, plan->empty_file, &plan->empty_id, e->path);
}

static void render_entries(const struct bwrap_input *plan, const bool *by_init,
			   struct mount_sink *out)
{
	size_t next_stand_in = 0;
	for (size_t i = 0; i < plan->policy->len; i++) {
		const struct access_entry *e = &plan->policy->entries[i];
		if (!strcmp(e->path, "/"))
			continue;
		const struct bwrap_copy *copy =
		    e->level != ACCESS_EXCLUDE ? copy_for(plan, e->path) : NULL;
		if (copy) {
			bind_copy(out, copy);
			continue;
		}
		bool init = by_init && by_init[i];
		switch (e->level) {
		case ACCESS_RW:
		case ACCESS_RO: {
			unsigned ro = e->level == ACCESS_RO ? MOUNT_READ_ONLY : 0;
			if (init)
				mount_plan_init_bind(out, ro, e->path, &e->id, e->path);
			else
				/* -try: if the path vanished since the policy
				 * was made, skip it instead of creating a mount
				 * point on the host; the init then stops, as
				 * for any path that changed. */
				mount_plan_bind(out, ro | MOUNT_TRY, e->path, &e->id, e->path);
			break;
		}
		case ACCESS_EXCLUDE:
			if (e->is_dir)
				mount_plan_tmpfs(out, e->path, BWRAP_SMALL_SIZE);
			else
				bind_masked_file(plan, e, init, &next_stand_in, out);
			break;
		}
	}
	render_copies_without_entry(plan, out);
	for (size_t i = plan->policy->len; i-- > 0;) {
		const struct access_entry *e = &plan->policy->entries[i];
		if (e->level == ACCESS_EXCLUDE && e->is_dir)
			mount_plan_remount_ro(out, e->path);
	}
}

/* The proxy socket goes into agent-sandbox's own directory (before it is
 * made read-only), and every common spelling of the proxy variables points
 * at the forwarder's loopback ports. Loopback stays direct (NO_PROXY):
 * network.localhost ports are forwarded there. */
static void render_network_env(const struct sandbox_net *net, struct strv *args)
{
	static const char *const http_vars[] = {"HTTP_PROXY", "http_proxy", "HTTPS_PROXY",
						"https_proxy"};
	static const char *const socks_vars[] = {"ALL_PROXY", "all_proxy"};
	static const char *const no_proxy_vars[] = {"NO_PROXY", "no_proxy"};
	_cleanup_free_ char *http = xasprintf("http://127.0.0.1:%u", net->http_port);
	_cleanup_free_ char *socks = xasprintf("socks5h://127.0.0.1:%u", net->socks_port);
	for (size_t i = 0; i < ARRAY_SIZE(http_vars); i++)
		add3(args, "--setenv", http_vars[i], http);
	for (size_t i = 0; i < ARRAY_SIZE(socks_vars); i++)
		add3(args, "--setenv", socks_vars[i], socks);
	for (size_t i = 0; i < ARRAY_SIZE(no_proxy_vars); i++)
		add3(args, "--setenv", no_proxy_vars[i], "localhost,127.0.0.1,::1");
}

static char *forward_spec(const struct sandbox_net *net)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%sproxy:%u,proxy:%u", FORWARD_ARG, net->http_port, net->socks_port);
	for (size_t i = 0; i < net->localhost_len; i++)
		strbuf_addf(&sb, ",localhost:%u", net->localhost[i]);
	for (size_t i = 0; i < net->credential_ports_len; i++)
		strbuf_addf(&sb, ",credential:%u:%zu", net->credential_ports[i], i);
	return strbuf_detach(&sb);
}

/* The init applies Landlock to the command: the paths it may write
 * beneath, the unix sockets made outside it that it may connect to (ABI 9)
 * and, with the filtered network, the ports it may connect to. It
 * refuses to start without being told either these or that Landlock is
 * left out. */
static void render_landlock(const struct bwrap_input *plan, struct strv *args)
{
	const struct hardening *l = plan->hardening;
	if (!l || !l->landlock_fs) {
		add(args, LANDLOCK_OFF_ARG);
		return;
	}
	for (size_t i = 0; i < l->writable.len; i++)
		strv_pushf(args, "%s%s", LANDLOCK_RW_ARG, l->writable.items[i]);
	for (size_t i = 0; i < l->keep_dirs.len; i++)
		strv_pushf(args, "%s%s", LANDLOCK_KEEP_DIRS_ARG, l->keep_dirs.items[i]);
	for (size_t i = 0; i < l->sockets.len; i++)
		strv_pushf(args, "%s%s", LANDLOCK_SOCKET_ARG, l->sockets.items[i]);
	if (!l->landlock_net || !plan->net)
		return;
	strv_pushf(args, "%s%u", LANDLOCK_CONNECT_ARG, plan->net->http_port);
	strv_pushf(args, "%s%u", LANDLOCK_CONNECT_ARG, plan->net->socks_port);
	for (size_t i = 0; i < plan->net->localhost_len; i++)
		strv_pushf(args, "%s%u", LANDLOCK_CONNECT_ARG, plan->net->localhost[i]);
	for (size_t i = 0; i < plan->net->credential_ports_len; i++)
		strv_pushf(args, "%s%u", LANDLOCK_CONNECT_ARG, plan->net->credential_ports[i]);
}

/* Whether the init can make the entry's mount: a masked file from its
 * staged stand-in, or a directory or file bound onto itself (the pins on
 * the way to masked files, protected files) by cloning what is there. A
 * clone keeps the flags of the mount it comes from, and one copied into
 * the init's mount namespace may be locked read-only, so a writable bind
 * under a read-only parent stays bwrap's. */
static bool init_can_bind(const struct bwrap_input *plan, const struct access_entry *e,
			  const struct access_entry *parent, bool root_writable)
{
	/* The init binds onto what exists inside; bwrap makes a mount point
	 * on a tmpfs. */
	if (!strcmp(e->path, "/") || !policy_shows_host_path(parent, e->path))
		return false;
	switch (e->level) {
	case ACCESS_EXCLUDE:
		return !e->is_dir;
	case ACCESS_RO:
		return !copy_for(plan, e->path);
	case ACCESS_RW:
		return !copy_for(plan, e->path) &&
		       (parent ? parent->level == ACCESS_RW : root_writable);
	}
	return false;
}

/* Clears the init's binds of directories that hold path: bwrap's mount
 * there comes first, and a clone of the directory would copy it (the mount
 * table would then hold it twice). */
static void leave_holders_to_bwrap(const struct policy *p, bool *by_init, const char *path)
{
	for (size_t j = 0; j < p->len; j++)
		if (by_init[j] && p->entries[j].is_dir && path_is_within(path, p->entries[j].path))
			by_init[j] = false;
}

/* Which entries the init binds (true at their index), or NULL when none:
 * only with a plan to carry them, never nested (no bwrap there). The
 * policy's entries come in path order, a directory's subtree right after
 * it, so one stack of open directories gives each entry its nearest
 * parent. A directory with anything of bwrap's beneath it (an entry, a
 * copy, a wrapper) stays bwrap's too, so that every mount is made once. */
static bool *init_bind_entries(const struct bwrap_input *plan, const struct mount_plan *mounts)
{
	if (!plan->init_binds || !mounts || plan->nested)
		return NULL;
	const struct policy *p = plan->policy;
	bool root_writable = false;
	for (size_t i = 0; i < p->len; i++)
		if (!strcmp(p->entries[i].path, "/"))
			root_writable = p->entries[i].level == ACCESS_RW;
	_cleanup_free_ size_t *open = xcalloc(p->len + 1, sizeof(*open));
	_cleanup_free_ bool *by_init = xcalloc(p->len + 1, sizeof(*by_init));
	size_t depth = 0;
	for (size_t i = 0; i < p->len; i++) {
		const struct access_entry *e = &p->entries[i];
		while (depth && !path_is_within(e->path, p->entries[open[depth - 1]].path))
			depth--;
		const struct access_entry *parent = depth ? &p->entries[open[depth - 1]] : NULL;
		by_init[i] = init_can_bind(plan, e, parent, root_writable);
		if (!by_init[i] && strcmp(e->path, "/") != 0)
			for (size_t d = 0; d < depth; d++)
				by_init[open[d]] = false;
		if (e->is_dir)
			open[depth++] = i;
	}
	for (size_t i = 0; i < plan->copies_len; i++)
		leave_holders_to_bwrap(p, by_init, plan->copies[i].dest);
	for (size_t i = 0; plan->wrappers && i < plan->wrappers->len; i++) {
		const struct strv *targets = &plan->wrappers->items[i].targets;
		for (size_t t = 0; t < targets->len; t++)
			leave_holders_to_bwrap(p, by_init, targets->items[t]);
	}
	for (size_t i = 0; i < p->len; i++)
		if (by_init[i])
			return steal_ptr(&by_init);
	return NULL;
}

size_t bwrap_render(const struct bwrap_input *plan, struct strv *args, struct mount_plan *mounts)
{
	_cleanup_free_ bool *by_init = init_bind_entries(plan, mounts);
	struct mount_sink out = {.args = args, .plan = mounts, .init_binds = by_init != NULL};
	/* Always a new user namespace, also for root, so that the sandbox's
	 * capabilities mean nothing on the host. */
	add(args, "--unshare-user");
	add(args, "--unshare-ipc");
	add(args, "--unshare-pid");
	add(args, "--unshare-uts");
	add(args, "--unshare-cgroup-try");
	if (!plan->host_network)
		add(args, "--unshare-net");
	add(args, "--die-with-parent");
	if (plan->new_session)
		add(args, "--new-session");
	add2(args, "--cap-drop", "ALL");
	if (out.init_binds) {
		/* Only in the sandbox's own user namespace, and only until the
		 * init has made its binds: it then drops every capability (and
		 * CAP_SETPCAP lets it empty the bounding set) before anything
		 * else runs. */
		add2(args, "--cap-add", "CAP_SYS_ADMIN");
		add2(args, "--cap-add", "CAP_SETPCAP");
	}
	add(args, "--as-pid-1");
	add(args, "--info-fd");
	strv_pushf(args, "%d", plan->info_fd);

	render_base(plan, &out);
	if (plan->net)
		mount_plan_bind(&out, 0, plan->net->proxy_socket, &plan->net->proxy_socket_id,
				SANDBOX_PROXY_SOCKET);
	render_entries(plan, by_init, &out);
	if (plan->wrappers) {
		struct host_file self = {plan->self_exe, plan->self_id};
		struct host_file empty = {plan->empty_file, plan->empty_id};
		wrapper_plan_render(plan->wrappers, &self, &empty, &out);
	}

	/* Search-only: the binary can be run, the directory not listed. A
	 * nested sandbox's is the outer one's, read-only and 0111 already. */
	if (!plan->nested)
		add3(args, "--chmod", "0111", SANDBOX_DIR);
	mount_plan_remount_ro(&out, SANDBOX_DIR);
	/* Not recursive: /dev/shm, /dev/pts and the devices stay as they are. */
	for (size_t i = 0; i < policy_base_mounts_len; i++)
		if (policy_base_mounts[i].kind == BASE_DEV)
			mount_plan_remount_ro(&out, policy_base_mounts[i].path);

	add3(args, "--setenv", "AGENT_SANDBOX", "1");
	if (plan->net)
		render_network_env(plan->net, args);
	add2(args, "--chdir", plan->cwd);
	size_t command_start = args->len;
	add(args, "--");
	add2(args, SANDBOX_SELF, SANDBOX_INIT_ARG);
	strv_pushf(args, "%d", plan->ready_fd);
	strv_pushf(args, "%d", plan->stderr_fd);
	strv_pushf(args, "%#lx", plan->ignored_signals);
	strv_pushf(args, "%s%d", MOUNT_PLAN_ARG, plan->mounts_fd);
	add(args, plan->seccomp ? SECCOMP_ARG : SECCOMP_OFF_ARG);
	if (plan->pids)
		strv_pushf(args, "%s%u", PIDS_ARG, plan->pids);
	if (plan->control_fd > 0)
		strv_pushf(args, "%s%d", CONTROL_ARG, plan->control_fd);
	if (plan->address_space)
		strv_pushf(args, "%s%llu", ADDRESS_SPACE_ARG, plan->address_space);
	/* The loader's variables (LD_PRELOAD, GLIBC_TUNABLES, ...) are the
	 * command's alone: set in bwrap's environment they would load code
	 * into the init, which runs before the sandbox is finished and holds
	 * a capability until then. The init sets them for the command. */
	for (char *const *e = plan->loader_env; e && *e; e++)
		strv_pushf(args, "%s%s", COMMAND_ENV_ARG, *e);
	if (plan->net)
		strv_push_owned(args, forward_spec(plan->net));
	render_landlock(plan, args);
	add(args, "--");
	for (char *const *a = plan->command; *a; a++)
		add(args, *a);
	return command_start;
}
