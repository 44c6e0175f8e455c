#!/bin/sh
# Escape attempts through the executor API's file methods: the agent plants
# symlinks out of its workspace (to a host directory, the host home, /proc,
# up the tree), races a directory against a symlink while the platform
# writes, and the platform's fs/* calls must neither read nor write outside
# the workspace nor past the session's masks and read-only paths. Driven
# through `agent-sandbox serve --stdio` by serve_fs_client.py; every outcome
# is checked from outside.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib"

CLIENT="$(cd "$(dirname "$0")" && pwd)/serve_fs_client.py"

# One step for the client: METHOD and its params as JSON.
step()
{
	printf '{"method": "%s", "params": %s}\n' "$1" "$2"
}

# A command run in the session by the agent (sh -c TEXT).
inside()
{
	step process/exec "{\"sessionId\": \"@SID\", \"argv\": [\"sh\", \"-c\", \"$1\"]}"
}

# Runs the client with the steps on stdin (and POLICY_JSON, if given);
# its lines in $T/out.
serve_steps()
{
	rc=0
	"$PY" "$CLIENT" "$AS" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "the client failed: $(tail -3 "$T/err")"
	# The daemon's stderr is the client's.
	! grep -q "ERROR: AddressSanitizer\|runtime error:" "$T/err" ||
		fail "the daemon's sanitizer: $(head -c 3000 "$T/err")"
}

setup_serve()
{
	mkdir -m 700 "$T/run"
	export XDG_RUNTIME_DIR="$T/run"
	mkdir "$T/outside" "$HOME/.ssh"
	echo 'keep me' >"$T/outside/secret"
	echo 'ssh-private-key-material' >"$HOME/.ssh/id_ed25519"
}

# The places outside the workspace an escape would change.
outside_state()
{
	for d in "$T/outside" "$HOME/.ssh"; do
		find "$d" -printf '%p %y %s %m\n' | LC_ALL=C sort
		find "$d" -type f -exec md5sum {} + | LC_ALL=C sort
	done
}

test_fs_refuses_every_way_out_the_agent_plants()
{
	setup_serve
	before=$(outside_state)
	{
		inside "ln -s $T/outside out && ln -s /proc/self/root proc && ln -s $HOME/.ssh ssh && ln -s ../../../../../../../../../.. up && ln -s out chain && mkdir sub && ln -s ../.. sub/up"
		for p in out/secret proc/etc/passwd ssh/id_ed25519 up/etc/passwd chain/secret \
			sub/up/x /etc/passwd "$T/outside/secret" ../x @WS/../x @WS/sub/../../x; do
			step fs/read "{\"sessionId\": \"@SID\", \"path\": \"$p\"}"
		done
		for p in out/new ssh/authorized_keys proc/tmp/x up/tmp/x chain/new "$T/outside/new"; do
			step fs/write "{\"sessionId\": \"@SID\", \"path\": \"$p\", \"dataBase64\": \"cHduZWQK\"}"
		done
		step fs/write '{"sessionId": "@SID", "path": "out/a/b", "dataBase64": "eA==", "createParents": true}'
		step fs/mkdir '{"sessionId": "@SID", "path": "out/dir"}'
		step fs/mkdir '{"sessionId": "@SID", "path": "ssh/dir/sub", "parents": true}'
		step fs/remove '{"sessionId": "@SID", "path": "out/secret"}'
		step fs/remove '{"sessionId": "@SID", "path": "ssh/id_ed25519"}'
		step fs/list '{"sessionId": "@SID", "path": "out"}'
		step fs/list '{"sessionId": "@SID", "path": "proc"}'
		step fs/stat '{"sessionId": "@SID", "path": "ssh/id_ed25519"}'
	} | serve_steps
	sed -n 2p "$T/out" | grep -q '^ok ' || fail "planting the symlinks failed: $(sed -n 2p "$T/out")"
	n=$(sed -n '3,$p' "$T/out" | wc -l)
	[ "$n" -eq 25 ] || fail "expected 25 answers, got $n"
	other=$(sed -n '3,$p' "$T/out" | grep -v '^error -32003 ')
	[ -z "$other" ] || fail "not refused with -32003: $other"
	[ "$(outside_state)" = "$before" ] || fail "something outside the workspace changed"
}

test_fs_write_never_lands_outside_while_the_agent_swaps_a_directory()
{
	setup_serve
	before=$(outside_state)
	{
		inside "mkdir d"
		# The agent's loop: d is a directory, then a symlink out (a host
		# directory, the host home), and back.
		step process/start "{\"sessionId\": \"@SID\", \"argv\": [\"sh\", \"-c\", \"while :; do mv d d.real; ln -s $T/outside d; rm d; ln -s $HOME/.ssh d; rm d; mv d.real d; done\"]}"
		i=0
		while [ $i -lt 400 ]; do
			step fs/write '{"sessionId": "@SID", "path": "d/f", "dataBase64": "cHduZWQK"}'
			step fs/write '{"sessionId": "@SID", "path": "d/n/f", "dataBase64": "cHduZWQK", "createParents": true}'
			i=$((i + 1))
		done
	} | serve_steps
	answers=$(sed -n '4,$p' "$T/out")
	written=$(printf '%s\n' "$answers" | grep -c '^ok ')
	refused=$(printf '%s\n' "$answers" | grep -c '^error -3200[23] ')
	other=$(printf '%s\n' "$answers" | grep -v '^ok \|^error -3200[23] ' | head -3)
	[ -z "$other" ] || fail "unexpected answers: $other"
	echo "#   $written written, $refused refused during the swap" >&2
	[ "$written" -gt 0 ] && [ "$refused" -gt 0 ] ||
		fail "the race did not happen ($written written, $refused refused)"
	[ "$(outside_state)" = "$before" ] || fail "a write landed outside the workspace"
}

test_fs_keeps_a_secret_masked_in_the_session_masked()
{
	setup_serve
	step fs/write '{"sessionId": "@SID", "path": ".env", "dataBase64": "QVBJX0tFWT1zM2NyZXQK"}' | serve_steps
	ws=$(sed -n 's/^workspace //p' "$T/out")
	[ "$(cat "$ws/.env")" = "API_KEY=s3cret" ] || fail "the platform could not write .env"
	# The next session of the key is planned with .env there: masked.
	{
		step fs/read '{"sessionId": "@SID", "path": ".env"}'
		step fs/read '{"sessionId": "@SID", "path": "@WS/.env"}'
		inside "ln -s .env link"
		step fs/read '{"sessionId": "@SID", "path": "link"}'
		step fs/write '{"sessionId": "@SID", "path": ".env", "dataBase64": "eA=="}'
		step fs/remove '{"sessionId": "@SID", "path": ".env"}'
		step fs/stat '{"sessionId": "@SID", "path": ".env"}'
		inside "cat .env"
	} | serve_steps
	sed -n 2,3p "$T/out" | grep -v -q '^error -32003 ' && fail "reading .env: $(sed -n 2,3p "$T/out")"
	sed -n 5,7p "$T/out" | grep -v -q '^error -32003 ' && fail "through a link, writing or removing .env: $(sed -n 5,7p "$T/out")"
	sed -n 8p "$T/out" | grep -q '"size": 0, .*"masked": true' || fail "stat of .env: $(sed -n 8p "$T/out")"
	# The sandbox sees it empty too.
	sed -n 9p "$T/out" | grep -q '"stdoutBase64": ""' || fail "inside: $(sed -n 9p "$T/out")"
	[ "$(cat "$ws/.env")" = "API_KEY=s3cret" ] || fail ".env changed"
}

test_fs_refuses_changes_under_the_sessions_read_only_paths()
{
	setup_serve
	{
		step fs/write '{"sessionId": "@SID", "path": "docs/readme", "dataBase64": "cmVhZCBtZQo=", "createParents": true}'
	} | serve_steps
	ws=$(sed -n 's/^workspace //p' "$T/out")
	{
		step fs/write '{"sessionId": "@SID", "path": "docs/readme", "dataBase64": "eA=="}'
		step fs/write '{"sessionId": "@SID", "path": "docs/new", "dataBase64": "eA=="}'
		step fs/mkdir '{"sessionId": "@SID", "path": "docs/sub"}'
		step fs/remove '{"sessionId": "@SID", "path": "docs/readme"}'
		step fs/remove '{"sessionId": "@SID", "path": "docs", "recursive": true}'
		step fs/write '{"sessionId": "@SID", "path": ".agent-sandbox.json", "dataBase64": "e30="}'
		step fs/read '{"sessionId": "@SID", "path": "docs/readme"}'
	} | serve_steps '{"filesystem": {"ro": ["docs"]}}'
	other=$(sed -n '2,7p' "$T/out" | grep -v '^error -32003 ')
	[ -z "$other" ] || fail "not refused: $other"
	sed -n 8p "$T/out" | grep -q '^ok .*"cmVhZCBtZQo="' || fail "reading: $(sed -n 8p "$T/out")"
	[ "$(cat "$ws/docs/readme")" = "read me" ] || fail "docs/readme changed"
	grep 'serve_fs' "$HOME/.local/state/agent-sandbox/audit.jsonl" | grep '"docs/new"' |
		grep -q '"refused": *"denied"' || fail "no audit record of the refused write"
	[ ! -e "$ws/docs/new" ] && [ ! -e "$ws/docs/sub" ] && [ ! -e "$ws/.agent-sandbox.json" ] ||
		fail "something was made under a read-only path"
}

test_fs_does_not_plant_a_hook_in_a_repository_the_agent_made()
{
	setup_serve
	{
		inside "git init -q . && rm -f .git/hooks/*.sample && mkdir -p sub && echo ok"
		step fs/write '{"sessionId": "@SID", "path": ".git/hooks/pre-commit", "dataBase64": "IyEvYmluL3NoCg==", "mode": "0755"}'
		step fs/write '{"sessionId": "@SID", "path": ".git/config", "dataBase64": "W2NvcmVdCg=="}'
		step fs/write '{"sessionId": "@SID", "path": "sub/.git", "dataBase64": "Z2l0ZGlyOiAvdG1wCg=="}'
		step fs/mkdir '{"sessionId": "@SID", "path": "other/.git/hooks", "parents": true}'
	} | serve_steps
	ws=$(sed -n 's/^workspace //p' "$T/out")
	sed -n 2p "$T/out" | grep -q '"exitCode": 0' || fail "git init inside: $(sed -n 2p "$T/out")"
	other=$(sed -n '3,6p' "$T/out" | grep -v '^error -32003 ')
	[ -z "$other" ] || fail "not refused: $other"
	[ ! -e "$ws/.git/hooks/pre-commit" ] && [ ! -e "$ws/sub/.git" ] &&
		[ ! -e "$ws/other/.git/hooks" ] || fail "a git control file was planted"
}

test_fs_write_is_seen_inside_and_reads_back()
{
	setup_serve
	{
		step fs/write '{"sessionId": "@SID", "path": "@WS/a/b/c.txt", "dataBase64": "aGkK", "mode": "0600", "createParents": true}'
		inside "cat a/b/c.txt && stat -c %a a/b/c.txt && printf x > a/b/made-inside"
		step fs/read '{"sessionId": "@SID", "path": "a/b/made-inside"}'
		step fs/list '{"sessionId": "@SID", "path": "", "depth": 3}'
		step fs/remove '{"sessionId": "@SID", "path": "a", "recursive": true}'
		inside "test ! -e a"
	} | serve_steps
	sed -n 2p "$T/out" | grep -q '^ok {"size": 3}' || fail "write: $(sed -n 2p "$T/out")"
	# "hi\n600\n"
	sed -n 3p "$T/out" | grep -q '"stdoutBase64": "aGkKNjAwCg=="' || fail "inside: $(sed -n 3p "$T/out")"
	sed -n 4p "$T/out" | grep -q '"dataBase64": "eA==", "size": 1, "eof": true' ||
		fail "read: $(sed -n 4p "$T/out")"
	sed -n 5p "$T/out" | grep -q '"name": "a/b/c.txt"' || fail "list: $(sed -n 5p "$T/out")"
	sed -n 6p "$T/out" | grep -q '^ok {}' || fail "remove: $(sed -n 6p "$T/out")"
	sed -n 7p "$T/out" | grep -q '"exitCode": 0' || fail "a/ is still there inside"
	log="$HOME/.local/state/agent-sandbox/audit.jsonl"
	grep 'serve_fs' "$log" | grep 'fs/write' | grep -q '"path": *"a/b/c.txt"' ||
		fail "no audit record of the write: $(grep serve_fs "$log" | head -3)"
	grep 'serve_fs' "$log" | grep 'fs/remove' | grep -q '"path": *"a"' ||
		fail "no audit record of the remove"
}

run_tests
