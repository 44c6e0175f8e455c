#!/bin/sh
# What agent-sandbox tells the user: --dry-run, --debug and `policy`.
. "$(dirname "$0")/../lib.sh"

test_dry_run_prints_bwrap_arguments_one_per_line_and_runs_nothing()
{
	sbx --dry-run sh -c 'touch ran'
	expect_status 0
	expect_no_file ran
	[ "$(head -1 "$T/out")" = bwrap ] || fail "first line is not bwrap: $(head -1 "$T/out")"
	for arg in --die-with-parent --unshare-user --unshare-pid "--cap-drop" --new-session \
		"--ro-bind" "$T/work" "touch ran"; do
		grep -qxF -- "$arg" "$T/out" || fail "no line '$arg' in the dry run"
	done
	# The init loads the seccomp filter, after the binds it makes itself.
	grep -qx -- '--seccomp' "$T/out" || fail "the init is not told to load the filter"
	[ "$(tail -1 "$T/out")" = "touch ran" ] || fail "the command is not last"
}

test_dry_run_lists_the_binds_the_init_makes_on_stderr()
{
	echo 'TOKEN=x' >.env
	sbx --dry-run true
	expect_status 0
	expect_err_contains "the init makes"
	expect_err_contains "  $T/work/.env <- /run/agent-sandbox/staging/stand-ins/"
	expect_out_lacks "$T/work/.env"
}

test_dry_run_shows_rules_from_flags()
{
	mkdir locked
	sbx --dry-run --ro locked true
	# The init binds it onto itself (bwrap with the benchmarks' switch).
	expect_err_contains "  $T/work/locked <- $T/work/locked, read-only"
	AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx --dry-run --ro locked true
	grep -A2 -xF -- '--ro-bind-try' "$T/out" | grep -qxF "$T/work/locked" ||
		fail "no read-only bind for $T/work/locked"
}

test_dry_run_shares_the_network_only_when_the_host_network_is_asked_for()
{
	sbx --dry-run true
	expect_out_contains --unshare-net
	expect_out_contains HTTPS_PROXY
	sbx --dry-run --network=false true
	expect_out_contains --unshare-net
	expect_out_lacks HTTPS_PROXY
	sbx --dry-run --network=true true
	expect_out_lacks --unshare-net
	expect_out_lacks HTTPS_PROXY
}

test_dry_run_shows_the_network_mode_and_lists_on_stderr()
{
	sbx --dry-run --allow-host example.com true
	expect_status 0
	expect_err_contains "network            filtered (default)"
	expect_err_contains "allow            @agents (default)"
	expect_err_contains "allow            example.com (--allow-host)"
	expect_out_lacks "network            filtered"
}

test_network_false_and_filtered_leave_only_loopback()
{
	sbx --network=false sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	expect_status 0
	expect_out lo
	sbx sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	expect_status 0
	expect_out lo
	sbx --network=true sh -c 'tail -n +3 /proc/net/dev | wc -l'
	host=$(tail -n +3 /proc/net/dev | wc -l)
	[ "$(out)" -eq "$host" ] || fail "host network shows $(out) interfaces, the host $host"

}

test_debug_reports_configs_presets_paths_and_bwrap_arguments()
{
	echo '{"filesystem": {"ro": ["missing"]}}' >.agent-sandbox.jsonc
	sbx --debug true
	expect_status 0
	for want in "debug: config:" "$T/work/.agent-sandbox.jsonc" "debug: presets: @base" \
		"skipped ro $T/work/missing" "debug: access:" "debug: bwrap --unshare-user"; do
		expect_err_contains "$want"
	done
}

test_debug_without_a_run_goes_to_stderr_only()
{
	sbx --debug --dry-run true
	grep -q 'debug:' "$T/out" && fail "debug lines on stdout"
	expect_err_contains "debug:"
}

test_policy_prints_the_access_table_with_rule_and_layer()
{
	mkdir -p src/auth lib
	echo '{"filesystem": {"rw": ["lib"]}}' >.agent-sandbox.json
	sbx policy --ro src/auth
	expect_status 0
	expect_out_contains "PATH"
	grep -E "^$T/work/src/auth +ro +src/auth +cli" "$T/out" >/dev/null ||
		fail "no cli ro line for src/auth: $(out)"
	grep -E "^$T/work/lib +rw +lib +project" "$T/out" >/dev/null ||
		fail "no project rw line for lib: $(out)"
	grep -E "^$T/work +rw +\. +preset @base" "$T/out" >/dev/null ||
		fail "no @base line for the working directory: $(out)"
	grep -E "^$HOME +ro +~ +preset @base" "$T/out" >/dev/null ||
		fail "no @base line for home: $(out)"
}

test_policy_marks_read_only_mode_and_settings()
{
	sbx policy --read-only --network=false
	expect_status 0
	expect_out_contains "network            none (loopback only) (--network=false)"
	expect_out_contains "read-only          yes (--read-only)"
	expect_out_contains "made ro by read-only mode"
}

test_policy_shows_the_filtered_network_lists_with_their_origins()
{
	printf '{"network": {"allow": ["*.example.com"], "deny": ["bad.example.com"],\n' >.agent-sandbox.json
	printf ' "localhost": [5432], "resolve": {"mirror.test": "10.0.0.5"}}}\n' >>.agent-sandbox.json
	sbx policy --allow-host api.example.org
	expect_status 0
	p="$T/work/.agent-sandbox.json"
	expect_out_contains "network            filtered ($p:1:13)"
	expect_out_contains "  allow            @git-hosts (default)"
	expect_out_contains "  allow            *.example.com ($p:1:24)"
	expect_out_contains "  allow            api.example.org (--allow-host)"
	expect_out_contains "  deny             bad.example.com ($p:1:51)"
	expect_out_contains "  localhost port   5432 ($p:2:16)"
	expect_out_contains "  resolve          mirror.test -> 10.0.0.5 ($p:2:35)"
}

test_policy_rejects_a_command()
{
	sbx policy sh
	expect_status 2
}

test_policy_and_dry_run_create_nothing()
{
	before=$(snapshot "$T/work"; snapshot "$HOME")
	sbx policy --exclude .env --ro missing
	sbx --dry-run --exclude .env -- touch x
	after=$(snapshot "$T/work"; snapshot "$HOME")
	[ "$before" = "$after" ] || fail "the host tree changed"
}

run_tests
