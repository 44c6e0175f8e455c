/* agent-sandbox: run a command in a least-privilege bwrap sandbox.
 *
 * The command line is one front end of libagent-sandbox: it parses flags
 * (flags.c), picks a verb (one file each), and is the only place that
 * prints errors, turning each error's kind into the exit status. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/doctor.h"
#include "cli/flags.h"
#include "cli/report.h"
#include "cli/verbs.h"
#include "inside/session.h"
#include "inside/init.h"
#include "inside/inside.h"
#include "inside/launcher.h"

extern char **environ;

static int check_platform(struct error *err)
{
	struct utsname u;
	if (uname(&u) < 0)
		return error_errno(err, ERROR_SETUP, errno, "uname");
	if (strcmp(u.sysname, "Linux") != 0)
		return error_set(err, ERROR_SETUP,
				 "agent-sandbox runs on Linux only (this is %s): it needs Linux "
				 "namespaces",
				 u.sysname);
	return 0;
}

static int run_verb(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	switch (cli->verb) {
	case VERB_HELP:
		return verb_help(io, err);
	case VERB_VERSION:
		return verb_version(io, err);
	case VERB_CHECK:
		return verb_check(io, err);
	case VERB_POLICY:
		return verb_policy(cli, envp, io, err);
	case VERB_LOG:
		return verb_log(cli, envp, io, err);
	case VERB_DOCTOR:
		return doctor_main(envp, io->out);
	case VERB_TRUST:
		return verb_trust(cli, envp, io, err);
	case VERB_RUN:
		return verb_run(cli, envp, io, err);
	case VERB_LIST:
		return verb_list(cli, envp, io, err);
	case VERB_STOP:
		return verb_stop(cli, envp, io, err);
	case VERB_EXEC_INTO:
		return verb_exec_into(cli, envp, io, err);
	case VERB_CHECKOUT:
		return verb_checkout(cli, envp, io, err);
	case VERB_BRANCHES:
		return verb_branches(cli, envp, io, err);
	case VERB_GC:
		return verb_gc(cli, envp, io, err);
	case VERB_SERVE:
		return verb_serve(cli, envp, io, err);
	case VERB_RPC:
		return verb_rpc(cli, envp, io, err);
	case VERB_MCP_BRIDGE:
		return verb_mcp_bridge(cli, envp, io, err);
	}
	return error_set(err, ERROR_INTERNAL, "this verb is not supported yet");
}

static int cli_main(int argc, char **argv, char **envp, const struct cli_io *io)
{
	/* First: a wrapped command's arguments are its own, whatever they
	 * look like, so none of them can select the init or a verb. */
	if (launcher_applies(argc, argv))
		return launcher_main(argc, argv, envp, io->err);
	if (argc > 1 && !strcmp(argv[1], SANDBOX_INIT_ARG))
		sandbox_init_main(argc, argv);
	if (argc == 2 && !strcmp(argv[1], SESSION_HOLD_ARG) && inside_sandbox())
		session_hold_main();
	if (argc > 1 && !strcmp(argv[1], SESSION_EXEC_ARG) && inside_sandbox())
		session_exec_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], DOCTOR_PROBE_ARG) && inside_sandbox())
		doctor_probe_main(argc, argv);

	_cleanup_error_ struct error err = ERROR_INIT;
	struct cli cli;
	if (cli_parse(argc, argv, &cli, &err) < 0) {
		cli_release(&cli);
		return report_error(io->err, &err);
	}
	report_install_output(&io->err, cli.debug);
	int status = 0;
	if (cli.verb == VERB_POLICY || cli.verb == VERB_DOCTOR || cli.verb == VERB_RUN)
		status = check_platform(&err);
	if (status == 0)
		status = run_verb(&cli, envp, io, &err);
	cli_release(&cli);
	if (status < 0)
		return report_error(io->err, &err);
	return status;
}

int main(int argc, char **argv)
{
	/* Descriptors 0-2 must be open, or the pipes and files we create
	 * could take their numbers and be mistaken for stdio. */
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			return 1;
	struct cli_io io = {.in = STDIN_FILENO, .out = STDOUT_FILENO, .err = STDERR_FILENO};
	return cli_main(argc, argv, environ, &io);
}
