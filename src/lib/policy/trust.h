/* The trust rule for project configs: a project config (or a file named with
 * --config) that only tightens applies at once; one that loosens anything the
 * global config and the defaults decided applies only after the user approved
 * that exact content, in that very file, with `agent-sandbox trust`, from
 * outside the sandbox. An agent that writes the project config can therefore
 * never loosen its own next run, nor replay an approval the user gave for a
 * file since deleted. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "base/error.h"
#include "policy/policy.h"
#include "base/sha256.h"
#include "base/strbuf.h"
#include "base/strv.h"

enum trust_state {
	TRUST_NO_FILE,	   /* no project config */
	TRUST_TIGHTENS,	   /* it only tightens: nothing to approve */
	TRUST_APPROVED,	   /* it loosens, and this exact content was approved */
	TRUST_UNAPPROVED,  /* it loosens, and was never approved */
	TRUST_CHANGED,	   /* it loosens, and differs from the approved content */
	TRUST_REPLACED,	   /* it loosens, and is not the file approved (re-created, replaced) */
	TRUST_NOT_CHECKED, /* inside a sandbox, where the outer sandbox bounds the run */
};

/* Which file a config is, besides its bytes: a file deleted and written
 * again with the same bytes is another file, and needs its own approval.
 * Filesystems hand a freed inode number out again at once, so the inode's
 * generation (where the filesystem tells it) and birth time tell the two
 * apart; where the filesystem keeps no birth time, the change time stands
 * in (then touching the file withdraws its approval too). */
struct trust_identity {
	unsigned long long dev_major, dev_minor, ino;
	unsigned long long generation; /* 0 when the filesystem does not say */
	bool born;		       /* the stamp is the birth time, not the change time */
	long long sec;
	unsigned nsec;
};

struct trust_check {
	enum trust_state state;
	char *file;	/* the config as loaded (absolute) */
	char *key_path; /* its directory resolved, plus its own name */
	char digest[SHA256_HEX_LEN + 1];
	struct trust_identity identity;
	struct strv loosenings; /* "<file>:L:C: what it loosens" */
	struct strv origins;	/* "<file>:L:C" of each, so nothing is reported twice */
	char *stale;		/* why the approval on record no longer holds, or NULL */
	char *stale_file;	/* the file that approval was given for */
	bool withdrawn;		/* this run removed that approval from the store */
};

/* Starts tc for the config `file`: the digest of the text that loaded, its
 * key in the store and the identity of the open file fd it was read from. */
int trust_identify(struct trust_check *tc, const char *file, const char *text, size_t len, int fd,
		   struct error *err);

/* One side of the comparison: what a run would get, planned by the same
 * functions on both sides (spec/plan.c) so that neither has a setting or a
 * rule the other lacks. */
struct trust_side {
	const struct config *cfg;    /* every layer merged: settings, lists, commands */
	const struct policy *policy; /* the access table; NULL when it was refused */
};

/* Records in tc every entry of the project config (tc->file) that makes
 * `after` (with it) show more than `before` (without it), each on its
 * exposure order: paths private < hidden < ro < rw; network none <
 * filtered < host, and more hosts, ports or pinned names; commands by how
 * much the wrapper restrains; the environment and secret files filtered <
 * passed; read-only and audit on < off; docker off < on. Each line starts
 * with the entry's "<file>:L:C". cwd and home expand "rw" rules, which
 * loosen outside the project even where nothing exists yet. */
void trust_compare(struct trust_check *tc, const struct trust_side *before,
		   const struct trust_side *after, const char *cwd, const char *home);

/* Sets tc->state from the findings and the trust store in store_dir, and
 * tc->stale when the store holds an approval for this directory's config
 * (either name) or this --config file that no longer holds: given for
 * other bytes or another file. */
void trust_decide(struct trust_check *tc, const char *store_dir, bool inside);

/* For a directory without a project config: sets tc->stale when the store
 * still holds an approval for one there. */
void trust_find_gone(struct trust_check *tc, const char *dir, const char *store_dir);

/* Removes the approval tc->stale names from the store: a real run does, so
 * that re-creating the file, even byte for byte, needs a new approval. */
int trust_withdraw(struct trust_check *tc, const char *store_dir, struct error *err);

/* The refusal for TRUST_UNAPPROVED and TRUST_CHANGED: every loosening and the
 * command that approves the file. Returns -1. */
int trust_refuse(const struct trust_check *tc, struct error *err);

/* One line per fact, for `policy` and --debug. */
void trust_describe(const struct trust_check *tc, struct strbuf *sb);

/* "trust: withdrew the approval of ...: why", when this run did; a run
 * prints it on stderr. */
void trust_describe_withdrawal(const struct trust_check *tc, struct strbuf *sb);

/* $XDG_STATE_HOME/agent-sandbox/trusted: under the audit directory, which is
 * hidden inside every sandbox. NULL when neither variable nor home is known. */
char *trust_store_dir(char *const *envp, const char *home);

/* Creates the state directory (0700) when missing. A real run calls it so
 * that the directory exists to be hidden inside: otherwise an agent with a
 * writable parent could plant an approval there for the next run. */
int trust_store_prepare(const char *state_dir, struct error *err);

/* What `agent-sandbox trust` recorded: the file's key and its digest. */
struct trust_approval {
	char *key;
	char digest[SHA256_HEX_LEN + 1];
};

/* Approves the config at arg: a config file or a directory holding a
 * project config (NULL: the working directory's). Refused inside a
 * sandbox. The caller frees out->key. */
int trust_approve(const char *arg, char *const *envp, struct trust_approval *out,
		  struct error *err);

void trust_check_release(struct trust_check *tc);
