#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_cli_recovery.sh -- `clf cp` goes on through a kill -9 and restart
# of an iod and of metad (clf.h, "Recovery"): it succeeds and the copy
# holds the same bytes; a daemon down past recovery_grace_s fails the
# command after the grace, naming the daemon.  Prints how long the copy
# took with and without a restart under it.
#
# usage: test_cli_recovery.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

TIME_LIMIT=240

here=$(cd "$(dirname "$0")" && pwd)
. "$here/instance_lib.sh"
instance_timed "$TIME_LIMIT" "$0" "$@"
instance_test_begin cli-recovery "${1:-${CLF_BUILD_DIR:-build}}"

step=""
fail() {
	echo "FAIL: $step: $*" >&2
	for f in "$tmp"/*.err "$tmp"/*.log; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -20 "$f" >&2
	done
	exit 1
}

ms() {
	date +%s%3N
}

# kill_restart DOWN DIR: kill -9 the daemon whose pid file is in DIR
# and start it again DOWN seconds later.
kill_restart() {
	kill -9 "$(cat "$2"/*.pid)"
	sleep "$1"
	"$clf" up --data "$data" >"$tmp/up2.log" 2>&1
}

# cp_under FROM TO DIR: clf cp FROM TO while the daemon of DIR restarts;
# sets took (ms).
cp_under() {
	t0=$(ms)
	"$clf" -c "$conf" cp "$1" "$2" 2>"$tmp/cp.err" &
	cp=$!
	sleep 0.2
	kill_restart 1 "$3" || fail "clf up again"
	wait "$cp" || fail "clf cp $1 $2 failed"
	took=$(($(ms) - t0))
}

step="an instance"
instance_up "$clf" "$data" "$tmp/up.log" --iods 2 || fail "clf up"
head -c $((48 << 20)) /dev/urandom >"$tmp/big"

step="a copy with no restart"
t0=$(ms)
"$clf" -c "$conf" cp "$tmp/big" clf:/plain 2>"$tmp/cp.err" || fail "clf cp"
plain=$(($(ms) - t0))

step="a copy into clf while an iod restarts"
cp_under "$tmp/big" clf:/in "$data/iod1"
in_iod=$took
"$clf" -c "$conf" cp clf:/in "$tmp/in.back" 2>"$tmp/cp.err" || fail "copy back"
cmp "$tmp/big" "$tmp/in.back" || fail "the copy holds other bytes"

step="a copy out of clf while an iod restarts"
cp_under clf:/in "$tmp/out.back" "$data/iod0"
out_iod=$took
cmp "$tmp/big" "$tmp/out.back" || fail "the copy holds other bytes"

step="a copy into clf while metad restarts"
cp_under "$tmp/big" clf:/meta "$data/meta"
in_meta=$took
"$clf" -c "$conf" cp clf:/meta "$tmp/meta.back" 2>"$tmp/cp.err" ||
	fail "copy back"
cmp "$tmp/big" "$tmp/meta.back" || fail "the copy holds other bytes"

step="an iod down past the grace fails the copy after the grace"
sed -i 's/^\[global\]$/[global]\nrecovery_grace_s = 2/' "$conf"
kill -9 "$(cat "$data"/iod1/*.pid)"
t0=$(ms)
if "$clf" -c "$conf" cp clf:/in "$tmp/late" 2>"$tmp/late.err"; then
	fail "a copy from a stopped iod succeeded"
fi
took=$(($(ms) - t0))
[ "$took" -ge 2000 ] || fail "failed after $took ms, within the grace"
[ "$took" -lt 10000 ] || fail "failed only after $took ms"
grep -q "iod 1 .*recovery_grace_s" "$tmp/late.err" ||
	fail "the error does not name iod 1 and the grace: $(cat "$tmp/late.err")"

echo "clf cp of 48 MiB: $plain ms; with an iod down 1 s under it: in $in_iod ms, out $out_iod ms; with metad down 1 s: $in_meta ms"
echo "PASS: test_cli_recovery.sh"
