/* This file decides what a config file may say. It validates strictly
 * (unknown keys, wrong types and bad globs are errors with file:line:column)
 * and never touches the filesystem beyond reading the file itself. */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "net/host_groups.h"
#include "net/host_match.h"
#include "base/io.h"
#include "config/jsonc.h"
#include "policy/pattern.h"
#include "policy/preset.h"
#include "base/strbuf.h"
#include "base/units.h"
#include "base/suggest.h"
#include "base/dirs.h"
#include "base/units.h"
#include "base/xalloc.h"

#define CONFIG_MAX_BYTES (1024 * 1024)

struct loader {
	struct config *cfg;
	const char *name;
	enum layer layer;
	struct error *err;
	struct strbuf summary;
};

static int fail_at(struct loader *ld, struct jsonc_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(struct loader *ld, struct jsonc_pos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (pos.line)
		return error_set(ld->err, ERROR_CONFIG, "loading config from %s:%u:%u: %s",
				 ld->name, pos.line, pos.column, msg);
	return error_set(ld->err, ERROR_CONFIG, "loading config from %s: %s", ld->name, msg);
}

static char *origin_at(const struct loader *ld, struct jsonc_pos pos)
{
	return xasprintf("%s:%u:%u", ld->name, pos.line, pos.column);
}

static const char *type_name(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
	case json_type_int:
		return "a number";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	}
	return "a value";
}

static int unknown_key(struct loader *ld, struct jsonc_pos pos, const char *key, const char *where,
		       const char *const *known, size_t count)
{
	_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
	for (size_t i = 0; i < count; i++)
		strbuf_addf(&list, "%s\"%s\"", i ? ", " : "", known[i]);
	const char *nearest = suggest_nearest(key, known, count);
	if (nearest)
		return fail_at(ld, pos,
			       "unknown key \"%s\"%s; did you mean \"%s\"? (expected one of: %s)",
			       key, where, nearest, list.buf);
	return fail_at(ld, pos, "unknown key \"%s\"%s (expected one of: %s)", key, where, list.buf);
}

static int load_bool(struct loader *ld, struct json_object *obj, const char *key,
		     struct config_setting *setting)
{
	struct jsonc_pos key_pos = {0, 0}, value_pos = {0, 0};
	jsonc_member_pos(obj, key, &key_pos, &value_pos);
	struct json_object *v = json_object_object_get(obj, key);
	if (!json_object_is_type(v, json_type_boolean))
		return fail_at(ld, value_pos, "expected true or false for \"%s\", not %s", key,
			       type_name(v));
	_cleanup_free_ char *origin = origin_at(ld, value_pos);
	config_set(setting, json_object_get_boolean(v), ld->layer, origin);
	strbuf_addf(&ld->summary, ", %s=%s", key, setting->value ? "true" : "false");
	return 0;
}

/* Returns the strings of an array member, checking each element. */
static int load_string_array(struct loader *ld, struct json_object *obj, const char *key,
			     const char *what, struct json_object **array)
{
	struct jsonc_pos key_pos = {0, 0}, value_pos = {0, 0};
	jsonc_member_pos(obj, key, &key_pos, &value_pos);
	struct json_object *v = json_object_object_get(obj, key);
	if (!json_object_is_type(v, json_type_array))
		return fail_at(ld, value_pos, "expected an array of %s for \"%s\", not %s", what,
			       key, type_name(v));
	size_t n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		struct jsonc_pos pos = {0, 0};
		jsonc_element_pos(v, i, &pos);
		if (!json_object_is_type(e, json_type_string))
			return fail_at(ld, pos,
				       "expected an array of %s for \"%s\", but element %zu is %s",
				       what, key, i + 1, type_name(e));
		const char *s = json_object_get_string(e);
		if ((size_t)json_object_get_string_len(e) != strlen(s))
			return fail_at(ld, pos, "\"%s\" element %zu contains a NUL character", key,
				       i + 1);
	}
	*array = v;
	return 0;
}

static int load_presets(struct loader *ld, struct json_object *fs)
{
	struct json_object *array;
	if (load_string_array(ld, fs, "presets", "preset names like \"@git\" or \"!@lint/python\"",
			      &array) < 0)
		return -1;
	size_t n = json_object_array_length(array);
	if (n)
		strbuf_addstr(&ld->summary, ", presets");
	for (size_t i = 0; i < n; i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(array, i));
		struct jsonc_pos pos = {0, 0};
		jsonc_element_pos(array, i, &pos);
		const char *bare = name[0] == '!' ? name + 1 : name;
		if (!preset_lookup(bare)) {
			_cleanup_strbuf_ struct strbuf known = STRBUF_INIT;
			preset_list_names(&known);
			const char *nearest = preset_suggest(bare);
			if (nearest)
				return fail_at(
				    ld, pos,
				    "unknown preset \"%s\"; did you mean \"%s%s\"? (known "
				    "presets: %s; prefix with \"!\" to remove one)",
				    name, name[0] == '!' ? "!" : "", nearest, known.buf);
			return fail_at(
			    ld, pos,
			    "unknown preset \"%s\" (known presets: %s; prefix with \"!\" to "
			    "remove one)",
			    name, known.buf);
		}
		_cleanup_free_ char *origin = origin_at(ld, pos);
		config_list_add(&ld->cfg->presets, &ld->cfg->origins.presets, name, origin);
		strbuf_addf(&ld->summary, " %s", name);
	}
	return 0;
}

/* A member holding an array of paths, each checked by validate and added to
 * list at level with its origin: filesystem's ro, rw and exclude, and
 * sockets, share it so that they report errors alike. */
static int load_rule_array(struct loader *ld, struct json_object *obj, const char *key,
			   const char *what, int (*validate)(const char *, struct error *),
			   enum access_level level, struct rule_list *list)
{
	struct json_object *array;
	if (load_string_array(ld, obj, key, what, &array) < 0)
		return -1;
	size_t n = json_object_array_length(array);
	for (size_t i = 0; i < n; i++) {
		const char *path = json_object_get_string(json_object_array_get_idx(array, i));
		struct jsonc_pos pos = {0, 0};
		jsonc_element_pos(array, i, &pos);
		_cleanup_error_ struct error perr = ERROR_INIT;
		if (validate(path, &perr) < 0)
			return fail_at(ld, pos, "in \"%s\": %s", key, perr.msg);
		_cleanup_free_ char *origin = origin_at(ld, pos);
		rule_list_add(list, path, level, ld->layer, origin);
	}
	strbuf_addf(&ld->summary, ", %s %zu", key, n);
	return 0;
}

static int load_rules(struct loader *ld, struct json_object *fs, const char *key,
		      enum access_level level)
{
	return load_rule_array(ld, fs, key, "paths", pattern_validate, level, &ld->cfg->rules);
}

static int load_filesystem(struct loader *ld, struct json_object *root)
{
	static const char *const keys[] = {"presets", "ro", "rw", "exclude"};
	struct jsonc_pos key_pos = {0, 0}, value_pos = {0, 0};
	jsonc_member_pos(root, "filesystem", &key_pos, &value_pos);
	struct json_object *fs = json_object_object_get(root, "filesystem");
	if (!json_object_is_type(fs, json_type_object))
		return fail_at(ld, value_pos,
			       "expected an object like {\"ro\": [...], \"rw\": [...]} for "
			       "\"filesystem\", not %s",
			       type_name(fs));

	json_object_object_foreach(fs, key, value)
	{
		(void)value;
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(fs, key, &kp, NULL);
		int r;
		if (!strcmp(key, "presets"))
			r = load_presets(ld, fs);
		else if (!strcmp(key, "ro"))
			r = load_rules(ld, fs, key, ACCESS_RO);
		else if (!strcmp(key, "rw"))
			r = load_rules(ld, fs, key, ACCESS_RW);
		else if (!strcmp(key, "exclude"))
			r = load_rules(ld, fs, key, ACCESS_EXCLUDE);
		else
			r = unknown_key(ld, kp, key, " in \"filesystem\"", keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_host_list(struct loader *ld, struct json_object *net, const char *key,
			  struct net_list *list)
{
	struct json_object *array;
	if (load_string_array(ld, net, key, "host names, \"*.domain\" patterns or @groups",
			      &array) < 0)
		return -1;
	size_t n = json_object_array_length(array);
	for (size_t i = 0; i < n; i++) {
		const char *host = json_object_get_string(json_object_array_get_idx(array, i));
		struct jsonc_pos pos = {0, 0};
		jsonc_element_pos(array, i, &pos);
		if (host[0] == '@') {
			if (!host_group_lookup(host)) {
				_cleanup_strbuf_ struct strbuf known = STRBUF_INIT;
				const char *names[8];
				for (size_t g = 0; g < host_groups_len && g < ARRAY_SIZE(names);
				     g++) {
					names[g] = host_groups[g].name;
					strbuf_addf(&known, "%s%s", g ? ", " : "", names[g]);
				}
				const char *nearest = suggest_nearest(host, names, host_groups_len);
				if (nearest)
					return fail_at(ld, pos,
						       "unknown host group \"%s\" in \"%s\"; did "
						       "you mean \"%s\"? (known groups: %s)",
						       host, key, nearest, known.buf);
				return fail_at(ld, pos,
					       "unknown host group \"%s\" in \"%s\" (known groups: "
					       "%s)",
					       host, key, known.buf);
			}
		} else {
			_cleanup_error_ struct error herr = ERROR_INIT;
			if (host_pattern_validate(host, &herr) < 0)
				return fail_at(ld, pos, "in \"%s\": %s", key, herr.msg);
		}
		_cleanup_free_ char *origin = origin_at(ld, pos);
		net_list_add(list, host, NULL, ld->layer, origin);
	}
	strbuf_addf(&ld->summary, ", network.%s %zu", key, n);
	return 0;
}

static int load_localhost_ports(struct loader *ld, struct json_object *net)
{
	struct jsonc_pos value_pos = {0, 0};
	jsonc_member_pos(net, "localhost", NULL, &value_pos);
	struct json_object *v = json_object_object_get(net, "localhost");
	if (!json_object_is_type(v, json_type_array))
		return fail_at(ld, value_pos,
			       "expected an array of port numbers like [5432, 3000] for "
			       "\"localhost\", not %s",
			       type_name(v));
	size_t n = json_object_array_length(v);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		struct jsonc_pos pos = {0, 0};
		jsonc_element_pos(v, i, &pos);
		int64_t port = json_object_get_int64(e);
		if (!json_object_is_type(e, json_type_int) || port < 1 || port > 65535)
			return fail_at(ld, pos,
				       "expected a port number from 1 to 65535 in \"localhost\", "
				       "but element %zu is %s",
				       i + 1,
				       json_object_is_type(e, json_type_int) ? "out of range"
									     : type_name(e));
		_cleanup_free_ char *origin = origin_at(ld, pos);
		_cleanup_free_ char *text = xasprintf("%d", (int)port);
		net_list_add(&ld->cfg->network.localhost, text, NULL, ld->layer, origin);
		ld->cfg->network.localhost.items[ld->cfg->network.localhost.len - 1].port =
		    (uint16_t)port;
	}
	strbuf_addf(&ld->summary, ", network.localhost %zu", n);
	return 0;
}

static int load_resolve(struct loader *ld, struct json_object *net)
{
	struct jsonc_pos value_pos = {0, 0};
	jsonc_member_pos(net, "resolve", NULL, &value_pos);
	struct json_object *v = json_object_object_get(net, "resolve");
	if (!json_object_is_type(v, json_type_object))
		return fail_at(ld, value_pos,
			       "expected an object like {\"mirror.internal\": \"10.0.0.5\"} for "
			       "\"resolve\", not %s",
			       type_name(v));
	json_object_object_foreach(v, name, address)
	{
		struct jsonc_pos kp = {0, 0}, vp = {0, 0};
		jsonc_member_pos(v, name, &kp, &vp);
		_cleanup_free_ char *norm = host_normalize(name, strlen(name));
		if (!norm || host_is_ip_literal(norm))
			return fail_at(ld, kp, "\"resolve\" key \"%s\" is not a host name", name);
		/* The port is part of the pin: a pin opens its address on
		 * that port only (without one, on 80 and 443), and is kept
		 * in one canonical spelling so that the trust comparison
		 * sees a changed port as a new pin. */
		char canonical[64];
		unsigned port = 0;
		if (!json_object_is_type(address, json_type_string) ||
		    !host_parse_pin(json_object_get_string(address), canonical, sizeof(canonical),
				    &port))
			return fail_at(ld, vp,
				       "expected an IPv4 or IPv6 address, with an optional port "
				       "(\"10.0.0.5:8080\", \"[2001:db8::1]:8443\"), for \"%s\" in "
				       "\"resolve\"",
				       name);
		_cleanup_free_ char *origin = origin_at(ld, kp);
		_cleanup_free_ char *text = host_pin_text(canonical, port);
		net_list_add(&ld->cfg->network.resolve, norm, text, ld->layer, origin);
		ld->cfg->network.resolve.items[ld->cfg->network.resolve.len - 1].port =
		    (uint16_t)port;
	}
	strbuf_addstr(&ld->summary, ", network.resolve");
	return 0;
}

static int load_network(struct loader *ld, struct json_object *root)
{
	static const char *const keys[] = {"allow", "deny", "localhost", "resolve"};
	struct jsonc_pos value_pos = {0, 0};
	jsonc_member_pos(root, "network", NULL, &value_pos);
	struct json_object *v = json_object_object_get(root, "network");
	_cleanup_free_ char *origin = origin_at(ld, value_pos);
	if (json_object_is_type(v, json_type_boolean)) {
		bool host = json_object_get_boolean(v);
		config_set_network_mode(&ld->cfg->network, host ? NETWORK_HOST : NETWORK_NONE,
					ld->layer, origin);
		strbuf_addf(&ld->summary, ", network=%s", host ? "true" : "false");
		return 0;
	}
	if (!json_object_is_type(v, json_type_object))
		return fail_at(ld, value_pos,
			       "expected true (host network), false (no network) or an object "
			       "like {\"allow\": [...]} (filtered) for \"network\", not %s",
			       type_name(v));
	config_set_network_mode(&ld->cfg->network, NETWORK_FILTERED, ld->layer, origin);
	strbuf_addstr(&ld->summary, ", network filtered");
	json_object_object_foreach(v, key, value)
	{
		(void)value;
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(v, key, &kp, NULL);
		int r;
		if (!strcmp(key, "allow"))
			r = load_host_list(ld, v, key, &ld->cfg->network.allow);
		else if (!strcmp(key, "deny"))
			r = load_host_list(ld, v, key, &ld->cfg->network.deny);
		else if (!strcmp(key, "localhost"))
			r = load_localhost_ports(ld, v);
		else if (!strcmp(key, "resolve"))
			r = load_resolve(ld, v);
		else
			r = unknown_key(ld, kp, key, " in \"network\"", keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
	}
	return 0;
}

/* Name patterns for secrets and env: each must be a valid single-name glob
 * (or, for secrets.patterns and secrets.allow, a tree pattern; validate says
 * which), optionally prefixed with "!" to remove an earlier one. */
static int load_patterns(struct loader *ld, struct json_object *obj, const char *section,
			 const char *key, int (*validate)(const char *, struct error *),
			 struct strv *dest, struct strv *origins)
{
	struct json_object *array;
	if (load_string_array(ld, obj, key,
			      validate == pattern_validate_name ? "name patterns" : "patterns",
			      &array) < 0)
		return -1;
	size_t n = json_object_array_length(array);
	for (size_t i = 0; i < n; i++) {
		const char *text = json_object_get_string(json_object_array_get_idx(array, i));
		struct jsonc_pos pos = {0, 0};
		jsonc_element_pos(array, i, &pos);
		_cleanup_error_ struct error perr = ERROR_INIT;
		if (validate(text[0] == '!' ? text + 1 : text, &perr) < 0)
			return fail_at(ld, pos, "in \"%s.%s\": %s", section, key, perr.msg);
		_cleanup_free_ char *origin = origin_at(ld, pos);
		config_list_add(dest, origins, text, origin);
	}
	strbuf_addf(&ld->summary, ", %s.%s %zu", section, key, n);
	return 0;
}

static struct json_object *section_object(struct loader *ld, struct json_object *root,
					  const char *key, const char *example)
{
	struct jsonc_pos value_pos = {0, 0};
	jsonc_member_pos(root, key, NULL, &value_pos);
	struct json_object *v = json_object_object_get(root, key);
	if (!json_object_is_type(v, json_type_object)) {
		fail_at(ld, value_pos, "expected an object like %s for \"%s\", not %s", example,
			key, type_name(v));
		return NULL;
	}
	return v;
}

static int load_name_patterns(struct loader *ld, struct json_object *obj, const char *section,
			      const char *key, struct strv *dest, struct strv *origins)
{
	return load_patterns(ld, obj, section, key, pattern_validate_name, dest, origins);
}

static int load_secrets(struct loader *ld, struct json_object *root)
{
	static const char *const keys[] = {"patterns", "allow", "skip"};
	struct json_object *sec =
	    section_object(ld, root, "secrets", "{\"patterns\": [\"*.pem\"], \"allow\": [...]}");
	if (!sec)
		return -1;
	json_object_object_foreach(sec, key, value)
	{
		(void)value;
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(sec, key, &kp, NULL);
		int r;
		if (!strcmp(key, "patterns"))
			r = load_patterns(ld, sec, "secrets", key, pattern_validate_tree,
					  &ld->cfg->secret_patterns,
					  &ld->cfg->origins.secret_patterns);
		else if (!strcmp(key, "allow"))
			r = load_patterns(ld, sec, "secrets", key, pattern_validate_tree,
					  &ld->cfg->secret_allow, &ld->cfg->origins.secret_allow);
		else if (!strcmp(key, "skip"))
			r = load_name_patterns(ld, sec, "secrets", key, &ld->cfg->secret_skip,
					       &ld->cfg->origins.secret_skip);
		else
			r = unknown_key(ld, kp, key, " in \"secrets\"", keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
	}
	return 0;
}

/* "x-api-key" or "Authorization: Bearer": a token, then optionally ": "
 * and a printable prefix. */
static bool all_header_name(const char *text)
{
	size_t n = strcspn(text, ":");
	if (!n ||
	    strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != n)
		return false;
	for (const char *c = text + n; *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			return false;
	return true;
}

static int check_env_name(struct loader *ld, struct jsonc_pos pos, const char *where,
			  const char *name)
{
	if (!*name || strchr(name, '=') ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
		strlen(name))
		return fail_at(ld, pos,
			       "in \"%s\": \"%s\" is not a variable name (letters, digits "
			       "and \"_\")",
			       where, name);
	return 0;
}

static int load_env_set(struct loader *ld, struct json_object *env)
{
	struct json_object *set = section_object(ld, env, "set", "{\"NODE_ENV\": \"development\"}");
	if (!set)
		return -1;
	size_t n = 0;
	json_object_object_foreach(set, name, value)
	{
		struct jsonc_pos kp = {0, 0}, vp = {0, 0};
		jsonc_member_pos(set, name, &kp, &vp);
		if (check_env_name(ld, kp, "env.set", name) < 0)
			return -1;
		if (!json_object_is_type(value, json_type_string))
			return fail_at(ld, vp,
				       "in \"env.set\": expected a string for \"%s\", not %s", name,
				       type_name(value));
		const char *text = json_object_get_string(value);
		if ((size_t)json_object_get_string_len(value) != strlen(text))
			return fail_at(ld, vp, "in \"env.set\": \"%s\" contains a NUL character",
				       name);
		_cleanup_free_ char *entry = xasprintf("%s=%s", name, text);
		_cleanup_free_ char *origin = origin_at(ld, kp);
		config_list_add(&ld->cfg->env_set, &ld->cfg->origins.env_set, entry, origin);
		n++;
	}
	strbuf_addf(&ld->summary, ", env.set %zu", n);
	return 0;
}

static int load_env(struct loader *ld, struct json_object *root)
{
	static const char *const keys[] = {"filter-secrets", "allow", "block", "set"};
	struct json_object *env = section_object(
	    ld, root, "env", "{\"filter-secrets\": true, \"allow\": [...], \"block\": [...]}");
	if (!env)
		return -1;
	json_object_object_foreach(env, key, value)
	{
		(void)value;
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(env, key, &kp, NULL);
		int r;
		if (!strcmp(key, "filter-secrets"))
			r = load_bool(ld, env, key, &ld->cfg->env_filter_secrets);
		else if (!strcmp(key, "allow"))
			r = load_name_patterns(ld, env, "env", key, &ld->cfg->env_allow,
					       &ld->cfg->origins.env_allow);
		else if (!strcmp(key, "block"))
			r = load_name_patterns(ld, env, "env", key, &ld->cfg->env_block,
					       &ld->cfg->origins.env_block);
		else if (!strcmp(key, "set"))
			r = load_env_set(ld, env);
		else
			r = unknown_key(ld, kp, key, " in \"env\"", keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
	}
	return 0;
}

/* "commands": {"git": "@git", "rm": false, "npm": "~/npm-wrapper.sh"}.
 * Script paths are kept as written; they are resolved and checked with
 * the filesystem rules' ~ and working directory when wrappers are planned. */
static int load_commands(struct loader *ld, struct json_object *root)
{
	struct jsonc_pos value_pos = {0, 0};
	jsonc_member_pos(root, "commands", NULL, &value_pos);
	struct json_object *commands = json_object_object_get(root, "commands");
	if (!json_object_is_type(commands, json_type_object))
		return fail_at(ld, value_pos,
			       "expected an object like {\"git\": \"@git\", \"rm\": false} for "
			       "\"commands\", not %s",
			       type_name(commands));
	size_t n = 0;
	json_object_object_foreach(commands, name, value)
	{
		struct jsonc_pos kp = {0, 0}, vp = {0, 0};
		jsonc_member_pos(commands, name, &kp, &vp);
		_cleanup_error_ struct error perr = ERROR_INIT;
		if (command_name_validate(name, &perr) < 0)
			return fail_at(ld, kp, "in \"commands\": %s", perr.msg);
		enum command_kind kind;
		const char *script = NULL;
		if (json_object_is_type(value, json_type_boolean)) {
			kind = json_object_get_boolean(value) ? COMMAND_RAW : COMMAND_BLOCKED;
		} else if (json_object_is_type(value, json_type_string)) {
			script = json_object_get_string(value);
			if ((size_t)json_object_get_string_len(value) != strlen(script))
				return fail_at(
				    ld, vp, "\"commands\" \"%s\" contains a NUL character", name);
			if (!strcmp(script, "true") || !strcmp(script, "false"))
				return fail_at(ld, vp,
					       "\"commands\" \"%s\": write %s without quotes (the "
					       "string would name a script)",
					       name, script);
			if (command_kind_parse(script, &kind, &perr) < 0)
				return fail_at(ld, vp, "\"commands\" \"%s\": %s", name, perr.msg);
		} else {
			return fail_at(ld, vp,
				       "expected true, false, \"@git\" or a script path for "
				       "\"commands\" \"%s\", not %s",
				       name, type_name(value));
		}
		_cleanup_free_ char *origin = origin_at(ld, vp);
		command_table_set(&ld->cfg->commands, name, kind, script, ld->layer, origin);
		n++;
	}
	strbuf_addf(&ld->summary, ", commands %zu", n);
	return 0;
}

bool config_parse_size(const char *text, unsigned long long *bytes, const char **why)
{
	return size_parse(text, bytes, why);
}

char *config_format_size(unsigned long long bytes)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;
	while (u + 1 < ARRAY_SIZE(units) && bytes && !(bytes & 1023)) {
		bytes >>= 10;
		u++;
	}
	return xasprintf("%llu %s", bytes, units[u]);
}

/* "tmp": a size, as text with a unit ("2G") or a number of bytes. */
static int load_limit_size(struct loader *ld, struct json_object *obj, const char *key,
			   unsigned long long min, unsigned long long max, struct config_limit *out)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(obj, key, NULL, &pos);
	struct json_object *v = json_object_object_get(obj, key);
	unsigned long long bytes = 0;
	const char *why = NULL;
	if (json_object_is_type(v, json_type_int)) {
		int64_t n = json_object_get_int64(v);
		if (n < 0)
			why = "it is negative";
		bytes = (unsigned long long)n;
	} else if (json_object_is_type(v, json_type_string)) {
		config_parse_size(json_object_get_string(v), &bytes, &why);
	} else {
		return fail_at(ld, pos,
			       "expected a size like \"1G\" or \"512M\" for \"%s\", not %s", key,
			       type_name(v));
	}
	if (why)
		return fail_at(ld, pos,
			       "expected a size like \"1G\" or \"512M\" (k, m, g or t) for "
			       "\"%s\", but %s",
			       key, why);
	if (bytes < min || bytes > max) {
		_cleanup_free_ char *lo = config_format_size(min);
		_cleanup_free_ char *hi = config_format_size(max);
		return fail_at(ld, pos, "\"%s\" must be from %s to %s", key, lo, hi);
	}
	_cleanup_free_ char *origin = origin_at(ld, pos);
	config_set_limit(out, bytes, ld->layer, origin);
	strbuf_addf(&ld->summary, ", limits.%s", key);
	return 0;
}

static int load_limit_count(struct loader *ld, struct json_object *obj, const char *key,
			    unsigned long long min, unsigned long long max,
			    struct config_limit *out)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(obj, key, NULL, &pos);
	struct json_object *v = json_object_object_get(obj, key);
	if (!json_object_is_type(v, json_type_int))
		return fail_at(ld, pos, "expected a number like 1024 for \"%s\", not %s", key,
			       type_name(v));
	int64_t n = json_object_get_int64(v);
	if (n < 0 || (unsigned long long)n < min || (unsigned long long)n > max)
		return fail_at(ld, pos, "\"%s\" must be from %llu to %llu", key, min, max);
	_cleanup_free_ char *origin = origin_at(ld, pos);
	config_set_limit(out, (unsigned long long)n, ld->layer, origin);
	strbuf_addf(&ld->summary, ", limits.%s", key);
	return 0;
}

/* "timeout": a duration with its unit ("10m", "90s"). */
static int load_limit_duration(struct loader *ld, struct json_object *obj, const char *key,
			       struct config_limit *out)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(obj, key, NULL, &pos);
	struct json_object *v = json_object_object_get(obj, key);
	if (!json_object_is_type(v, json_type_string))
		return fail_at(ld, pos,
			       "expected a duration like \"10m\" or \"90s\" (ms, s, m, h or d) for "
			       "\"%s\", not %s",
			       key, type_name(v));
	unsigned long long ms = 0;
	const char *why = NULL;
	if (!duration_parse(json_object_get_string(v), &ms, &why))
		return fail_at(ld, pos,
			       "expected a duration like \"10m\" or \"90s\" (ms, s, m, h or d) for "
			       "\"%s\", but %s",
			       key, why);
	if (ms < CONFIG_TIMEOUT_MIN || ms > CONFIG_TIMEOUT_MAX)
		return fail_at(ld, pos, "\"%s\" must be from 100ms to 366 days", key);
	_cleanup_free_ char *origin = origin_at(ld, pos);
	config_set_limit(out, ms, ld->layer, origin);
	strbuf_addf(&ld->summary, ", limits.%s", key);
	return 0;
}

/* "cpus": a number of CPUs, whole or with decimals (2, 0.5). A JSON
 * number goes through its own text, so 0.1 is exactly 100 thousandths. */
static int load_limit_cpus(struct loader *ld, struct json_object *obj, const char *key,
			   struct config_limit *out)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(obj, key, NULL, &pos);
	struct json_object *v = json_object_object_get(obj, key);
	const char *text = NULL;
	_cleanup_free_ char *num = NULL;
	if (json_object_is_type(v, json_type_string))
		text = json_object_get_string(v);
	else if (json_object_is_type(v, json_type_int))
		text = num = xasprintf("%lld", (long long)json_object_get_int64(v));
	else if (json_object_is_type(v, json_type_double))
		text = num = xasprintf("%.6g", json_object_get_double(v));
	else
		return fail_at(ld, pos,
			       "expected a number of CPUs like 2 or 0.5 for \"%s\", not %s", key,
			       type_name(v));
	unsigned milli = 0;
	const char *why = NULL;
	if (!cpus_parse(text, &milli, &why))
		return fail_at(ld, pos,
			       "expected a number of CPUs like 2 or 0.5 for \"%s\", but %s", key,
			       why);
	if (milli < CONFIG_CPUS_MIN || milli > CONFIG_CPUS_MAX)
		return fail_at(ld, pos, "\"%s\" must be from 0.01 to 4096", key);
	_cleanup_free_ char *origin = origin_at(ld, pos);
	config_set_limit(out, milli, ld->layer, origin);
	strbuf_addf(&ld->summary, ", limits.%s", key);
	return 0;
}

static int load_limits(struct loader *ld, struct json_object *root)
{
	static const char *const keys[] = {"tmp", "pids", "memory", "cpus", "timeout"};
	struct json_object *lim = section_object(ld, root, "limits",
						 "{\"memory\": \"4g\", \"cpus\": 2, \"pids\": 512, "
						 "\"timeout\": \"10m\", \"tmp\": \"1g\"}");
	if (!lim)
		return -1;
	struct config_limits *l = &ld->cfg->limits;
	json_object_object_foreach(lim, key, value)
	{
		(void)value;
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(lim, key, &kp, NULL);
		int r;
		if (!strcmp(key, "tmp"))
			r = load_limit_size(ld, lim, key, CONFIG_TMP_MIN, CONFIG_TMP_MAX, &l->tmp);
		else if (!strcmp(key, "pids"))
			r = load_limit_count(ld, lim, key, CONFIG_PIDS_MIN, CONFIG_PIDS_MAX,
					     &l->pids);
		else if (!strcmp(key, "memory"))
			r = load_limit_size(ld, lim, key, CONFIG_MEMORY_MIN, CONFIG_MEMORY_MAX,
					    &l->memory);
		else if (!strcmp(key, "cpus"))
			r = load_limit_cpus(ld, lim, key, &l->cpus);
		else if (!strcmp(key, "timeout"))
			r = load_limit_duration(ld, lim, key, &l->timeout);
		else
			r = unknown_key(ld, kp, key, " in \"limits\"", keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
	}
	return 0;
}

bool config_limit_parse(const char *key, const char *text, unsigned long long *value,
			const char **why, const char **expected)
{
	*why = NULL;
	unsigned long long v = 0, lo = 0, hi = 0;
	if (!strcmp(key, "memory") || !strcmp(key, "tmp")) {
		*expected = !strcmp(key, "memory") ? "a size like 512m or 4g, from 16m to 1024t"
						   : "a size like 512m or 2g, from 1m to 1t";
		lo = !strcmp(key, "memory") ? CONFIG_MEMORY_MIN : CONFIG_TMP_MIN;
		hi = !strcmp(key, "memory") ? CONFIG_MEMORY_MAX : CONFIG_TMP_MAX;
		if (!size_parse(text, &v, why))
			return false;
	} else if (!strcmp(key, "cpus")) {
		*expected = "a number of CPUs like 2 or 0.5, from 0.01 to 4096";
		lo = CONFIG_CPUS_MIN, hi = CONFIG_CPUS_MAX;
		unsigned milli = 0;
		if (!cpus_parse(text, &milli, why))
			return false;
		v = milli;
	} else if (!strcmp(key, "timeout")) {
		*expected = "a duration like 90s or 10m (ms, s, m, h or d), from 100ms to 366 days";
		lo = CONFIG_TIMEOUT_MIN, hi = CONFIG_TIMEOUT_MAX;
		if (!duration_parse(text, &v, why))
			return false;
	} else {
		*expected = "a number of processes, from 16 to 4194304";
		lo = CONFIG_PIDS_MIN, hi = CONFIG_PIDS_MAX;
		const char *p = text;
		if (*p < '0' || *p > '9') {
			*why = *p == '-' ? "it is negative" : "it is not a number";
			return false;
		}
		for (; *p >= '0' && *p <= '9'; p++)
			if ((v = v * 10 + (unsigned long long)(*p - '0')) > hi) {
				*why = "it is too large";
				return false;
			}
		if (*p) {
			*why = "it is not a number";
			return false;
		}
	}
	if (v < lo || v > hi) {
		*why = v < lo ? "it is too small" : "it is too large";
		return false;
	}
	*value = v;
	return true;
}

int config_socket_validate(const char *text, struct error *err)
{
	if (pattern_has_glob(text))
		return error_set(err, ERROR_CONFIG,
				 "\"%s\": a socket is one path, not a pattern (no *, ? or [)",
				 text);
	return pattern_validate(text, err);
}

/* sockets: the host's unix sockets the command may reach, each one path. */
static int load_sockets(struct loader *ld, struct json_object *root)
{
	return load_rule_array(ld, root, "sockets", "paths of unix sockets", config_socket_validate,
			       ACCESS_RO, &ld->cfg->sockets);
}

static int load_credential_string(struct loader *ld, struct json_object *obj, const char *name,
				  const char *key, char **out)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(obj, key, NULL, &pos);
	struct json_object *v = json_object_object_get(obj, key);
	if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v) ||
	    (size_t)json_object_get_string_len(v) != strlen(json_object_get_string(v)))
		return fail_at(ld, pos,
			       "in \"credentials.%s\": expected a non-empty string for \"%s\"",
			       name, key);
	free(*out);
	*out = xstrdup(json_object_get_string(v));
	return 0;
}

static int load_credential(struct loader *ld, const char *name, struct json_object *obj,
			   struct jsonc_pos pos)
{
	static const char *const keys[] = {"env", "file", "hosts", "ca", "header", "base-url-env"};
	static const char *const example =
	    "{\"env\": \"ANTHROPIC_API_KEY\"} or {\"file\": \"~/.config/x/key\", \"hosts\": "
	    "[\"api.x.com\"], \"header\": \"Authorization: Bearer\"}";
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(name) ||
	    strlen(name) > 32)
		return fail_at(ld, pos,
			       "\"credentials\" key \"%s\" is not a credential name (lower-case "
			       "letters, digits, \"-\" and \"_\")",
			       name);
	if (!json_object_is_type(obj, json_type_object))
		return fail_at(ld, pos, "expected an object like %s for \"credentials.%s\"",
			       example, name);
	struct config_credentials *list = &ld->cfg->credentials;
	list->items = xreallocarray(list->items, list->len + 1, sizeof(*list->items));
	struct config_credential *c = &list->items[list->len++];
	*c = (struct config_credential){
	    .name = xstrdup(name), .hosts = STRV_INIT, .origin = origin_at(ld, pos)};
	json_object_object_foreach(obj, key, value)
	{
		(void)value;
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(obj, key, &kp, NULL);
		int r = 0;
		if (!strcmp(key, "env")) {
			r = load_credential_string(ld, obj, name, key, &c->env);
			if (!r && check_env_name(ld, kp, "credentials", c->env) < 0)
				return -1;
		} else if (!strcmp(key, "file")) {
			r = load_credential_string(ld, obj, name, key, &c->file);
		} else if (!strcmp(key, "ca")) {
			r = load_credential_string(ld, obj, name, key, &c->ca);
		} else if (!strcmp(key, "header")) {
			r = load_credential_string(ld, obj, name, key, &c->header);
			if (!r && !all_header_name(c->header))
				return fail_at(ld, kp,
					       "in \"credentials.%s\": expected a header name with "
					       "an optional value prefix (\"x-api-key\", "
					       "\"Authorization: Bearer\") for \"header\"",
					       name);
		} else if (!strcmp(key, "base-url-env")) {
			r = load_credential_string(ld, obj, name, key, &c->base_url_env);
			if (!r && check_env_name(ld, kp, "credentials", c->base_url_env) < 0)
				return -1;
		} else if (!strcmp(key, "hosts")) {
			struct json_object *array;
			if (load_string_array(ld, obj, key, "host names", &array) < 0)
				return -1;
			for (size_t i = 0; i < json_object_array_length(array); i++) {
				const char *h =
				    json_object_get_string(json_object_array_get_idx(array, i));
				_cleanup_free_ char *norm = host_normalize(h, strlen(h));
				if (!norm || host_is_ip_literal(norm)) {
					struct jsonc_pos ep = {0, 0};
					jsonc_element_pos(array, i, &ep);
					return fail_at(ld, ep,
						       "in \"credentials.%s.hosts\": \"%s\" is not "
						       "a host name",
						       name, h);
				}
				strv_push(&c->hosts, norm);
			}
		} else {
			r = unknown_key(ld, kp, key, " in a credential", keys, ARRAY_SIZE(keys));
		}
		if (r < 0)
			return r;
	}
	if (c->env && c->file)
		return fail_at(ld, pos,
			       "\"credentials.%s\" names both \"env\" and \"file\"; the key comes "
			       "from one of them",
			       name);
	return 0;
}

/* credentials: the secret comes from the host's environment or a file the
 * user names in their own global config. A project config (or --config)
 * is text a repository can carry, so it may not name where a key comes
 * from or where it is sent. */
static int load_credentials(struct loader *ld, struct json_object *root)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(root, "credentials", NULL, &pos);
	if (ld->layer != LAYER_GLOBAL)
		return fail_at(ld, pos,
			       "\"credentials\" belong in your global config "
			       "(~/.config/agent-sandbox/config.jsonc), not in %s: the key comes "
			       "from the host's environment or a file, never from a project "
			       "config",
			       ld->name);
	struct json_object *creds = section_object(
	    ld, root, "credentials", "{\"anthropic\": {\"env\": \"ANTHROPIC_API_KEY\"}}");
	if (!creds)
		return -1;
	size_t n = 0;
	json_object_object_foreach(creds, name, value)
	{
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(creds, name, &kp, NULL);
		if (load_credential(ld, name, value, kp) < 0)
			return -1;
		n++;
	}
	strbuf_addf(&ld->summary, ", credentials %zu", n);
	return 0;
}

/* retention: how long gc keeps a branch worktree nobody uses. The shelf
 * is the user's, not a project's, so the global config sets it. */
static int load_retention(struct loader *ld, struct json_object *root)
{
	struct jsonc_pos pos = {0, 0};
	jsonc_member_pos(root, "retention", NULL, &pos);
	if (ld->layer != LAYER_GLOBAL)
		return fail_at(ld, pos,
			       "\"retention\" belongs in your global config "
			       "(~/.config/agent-sandbox/config.jsonc), not in %s: branch "
			       "worktrees are the user's, not a project's",
			       ld->name);
	struct json_object *v = json_object_object_get(root, "retention");
	unsigned long long ms;
	_cleanup_error_ struct error derr = ERROR_INIT;
	if (!json_object_is_type(v, json_type_string) ||
	    duration_read(json_object_get_string(v), "retention", &ms, &derr) < 0)
		return fail_at(ld, pos,
			       "\"retention\": expected a duration such as \"7d\" (a whole "
			       "number and ms, s, m, h or d)");
	free(ld->cfg->retention);
	ld->cfg->retention = xstrdup(json_object_get_string(v));
	return 0;
}

/* agents: {"claude": {"command": C}, "codex": {...}}: the CLI agent/run
 * starts in a session (serve), a name found on the sandbox's PATH or a
 * path; it runs inside the sandbox like anything else. */
static int load_agents(struct loader *ld, struct json_object *root)
{
	static const char *const names[] = {"claude", "codex"};
	static const char *const fields[] = {"command"};
	struct json_object *agents =
	    section_object(ld, root, "agents", "{\"claude\": {\"command\": \"/opt/bin/claude\"}}");
	if (!agents)
		return -1;
	json_object_object_foreach(agents, name, value)
	{
		struct jsonc_pos kp = {0, 0}, vp = {0, 0};
		jsonc_member_pos(agents, name, &kp, &vp);
		size_t i = 0;
		while (i < ARRAY_SIZE(names) && strcmp(names[i], name))
			i++;
		if (i == ARRAY_SIZE(names))
			return unknown_key(ld, kp, name, " in \"agents\"", names,
					   ARRAY_SIZE(names));
		if (!json_object_is_type(value, json_type_object))
			return fail_at(ld, vp,
				       "agents.%s: expected an object such as "
				       "{\"command\": \"/opt/bin/%s\"}",
				       name, name);
		json_object_object_foreach(value, k, v)
		{
			struct jsonc_pos fp = {0, 0}, fvp = {0, 0};
			jsonc_member_pos(value, k, &fp, &fvp);
			if (strcmp(k, "command"))
				return unknown_key(ld, fp, k, " in an agent of \"agents\"", fields,
						   ARRAY_SIZE(fields));
			const char *c = json_object_is_type(v, json_type_string)
					    ? json_object_get_string(v)
					    : NULL;
			if (!c || !c[0] || strlen(c) != (size_t)json_object_get_string_len(v) ||
			    strpbrk(c, "\n\r\t "))
				return fail_at(
				    ld, fvp,
				    "agents.%s.command: expected the CLI's name or path, "
				    "without spaces (\"%s\", \"/opt/bin/%s\")",
				    name, name, name);
			free(ld->cfg->agent_commands[i]);
			ld->cfg->agent_commands[i] = xstrdup(c);
		}
	}
	return 0;
}

static int load_root(struct loader *ld, struct json_object *root)
{
	static const char *const keys[] = {
	    "filesystem", "docker", "read-only", "network",	"commands",  "secrets", "env",
	    "audit",	  "limits", "sockets",	 "credentials", "retention", "agents"};

	if (!json_object_is_type(root, json_type_object))
		return fail_at(ld, (struct jsonc_pos){1, 1},
			       "expected a JSON object at the top level, not %s", type_name(root));

	json_object_object_foreach(root, key, value)
	{
		(void)value;
		struct jsonc_pos kp = {0, 0};
		jsonc_member_pos(root, key, &kp, NULL);
		int r = 0;
		bool handled = false;
		if (!strcmp(key, "filesystem"))
			r = load_filesystem(ld, root), handled = true;
		else if (!strcmp(key, "docker"))
			r = load_bool(ld, root, key, &ld->cfg->docker), handled = true;
		else if (!strcmp(key, "read-only"))
			r = load_bool(ld, root, key, &ld->cfg->read_only), handled = true;
		else if (!strcmp(key, "network"))
			r = load_network(ld, root), handled = true;
		else if (!strcmp(key, "secrets"))
			r = load_secrets(ld, root), handled = true;
		else if (!strcmp(key, "env"))
			r = load_env(ld, root), handled = true;
		else if (!strcmp(key, "audit"))
			r = load_bool(ld, root, key, &ld->cfg->audit), handled = true;
		else if (!strcmp(key, "commands"))
			r = load_commands(ld, root), handled = true;
		else if (!strcmp(key, "limits"))
			r = load_limits(ld, root), handled = true;
		else if (!strcmp(key, "sockets"))
			r = load_sockets(ld, root), handled = true;
		else if (!strcmp(key, "credentials"))
			r = load_credentials(ld, root), handled = true;
		else if (!strcmp(key, "retention"))
			r = load_retention(ld, root), handled = true;
		else if (!strcmp(key, "agents"))
			r = load_agents(ld, root), handled = true;
		if (!handled)
			r = unknown_key(ld, kp, key, "", keys, ARRAY_SIZE(keys));
		if (r < 0)
			return r;
	}
	return 0;
}

int config_load_text(struct config *cfg, const char *name, const char *text, size_t len,
		     enum layer layer, struct error *err)
{
	struct json_object *root = NULL;
	if (jsonc_parse(text, len, &root, err) < 0)
		return error_set(err, ERROR_CONFIG, "loading config from %s:%s", name, err->msg);

	struct loader ld = {.cfg = cfg, .name = name, .layer = layer, .err = err};
	int r = load_root(&ld, root);
	json_object_put(root);
	if (r == 0) {
		strv_pushf(&cfg->notes, "%s config %s%s", layer_name(layer), name,
			   ld.summary.len ? strbuf_str(&ld.summary) : ": empty");
		strv_push(&cfg->files, name);
	}
	strbuf_release(&ld.summary);
	return r;
}

int config_read_file(const char *path, char **text, size_t *len, struct error *err)
{
	_cleanup_close_ int fd = -1;
	return config_read_file_fd(path, &fd, text, len, err);
}

int config_read_file_fd(const char *path, int *fd, char **text, size_t *len, struct error *err)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	int r = *fd < 0 ? -errno : read_fd(*fd, CONFIG_MAX_BYTES, text, len);
	if (r == -EFBIG)
		return error_set(err, ERROR_CONFIG, "loading config from %s: larger than %d bytes",
				 path, CONFIG_MAX_BYTES);
	if (r == -EINVAL)
		return error_set(err, ERROR_CONFIG, "loading config from %s: not a regular file",
				 path);
	if (r < 0)
		return error_errno(err, ERROR_CONFIG, -r, "loading config from %s", path);
	return 0;
}

int config_load_file(struct config *cfg, const char *path, enum layer layer, struct error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (config_read_file(path, &text, &len, err) < 0)
		return -1;
	return config_load_text(cfg, path, text, len, layer, err);
}

int config_find(const char *dir, const char *stem, char **found, struct error *err)
{
	_cleanup_free_ char *json = xasprintf("%s/%s.json", dir, stem);
	_cleanup_free_ char *jsonc = xasprintf("%s/%s.jsonc", dir, stem);
	struct stat st;
	bool has_json = lstat(json, &st) == 0;
	bool has_jsonc = lstat(jsonc, &st) == 0;
	*found = NULL;
	if (has_json && has_jsonc) {
		error_set(err, ERROR_CONFIG, "both %s and %s exist; keep one of them", json, jsonc);
		error_hint(err, "merge them into %s and remove %s", jsonc, json);
		return -1;
	}
	if (has_json)
		*found = steal_ptr(&json);
	else if (has_jsonc)
		*found = steal_ptr(&jsonc);
	return 0;
}

void config_list_add(struct strv *list, struct strv *origins, const char *value, const char *origin)
{
	strv_push(list, value);
	strv_push(origins, origin);
}

void config_set(struct config_setting *setting, bool value, enum layer layer, const char *origin)
{
	free(setting->origin);
	setting->value = value;
	setting->layer = layer;
	setting->origin = xstrdup(origin);
}

void config_set_limit(struct config_limit *limit, unsigned long long value, enum layer layer,
		      const char *origin)
{
	free(limit->origin);
	limit->value = value;
	limit->layer = layer;
	limit->origin = xstrdup(origin);
}

void config_set_network_mode(struct network_config *net, enum network_mode mode, enum layer layer,
			     const char *origin)
{
	free(net->origin);
	net->mode = mode;
	net->layer = layer;
	net->origin = xstrdup(origin);
}

void net_list_add(struct net_list *list, const char *name, const char *address, enum layer layer,
		  const char *origin)
{
	if (list->len == list->alloc) {
		list->alloc = list->alloc ? list->alloc * 2 : 8;
		list->items = xreallocarray(list->items, list->alloc, sizeof(*list->items));
	}
	list->items[list->len++] = (struct net_entry){
	    .name = xstrdup(name),
	    .address = address ? xstrdup(address) : NULL,
	    .layer = layer,
	    .origin = xstrdup(origin),
	};
}

static void net_list_release(struct net_list *list)
{
	for (size_t i = 0; i < list->len; i++) {
		free(list->items[i].name);
		free(list->items[i].address);
		free(list->items[i].origin);
	}
	free(list->items);
	*list = (struct net_list){0};
}

bool config_parse_resolve_flag(const char *text, char **name, char **pin, unsigned *port)
{
	const char *eq = strchr(text, '=');
	if (!eq)
		return false;
	_cleanup_free_ char *norm = host_normalize(text, (size_t)(eq - text));
	char canonical[64];
	if (!norm || host_is_ip_literal(norm) ||
	    !host_parse_pin(eq + 1, canonical, sizeof(canonical), port))
		return false;
	*name = steal_ptr(&norm);
	*pin = host_pin_text(canonical, *port);
	return true;
}

const char *network_mode_name(enum network_mode mode)
{
	switch (mode) {
	case NETWORK_HOST:
		return "host network";
	case NETWORK_NONE:
		return "none (loopback only)";
	case NETWORK_FILTERED:
		return "filtered";
	}
	return "?";
}

void config_init(struct config *cfg)
{
	*cfg = (struct config){
	    .rules = RULE_LIST_INIT,
	    .sockets = RULE_LIST_INIT,
	    .presets = STRV_INIT,
	    .files = STRV_INIT,
	    .notes = STRV_INIT,
	    .secret_patterns = STRV_INIT,
	    .secret_allow = STRV_INIT,
	    .secret_skip = STRV_INIT,
	    .env_allow = STRV_INIT,
	    .env_block = STRV_INIT,
	    .env_set = STRV_INIT,
	    /* .origins: every list empty, as the zero value is. */
	};
	config_set(&cfg->env_filter_secrets, true, LAYER_BUILTIN, "default");
	config_set(&cfg->audit, true, LAYER_BUILTIN, "default");
	config_set(&cfg->docker, false, LAYER_BUILTIN, "default");
	config_set(&cfg->read_only, false, LAYER_BUILTIN, "default");
	config_set_limit(&cfg->limits.tmp, CONFIG_TMP_DEFAULT, LAYER_BUILTIN, "default");
	config_set_limit(&cfg->limits.pids, CONFIG_PIDS_DEFAULT, LAYER_BUILTIN, "default");
	config_set_limit(&cfg->limits.memory, 0, LAYER_BUILTIN, "default");
	config_set_limit(&cfg->limits.cpus, 0, LAYER_BUILTIN, "default");
	config_set_limit(&cfg->limits.timeout, 0, LAYER_BUILTIN, "default");
	cfg->commands = (struct command_table)COMMAND_TABLE_INIT;
	command_table_set(&cfg->commands, "git", COMMAND_GIT, NULL, LAYER_BUILTIN, "default");
	/* Filtered by default: an agent reaches its API, package registries
	 * and git hosts, and nothing else leaves the machine. */
	config_set_network_mode(&cfg->network, NETWORK_FILTERED, LAYER_BUILTIN, "default");
	static const char *const default_allow[] = {"@agents", "@registries", "@git-hosts"};
	for (size_t i = 0; i < ARRAY_SIZE(default_allow); i++)
		net_list_add(&cfg->network.allow, default_allow[i], NULL, LAYER_BUILTIN, "default");
}

int config_global_retention(char *const *envp, char **out, struct error *err)
{
	*out = NULL;
	_cleanup_free_ char *home = dirs_home(envp);
	_cleanup_free_ char *dir = dirs_config(envp, home);
	_cleanup_free_ char *global = NULL;
	if (!dir)
		return 0;
	if (config_find(dir, "config", &global, err) < 0)
		return -1;
	if (!global)
		return 0;
	_cleanup_config_ struct config cfg;
	config_init(&cfg);
	if (config_load_file(&cfg, global, LAYER_GLOBAL, err) < 0)
		return -1;
	*out = steal_ptr(&cfg.retention);
	return 0;
}

void config_release(struct config *cfg)
{
	free(cfg->retention);
	cfg->retention = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(cfg->agent_commands); i++) {
		free(cfg->agent_commands[i]);
		cfg->agent_commands[i] = NULL;
	}
	rule_list_release(&cfg->rules);
	rule_list_release(&cfg->sockets);
	strv_release(&cfg->presets);
	strv_release(&cfg->files);
	strv_release(&cfg->notes);
	strv_release(&cfg->secret_patterns);
	strv_release(&cfg->secret_allow);
	strv_release(&cfg->secret_skip);
	strv_release(&cfg->env_allow);
	strv_release(&cfg->env_block);
	strv_release(&cfg->env_set);
	struct config_origins *o = &cfg->origins;
	strv_release(&o->presets);
	strv_release(&o->secret_patterns);
	strv_release(&o->secret_allow);
	strv_release(&o->secret_skip);
	strv_release(&o->env_allow);
	strv_release(&o->env_block);
	strv_release(&o->env_set);
	free(cfg->env_filter_secrets.origin);
	free(cfg->audit.origin);
	cfg->env_filter_secrets.origin = cfg->audit.origin = NULL;
	command_table_release(&cfg->commands);
	free(cfg->docker.origin);
	free(cfg->read_only.origin);
	free(cfg->network.origin);
	free(cfg->limits.tmp.origin);
	free(cfg->limits.pids.origin);
	free(cfg->limits.memory.origin);
	free(cfg->limits.cpus.origin);
	free(cfg->limits.timeout.origin);
	cfg->limits.tmp.origin = cfg->limits.pids.origin = NULL;
	cfg->limits.memory.origin = cfg->limits.cpus.origin = cfg->limits.timeout.origin = NULL;
	net_list_release(&cfg->network.allow);
	net_list_release(&cfg->network.deny);
	net_list_release(&cfg->network.localhost);
	net_list_release(&cfg->network.resolve);
	for (size_t i = 0; i < cfg->credentials.len; i++) {
		struct config_credential *c = &cfg->credentials.items[i];
		free(c->name);
		free(c->env);
		free(c->file);
		free(c->ca);
		free(c->header);
		free(c->base_url_env);
		free(c->origin);
		strv_release(&c->hosts);
	}
	free(cfg->credentials.items);
	cfg->credentials = (struct config_credentials){0};
	cfg->docker.origin = cfg->read_only.origin = cfg->network.origin = NULL;
}
