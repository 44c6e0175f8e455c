#!/bin/sh
# `agent-sandbox doctor`: the host checks, the promises proved inside a real
# sandbox, and the failures it must name with their fixes.
. "$(dirname "$0")/../lib.sh"

# A fake bwrap first on PATH: $1 is the shell body.
fake_bwrap()
{
	mkdir -p "$T/fakebin"
	printf '#!/bin/sh\n%s\n' "$1" >"$T/fakebin/bwrap"
	chmod +x "$T/fakebin/bwrap"
	export PATH="$T/fakebin:$PATH"
}

test_doctor_passes_on_this_machine()
{
	mkdir "$HOME/.ssh"
	echo key >"$HOME/.ssh/id_test"
	sbx doctor
	[ "$rc" -eq 0 ] || fail "doctor failed ($rc): $(out)"
	for check in bwrap "bind mounts" "user namespaces" landlock seccomp "project config" \
		"read-only path" "excluded path" "audit log" "unlisted host" \
		"direct connection" "masked secret" "excluded directory"; do
		grep -q "^ok *$check: " "$T/out" || fail "no passing '$check' line: $(out)"
	done
	expect_out_contains "excluded path: $HOME/.ssh is an empty directory"
	expect_out_contains "all checks hold"
	expect_out_lacks "FAIL"
}

test_doctor_leaves_nothing_behind()
{
	echo data >file
	mkdir "$T/tmp"
	before=$(snapshot "$T/work")
	TMPDIR="$T/tmp" sbx doctor
	expect_status 0
	[ "$before" = "$(snapshot "$T/work")" ] || fail "doctor changed the project"
	[ -z "$(ls -A "$T/tmp")" ] || fail "doctor left $(ls -A "$T/tmp") in TMPDIR"
	[ -z "$(find "$HOME" -name '.agent-sandbox-doctor-*')" ] || fail "a write probe was left"
}

test_doctor_proves_the_network_mode_it_finds()
{
	printf '{"network": false}\n' >.agent-sandbox.json
	sbx doctor
	expect_status 0
	expect_out_contains "direct connection: 1.1.1.1:443 is unreachable"
	expect_out_lacks "unlisted host"
}

test_doctor_fails_when_bwrap_is_missing()
{
	mkdir "$T/empty"
	PATH="$T/empty" sbx doctor
	expect_status 1
	expect_out_contains "FAIL  bwrap: not found on PATH"
	expect_out_contains "fix: install it: sudo apt-get install bubblewrap"
	expect_out_contains "FAIL  sandbox: not started"
	expect_out_contains "checks failed"
}

test_doctor_prints_the_fix_when_bwrap_does_not_run()
{
	fake_bwrap 'exit 1'
	sbx doctor
	expect_status 1
	expect_out_contains "FAIL  bwrap: $T/fakebin/bwrap --version failed"
	expect_out_contains "fix: reinstall bubblewrap"
}

test_doctor_names_the_namespace_blocker_and_its_fix()
{
	fake_bwrap '[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }
echo "bwrap: setting up uid map: Permission denied" >&2
exit 1'
	sbx doctor
	expect_status 1
	expect_out_contains "ok    bwrap: $T/fakebin/bwrap (bubblewrap 0.8.0)"
	expect_out_contains "FAIL  user namespaces:"
	grep -A1 "^FAIL  user namespaces:" "$T/out" | grep -q "^      fix: " ||
		fail "no fix under the user namespaces failure: $(out)"
	expect_out_contains "FAIL  sandbox: not started"
}

# A bwrap that reports VERSION and fails everything else: doctor stops
# after its host checks.
fake_bwrap_version()
{
	fake_bwrap "[ \"\$1\" = --version ] && { echo \"bubblewrap $1\"; exit 0; }
exit 1"
}

test_doctor_says_binds_scan_mountinfo_before_bwrap_0_13()
{
	for version in 0.8.0 0.11.1 0.12.0; do
		fake_bwrap_version "$version"
		sbx doctor
		expect_out_contains "ok    bind mounts: bwrap $version: one mountinfo scan per bind (slow with many binds"
		expect_out_lacks "one mount_setattr per bind$"
	done
}

test_doctor_says_binds_use_mount_setattr_from_bwrap_0_13()
{
	kernel=$(uname -r)
	major=${kernel%%.*}
	minor=${kernel#*.}
	minor=${minor%%[!0-9]*}
	for version in 0.13.0 0.13.1 1.0; do
		fake_bwrap_version "$version"
		sbx doctor
		if [ "$major" -gt 5 ] || { [ "$major" -eq 5 ] && [ "$minor" -ge 12 ]; }; then
			expect_out_contains "ok    bind mounts: bwrap $version: one mount_setattr per bind"
		else
			expect_out_contains "ok    bind mounts: bwrap $version on Linux $kernel: one mountinfo scan per bind"
		fi
		expect_out_lacks "bwrap $version: one mountinfo scan"
	done
}

test_doctor_names_an_unrecognised_bwrap_version()
{
	fake_bwrap_version "git-main"
	sbx doctor
	expect_out_contains "ok    bind mounts: bwrap git-main: version not recognised"
}

test_doctor_reports_an_unapproved_project_config()
{
	printf '{"docker": true}\n' >.agent-sandbox.json
	sbx doctor
	expect_status 1
	expect_out_contains "FAIL  project config: $T/work/.agent-sandbox.json loosens"
	expect_out_contains "fix: review it, then: agent-sandbox trust $T/work/.agent-sandbox.json"
	approve_config
	sbx doctor
	expect_status 0
	expect_out_contains "ok    project config: loosens, and this content is approved"
}

test_probe_argument_does_nothing_outside_a_sandbox()
{
	sbx --doctor-probe "nowrite:x:/"
	expect_status 2
	expect_out ""
}

run_tests
