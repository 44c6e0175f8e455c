/* Configuration: finding, loading and validating the JSONC files, and
 * merging the layers (global, then project or --config, then the command
 * line) into one value. Arrays concatenate; scalars: the later layer wins. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/cleanup.h"
#include "config/commands.h"
#include "base/error.h"
#include "policy/rule.h"
#include "base/strv.h"

enum network_mode {
	NETWORK_HOST,	  /* the host's network */
	NETWORK_NONE,	  /* a new network namespace with loopback only */
	NETWORK_FILTERED, /* a new namespace; out only through the domain-filtering proxy */
};

/* One entry of a network list: a host pattern or group (allow, deny), a port
 * (localhost) or a pinned name (resolve: name and address). */
struct net_entry {
	char *name;    /* for localhost, the port as text, for messages */
	char *address; /* resolve only */
	uint16_t port; /* localhost; resolve: the pin's port, 0 for 80 and 443 */
	enum layer layer;
	char *origin; /* "<file>:L:C", "--allow-host" or "default" */
};

struct net_list {
	struct net_entry *items;
	size_t len;
	size_t alloc;
};

/* network: true, false or an object. The lists concatenate over the layers
 * like every other array; the mode is a scalar and the last layer wins. */
struct network_config {
	enum network_mode mode;
	enum layer layer;
	char *origin;
	struct net_list allow;	   /* host patterns and @groups */
	struct net_list deny;	   /* the same; deny wins */
	struct net_list localhost; /* host loopback ports reachable from inside */
	struct net_list resolve;   /* names pinned to addresses */
};

/* A resource limit: a size in bytes or a count. */
struct config_limit {
	unsigned long long value;
	enum layer layer; /* who decided: LAYER_BUILTIN for the default */
	char *origin;	  /* "<file>:L:C" or "default" */
};

/* limits: what the sandbox may use of the host. Each setting is a scalar:
 * the last layer wins. */
struct config_limits {
	struct config_limit tmp;     /* bytes of the /tmp tmpfs */
	struct config_limit pids;    /* processes and threads inside */
	struct config_limit memory;  /* bytes of memory; 0: no limit */
	struct config_limit cpus;    /* thousandths of a CPU; 0: no limit */
	struct config_limit timeout; /* milliseconds of wall-clock time; 0: no limit */
};

/* Limits a front end sets (its flags), in config_limits' units; 0: not
 * set there. */
struct limit_request {
	unsigned long long tmp, pids, memory, cpus, timeout;
};

/* Checks a value given for one of the limits ("memory", "cpus", "pids",
 * "timeout" or "tmp") as text: its form and its bounds. On success stores
 * it in config_limits' units; on failure returns false and sets *expected
 * to the form and bounds expected (static text). */
bool config_limit_parse(const char *key, const char *text, unsigned long long *value,
			const char **why, const char **expected);

/* The defaults: enough for builds and test suites, far from what takes a
 * host down. */
#define CONFIG_TMP_DEFAULT (1ULL << 30)
#define CONFIG_PIDS_DEFAULT 1024
/* The bounds a setting must stay within: a /tmp too small for a compiler's
 * temporaries, or more pids than the kernel can give, is a typo. */
#define CONFIG_TMP_MIN (1ULL << 20)
#define CONFIG_TMP_MAX (1ULL << 40)
#define CONFIG_PIDS_MIN 16
#define CONFIG_PIDS_MAX 4194304
/* Less memory than this does not start a shell; less CPU than a hundredth
 * or a timeout under 100 ms is a typo too. */
#define CONFIG_MEMORY_MIN (16ULL << 20)
#define CONFIG_MEMORY_MAX (1ULL << 50)
#define CONFIG_CPUS_MIN 10
#define CONFIG_CPUS_MAX (4096 * 1000)
#define CONFIG_TIMEOUT_MIN 100ULL
#define CONFIG_TIMEOUT_MAX (366ULL * 24 * 3600 * 1000)

struct config_setting {
	bool value;
	enum layer layer; /* who decided: LAYER_BUILTIN for the default */
	char *origin;	  /* "<file>:L:C", "--docker", or "default" */
};

/* One entry of "credentials" (global config only): where the key comes
 * from on the host and, for a name that is not built in, where it goes. */
struct config_credential {
	char *name;
	char *env;	    /* a host variable holding the key, or NULL */
	char *file;	    /* a file holding it, as written, or NULL */
	char *ca;	    /* a PEM file replacing the system store, or NULL */
	char *header;	    /* "x-api-key" or "Authorization: Bearer", or NULL */
	char *base_url_env; /* the variable inside pointing at the endpoint, or NULL */
	struct strv hosts;  /* upstreams; empty: the built-in's */
	char *origin;	    /* "<file>:L:C" */
};

struct config_credentials {
	struct config_credential *items;
	size_t len;
};

/* Where each entry of the plain lists came from, index for index:
 * "<file>:L:C" for a config file, the flag for the command line. The trust
 * rule names the project config's entries by it. */
struct config_origins {
	struct strv presets;
	struct strv secret_patterns, secret_allow, secret_skip;
	struct strv env_allow, env_block, env_set;
};

struct config {
	struct rule_list rules;	  /* ro/rw/exclude from global, project and CLI */
	struct rule_list sockets; /* unix sockets of the host let through (ro rules) */
	struct strv presets;	  /* "@x" and "!@x" operations in layer order */
	struct config_setting docker;
	struct config_setting read_only;
	struct strv secret_patterns; /* secrets.patterns; "!x" removes a default */
	struct strv secret_allow;    /* secrets.allow */
	struct strv secret_skip;     /* secrets.skip: directory names not scanned */
	struct config_setting env_filter_secrets;
	struct strv env_allow; /* env.allow: name globs always passed */
	struct strv env_block; /* env.block: name globs always dropped */
	struct strv env_set;   /* env.set as NAME=VALUE; a later NAME wins */
	struct config_setting audit;
	struct strv files;	       /* config files loaded, in order */
	struct strv notes;	       /* what each layer contributed, for --debug */
	struct command_table commands; /* merged by key; default {"git": "@git"} */
	struct network_config network;
	struct config_limits limits;
	struct config_origins origins; /* of presets, secret_* and env_* */
	struct config_credentials credentials;
	char *retention; /* gc's default --older-than (global config only), or NULL */
	/* agents.claude.command, agents.codex.command (serve's agent/run);
	 * NULL: the name, found on the sandbox's PATH. */
	char *agent_commands[2];
};

void config_init(struct config *cfg);

/* The global config's "retention" (validated), or NULL in *out when it has
 * none or there is no global config. */
int config_global_retention(char *const *envp, char **out, struct error *err);
void config_release(struct config *cfg);

/* Looks for <dir>/<stem>.json and <dir>/<stem>.jsonc. Sets *found to the one
 * that exists, or NULL when neither does; having both is an error. */
int config_find(const char *dir, const char *stem, char **found, struct error *err);

/* Reads a config file's text (at most 1 MiB), with errors that name it. The
 * trust rule hashes the same bytes that config_load_text then loads. */
int config_read_file(const char *path, char **text, size_t *len, struct error *err);
/* The same, leaving the file open in *fd (the caller closes it, also on
 * error): the trust rule tells the file apart by it from one with the same
 * bytes. */
int config_read_file_fd(const char *path, int *fd, char **text, size_t *len, struct error *err);

/* Loads one file into cfg at the given layer (LAYER_GLOBAL or
 * LAYER_PROJECT). Errors name the file, line and column. */
int config_load_file(struct config *cfg, const char *path, enum layer layer, struct error *err);

/* Loads a layer from text already in memory; `name` is used in messages. */
int config_load_text(struct config *cfg, const char *name, const char *text, size_t len,
		     enum layer layer, struct error *err);

/* Appends value to one of the plain lists and origin to its origins: every
 * entry of those lists is added through here, so that the two stay aligned. */
void config_list_add(struct strv *list, struct strv *origins, const char *value,
		     const char *origin);

/* A "sockets" entry or --socket value: one path ("~/" and relative allowed),
 * no glob: it names a socket, never a tree. */
int config_socket_validate(const char *text, struct error *err);

void config_set(struct config_setting *setting, bool value, enum layer layer, const char *origin);
void config_set_limit(struct config_limit *limit, unsigned long long value, enum layer layer,
		      const char *origin);

/* Parses a size: digits with an optional k, m or g (binary units, either
 * case, an optional trailing "b" or "ib"). On failure returns false and sets
 * *why to what is wrong. */
bool config_parse_size(const char *text, unsigned long long *bytes, const char **why);
/* "1 GiB", "64 MiB", "1536 KiB" or "123 bytes": the largest unit that is exact. */
char *config_format_size(unsigned long long bytes);

void config_set_network_mode(struct network_config *net, enum network_mode mode, enum layer layer,
			     const char *origin);
void net_list_add(struct net_list *list, const char *name, const char *address, enum layer layer,
		  const char *origin);
/* A --resolve value, NAME=ADDR[:PORT]: the name normalised, the pin in
 * its canonical text and its port (0: 80 and 443). False on a bad value. */
bool config_parse_resolve_flag(const char *text, char **name, char **pin, unsigned *port);

/* "host network", "none (loopback only)" or "filtered". */
const char *network_mode_name(enum network_mode mode);

DEFINE_CLEANUP_FUNC(struct config, config_release)
#define _cleanup_config_ _cleanup_(config_releasep)
