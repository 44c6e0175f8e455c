/* This file holds the host writes of a run that are not the sandbox
 * itself: state directories, agent directories (an agent profile's state
 * made on first use), trust store upkeep. Inside
 * a sandbox none of them happens: the outer agent-sandbox did them. */
#include "sandbox/prepare.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/output.h"
#include "base/strbuf.h"
#include "inside/inside.h"
#include "policy/agent_state.h"
#include "policy/preset.h"
#include "policy/trust.h"

int sandbox_prepare_host(const struct sandbox_spec *s, struct error *err)
{
	if (inside_sandbox())
		return 0;
	/* The state directory is hidden inside by a mount over it, which
	 * needs it to exist when the plan is made. */
	struct stat st;
	bool state_was_missing = s->audit_dir && stat(s->audit_dir, &st) < 0;
	if (s->audit) {
		struct audit probe;
		int r = audit_open(&probe, s->audit_dir, err);
		audit_close(&probe);
		if (r < 0) {
			error_hint(err, "set \"audit\": false in the config to run without the "
					"audit log");
			return -1;
		}
	} else if (s->audit_dir && trust_store_prepare(s->audit_dir, err) < 0) {
		return -1;
	}
	bool made_state = false;
	for (size_t i = 0; i < s->profile_missing.len; i++) {
		const char *dir = s->profile_missing.items[i];
		_cleanup_error_ struct error merr = ERROR_INIT;
		int r = agent_state_make_state_dir(s->home, dir, &merr);
		if (r < 0) {
			output_debug("agents: %s not created: %s", dir, merr.msg);
			continue;
		}
		made_state = made_state || r > 0;
		/* The user's own agent state, kept after the run: not a mount
		 * point left behind. */
		output_debug("agents: created %s for %s: its state persists", dir,
			     s->profile->name);
	}
	if (!s->agent_dirs_missing && !made_state)
		return state_was_missing;
	_cleanup_error_ struct error derr = ERROR_INIT;
	int made = agent_state_make_sourced_dirs(s->home, s->claude_config_dir, &derr);
	if (made < 0)
		output_debug("agents: %s", derr.msg);
	else if (made > 0)
		output_debug("agents: made %d empty director%s (shell snapshots, hook env files, "
			     "plugins, skills), to be mounted read-only",
			     made, made == 1 ? "y" : "ies");
	return made > 0 || made_state || state_was_missing;
}

int sandbox_withdraw_stale_trust(struct sandbox_spec *s, struct error *err)
{
	if (inside_sandbox())
		return 0;
	_cleanup_free_ char *store = trust_store_dir(s->envp, s->home);
	if (!store || trust_withdraw(&s->trust, store, err) < 0)
		return store ? -1 : 0;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	trust_describe_withdrawal(&s->trust, &sb);
	while (sb.len && sb.buf[sb.len - 1] == '\n')
		strbuf_setlen(&sb, sb.len - 1);
	if (sb.len)
		output_debug("%s", sb.buf);
	return 0;
}

void sandbox_seed_agents(const struct sandbox_spec *s)
{
	if (!s->seed_claude || !(s->presets & preset_lookup("@agents")) || !s->home ||
	    inside_sandbox() || (s->cfg.read_only.value && s->read_only_strict))
		return;
	_cleanup_error_ struct error serr = ERROR_INIT;
	int r = agent_state_seed_claude(s->home, &serr);
	if (r < 0)
		output_debug("agents: Claude Code starts without a copy of ~/.claude.json: %s",
			     serr.msg);
	else if (r > 0)
		output_debug("agents: copied ~/.claude.json to ~/.claude/.claude.json");
}
