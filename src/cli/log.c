/* `agent-sandbox log`: the audit log, read back. */
#include "audit/reader.h"
#include "audit/writer.h"
#include "base/cleanup.h"
#include "base/dirs.h"
#include "base/io.h"
#include "cli/verbs.h"

int verb_log(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	_cleanup_free_ char *dir = NULL;
	if (dirs_state_required(envp, &dir, err) < 0)
		return error_prefix(err, "log");
	struct audit_log_query q = {
	    .json = cli->log_json, .blocked = cli->log_blocked, .limit = cli->log_limit};
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (audit_log_format(dir, &q, &sb, err) < 0)
		return -1;
	int r = write_all(io->out, sb.buf, sb.len);
	return r < 0 ? cli_output_error(r, err) : 0;
}
