/* Relative XDG variables are ignored, as the XDG spec says: a relative
 * path would depend on the working directory. */
#include "base/dirs.h"

#include <pwd.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/xalloc.h"
#include "policy/env.h"

char *dirs_home(char *const *envp)
{
	const char *home = env_get(envp, "HOME");
	if (home && home[0] == '/')
		return xstrdup(home);
	struct passwd *pw = getpwuid(geteuid());
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		return xstrdup(pw->pw_dir);
	return NULL;
}

static char *xdg_dir(char *const *envp, const char *var, const char *home, const char *fallback)
{
	const char *xdg = env_get(envp, var);
	if (xdg && xdg[0] == '/')
		return xasprintf("%s/agent-sandbox", xdg);
	if (home)
		return xasprintf("%s/%s/agent-sandbox", home, fallback);
	return NULL;
}

char *dirs_config(char *const *envp, const char *home)
{
	return xdg_dir(envp, "XDG_CONFIG_HOME", home, ".config");
}

char *dirs_state(char *const *envp, const char *home)
{
	return xdg_dir(envp, "XDG_STATE_HOME", home, ".local/state");
}

char *dirs_data(char *const *envp, const char *home)
{
	return xdg_dir(envp, "XDG_DATA_HOME", home, ".local/share");
}

int dirs_state_required(char *const *envp, char **out, struct error *err)
{
	_cleanup_free_ char *home = dirs_home(envp);
	*out = dirs_state(envp, home);
	if (*out)
		return 0;
	return error_set(err, ERROR_SETUP,
			 "cannot locate the state directory: neither XDG_STATE_HOME nor HOME is "
			 "set, and the user has no home directory");
}
