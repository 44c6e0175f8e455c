/* `agent-sandbox rpc`: placeholder until the executor API lands. */
#include "cli/verbs.h"

int verb_rpc(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	return error_set(err, ERROR_INTERNAL, "rpc is not built yet");
}
