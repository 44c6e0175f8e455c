/* This file dispatches a wrapped command inside the sandbox, by name:
 * a script in WRAPPER_SCRIPT_DIR runs with the original arguments; a
 * marker in WRAPPER_PRESET_DIR runs the @git guard before the real program
 * in WRAPPER_BIN_DIR; a marker in WRAPPER_BLOCKED_DIR refuses. A name with
 * none of these is not a wrapped command: the binary is agent-sandbox
 * itself under another name, and that can only start a sandbox inside
 * this one, which cannot loosen it. It never decides what is wrapped.
 *
 * A nested run keeps the same layout in a directory of its own (named in
 * WRAPPER_NESTED_ENV), whose launchers are symlinks in its PATH directory:
 * the path the kernel was asked to execute (AT_EXECFN) says which layout
 * applies, so that a nested launcher that runs the next program on PATH,
 * the outer launcher, hands over to it. */
#include "inside/launcher.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "policy/env.h"
#include "inside/git_guard.h"
#include "inside/inside.h"
#include "base/io.h"
#include "policy/path.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "base/term_escape.h"
#include "policy/wrappers.h"
#include "base/xalloc.h"

/* A refused command exits like a program that cannot be executed. */
#define EXIT_REFUSED 126

static const char *command_name(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	return slash ? slash + 1 : argv0;
}

static bool exists(const char *path);

/* The nested run's directory whose launchers this process was started
 * through, or NULL: the directory of the path executed, resolved, is one
 * of theirs. Their launcher directory is a directory named
 * WRAPPER_NESTED_PATH_DIR, not a symlink: a variable set by hand cannot
 * make a PATH directory of the outer sandbox (/usr/bin) pass for one, and
 * so cannot take an outer launcher's name away from the outer layout. */
static char *nested_base(void)
{
	const char *list = getenv(WRAPPER_NESTED_ENV);
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	if (!list || !execfn || !strchr(execfn, '/'))
		return NULL;
	_cleanup_free_ char *dir = xstrndup(execfn, (size_t)(strrchr(execfn, '/') - execfn));
	_cleanup_free_ char *real_dir = realpath(*dir ? dir : "/", NULL);
	for (const char *p = list; real_dir && *p;) {
		const char *colon = strchrnul(p, ':');
		_cleanup_free_ char *base = xstrndup(p, (size_t)(colon - p));
		p = *colon ? colon + 1 : colon;
		_cleanup_free_ char *launchers = xasprintf("%s/" WRAPPER_NESTED_PATH_DIR, base);
		_cleanup_free_ char *real = realpath(launchers, NULL);
		struct stat st;
		if (real && lstat(launchers, &st) == 0 && S_ISDIR(st.st_mode) &&
		    !strcmp(command_name(real), WRAPPER_NESTED_PATH_DIR) && !strcmp(real, real_dir))
			return steal_ptr(&base);
	}
	return NULL;
}

/* Where this launcher finds what to do: a nested run's directory, or the
 * sandbox's own. */
static char *wrapper_base(void)
{
	char *base = nested_base();
	return base ? base : xstrdup(WRAPPER_BASE_DIR);
}

bool launcher_applies(int argc, char **argv)
{
	if (argc < 1 || !argv[0])
		return false;
	const char *name = command_name(argv[0]);
	if (!*name || !strcmp(name, "agent-sandbox") || !strcmp(name, ".") || !strcmp(name, "..") ||
	    !inside_sandbox())
		return false;
	_cleanup_free_ char *base = wrapper_base();
	static const char *const dirs[] = {WRAPPER_SCRIPT_NAME, WRAPPER_PRESET_NAME,
					   WRAPPER_BLOCKED_NAME};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		_cleanup_free_ char *entry = xasprintf("%s/%s/%s", base, dirs[i], name);
		struct stat st;
		if (lstat(entry, &st) == 0)
			return true;
	}
	return false;
}

static int say(int err_fd, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The command's name and arguments come from whatever ran it: callers
 * escape them where they are formatted in, and the message as a whole
 * keeps only our own line breaks. */
static int say(int err_fd, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *text = xvasprintf(fmt, ap);
	va_end(ap);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	term_escape_mode_add(&sb, text, strlen(text), TERM_ESCAPE_LINES);
	/* Unchecked: err_fd is the command's stderr, the only place a failure
	 * could be reported; the exit status says the same either way. */
	(void)write_all(err_fd, sb.buf, sb.len);
	return status;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int exec_failed(int err_fd, const char *what, const char *path)
{
	int e = errno;
	_cleanup_free_ char *shown = term_escape(path);
	return say(err_fd, e == ENOENT ? 127 : 126, "agent-sandbox: running %s %s: %s\n", what,
		   shown, strerror(e));
}

/* The environment with AGENT_SANDBOX_CMD and AGENT_SANDBOX_REAL set. */
static void script_env(char **envp, const char *name, const char *real, struct strv *out)
{
	for (char **e = envp; e && *e; e++)
		if (strncmp(*e, "AGENT_SANDBOX_CMD=", 18) && strncmp(*e, "AGENT_SANDBOX_REAL=", 19))
			strv_push(out, *e);
	strv_pushf(out, "AGENT_SANDBOX_CMD=%s", name);
	strv_pushf(out, "AGENT_SANDBOX_REAL=%s", real);
}

/* The sandbox's private /tmp: a tmpfs of its own, not the root's device.
 * Anything on it disappears with the sandbox, so nothing there is worth
 * guarding; a project bound in under /tmp is on another device. */
static bool on_private_tmp(const char *path)
{
	struct stat tmp, root, st;
	struct statfs fs;
	if (stat("/tmp", &tmp) < 0 || stat("/", &root) < 0 || statfs("/tmp", &fs) < 0)
		return false;
	if (fs.f_type != TMPFS_MAGIC || tmp.st_dev == root.st_dev)
		return false;
	return stat(path, &st) == 0 && st.st_dev == tmp.st_dev;
}

static char *relative_to(const char *base, const char *path)
{
	return path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", base, path);
}

/* A git directory on the private /tmp that does not borrow another
 * repository's refs (a "commondir" file points a worktree at its main
 * repository, which may live on the host). */
static bool git_dir_is_private(const char *git_dir)
{
	struct stat st;
	if (stat(git_dir, &st) < 0 || !S_ISDIR(st.st_mode) || !on_private_tmp(git_dir))
		return false;
	_cleanup_free_ char *commondir = xasprintf("%s/commondir", git_dir);
	return !exists(commondir);
}

/* The temporary-directory exception: git works only on the sandbox's
 * private /tmp. Every place git could be pointed at must be there: the
 * directory after -C, --git-dir, --work-tree and their environment
 * variables, and the repository git finds. A .git file (a linked
 * worktree or submodule) can point anywhere, so it ends the exception. */
static bool works_in_temp_dir(const struct git_decision *d, char **envp)
{
	_cleanup_free_ char *dir = getcwd(NULL, 0);
	if (!dir)
		return false;
	for (size_t i = 0; i < d->chdirs.len; i++) {
		if (!*d->chdirs.items[i])
			continue;
		char *next = relative_to(dir, d->chdirs.items[i]);
		free(dir);
		dir = next;
	}
	if (!on_private_tmp(dir))
		return false;
	const char *git_dir = d->git_dir ? d->git_dir : env_get(envp, "GIT_DIR");
	const char *work_tree = d->work_tree ? d->work_tree : env_get(envp, "GIT_WORK_TREE");
	const char *common_dir = env_get(envp, "GIT_COMMON_DIR");
	const char *others[] = {work_tree, common_dir};
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		if (!others[i])
			continue;
		_cleanup_free_ char *p = relative_to(dir, others[i]);
		if (!on_private_tmp(p))
			return false;
	}
	if (git_dir) {
		_cleanup_free_ char *p = relative_to(dir, git_dir);
		return git_dir_is_private(p);
	}
	_cleanup_free_ char *up = xstrdup(dir);
	for (;;) {
		if (!on_private_tmp(up))
			return false;
		_cleanup_free_ char *dot_git = xasprintf("%s/.git", up);
		struct stat st;
		if (lstat(dot_git, &st) == 0)
			return S_ISDIR(st.st_mode) && git_dir_is_private(dot_git);
		char *slash = strrchr(up, '/');
		if (!slash || slash == up)
			return false;
		*slash = '\0';
	}
}

/* The variables that choose git's config files, as the sandbox started:
 * symlinks in a read-only directory (see wrapper_plan_render), which the
 * agent can neither change nor remove. An unreadable one counts as unset,
 * so that a value set now differs from it: the guard then refuses rather
 * than trusts. */
static void read_start_env(const char *base, struct strv *out)
{
	for (const char *const *name = git_guard_config_env; *name; name++) {
		_cleanup_free_ char *link =
		    xasprintf("%s/" WRAPPER_START_ENV_NAME "/%s", base, *name);
		_cleanup_free_ char *target = NULL;
		if (path_read_link(link, &target) == 0 && target[0] == '=')
			strv_pushf(out, "%s%s", *name, target);
	}
}

static int run_git_guard(const char *base, int argc, char **argv, char **envp, int err_fd,
			 const char *name, const char *real)
{
	_cleanup_strv_ struct strv start_env = STRV_INIT;
	read_start_env(base, &start_env);
	_cleanup_git_decision_ struct git_decision d;
	git_guard_classify(argc - 1, argv + 1, envp, strv_array(&start_env), &d);
	if (d.blocked && !works_in_temp_dir(&d, envp)) {
		audit_report_blocked(name, argv, d.reason);
		_cleanup_free_ char *shown = term_escape(name);
		_cleanup_free_ char *form = term_escape(d.form);
		_cleanup_free_ char *reason = term_escape(d.reason);
		_cleanup_free_ char *alternative = term_escape(d.alternative);
		return say(
		    err_fd, EXIT_REFUSED,
		    "agent-sandbox: %s %s is blocked by the sandbox policy: %s\n"
		    "agent-sandbox: hint: %s (the @git guard refuses this; "
		    "\"commands\": {\"%s\": true} in the config or --cmd %s=true lifts it)\n",
		    shown, form, reason, alternative, shown, shown);
	}
	execve(real, argv, envp);
	return exec_failed(err_fd, name, real);
}

int launcher_main(int argc, char **argv, char **envp, int err_fd)
{
	const char *name = command_name(argv[0]);
	_cleanup_free_ char *base = wrapper_base();
	_cleanup_free_ char *script = xasprintf("%s/" WRAPPER_SCRIPT_NAME "/%s", base, name);
	_cleanup_free_ char *marker = xasprintf("%s/" WRAPPER_PRESET_NAME "/%s", base, name);
	_cleanup_free_ char *real = xasprintf("%s/" WRAPPER_BIN_NAME "/%s", base, name);
	struct stat st;

	if (exists(script)) {
		_cleanup_strv_ struct strv env = STRV_INIT;
		script_env(envp, name, exists(real) ? real : "", &env);
		_cleanup_strv_ struct strv args = STRV_INIT;
		strv_push(&args, script);
		for (int i = 1; i < argc; i++)
			strv_push(&args, argv[i]);
		execve(script, strv_array(&args), strv_array(&env));
		return exec_failed(err_fd, "the wrapper script for", name);
	}
	if (lstat(marker, &st) == 0)
		return run_git_guard(base, argc, argv, envp, err_fd, name, real);
	/* The blocked marker, or whatever took a marker away since
	 * launcher_applies looked: refuse. */
	audit_report_blocked(name, argv, "blocked by the sandbox policy");
	_cleanup_free_ char *shown = term_escape(name);
	return say(err_fd, EXIT_REFUSED,
		   "agent-sandbox: %s is blocked by the sandbox policy\n"
		   "agent-sandbox: hint: to allow it, set \"commands\": {\"%s\": true} in the "
		   "config, or run agent-sandbox with --cmd %s=true\n",
		   shown, shown, shown);
}
