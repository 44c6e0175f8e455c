/* Agent Skills (agentskills.io): checking a platform's skills directory
 * against the standard's rules, and copying its valid skills into a
 * workspace's .claude/skills/. Never prints, never follows a symlink on
 * either side, and never writes outside the workspace descriptor it is given. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strv.h"

struct json_object;

/* Bounds on what a skill may hold: SKILL.md itself, the whole skill
 * directory (bytes, and entries counting directories), how deep it nests,
 * and how many skills one directory may offer. */
#define SKILL_MD_BYTES_MAX (1024 * 1024)
#define SKILL_BYTES_MAX (64ULL * 1024 * 1024)
#define SKILL_FILES_MAX 10000
#define SKILL_DEPTH_MAX 16
#define SKILLS_MAX 1000
/* A report lists at most this many errors (and says when there were more). */
#define SKILL_ERRORS_MAX 100

/* One skill directory's verdict. name is the directory's name (bytes that
 * are not printable UTF-8 shown as '?'); errors are human sentences, each
 * naming the field or file it is about; ok is errors.len == 0 (and, after
 * skills_install, that the copy is in place). */
struct skill_report {
	char *name;
	bool ok;
	struct strv errors;
};

struct skill_reports {
	struct skill_report *items;
	size_t len;
};

/* One report for every subdirectory of dir (a host path the daemon reads),
 * sorted by name; entries whose name starts with '.' are not skills and
 * are left out, so are plain files beside the skills. Fails (-1, err)
 * only when dir itself cannot be read or holds more than SKILLS_MAX
 * skills. */
int skills_validate_dir(const char *dir, struct skill_reports *out, struct error *err);

/* The rules for one SKILL.md's bytes; dirname is the skill directory's
 * name the `name` field must equal (NULL: not checked). Errors are
 * appended to *errors. */
void skills_validate_text(const char *dirname, const char *text, size_t len, struct strv *errors);

/* Copies every valid skill of dir into <workspace_fd>/.claude/skills/NAME/
 * (the whole skill directory tree), replacing an older entry of that name
 * whole, and fills out with the reports: invalid skills are skipped, and a
 * valid one whose copy failed is reported not ok with the reason.
 * workspace_fd may be O_PATH. .claude and .claude/skills are made when
 * missing; when either is a symlink or not a directory, nothing is
 * written and the call fails (ERROR_DENIED). */
int skills_install(const char *dir, int workspace_fd, struct skill_reports *out, struct error *err);

void skill_reports_release(struct skill_reports *r);

/* {"skills": [{"name", "ok", "errors": [...]}]}: skills/validate's result. */
struct json_object *skill_reports_json(const struct skill_reports *r);
