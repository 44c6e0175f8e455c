/* This file provisions, lists and removes branch mode's worktrees. Every git
 * it runs is a child with an argv, a clean environment and no system or
 * global config, with hooks, fsmonitor and other config-named programs
 * switched off: the shelf is written by sandboxes and must never make the
 * host run anything. It never writes to the host repository.
 *
 * The shelf's repo/ is a local clone of the host repository: its own object
 * store, copied (--no-hardlinks). A hardlink would share the file, not
 * only its content: the sandbox writes the shelf's objects, and a sandbox
 * that made its hardlinked copy writable and rewrote it would rewrite the
 * host's object, which the user's checkout or reset then writes into the
 * host checkout. Nothing is written to the host, and the host's `git gc`
 * cannot break the shelf. Alternates (--reference, --shared) would share
 * more, but a host gc that prunes a commit the shelf still builds on would
 * corrupt every worktree. */
#include "workspace/shelf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/dirs.h"
#include "base/io.h"
#include "base/sha256.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "git/config.h"
#include "git/repo.h"
#include "policy/env.h"
#include "policy/path.h"

#define GIT_OUTPUT_MAX (1024 * 1024)

int shelf_branch_check(const char *name, struct error *err)
{
	const char *why = NULL;
	size_t len = strlen(name);
	if (!len)
		why = "it is empty";
	else if (len > SHELF_BRANCH_MAX)
		why = "it is too long";
	else if (name[0] == '-')
		why = "it starts with '-'";
	else if (!strcmp(name, "HEAD") || !strcmp(name, "@"))
		why = "it is a reserved name";
	else if (strstr(name, ".."))
		why = "it contains \"..\"";
	else if (strstr(name, "@{"))
		why = "it contains \"@{\"";
	else if (strstr(name, "//") || name[0] == '/' || name[len - 1] == '/')
		why = "it has an empty component";
	else if (name[len - 1] == '.')
		why = "it ends with '.'";
	for (const unsigned char *p = (const unsigned char *)name; !why && *p; p++)
		if (*p < 0x20 || *p == 0x7f || strchr(" ~^:?*[\\", *p))
			why = "it contains a control character, a space or one of ~^:?*[\\";
	/* Component rules: none starts with '.' or ends with ".lock". */
	for (const char *c = name; !why && c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t n = strcspn(c, "/");
		if (c[0] == '.')
			why = "a component starts with '.'";
		else if (n >= 5 && !strncmp(c + n - 5, ".lock", 5))
			why = "a component ends with \".lock\"";
	}
	if (!why)
		return 0;
	error_set(err, ERROR_USAGE, "invalid branch name \"%s\": %s", name, why);
	error_hint(err, "expected a git branch name such as feature/login (see git "
			"check-ref-format --branch)");
	return -1;
}

char *shelf_branch_dir(const char *branch)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = branch; *p; p++)
		if (*p == '/')
			strbuf_addstr(&sb, "__");
		else
			strbuf_addch(&sb, *p);
	return strbuf_detach(&sb);
}

/* The shelf's name: the top's base name, kept to safe characters, and a
 * hash of the whole resolved path so that two checkouts never share. */
static char *shelf_id(const char *top)
{
	const char *base = strrchr(top, '/');
	base = base && base[1] ? base + 1 : "root";
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = base; *p && sb.len < 40; p++)
		strbuf_addch(&sb, (isalnum((unsigned char)*p) || strchr("-_.", *p)) &&
					  !(sb.len == 0 && *p == '.')
				      ? *p
				      : '_');
	char hex[SHA256_HEX_LEN + 1];
	sha256_hex(top, strlen(top), hex);
	strbuf_addf(&sb, "-%.16s", hex);
	return strbuf_detach(&sb);
}

static char *shelves_dir(char *const *envp)
{
	_cleanup_free_ char *home = dirs_home(envp);
	_cleanup_free_ char *data = dirs_data(envp, home);
	return data ? xasprintf("%s/shelves", data) : NULL;
}

int shelf_locate(char *const *envp, const char *cwd, struct shelf *out, struct error *err)
{
	*out = (struct shelf){0};
	_cleanup_free_ char *dir = NULL;
	if (path_resolve(cwd, &dir, NULL, NULL) < 0)
		return error_errno(err, ERROR_USAGE, errno, "branch mode: resolving %s", cwd);
	struct git_repo g = {0};
	if (!git_repo_find(dir, &g)) {
		error_set(err, ERROR_USAGE, "branch mode: %s is not in a git repository", dir);
		error_hint(err, "--branch runs in a worktree of the current repository: start it "
				"from inside one, or give -C REPO");
		return -1;
	}
	_cleanup_free_ char *shelves = shelves_dir(envp);
	if (!shelves) {
		git_repo_release(&g);
		return error_set(err, ERROR_SETUP,
				 "branch mode: cannot locate the data directory: neither "
				 "XDG_DATA_HOME nor HOME is set");
	}
	/* A shelf's own worktree is not a host repository: branch mode from
	 * inside one would shelve the shelf. */
	if (path_is_within(g.toplevel, shelves)) {
		error_set(err, ERROR_USAGE, "branch mode: %s is a shelf's worktree already",
			  g.toplevel);
		git_repo_release(&g);
		return -1;
	}
	_cleanup_free_ char *id = shelf_id(g.toplevel);
	out->host_top = steal_ptr(&g.toplevel);
	out->host_git = steal_ptr(&g.common);
	git_repo_release(&g);
	out->dir = xasprintf("%s/%s", shelves, id);
	out->repo = xasprintf("%s/repo", out->dir);
	out->worktrees = xasprintf("%s/worktrees", out->dir);
	return 0;
}

void shelf_list_all(char *const *envp, struct strv *dirs)
{
	_cleanup_free_ char *shelves = shelves_dir(envp);
	if (!shelves)
		return;
	DIR *d = opendir(shelves);
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));) {
		struct stat st;
		if (de->d_name[0] != '.' &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			strv_pushf(dirs, "%s/%s", shelves, de->d_name);
	}
	closedir(d);
}

char *shelf_worktree_path(const struct shelf *s, const char *branch)
{
	_cleanup_free_ char *name = shelf_branch_dir(branch);
	return xasprintf("%s/%s", s->worktrees, name);
}

void shelf_release(struct shelf *s)
{
	free(s->host_top);
	free(s->host_git);
	free(s->dir);
	free(s->repo);
	free(s->worktrees);
	*s = (struct shelf){0};
}

/* ---- running git ---- */

/* Settings that keep a git run from executing anything a config file, an
 * attributes file or the repository names: the config files it reads are
 * the repository's own (which the sandbox cannot write), and these win
 * over them. */
static const char *const git_safety[] = {
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.pager=cat",
    "-c", "core.editor=true",
    "-c", "core.sshCommand=false",
    "-c", "core.askPass=",
    "-c", "core.attributesFile=/dev/null",
    "-c", "credential.helper=",
    "-c", "diff.external=",
    "-c", "protocol.allow=never",
    "-c", "protocol.file.allow=always",
    "-c", "submodule.recurse=false",
    "-c", "fetch.recurseSubmodules=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "advice.detachedHead=false",
    "-c", "init.templateDir=",
};

struct git_run {
	const char *dir;       /* -C */
	const char *git_dir;   /* GIT_DIR, or NULL */
	const char *work_tree; /* GIT_WORK_TREE, or NULL */
	struct strbuf out;     /* stdout, when captured */
	struct strbuf errors;  /* stderr */
};

static void drain(int *fd, struct strbuf *sb)
{
	char buf[4096];
	ssize_t n = read(*fd, buf, sizeof(buf));
	if (n > 0 && sb->len < GIT_OUTPUT_MAX) {
		strbuf_add(sb, buf, (size_t)n);
		return;
	}
	if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
		return;
	close(*fd);
	*fd = -1;
}

/* Runs git with args (NULL-terminated) and returns its exit status, or -1
 * with err set when it could not run. */
static int git_run(char *const *envp, struct git_run *r, const char *const *args, struct error *err)
{
	struct strv argv = STRV_INIT, env = STRV_INIT;
	strv_push(&argv, "git");
	strv_push(&argv, "--no-pager");
	for (size_t i = 0; i < ARRAY_SIZE(git_safety); i++)
		strv_push(&argv, git_safety[i]);
	if (r->dir) {
		strv_push(&argv, "-C");
		strv_push(&argv, r->dir);
	}
	for (const char *const *a = args; *a; a++)
		strv_push(&argv, *a);

	const char *path = env_get(envp, "PATH");
	strv_pushf(&env, "PATH=%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
	const char *home = env_get(envp, "HOME");
	if (home)
		strv_pushf(&env, "HOME=%s", home);
	strv_push(&env, "GIT_CONFIG_NOSYSTEM=1");
	strv_push(&env, "GIT_CONFIG_GLOBAL=/dev/null");
	strv_push(&env, "GIT_ATTR_NOSYSTEM=1");
	strv_push(&env, "GIT_TERMINAL_PROMPT=0");
	strv_push(&env, "GIT_NO_REPLACE_OBJECTS=1");
	strv_push(&env, "GIT_OPTIONAL_LOCKS=0");
	strv_push(&env, "LC_ALL=C");
	if (r->git_dir)
		strv_pushf(&env, "GIT_DIR=%s", r->git_dir);
	if (r->work_tree)
		strv_pushf(&env, "GIT_WORK_TREE=%s", r->work_tree);

	int out[2], errp[2];
	if (pipe2(out, O_CLOEXEC) < 0) {
		strv_release(&argv), strv_release(&env);
		return error_errno(err, ERROR_SETUP, errno, "running git");
	}
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]);
		strv_release(&argv), strv_release(&env);
		return error_errno(err, ERROR_SETUP, errno, "running git");
	}
	char **av = strv_array(&argv), **ev = strv_array(&env);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		signal(SIGPIPE, SIG_DFL);
		/* PATH of the host's environment, which is this process's. */
		execvpe("git", av, ev);
		_exit(127);
	}
	int saved = errno;
	close(out[1]);
	close(errp[1]);
	strv_release(&argv);
	strv_release(&env);
	if (pid < 0) {
		close(out[0]), close(errp[0]);
		return error_errno(err, ERROR_SETUP, saved, "running git");
	}
	int fds[2] = {out[0], errp[0]};
	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[0] >= 0 && p[0].revents)
			drain(&fds[0], &r->out);
		if (fds[1] >= 0 && p[1].revents)
			drain(&fds[1], &r->errors);
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error_errno(err, ERROR_SETUP, errno, "waiting for git");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !r->errors.len)
		return error_set(err, ERROR_SETUP, "branch mode needs git, which is not on PATH");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void git_run_release(struct git_run *r)
{
	strbuf_release(&r->out);
	strbuf_release(&r->errors);
}

/* Runs git and turns a failure into an error naming what was done. */
static int git_must(char *const *envp, const char *dir, const char *what, const char *const *args,
		    char **out, struct error *err)
{
	struct git_run r = {.dir = dir, .out = STRBUF_INIT, .errors = STRBUF_INIT};
	int status = git_run(envp, &r, args, err);
	if (status > 0) {
		while (r.errors.len && r.errors.buf[r.errors.len - 1] == '\n')
			strbuf_setlen(&r.errors, r.errors.len - 1);
		error_set(err, ERROR_SETUP, "%s: git failed (exit %d)%s%s", what, status,
			  r.errors.len ? ": " : "", r.errors.len ? r.errors.buf : "");
		status = -1;
	}
	if (status == 0 && out) {
		while (r.out.len && r.out.buf[r.out.len - 1] == '\n')
			strbuf_setlen(&r.out, r.out.len - 1);
		*out = strbuf_detach(&r.out);
	}
	git_run_release(&r);
	return status;
}

/* ---- the shelf's config: only what agent-sandbox and git write there ---- */

/* The variables the shelf's config may hold: what `git clone`, `git
 * worktree add --track` and create_repo write. Anything else (a filter,
 * diff or merge driver, remote.*.uploadpack, include.path, core.fsmonitor,
 * extensions.worktreeConfig, ...) was put there by someone else, and a
 * host-side git would obey it: the host refuses to run git on the shelf.
 * The sandbox cannot write the file (the @git preset keeps it read-only);
 * this holds should that ever fail. */
/* The host's packs are read-only inside (policy/preset_git.c): a push
 * through the host remote asks git to store what it receives as loose
 * objects, however many, instead of keeping a pack. */
#define HOST_RECEIVE_PACK "git -c receive.unpackLimit=2147483647 receive-pack"

static bool allowed_shelf_key(const char *key)
{
	static const char *const exact[] = {
	    "core.repositoryformatversion",
	    "core.filemode",
	    "core.bare",
	    "core.logallrefupdates",
	    "core.ignorecase",
	    "core.precomposeunicode",
	    "core.symlinks",
	    "extensions.objectformat",
	};
	for (size_t i = 0; i < ARRAY_SIZE(exact); i++)
		if (!strcmp(key, exact[i]))
			return true;
	const char *name = strrchr(key, '.') + 1;
	if (!strncmp(key, "remote.", 7) && name > key + 7)
		return !strcmp(name, "url") || !strcmp(name, "fetch") || !strcmp(name, "pushurl") ||
		       !strcmp(name, "tagopt");
	if (!strncmp(key, "branch.", 7) && name > key + 7)
		return !strcmp(name, "remote") || !strcmp(name, "merge");
	return false;
}

struct config_check {
	const char *file;
	struct error *err;
};

static int check_shelf_key(const char *key, const char *value, void *data)
{
	struct config_check *c = data;
	if (allowed_shelf_key(key) ||
	    (!strcmp(key, "remote.host.receivepack") && value && !strcmp(value, HOST_RECEIVE_PACK)))
		return 0;
	error_set(c->err, ERROR_DENIED,
		  "the shelf's config %s sets %s, which agent-sandbox never writes there: no "
		  "git runs on this shelf",
		  c->file, key);
	error_hint(c->err, "inspect the shelf; remove the line, or the shelf, to go on");
	return 1;
}

static int check_shelf_config(const char *repo_git, struct error *err)
{
	_cleanup_free_ char *file = xasprintf("%s/config", repo_git);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_file(file, GIT_OUTPUT_MAX, &text, &len);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "reading the shelf's config %s", file);
	struct config_check c = {.file = file, .err = err};
	r = git_config_parse(text, len, check_shelf_key, &c);
	if (r > 0)
		return -1;
	if (r < 0)
		return error_set(err, ERROR_DENIED,
				 "the shelf's config %s is malformed: no git runs on this shelf",
				 file);
	return 0;
}

/* ---- directories, never through a symlink ---- */

/* Opens (creating it 0700 when missing) the directory name beneath dirfd,
 * refusing a symlink or anything else in its place. */
static int open_dir_at(int dirfd, const char *name, bool create, struct error *err)
{
	if (create && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return error_errno(err, ERROR_SETUP, errno, "creating %s", name);
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno,
				   errno == ENOTDIR || errno == ELOOP
				       ? "%s is not a directory (a symlink is refused)"
				       : "opening %s",
				   name);
	return fd;
}

/* Opens path's directory, creating what is missing of it beneath the data
 * directory; every component below that is refused when it is a symlink. */
static int open_shelf_dir(const char *dir, bool create, struct error *err)
{
	/* dir is <data>/shelves/<id>: the data directory itself may be a
	 * symlink of the user's; what agent-sandbox made may not. */
	_cleanup_free_ char *shelves = xstrndup(dir, (size_t)(strrchr(dir, '/') - dir));
	_cleanup_free_ char *data = xstrndup(shelves, (size_t)(strrchr(shelves, '/') - shelves));
	_cleanup_free_ char *parent = xstrndup(data, (size_t)(strrchr(data, '/') - data));
	if (create) {
		_cleanup_free_ char *p = xstrdup(parent);
		for (char *s = p + 1; *s; s++) {
			if (*s != '/')
				continue;
			*s = '\0';
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				return error_errno(err, ERROR_SETUP, errno, "creating %s", p);
			*s = '/';
		}
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return error_errno(err, ERROR_SETUP, errno, "creating %s", p);
	}
	_cleanup_close_ int top = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening %s", parent);
	const char *names[] = {strrchr(data, '/') + 1, "shelves", strrchr(dir, '/') + 1};
	int fd = steal_fd(&top);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		int next = open_dir_at(fd, names[i], create, err);
		close(fd);
		if (next < 0)
			return error_prefix(err, "shelf %s", dir);
		fd = next;
	}
	return fd;
}

/* An exclusive lock on the shelf, on a file that is still the shelf's
 * lock: gc unlinks it with the shelf, and a waiter must then start over. */
static int lock_shelf(int shelf_fd, const char *dir, struct error *err)
{
	for (;;) {
		int fd = openat(shelf_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return error_errno(err, ERROR_SETUP, errno, "locking the shelf %s", dir);
		while (flock(fd, LOCK_EX) < 0)
			if (errno != EINTR) {
				close(fd);
				return error_errno(err, ERROR_SETUP, errno, "locking the shelf %s",
						   dir);
			}
		struct stat held, now;
		if (fstat(fd, &held) == 0 && held.st_nlink > 0 &&
		    fstatat(shelf_fd, "lock", &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    held.st_ino == now.st_ino && held.st_dev == now.st_dev)
			return fd;
		close(fd);
		/* Removed with its shelf while this waited. */
		if (held.st_nlink == 0)
			return error_set(err, ERROR_SETUP,
					 "the shelf %s was removed by gc while this run waited; "
					 "run again",
					 dir);
	}
}

/* The branch a worktree has checked out: its gitfile must point into the
 * shelf's repository, and its HEAD name a branch. NULL otherwise. */
static char *worktree_branch(const char *repo_git, const char *worktree, char **admin_out)
{
	_cleanup_free_ char *gitfile = xasprintf("%s/.git", worktree);
	struct stat st;
	if (lstat(gitfile, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	_cleanup_free_ char *admin = git_repo_read_path_file(gitfile, "gitdir: ", worktree);
	_cleanup_free_ char *admins = xasprintf("%s/worktrees", repo_git);
	if (!admin || !path_is_within(admin, admins) || !strcmp(admin, admins))
		return NULL;
	_cleanup_free_ char *head_file = xasprintf("%s/HEAD", admin);
	_cleanup_free_ char *head = NULL;
	size_t len;
	if (read_file(head_file, 4096, &head, &len) < 0)
		return NULL;
	head[strcspn(head, "\r\n")] = '\0';
	if (strncmp(head, "ref: refs/heads/", 16) != 0)
		return NULL;
	if (admin_out)
		*admin_out = steal_ptr(&admin);
	return xstrdup(head + 16);
}

static bool exists_nofollow(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Creates repo/ as a clone of the host repository (see the top of the
 * file), built beside it and renamed into place so a crash leaves no half
 * repository behind. */
static int create_repo(char *const *envp, const struct shelf *s, int shelf_fd, struct error *err)
{
	_cleanup_free_ char *tmp_name = xasprintf("repo.new-%d", (int)getpid());
	_cleanup_free_ char *tmp = xasprintf("%s/%s", s->dir, tmp_name);
	if (exists_nofollow(shelf_fd, tmp_name))
		return error_set(err, ERROR_SETUP, "%s is in the way; remove it", tmp);
	const char *clone[] = {"clone",
			       "--quiet",
			       "--no-checkout",
			       "--no-hardlinks",
			       "--origin",
			       "host",
			       "--",
			       s->host_top,
			       tmp,
			       NULL};
	if (git_must(envp, NULL, "cloning the host repository into the shelf", clone, NULL, err) <
	    0)
		return -1;
	/* The host's remote-tracking branches of origin are fetched into
	 * the shelf's own origin branches, so that a branch can track them, and
	 * `git fetch origin` inside refreshes them from the host. HEAD is
	 * detached, so that every branch is free to be a worktree's. */
	const char *steps[][8] = {
	    {"config", "remote.origin.url", s->host_top, NULL},
	    {"config", "remote.origin.fetch", "+refs/remotes/origin/*:refs/remotes/origin/*", NULL},
	    {"config", "remote.origin.tagOpt", "--no-tags", NULL},
	    {"config", "remote.origin.pushurl", "/dev/null/push to host instead", NULL},
	    {"config", "remote.host.receivepack", HOST_RECEIVE_PACK, NULL},
	    {"update-ref", "--no-deref", "HEAD", "HEAD", NULL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if (git_must(envp, tmp, "setting up the shelf's repository", steps[i], NULL, err) <
		    0)
			return -1;
	/* The branch clone made for the host's HEAD: branches are made by
	 * worktrees, from the host's refs, when asked for. */
	_cleanup_free_ char *branches = NULL;
	const char *list[] = {"for-each-ref", "--format=%(refname)", "refs/heads/", NULL};
	if (git_must(envp, tmp, "setting up the shelf's repository", list, &branches, err) < 0)
		return -1;
	for (char *save = NULL, *ref = strtok_r(branches, "\n", &save); ref;
	     ref = strtok_r(NULL, "\n", &save)) {
		const char *del[] = {"update-ref", "-d", ref, NULL};
		if (git_must(envp, tmp, "setting up the shelf's repository", del, NULL, err) < 0)
			return -1;
	}
	if (renameat(shelf_fd, tmp_name, shelf_fd, "repo") < 0)
		return error_errno(err, ERROR_SETUP, errno, "moving %s into place", tmp);
	return 0;
}

static bool shelf_has_ref(char *const *envp, const struct shelf *s, const char *ref)
{
	const char *args[] = {"rev-parse", "--verify", "--quiet", "--end-of-options", ref, NULL};
	struct git_run r = {.dir = s->repo, .out = STRBUF_INIT, .errors = STRBUF_INIT};
	_cleanup_error_ struct error ignored = ERROR_INIT;
	int status = git_run(envp, &r, args, &ignored);
	git_run_release(&r);
	return status == 0;
}

/* Where a new branch starts: a commit of the host's, as its id. */
static int resolve_start(char *const *envp, const struct shelf *s, const char *from, char **out,
			 struct error *err)
{
	_cleanup_free_ char *spec = xasprintf("%s^{commit}", from ? from : "HEAD");
	const char *args[] = {"rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL};
	if (git_must(envp, s->host_top, "resolving the start of the branch", args, out, err) == 0)
		return 0;
	error_release(err);
	if (from) {
		error_set(err, ERROR_USAGE, "--from %s: no such commit in %s", from, s->host_top);
		error_hint(err, "expected a branch, tag or commit of the host repository");
	} else {
		error_set(err, ERROR_USAGE, "branch mode: %s has no commit yet", s->host_top);
	}
	return -1;
}

static int add_worktree(char *const *envp, const struct shelf *s, const char *branch,
			const char *from, const char *path, struct error *err)
{
	const char *fetch_host[] = {"fetch", "--quiet", "host", NULL};
	if (git_must(envp, s->repo, "fetching from the host repository", fetch_host, NULL, err) < 0)
		return -1;
	_cleanup_free_ char *origin_ref = xasprintf("refs/remotes/origin/%s", branch);
	_cleanup_free_ char *local_ref = xasprintf("refs/heads/%s", branch);
	const char *fetch_origin[] = {"fetch", "--quiet", "origin", NULL};
	if (git_must(envp, s->repo, "fetching the host's origin branches", fetch_origin, NULL,
		     err) < 0)
		return -1;

	if (shelf_has_ref(envp, s, local_ref)) {
		/* Kept by gc, which removes worktrees and never branches. */
		if (from)
			return error_set(err, ERROR_USAGE,
					 "--from %s: the branch %s exists in the shelf already",
					 from, branch);
		const char *args[] = {"worktree", "add", "--quiet", "--", path, branch, NULL};
		return git_must(envp, s->repo, "adding the worktree", args, NULL, err);
	}
	if (!from && shelf_has_ref(envp, s, origin_ref)) {
		_cleanup_free_ char *upstream = xasprintf("origin/%s", branch);
		const char *args[] = {"worktree", "add", "--quiet", "--track", "-b",
				      branch,	  "--",	 path,	    upstream,  NULL};
		return git_must(envp, s->repo, "adding the worktree", args, NULL, err);
	}
	_cleanup_free_ char *start = NULL;
	if (resolve_start(envp, s, from, &start, err) < 0)
		return -1;
	/* A commit no branch of the host's reaches (a tag's, a detached
	 * HEAD's) comes over by its id. */
	_cleanup_free_ char *commit = xasprintf("%s^{commit}", start);
	if (!shelf_has_ref(envp, s, commit)) {
		const char *fetch_id[] = {"fetch", "--quiet", "host", start, NULL};
		if (git_must(envp, s->repo, "fetching the start commit", fetch_id, NULL, err) < 0)
			return -1;
	}
	const char *args[] = {"worktree", "add", "--quiet", "--no-track", "-b",
			      branch,	  "--",	 path,	    start,	  NULL};
	return git_must(envp, s->repo, "adding the worktree", args, NULL, err);
}

int shelf_hold(const char *worktree, struct error *err)
{
	int fd = open(worktree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "opening the worktree %s", worktree);
	while (flock(fd, LOCK_SH) < 0)
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return error_errno(err, ERROR_SETUP, e, "locking the worktree %s",
					   worktree);
		}
	if (futimens(fd, NULL) < 0) {
		int e = errno;
		close(fd);
		return error_errno(err, ERROR_SETUP, e, "marking the worktree %s used", worktree);
	}
	return fd;
}

/* The directory name at at, never through a symlink, or NULL. */
static DIR *opendir_nofollow_at(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	DIR *d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

/* rmdir of every empty directory beneath parent's entry name, then of it;
 * depth-limited, a symlink or a file stops nothing but is never entered. */
static void remove_empty_tree(int parent, const char *name, int depth)
{
	if (depth > 4)
		return;
	DIR *d = opendir_nofollow_at(parent, name);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			remove_empty_tree(dirfd(d), e->d_name, depth + 1);
	closedir(d);
	(void)unlinkat(parent, name, AT_REMOVEDIR);
}

void shelf_tidy_host_objects(const struct shelf *s)
{
	if (!s->host_git)
		return;
	_cleanup_free_ char *objects = xasprintf("%s/objects", s->host_git);
	DIR *d = opendir_nofollow_at(AT_FDCWD, objects);
	if (!d)
		return;
	static const char quarantine[] = "tmp_objdir-incoming-";
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_type == DT_DIR && !strncmp(e->d_name, quarantine, strlen(quarantine)))
			remove_empty_tree(dirfd(d), e->d_name, 0);
	closedir(d);
}

void shelf_release_hold(int fd)
{
	if (fd < 0)
		return;
	(void)futimens(fd, NULL);
	/* Unlocked, not only closed: a helper the run forked may share the
	 * descriptor for a moment longer, and the lock with it. */
	(void)flock(fd, LOCK_UN);
	close(fd);
}

int shelf_provision(char *const *envp, const struct shelf *s, const char *branch, const char *from,
		    char **worktree, int *hold, struct error *err)
{
	if (shelf_branch_check(branch, err) < 0)
		return -1;
	_cleanup_close_ int shelf_fd = open_shelf_dir(s->dir, true, err);
	if (shelf_fd < 0)
		return -1;
	_cleanup_close_ int lock = lock_shelf(shelf_fd, s->dir, err);
	if (lock < 0)
		return -1;
	if (!exists_nofollow(shelf_fd, "repo") && create_repo(envp, s, shelf_fd, err) < 0)
		return error_prefix(err, "branch mode");
	_cleanup_close_ int repo_fd = open_dir_at(shelf_fd, "repo", false, err);
	if (repo_fd < 0)
		return error_prefix(err, "branch mode: the shelf %s", s->dir);
	_cleanup_close_ int git_fd = open_dir_at(repo_fd, ".git", false, err);
	if (git_fd < 0)
		return error_prefix(err, "branch mode: the shelf %s", s->dir);
	_cleanup_close_ int worktrees_fd = open_dir_at(shelf_fd, "worktrees", true, err);
	if (worktrees_fd < 0)
		return error_prefix(err, "branch mode");
	_cleanup_free_ char *shelf_git = xasprintf("%s/.git", s->repo);
	if (check_shelf_config(shelf_git, err) < 0)
		return error_prefix(err, "branch mode");

	_cleanup_free_ char *name = shelf_branch_dir(branch);
	_cleanup_free_ char *path = xasprintf("%s/%s", s->worktrees, name);
	_cleanup_free_ char *repo_git = xasprintf("%s/.git", s->repo);
	if (exists_nofollow(worktrees_fd, name)) {
		_cleanup_close_ int fd = open_dir_at(worktrees_fd, name, false, err);
		if (fd < 0)
			return error_prefix(err, "branch mode");
		_cleanup_free_ char *has = worktree_branch(repo_git, path, NULL);
		if (!has || strcmp(has, branch) != 0)
			return error_set(err, ERROR_USAGE,
					 "branch mode: the worktree %s holds %s%s%s, not branch %s",
					 path, has ? "branch \"" : "no branch", has ? has : "",
					 has ? "\"" : "", branch);
		if (from)
			return error_set(err, ERROR_USAGE,
					 "--from %s: the worktree of %s exists already (%s)", from,
					 branch, path);
	} else if (add_worktree(envp, s, branch, from, path, err) < 0) {
		return error_prefix(err, "branch mode");
	}
	/* Held before the shelf's lock is released: gc, which takes that
	 * lock, then sees it in use. */
	if (hold && (*hold = shelf_hold(path, err)) < 0)
		return -1;
	*worktree = steal_ptr(&path);
	return 0;
}

/* ---- listing and removal ---- */

static int compare_worktrees(const void *a, const void *b)
{
	return strcmp(((const struct shelf_worktree *)a)->path,
		      ((const struct shelf_worktree *)b)->path);
}

int shelf_worktrees(const char *dir, struct shelf_worktree **out, size_t *len, struct error *err)
{
	*out = NULL;
	*len = 0;
	_cleanup_free_ char *worktrees = xasprintf("%s/worktrees", dir);
	_cleanup_free_ char *repo_git = xasprintf("%s/repo/.git", dir);
	DIR *d = opendir(worktrees);
	if (!d)
		return errno == ENOENT
			   ? 0
			   : error_errno(err, ERROR_SETUP, errno, "reading %s", worktrees);
	size_t cap = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (*len == cap) {
			cap = cap ? 2 * cap : 8;
			*out = xreallocarray(*out, cap, sizeof(**out));
		}
		struct shelf_worktree *w = &(*out)[(*len)++];
		w->path = xasprintf("%s/%s", worktrees, de->d_name);
		w->branch = worktree_branch(repo_git, w->path, NULL);
		if (!w->branch)
			w->branch = xstrdup(de->d_name);
		w->last_use = st.st_mtime;
		w->in_use = false;
		int fd =
		    openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK)
				w->in_use = true;
			close(fd);
		}
	}
	closedir(d);
	if (*len)
		qsort(*out, *len, sizeof(**out), compare_worktrees);
	return 0;
}

void shelf_worktrees_release(struct shelf_worktree *items, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		free(items[i].branch);
		free(items[i].path);
	}
	free(items);
}

bool shelf_worktree_dirty(char *const *envp, const char *shelf_dir, const char *worktree)
{
	_cleanup_free_ char *repo_git = xasprintf("%s/repo/.git", shelf_dir);
	_cleanup_free_ char *admin = NULL;
	_cleanup_free_ char *branch = worktree_branch(repo_git, worktree, &admin);
	if (!branch)
		return true;
	/* GIT_DIR and GIT_WORK_TREE named, so that git follows no gitfile;
	 * the admin directory's commondir must lead back to repo/.git. */
	_cleanup_free_ char *commondir = xasprintf("%s/commondir", admin);
	_cleanup_free_ char *common = git_repo_read_path_file(commondir, NULL, admin);
	_cleanup_free_ char *repo_resolved = NULL;
	_cleanup_error_ struct error config_err = ERROR_INIT;
	if (!common || path_resolve(repo_git, &repo_resolved, NULL, NULL) < 0 ||
	    strcmp(common, repo_resolved) != 0 || check_shelf_config(repo_git, &config_err) < 0)
		return true;
	const char *args[] = {"status", "--porcelain", "--untracked-files=normal",
			      "--ignore-submodules=none", NULL};
	struct git_run r = {.git_dir = admin,
			    .work_tree = worktree,
			    .dir = worktree,
			    .out = STRBUF_INIT,
			    .errors = STRBUF_INIT};
	_cleanup_error_ struct error ignored = ERROR_INIT;
	int status = git_run(envp, &r, args, &ignored);
	bool dirty = status != 0 || r.out.len > 0;
	git_run_release(&r);
	return dirty;
}

static bool dir_is_empty_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	bool empty = true;
	for (struct dirent *de; empty && (de = readdir(d));)
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

/* Removes the shelf when no worktree is left in it, unless a branch has
 * commits the host lacks and force is not set. The caller holds the lock
 * and has checked the shelf's config. */
static int remove_idle_shelf(char *const *envp, int shelf_fd, const char *shelf_dir, bool force,
			     bool *shelf_removed, bool *unpushed, struct error *err)
{
	int r;
	_cleanup_free_ char *repo = xasprintf("%s/repo", shelf_dir);
	if (!dir_is_empty_at(shelf_fd, "worktrees"))
		return 0;
	/* No worktree left: the shelf goes, its branches with it, unless
	 * one has commits the host does not have (git push host updated
	 * host/NAME; origin/NAME came from the host): those stay, with the
	 * repository, until pushed or given up with --force. */
	if (!force && exists_nofollow(shelf_fd, "repo")) {
		const char *unpushed_args[] = {"rev-list", "--max-count=1",  "--branches",
					       "--not",	   "--remotes=host", "--remotes=origin",
					       NULL};
		_cleanup_free_ char *commits = NULL;
		if (git_must(envp, repo, "looking for commits the host lacks", unpushed_args,
			     &commits, err) < 0)
			return -1;
		if (commits[0]) {
			*unpushed = true;
			return 0;
		}
	}
	/* The lock file goes last, so that a waiter sees it unlinked and
	 * starts over. */
	if ((r = io_remove_tree_at(shelf_fd, "repo")) < 0 ||
	    (r = io_remove_tree_at(shelf_fd, "worktrees")) < 0)
		return error_errno(err, ERROR_SETUP, -r, "removing the shelf %s", shelf_dir);
	if (unlinkat(shelf_fd, "lock", 0) < 0 && errno != ENOENT)
		return error_errno(err, ERROR_SETUP, errno, "removing the shelf %s", shelf_dir);
	if (rmdir(shelf_dir) < 0 && errno != ENOENT)
		return error_errno(err, ERROR_SETUP, errno, "removing the shelf %s", shelf_dir);
	*shelf_removed = true;
	return 0;
}

/* The shelf opened and locked for a removal; a shelf whose config is not
 * ours is left alone, whole. */
static int open_for_removal(const char *shelf_dir, int *shelf_fd, int *lock, struct error *err)
{
	*shelf_fd = open_shelf_dir(shelf_dir, false, err);
	if (*shelf_fd < 0)
		return -1;
	*lock = lock_shelf(*shelf_fd, shelf_dir, err);
	if (*lock < 0)
		return -1;
	_cleanup_free_ char *repo_git = xasprintf("%s/repo/.git", shelf_dir);
	if (exists_nofollow(*shelf_fd, "repo") && check_shelf_config(repo_git, err) < 0)
		return -1;
	return 0;
}

int shelf_remove_worktree(char *const *envp, const char *shelf_dir, const char *worktree,
			  bool force, bool *shelf_removed, bool *unpushed, struct error *err)
{
	*shelf_removed = *unpushed = false;
	_cleanup_close_ int shelf_fd = -1, lock = -1;
	if (open_for_removal(shelf_dir, &shelf_fd, &lock, err) < 0)
		return -1;
	_cleanup_close_ int worktrees_fd = open_dir_at(shelf_fd, "worktrees", false, err);
	if (worktrees_fd < 0)
		return -1;
	const char *name = strrchr(worktree, '/') + 1;
	_cleanup_close_ int fd = open_dir_at(worktrees_fd, name, false, err);
	if (fd < 0)
		return -1;
	/* Held for the removal: a run that starts now waits, then finds
	 * the worktree gone and makes it again. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK
			   ? error_set(err, ERROR_DENIED, "%s is in use by a running sandbox",
				       worktree)
			   : error_errno(err, ERROR_SETUP, errno, "locking %s", worktree);
	int r = io_remove_tree_at(worktrees_fd, name);
	if (r < 0)
		return error_errno(err, ERROR_SETUP, -r, "removing %s", worktree);
	_cleanup_free_ char *repo = xasprintf("%s/repo", shelf_dir);
	const char *prune[] = {"worktree", "prune", NULL};
	if (exists_nofollow(shelf_fd, "repo") &&
	    git_must(envp, repo, "pruning the shelf's worktree list", prune, NULL, err) < 0)
		return -1;
	return remove_idle_shelf(envp, shelf_fd, shelf_dir, force, shelf_removed, unpushed, err);
}

int shelf_remove_if_idle(char *const *envp, const char *shelf_dir, bool force, bool *shelf_removed,
			 bool *unpushed, struct error *err)
{
	*shelf_removed = *unpushed = false;
	_cleanup_close_ int shelf_fd = -1, lock = -1;
	if (open_for_removal(shelf_dir, &shelf_fd, &lock, err) < 0)
		return -1;
	return remove_idle_shelf(envp, shelf_fd, shelf_dir, force, shelf_removed, unpushed, err);
}
