/* `agent-sandbox serve [--socket PATH | --stdio] [--allow-uid UID]...
 * [--allow-loosening] [--max-sessions N] [--ring-size SIZE]
 * [--idle-timeout DURATION] [--credential NAME]... [--agent-silence DURATION]`:
 * the executor API (serve/server.h). A
 * listening socket handed over by systemd (LISTEN_FDS) is used instead of
 * binding one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/term_escape.h"
#include "base/units.h"
#include "base/xalloc.h"
#include "cli/verbs.h"
#include "inside/inside.h"
#include "serve/server.h"

static const char serve_form[] =
    "agent-sandbox serve [--socket PATH | --stdio] [--allow-uid UID]... [--allow-loosening] "
    "[--max-sessions N] [--ring-size SIZE] [--idle-timeout DURATION] [--credential NAME]... "
    "[--agent-silence DURATION]";

static int number(const char *flag, const char *v, unsigned long long max, unsigned long long *out,
		  struct error *err)
{
	char *end = NULL;
	errno = 0;
	unsigned long long n = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
	if (!v || !end || *end || errno || n > max)
		return error_set(err, ERROR_USAGE, "serve %s: expected a number from 0 to %llu",
				 flag, max);
	*out = n;
	return 0;
}

/* systemd's socket activation: one listening socket at descriptor 3. */
static int activated_socket(char *const *envp)
{
	const char *pid = NULL, *fds = NULL;
	for (char *const *e = envp; *e; e++) {
		if (!strncmp(*e, "LISTEN_PID=", 11))
			pid = *e + 11;
		else if (!strncmp(*e, "LISTEN_FDS=", 11))
			fds = *e + 11;
	}
	if (!pid || !fds || atol(pid) != (long)getpid() || atoi(fds) < 1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 3;
}

int verb_serve(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	struct serve_options o = {
	    .envp = envp,
	    .listen_fd = -1,
	    .max_sessions = SERVE_MAX_SESSIONS_DEFAULT,
	    .ring_bytes = SERVE_RING_DEFAULT,
	    .idle_timeout_s = SERVE_IDLE_DEFAULT,
	    .agent_silence_ms = SERVE_AGENT_SILENCE_DEFAULT,
	};
	_cleanup_free_ char **creds = NULL;
	size_t ncreds = 0;
	_cleanup_free_ uid_t *uids = NULL;
	size_t nuids = 0;
	for (char **a = cli->command; *a; a++) {
		const char *arg = *a;
		const char *eq = strchr(arg, '=');
		size_t flen = eq ? (size_t)(eq - arg) : strlen(arg);
		const char *value = eq ? eq + 1 : a[1];
		bool takes = true;
#define IS(name) (flen == strlen(name) && !strncmp(arg, name, flen))
		unsigned long long n;
		const char *why = NULL;
		if (IS("--help") || IS("-h")) {
			return verb_help(io, err);
		} else if (IS("--stdio")) {
			o.stdio = true;
			takes = false;
		} else if (IS("--allow-loosening")) {
			o.allow_loosening = true;
			takes = false;
		} else if (!value) {
			_cleanup_free_ char *shown = term_escape(arg);
			return error_set(err, ERROR_USAGE,
					 "serve: %s: unknown flag or missing value: %s", shown,
					 serve_form);
		} else if (IS("--socket")) {
			if (value[0] != '/')
				return error_set(err, ERROR_USAGE,
						 "serve --socket: expected an absolute path");
			o.socket_path = value;
		} else if (IS("--allow-uid")) {
			if (number("--allow-uid", value, 0xfffffffeull, &n, err) < 0)
				return -1;
			uids = xreallocarray(uids, nuids + 1, sizeof(*uids));
			uids[nuids++] = (uid_t)n;
		} else if (IS("--max-sessions")) {
			if (number("--max-sessions", value, 100000, &n, err) < 0)
				return -1;
			o.max_sessions = (unsigned)n;
		} else if (IS("--ring-size")) {
			if (!size_parse(value, &n, &why) || n > (1ull << 30))
				return error_set(
				    err, ERROR_USAGE,
				    "serve --ring-size %s: expected a size up to 1G (e.g. "
				    "1M, 64K)",
				    value);
			o.ring_bytes = (size_t)n;
		} else if (IS("--credential")) {
			if (!value[0] || strchr(value, '/'))
				return error_set(
				    err, ERROR_USAGE,
				    "serve --credential: expected a credential's name "
				    "(anthropic, openai, github, or one of your config)");
			creds = xreallocarray(creds, ncreds + 2, sizeof(*creds));
			creds[ncreds++] = (char *)value;
			creds[ncreds] = NULL;
		} else if (IS("--agent-silence")) {
			if (duration_read(value, "serve --agent-silence", &n, err) < 0)
				return -1;
			o.agent_silence_ms = n;
		} else if (IS("--idle-timeout")) {
			if (duration_read(value, "serve --idle-timeout", &n, err) < 0)
				return -1;
			o.idle_timeout_s = n / 1000 ? (unsigned)(n / 1000) : 1;
		} else {
			_cleanup_free_ char *shown = term_escape(arg);
			return error_set(err, ERROR_USAGE, "serve: unknown flag %s: %s", shown,
					 serve_form);
		}
#undef IS
		if (takes && !eq)
			a++;
	}
	if (inside_sandbox())
		return error_set(err, ERROR_USAGE,
				 "serve runs on the host: its sessions are sandboxes of their own");
	if (o.stdio && (o.socket_path || nuids))
		return error_set(err, ERROR_USAGE,
				 "serve --stdio serves one client on stdin and stdout: no --socket "
				 "or --allow-uid with it");
	o.allow_uids = uids;
	o.credentials = creds;
	o.credentials_len = ncreds;
	o.allow_uids_len = nuids;
	if (!o.stdio)
		o.listen_fd = activated_socket(envp);
	_cleanup_free_ char *where = o.stdio	     ? NULL
				     : o.socket_path ? xstrdup(o.socket_path)
						     : serve_default_socket(envp);
	/* Each session's sandbox watches files with up to 3 inotify instances, a
	 * per-user limit of the host's: say when it comes before ours. */
	_cleanup_free_ char *inst = NULL;
	size_t len;
	if (read_file("/proc/sys/fs/inotify/max_user_instances", 64, &inst, &len) == 0 &&
	    (unsigned long)atol(inst) / 3 < o.max_sessions) {
		char note[256];
		snprintf(
		    note, sizeof(note),
		    "agent-sandbox serve: note: fs.inotify.max_user_instances is %ld: about %ld "
		    "sessions can run at once (each holds up to 3), fewer than --max-sessions %u\n",
		    atol(inst), atol(inst) / 3, o.max_sessions);
		(void)write_str(io->err, note);
	}
	if (where && o.listen_fd < 0) {
		_cleanup_free_ char *shown = term_escape(where);
		(void)write_str(io->err, "agent-sandbox serve: listening on ");
		(void)write_str(io->err, shown);
		(void)write_str(io->err, "\n");
	}
	return serve_run(&o, err);
}
