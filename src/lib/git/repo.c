/* This file finds git repositories the way git does (see git_repo.h). It
 * only reads: .git entries, gitfiles and commondir files. */
#include "git/repo.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "policy/path.h"
#include "base/xalloc.h"

char *git_repo_read_path_file(const char *file, const char *prefix, const char *base)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file(file, 4096, &text, &len) < 0)
		return NULL;
	text[strcspn(text, "\r\n")] = '\0';
	const char *value = text;
	if (prefix) {
		size_t n = strlen(prefix);
		if (strncmp(text, prefix, n) != 0)
			return NULL;
		value += n;
	}
	return git_repo_pointer_target(value, base);
}

char *git_repo_pointer_target(const char *value, const char *base)
{
	if (!*value)
		return NULL;
	_cleanup_free_ char *joined =
	    value[0] == '/' ? xstrdup(value) : xasprintf("%s/%s", base, value);
	char *resolved = NULL;
	if (path_resolve(joined, &resolved, NULL, NULL) < 0)
		return NULL;
	return resolved;
}

void git_repo_release(struct git_repo *r)
{
	free(r->toplevel);
	free(r->git_dir);
	free(r->common);
	*r = (struct git_repo){0};
}

bool git_repo_find(const char *dir_in, struct git_repo *g)
{
	*g = (struct git_repo){0};
	_cleanup_free_ char *dir = xstrdup(dir_in);
	for (;;) {
		_cleanup_free_ char *dotgit = xasprintf("%s/.git", strcmp(dir, "/") ? dir : "");
		struct stat st;
		if (stat(dotgit, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				g->git_dir = steal_ptr(&dotgit);
			} else if (S_ISREG(st.st_mode)) {
				g->git_dir = git_repo_read_path_file(dotgit, "gitdir: ", dir);
				if (!g->git_dir)
					return false;
			} else {
				return false;
			}
			_cleanup_free_ char *commondir_file = xasprintf("%s/commondir", g->git_dir);
			g->common = git_repo_read_path_file(commondir_file, NULL, g->git_dir);
			if (!g->common)
				g->common = xstrdup(g->git_dir);
			g->toplevel = steal_ptr(&dir);
			return true;
		}
		if (!strcmp(dir, "/"))
			return false;
		char *slash = strrchr(dir, '/');
		slash[slash == dir ? 1 : 0] = '\0';
	}
}
