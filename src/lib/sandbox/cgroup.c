/* This file makes, fills, enters and removes a sandbox's cgroups: on a v1
 * layout one per controller (pids, memory, cpu), on v2 a single one. Each
 * is named after the supervising process and lies beneath the caller's own
 * cgroup, so a sandbox never takes more than its parent allows. */
#include "sandbox/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "base/io.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CPU_PERIOD_US 100000ULL

static bool unified(void)
{
	struct statfs sf;
	return statfs(CGROUP_ROOT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* The caller's path for a v1 controller ("8:pids:/a/b"), or for v2 (NULL
 * controller: the "0::/a/b" line), or NULL. */
static char *own_path(const char *controller)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file("/proc/self/cgroup", 64 * 1024, &text, &len) < 0)
		return NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		if (!controller) {
			if (!strcmp(line, "0") && c2 == c1 + 1)
				return xstrdup(c2 + 1);
			continue;
		}
		for (char *tok = c1 + 1, *save = NULL; (tok = strtok_r(tok, ",", &save));
		     tok = NULL)
			if (!strcmp(tok, controller))
				return xstrdup(c2 + 1);
	}
	return NULL;
}

/* Where the sandbox's cgroup would go in a hierarchy ("pids" for v1, NULL
 * for v2), or NULL when the caller's place there is unknown. */
static char *parent_dir(const char *controller)
{
	_cleanup_free_ char *own = own_path(controller);
	if (!own || strstr(own, "/.."))
		return NULL;
	if (!controller)
		return xasprintf("%s%s", CGROUP_ROOT, own);
	return xasprintf("%s/%s%s", CGROUP_ROOT, controller, own);
}

static bool writable_dir(const char *dir)
{
	return dir && access(dir, W_OK | X_OK) == 0;
}

static bool has_file(const char *dir, const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

void sandbox_cgroup_probe(struct cgroup_support *out)
{
	*out = (struct cgroup_support){0};
	if (unified()) {
		_cleanup_free_ char *dir = parent_dir(NULL);
		if (!writable_dir(dir))
			return;
		_cleanup_free_ char *ctl = xasprintf("%s/cgroup.controllers", dir);
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		if (read_file(ctl, 4096, &text, &len) < 0)
			return;
		out->version = 2;
		for (char *tok = text, *save = NULL; (tok = strtok_r(tok, " \n", &save));
		     tok = NULL) {
			out->pids |= !strcmp(tok, "pids");
			out->memory |= !strcmp(tok, "memory");
			out->cpu |= !strcmp(tok, "cpu");
		}
		return;
	}
	static const char *const ctls[] = {"pids", "memory", "cpu"};
	bool *have[] = {&out->pids, &out->memory, &out->cpu};
	for (size_t i = 0; i < 3; i++) {
		_cleanup_free_ char *dir = parent_dir(ctls[i]);
		*have[i] = writable_dir(dir) && (i != 2 || has_file(dir, "cpu.cfs_quota_us"));
		if (*have[i])
			out->version = 1;
	}
}

void sandbox_limits_plan(const struct sandbox_limits *l, struct limit_plan *out)
{
	*out = (struct limit_plan){0};
	sandbox_cgroup_probe(&out->cgroup);
	out->memory_rlimit = l->memory_bytes && !out->cgroup.memory;
	out->cpus_unenforced = l->cpus_milli && !out->cgroup.cpu;
	out->pids_unenforced = l->pids && geteuid() == 0 && !out->cgroup.pids;
}

const char *sandbox_limit_mechanism(const struct cgroup_support *c, enum limit_kind kind)
{
	switch (kind) {
	case LIMIT_MEMORY:
		if (c->memory)
			return c->version == 2 ? "memory cgroup v2 (memory.max, swap 0): the "
						 "sandbox as a whole, OOM kill ends it (exit 137)"
					       : "memory cgroup v1 (limit_in_bytes and memsw): the "
						 "sandbox as a whole, OOM kill ends it (exit 137)";
		return "RLIMIT_AS, weaker: address space per process, an allocation past it "
		       "fails inside";
	case LIMIT_CPUS:
		if (c->cpu)
			return c->version == 2 ? "cpu cgroup v2 (cpu.max)"
					       : "cpu cgroup v1 (cfs_quota_us/cfs_period_us)";
		return "not enforced: no cpu cgroup for this user, and no rlimit bounds a "
		       "share of CPUs";
	case LIMIT_PIDS:
		if (c->pids)
			return c->version == 2 ? "pids cgroup v2 (pids.max) and RLIMIT_NPROC"
					       : "pids cgroup v1 (pids.max) and RLIMIT_NPROC";
		if (geteuid() == 0)
			return "not enforced: the kernel exempts uid 0 from RLIMIT_NPROC and no "
			       "pids cgroup can be made";
		return "RLIMIT_NPROC in the sandbox's user namespace";
	}
	return "";
}

static int write_value(const char *dir, const char *name, const char *value, struct error *err)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int r = fd < 0 ? -errno : write_all(fd, value, strlen(value));
	if (fd >= 0)
		close(fd);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "setting %s to %s", path, value);
	return 0;
}

/* Makes dir beneath parent and opens its cgroup.procs. */
static int make_one(struct sandbox_cgroup *cg, const char *parent, struct error *err)
{
	_cleanup_free_ char *dir = xasprintf("%s/agent-sandbox-%ld", parent, (long)getpid());
	/* One left by a run of the same pid that was killed before it could
	 * remove it is empty (bwrap dies with its parent): take its place. */
	int made = mkdir(dir, 0755);
	if (made < 0 && errno == EEXIST && rmdir(dir) == 0)
		made = mkdir(dir, 0755);
	if (made < 0)
		return error_errno(err, ERROR_SETUP, errno, "making the cgroup %s", dir);
	size_t i = cg->len++;
	cg->dirs[i] = steal_ptr(&dir);
	return 0;
}

static int open_procs(struct sandbox_cgroup *cg, size_t i, struct error *err)
{
	_cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", cg->dirs[i]);
	cg->procs_fds[i] = open(procs, O_WRONLY | O_CLOEXEC);
	if (cg->procs_fds[i] < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening %s", procs);
	return 0;
}

static int create_v2(struct sandbox_cgroup *cg, const struct sandbox_limits *l,
		     const struct cgroup_support *c, struct error *err)
{
	_cleanup_free_ char *parent = parent_dir(NULL);
	if (!parent)
		return 0;
	/* The controllers must be on in the parent's subtree; a parent with
	 * processes of its own may refuse, and then the files are missing. */
	_cleanup_error_ struct error ignored = ERROR_INIT;
	(void)write_value(parent, "cgroup.subtree_control", "+pids +memory +cpu", &ignored);
	if (make_one(cg, parent, err) < 0)
		return -1;
	const char *dir = cg->dirs[0];
	cg->version = 2;
	if (l->pids && c->pids) {
		_cleanup_free_ char *v = xasprintf("%u", l->pids + SANDBOX_CGROUP_OVERHEAD);
		if (write_value(dir, "pids.max", v, err) < 0)
			return -1;
	}
	if (l->memory_bytes && c->memory) {
		_cleanup_free_ char *v = xasprintf("%llu", l->memory_bytes);
		if (write_value(dir, "memory.max", v, err) < 0 ||
		    (has_file(dir, "memory.swap.max") &&
		     write_value(dir, "memory.swap.max", "0", err) < 0))
			return -1;
		cg->memory_dir = xstrdup(dir);
	}
	if (l->cpus_milli && c->cpu) {
		_cleanup_free_ char *v =
		    xasprintf("%llu %llu", l->cpus_milli * CPU_PERIOD_US / 1000, CPU_PERIOD_US);
		if (write_value(dir, "cpu.max", v, err) < 0)
			return -1;
	}
	return open_procs(cg, 0, err);
}

static int create_v1(struct sandbox_cgroup *cg, const struct sandbox_limits *l,
		     const struct cgroup_support *c, struct error *err)
{
	cg->version = 1;
	if (l->pids && c->pids) {
		_cleanup_free_ char *parent = parent_dir("pids");
		_cleanup_free_ char *v = xasprintf("%u", l->pids + SANDBOX_CGROUP_OVERHEAD);
		if (make_one(cg, parent, err) < 0 ||
		    write_value(cg->dirs[cg->len - 1], "pids.max", v, err) < 0 ||
		    open_procs(cg, cg->len - 1, err) < 0)
			return -1;
	}
	if (l->memory_bytes && c->memory) {
		_cleanup_free_ char *parent = parent_dir("memory");
		_cleanup_free_ char *v = xasprintf("%llu", l->memory_bytes);
		if (make_one(cg, parent, err) < 0)
			return -1;
		const char *dir = cg->dirs[cg->len - 1];
		/* memsw (memory and swap together) after the memory limit,
		 * which it may not be below: swapping out does not dodge it. */
		if (write_value(dir, "memory.limit_in_bytes", v, err) < 0 ||
		    (has_file(dir, "memory.memsw.limit_in_bytes") &&
		     write_value(dir, "memory.memsw.limit_in_bytes", v, err) < 0) ||
		    open_procs(cg, cg->len - 1, err) < 0)
			return -1;
		cg->memory_dir = xstrdup(dir);
	}
	if (l->cpus_milli && c->cpu) {
		_cleanup_free_ char *parent = parent_dir("cpu");
		_cleanup_free_ char *period = xasprintf("%llu", CPU_PERIOD_US);
		_cleanup_free_ char *quota =
		    xasprintf("%llu", l->cpus_milli * CPU_PERIOD_US / 1000);
		if (make_one(cg, parent, err) < 0)
			return -1;
		const char *dir = cg->dirs[cg->len - 1];
		if (write_value(dir, "cpu.cfs_period_us", period, err) < 0 ||
		    write_value(dir, "cpu.cfs_quota_us", quota, err) < 0 ||
		    open_procs(cg, cg->len - 1, err) < 0)
			return -1;
	}
	return 0;
}

int sandbox_cgroup_create(struct sandbox_cgroup *cg, const struct sandbox_limits *l,
			  const struct limit_plan *plan, struct error *err)
{
	*cg = (struct sandbox_cgroup)SANDBOX_CGROUP_INIT;
	const struct cgroup_support *c = &plan->cgroup;
	bool wanted =
	    (l->pids && c->pids) || (l->memory_bytes && c->memory) || (l->cpus_milli && c->cpu);
	if (!wanted)
		return 0;
	return c->version == 2 ? create_v2(cg, l, c, err) : create_v1(cg, l, c, err);
}

int sandbox_cgroup_enter(const int *procs_fds, size_t len)
{
	/* "0": the writing process itself. */
	for (size_t i = 0; i < len; i++)
		if (procs_fds[i] >= 0 && write(procs_fds[i], "0", 1) != 1)
			return -1;
	return 0;
}

/* The number after "key " in a file of "key value" lines, or 0. */
static unsigned long long keyed_value(const char *dir, const char *file, const char *key)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file(path, 64 * 1024, &text, &len) < 0)
		return 0;
	size_t klen = strlen(key);
	for (char *line = text; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return strtoull(line + klen + 1, NULL, 10);
	return 0;
}

bool sandbox_cgroup_oom(const struct sandbox_cgroup *cg)
{
	if (!cg->memory_dir)
		return false;
	if (cg->version == 2)
		return keyed_value(cg->memory_dir, "memory.events", "oom_kill") > 0;
	/* oom_kill in oom_control since Linux 4.13; failcnt alone counts
	 * reclaims too, so it is only the fallback. */
	_cleanup_free_ char *path = xasprintf("%s/memory.oom_control", cg->memory_dir);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file(path, 4096, &text, &len) == 0 && strstr(text, "oom_kill "))
		return keyed_value(cg->memory_dir, "memory.oom_control", "oom_kill") > 0;
	_cleanup_free_ char *failcnt = NULL;
	_cleanup_free_ char *fpath = xasprintf("%s/memory.failcnt", cg->memory_dir);
	return read_file(fpath, 64, &failcnt, &len) == 0 && strtoull(failcnt, NULL, 10) > 0;
}

void sandbox_cgroup_remove(struct sandbox_cgroup *cg)
{
	for (size_t i = 0; i < cg->len; i++) {
		if (cg->procs_fds[i] >= 0)
			close(cg->procs_fds[i]);
		cg->procs_fds[i] = -1;
		/* The sandbox's last processes die with its init, but the
		 * kernel may still be reaping them: up to two seconds. */
		for (int n = 0; n < 200 && rmdir(cg->dirs[i]) < 0 && errno == EBUSY; n++)
			nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
		free(cg->dirs[i]);
		cg->dirs[i] = NULL;
	}
	cg->len = 0;
	free(cg->memory_dir);
	cg->memory_dir = NULL;
}
