#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_adhoc.sh -- clf adhoc: an instance started by the job's launcher.
# mpiexec (hydra, on loopback) runs `clf adhoc start` as 3 ranks with 2
# iods per host: rank 0 runs metad and iod 0, rank 1 iod 1, rank 2
# nothing.
#
#  1. `clf adhoc wait` returns the configuration (also in --config-out);
#     a client step writes a
#     file striped over both iods and reads it back, bytes compared;
#  2. `clf adhoc stop` stages clf:/out out to a directory (the file is
#     there, same bytes), the step ends with status 0, and no daemon of
#     the instance is left;
#  3. started again in the same directory, SIGTERM to mpiexec stops the
#     instance: a file written since is staged out, no daemon is left;
#  4. started again, the ranks killed outright (SIGKILL): their daemons
#     die with them (no orphans);
#  5. started again (3 ranks) over what the killed ranks left, rank 0
#     pausing after each old file it removes (CLF_ADHOC_TEST_CLEAR_MS):
#     no rank writes into the directory while it is being emptied (its
#     rank.R was removed and rank 0 waited for it past wait's timeout),
#     wait does not take the dead instance's files for an answer, the
#     data is still there;
#  6. a start that cannot start an iod: wait says it failed, the step
#     ends non-zero, no daemon is left.
#
# usage: test_adhoc.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

if [ -z "${CLF_ADHOC_TIMED:-}" ]; then
	export CLF_ADHOC_TIMED=1
	exec timeout -k 10 240 bash "$0" "$@"
fi

. "$(dirname "$0")/adhoc_lib.sh"
adhoc_find_build "$@"
unset CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT CLF_SECRET_FILE || true
export CLF_ADHOC_HOST=127.0.0.1

tmp=$(mktemp -d /tmp/clf-adhoc.XXXXXX)
data=$tmp/inst
launcher=

cleanup() {
	trap - EXIT INT TERM
	set +e
	adhoc_kill_all
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

step=

# launch N: the step as N ranks (start N runs it).
launch() {
	exec mpiexec -n "$1" "$clf" adhoc start --data "$data" \
		--iods-per-host 2 --base-port "$port" \
		--stage-out "clf:/out=$tmp/staged" \
		--config-out "$tmp/job.conf"
}

step="start"
start 3
[ "$(cat "$tmp/wait.out")" = "$data/clf.conf" ] ||
	fail "wait printed '$(cat "$tmp/wait.out")'"
cmp "$data/clf.conf" "$tmp/job.conf" || fail "--config-out differs"
export CLF_CONFIG=$tmp/job.conf
[ "$(daemons | wc -l)" = 3 ] || fail "want metad and 2 iods: $(daemons)"

step="client step"
head -c 300000 /dev/urandom >"$tmp/in"
"$clf" mkdir clf:/out >/dev/null || fail "mkdir"
"$clf" cp "$tmp/in" clf:/out/f >/dev/null || fail "cp in"
"$clf" getlayout clf:/out/f >"$tmp/layout" || fail "getlayout"
grep -q "iod 1" "$tmp/layout" || grep -q "127.0.0.1:$((port + 2))" "$tmp/layout" ||
	fail "the file is not on both iods: $(cat "$tmp/layout")"
"$clf" cp clf:/out/f "$tmp/back" >/dev/null || fail "cp out"
cmp "$tmp/in" "$tmp/back" || fail "read back differs"

step="stop with stage-out"
stop_staged
grep -q "staged out clf:/out" "$tmp"/start*.log || fail "no stage-out line"
gone

step="SIGTERM to the launcher"
start 2
[ -n "$(daemons)" ] || fail "no daemons"
"$clf" cp "$tmp/in" clf:/out/g >/dev/null || fail "cp in"
kill -TERM "$launcher"
wait "$launcher" 2>/dev/null || true
launcher=
cmp "$tmp/in" "$tmp/staged/out/g" || fail "not staged out on SIGTERM"
gone

step="ranks killed outright"
start 2
[ -n "$(daemons)" ] || fail "no daemons"
ranks=$(pgrep -f -- "^$clf adhoc start --data $data") ||
	fail "no ranks to kill"
kill -KILL $ranks
wait "$launcher" 2>/dev/null || true
launcher=
gone

step="started again over what the killed ranks left"
CLF_ADHOC_TEST_CLEAR_MS=300 start 3
[ "$(daemons | wc -l)" = 3 ] || fail "want metad and 2 iods: $(daemons)"
"$clf" cp clf:/out/f "$tmp/back2" >/dev/null || fail "cp out"
cmp "$tmp/in" "$tmp/back2" || fail "the data dir's file differs"
"$clf" adhoc stop --data "$data" --timeout 60 || fail "stop failed"
wait "$launcher" 2>/dev/null || fail "the step failed"
launcher=
gone

step="a start that fails is reported"
mpiexec -n 1 "$clf" adhoc start --data "$data" --local /proc/clf-none \
	--base-port "$port" >"$tmp/start-bad.log" 2>&1 &
launcher=$!
if "$clf" adhoc wait --data "$data" --timeout 60 >"$tmp/wait.out" 2>&1; then
	fail "wait said ready"
fi
grep -q "failed" "$tmp/wait.out" || fail "wait said: $(cat "$tmp/wait.out")"
rc=0
wait "$launcher" 2>/dev/null || rc=$?
launcher=
[ "$rc" != 0 ] || fail "the failed step ended with status 0"
gone

echo "PASS: clf adhoc (start, client step, stage-out, stop; SIGTERM; SIGKILL)"
