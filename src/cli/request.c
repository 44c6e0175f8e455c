/* From flags to a sandbox_request: the command line is one front end of
 * the library, and this is the whole of what it tells it. */
#include "cli/verbs.h"

#include "base/io.h"

void cli_request(const struct cli *cli, char *const *envp, struct sandbox_request *req)
{
	*req = (struct sandbox_request){
	    .cwd = cli->cwd,
	    .envp = envp,
	    .config_path = cli->config_path,
	    .rules = &cli->rules,
	    .sockets = &cli->sockets,
	    .commands = &cli->commands,
	    .network = (enum request_setting)cli->network,
	    .allow_hosts = &cli->allow_hosts,
	    .docker = (enum request_setting)cli->docker,
	    .read_only = (enum request_setting)cli->read_only,
	    .read_only_strict = cli->read_only_strict,
	    .agent = cli->agent,
	    .env_allow = &cli->env_allow,
	    .env_set = &cli->env_set,
	    .env_block = &cli->env_block,
	    .credentials = &cli->credentials,
	    .localhost = &cli->localhost,
	    .resolve = &cli->resolve,
	    .allow_degraded = cli->allow_degraded,
	    .command = cli->command,
	    .limits = &cli->limits,
	};
}

int cli_output_error(int r, struct error *err)
{
	return error_errno(err, ERROR_SETUP, -r, "writing the output");
}
