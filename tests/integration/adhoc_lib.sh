# SPDX-License-Identifier: LGPL-2.1-or-later
# adhoc_lib.sh -- sourced by the tests of `clf adhoc` (test_adhoc.sh,
# test_adhoc_hosts.sh): what both do to find the build, start the
# instance, watch its daemons and report a failure.
#
# The test sets tmp (its scratch directory), data (the instance's shared
# directory), step (what is being tested, for messages) and launcher
# (empty until start), and defines launch ARGS...: `exec mpiexec ... clf
# adhoc start --data "$data" --base-port "$port" ...`, run in the
# background so that $! is mpiexec's pid.

# adhoc_find_build [BUILD_DIR]: build (absolute) and clf.  SKIP (exit 77)
# without a build directory or mpiexec; FAIL when a program is missing.
adhoc_find_build() {
	build=${1:-${CLF_BUILD_DIR:-build}}
	if ! build=$(cd "$build" 2>/dev/null && pwd); then
		echo "SKIP: no build directory"
		exit 77
	fi
	clf=$build/tools/clf
	for b in "$build/metad/metad" "$build/iod/iod" "$clf"; do
		[ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
	done
	command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
}

# The pids of the instance's daemons.
daemons() {
	pgrep -f -- "-c $data/clf.conf" || true
}

# For the cleanup: kill the launcher and every daemon outright.
adhoc_kill_all() {
	[ -n "$launcher" ] && kill -KILL "$launcher" 2>/dev/null
	for p in $(daemons); do kill -KILL "$p"; done
}

fail() {
	echo "FAIL: $step: $*" >&2
	for f in "$tmp"/start*.log "$data"/meta/*.log "$data"/iod*/*.log; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -15 "$f" >&2
	done
	exit 1
}

# start ARGS...: launch ARGS in the background on a random base port
# ($port), then wait until the instance answers; another base port when
# the first is in use.
start() {
	local try
	for try in 1 2 3; do
		port=$((21000 + RANDOM % 8000))
		launch "$@" >"$tmp/start$try.log" 2>&1 &
		launcher=$!
		if "$clf" adhoc wait --data "$data" --timeout 90 \
			>"$tmp/wait.out" 2>&1; then
			return 0
		fi
		grep -q "in use" "$tmp/start$try.log" || break
		wait "$launcher" || true
		launcher=
	done
	fail "the instance did not come up: $(cat "$tmp/wait.out")"
}

# stop_staged: `clf adhoc stop`; the step ends with status 0 and has
# staged clf:/out/f out, the same bytes as $tmp/in.
stop_staged() {
	local rc=0
	"$clf" adhoc stop --data "$data" --timeout 60 || fail "stop failed"
	wait "$launcher" 2>/dev/null || rc=$?
	launcher=
	[ "$rc" = 0 ] || fail "the step ended with status $rc"
	cmp "$tmp/in" "$tmp/staged/out/f" || fail "staged-out file differs"
}

# gone: no daemon of the instance within 20 s.
gone() {
	local i
	for i in $(seq 200); do
		[ -z "$(daemons)" ] && return 0
		sleep 0.1
	done
	fail "daemons left: $(daemons | tr '\n' ' ')"
}
