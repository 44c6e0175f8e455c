/* Claude Code keeps its global config in ~/.claude.json, and that file
 * names MCP servers (commands) that the next Claude Code on the host starts.
 * So it stays read-only inside, and Claude Code there is pointed at
 * ~/.claude with CLAUDE_CONFIG_DIR, where its global config becomes
 * ~/.claude/.claude.json (and its lock ~/.claude/.claude.json.lock): a copy
 * of its own, in a directory it may write, that no host program reads.
 * The copy is seeded from the host's file once; nothing flows back.
 *
 * Sessions also keep scripts they source before each command (shell
 * snapshots, hook env files) in directories of their own. Those are
 * read-only inside; one that does not exist yet is made, empty, before the
 * run, so that it is mounted read-only like the rest: otherwise the guard
 * would take it away from a session starting on the host meanwhile.
 * The agents' own state directories (agent_profile.h) are made here too,
 * on first use, so that their state persists.
 * This file never writes anything but the copy and those directories. */
#include "policy/agent_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "base/io.h"
#include "base/xalloc.h"

/* Claude Code's config grows with every project it has seen; far beyond
 * this it is not a config. */
#define CLAUDE_JSON_MAX (64u << 20)

char *agent_state_claude_env(char *const *envp, const char *home)
{
	if (!home || home[0] != '/' || env_get(envp, "CLAUDE_CONFIG_DIR"))
		return NULL;
	return xasprintf("CLAUDE_CONFIG_DIR=%s/.claude", home);
}

const char *agent_state_users_claude_dir(char *const *envp, const char *home, bool inside)
{
	const char *dir = env_get(envp, "CLAUDE_CONFIG_DIR");
	if (!dir || !inside || !home)
		return dir;
	_cleanup_free_ char *own = xasprintf("%s/.claude", home);
	return strcmp(dir, own) ? dir : NULL;
}

int agent_state_seed_claude(const char *home, struct error *err)
{
	_cleanup_free_ char *dir = xasprintf("%s/.claude", home);
	_cleanup_free_ char *source = xasprintf("%s/.claude.json", home);
	_cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? 0
				       : error_errno(err, ERROR_SETUP, errno, "opening %s", dir);

	/* Whatever is there, even a symlink the agent planted, is the
	 * sandbox's own: it is never followed or replaced. */
	struct stat st;
	if (fstatat(dirfd, ".claude.json", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != ENOENT)
		return error_errno(err, ERROR_SETUP, errno, "checking %s/.claude.json", dir);

	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_file(source, CLAUDE_JSON_MAX, &text, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "reading %s", source);

	/* An unnamed file, linked in only once complete: a Claude Code
	 * starting meanwhile sees no file or the whole one, and a name
	 * that appeared in between is left alone (EEXIST). */
	_cleanup_close_ int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "creating a file in %s", dir);
	if ((r = write_all(fd, text, len)) < 0)
		return error_errno(err, ERROR_SETUP, -r, "writing %s/.claude.json", dir);
	if (fsync(fd) < 0)
		return error_errno(err, ERROR_SETUP, errno, "writing %s/.claude.json", dir);
	char proc_path[64];
	int n = snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
	if (n < 0 || (size_t)n >= sizeof(proc_path))
		return error_set(err, ERROR_SETUP, "naming descriptor %d", fd);
	if (linkat(AT_FDCWD, proc_path, dirfd, ".claude.json", AT_SYMLINK_FOLLOW) < 0)
		return errno == EEXIST
			   ? 0
			   : error_errno(err, ERROR_SETUP, errno, "linking %s/.claude.json", dir);
	return 1;
}

/* Makes dir/name unless it exists in any form; a missing dir is left so.
 * Without make, only says whether it would. */
static int make_dir_in(const char *dir, const char *name, bool make, struct error *err)
{
	_cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? 0
				       : error_errno(err, ERROR_SETUP, errno, "opening %s", dir);
	if (!make) {
		struct stat st;
		return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	}
	if (mkdirat(dirfd, name, 0700) == 0)
		return 1;
	return errno == EEXIST ? 0
			       : error_errno(err, ERROR_SETUP, errno, "making %s/%s", dir, name);
}

static int sourced_dirs(const char *home, const char *claude_dir, bool make, struct error *err)
{
	_cleanup_free_ char *claude = xasprintf("%s/.claude", home);
	_cleanup_free_ char *codex = xasprintf("%s/.codex", home);
	const struct {
		const char *dir;
		const char *name;
	} dirs[] = {
	    {claude, "shell-snapshots"},
	    {claude, "session-env"},
	    {claude_dir, "shell-snapshots"},
	    {claude_dir, "session-env"},
	    {codex, "shell_snapshots"},
	    /* Not sourced, but written at every start (Claude Code's
	     * plugins/store, Codex's skills/.system): made empty, they are
	     * mounted read-only and the agents go on without them; missing,
	     * what the agents create there is moved aside by the guard at
	     * every run. */
	    {claude, "plugins"},
	    {claude_dir, "plugins"},
	    {codex, "skills"},
	};
	int made = 0;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (!dirs[i].dir)
			continue;
		int r = make_dir_in(dirs[i].dir, dirs[i].name, make, err);
		if (r < 0)
			return -1;
		made += r;
	}
	return made;
}

int agent_state_make_sourced_dirs(const char *home, const char *claude_dir, struct error *err)
{
	return sourced_dirs(home, claude_dir, true, err);
}

bool agent_state_sourced_dirs_missing(const char *home, const char *claude_dir)
{
	struct error ignored = ERROR_INIT;
	int n = sourced_dirs(home, claude_dir, false, &ignored);
	error_release(&ignored);
	return n > 0;
}

int agent_state_make_state_dir(const char *home, const char *path, struct error *err)
{
	if (strncmp(path, "~/", 2) != 0)
		return error_set(err, ERROR_INTERNAL, "%s: not under ~", path);
	_cleanup_close_ int fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening %s", home);
	_cleanup_free_ char *rest = xstrdup(path + 2);
	int made = 0;
	char *save = NULL;
	for (char *name = strtok_r(rest, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		if (mkdirat(fd, name, 0700) == 0)
			made++;
		else if (errno != EEXIST)
			return error_errno(err, ERROR_SETUP, errno, "creating %s", path);
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return error_errno(err, ERROR_SETUP, errno,
					   "creating %s: opening its part %s", path, name);
		close(fd);
		fd = next;
	}
	return made;
}
