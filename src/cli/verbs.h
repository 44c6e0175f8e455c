/* One function per verb, each in its own file; main.c picks one. Every
 * verb returns an exit status, or -1 with err set. */
#pragma once

#include "base/error.h"
#include "cli/flags.h"
#include "spec/spec.h"

struct cli_io {
	int in, out, err;
};

/* The command line as a request to the library: flags become the topmost
 * config layer. */
void cli_request(const struct cli *cli, char *const *envp, struct sandbox_request *req);

/* For a write to the caller's stdout that failed (-errno): an error. */
int cli_output_error(int r, struct error *err);

int verb_run(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_policy(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_log(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_trust(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_list(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_stop(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err);
int verb_check(const struct cli_io *io, struct error *err);
int verb_version(const struct cli_io *io, struct error *err);
int verb_help(const struct cli_io *io, struct error *err);
