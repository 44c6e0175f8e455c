#!/bin/sh
# Configuration files: what is accepted, and how each mistake is reported
# (file, line, column, what was expected) before anything runs.
. "$(dirname "$0")/../lib.sh"

# Writes $2 to the project config $1 and expects exit 2 with every
# further argument in stderr, and the command not run.
expect_rejected()
{
	file=$1
	text=$2
	shift 2
	printf '%s\n' "$text" >"$file"
	sbx sh -c 'touch ran'
	[ "$rc" -eq 2 ] || fail "$text: expected status 2, got $rc"
	for want in "$@"; do
		grep -qF -- "$want" "$T/err" || fail "$text: stderr lacks '$want': $(err)"
	done
	expect_no_file ran
	rm -f "$file"
}

test_jsonc_comments_and_trailing_commas_are_accepted()
{
	cat >.agent-sandbox.jsonc <<'JSON'
// project policy
{
  /* keep sources safe */
  "filesystem": {
    "ro": ["src",],   // trailing comma
  },
}
JSON
	mkdir src
	sbx sh -c 'touch src/x'
	[ "$rc" -ne 0 ] || fail "the ro rule from the JSONC file was not applied"
	sbx true
	expect_status 0
}

test_plain_json_extension_accepts_jsonc_too()
{
	printf '{\n  // comment\n  "read-only": true,\n}\n' >.agent-sandbox.json
	sbx sh -c 'touch x'
	[ "$rc" -ne 0 ] || fail "read-only from .json with comments was not applied"
}

test_bad_configs_are_rejected_with_file_line_and_column()
{
	f=.agent-sandbox.json
	p="$T/work/$f"
	# config text | what the error must mention (after file:line:col)
	while IFS='|' read -r text where want; do
		expect_rejected $f "$text" "$p:$where" "$want"
	done <<'CASES'
{"filesystem": {"rox": []}}|1:17|did you mean "ro"
{"filesytem": {}}|1:2|did you mean "filesystem"
{"filesystem": {"ro": "src"}}|1:23|array
{"filesystem": {"ro": [1]}}|1:24|array of paths
{"read-only": "yes"}|1:15|true or false
{"docker": 1}|1:12|true or false
{"network": "on"}|1:13|true (host network), false (no network) or an object
{"filesystem": {"presets": ["@nope"]}}|1:29|unknown preset
{"filesystem": {"presets": ["@bse"]}}|1:29|did you mean "@base"
{"filesystem": {"ro": ["[abc"]}}|1:24|glob
{"filesystem": {"ro": ["a/**/b"]}}|1:24|**
{"docker": true, "docker": false}|1:18|duplicate key "docker"
{"filesystem": {"ro": []}, }x|1:29|after the root value
{"filesystem": {"ro": [}|1:24|
[]|1:1|object
{"secrets": []}|1:13|expected an object
{"secrets": {"patterns": ["[abc"]}}|1:27|not closed
{"secrets": {"patterns": ["[[:alhpa:]]x"]}}|1:27|unknown character class
{"filesystem": {"ro": ["[[:alpha:]"]}}|1:24|not closed
{"secrets": {"patterns": ["a//b.pem"]}}|1:27|empty segment at offset 2
{"secrets": {"patterns": ["/"]}}|1:27|it names no file
{"secrets": {"patterns": ["../x.pem"]}}|1:27|".." segment at offset 0
{"secrets": {"allow": ["./config/prod.pem"]}}|1:24|"." segment
{"secrets": {"patterns": ["a**/b"]}}|1:27|not a whole segment
{"secrets": {"patterns": ["a/[b"]}}|1:27|segment at offset 2
{"secrets": {"skip": ["a/b"]}}|1:23|cannot contain "/"
{"secrets": {"allow": [""]}}|1:24|empty pattern
{"secrets": {"skip": ["x**"]}}|1:23|**
{"secrets": {"pattern": []}}|1:14|did you mean "patterns"
{"env": {"block": ["AWS_[A"]}}|1:20|not closed
{"env": {"allow": [3]}}|1:20|name patterns
{"env": {"filter-secrets": "yes"}}|1:28|true or false
{"env": {"set": {"A=B": "x"}}}|1:18|not a variable name
{"env": {"set": {"FOO": 1}}}|1:25|expected a string
{"env": {"sett": {}}}|1:10|did you mean "set"
{"audit": "off"}|1:11|true or false
{"commands": []}|1:14|object
{"commands": {"git": 1}}|1:22|true, false, "@git" or a script path
{"commands": {"git": "@nope"}}|1:22|unknown command preset
{"commands": {"git": "true"}}|1:22|without quotes
{"commands": {"a/b": false}}|1:15|not a command name
{"network": {"allow": ["a.*.com"]}}|1:24|"*" may only stand alone
{"network": {"deny": ["@agent"]}}|1:23|did you mean "@agents"
{"network": {"localhost": [70000]}}|1:28|port number from 1 to 65535
{"network": {"resolve": {"mirror.test": "mirror"}}}|1:41|IPv4 or IPv6 address
{"network": {"proxy": true}}|1:14|unknown key "proxy" in "network"
{"limits": {"tmp": "2X"}}|1:20|but the unit is not one of k, m, g or t
{"limits": {"tmp": "1k"}}|1:20|"tmp" must be from 1 MiB to 1 TiB
{"limits": {"tmp": "lots"}}|1:20|does not start with a number
{"limits": {"pids": 3}}|1:21|"pids" must be from 16 to 4194304
{"limits": {"pids": "64"}}|1:21|expected a number like 1024
{"limits": {"memroy": "1G"}}|1:13|unknown key "memroy" in "limits"; did you mean "memory"?
{"limits": []}|1:12|expected an object like
CASES
}

test_limits_from_the_global_config_size_tmp_and_cap_processes()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	echo '{"limits": {"tmp": "2G", "pids": 200}}' >"$HOME/.config/agent-sandbox/config.json"
	sbx sh -c 'stat -f -c "%b %S" /tmp; ulimit -Hu 2>/dev/null || python3 -c "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[1])"'
	expect_status 0
	set -- $(out)
	[ $(($1 * $2)) = $((2 << 30)) ] || fail "/tmp is $(($1 * $2)) bytes, not 2 GiB"
	[ "$3" -ge 200 ] && [ "$3" -le 206 ] || fail "the process limit is $3, not 200 and the few there"
	g="$HOME/.config/agent-sandbox/config.json"
	sbx policy
	expect_out_contains "limits             /tmp 2 GiB ($g:1:20), 200 processes ($g:1:34)"
	# A project may lower a limit without approval.
	echo '{"limits": {"tmp": "16M"}}' >.agent-sandbox.json
	sbx sh -c 'stat -f -c "%b %S" /tmp'
	expect_status 0
	set -- $(out)
	[ $(($1 * $2)) = $((16 << 20)) ] || fail "/tmp is $(($1 * $2)) bytes, not 16 MiB"
}

test_a_project_raising_tmp_needs_approval_and_then_gets_it()
{
	echo '{"limits": {"tmp": "4G"}}' >.agent-sandbox.json
	sbx sh -c 'stat -f -c "%b %S" /tmp'
	expect_status 2
	expect_err_contains "$T/work/.agent-sandbox.json:1:20: \"limits.tmp\" raises /tmp to 4 GiB (1 GiB by the default)"
	approve_config
	sbx sh -c 'stat -f -c "%b %S" /tmp'
	expect_status 0
	set -- $(out)
	[ $(($1 * $2)) = $((4 << 30)) ] || fail "/tmp is $(($1 * $2)) bytes, not 4 GiB"
}

test_error_positions_count_lines_and_columns()
{
	printf '{\n  "filesystem": {\n    "ro": ["a"],\n    "rw": [42]\n  }\n}\n' >.agent-sandbox.jsonc
	sbx true
	expect_status 2
	expect_err_contains "$T/work/.agent-sandbox.jsonc:4:12:"
}

test_global_config_errors_name_the_global_file()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	printf '{\n "unknown": 1\n}\n' >"$HOME/.config/agent-sandbox/config.jsonc"
	sbx true
	expect_status 2
	expect_err_contains "$HOME/.config/agent-sandbox/config.jsonc:2:2:"
}

test_xdg_config_home_locates_the_global_config()
{
	mkdir -p "$T/xdg/agent-sandbox"
	echo '{"read-only": true}' >"$T/xdg/agent-sandbox/config.json"
	XDG_CONFIG_HOME="$T/xdg" sbx sh -c 'touch x'
	[ "$rc" -ne 0 ] || fail "the global config under XDG_CONFIG_HOME was not read"
}

test_both_json_and_jsonc_in_one_place_is_an_error()
{
	echo '{}' >.agent-sandbox.json
	echo '{}' >.agent-sandbox.jsonc
	sbx sh -c 'touch ran'
	expect_status 2
	expect_err_contains ".agent-sandbox.json"
	expect_err_contains ".agent-sandbox.jsonc"
	expect_no_file ran
	mkdir -p "$HOME/.config/agent-sandbox"
	rm .agent-sandbox.jsonc
	echo '{}' >"$HOME/.config/agent-sandbox/config.json"
	echo '{}' >"$HOME/.config/agent-sandbox/config.jsonc"
	sbx true
	expect_status 2
	expect_err_contains "config.jsonc"
}

test_config_flag_replaces_the_project_config()
{
	echo '{"read-only": true}' >.agent-sandbox.json
	echo '{}' >other.json
	sbx -c other.json sh -c 'touch x'
	expect_status 0
}

test_relative_paths_in_the_global_config_resolve_against_the_working_directory()
{
	mkdir -p "$HOME/.config/agent-sandbox" locked
	echo '{"filesystem": {"ro": ["locked"]}}' >"$HOME/.config/agent-sandbox/config.json"
	sbx sh -c 'touch locked/x'
	[ "$rc" -ne 0 ] || fail "relative global rule did not apply to the working directory"
}

test_presets_from_global_and_project_concatenate()
{
	mkdir -p "$HOME/.config/agent-sandbox"
	echo '{"filesystem": {"presets": ["!@lint/python"]}}' >"$HOME/.config/agent-sandbox/config.json"
	echo '{"filesystem": {"presets": ["!@lint/ts"]}}' >.agent-sandbox.json
	approve_config
	echo x >ruff.toml
	echo x >tsconfig.json
	echo x >.golangci.yml
	sbx sh -c 'echo y > ruff.toml && echo y > tsconfig.json'
	expect_status 0
	sbx sh -c 'echo y > .golangci.yml'
	[ "$rc" -ne 0 ] || fail "@lint/go was removed too"
}

test_tilde_expands_to_home_in_rules()
{
	mkdir -p "$HOME/.cache/keep"
	echo '{"filesystem": {"ro": ["~/.cache/keep"]}}' >.agent-sandbox.json
	sbx sh -c 'touch "$HOME/.cache/keep/x"'
	[ "$rc" -ne 0 ] || fail "~ was not expanded"
	sbx sh -c 'touch "$HOME/.cache/other"'
	expect_status 0
}

test_dollar_variables_are_not_expanded()
{
	mkdir -p '$HOME'
	echo '{"filesystem": {"ro": ["$HOME"]}}' >.agent-sandbox.json
	sbx sh -c 'touch "\$HOME/x"'
	[ "$rc" -ne 0 ] || fail "the literal \$HOME directory was not protected"
	sbx sh -c 'touch "$HOME/.cache-x" 2>/dev/null; touch ok'
	expect_status 0
}

run_tests
