/* `agent-sandbox policy`: the spec a run here would get, as a table, with
 * the trust verdict instead of a refusal. It runs nothing and writes
 * nothing on the host. */
#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "cli/report.h"
#include "cli/verbs.h"
#include "sandbox/guard.h"

/* Which keys the proxy injects and where the command finds each: the
 * name of where the key comes from, never the key. */
static void describe_credentials(const struct credential_set *set, struct strbuf *sb)
{
	for (size_t i = 0; i < set->len; i++) {
		const struct credential *c = &set->items[i];
		for (size_t k = 0; k < c->endpoints_len; k++) {
			const struct credential_endpoint *e = &c->endpoints[k];
			/* Names, paths and hosts come from the user's config:
			 * escaped for the terminal. */
			strbuf_addstr(sb, "credential ");
			term_escape_add(sb, c->name);
			strbuf_addstr(sb, " (");
			term_escape_add(sb, c->origin);
			strbuf_addstr(sb, "): key from ");
			if (c->file)
				term_escape_add(sb, c->file);
			for (size_t v = 0; !c->file && v < c->env.len; v++) {
				strbuf_addstr(sb, v ? " or " : "");
				term_escape_add(sb, c->env.items[v]);
			}
			strbuf_addstr(sb, ", added for https://");
			term_escape_add(sb, e->host);
			strbuf_addf(sb, "; inside: http://127.0.0.1:%u", e->port);
			if (e->base_url_env) {
				strbuf_addstr(sb, " ($");
				term_escape_add(sb, e->base_url_env);
				strbuf_addch(sb, ')');
			}
			if (e->git_instead_of)
				strbuf_addstr(sb, " (git's url.insteadOf)");
			strbuf_addch(sb, '\n');
		}
	}
	if (set->len)
		strbuf_addch(sb, '\n');
}

int verb_policy(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	struct sandbox_request req;
	cli_request(cli, envp, &req);
	_cleanup_cli_branch_ struct cli_branch branch = {.hold = -1};
	if (cli->branch && cli_branch_prepare(cli, envp, false, &branch, &req, io->err, err) < 0)
		return -1;
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
	describe_credentials(&s.credentials, &tail);
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
