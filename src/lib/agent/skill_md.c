/* The Agent Skills rules for one SKILL.md: a YAML front matter block between
 * two "---" lines, read with libyaml's event parser, checked field by field.
 * Every problem is collected (not only the first) as one line naming the
 * file line and the field. It reads bytes only: no files, no output. */
#include <regex.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

#include "agent/skills.h"
#include "agent/skills_internal.h"
#include "base/cleanup.h"
#include "base/strbuf.h"
#include "base/utf8.h"
#include "base/xalloc.h"

#define NAME_MAX_CHARS 64
#define DESCRIPTION_MAX_CHARS 1024
#define COMPATIBILITY_MAX_CHARS 500
/* Front matter is a handful of keys; deeper than this is not a skill. */
#define NESTING_MAX 64
#define METADATA_KEYS_MAX 1000
/* A plain scalar longer than this is not echoed in an error. */
#define ECHO_MAX 40

#define YAML_STR_TAG "tag:yaml.org,2002:str"

/* The plain scalars a YAML reader types as something other than a string.
 * Skills are read by many agents, with YAML 1.1 readers (PyYAML, Go's
 * yaml.v2) and YAML 1.2 core-schema readers (js-yaml, yaml.v3), so a
 * value is a string only when every one of them reads it as one: the
 * union of both schemas' null, bool, int, float and timestamp forms. */
static const struct {
	const char *what;
	const char *pattern;
} implicit_types[] = {
    {"null", "^(~|null|Null|NULL)$"},
    {"a boolean", "^(y|Y|n|N|yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|"
		  "off|Off|OFF)$"},
    {"a number", "^[-+]?(0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(:[0-5]?[0-9])*)$"},
    {"a number", "^[-+]?(\\.[0-9][0-9_]*|[0-9][0-9_]*(:[0-5]?[0-9])*\\.[0-9_]*)"
		 "([eE][-+]?[0-9]+)?$"},
    {"a number", "^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"},
    {"a number", "^([-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$"},
    {"a date", "^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
	       "(\\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:?[0-9]{2})?))?)?$"},
};

enum field {
	FIELD_NAME,
	FIELD_DESCRIPTION,
	FIELD_LICENSE,
	FIELD_COMPATIBILITY,
	FIELD_METADATA,
	FIELD_ALLOWED_TOOLS,
	FIELD_COUNT,
};

static const char *const field_names[FIELD_COUNT] = {
    [FIELD_NAME] = "name",	   [FIELD_DESCRIPTION] = "description",
    [FIELD_LICENSE] = "license",   [FIELD_COMPATIBILITY] = "compatibility",
    [FIELD_METADATA] = "metadata", [FIELD_ALLOWED_TOOLS] = "allowed-tools",
};

struct front_matter {
	yaml_parser_t parser;
	regex_t implicit[ARRAY_SIZE(implicit_types)];
	bool compiled;
	struct strv *errors;
	size_t first_line; /* the file's line number of the YAML's first line */
	bool broken;	   /* libyaml gave up: nothing after it is known */
	bool capped;	   /* SKILL_ERRORS_MAX reached */
	size_t errors_before;
	bool seen[FIELD_COUNT];
};

static void event_deletep(yaml_event_t *ev)
{
	yaml_event_delete(ev);
}
#define _cleanup_event_ _cleanup_(event_deletep)

static void add_error(struct front_matter *fm, const yaml_mark_t *mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_error(struct front_matter *fm, const yaml_mark_t *mark, const char *fmt, ...)
{
	/* A list a person can read: past the cap, parsing stops. */
	if (fm->errors->len - fm->errors_before >= SKILL_ERRORS_MAX) {
		if (!fm->capped)
			strv_pushf(fm->errors,
				   "SKILL.md: more than %d problems; the rest are "
				   "not listed",
				   SKILL_ERRORS_MAX);
		fm->capped = fm->broken = true;
		return;
	}
	struct strbuf sb = STRBUF_INIT;
	if (mark)
		strbuf_addf(&sb, "SKILL.md:%zu: ", fm->first_line + mark->line);
	else
		strbuf_addstr(&sb, "SKILL.md: ");
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strv_push_owned(fm->errors, strbuf_detach(&sb));
}

/* The next event, or false (with the parser's complaint added once) when
 * the text is not YAML. */
static bool next_event(struct front_matter *fm, yaml_event_t *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (fm->broken)
		return false;
	if (yaml_parser_parse(&fm->parser, ev))
		return true;
	fm->broken = true;
	const char *problem = fm->parser.problem ? fm->parser.problem : "not valid YAML";
	_cleanup_free_ char *context =
	    fm->parser.context ? xasprintf(" %s", fm->parser.context) : xstrdup("");
	add_error(fm, &fm->parser.problem_mark, "front matter is not valid YAML: %s%s", problem,
		  context);
	memset(ev, 0, sizeof(*ev));
	return false;
}

/* Anchors, aliases and tags other than !!str have no place in a few
 * string fields: an alias can grow a small file into a huge value
 * ("billion laughs"), and a tag changes what a reader builds. Reports
 * them for the node that ev starts. */
static void check_node_marks(struct front_matter *fm, const yaml_event_t *ev, const char *where)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		if (tag && !strcmp((const char *)tag, YAML_STR_TAG))
			tag = NULL;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	case YAML_ALIAS_EVENT:
		add_error(fm, &ev->start_mark, "%s: aliases (*name) are not allowed", where);
		return;
	default:
		return;
	}
	if (anchor)
		add_error(fm, &ev->start_mark, "%s: anchors (&name) are not allowed", where);
	if (tag)
		add_error(fm, &ev->start_mark, "%s: tags are not allowed (only !!str)", where);
}

/* Consumes the rest of the node ev started (a collection's events up to
 * its end), reporting anchors, aliases and tags inside it. */
static void skip_node(struct front_matter *fm, const yaml_event_t *start, const char *where)
{
	if (start->type != YAML_SEQUENCE_START_EVENT && start->type != YAML_MAPPING_START_EVENT)
		return;
	size_t depth = 1;
	while (depth > 0) {
		_cleanup_event_ yaml_event_t ev;
		if (!next_event(fm, &ev))
			return;
		check_node_marks(fm, &ev, where);
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > NESTING_MAX) {
				add_error(fm, &ev.start_mark, "%s: nested too deeply", where);
				fm->broken = true;
				return;
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT ||
			   ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
	}
}

/* What a plain scalar reads as when it is not a string, or NULL. Most
 * values (names, sentences) cannot start any typed form, so the patterns
 * are compiled only for the first one that might. */
static const char *implicit_type(struct front_matter *fm, const char *value, size_t len)
{
	if (len == 0)
		return "null";
	if (!strchr("0123456789+-.~yYnNtTfFoO", value[0]))
		return NULL;
	if (!fm->compiled) {
		for (size_t i = 0; i < ARRAY_SIZE(implicit_types); i++)
			if (regcomp(&fm->implicit[i], implicit_types[i].pattern,
				    REG_EXTENDED | REG_NOSUB))
				abort(); /* the patterns are ours: a typo is a bug */
		fm->compiled = true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(implicit_types); i++)
		if (regexec(&fm->implicit[i], value, 0, NULL, 0) == 0)
			return implicit_types[i].what;
	return NULL;
}

/* The string the node ev starts, or NULL with the reason reported: the
 * value of a field must be a scalar that every reader takes for a string.
 * The node is consumed either way. */
static char *node_string(struct front_matter *fm, const yaml_event_t *ev, const char *where,
			 size_t *len_out)
{
	check_node_marks(fm, ev, where);
	if (ev->type == YAML_ALIAS_EVENT)
		return NULL;
	if (ev->type != YAML_SCALAR_EVENT) {
		add_error(fm, &ev->start_mark, "%s: must be a string, not a %s", where,
			  ev->type == YAML_SEQUENCE_START_EVENT ? "list" : "mapping");
		skip_node(fm, ev, where);
		return NULL;
	}
	const char *value = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	if (memchr(value, '\0', len)) {
		add_error(fm, &ev->start_mark, "%s: contains a NUL character", where);
		return NULL;
	}
	/* Only an untagged plain scalar is typed by its look; quoting it,
	 * a block scalar or !!str makes it a string. */
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag) {
		const char *what = implicit_type(fm, value, len);
		_cleanup_free_ char *shown = NULL;
		if (what) {
			if (len == 0)
				add_error(fm, &ev->start_mark,
					  "%s: has no value (null); a string is due", where);
			else if (len <= ECHO_MAX)
				add_error(fm, &ev->start_mark,
					  "%s: %s is read as %s, not a string; quote it", where,
					  shown = skill_shown(value, len), what);
			else
				add_error(fm, &ev->start_mark,
					  "%s: is read as %s, not a string; quote it", where, what);
			return NULL;
		}
	}
	if (len_out)
		*len_out = len;
	return xstrndup(value, len);
}

static size_t utf8_chars(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

static bool blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

static void check_name(struct front_matter *fm, const yaml_mark_t *mark, const char *name,
		       size_t len, const char *dirname)
{
	if (len == 0) {
		add_error(fm, mark, "name: is empty");
		return;
	}
	if (len > NAME_MAX_CHARS)
		add_error(fm, mark, "name: is %zu characters long; at most %d are allowed",
			  utf8_chars(name, len), NAME_MAX_CHARS);
	bool charset = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == len;
	if (!charset)
		add_error(fm, mark,
			  "name: may only hold lowercase letters a-z, digits and hyphens");
	if (name[0] == '-' || name[len - 1] == '-')
		add_error(fm, mark, "name: must not start or end with a hyphen");
	if (strstr(name, "--"))
		add_error(fm, mark, "name: must not hold two hyphens in a row");
	if (dirname && strcmp(name, dirname) != 0) {
		if (charset && len <= NAME_MAX_CHARS) {
			_cleanup_free_ char *shown = skill_shown(dirname, strlen(dirname));
			add_error(fm, mark, "name: \"%s\" does not match the directory name \"%s\"",
				  name, shown);
		} else {
			add_error(fm, mark, "name: does not match the directory name");
		}
	}
}

static void check_length(struct front_matter *fm, const yaml_mark_t *mark, const char *field,
			 const char *value, size_t len, size_t max)
{
	if (blank(value)) {
		add_error(fm, mark, "%s: is empty", field);
		return;
	}
	size_t chars = utf8_chars(value, len);
	if (chars > max)
		add_error(fm, mark, "%s: is %zu characters long; at most %zu are allowed", field,
			  chars, max);
}

/* metadata: a mapping of string keys to string values. ev is its start. */
static void check_metadata(struct front_matter *fm, const yaml_event_t *start)
{
	check_node_marks(fm, start, "metadata");
	if (start->type == YAML_ALIAS_EVENT)
		return;
	if (start->type != YAML_MAPPING_START_EVENT) {
		if (start->type == YAML_SCALAR_EVENT && start->data.scalar.length == 0 &&
		    start->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			add_error(fm, &start->start_mark,
				  "metadata: has no value (null); a mapping of strings to "
				  "strings is due");
		else
			add_error(fm, &start->start_mark,
				  "metadata: must be a mapping of strings to strings");
		skip_node(fm, start, "metadata");
		return;
	}
	_cleanup_strv_ struct strv keys = STRV_INIT;
	for (;;) {
		_cleanup_event_ yaml_event_t key;
		if (!next_event(fm, &key) || key.type == YAML_MAPPING_END_EVENT)
			return;
		size_t key_len = 0;
		_cleanup_free_ char *name = node_string(fm, &key, "metadata: a key", &key_len);
		_cleanup_free_ char *where = NULL;
		if (name) {
			_cleanup_free_ char *shown = skill_shown(name, key_len);
			where = xasprintf("metadata.%s", shown);
			if (strv_contains(&keys, name))
				add_error(fm, &key.start_mark, "%s: the key appears twice", where);
			else
				strv_push(&keys, name);
		} else {
			where = xstrdup("metadata: a value");
		}
		/* Duplicates are found by a linear search: bounded. */
		if (keys.len > METADATA_KEYS_MAX) {
			add_error(fm, &key.start_mark, "metadata: more than %d keys",
				  METADATA_KEYS_MAX);
			fm->broken = true;
			return;
		}
		_cleanup_event_ yaml_event_t value;
		if (!next_event(fm, &value))
			return;
		free(node_string(fm, &value, where, NULL));
	}
}

static int field_of(const char *key)
{
	for (int i = 0; i < FIELD_COUNT; i++)
		if (!strcmp(key, field_names[i]))
			return i;
	return -1;
}

/* One top-level key and its value; key is the key's event. */
static void check_entry(struct front_matter *fm, const yaml_event_t *key, const char *dirname)
{
	size_t key_len = 0;
	_cleanup_free_ char *name = node_string(fm, key, "a key", &key_len);
	_cleanup_event_ yaml_event_t value;
	if (!next_event(fm, &value))
		return;
	if (!name) {
		check_node_marks(fm, &value, "a key's value");
		skip_node(fm, &value, "a key's value");
		return;
	}
	int field = field_of(name);
	if (field < 0) {
		_cleanup_free_ char *shown = skill_shown(name, key_len);
		add_error(fm, &key->start_mark,
			  "%s: unknown field; the standard allows name, description, license, "
			  "compatibility, metadata and allowed-tools (put others under metadata)",
			  shown);
		check_node_marks(fm, &value, shown);
		skip_node(fm, &value, shown);
		return;
	}
	if (fm->seen[field]) {
		add_error(fm, &key->start_mark, "%s: the field appears twice", name);
		check_node_marks(fm, &value, name);
		skip_node(fm, &value, name);
		return;
	}
	fm->seen[field] = true;
	if (field == FIELD_METADATA) {
		check_metadata(fm, &value);
		return;
	}
	size_t len = 0;
	_cleanup_free_ char *text = node_string(fm, &value, name, &len);
	if (!text)
		return;
	switch (field) {
	case FIELD_NAME:
		check_name(fm, &value.start_mark, text, len, dirname);
		break;
	case FIELD_DESCRIPTION:
		check_length(fm, &value.start_mark, name, text, len, DESCRIPTION_MAX_CHARS);
		break;
	case FIELD_COMPATIBILITY:
		check_length(fm, &value.start_mark, name, text, len, COMPATIBILITY_MAX_CHARS);
		break;
	default: /* license, allowed-tools: any string */
		break;
	}
}

/* The document: exactly one, a mapping. */
static void check_document(struct front_matter *fm, const char *dirname)
{
	_cleanup_event_ yaml_event_t ev;
	if (!next_event(fm, &ev) || ev.type != YAML_STREAM_START_EVENT)
		return;
	_cleanup_event_ yaml_event_t doc;
	if (!next_event(fm, &doc))
		return;
	if (doc.type == YAML_STREAM_END_EVENT) {
		add_error(fm, &doc.start_mark, "front matter is empty");
		return;
	}
	_cleanup_event_ yaml_event_t top;
	if (!next_event(fm, &top))
		return;
	check_node_marks(fm, &top, "front matter");
	if (top.type != YAML_MAPPING_START_EVENT) {
		add_error(fm, &top.start_mark,
			  "front matter must be a mapping of fields to values");
		skip_node(fm, &top, "front matter");
	} else {
		for (;;) {
			_cleanup_event_ yaml_event_t key;
			if (!next_event(fm, &key))
				return;
			if (key.type == YAML_MAPPING_END_EVENT)
				break;
			check_entry(fm, &key, dirname);
		}
	}
	_cleanup_event_ yaml_event_t doc_end;
	if (!next_event(fm, &doc_end))
		return;
	_cleanup_event_ yaml_event_t after;
	if (!next_event(fm, &after))
		return;
	if (after.type == YAML_DOCUMENT_START_EVENT) {
		add_error(fm, &after.start_mark, "front matter holds more than one YAML document");
		return;
	}
	if (top.type != YAML_MAPPING_START_EVENT)
		return;
	if (!fm->seen[FIELD_NAME])
		add_error(fm, NULL, "name: required field is missing");
	if (!fm->seen[FIELD_DESCRIPTION])
		add_error(fm, NULL, "description: required field is missing");
}

/* A delimiter: a line "---", with trailing blanks or a CR allowed. */
static bool delimiter_line(const char *line, size_t len)
{
	if (len < 3 || memcmp(line, "---", 3) != 0)
		return false;
	for (size_t i = 3; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

/* Finds the front matter: text must open with a "---" line, and the
 * next "---" line closes it. Returns false with the reason added. */
static bool find_front_matter(const char *text, size_t len, const char **yaml, size_t *yaml_len,
			      struct strv *errors)
{
	const char *end = text + len;
	const char *nl = memchr(text, '\n', len);
	if (!delimiter_line(text, nl ? (size_t)(nl - text) : len)) {
		strv_push(errors, "SKILL.md:1: does not start with a front matter block (a line "
				  "\"---\", the YAML fields, and a line \"---\")");
		return false;
	}
	const char *start = nl ? nl + 1 : end;
	for (const char *line = start; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		size_t line_len = eol ? (size_t)(eol - line) : (size_t)(end - line);
		if (delimiter_line(line, line_len)) {
			*yaml = start;
			*yaml_len = (size_t)(line - start);
			return true;
		}
		line = eol ? eol + 1 : end;
	}
	strv_push(errors, "SKILL.md:1: the front matter block is not closed by a line \"---\"");
	return false;
}

void skills_validate_text(const char *dirname, const char *text, size_t len, struct strv *errors)
{
	const char *yaml;
	size_t yaml_len;
	if (!find_front_matter(text, len, &yaml, &yaml_len, errors))
		return;
	struct front_matter fm = {.errors = errors, .first_line = 2, .errors_before = errors->len};
	if (!yaml_parser_initialize(&fm.parser))
		abort(); /* out of memory, as xmalloc would */
	yaml_parser_set_input_string(&fm.parser, (const unsigned char *)yaml, yaml_len);
	yaml_parser_set_encoding(&fm.parser, YAML_UTF8_ENCODING);
	check_document(&fm, dirname);
	yaml_parser_delete(&fm.parser);
	for (size_t i = 0; fm.compiled && i < ARRAY_SIZE(implicit_types); i++)
		regfree(&fm.implicit[i]);
}
