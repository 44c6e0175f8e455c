/* This file decides what @git protects: in every repository whose git
 * directory the sandbox can write to, each file git reads as configuration
 * or runs as code gets a read-only rule, existing or not, and each directory
 * between the writable root and such a file becomes a mount point. It reads
 * git directories and config files, and never changes them. */
#include "policy/preset_git.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "policy/env.h"
#include "git/config.h"
#include "git/repo.h"
#include "base/io.h"
#include "policy/path.h"
#include "policy/pattern.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "base/xalloc.h"

#define CONFIG_READ_MAX (4 * 1024 * 1024)
#define INCLUDE_DEPTH_MAX 10 /* git's own limit */
#define MODULE_DEPTH_MAX 16

/* What git reads in a common directory as configuration, code, or a pointer
 * to another repository (gitrepository-layout(5)). Everything else there
 * (objects, refs, logs, HEAD, index, packed-refs, ...) is data that git
 * must write to commit. objects/info holds alternates: another object store
 * to read from. */
static const char *const common_control[] = {
    "config",	 "config.worktree", "hooks",   "info",
    "commondir", "objects/info",    "remotes", "branches",
};

/* What git reads in a linked worktree's or a submodule's own git directory
 * when it is not the common directory. */
static const char *const private_control[] = {"commondir", "gitdir", "config.worktree"};

static bool starts_entry(const char *rest, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(rest, name, n) && (rest[n] == '\0' || rest[n] == '/');
}

bool preset_git_is_control(const char *rel)
{
	for (const char *p = rel; p;) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 4 && !strncmp(p, ".git", 4) && end) {
			for (size_t i = 0; i < ARRAY_SIZE(common_control); i++)
				if (starts_entry(end + 1, common_control[i]))
					return true;
			for (size_t i = 0; i < ARRAY_SIZE(private_control); i++)
				if (starts_entry(end + 1, private_control[i]))
					return true;
		}
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Config keys (section and variable name, any subsection) whose values git
 * runs as commands. alias.* runs only when it starts with "!"; pager.* and
 * the rest are checked word by word for paths. */
static const struct {
	const char *section, *name;
} command_keys[] = {
    {"core", "fsmonitor"},
    {"core", "editor"},
    {"core", "pager"},
    {"core", "sshcommand"},
    {"core", "askpass"},
    {"core", "gitproxy"},
    {"sequence", "editor"},
    {"diff", "external"},
    {"diff", "command"},
    {"diff", "textconv"},
    {"filter", "clean"},
    {"filter", "smudge"},
    {"filter", "process"},
    {"merge", "driver"},
    {"credential", "helper"},
    {"gpg", "program"},
    {"gpg", "defaultkeycommand"},
    {"interactive", "difffilter"},
    {"mergetool", "cmd"},
    {"difftool", "cmd"},
    {"browser", "cmd"},
    {"man", "cmd"},
    {"remote", "uploadpack"},
    {"remote", "receivepack"},
    {"sendemail", "sendmailcmd"},
    {"sendemail", "tocmd"},
    {"sendemail", "cccmd"},
    {"tar", "command"},
    {"submodule", "update"},
    {"uploadpack", "packobjectshook"},
    {"trailer", "command"},
    {"trailer", "cmd"},
};

struct layout {
	const struct preset_context *ctx;
	struct rule_list *out;
	struct strv writable; /* resolved roots the sandbox can write to */
	struct strv emitted;  /* "ro PATH" and "pin PATH", each emitted once */
	struct strv repos;    /* git directories already handled */
	bool in_module;	      /* handling a submodule's git directory */
};

/* The values that matter in one repository's effective config. */
struct repo_config {
	struct layout *layout;
	const char *git_dir;
	const char *file;     /* the file being read */
	int depth;	      /* include depth */
	struct strv hooks;    /* core.hooksPath values */
	struct strv commands; /* values git runs as commands */
	char *work_tree;      /* core.worktree, resolved against git_dir */
};

static bool is_real_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_regular(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The deepest writable root holding path, or NULL. */
static const char *writable_root(const struct layout *l, const char *path)
{
	const char *best = NULL;
	for (size_t i = 0; i < l->writable.len; i++)
		if (path_is_within(path, l->writable.items[i]) &&
		    (!best || strlen(l->writable.items[i]) > strlen(best)))
			best = l->writable.items[i];
	return best;
}

static bool emit_once(struct layout *l, const char *kind, const char *path)
{
	_cleanup_free_ char *key = xasprintf("%s %s", kind, path);
	if (strv_contains(&l->emitted, key))
		return false;
	strv_push(&l->emitted, key);
	return true;
}

/* Makes each existing directory strictly between the writable root and
 * path a mount point: a read-only mount travels with its parent when the
 * parent is renamed, and the old path is then free for a fake. */
static void pin_ancestors(struct layout *l, const char *path)
{
	const char *root = writable_root(l, path);
	if (!root)
		return;
	_cleanup_free_ char *prefix = xstrdup(path);
	for (size_t i = strlen(root) + 1; prefix[i]; i++) {
		if (prefix[i] != '/')
			continue;
		prefix[i] = '\0';
		/* Beneath a missing directory or a symlink there is nothing
		 * this run can pin. */
		if (!is_real_dir(prefix))
			return;
		if (emit_once(l, "pin", prefix)) {
			_cleanup_free_ char *escaped = pattern_escape(prefix);
			rule_list_add_tightening(l->out, escaped, ACCESS_RW, LAYER_PRESET,
						 "@git (mount point)");
		}
		prefix[i] = '/';
	}
}

/* A directory that must stay where it is, at its parent's access level. */
static void pin(struct layout *l, const char *dir)
{
	const char *root = writable_root(l, dir);
	if (!root || !strcmp(root, dir) || !is_real_dir(dir))
		return;
	_cleanup_free_ char *child = xasprintf("%s/", dir);
	pin_ancestors(l, child);
}

/* A control path: read-only whether or not it exists (a missing one is kept
 * from being created by the guard), with its parents pinned. Only where
 * the sandbox could write it: elsewhere the mounts already hold, and a rule
 * inside an excluded directory would show what it hides. */
static void protect(struct layout *l, const char *path, const char *origin)
{
	const char *root = writable_root(l, path);
	if (!root || !strcmp(root, path))
		return;
	pin_ancestors(l, path);
	if (emit_once(l, "ro", path)) {
		_cleanup_free_ char *escaped = pattern_escape(path);
		rule_list_add_tightening(l->out, escaped, ACCESS_RO, LAYER_PRESET, origin);
	}
}

/* An absolute path from text: "~/" is the home directory, a relative path
 * is taken from base; "." and ".." are folded without following links (the
 * policy resolves them). NULL for "~user" forms. */
static char *absolute_path(const char *text, const char *base, const char *home)
{
	_cleanup_free_ char *joined = NULL;
	if (text[0] == '~') {
		if (text[1] != '\0' && text[1] != '/')
			return NULL;
		if (!home)
			return NULL;
		joined = xasprintf("%s/%s", home, text + 1);
	} else if (text[0] == '/') {
		joined = xstrdup(text);
	} else {
		joined = xasprintf("%s/%s", base, text);
	}
	struct strbuf sb = STRBUF_INIT;
	for (char *save = NULL, *part = strtok_r(joined, "/", &save); part;
	     part = strtok_r(NULL, "/", &save)) {
		if (!strcmp(part, "."))
			continue;
		if (!strcmp(part, "..")) {
			char *slash = sb.len ? strrchr(sb.buf, '/') : NULL;
			strbuf_setlen(&sb, slash ? (size_t)(slash - sb.buf) : 0);
			continue;
		}
		strbuf_addch(&sb, '/');
		strbuf_addstr(&sb, part);
	}
	if (sb.len == 0)
		strbuf_addch(&sb, '/');
	return strbuf_detach(&sb);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash != path ? xstrndup(path, (size_t)(slash - path)) : xstrdup("/");
}

static bool is_command_key(const char *section, size_t section_len, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(command_keys); i++)
		if (strlen(command_keys[i].section) == section_len &&
		    !strncmp(section, command_keys[i].section, section_len) &&
		    !strcmp(name, command_keys[i].name))
			return true;
	return false;
}

static void read_config_file(struct repo_config *rc, const char *file);

static int on_config(const char *key, const char *value, void *data)
{
	struct repo_config *rc = data;
	const char *dot = strchr(key, '.');
	const char *name = strrchr(key, '.') + 1;
	size_t section_len = (size_t)(dot - key);
	if (!value)
		return 0;
	_cleanup_free_ char *included =
	    git_config_include_path(key, value, rc->file, rc->layout->ctx->home);
	if (included) {
		/* Conditions are not evaluated: whichever file git might
		 * include is protected and read. */
		_cleanup_free_ char *path = absolute_path(included, "/", NULL);
		_cleanup_free_ char *origin = xasprintf("@git (included by %s)", rc->file);
		protect(rc->layout, path, origin);
		if (rc->depth < INCLUDE_DEPTH_MAX) {
			const char *outer = rc->file;
			rc->depth++;
			read_config_file(rc, path);
			rc->depth--;
			rc->file = outer;
		}
	} else if (!strcmp(key, "core.hookspath")) {
		strv_push(&rc->hooks, value);
	} else if (!strcmp(key, "core.worktree")) {
		free(rc->work_tree);
		rc->work_tree = absolute_path(value, rc->git_dir, rc->layout->ctx->home);
	} else if (section_len == 5 && !strncmp(key, "alias", 5)) {
		if (value[0] == '!')
			strv_push(&rc->commands, value + 1);
	} else if ((section_len == 5 && !strncmp(key, "pager", 5)) ||
		   is_command_key(key, section_len, name)) {
		strv_push(&rc->commands, value);
	}
	return 0;
}

static void read_config_file(struct repo_config *rc, const char *file)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file(file, CONFIG_READ_MAX, &text, &len) < 0)
		return;
	rc->file = file;
	/* A malformed file stops git too; what came before it is kept. */
	git_config_parse(text, len, on_config, rc);
}

/* Every word of a command that names a path (it holds '/', or starts with
 * '.' or '~') and lies where the sandbox can write is protected: a script
 * rewritten there runs on the host the next time git runs the command. */
static void protect_command_words(struct layout *l, const char *command, const char *base,
				  const char *origin)
{
	_cleanup_free_ char *copy = xstrdup(command);
	for (char *save = NULL, *word = strtok_r(copy, " \t\n;|&()<>'\"`=$", &save); word;
	     word = strtok_r(NULL, " \t\n;|&()<>'\"`=$", &save)) {
		if (!strchr(word, '/') && word[0] != '.' && word[0] != '~')
			continue;
		_cleanup_free_ char *path = absolute_path(word, base, l->ctx->home);
		if (path)
			protect(l, path, origin);
	}
}

/* Reads the config a host git reads in this repository: system, global,
 * the repository's, the worktree's, and their includes. */
static void protect_config_targets(struct layout *l, const char *git_dir, const char *common,
				   const char *work_tree)
{
	struct repo_config rc = {.layout = l, .git_dir = git_dir};
	const struct preset_context *ctx = l->ctx;
	_cleanup_strv_ struct strv files = STRV_INIT;
	git_config_files(ctx->envp, ctx->home, git_dir, common, &files);
	for (size_t i = 0; i < files.len; i++)
		read_config_file(&rc, files.items[i]);

	/* Relative hook paths and commands are taken from the top of the
	 * work tree, where git runs them. */
	const char *top = work_tree ? work_tree : rc.work_tree ? rc.work_tree : git_dir;
	for (size_t i = 0; i < rc.hooks.len; i++) {
		_cleanup_free_ char *path = absolute_path(rc.hooks.items[i], top, ctx->home);
		if (path)
			protect(l, path, "@git (core.hooksPath)");
	}
	for (size_t i = 0; i < rc.commands.len; i++)
		protect_command_words(l, rc.commands.items[i], top,
				      "@git (a command in the git config)");
	strv_release(&rc.hooks);
	strv_release(&rc.commands);
	free(rc.work_tree);
}

static void protect_repo(struct layout *l, const char *git_dir, const char *work_tree);

/* Where a worktree's admin directory says its work tree is: its gitdir file
 * names the worktree's .git file. */
static char *linked_work_tree(const char *admin)
{
	_cleanup_free_ char *gitdir_file = xasprintf("%s/gitdir", admin);
	_cleanup_free_ char *gitfile = git_repo_read_path_file(gitdir_file, NULL, admin);
	return gitfile ? dir_of(gitfile) : NULL;
}

static void protect_worktree(const char *admin, const char *name, void *data)
{
	if (name[0] == '.' || !is_real_dir(admin))
		return;
	_cleanup_free_ char *top = linked_work_tree(admin);
	protect_repo(data, admin, top);
}

/* Submodule git directories live in modules/<name>, where a name may hold
 * slashes; a directory with a HEAD is a git directory, anything else is
 * part of a longer name. */
struct modules_walk {
	struct layout *layout;
	int depth;
};

static void protect_module(const char *path, const char *name, void *data)
{
	struct modules_walk *w = data;
	if (!is_real_dir(path))
		return;
	_cleanup_free_ char *head = xasprintf("%s/HEAD", path);
	if (is_regular(head)) {
		bool was = w->layout->in_module;
		w->layout->in_module = true;
		protect_repo(w->layout, path, NULL);
		w->layout->in_module = was;
	} else if (w->depth < MODULE_DEPTH_MAX) {
		pin(w->layout, path);
		struct modules_walk deeper = {.layout = w->layout, .depth = w->depth + 1};
		io_each_entry(path, protect_module, &deeper);
	}
}

static void protect_modules(struct layout *l, const char *dir)
{
	struct modules_walk w = {.layout = l};
	io_each_entry(dir, protect_module, &w);
}

/* git rewrites a submodule's config (core.worktree) by renaming a new file
 * over it at every `git submodule update`, which a read-only mount refuses:
 * the guard keeps its bytes instead. */
static void pin_config(struct layout *l, const char *path)
{
	const char *root = writable_root(l, path);
	struct stat st;
	if (!root || !strcmp(root, path) || lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return protect(l, path, "@git");
	pin_ancestors(l, path);
	if (emit_once(l, "ro", path)) {
		_cleanup_free_ char *escaped = pattern_escape(path);
		rule_list_add_pinned(l->out, escaped, LAYER_PRESET,
				     "@git (submodule config: git rewrites it, the guard keeps "
				     "its bytes)");
	}
}

static void protect_names(struct layout *l, const char *dir, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, names[i]);
		if (l->in_module && !strcmp(names[i], "config"))
			pin_config(l, path);
		else
			protect(l, path, "@git");
	}
}

static void protect_common(struct layout *l, const char *common)
{
	_cleanup_free_ char *key = xasprintf("common %s", common);
	if (strv_contains(&l->repos, key))
		return;
	strv_push(&l->repos, key);
	pin(l, common);
	protect_names(l, common, common_control, ARRAY_SIZE(common_control));
	/* objects/info must not travel away with a renamed objects. */
	_cleanup_free_ char *objects = xasprintf("%s/objects", common);
	pin(l, objects);
	_cleanup_free_ char *worktrees = xasprintf("%s/worktrees", common);
	io_each_entry(worktrees, protect_worktree, l);
	_cleanup_free_ char *modules = xasprintf("%s/modules", common);
	protect_modules(l, modules);
}

/* One repository: its git directory, its common directory (once), and what
 * their config names. work_tree may be NULL when unknown. */
static void protect_repo(struct layout *l, const char *git_dir, const char *work_tree)
{
	_cleanup_free_ char *g = NULL;
	if (path_resolve(git_dir, &g, NULL, NULL) < 0 || strv_contains(&l->repos, g))
		return;
	strv_push(&l->repos, g);
	_cleanup_free_ char *commondir_file = xasprintf("%s/commondir", g);
	_cleanup_free_ char *common = git_repo_read_path_file(commondir_file, NULL, g);
	if (!common)
		common = xstrdup(g);
	if (strcmp(g, common) != 0) {
		pin(l, g);
		protect_names(l, g, private_control, ARRAY_SIZE(private_control));
		_cleanup_free_ char *modules = xasprintf("%s/modules", g);
		protect_modules(l, modules);
	}
	protect_common(l, common);
	protect_config_targets(l, g, common, work_tree);
}

/* A .git entry found under the working directory: a nested repository (a
 * directory) or a submodule's or linked worktree's gitfile. git follows a
 * symlink there, and so do we. */
static void protect_git_entry(struct layout *l, const char *entry)
{
	_cleanup_free_ char *top = dir_of(entry);
	struct stat st;
	if (stat(entry, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		protect_repo(l, entry, top);
	} else if (S_ISREG(st.st_mode)) {
		/* Rewritten, it would point git at a repository of the
		 * agent's making. */
		protect(l, entry, "@git");
		_cleanup_free_ char *git_dir = git_repo_read_path_file(entry, "gitdir: ", top);
		if (git_dir)
			protect_repo(l, git_dir, top);
	}
	/* The work tree holding it must not be renamed away either. */
	pin(l, top);
}

static void add_literal(struct rule_list *out, const char *path, enum access_level level,
			const char *origin)
{
	_cleanup_free_ char *escaped = pattern_escape(path);
	rule_list_add(out, escaped, level, LAYER_PRESET, origin);
}

struct branches_walk {
	struct rule_list *out;
	const char *prefix;  /* the ref name so far, "" or "feature/" */
	const char *current; /* the checked-out branch, or NULL */
	int depth;
};

/* Makes every branch ref read-only except the checked-out one, so that an
 * agent can commit on its branch but not move anybody else's. */
static void protect_other_branch(const char *path, const char *entry, void *data)
{
	const struct branches_walk *w = data;
	_cleanup_free_ char *name = xasprintf("%s%s", w->prefix, entry);
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		_cleanup_free_ char *sub = xasprintf("%s/", name);
		struct branches_walk deeper = {w->out, sub, w->current, w->depth + 1};
		if (deeper.depth <= 16)
			io_each_entry(path, protect_other_branch, &deeper);
	} else if (!w->current || strcmp(name, w->current) != 0) {
		add_literal(w->out, path, ACCESS_RO, "@git-strict");
	}
}

static void expand_strict(const struct git_repo *g, struct rule_list *out)
{
	_cleanup_free_ char *tags = xasprintf("%s/refs/tags", g->common);
	_cleanup_free_ char *packed = xasprintf("%s/packed-refs", g->common);
	_cleanup_free_ char *heads = xasprintf("%s/refs/heads", g->common);
	_cleanup_free_ char *head_file = xasprintf("%s/HEAD", g->git_dir);
	add_literal(out, tags, ACCESS_RO, "@git-strict");
	add_literal(out, packed, ACCESS_RO, "@git-strict");

	_cleanup_free_ char *head = NULL;
	size_t len = 0;
	const char *current = NULL;
	if (read_file(head_file, 4096, &head, &len) == 0) {
		head[strcspn(head, "\r\n")] = '\0';
		if (!strncmp(head, "ref: refs/heads/", 16))
			current = head + 16;
	}
	struct branches_walk w = {.out = out, .prefix = "", .current = current};
	io_each_entry(heads, protect_other_branch, &w);
}

static bool is_hex(const char *s, size_t min)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n >= min && !s[n];
}

/* A loose object of the host: read-only, so that it cannot be rewritten,
 * removed or renamed over. Its directory is not pinned: git moves a
 * pushed object into it from its quarantine directory with link(2),
 * which a mount between the two refuses. */
static void protect_loose_object(const char *path, const char *name, void *data)
{
	struct layout *l = data;
	if (is_hex(name, 38) && emit_once(l, "ro", path)) {
		_cleanup_free_ char *escaped = pattern_escape(path);
		rule_list_add_tightening(l->out, escaped, ACCESS_RO, LAYER_PRESET,
					 "branch mode (an object of the host repository)");
	}
}

static void protect_loose_objects(const char *path, const char *name, void *data)
{
	if (strlen(name) == 2 && is_hex(name, 2) && is_real_dir(path))
		io_each_entry(path, protect_loose_object, data);
}

/* git takes an object's file to hold what its name says and looks in the
 * packs before the loose objects: an object file replaced, or a pack added
 * that holds other content under an existing object's name, changes what
 * the host's commits contain, and the user's next checkout or reset
 * writes it into the checkout. So `git push host` adds loose objects only
 * (the shelf's remote tells git to unpack what it receives): the existing
 * ones are read-only, and so are the packs. */
static void protect_host_objects(struct layout *l, const char *objects)
{
	_cleanup_free_ char *pack = xasprintf("%s/pack", objects);
	protect(l, pack, "branch mode (the host repository's packs)");
	io_each_entry(objects, protect_loose_objects, l);
}

/* Branch mode: `git push host NAME` from the shelf writes the host
 * repository's objects, branches and their reflogs, and nothing else there. Its
 * control files are protected as a project's are; so are the refs of the
 * branches its worktrees have checked out, which git's own refusal covers
 * for git only, not for a write of the ref file. */
static void open_host_repo(struct layout *l, const char *git_dir, const char *top)
{
	/* Branches only: the rest of refs/ and logs/ is what the user's
	 * git trusts to be theirs: refs/stash and its reflog (`git stash
	 * pop` writes the checkout), tags, remote-tracking branches (a
	 * merge or rebase onto origin/main), notes. */
	static const char *const data[] = {"objects", "refs/heads", "logs/refs/heads"};
	for (size_t i = 0; i < ARRAY_SIZE(data); i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", git_dir, data[i]);
		if (!is_real_dir(path))
			continue;
		add_literal(l->out, path, ACCESS_RW,
			    "branch mode (the host repository, for git push host)");
		strv_push(&l->writable, path);
		if (!strcmp(data[i], "objects"))
			protect_host_objects(l, path);
	}
	_cleanup_strv_ struct strv heads = STRV_INIT;
	strv_pushf(&heads, "%s/HEAD", git_dir);
	_cleanup_free_ char *admins = xasprintf("%s/worktrees", git_dir);
	DIR *d = opendir(admins);
	for (struct dirent *de; d && (de = readdir(d));)
		if (de->d_name[0] != '.')
			strv_pushf(&heads, "%s/%s/HEAD", admins, de->d_name);
	if (d)
		closedir(d);
	for (size_t i = 0; i < heads.len; i++) {
		_cleanup_free_ char *head = NULL;
		size_t len = 0;
		if (read_file(heads.items[i], 4096, &head, &len) < 0)
			continue;
		head[strcspn(head, "\r\n")] = '\0';
		if (strncmp(head, "ref: refs/", 10) != 0 || strstr(head, ".."))
			continue;
		_cleanup_free_ char *ref = xasprintf("%s/%s", git_dir, head + 5);
		protect(l, ref, "branch mode (a branch the host has checked out)");
	}
	/* A replace ref makes the host's git show other content for a
	 * commit of the user's. */
	_cleanup_free_ char *replace = xasprintf("%s/refs/replace", git_dir);
	protect(l, replace, "branch mode (replace refs rewrite what the host's git shows)");
	protect_repo(l, git_dir, top);
}

void preset_git_expand(bool strict, const struct preset_context *ctx, struct rule_list *out)
{
	struct layout l = {.ctx = ctx, .out = out};
	/* From / nothing is writable (@base adds no working directory rule). */
	if (strcmp(ctx->cwd, "/") != 0)
		strv_push(&l.writable, ctx->cwd);

	struct git_repo g = {0};
	if (git_repo_find(ctx->cwd, &g)) {
		if (strcmp(g.git_dir, g.common) != 0 && !path_is_within(g.common, ctx->cwd) &&
		    l.writable.len) {
			/* A linked worktree keeps its objects and refs in the
			 * main repository, which git must be able to write to
			 * commit; its control files are protected like ours. */
			add_literal(out, g.common, ACCESS_RW,
				    "@git (the repository of this linked worktree)");
			strv_push(&l.writable, g.common);
		}
		if (strcmp(g.git_dir, g.common) != 0) {
			_cleanup_free_ char *gitfile = xasprintf("%s/.git", g.toplevel);
			protect(&l, gitfile, "@git");
		}
		protect_repo(&l, g.git_dir, g.toplevel);
		_cleanup_free_ char *precommit =
		    xasprintf("%s/.pre-commit-config.yaml", g.toplevel);
		add_literal(out, precommit, ACCESS_RO, "@git");
		/* In branch mode the repository is the shelf's, shared by
		 * every branch sandbox of the host repository: one must not
		 * move the branch another works on, whose next commit and
		 * push would then carry its commits. */
		if (strict || ctx->branch_host_git)
			expand_strict(&g, out);
	}
	for (size_t i = 0; ctx->git_entries && i < ctx->git_entries->len; i++)
		protect_git_entry(&l, ctx->git_entries->items[i]);
	if (ctx->branch_host_git && l.writable.len)
		open_host_repo(&l, ctx->branch_host_git, ctx->branch_host_top);

	git_repo_release(&g);
	strv_release(&l.writable);
	strv_release(&l.emitted);
	strv_release(&l.repos);
}
