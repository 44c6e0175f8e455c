#!/bin/sh
# Escape attempts against the containment of issue 12 that succeed, or did
# until fixed: each plays the hostile command inside and checks the outcome
# from outside (the secret never appears in what any run printed).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

SECRET=TOKEN-moved-masked-file-4d1e

expect_no_secret()
{
	if grep -q "$SECRET" "$T/out" "$T/err"; then
		fail "the secret was read: $(grep -h "$SECRET" "$T/out" "$T/err" | head -3)"
	fi
}

# The command can leave any number of secret-named files for the next run:
# each is a mount of its own. The init makes those mounts, so thousands
# start fine and stay masked; bwrap's binds (kernels without the new mount
# API) stop past its argument limit (9000), and the init's past 20,000
# mounts. Either way the next run says so, names the directory that holds
# most of them and how to mask it whole, and runs nothing.
test_a_project_with_thousands_of_masked_files_is_refused_with_a_way_out()
{
	sbx sh -c 'for d in 1 2 3 4 5 6 7 8; do mkdir -p d$d; i=0
		while [ $i -lt 500 ]; do echo '"$SECRET"' >d$d/$i.env; i=$((i + 1)); done; done
		: >d1/x.env'
	expect_status 0
	sbx sh -c 'cat d1/1.env d8/499.env; echo started'
	expect_status 0
	expect_out "started"
	expect_no_secret
	AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx sh -c 'echo started'
	expect_status 2
	expect_out_lacks "started"
	expect_err_contains "more than the 9000 bwrap accepts: 4001 files in"
	expect_err_contains "d1 holds 501 of them"
	expect_err_lacks "Exceeded maximum number"
	AGENT_SANDBOX_BENCH_BWRAP_MASKS=1 sbx --dry-run true
	expect_status 2

	# Past what the init makes.
	"$PY" -c '
import os
os.makedirs("d9")
for i in range(16000):
    open("d9/%d.env" % i, "w").close()'
	sbx sh -c 'echo started'
	expect_status 2
	expect_out_lacks "started"
	expect_err_contains "more than the 20000 agent-sandbox makes: 20001 files in"
	expect_err_contains "d9 holds 16000 of them"

	# The way out given works.
	echo '{"secrets": {"patterns": ["d*/"]}}' >.agent-sandbox.json
	approve_config
	sbx sh -c 'cat d1/1.env; echo started'
	expect_status 0
	expect_out "started"
}

run_tests
