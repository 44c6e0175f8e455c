/* `agent-sandbox trust [PATH]`: the user approves a project config that
 * loosens, from outside the sandbox. */
#include "base/cleanup.h"
#include "base/io.h"
#include "base/strbuf.h"
#include "base/term_escape.h"
#include "cli/verbs.h"

int verb_trust(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	struct trust_approval a = {0};
	if (trust_approve(cli->command[0], envp, &a, err) < 0)
		return -1;
	_cleanup_free_ char *key = a.key;
	_cleanup_free_ char *shown = term_escape(key);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb,
		    "trusted %s\n  sha256 %s\n  editing, replacing or deleting the file withdraws "
		    "this approval\n",
		    shown, a.digest);
	int r = write_all(io->out, sb.buf, sb.len);
	return r < 0 ? cli_output_error(r, err) : 0;
}
