/* `agent-sandbox policy`: the spec a run here would get, as a table, with
 * the trust verdict instead of a refusal. It runs nothing and writes
 * nothing on the host. */
#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "cli/report.h"
#include "cli/verbs.h"
#include "sandbox/guard.h"

int verb_policy(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	struct sandbox_request req;
	cli_request(cli, envp, &req);
	_cleanup_sandbox_spec_ struct sandbox_spec s;
	if (sandbox_plan(&req, &s, err) < 0)
		return -1;
	struct policy_summary summary = {
	    .cfg = &s.cfg,
	    .presets = s.presets_text,
	    .cwd = s.cwd,
	    .docker_socket = s.docker_socket,
	    .secrets = &s.secrets,
	    .env = &s.env,
	};
	_cleanup_guard_plan_ struct guard_plan guard_plan = {0};
	guard_plan_build(&s.policy, &guard_plan);
	_cleanup_strbuf_ struct strbuf profile = STRBUF_INIT;
	sandbox_spec_describe_profile(&s, &profile);
	strbuf_addch(&profile, '\n');
	_cleanup_strbuf_ struct strbuf tail = STRBUF_INIT;
	strbuf_addch(&tail, '\n');
	hardening_describe(&s.hardening, &tail);
	trust_describe(&s.trust, &tail);
	int r;
	if ((r = report_text(io->out, &profile)) < 0 ||
	    (r = report_policy(io->out, &s.policy, &summary)) < 0 ||
	    (r = report_guard_plan(io->out, &guard_plan, cli->debug)) < 0 ||
	    (r = report_wrappers(io->out, &s.cfg.commands, &s.wrappers)) < 0 ||
	    (r = write_all(io->out, tail.buf, tail.len)) < 0)
		return cli_output_error(r, err);
	return 0;
}
