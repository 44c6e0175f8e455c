/* The default verb: plan, prepare the host, and run the command in the
 * sandbox; with --dry-run, print what bwrap would be given instead. */
#include <string.h>

#include "base/cleanup.h"
#include "base/io.h"
#include "base/output.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "cli/report.h"
#include "cli/verbs.h"
#include "workspace/instance.h"
#include "agent-sandbox.h"

/* A withdrawn approval is news to the user: the next run of the same
 * config needs `agent-sandbox trust` again. --debug has said it already,
 * among the other trust lines. */
static void note_withdrawn_approval(const struct sandbox_spec *s, bool debug, int err_fd)
{
	if (debug)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	trust_describe_withdrawal(&s->trust, &sb);
	if (sb.len) {
		(void)write_str(err_fd, "agent-sandbox: ");
		(void)write_all(err_fd, sb.buf, sb.len);
	}
}

/* Inside a sandbox a command can be wrapped or blocked, not unwrapped:
 * the outer wrappers stay. Say so rather than skip what the user asked
 * for in silence. */
static void note_inherited_wrappers(const struct sandbox_spec *s, int err_fd)
{
	if (!s->nested)
		return;
	for (size_t i = 0; i < s->cfg.commands.len; i++) {
		const struct command_setting *c = &s->cfg.commands.items[i];
		if (c->layer != LAYER_BUILTIN && c->kind == COMMAND_RAW) {
			(void)write_str(err_fd,
					"agent-sandbox: note: inside a sandbox the outer "
					"sandbox's command wrappers stay in force; "
					"\"commands\" and --cmd entries set to true are not "
					"applied\n");
			return;
		}
	}
}

static int dry_run(const struct sandbox_spec *s, const struct cli_io *io, struct error *err)
{
	struct sandbox_io sio = {.in = io->in, .out = io->out, .err = io->err};
	_cleanup_sandbox_rendering_ struct sandbox_rendering r;
	if (sandbox_render(s, &sio, &r, err) < 0)
		return -1;
	if (r.nested) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, "# nested: no bwrap; the command runs in the outer sandbox with "
				   "Landlock writes beneath:\n");
		/* One path a line, as --dry-run lists bwrap's arguments: escaped,
		 * so that a '\n' in a path cannot forge a line. */
		for (size_t i = 0; i < r.args.len; i++) {
			term_escape_add(&sb, r.args.items[i]);
			strbuf_addch(&sb, '\n');
		}
		int w = write_all(io->out, sb.buf, sb.len);
		return w < 0 ? cli_output_error(w, err) : 0;
	}
	int w = report_dry_run(io->out, &r.args);
	if (w < 0)
		return cli_output_error(w, err);
	/* The init's binds and the proxy are part of agent-sandbox, not of
	 * the bwrap command: say what they would do, on stderr beside the
	 * listing. */
	_cleanup_strbuf_ struct strbuf net = STRBUF_INIT;
	report_init_binds(&net, &r.init_binds);
	report_network(&net, &s->cfg.network);
	(void)write_all(io->err, net.buf, net.len);
	return 0;
}

int verb_run(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	struct sandbox_request req;
	cli_request(cli, envp, &req);
	/* Branch mode: the worktree is made and held before planning, and
	 * held until the run ends (the cleanup marks its last use). */
	_cleanup_cli_branch_ struct cli_branch branch = {.hold = -1};
	if (cli->branch &&
	    cli_branch_prepare(cli, envp, !cli->dry_run, &branch, &req, io->err, err) < 0)
		return -1;
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	if (sandbox_plan(&req, &s, err) < 0)
		return -1;
	if (!cli->dry_run) {
		int r = sandbox_prepare_host(&s, err);
		if (r < 0)
			return -1;
		/* It made directories the policy mounts read-only: plan with
		 * them (once, on the first run that needs them). */
		if (r > 0) {
			output_debug("plan: again, now that the directories it hides or mounts "
				     "read-only exist");
			sandbox_spec_release(&s);
			if (sandbox_plan(&req, &s, err) < 0)
				return -1;
		}
		if (sandbox_withdraw_stale_trust(&s, err) < 0)
			return -1;
	}
	if (sandbox_spec_trust_refused(&s))
		return trust_refuse(&s.trust, err);
	note_withdrawn_approval(&s, cli->debug, io->err);
	note_inherited_wrappers(&s, io->err);
	if (s.profile)
		report_dropped_keys(io->err, &s.profile_dropped, s.profile->credential);
	report_unreached_loopback(io->err, &s.unreached_loopback);
	if (cli->dry_run)
		return dry_run(&s, io, err);
	sandbox_seed_agents(&s);

	struct sandbox_io sio = {.in = io->in, .out = io->out, .err = io->err};
	/* The record that list and stop read, removed on every way out of
	 * here. A nested run has none: its supervisor lives in the outer
	 * sandbox's pid namespace, where the host's stop cannot verify or
	 * reach it, and it cannot write the host's runtime directory; stopping
	 * the outer sandbox ends it. */
	_cleanup_instance_claim_ struct instance_claim claim = INSTANCE_CLAIM_INIT;
	if (!s.nested) {
		if (instance_register(&s, envp, cli->name, &claim, err) < 0)
			return -1;
		output_debug("sandbox name: %s (record %s)", claim.name, claim.record);
		sio.control_socket = claim.control_socket;
	}
	_cleanup_sandbox_result_ struct sandbox_result result = {0};
	int status = sandbox_launch(&s, &sio, &result, err);
	if (result.stopped) {
		_cleanup_free_ char *name = term_escape(claim.name);
		(void)write_str(io->err, "agent-sandbox: ");
		(void)write_str(io->err, name);
		(void)write_str(io->err, " was stopped by agent-sandbox stop\n");
	}
	/* The init says "command not found"; when the program is on the host
	 * in a place the sandbox hides, say that too. */
	struct hidden_command hidden;
	if (status == 127 && sandbox_spec_hidden_command(&s, &hidden)) {
		report_hidden_command(io->err, s.command.items[0], &hidden);
		hidden_command_release(&hidden);
	}
	if (result.guard)
		report_quarantine(io->err, result.guard);
	report_secret_reads(io->err, &result.secret_reads, s.cwd);
	return status;
}
