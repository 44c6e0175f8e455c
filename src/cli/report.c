/* Formatting for people. Nothing here decides anything. Every string that
 * came from outside (paths, patterns, config origins, host names, variable
 * names, error messages) is escaped by term_escape where it is formatted
 * in, and every write goes through a last pass that escapes whatever a
 * terminal would act on except our own line breaks. */
#include "base/units.h"
#include "sandbox/cgroup.h"
#include "cli/report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/output.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "base/xalloc.h"

/* The last line of defence: text we composed, with its outside strings
 * escaped already, keeps its line breaks; anything else a terminal would
 * act on is escaped (a no-op when every caller did its part). */
static int write_text(int fd, const struct strbuf *text)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	term_escape_mode_add(&sb, strbuf_str(text), text->len, TERM_ESCAPE_LINES);
	return write_all(fd, sb.buf, sb.len);
}

/* Debug lines and notes are one line each, and their arguments are paths,
 * patterns, host names and error messages: the whole line is escaped as
 * an outside string, so none of them can start a line of its own. */
static void write_output(void *arg, enum output_level level, const char *msg)
{
	int fd = *(const int *)arg;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, level == OUTPUT_DEBUG ? "agent-sandbox: debug: " : "agent-sandbox: ");
	term_escape_add(&sb, msg);
	strbuf_addch(&sb, '\n');
	/* stderr that cannot be written is nowhere to report it either. */
	(void)write_all(fd, sb.buf, sb.len);
}

void report_install_output(const int *fd, bool debug)
{
	output_set_handler(write_output, (void *)fd, debug);
}

/* Messages and hints carry file names, patterns, config values and host
 * names formatted in by every layer below, so each is escaped whole: a
 * '\n' in a file name cannot forge an "agent-sandbox: hint:" line. The
 * lines under a message were escaped one by one when they were added. */
/* 2 for what the user can fix in the command line or the config; a
 * command that cannot start gets the shell's 127 (not found) or 126; 1 for
 * the rest. */
static int exit_status(const struct error *err)
{
	switch (err->kind) {
	case ERROR_EXEC:
		return err->errnum == ENOENT ? 127 : 126;
	case ERROR_USAGE:
	case ERROR_CONFIG:
	case ERROR_DENIED:
	case ERROR_NOT_FOUND:
	case ERROR_POLICY:
		return EXIT_USAGE;
	case ERROR_LIMIT:
	case ERROR_BUSY:
	case ERROR_NONE:
	case ERROR_SETUP:
	case ERROR_INTERNAL:
		break;
	}
	return EXIT_SETUP;
}

int report_error(int fd, const struct error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "agent-sandbox: ");
	term_escape_add(&sb, err->msg ? err->msg : "unknown error");
	strbuf_addch(&sb, '\n');
	for (const char *line = err->lines; line && *line;) {
		size_t n = strcspn(line, "\n");
		strbuf_addstr(&sb, "  ");
		strbuf_add(&sb, line, n);
		strbuf_addch(&sb, '\n');
		line += n + (line[n] == '\n');
	}
	if (err->hint) {
		strbuf_addstr(&sb, "agent-sandbox: hint: ");
		term_escape_add(&sb, err->hint);
		strbuf_addch(&sb, '\n');
	}
	write_text(fd, &sb);
	return exit_status(err);
}

static const char *setting_source(const struct config_setting *s)
{
	return s->layer == LAYER_BUILTIN ? "default" : s->origin;
}

/* The setting's origin (a file:line:column, outside) in parentheses. */
static void add_source(struct strbuf *sb, const struct config_setting *s)
{
	strbuf_addstr(sb, " (");
	term_escape_add(sb, setting_source(s));
	strbuf_addstr(sb, ")\n");
}

/* "limits             /tmp 1 GiB (default), 1024 processes (default)" */
static void add_limits(struct strbuf *sb, const struct config_limits *l)
{
	_cleanup_free_ char *tmp = config_format_size(l->tmp.value);
	strbuf_addf(sb, "limits             /tmp %s (", tmp);
	term_escape_add(sb, l->tmp.layer == LAYER_BUILTIN ? "default" : l->tmp.origin);
	strbuf_addf(sb, "), %llu processes (", l->pids.value);
	term_escape_add(sb, l->pids.layer == LAYER_BUILTIN ? "default" : l->pids.origin);
	strbuf_addstr(sb, ")\n");
	struct cgroup_support c;
	sandbox_cgroup_probe(&c);
	_cleanup_free_ char *memory = config_format_size(l->memory.value);
	_cleanup_free_ char *cpus = cpus_format((unsigned)l->cpus.value);
	_cleanup_free_ char *timeout = duration_format(l->timeout.value);
	const struct {
		const char *label;
		const struct config_limit *limit;
		const char *value;
		const char *how;
	} rows[] = {
	    {"memory", &l->memory, memory, sandbox_limit_mechanism(&c, LIMIT_MEMORY)},
	    {"cpus", &l->cpus, cpus, sandbox_limit_mechanism(&c, LIMIT_CPUS)},
	    {"processes", &l->pids, NULL, sandbox_limit_mechanism(&c, LIMIT_PIDS)},
	    {"timeout", &l->timeout, timeout,
	     "SIGTERM to every process, SIGKILL 5s later, exit 124"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct config_limit *v = rows[i].limit;
		strbuf_addf(sb, "  %-16s ", rows[i].label);
		if (!v->value) {
			strbuf_addstr(sb, "none (default)\n");
			continue;
		}
		if (rows[i].value)
			strbuf_addstr(sb, rows[i].value);
		else
			strbuf_addf(sb, "%llu", v->value);
		strbuf_addstr(sb, " (");
		term_escape_add(sb, v->layer == LAYER_BUILTIN ? "default" : v->origin);
		strbuf_addf(sb, "): %s\n", rows[i].how);
	}
}

static void add_net_list(struct strbuf *sb, const char *label, const struct net_list *list)
{
	for (size_t i = 0; i < list->len; i++) {
		const struct net_entry *e = &list->items[i];
		strbuf_addf(sb, "  %-16s ", label);
		term_escape_add(sb, e->name);
		if (e->address) {
			strbuf_addstr(sb, " -> ");
			term_escape_add(sb, e->address);
		}
		strbuf_addstr(sb, " (");
		term_escape_add(sb, e->layer == LAYER_BUILTIN ? "default" : e->origin);
		strbuf_addstr(sb, ")\n");
	}
}

void report_network(struct strbuf *sb, const struct network_config *net)
{
	strbuf_addf(sb, "network            %s (", network_mode_name(net->mode));
	term_escape_add(sb, net->layer == LAYER_BUILTIN ? "default" : net->origin);
	strbuf_addstr(sb, ")\n");
	if (net->mode != NETWORK_FILTERED)
		return;
	add_net_list(sb, "allow", &net->allow);
	add_net_list(sb, "deny", &net->deny);
	add_net_list(sb, "localhost port", &net->localhost);
	add_net_list(sb, "resolve", &net->resolve);
}

/* Every cell escaped already, so that widths are those of what is shown. */
struct row {
	char *path;
	const char *access;
	char *rule;
	char *from;
};

static void print_rows(struct strbuf *sb, const struct row *rows, size_t n)
{
	size_t wp = strlen("PATH"), wa = strlen("ACCESS"), wr = strlen("RULE");
	for (size_t i = 0; i < n; i++) {
		if (strlen(rows[i].path) > wp)
			wp = strlen(rows[i].path);
		if (strlen(rows[i].access) > wa)
			wa = strlen(rows[i].access);
		if (strlen(rows[i].rule) > wr)
			wr = strlen(rows[i].rule);
	}
	strbuf_addf(sb, "%-*s  %-*s  %-*s  %s\n", (int)wp, "PATH", (int)wa, "ACCESS", (int)wr,
		    "RULE", "FROM");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%-*s  %-*s  %-*s  %s\n", (int)wp, rows[i].path, (int)wa,
			    rows[i].access, (int)wr, rows[i].rule, rows[i].from);
}

static void add_secrets(struct strbuf *sb, const struct secrets *secrets)
{
	const struct secret_scan_result *f = &secrets->found;
	if (secrets->skipped_root) {
		strbuf_addstr(sb, "secret files       not scanned (the working directory is /)\n");
		return;
	}
	strbuf_addf(sb, "secret files       %zu masked (%zu files in %zu directories scanned)\n",
		    f->len, f->files, f->dirs);
	for (size_t i = 0; i < f->len; i++) {
		strbuf_addstr(sb, "  masked           ");
		term_escape_add(sb, f->items[i].path);
		strbuf_addstr(sb,
			      f->items[i].is_dir ? "/ (directory, pattern \"" : "  (pattern \"");
		term_escape_add(sb, f->items[i].pattern);
		strbuf_addstr(sb, "\")\n");
	}
	/* The scan runs once: say so where the user reads what it found. */
	strbuf_addstr(sb,
		      "  note             files created or renamed into a secret name after the "
		      "start are not masked\n");
}

static void add_env(struct strbuf *sb, const struct env_result *env, const struct config *cfg)
{
	strbuf_addf(sb, "environment        %zu dropped, %zu set (filter-secrets %s, ",
		    env->dropped.len, env->set.len, cfg->env_filter_secrets.value ? "on" : "off");
	term_escape_add(sb, setting_source(&cfg->env_filter_secrets));
	strbuf_addstr(sb, ")\n");
	for (size_t i = 0; i < env->dropped.len; i++) {
		strbuf_addstr(sb, "  dropped          ");
		term_escape_add(sb, env->dropped.items[i]);
		strbuf_addstr(sb, "  (");
		term_escape_add(sb, env->reasons.items[i]);
		strbuf_addstr(sb, ")\n");
	}
	for (size_t i = 0; i < env->set.len; i++) {
		strbuf_addstr(sb, "  set              ");
		term_escape_add(sb, env->set.items[i]);
		strbuf_addch(sb, '\n');
	}
}

int report_policy(int fd, const struct policy *policy, const struct policy_summary *summary)
{
	const struct config *cfg = summary->cfg;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "working directory  ");
	term_escape_add(&sb, summary->cwd);
	strbuf_addch(&sb, '\n');
	report_network(&sb, &cfg->network);
	strbuf_addf(&sb, "docker socket      %s",
		    !summary->docker_socket ? "none found"
		    : cfg->docker.value	    ? "exposed"
					    : "hidden");
	add_source(&sb, &cfg->docker);
	strbuf_addf(&sb, "read-only          %s", cfg->read_only.value ? "yes" : "no");
	add_source(&sb, &cfg->read_only);
	add_limits(&sb, &cfg->limits);
	strbuf_addstr(&sb, "presets            ");
	term_escape_add(&sb, summary->presets);
	strbuf_addch(&sb, '\n');
	for (size_t i = 0; i < cfg->files.len; i++) {
		strbuf_addstr(&sb, "config             ");
		term_escape_add(&sb, cfg->files.items[i]);
		strbuf_addch(&sb, '\n');
	}
	if (summary->secrets)
		add_secrets(&sb, summary->secrets);
	if (summary->env)
		add_env(&sb, summary->env, cfg);
	strbuf_addch(&sb, '\n');

	size_t n = policy_base_mounts_len + policy->len;
	_cleanup_free_ struct row *rows = xcalloc(n, sizeof(*rows));
	size_t k = 0;
	for (size_t i = 0; i < policy_base_mounts_len; i++) {
		const struct base_mount *m = &policy_base_mounts[i];
		rows[k++] = (struct row){
		    .path = term_escape(m->path),
		    .access = m->kind == BASE_HOST_ROOT ? "ro"
			      : m->kind == BASE_TMPFS	? "private"
							: "fresh",
		    .rule = xstrdup("-"),
		    .from = xasprintf("built-in (%s)", m->description),
		};
	}
	for (size_t i = 0; i < policy->len; i++) {
		const struct access_entry *e = &policy->entries[i];
		const struct rule *r = e->rule;
		_cleanup_free_ char *origin = term_escape(r->origin);
		rows[k++] = (struct row){
		    .path = term_escape(e->path),
		    .access = access_level_name(e->level),
		    .rule = term_escape(r->pattern),
		    .from = xasprintf("%s %s%s", layer_name(r->layer), origin,
				      e->downgraded ? ", made ro by read-only mode"
				      : e->kept_rw  ? ", agent state: rw in read-only mode"
						    : ""),
		};
	}
	print_rows(&sb, rows, k);
	if (policy->skipped_len)
		strbuf_addf(&sb,
			    "\n%zu rule%s skipped (paths that do not exist); --debug lists them\n",
			    policy->skipped_len, policy->skipped_len == 1 ? "" : "s");
	for (size_t i = 0; i < k; i++) {
		free(rows[i].path);
		free(rows[i].rule);
		free(rows[i].from);
	}
	return write_text(fd, &sb);
}

void report_init_binds(struct strbuf *sb, const struct strv *binds)
{
	size_t n = binds->len / 3;
	if (!n)
		return;
	strbuf_addf(sb, "the init makes %zu bind%s before the command starts:\n", n,
		    n == 1 ? "" : "s");
	for (size_t i = 0; i + 2 < binds->len; i += 3) {
		strbuf_addstr(sb, "  ");
		term_escape_add(sb, binds->items[i + 1]);
		strbuf_addstr(sb, " <- ");
		term_escape_add(sb, binds->items[i]);
		strbuf_addf(sb, ", %s\n", binds->items[i + 2]);
	}
}

int report_dry_run(int fd, const struct strv *args)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "bwrap\n");
	/* One argument a line: escaped, a '\n' in a path cannot forge one. */
	for (size_t i = 0; i < args->len; i++) {
		term_escape_add(&sb, args->items[i]);
		strbuf_addch(&sb, '\n');
	}
	return write_text(fd, &sb);
}

int report_wrappers(int fd, const struct command_table *commands, const struct wrapper_plan *p)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "\ncommands\n");
	if (p->inherited) {
		strbuf_addf(&sb, "  %s\n", WRAPPERS_INHERITED_NOTE);
		for (size_t i = 0; i < commands->len; i++) {
			const struct command_setting *c = &commands->items[i];
			if (c->layer == LAYER_BUILTIN || c->kind != COMMAND_RAW)
				continue;
			_cleanup_free_ char *line = xasprintf(
			    "%s: %s (%s) not applied: a nested run cannot unwrap a command",
			    c->name, command_kind_name(c->kind), c->origin);
			strbuf_addstr(&sb, "  ");
			term_escape_add(&sb, line);
			strbuf_addch(&sb, '\n');
		}
	}
	/* A description is one line of names, paths and origins; escaped
	 * whole here, and whole again by debug_line for --debug. */
	for (size_t i = 0; i < p->len; i++) {
		_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
		wrapper_describe(&line, &p->items[i]);
		strbuf_addstr(&sb, "  ");
		term_escape_add(&sb, strbuf_str(&line));
		strbuf_addch(&sb, '\n');
	}
	return write_text(fd, &sb);
}

static void add_guard_target(struct strbuf *sb, const struct guard_target *t)
{
	strbuf_addstr(sb, "  ");
	term_escape_add(sb, t->display);
	strbuf_addf(sb, "  %s ", access_level_name(t->rule->level));
	term_escape_add(sb, t->rule->pattern);
	strbuf_addstr(sb, " (");
	term_escape_add(sb, t->rule->origin);
	strbuf_addstr(sb, ")\n");
}

int report_guard_plan(int fd, const struct guard_plan *plan, bool all)
{
	if (!plan->len)
		return 0;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb,
		    "\n%zu protected path%s do%s not exist in writable directories: whatever "
		    "appears there while the sandbox runs is moved aside (guard)%s\n",
		    plan->len, plan->len == 1 ? "" : "s", plan->len == 1 ? "es" : "",
		    all ? ":" : "; --debug lists them");
	for (size_t i = 0; all && i < plan->len; i++)
		add_guard_target(&sb, &plan->targets[i]);
	return write_text(fd, &sb);
}

void report_quarantine(int fd, const struct guard *g)
{
	const struct guard_event *events = NULL;
	size_t n = guard_events(g, &events);
	if (!n)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb,
		    "agent-sandbox: %zu path%s appeared where the policy protects them (host "
		    "programs read or run them); moved aside",
		    n, n == 1 ? "" : "s");
	if (guard_quarantine_dir(g)) {
		strbuf_addstr(&sb, " into ");
		term_escape_add(&sb, guard_quarantine_dir(g));
	}
	strbuf_addstr(&sb, ":\n");
	for (size_t i = 0; i < n; i++) {
		const struct guard_event *e = &events[i];
		strbuf_addstr(&sb, "  ");
		term_escape_add(&sb, e->path);
		if (e->symlink_to) {
			strbuf_addstr(&sb, " (a symlink on the way to ");
			term_escape_add(&sb, e->symlink_to);
			strbuf_addch(&sb, ')');
		}
		strbuf_addf(&sb, " (%s by ", access_level_name(e->rule->level));
		term_escape_add(&sb, e->rule->origin);
		strbuf_addstr(&sb, e->moved_to ? ") -> " : "): ");
		term_escape_add(&sb, e->moved_to ? e->moved_to : e->error);
		if (e->restored)
			strbuf_addstr(&sb, "; its protected content written back");
		strbuf_addch(&sb, '\n');
	}
	write_text(fd, &sb);
}

#define SECRET_READS_SHOWN 10

/* One line: where the program is, what hides that place, and what shows
 * it ("claude is /tmp/x/bin/claude on the host, but /tmp is private inside
 * the sandbox (a tmpfs of its own): show it with --ro /tmp/x/bin, or
 * install it elsewhere"). */
void report_hidden_command(int fd, const char *name, const struct hidden_command *h)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *dir = xstrdup(h->host_path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	strbuf_addstr(&sb, "agent-sandbox: hint: ");
	term_escape_add(&sb, name);
	strbuf_addstr(&sb, " is ");
	term_escape_add(&sb, h->host_path);
	strbuf_addstr(&sb, " on the host, but ");
	term_escape_add(&sb, h->hidden_by);
	if (h->rule) {
		strbuf_addstr(&sb, " is hidden inside the sandbox (");
		term_escape_add(&sb, h->rule);
		strbuf_addch(&sb, ')');
	} else if (h->ro_shows_it) {
		strbuf_addstr(&sb, " is private inside the sandbox (a tmpfs of its own)");
	} else {
		strbuf_addstr(&sb, " is made fresh inside the sandbox, and no rule shows a host "
				   "path there");
	}
	if (h->ro_shows_it) {
		strbuf_addstr(&sb, ": show it with --ro ");
		term_escape_add(&sb, dir);
		strbuf_addstr(&sb, ", or install it elsewhere\n");
	} else {
		strbuf_addstr(&sb, ": install it elsewhere (under your home, say)\n");
	}
	write_text(fd, &sb);
}

void report_dropped_keys(int fd, const struct strv *names, const char *credential)
{
	if (!names->len)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "agent-sandbox: ");
	for (size_t i = 0; i < names->len; i++) {
		if (i)
			strbuf_addstr(&sb, i + 1 == names->len ? " and " : ", ");
		term_escape_add(&sb, names->items[i]);
	}
	strbuf_addstr(&sb, names->len == 1 ? " was not passed in (it looks like a secret): "
					   : " were not passed in (they look like secrets): ");
	if (credential) {
		strbuf_addstr(&sb, "--credential ");
		term_escape_add(&sb, credential);
		strbuf_addstr(&sb, " injects the key without the agent holding it, ");
	}
	strbuf_addstr(&sb, "--env ");
	term_escape_add(&sb, names->items[0]);
	strbuf_addstr(&sb, " passes it\n");
	write_text(fd, &sb);
}

void report_unreached_loopback(int fd, const struct strv *entries)
{
	for (size_t i = 0; i < entries->len; i++) {
		const char *name = strchr(entries->items[i], ' ') + 1;
		unsigned port = (unsigned)strtoul(entries->items[i], NULL, 10);
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, "agent-sandbox: ");
		term_escape_add(&sb, name);
		strbuf_addf(&sb,
			    " names the host's loopback port %u, which the sandbox does not "
			    "reach: --localhost %u forwards it\n",
			    port, port);
		write_text(fd, &sb);
	}
}

int report_text(int fd, const struct strbuf *text)
{
	return write_text(fd, text);
}

void report_secret_reads(int fd, const struct strv *paths, const char *cwd)
{
	if (!paths->len)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "agent-sandbox: the command tried to read %zu masked file%s: ", paths->len,
		    paths->len == 1 ? "" : "s");
	size_t cwd_len = strlen(cwd);
	for (size_t i = 0; i < paths->len && i < SECRET_READS_SHOWN; i++) {
		const char *p = paths->items[i];
		if (i)
			strbuf_addstr(&sb, ", ");
		if (strcmp(cwd, "/") != 0 && !strncmp(p, cwd, cwd_len) && p[cwd_len] == '/')
			p += cwd_len + 1;
		term_escape_add(&sb, p);
	}
	if (paths->len > SECRET_READS_SHOWN)
		strbuf_addf(&sb, " and %zu more", paths->len - SECRET_READS_SHOWN);
	strbuf_addstr(&sb, "\n");
	write_text(fd, &sb);
}
