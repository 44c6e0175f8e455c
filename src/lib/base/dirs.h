/* Where agent-sandbox keeps things on the host, decided here and nowhere
 * else: the home directory, the config directory (global config) and the
 * state directory (audit log, trust store, quarantine). The runtime
 * directory, which needs checks before use, is sandbox/rundir.c's. All
 * from the environment passed in, never from environ. */
#pragma once

#include "base/error.h"

/* HOME when it is absolute, else the user's entry in the password
 * database; NULL when neither says. */
char *dirs_home(char *const *envp);

/* $XDG_CONFIG_HOME/agent-sandbox, else HOME/.config/agent-sandbox; NULL
 * when neither is known. */
char *dirs_config(char *const *envp, const char *home);

/* $XDG_STATE_HOME/agent-sandbox, else HOME/.local/state/agent-sandbox;
 * NULL when neither is known. Hidden inside every sandbox. */
char *dirs_state(char *const *envp, const char *home);

/* $XDG_DATA_HOME/agent-sandbox, else HOME/.local/share/agent-sandbox;
 * NULL when neither is known. Branch mode's repo shelves live there. */
char *dirs_data(char *const *envp, const char *home);

/* dirs_state for a verb that cannot do without it: the directory of the
 * user named by envp, or an error saying what to set. */
int dirs_state_required(char *const *envp, char **out, struct error *err);
