/* Unit tests for Agent Skills: each SKILL.md rule valid and broken (a
 * table), then real skills directories copied into real workspaces: nested
 * trees, replacement of an older copy, symlinks, FIFOs and limits in the
 * source, and every symlink an agent can plant in the destination, checked
 * from outside (nothing may appear beside the workspace). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>

#include "agent/skills.h"
#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "unit.h"

#define FM(body) "---\n" body "---\n# Instructions\n\nDo the thing.\n"
#define NAME_DESC "name: pdf-tools\ndescription: Reads PDF files.\n"

struct text_case {
	const char *what;
	const char *dirname; /* NULL: "pdf-tools" */
	const char *text;
	size_t errors; /* how many errors are expected: 0 is valid */
	const char *expect[3];
};

static const struct text_case text_cases[] = {
    {"minimal skill", NULL, FM(NAME_DESC), 0, {NULL}},
    {"every optional field",
     NULL,
     FM(NAME_DESC "license: Apache-2.0\ncompatibility: Needs poppler-utils\n"
		  "metadata:\n  author: example-org\n  version: \"1.0\"\n"
		  "allowed-tools: Bash(git:*) Read\n"),
     0,
     {NULL}},
    {"CRLF lines and blanks after the delimiters",
     NULL,
     "--- \r\nname: pdf-tools\r\ndescription: Reads PDFs.\r\n---\t\r\nbody\r\n",
     0,
     {NULL}},
    {"block, quoted and !!str values are strings",
     NULL,
     FM("name: 'pdf-tools'\ndescription: >\n  Reads PDF files,\n  folded.\n"
	"license: !!str 2\nmetadata: {version: \"1.0\", year: '2024', when: !!str 2024-01-01}\n"),
     0,
     {NULL}},
    {"empty metadata", NULL, FM(NAME_DESC "metadata: {}\n"), 0, {NULL}},
    {"a version-like plain string", NULL, FM(NAME_DESC "metadata:\n  version: 1.2.3\n"), 0, {NULL}},
    {"no body after the front matter", NULL, "---\n" NAME_DESC "---", 0, {NULL}},

    /* name */
    {"name too long",
     "a234567890123456789012345678901234567890123456789012345678901234x",
     FM("name: a234567890123456789012345678901234567890123456789012345678901234x\n"
	"description: d\n"),
     1,
     {"name: is 65 characters long; at most 64"}},
    {"name uppercase",
     "PDF-tools",
     FM("name: PDF-tools\ndescription: d\n"),
     1,
     {"name: may only hold lowercase letters a-z, digits and hyphens"}},
    {"name with an underscore",
     "pdf_tools",
     FM("name: pdf_tools\ndescription: d\n"),
     1,
     {"name: may only hold"}},
    {"name leading hyphen",
     "-pdf",
     FM("name: \"-pdf\"\ndescription: d\n"),
     1,
     {"name: must not start or end with a hyphen"}},
    {"name trailing hyphen",
     "pdf-",
     FM("name: pdf-\ndescription: d\n"),
     1,
     {"name: must not start or end with a hyphen"}},
    {"name double hyphen",
     "pdf--tools",
     FM("name: pdf--tools\ndescription: d\n"),
     1,
     {"name: must not hold two hyphens in a row"}},
    {"name differs from the directory",
     "pdf-tool",
     FM(NAME_DESC),
     1,
     {"SKILL.md:2: name: \"pdf-tools\" does not match the directory name \"pdf-tool\""}},
    {"name empty", NULL, FM("name: ''\ndescription: d\n"), 1, {"name: is empty"}},
    {"name missing",
     NULL,
     FM("description: d\n"),
     1,
     {"SKILL.md: name: required field is missing"}},
    {"name a number",
     "12",
     FM("name: 12\ndescription: d\n"),
     1,
     {"name: 12 is read as a number, not a string; quote it"}},
    {"name a YAML 1.1 boolean",
     "y",
     FM("name: y\ndescription: d\n"),
     1,
     {"name: y is read as a boolean"}},

    /* description */
    {"description missing",
     NULL,
     FM("name: pdf-tools\n"),
     1,
     {"description: required field is missing"}},
    {"description empty",
     NULL,
     FM("name: pdf-tools\ndescription: \"\"\n"),
     1,
     {"SKILL.md:3: description: is empty"}},
    {"description blank",
     NULL,
     FM("name: pdf-tools\ndescription: '   '\n"),
     1,
     {"description: is empty"}},
    {"description null",
     NULL,
     FM("name: pdf-tools\ndescription:\n"),
     1,
     {"description: has no value (null)"}},
    {"description a tilde",
     NULL,
     FM("name: pdf-tools\ndescription: ~\n"),
     1,
     {"description: ~ is read as null"}},
    {"description a boolean",
     NULL,
     FM("name: pdf-tools\ndescription: yes\n"),
     1,
     {"description: yes is read as a boolean"}},
    {"description a date",
     NULL,
     FM("name: pdf-tools\ndescription: 2024-01-31\n"),
     1,
     {"description: 2024-01-31 is read as a date"}},
    {"description a float",
     NULL,
     FM("name: pdf-tools\ndescription: .5e3\n"),
     1,
     {"is read as a number"}},
    {"description a list",
     NULL,
     FM("name: pdf-tools\ndescription: [a, b]\n"),
     1,
     {"description: must be a string, not a list"}},
    {"description with a NUL",
     NULL,
     FM("name: pdf-tools\ndescription: \"a\\0b\"\n"),
     1,
     {"description: contains a NUL character"}},

    /* optional fields */
    {"compatibility empty",
     NULL,
     FM(NAME_DESC "compatibility: ''\n"),
     1,
     {"compatibility: is empty"}},
    {"license a number", NULL, FM(NAME_DESC "license: 2\n"), 1, {"license: 2 is read as a number"}},
    {"metadata value a number",
     NULL,
     FM(NAME_DESC "metadata:\n  version: 1.0\n"),
     1,
     {"SKILL.md:5: metadata.version: 1.0 is read as a number, not a string; quote it"}},
    {"metadata value a mapping",
     NULL,
     FM(NAME_DESC "metadata:\n  author:\n    name: x\n"),
     1,
     {"metadata.author: must be a string, not a mapping"}},
    {"metadata value a list",
     NULL,
     FM(NAME_DESC "metadata:\n  tags: [a, b]\n"),
     1,
     {"metadata.tags: must be a string, not a list"}},
    {"metadata a list",
     NULL,
     FM(NAME_DESC "metadata: [a]\n"),
     1,
     {"metadata: must be a mapping of strings to strings"}},
    {"metadata a string",
     NULL,
     FM(NAME_DESC "metadata: author\n"),
     1,
     {"metadata: must be a mapping of strings to strings"}},
    {"metadata null", NULL, FM(NAME_DESC "metadata:\n"), 1, {"metadata: has no value (null)"}},
    {"metadata key a number",
     NULL,
     FM(NAME_DESC "metadata:\n  1: one\n"),
     1,
     {"metadata: a key: 1 is read as a number"}},
    {"metadata key twice",
     NULL,
     FM(NAME_DESC "metadata:\n  a: one\n  a: two\n"),
     1,
     {"metadata.a: the key appears twice"}},
    {"allowed-tools a list",
     NULL,
     FM(NAME_DESC "allowed-tools:\n  - Bash\n  - Read\n"),
     1,
     {"allowed-tools: must be a string, not a list"}},
    {"unknown field",
     NULL,
     FM(NAME_DESC "version: \"1.0\"\n"),
     1,
     {"SKILL.md:4: version: unknown field; the standard allows name, description"}},
    {"unknown field with a list value",
     NULL,
     FM(NAME_DESC "tags: [a, b]\n"),
     1,
     {"tags: unknown field"}},

    /* the block and the document */
    {"no front matter",
     NULL,
     "# PDF tools\n\nname: pdf-tools\n",
     1,
     {"SKILL.md:1: does not start with a front matter block"}},
    {"empty file", NULL, "", 1, {"does not start with a front matter block"}},
    {"a delimiter with text after it",
     NULL,
     "--- name: pdf-tools\n---\n",
     1,
     {"does not start with a front matter block"}},
    {"unterminated front matter",
     NULL,
     "---\n" NAME_DESC "body without an end\n",
     1,
     {"the front matter block is not closed by a line \"---\""}},
    {"empty front matter", NULL, "---\n---\nbody\n", 1, {"front matter is empty"}},
    {"comment-only front matter", NULL, "---\n# nothing\n---\n", 1, {"front matter is empty"}},
    {"duplicate key",
     NULL,
     FM(NAME_DESC "name: pdf-tools\n"),
     1,
     {"SKILL.md:4: name: the field appears twice"}},
    {"anchor and alias",
     NULL,
     FM("name: pdf-tools\ndescription: &d Reads PDF files.\nlicense: *d\n"),
     2,
     {"description: anchors (&name) are not allowed", "license: aliases (*name) are not allowed"}},
    {"alias as a key",
     NULL,
     FM(NAME_DESC "metadata:\n  a: &k b\n  *k : c\n"),
     2,
     {"anchors (&name) are not allowed", "aliases (*name) are not allowed"}},
    {"a tag",
     NULL,
     FM("name: pdf-tools\ndescription: !!binary aGk=\n"),
     1,
     {"description: tags are not allowed (only !!str)"}},
    {"a list, not a mapping",
     NULL,
     "---\n- name\n- description\n---\n",
     1,
     {"front matter must be a mapping of fields to values"}},
    {"a scalar, not a mapping",
     NULL,
     "---\njust text\n---\n",
     1,
     {"front matter must be a mapping"}},
    {"two documents",
     NULL,
     "---\n" NAME_DESC "--- {other: doc}\n---\n",
     1,
     {"SKILL.md:4: front matter holds more than one YAML document"}},
    {"not YAML",
     NULL,
     FM("name: pdf-tools\ndescription: \"unclosed\n"),
     1,
     {"front matter is not valid YAML"}},
    {"not UTF-8",
     NULL,
     FM("name: pdf-tools\ndescription: caf\xe9\n"),
     1,
     {"front matter is not valid YAML"}},

    /* collected, not just the first */
    {"every problem reported",
     "Bad",
     FM("name: Bad\nversion: 2\nmetadata:\n  num: 1\n"),
     4,
     {"name: may only hold", "version: unknown field", "metadata.num: 1 is read as a number"}},
};

static void validate_text_applies_each_rule(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(text_cases); i++) {
		const struct text_case *c = &text_cases[i];
		_cleanup_strv_ struct strv errors = STRV_INIT;
		skills_validate_text(c->dirname ? c->dirname : "pdf-tools", c->text,
				     strlen(c->text), &errors);
		struct strbuf all = STRBUF_INIT;
		for (size_t k = 0; k < errors.len; k++)
			strbuf_addf(&all, "%s | ", errors.items[k]);
		if (errors.len != c->errors)
			unit_fail("%s: %zu errors, expected %zu: %s", c->what, errors.len,
				  c->errors, strbuf_str(&all));
		for (size_t k = 0; k < ARRAY_SIZE(c->expect) && c->expect[k]; k++)
			unit_assert_contains(strbuf_str(&all), c->expect[k], "%s", c->what);
		strbuf_release(&all);
	}
}

static char *repeat(const char *unit, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		strbuf_addstr(&sb, unit);
	return strbuf_detach(&sb);
}

/* Lengths count characters, not bytes, up to each bound exactly. */
static void validate_text_counts_characters_to_each_bound(void **state)
{
	(void)state;
	static const struct {
		const char *field, *unit;
		size_t n;
		bool ok;
	} cases[] = {
	    {"description", "a", 1024, true},
	    {"description", "a", 1025, false},
	    {"description", "\xc3\xa9", 1024, true},
	    {"description", "\xc3\xa9", 1025, false},
	    {"compatibility", "a", 500, true},
	    {"compatibility", "a", 501, false},
	    {"name", "a", 64, true},
	    {"name", "a", 65, false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *value = repeat(cases[i].unit, cases[i].n);
		bool is_name = !strcmp(cases[i].field, "name");
		_cleanup_free_ char *text =
		    is_name ? xasprintf("---\nname: %s\ndescription: d\n---\n", value)
		    : !strcmp(cases[i].field, "description")
			? xasprintf("---\nname: s\ndescription: \"%s\"\n---\n", value)
			: xasprintf("---\nname: s\ndescription: d\n%s: \"%s\"\n---\n",
				    cases[i].field, value);
		_cleanup_strv_ struct strv errors = STRV_INIT;
		skills_validate_text(is_name ? value : "s", text, strlen(text), &errors);
		if ((errors.len == 0) != cases[i].ok)
			unit_fail("%s of %zu x \"%s\": %zu errors (%s)", cases[i].field, cases[i].n,
				  cases[i].unit, errors.len, errors.len ? errors.items[0] : "");
		if (!cases[i].ok) {
			_cleanup_free_ char *expect =
			    xasprintf("%s: is %zu characters long; at most %zu are allowed",
				      cases[i].field, cases[i].n, cases[i].n - 1);
			unit_assert_contains(errors.items[0], expect, "%s", cases[i].field);
		}
	}
}

/* A hostile SKILL.md cannot grow a report without bound, nor make the
 * duplicate-key search quadratic in its size. */
static void validate_text_caps_its_errors_and_metadata_keys(void **state)
{
	(void)state;
	struct strbuf text = STRBUF_INIT;
	strbuf_addstr(&text, "---\n" NAME_DESC);
	for (int i = 0; i < 500; i++)
		strbuf_addf(&text, "unknown%d: x\n", i);
	strbuf_addstr(&text, "---\n");
	_cleanup_strv_ struct strv errors = STRV_INIT;
	skills_validate_text("pdf-tools", text.buf, text.len, &errors);
	assert_int_equal(errors.len, SKILL_ERRORS_MAX + 1);
	assert_string_equal(errors.items[SKILL_ERRORS_MAX],
			    "SKILL.md: more than 100 problems; the rest are not listed");

	strbuf_reset(&text);
	strbuf_addstr(&text, "---\n" NAME_DESC "metadata:\n");
	for (int i = 0; i < 1500; i++)
		strbuf_addf(&text, "  key%d: x\n", i);
	strbuf_addstr(&text, "---\n");
	_cleanup_strv_ struct strv errors2 = STRV_INIT;
	skills_validate_text("pdf-tools", text.buf, text.len, &errors2);
	assert_int_equal(errors2.len, 1);
	unit_assert_contains(errors2.items[0], "metadata: more than 1000 keys", "metadata keys");
	strbuf_release(&text);
}

/* ---- skills directories on disk ---- */

#define SKILL_MD(name) "---\nname: " name "\ndescription: The " name " skill.\n---\nBody.\n"

static void write_mode(const char *dir, const char *rel, const char *text, mode_t mode)
{
	unit_write(dir, rel, text);
	_cleanup_free_ char *p = unit_path(dir, rel);
	if (chmod(p, mode) < 0)
		unit_fail("chmod %s: %s", p, strerror(errno));
}

static char *read_text(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = unit_path(dir, rel);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb);
}

static mode_t mode_of(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = unit_path(dir, rel);
	struct stat st;
	if (lstat(p, &st) < 0)
		return (mode_t)-1;
	return st.st_mode;
}

static bool exists(const char *dir, const char *rel)
{
	return mode_of(dir, rel) != (mode_t)-1;
}

/* The names in dir, sorted, joined by ' ' ("" when empty or missing). */
static char *names_in(const char *dir, const char *rel)
{
	_cleanup_free_ char *p = unit_path(dir, rel);
	struct dirent **list = NULL;
	int n = scandir(p, &list, NULL, alphasort);
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < n; i++) {
		if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, ".."))
			strbuf_addf(&sb, "%s%s", sb.len ? " " : "", list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return strbuf_detach(&sb);
}

static const struct skill_report *report_of(const struct skill_reports *r, const char *name)
{
	for (size_t i = 0; i < r->len; i++)
		if (!strcmp(r->items[i].name, name))
			return &r->items[i];
	unit_fail("no report for %s", name);
	return NULL;
}

static char *joined_errors(const struct skill_report *r)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < r->errors.len; i++)
		strbuf_addf(&sb, "%s | ", r->errors.items[i]);
	return strbuf_detach(&sb);
}

static void assert_report(const struct skill_reports *r, const char *name, bool ok,
			  const char *expect)
{
	const struct skill_report *s = report_of(r, name);
	_cleanup_free_ char *all = joined_errors(s);
	if (s->ok != ok)
		unit_fail("%s: ok is %d, expected %d (%s)", name, s->ok, ok, all);
	if (expect)
		unit_assert_contains(all, expect, "%s", name);
	if (ok && s->errors.len)
		unit_fail("%s: ok with errors %s", name, all);
}

/* d/src: the skills; d/ws: the workspace; d/outside: beside it, where
 * nothing may ever be written. */
struct dirs {
	char *d;
	int ws;
};

static struct dirs make_dirs(const char *d)
{
	unit_mkdir(d, "src");
	unit_mkdir(d, "ws");
	unit_mkdir(d, "outside");
	_cleanup_free_ char *ws = unit_path(d, "ws");
	int fd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		unit_fail("open %s: %s", ws, strerror(errno));
	return (struct dirs){.d = (char *)d, .ws = fd};
}

static void install(struct dirs *x, struct skill_reports *out)
{
	_cleanup_free_ char *src = unit_path(x->d, "src");
	_cleanup_error_ struct error err = ERROR_INIT;
	if (skills_install(src, x->ws, out, &err) < 0)
		unit_fail("skills_install: %s", err.msg);
}

static void assert_outside_empty(const struct dirs *x)
{
	_cleanup_free_ char *names = names_in(x->d, "outside");
	if (*names)
		unit_fail("written outside the workspace: %s", names);
}

static void install_copies_valid_skills_with_their_trees(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	unit_mkdir(d, "src/pdf-tools");
	unit_write(d, "src/pdf-tools/SKILL.md", SKILL_MD("pdf-tools"));
	unit_mkdir(d, "src/pdf-tools/scripts");
	write_mode(d, "src/pdf-tools/scripts/run.sh", "#!/bin/sh\necho run\n", 04755);
	write_mode(d, "src/pdf-tools/scripts/lib.py", "pass\n", 0600);
	unit_mkdir(d, "src/pdf-tools/references");
	unit_write(d, "src/pdf-tools/references/REFERENCE.md", "# Reference\n");
	unit_mkdir(d, "src/pdf-tools/assets");
	unit_mkdir(d, "src/pdf-tools/assets/a");
	unit_mkdir(d, "src/pdf-tools/assets/a/b");
	write_mode(d, "src/pdf-tools/assets/a/b/template.txt", "template\n", 0666);
	unit_mkdir(d, "src/pdf-tools/empty");
	unit_mkdir(d, "src/second");
	unit_write(d, "src/second/SKILL.md", SKILL_MD("second"));
	/* Not skills: a plain file, a hidden directory. */
	unit_write(d, "src/README.md", "skills\n");
	unit_mkdir(d, "src/.git");

	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	install(&x, &r);
	assert_int_equal(r.len, 2);
	assert_string_equal(r.items[0].name, "pdf-tools");
	assert_string_equal(r.items[1].name, "second");
	assert_report(&r, "pdf-tools", true, NULL);
	assert_report(&r, "second", true, NULL);

	const char *base = "ws/.claude/skills/pdf-tools";
	_cleanup_free_ char *md = read_text(d, "ws/.claude/skills/pdf-tools/SKILL.md");
	assert_non_null(md);
	assert_string_equal(md, SKILL_MD("pdf-tools"));
	_cleanup_free_ char *run = read_text(d, "ws/.claude/skills/pdf-tools/scripts/run.sh");
	assert_non_null(run);
	assert_string_equal(run, "#!/bin/sh\necho run\n");
	_cleanup_free_ char *tpl =
	    read_text(d, "ws/.claude/skills/pdf-tools/assets/a/b/template.txt");
	assert_non_null(tpl);
	assert_string_equal(tpl, "template\n");
	/* The executable bit only: setuid gone, group/other writes gone. */
	assert_int_equal(mode_of(d, "ws/.claude/skills/pdf-tools/scripts/run.sh") & 07777, 0755);
	assert_int_equal(mode_of(d, "ws/.claude/skills/pdf-tools/scripts/lib.py") & 07777, 0644);
	assert_int_equal(mode_of(d, "ws/.claude/skills/pdf-tools/assets/a/b/template.txt") & 07777,
			 0644);
	assert_int_equal(mode_of(d, "ws/.claude/skills/pdf-tools/assets") & 07777, 0755);
	assert_int_equal(mode_of(d, base) & 07777, 0755);
	assert_true(S_ISDIR(mode_of(d, "ws/.claude/skills/pdf-tools/empty")));
	_cleanup_free_ char *top = names_in(d, base);
	assert_string_equal(top, "SKILL.md assets empty references scripts");
	/* No temporary directory left behind. */
	_cleanup_free_ char *skills = names_in(d, "ws/.claude/skills");
	assert_string_equal(skills, "pdf-tools second");
	close(x.ws);
}

static void install_skips_invalid_skills(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	unit_mkdir(d, "src/good");
	unit_write(d, "src/good/SKILL.md", SKILL_MD("good"));
	unit_mkdir(d, "src/mismatch");
	unit_write(d, "src/mismatch/SKILL.md", SKILL_MD("other-name"));
	unit_mkdir(d, "src/no-skill-md");
	unit_write(d, "src/no-skill-md/README.md", "no SKILL.md\n");

	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	install(&x, &r);
	assert_int_equal(r.len, 3);
	assert_report(&r, "good", true, NULL);
	assert_report(&r, "mismatch", false, "does not match the directory name \"mismatch\"");
	assert_report(&r, "no-skill-md", false,
		      "SKILL.md: is missing; a skill is a directory holding SKILL.md");
	_cleanup_free_ char *skills = names_in(d, "ws/.claude/skills");
	assert_string_equal(skills, "good");
	close(x.ws);
}

static void install_replaces_an_older_copy_whole(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	unit_mkdir(d, "src/pdf-tools");
	unit_write(d, "src/pdf-tools/SKILL.md", SKILL_MD("pdf-tools"));
	unit_write(d, "src/pdf-tools/new.txt", "new\n");
	unit_mkdir(d, "src/notes");
	unit_write(d, "src/notes/SKILL.md", SKILL_MD("notes"));
	unit_mkdir(d, "src/tool");
	unit_write(d, "src/tool/SKILL.md", SKILL_MD("tool"));
	unit_mkdir(d, "ws/.claude");
	unit_mkdir(d, "ws/.claude/skills");
	unit_mkdir(d, "ws/.claude/skills/pdf-tools");
	unit_write(d, "ws/.claude/skills/pdf-tools/SKILL.md", "old\n");
	unit_mkdir(d, "ws/.claude/skills/pdf-tools/old");
	unit_write(d, "ws/.claude/skills/pdf-tools/old/stale.txt", "stale\n");
	/* Planted by the agent: a symlink and a file in the place of a skill. */
	unit_write(d, "outside/keep.txt", "keep\n");
	_cleanup_free_ char *outside = unit_path(d, "outside");
	unit_symlink(outside, d, "ws/.claude/skills/notes");
	unit_write(d, "ws/.claude/skills/tool", "a file\n");
	unit_mkdir(d, "ws/.claude/skills/agent-own");

	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	install(&x, &r);
	assert_report(&r, "pdf-tools", true, NULL);
	assert_report(&r, "notes", true, NULL);
	assert_report(&r, "tool", true, NULL);
	_cleanup_free_ char *names = names_in(d, "ws/.claude/skills/pdf-tools");
	assert_string_equal(names, "SKILL.md new.txt");
	_cleanup_free_ char *md = read_text(d, "ws/.claude/skills/pdf-tools/SKILL.md");
	assert_string_equal(md, SKILL_MD("pdf-tools"));
	assert_true(S_ISDIR(mode_of(d, "ws/.claude/skills/notes")));
	assert_true(S_ISDIR(mode_of(d, "ws/.claude/skills/tool")));
	/* The symlink was replaced, never followed: outside is as it was. */
	_cleanup_free_ char *out = names_in(d, "outside");
	assert_string_equal(out, "keep.txt");
	/* What the agent made under another name stays; nothing else is left. */
	_cleanup_free_ char *skills = names_in(d, "ws/.claude/skills");
	assert_string_equal(skills, "agent-own notes pdf-tools tool");
	close(x.ws);
}

static void source_symlinks_and_special_files_refuse_the_skill(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	unit_mkdir(d, "src/inner-link");
	unit_write(d, "src/inner-link/SKILL.md", SKILL_MD("inner-link"));
	unit_mkdir(d, "src/inner-link/scripts");
	unit_symlink("/etc/passwd", d, "src/inner-link/scripts/passwd");
	unit_mkdir(d, "src/md-link");
	unit_write(d, "src/real.md", SKILL_MD("md-link"));
	unit_symlink("../real.md", d, "src/md-link/SKILL.md");
	unit_mkdir(d, "src/real-dir");
	unit_write(d, "src/real-dir/SKILL.md", SKILL_MD("dir-link"));
	unit_symlink("real-dir", d, "src/dir-link");
	unit_mkdir(d, "src/with-fifo");
	unit_write(d, "src/with-fifo/SKILL.md", SKILL_MD("with-fifo"));
	_cleanup_free_ char *fifo = unit_path(d, "src/with-fifo/pipe");
	if (mkfifo(fifo, 0600) < 0)
		unit_fail("mkfifo: %s", strerror(errno));
	unit_mkdir(d, "src/fifo-md");
	_cleanup_free_ char *fifo_md = unit_path(d, "src/fifo-md/SKILL.md");
	if (mkfifo(fifo_md, 0600) < 0)
		unit_fail("mkfifo: %s", strerror(errno));

	unit_mkdir(d, "src/links");
	unit_write(d, "src/links/SKILL.md", SKILL_MD("links"));
	for (int i = 0; i < 300; i++) {
		_cleanup_free_ char *rel = xasprintf("src/links/l%03d", i);
		unit_symlink("/etc/passwd", d, rel);
	}

	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	install(&x, &r);
	assert_report(&r, "links", false, "more problems in the skill's files are not listed");
	assert_int_equal(report_of(&r, "links")->errors.len, SKILL_ERRORS_MAX + 1);
	assert_report(&r, "inner-link", false, "scripts/passwd: is a symlink");
	assert_report(&r, "md-link", false, "SKILL.md: is a symlink");
	assert_report(&r, "dir-link", false, "the skill directory is a symlink");
	assert_report(&r, "with-fifo", false, "pipe: is a device, FIFO or socket");
	assert_report(&r, "fifo-md", false, "SKILL.md: is not a regular file");
	assert_report(&r, "real-dir", false, "does not match the directory name");
	_cleanup_free_ char *ws = names_in(d, "ws");
	assert_string_equal(ws, "");
	close(x.ws);
}

static void source_limits_refuse_the_skill(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	/* Directories nested one deeper than allowed. */
	unit_mkdir(d, "src/deep");
	unit_write(d, "src/deep/SKILL.md", SKILL_MD("deep"));
	struct strbuf rel = STRBUF_INIT;
	strbuf_addstr(&rel, "src/deep");
	for (int i = 0; i <= SKILL_DEPTH_MAX; i++) {
		strbuf_addstr(&rel, "/d");
		unit_mkdir(d, strbuf_str(&rel));
	}
	strbuf_release(&rel);
	/* Exactly as deep as allowed. */
	unit_mkdir(d, "src/just-deep");
	unit_write(d, "src/just-deep/SKILL.md", SKILL_MD("just-deep"));
	strbuf_addstr(&rel, "src/just-deep");
	for (int i = 0; i < SKILL_DEPTH_MAX; i++) {
		strbuf_addstr(&rel, "/d");
		unit_mkdir(d, strbuf_str(&rel));
	}
	strbuf_addstr(&rel, "/f");
	unit_write(d, strbuf_str(&rel), "deepest\n");
	strbuf_release(&rel);
	/* Larger than a skill may be, without the bytes (sparse). */
	unit_mkdir(d, "src/huge");
	unit_write(d, "src/huge/SKILL.md", SKILL_MD("huge"));
	_cleanup_free_ char *big = unit_path(d, "src/huge/big.bin");
	int fd = open(big, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)SKILL_BYTES_MAX) < 0)
		unit_fail("sparse file: %s", strerror(errno));
	close(fd);
	/* A SKILL.md larger than 1 MiB. */
	unit_mkdir(d, "src/big-md");
	_cleanup_free_ char *pad = repeat("x", SKILL_MD_BYTES_MAX);
	_cleanup_free_ char *md = xasprintf("%s%s\n", SKILL_MD("big-md"), pad);
	unit_write(d, "src/big-md/SKILL.md", md);
	/* More entries than a skill may hold. */
	unit_mkdir(d, "src/many");
	unit_write(d, "src/many/SKILL.md", SKILL_MD("many"));
	_cleanup_free_ char *many = unit_path(d, "src/many");
	int dfd = open(many, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (int i = 0; i < SKILL_FILES_MAX; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%05d", i);
		int f = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (f < 0)
			unit_fail("creating %s: %s", name, strerror(errno));
		close(f);
	}
	close(dfd);

	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	install(&x, &r);
	assert_report(&r, "deep", false, "nests more than 16 directories deep");
	assert_report(&r, "just-deep", true, NULL);
	assert_report(&r, "huge", false, "the skill is larger than 64 MiB");
	assert_report(&r, "big-md", false, "SKILL.md: is larger than 1 MiB");
	assert_report(&r, "many", false, "the skill holds more than 10000 files and directories");
	_cleanup_free_ char *skills = names_in(d, "ws/.claude/skills");
	assert_string_equal(skills, "just-deep");
	close(x.ws);
}

/* A daemon run as root gives what it makes to the workspace's owner, or
 * the sandbox, run as that owner, could not change or remove the copy. */
static void install_as_root_gives_the_copy_to_the_workspace_owner(void **state)
{
	const char *d = *state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	struct dirs x = make_dirs(d);
	const uid_t uid = 54321;
	const gid_t gid = 54322;
	_cleanup_free_ char *ws = unit_path(d, "ws");
	if (chown(ws, uid, gid) < 0)
		unit_fail("chown: %s", strerror(errno));
	unit_mkdir(d, "src/pdf-tools");
	unit_write(d, "src/pdf-tools/SKILL.md", SKILL_MD("pdf-tools"));
	unit_mkdir(d, "src/pdf-tools/scripts");
	unit_write(d, "src/pdf-tools/scripts/run.sh", "echo\n");
	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	install(&x, &r);
	assert_report(&r, "pdf-tools", true, NULL);
	static const char *const made[] = {
	    "ws/.claude",
	    "ws/.claude/skills",
	    "ws/.claude/skills/pdf-tools",
	    "ws/.claude/skills/pdf-tools/SKILL.md",
	    "ws/.claude/skills/pdf-tools/scripts",
	    "ws/.claude/skills/pdf-tools/scripts/run.sh",
	};
	for (size_t i = 0; i < ARRAY_SIZE(made); i++) {
		_cleanup_free_ char *p = unit_path(d, made[i]);
		struct stat st;
		if (lstat(p, &st) < 0)
			unit_fail("%s: %s", made[i], strerror(errno));
		if (st.st_uid != uid || st.st_gid != gid)
			unit_fail("%s is owned by %u:%u", made[i], st.st_uid, st.st_gid);
	}
	close(x.ws);
}

/* Each symlink an agent can plant on the way to .claude/skills/: the
 * install refuses (or replaces the last one), and nothing appears outside. */
static void planted_destination_symlinks_write_nothing_outside(void **state)
{
	const char *d = *state;
	static const struct {
		const char *what;
		const char *mkdirs[2];
		const char *link; /* made pointing at outside/ */
		bool refused;
	} cases[] = {
	    {".claude a symlink", {NULL}, "ws/.claude", true},
	    {".claude/skills a symlink", {"ws/.claude", NULL}, "ws/.claude/skills", true},
	    {".claude/skills/NAME a symlink",
	     {"ws/.claude", "ws/.claude/skills"},
	     "ws/.claude/skills/pdf-tools",
	     false},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *sub = xasprintf("%s/case%zu", d, i);
		if (mkdir(sub, 0755) < 0)
			unit_fail("mkdir: %s", strerror(errno));
		struct dirs x = make_dirs(sub);
		unit_mkdir(sub, "src/pdf-tools");
		unit_write(sub, "src/pdf-tools/SKILL.md", SKILL_MD("pdf-tools"));
		for (size_t k = 0; k < ARRAY_SIZE(cases[i].mkdirs) && cases[i].mkdirs[k]; k++)
			unit_mkdir(sub, cases[i].mkdirs[k]);
		_cleanup_free_ char *outside = unit_path(sub, "outside");
		unit_symlink(outside, sub, cases[i].link);

		_cleanup_free_ char *src = unit_path(sub, "src");
		_cleanup_(skill_reports_release) struct skill_reports r = {0};
		_cleanup_error_ struct error err = ERROR_INIT;
		int rc = skills_install(src, x.ws, &r, &err);
		if (cases[i].refused) {
			if (rc != -1 || err.kind != ERROR_DENIED)
				unit_fail("%s: not refused (%d)", cases[i].what, rc);
			unit_assert_contains(err.msg, "is a symlink or not a directory", "%s",
					     cases[i].what);
			assert_int_equal(r.len, 0);
		} else {
			if (rc != 0)
				unit_fail("%s: %s", cases[i].what, err.msg);
			assert_report(&r, "pdf-tools", true, NULL);
			assert_true(S_ISDIR(mode_of(sub, cases[i].link)));
		}
		assert_outside_empty(&x);
		close(x.ws);
	}
}

static void a_file_in_place_of_claude_is_refused_and_kept(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	unit_mkdir(d, "src/pdf-tools");
	unit_write(d, "src/pdf-tools/SKILL.md", SKILL_MD("pdf-tools"));
	unit_write(d, "ws/.claude", "not a directory\n");
	_cleanup_free_ char *src = unit_path(d, "src");
	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(skills_install(src, x.ws, &r, &err), -1);
	assert_int_equal(err.kind, ERROR_DENIED);
	unit_assert_contains(err.msg, "the workspace's .claude is a symlink or not a directory",
			     "file .claude");
	_cleanup_free_ char *kept = read_text(d, "ws/.claude");
	assert_string_equal(kept, "not a directory\n");
	close(x.ws);
}

/* No valid skill: the workspace is not touched at all. */
static void install_without_valid_skills_makes_nothing(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	unit_mkdir(d, "src/bad");
	unit_write(d, "src/bad/SKILL.md", "no front matter\n");
	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	install(&x, &r);
	assert_report(&r, "bad", false, "does not start with a front matter block");
	assert_false(exists(d, "ws/.claude"));
	close(x.ws);
}

/* The racer's calls fail often, by design: a lost race is its normal case. */
static void racing(int r)
{
	(void)r;
}

struct racer {
	const char *d;
	atomic_bool stop;
};

/* Puts a symlink to outside/ in the place of dir for a moment, the
 * agent's side of a race; dir comes back afterwards (whatever an install
 * made there meanwhile is moved aside first). */
static void flip(const char *dir, const char *outside)
{
	_cleanup_free_ char *aside = xasprintf("%s-aside", dir);
	racing(rename(dir, aside));
	racing(symlink(outside, dir));
	usleep(50);
	racing(unlink(dir));
	if (rename(aside, dir) < 0) {
		static atomic_int made;
		_cleanup_free_ char *moved =
		    xasprintf("%s-made-%d", dir, atomic_fetch_add(&made, 1));
		racing(rename(dir, moved));
		racing(rename(aside, dir));
	}
	usleep(50);
}

/* .claude, then .claude/skills, become symlinks to outside/ and back, as
 * fast as the agent can. */
static void *flip_links(void *arg)
{
	struct racer *r = arg;
	_cleanup_free_ char *claude = unit_path(r->d, "ws/.claude");
	_cleanup_free_ char *skills = unit_path(r->d, "ws/.claude/skills");
	_cleanup_free_ char *outside = unit_path(r->d, "outside");
	while (!atomic_load(&r->stop)) {
		flip(claude, outside);
		flip(skills, outside);
	}
	return NULL;
}

static void racing_symlink_swaps_never_write_outside(void **state)
{
	const char *d = *state;
	struct dirs x = make_dirs(d);
	unit_mkdir(d, "src/pdf-tools");
	unit_write(d, "src/pdf-tools/SKILL.md", SKILL_MD("pdf-tools"));
	unit_mkdir(d, "src/pdf-tools/scripts");
	unit_write(d, "src/pdf-tools/scripts/a.sh", "echo a\n");
	unit_mkdir(d, "ws/.claude");
	unit_mkdir(d, "ws/.claude/skills");
	_cleanup_free_ char *src = unit_path(d, "src");
	struct racer racer = {.d = d};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, flip_links, &racer), 0);
	int installed = 0;
	for (int i = 0; i < 300; i++) {
		_cleanup_(skill_reports_release) struct skill_reports r = {0};
		_cleanup_error_ struct error err = ERROR_INIT;
		if (skills_install(src, x.ws, &r, &err) == 0 && r.len == 1 && r.items[0].ok)
			installed++;
	}
	atomic_store(&racer.stop, true);
	pthread_join(t, NULL);
	assert_outside_empty(&x);
	/* Not vacuous: some installs got through between the flips. */
	if (installed == 0)
		unit_fail("no install succeeded while racing");
	close(x.ws);
}

static void validate_dir_reports_every_skill_sorted_and_as_json(void **state)
{
	const char *d = *state;
	unit_mkdir(d, "zeta");
	unit_write(d, "zeta/SKILL.md", SKILL_MD("zeta"));
	unit_mkdir(d, "alpha");
	unit_write(d, "alpha/SKILL.md", "---\nname: Alpha\n---\n");
	unit_mkdir(d, "mid\nline");
	unit_write(d, "notes.txt", "not a skill\n");
	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(skills_validate_dir(d, &r, &err), 0);
	assert_int_equal(r.len, 3);
	assert_string_equal(r.items[0].name, "alpha");
	assert_string_equal(r.items[1].name, "mid\\nline");
	assert_string_equal(r.items[2].name, "zeta");
	assert_report(&r, "zeta", true, NULL);
	assert_report(&r, "alpha", false, "description: required field is missing");
	/* Validation writes nothing. */
	_cleanup_free_ char *zeta = names_in(d, "zeta");
	assert_string_equal(zeta, "SKILL.md");

	struct json_object *j = skill_reports_json(&r);
	const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
	unit_assert_contains(
	    text,
	    "{\"skills\":[{\"name\":\"alpha\",\"ok\":false,\"errors\":[\"SKILL.md:2: "
	    "name: may only hold",
	    "json");
	unit_assert_contains(text, "{\"name\":\"zeta\",\"ok\":true,\"errors\":[]}]}", "json");
	json_object_put(j);
}

static void validate_dir_fails_only_for_the_directory_itself(void **state)
{
	const char *d = *state;
	_cleanup_free_ char *missing = unit_path(d, "missing");
	_cleanup_(skill_reports_release) struct skill_reports r = {0};
	_cleanup_error_ struct error err = ERROR_INIT;
	assert_int_equal(skills_validate_dir(missing, &r, &err), -1);
	assert_int_equal(err.kind, ERROR_NOT_FOUND);
	unit_write(d, "file", "x\n");
	_cleanup_free_ char *file = unit_path(d, "file");
	_cleanup_error_ struct error err2 = ERROR_INIT;
	assert_int_equal(skills_validate_dir(file, &r, &err2), -1);
	assert_int_equal(err2.kind, ERROR_USAGE);
	_cleanup_error_ struct error err3 = ERROR_INIT;
	unit_mkdir(d, "empty");
	_cleanup_free_ char *empty = unit_path(d, "empty");
	assert_int_equal(skills_validate_dir(empty, &r, &err3), 0);
	assert_int_equal(r.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(validate_text_applies_each_rule),
	    cmocka_unit_test(validate_text_counts_characters_to_each_bound),
	    cmocka_unit_test(validate_text_caps_its_errors_and_metadata_keys),
	    unit_tmp_test(install_copies_valid_skills_with_their_trees),
	    unit_tmp_test(install_skips_invalid_skills),
	    unit_tmp_test(install_replaces_an_older_copy_whole),
	    unit_tmp_test(source_symlinks_and_special_files_refuse_the_skill),
	    unit_tmp_test(source_limits_refuse_the_skill),
	    unit_tmp_test(install_as_root_gives_the_copy_to_the_workspace_owner),
	    unit_tmp_test(planted_destination_symlinks_write_nothing_outside),
	    unit_tmp_test(a_file_in_place_of_claude_is_refused_and_kept),
	    unit_tmp_test(install_without_valid_skills_makes_nothing),
	    unit_tmp_test(racing_symlink_swaps_never_write_outside),
	    unit_tmp_test(validate_dir_reports_every_skill_sorted_and_as_json),
	    unit_tmp_test(validate_dir_fails_only_for_the_directory_itself),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
