/* `agent-sandbox version` and `help`. */
#include "base/io.h"
#include "cli/verbs.h"

int verb_version(const struct cli_io *io, struct error *err)
{
	int r = write_str(io->out, "agent-sandbox " AGENT_SANDBOX_VERSION "\n");
	return r < 0 ? cli_output_error(r, err) : 0;
}

int verb_help(const struct cli_io *io, struct error *err)
{
	int r = write_str(io->out, cli_usage);
	return r < 0 ? cli_output_error(r, err) : 0;
}
