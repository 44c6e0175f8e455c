/* `agent-sandbox check`: 0 inside a sandbox, 1 outside, for scripts. */
#include "base/io.h"
#include "cli/verbs.h"
#include "inside/inside.h"

int verb_check(const struct cli_io *io, struct error *err)
{
	bool inside = inside_sandbox();
	int r = write_str(io->out, inside ? "inside sandbox\n" : "outside sandbox\n");
	if (r < 0)
		return cli_output_error(r, err);
	return inside ? 0 : 1;
}
