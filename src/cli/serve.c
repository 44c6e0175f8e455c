/* `agent-sandbox serve`: placeholder until the executor API lands. */
#include "cli/verbs.h"

int verb_serve(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	return error_set(err, ERROR_INTERNAL, "serve is not built yet");
}
