/* `agent-sandbox exec-into NAME [--] CMD...`: runs another command in a
 * running sandbox, under the layers of its first one (sandbox/control.h),
 * with our stdin, stdout and stderr. Exit status: the command's; 2 for an
 * unknown name or bad arguments. */
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/term_escape.h"
#include "cli/verbs.h"
#include "sandbox/control.h"
#include "workspace/instance.h"

static const char exec_into_form[] = "agent-sandbox exec-into NAME [--] CMD [ARGS...]";

int verb_exec_into(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	char **a = cli->command;
	if (a[0] && (!strcmp(a[0], "--help") || !strcmp(a[0], "-h")))
		return verb_help(io, err);
	if (!a[0])
		return error_set(err, ERROR_USAGE, "exec-into: missing the sandbox's name: %s",
				 exec_into_form);
	if (instance_check_name(a[0], err) < 0)
		return error_prefix(err, "exec-into");
	const char *name = a[0];
	char **command = a + 1;
	if (command[0] && !strcmp(command[0], "--"))
		command++;
	if (!command[0])
		return error_set(err, ERROR_USAGE, "exec-into: missing the command to run: %s",
				 exec_into_form);

	_cleanup_instance_list_ struct instance_list l;
	if (instance_list(envp, &l, err) < 0)
		return -1;
	const struct instance *in = instance_find(&l, name);
	if (!in)
		return cli_unknown_sandbox(&l, name, err);
	if (!in->control_socket) {
		_cleanup_free_ char *shown = term_escape(name);
		return error_set(err, ERROR_SETUP, "sandbox %s takes no commands from outside",
				 shown);
	}
	int fds[3] = {io->in, io->out, io->err};
	int status = control_exec(in->control_socket, in->pid, command, fds, err);
	if (status < 0) {
		_cleanup_free_ char *shown = term_escape(name);
		return error_prefix(err, "exec-into %s", shown);
	}
	return status;
}
