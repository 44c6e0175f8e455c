/* Unit tests for the executor API's file methods on real directories: a
 * workspace planned like a session's (secrets masked, a read-only rule, a
 * repository's control files), every escape a hostile workspace can set up,
 * round trips, atomic writes, and a symlink swap racing writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>

#include "base/base64.h"
#include "base/cleanup.h"
#include "base/xalloc.h"
#include "serve/fs.h"
#include "spec/spec.h"
#include "unit.h"

#define OUTSIDE_TEXT "outside, never to change\n"
#define INSIDE "/workspace"

struct fixture {
	char *dir, *proj, *outside;
	char *env_home, *env_xdg, *env_state, *env_path;
	char *envp[5];
	struct rule_list rules;
	struct sandbox_spec spec;
	struct serve_fs_root root;
};

/* A workspace with a masked .env, a read-only docs/, a repository, and
 * symlinks that lead out of it every way there is; beside it, outside/. */
static int fixture_setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	f->dir = unit_tmpdir("serve-fs");
	const char *d = f->dir;
	unit_mkdir(d, "home");
	unit_mkdir(d, "outside");
	unit_write(d, "outside/secret.txt", OUTSIDE_TEXT);
	unit_mkdir(d, "proj");
	unit_write(d, "proj/a.txt", "hello\n");
	unit_write(d, "proj/.env", "TOKEN=hunter2\n");
	unit_mkdir(d, "proj/docs");
	unit_write(d, "proj/docs/readme", "read me\n");
	unit_mkdir(d, "proj/src");
	unit_write(d, "proj/src/main.c", "int main(void) { return 0; }\n");
	unit_mkdir(d, "proj/.git");
	unit_mkdir(d, "proj/.git/hooks");
	unit_write(d, "proj/.git/HEAD", "ref: refs/heads/main\n");
	unit_write(d, "proj/.git/config", "[core]\n");
	f->outside = unit_path(d, "outside");
	unit_symlink(f->outside, d, "proj/abs_dir_link");
	unit_symlink("../outside/secret.txt", d, "proj/out_file_link");
	unit_symlink("../outside", d, "proj/out_dir_link");
	unit_symlink("/etc/passwd", d, "proj/abs_link");
	unit_symlink("chain2", d, "proj/chain1");
	unit_symlink("../outside/secret.txt", d, "proj/chain2");
	unit_symlink("/proc/self/root/etc/passwd", d, "proj/proc_link");
	unit_symlink("/proc/self/root", d, "proj/proc_root");
	unit_symlink("a.txt", d, "proj/in_link");
	unit_symlink(".env", d, "proj/env_link");
	unit_symlink("src", d, "proj/src_link");
	f->proj = unit_path(d, "proj");

	f->env_home = xasprintf("HOME=%s/home", d);
	f->env_xdg = xasprintf("XDG_CONFIG_HOME=%s/xdg", d);
	f->env_state = xasprintf("XDG_STATE_HOME=%s/state", d);
	f->env_path = xstrdup("PATH=/usr/bin:/bin");
	f->envp[0] = f->env_home;
	f->envp[1] = f->env_xdg;
	f->envp[2] = f->env_state;
	f->envp[3] = f->env_path;
	f->envp[4] = NULL;
	rule_list_add(&f->rules, "docs", ACCESS_RO, LAYER_CLI, "--ro");
	static char *const command[] = {"true", NULL};
	struct sandbox_request req = {
	    .cwd = f->proj,
	    .envp = f->envp,
	    .rules = &f->rules,
	    .network = REQUEST_UNSET,
	    .docker = REQUEST_UNSET,
	    .read_only = REQUEST_UNSET,
	    .command = command,
	};
	_cleanup_error_ struct error err = ERROR_INIT;
	if (sandbox_plan(&req, &f->spec, &err) < 0)
		unit_fail("sandbox_plan: %s", err.msg);
	int fd = open(f->proj, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		unit_fail("open %s: %s", f->proj, strerror(errno));
	f->root = (struct serve_fs_root){
	    .dir_fd = fd, .host_path = f->proj, .inside_path = INSIDE, .spec = &f->spec};
	*state = f;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *f = *state;
	close(f->root.dir_fd);
	sandbox_spec_release(&f->spec);
	rule_list_release(&f->rules);
	unit_rmtree(f->dir);
	free(f->dir);
	free(f->proj);
	free(f->outside);
	free(f->env_home);
	free(f->env_xdg);
	free(f->env_state);
	free(f->env_path);
	free(f);
	return 0;
}

#define fs_test(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

/* Calls method with params given as JSON text; returns the error kind
 * (ERROR_NONE on success) and the result in *result when asked. */
static enum error_kind call(struct fixture *f, const char *method, const char *json,
			    struct json_object **result, char **msg)
{
	struct json_object *params = json_tokener_parse(json);
	if (!params)
		unit_fail("bad test JSON: %s", json);
	struct json_object *res = NULL;
	_cleanup_error_ struct error err = ERROR_INIT;
	int r = serve_fs_call(&f->root, method, params, &res, &err);
	json_object_put(params);
	if (r == 0 && err.kind != ERROR_NONE)
		unit_fail("%s %s: success with an error set", method, json);
	if (r < 0 && (res || !err.msg))
		unit_fail("%s %s: failure without a message or with a result", method, json);
	if (msg)
		*msg = err.msg ? xstrdup(err.msg) : NULL;
	if (result)
		*result = res;
	else if (res)
		json_object_put(res);
	return r == 0 ? ERROR_NONE : err.kind;
}

static char *read_text(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = unit_path(dir, rel);
	FILE *fp = fopen(p, "r");
	if (!fp)
		return NULL;
	char *buf = xcalloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void assert_outside_unchanged(struct fixture *f, const char *what)
{
	_cleanup_free_ char *text = read_text(f->dir, "outside/secret.txt");
	if (!text || strcmp(text, OUTSIDE_TEXT))
		unit_fail("%s: outside/secret.txt changed", what);
	DIR *d = opendir(f->outside);
	assert_non_null(d);
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n++;
	closedir(d);
	if (n != 3)
		unit_fail("%s: something appeared in outside/ (%zu entries)", what, n);
}

static const struct {
	const char *method, *params;
	enum error_kind kind;
	/* Refused by confinement alone, with no policy at all. */
	bool escape;
} cases[] = {
    /* Escapes: denied, whatever the spelling. */
    {"fs/read", "{\"path\": \"../outside/secret.txt\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"src/../../outside/secret.txt\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"/etc/passwd\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"/workspacex/a.txt\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"/workspace/../etc/passwd\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"out_file_link\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"out_dir_link/secret.txt\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"abs_dir_link/secret.txt\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"abs_link\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"chain1\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"proc_link\"}", ERROR_DENIED, true},
    {"fs/read", "{\"path\": \"proc_root/etc/passwd\"}", ERROR_DENIED, true},
    {"fs/list", "{\"path\": \"out_dir_link\"}", ERROR_DENIED, true},
    {"fs/list", "{\"path\": \"proc_root\"}", ERROR_DENIED, true},
    {"fs/list", "{\"path\": \"..\"}", ERROR_DENIED, true},
    {"fs/stat", "{\"path\": \"out_dir_link/secret.txt\"}", ERROR_DENIED, true},
    {"fs/write", "{\"path\": \"out_dir_link/new\", \"dataBase64\": \"eA==\"}", ERROR_DENIED, true},
    {"fs/write", "{\"path\": \"abs_dir_link/new\", \"dataBase64\": \"eA==\"}", ERROR_DENIED, true},
    {"fs/write", "{\"path\": \"../outside/new\", \"dataBase64\": \"eA==\"}", ERROR_DENIED, true},
    {"fs/write",
     "{\"path\": \"out_dir_link/x/y\", \"dataBase64\": \"eA==\", \"createParents\": true}",
     ERROR_DENIED, true},
    {"fs/mkdir", "{\"path\": \"out_dir_link/newdir\"}", ERROR_DENIED, true},
    {"fs/mkdir", "{\"path\": \"out_dir_link/a/b\", \"parents\": true}", ERROR_DENIED, true},
    {"fs/remove", "{\"path\": \"out_dir_link/secret.txt\"}", ERROR_DENIED, true},
    {"fs/remove", "{\"path\": \"\", \"recursive\": true}", ERROR_DENIED, true},
    {"fs/remove", "{\"path\": \"/workspace\", \"recursive\": true}", ERROR_DENIED, true},
    /* The session's policy: masked secrets, read-only paths, git's
     * control files. */
    {"fs/read", "{\"path\": \".env\"}", ERROR_DENIED, false},
    {"fs/read", "{\"path\": \"/workspace/.env\"}", ERROR_DENIED, false},
    {"fs/read", "{\"path\": \"env_link\"}", ERROR_DENIED, false},
    {"fs/write", "{\"path\": \".env\", \"dataBase64\": \"eA==\"}", ERROR_DENIED, false},
    {"fs/remove", "{\"path\": \".env\"}", ERROR_DENIED, false},
    {"fs/write", "{\"path\": \"docs/readme\", \"dataBase64\": \"eA==\"}", ERROR_DENIED, false},
    {"fs/write", "{\"path\": \"docs/new\", \"dataBase64\": \"eA==\"}", ERROR_DENIED, false},
    {"fs/mkdir", "{\"path\": \"docs/sub\"}", ERROR_DENIED, false},
    {"fs/remove", "{\"path\": \"docs/readme\"}", ERROR_DENIED, false},
    {"fs/remove", "{\"path\": \"docs\", \"recursive\": true}", ERROR_DENIED, false},
    {"fs/write", "{\"path\": \".git/hooks/pre-commit\", \"dataBase64\": \"eA==\"}", ERROR_DENIED,
     false},
    {"fs/write", "{\"path\": \".git/config\", \"dataBase64\": \"eA==\"}", ERROR_DENIED, false},
    {"fs/remove", "{\"path\": \".git\", \"recursive\": true}", ERROR_DENIED, false},
    /* git's control files in a repository the plan did not see. */
    {"fs/write",
     "{\"path\": \"new/.git/hooks/pre-commit\", \"dataBase64\": \"eA==\", "
     "\"createParents\": true}",
     ERROR_DENIED, true},
    {"fs/write", "{\"path\": \"sub/.git\", \"dataBase64\": \"eA==\", \"createParents\": true}",
     ERROR_DENIED, true},
    {"fs/mkdir", "{\"path\": \"new2/.git/hooks\", \"parents\": true}", ERROR_DENIED, true},
    {"fs/write",
     "{\"path\": \"new3/.git/objects/info/alternates\", \"dataBase64\": \"eA==\", "
     "\"createParents\": true}",
     ERROR_DENIED, true},
    {"fs/write",
     "{\"path\": \"new4/.git/HEAD\", \"dataBase64\": \"eA==\", \"createParents\": true}",
     ERROR_NONE, false},
    /* The project's own config (@base's ".agent-sandbox*"), absent. */
    {"fs/write", "{\"path\": \".agent-sandbox.jsonc\", \"dataBase64\": \"e30=\"}", ERROR_DENIED,
     false},
    {"fs/remove", "{\"path\": \".git/hooks\", \"recursive\": true}", ERROR_DENIED, false},
    /* Allowed: inside, relative or absolute, through inside symlinks. */
    {"fs/read", "{\"path\": \"a.txt\"}", ERROR_NONE, false},
    {"fs/read", "{\"path\": \"/workspace/a.txt\"}", ERROR_NONE, false},
    {"fs/read", "{\"path\": \"./src/../a.txt\"}", ERROR_DENIED, false},
    {"fs/read", "{\"path\": \"in_link\"}", ERROR_NONE, false},
    {"fs/read", "{\"path\": \"src_link/main.c\"}", ERROR_NONE, false},
    {"fs/read", "{\"path\": \"docs/readme\"}", ERROR_NONE, false},
    {"fs/stat", "{\"path\": \"out_file_link\"}", ERROR_NONE, false},
    {"fs/stat", "{\"path\": \"\"}", ERROR_NONE, false},
    {"fs/list", "{\"path\": \"/workspace\"}", ERROR_NONE, false},
    /* Params. */
    {"fs/read", "{}", ERROR_USAGE, false},
    {"fs/read", "{\"path\": 7}", ERROR_USAGE, false},
    {"fs/read", "{\"path\": \"src\"}", ERROR_USAGE, false},
    {"fs/read", "{\"path\": \"a.txt\", \"offset\": -1}", ERROR_USAGE, false},
    {"fs/read", "{\"path\": \"a.txt\", \"length\": 8388609}", ERROR_LIMIT, false},
    {"fs/read", "{\"path\": \"missing\"}", ERROR_NOT_FOUND, false},
    {"fs/stat", "{\"path\": \"missing/deeper\"}", ERROR_NOT_FOUND, false},
    {"fs/write", "{\"path\": \"n\", \"dataBase64\": \"eA=\"}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"n\", \"dataBase64\": \"e A==\"}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"n\"}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"n\", \"dataBase64\": \"\", \"mode\": \"4755\"}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"n\", \"dataBase64\": \"\", \"mode\": 2048}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"n\", \"dataBase64\": \"\", \"mode\": \"rw\"}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"\", \"dataBase64\": \"\"}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"src\", \"dataBase64\": \"\"}", ERROR_USAGE, false},
    {"fs/write", "{\"path\": \"no/such/dir/f\", \"dataBase64\": \"\"}", ERROR_NOT_FOUND, false},
    {"fs/remove", "{\"path\": \"src\"}", ERROR_USAGE, false},
    {"fs/remove", "{\"path\": \"missing\"}", ERROR_NOT_FOUND, false},
    {"fs/list", "{\"path\": \"\", \"depth\": 9}", ERROR_USAGE, false},
    {"fs/mkdir", "{\"path\": \"src\"}", ERROR_USAGE, false},
    {"fs/nothing", "{\"path\": \"\"}", ERROR_USAGE, false},
};

static void fs_methods_answer_each_case_as_the_table_says(void **state)
{
	struct fixture *f = *state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *msg = NULL;
		enum error_kind k = call(f, cases[i].method, cases[i].params, NULL, &msg);
		if (k != cases[i].kind)
			unit_fail("case %zu %s %s: got %s (%s), want %s", i, cases[i].method,
				  cases[i].params, error_kind_name(k), msg ? msg : "",
				  error_kind_name(cases[i].kind));
		assert_outside_unchanged(f, cases[i].params);
	}
	/* Confinement holds without the policy's help (which hides /tmp and
	 * keeps the host read-only, and so would refuse most escapes too). */
	f->root.spec = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!cases[i].escape)
			continue;
		_cleanup_free_ char *msg = NULL;
		enum error_kind k = call(f, cases[i].method, cases[i].params, NULL, &msg);
		if (k != ERROR_DENIED)
			unit_fail("case %zu %s %s without a policy: got %s (%s)", i,
				  cases[i].method, cases[i].params, error_kind_name(k),
				  msg ? msg : "");
		assert_outside_unchanged(f, cases[i].params);
	}
	f->root.spec = &f->spec;
	/* Nothing the refused calls named was made. */
	struct stat st;
	_cleanup_free_ char *docs_new = unit_path(f->proj, "docs/new");
	_cleanup_free_ char *hook = unit_path(f->proj, ".git/hooks/pre-commit");
	assert_int_equal(lstat(docs_new, &st), -1);
	assert_int_equal(lstat(hook, &st), -1);
	_cleanup_free_ char *env = read_text(f->proj, ".env");
	assert_string_equal(env, "TOKEN=hunter2\n");
}

static char *result_string(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		unit_fail("no %s in %s", key, json_object_to_json_string(o));
	return xstrdup(json_object_get_string(v));
}

static int64_t result_int(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		unit_fail("no %s in %s", key, json_object_to_json_string(o));
	return json_object_get_int64(v);
}

/* fs/read with params answers data (base64), the file's size and eof. */
static void assert_read(struct fixture *f, const char *params, const char *data, int64_t size,
			bool eof)
{
	struct json_object *res;
	enum error_kind k = call(f, "fs/read", params, &res, NULL);
	if (k != ERROR_NONE)
		unit_fail("fs/read %s: %s", params, error_kind_name(k));
	_cleanup_free_ char *got = result_string(res, "dataBase64");
	assert_string_equal(got, data);
	assert_int_equal(result_int(res, "size"), size);
	assert_int_equal(json_object_get_boolean(json_object_object_get(res, "eof")), eof);
	json_object_put(res);
}

static void fs_write_then_read_round_trips_bytes_and_mode(void **state)
{
	struct fixture *f = *state;
	/* Every byte value, NUL included. */
	unsigned char bytes[256];
	for (int i = 0; i < 256; i++)
		bytes[i] = (unsigned char)i;
	_cleanup_free_ char *enc = base64_encode(bytes, sizeof(bytes), NULL);
	_cleanup_free_ char *params = xasprintf(
	    "{\"path\": \"/workspace/new/deep/f.bin\", \"dataBase64\": \"%s\", \"mode\": \"0600\", "
	    "\"createParents\": true}",
	    enc);
	struct json_object *res;
	assert_int_equal(call(f, "fs/write", params, &res, NULL), ERROR_NONE);
	assert_int_equal(result_int(res, "size"), 256);
	json_object_put(res);

	assert_read(f, "{\"path\": \"new/deep/f.bin\"}", enc, 256, true);

	assert_int_equal(call(f, "fs/stat", "{\"path\": \"new/deep/f.bin\"}", &res, NULL),
			 ERROR_NONE);
	_cleanup_free_ char *mode = result_string(res, "mode");
	_cleanup_free_ char *type = result_string(res, "type");
	_cleanup_free_ char *mtime = result_string(res, "modifiedAt");
	assert_string_equal(mode, "0600");
	assert_string_equal(type, "file");
	assert_int_equal(strlen(mtime), strlen("2026-01-01T00:00:00.000Z"));
	assert_int_equal(mtime[strlen(mtime) - 1], 'Z');
	json_object_put(res);

	/* The directories made are 0755, whatever the umask. */
	struct stat st;
	_cleanup_free_ char *deep = unit_path(f->proj, "new/deep");
	assert_int_equal(stat(deep, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* No temporary file stays behind. */
	assert_int_equal(call(f, "fs/list", "{\"path\": \"new/deep\"}", &res, NULL), ERROR_NONE);
	assert_int_equal(json_object_array_length(json_object_object_get(res, "entries")), 1);
	json_object_put(res);
}

static void fs_read_honours_offset_and_length(void **state)
{
	struct fixture *f = *state;
	assert_read(f, "{\"path\": \"a.txt\", \"offset\": 1, \"length\": 3}", "ZWxs" /* ell */, 6,
		    false);
	assert_read(f, "{\"path\": \"a.txt\", \"offset\": 3}", "bG8K" /* lo\n */, 6, true);
	assert_read(f, "{\"path\": \"a.txt\", \"offset\": 100}", "", 6, true);
}

static struct json_object *entry_named(struct json_object *entries, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(entries); i++) {
		struct json_object *e = json_object_array_get_idx(entries, i);
		if (!strcmp(json_object_get_string(json_object_object_get(e, "name")), name))
			return e;
	}
	return NULL;
}

static void fs_list_shows_masked_files_empty_and_never_descends_through_symlinks(void **state)
{
	struct fixture *f = *state;
	struct json_object *res;
	assert_int_equal(call(f, "fs/list", "{\"path\": \"\", \"depth\": 3}", &res, NULL),
			 ERROR_NONE);
	struct json_object *entries = json_object_object_get(res, "entries");
	struct json_object *env = entry_named(entries, ".env");
	assert_non_null(env);
	assert_int_equal(result_int(env, "size"), 0);
	assert_true(json_object_get_boolean(json_object_object_get(env, "masked")));
	assert_non_null(entry_named(entries, "src/main.c"));
	struct json_object *link = entry_named(entries, "out_dir_link");
	assert_non_null(link);
	_cleanup_free_ char *type = result_string(link, "type");
	_cleanup_free_ char *target = result_string(link, "symlinkTarget");
	assert_string_equal(type, "symlink");
	assert_string_equal(target, "../outside");
	assert_null(entry_named(entries, "out_dir_link/secret.txt"));
	assert_null(entry_named(entries, "src_link/main.c"));
	assert_null(json_object_object_get(res, "truncated"));
	json_object_put(res);
}

static void fs_write_replaces_a_symlink_instead_of_following_it(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(call(f, "fs/write",
			      "{\"path\": \"out_file_link\", \"dataBase64\": \"eA==\"}", NULL,
			      NULL),
			 ERROR_NONE);
	assert_outside_unchanged(f, "write over a symlink");
	struct stat st;
	_cleanup_free_ char *p = unit_path(f->proj, "out_file_link");
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void fs_remove_and_mkdir_work_beneath_the_workspace(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(
	    call(f, "fs/mkdir", "{\"path\": \"t/u/v\", \"parents\": true}", NULL, NULL),
	    ERROR_NONE);
	assert_int_equal(
	    call(f, "fs/mkdir", "{\"path\": \"t/u/v\", \"parents\": true}", NULL, NULL),
	    ERROR_NONE);
	assert_int_equal(call(f, "fs/mkdir", "{\"path\": \"t/u/v\"}", NULL, NULL), ERROR_USAGE);
	unit_write(f->proj, "t/u/v/file", "x");
	/* A symlink inside the tree is removed, not followed. */
	unit_symlink(f->outside, f->proj, "t/u/out");
	assert_int_equal(call(f, "fs/remove", "{\"path\": \"t\"}", NULL, NULL), ERROR_USAGE);
	assert_int_equal(call(f, "fs/remove", "{\"path\": \"t\", \"recursive\": true}", NULL, NULL),
			 ERROR_NONE);
	assert_outside_unchanged(f, "recursive remove");
	struct stat st;
	_cleanup_free_ char *t = unit_path(f->proj, "t");
	assert_int_equal(lstat(t, &st), -1);
	/* A secret under a tree keeps the tree. */
	unit_mkdir(f->proj, "cfg");
	unit_write(f->proj, "cfg/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
	assert_int_equal(
	    call(f, "fs/remove", "{\"path\": \"cfg\", \"recursive\": true}", NULL, NULL),
	    ERROR_DENIED);
	_cleanup_free_ char *key = unit_path(f->proj, "cfg/id_rsa");
	assert_int_equal(lstat(key, &st), 0);
}

/* A reader of the target never sees a part of a write. */
struct reader {
	const char *path;
	volatile bool stop;
	size_t torn, reads;
};

#define BIG (1 << 20)

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	char *buf = xmalloc(BIG + 1);
	while (!r->stop) {
		int fd = open(r->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		size_t got = 0;
		ssize_t n;
		while ((n = read(fd, buf + got, BIG + 1 - got)) > 0)
			got += (size_t)n;
		close(fd);
		r->reads++;
		bool same = got == BIG;
		for (size_t i = 1; same && i < got; i++)
			same = buf[i] == buf[0];
		if (!same)
			r->torn++;
	}
	free(buf);
	return NULL;
}

static void fs_write_is_atomic_for_a_concurrent_reader(void **state)
{
	struct fixture *f = *state;
	char *raw = xmalloc(BIG);
	char *params[2];
	for (int k = 0; k < 2; k++) {
		memset(raw, k ? 'b' : 'a', BIG);
		_cleanup_free_ char *enc = base64_encode(raw, BIG, NULL);
		params[k] = xasprintf("{\"path\": \"big\", \"dataBase64\": \"%s\"}", enc);
	}
	free(raw);
	assert_int_equal(call(f, "fs/write", params[0], NULL, NULL), ERROR_NONE);
	struct reader r = {.path = unit_path(f->proj, "big")};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, read_loop, &r), 0);
	for (int i = 0; i < 40; i++)
		assert_int_equal(call(f, "fs/write", params[i % 2], NULL, NULL), ERROR_NONE);
	r.stop = true;
	pthread_join(th, NULL);
	assert_true(r.reads > 0);
	assert_int_equal(r.torn, 0);
	free((char *)r.path);
	free(params[0]);
	free(params[1]);
}

/* What a hostile process in the workspace does in a loop: exchange a
 * directory the writes go into with a symlink to outside (relative,
 * absolute, through /proc), atomically, and back. */
static void swap_loop(const char *proj, const char *outside)
{
	_cleanup_free_ char *d = unit_path(proj, "d");
	_cleanup_free_ char *proc = xasprintf("/proc/self/root%s", outside);
	const char *targets[] = {"../outside", outside, proc};
	char *links[3];
	for (int k = 0; k < 3; k++) {
		links[k] = xasprintf("%s/d.link%d", proj, k);
		if (symlink(targets[k], links[k]) < 0)
			_exit(1);
	}
	for (unsigned i = 0;; i++) {
		const char *l = links[i % 3];
		if (renameat2(AT_FDCWD, d, AT_FDCWD, l, RENAME_EXCHANGE) < 0)
			_exit(1);
		for (volatile int spin = 0; spin < 20000; spin++)
			;
		if (renameat2(AT_FDCWD, d, AT_FDCWD, l, RENAME_EXCHANGE) < 0)
			_exit(1);
		for (volatile int spin = 0; spin < 20000; spin++)
			;
	}
}

/* Writes into d while swap_loop runs, until both outcomes were seen often
 * (the race is real), within a bound. */
static void race_writes(struct fixture *f, const struct sandbox_spec *spec)
{
	static const char *const paths[] = {
	    "{\"path\": \"d/f\", \"dataBase64\": \"cHduZWQK\"}",
	    "{\"path\": \"d/sub/f\", \"dataBase64\": \"cHduZWQK\"}",
	    "{\"path\": \"d/new/f\", \"dataBase64\": \"cHduZWQK\", \"createParents\": "
	    "true}",
	};
	f->root.spec = spec;
	size_t ok = 0, refused = 0;
	for (int i = 0; i < 2000 || ((ok < 100 || refused < 100) && i < 40000); i++) {
		enum error_kind k = call(f, "fs/write", paths[i % 3], NULL, NULL);
		if (k == ERROR_NONE)
			ok++;
		else if (k == ERROR_DENIED || k == ERROR_NOT_FOUND)
			refused++;
		else
			unit_fail("write %d: unexpected %s", i, error_kind_name(k));
		if (i % 100 == 0)
			assert_outside_unchanged(f, "during the swap race");
	}
	f->root.spec = &f->spec;
	print_message("swap race (%s): %zu written, %zu refused\n", spec ? "policy" : "no policy",
		      ok, refused);
	assert_true(ok > 0 && refused > 0);
}

static void fs_write_never_lands_outside_while_a_parent_is_swapped(void **state)
{
	struct fixture *f = *state;
	unit_mkdir(f->proj, "d");
	unit_mkdir(f->proj, "d/sub");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Gone with the test, even one that fails half-way. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		swap_loop(f->proj, f->outside);
		_exit(0);
	}
	/* With the policy, then by confinement alone. */
	race_writes(f, &f->spec);
	race_writes(f, NULL);
	/* The swapping never stopped. */
	assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_outside_unchanged(f, "after the swap race");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    fs_test(fs_methods_answer_each_case_as_the_table_says),
	    fs_test(fs_write_then_read_round_trips_bytes_and_mode),
	    fs_test(fs_read_honours_offset_and_length),
	    fs_test(fs_list_shows_masked_files_empty_and_never_descends_through_symlinks),
	    fs_test(fs_write_replaces_a_symlink_instead_of_following_it),
	    fs_test(fs_remove_and_mkdir_work_beneath_the_workspace),
	    fs_test(fs_write_is_atomic_for_a_concurrent_reader),
	    fs_test(fs_write_never_lands_outside_while_a_parent_is_swapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
