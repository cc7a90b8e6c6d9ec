#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_mount_recovery.sh -- the mount never fails a call for a daemon
# that restarts within recovery_grace_s (clf.h, "Recovery"): a shell
# loop of writes (dd, >>), cats and ls through the mount goes on while
# an iod, then metad, is killed with SIGKILL and started again under it:
# no EIO, no other error, every byte right.  A daemon down past the grace
# then fails a cat with an error, after the grace and not before.
#
# usage: test_mount_recovery.sh [BUILD_DIR]  (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 only when /dev/fuse is missing.

set -eu

TIME_LIMIT=240	# seconds, the whole test
if [ -z "${CLF_MOUNT_RECOVERY_TIMED:-}" ]; then
	CLF_MOUNT_RECOVERY_TIMED=1
	export CLF_MOUNT_RECOVERY_TIMED
	exec timeout -k 10 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
for b in metad/metad iod/iod tools/clf kernel/mount.clf; do
	if [ ! -x "$build/$b" ]; then
		echo "FAIL: $build/$b not built" >&2
		exit 1
	fi
done
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true

build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/instance_lib.sh"
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-mount-recovery.XXXXXX")
data=$tmp/data
conf=$data/clf.conf
m=$tmp/m
mkdir "$m"
loop=""

mounted() {
	awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
}

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	[ -z "$loop" ] || kill -9 "$loop" 2>/dev/null || true
	if mounted "$m"; then
		umount -l "$m" 2>/dev/null || true
	fi
	"$clf" down --data "$data" >/dev/null 2>&1 || true
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=""; echo "step: $step" >&2
fail() {
	echo "FAIL: $step: $*" >&2
	for f in "$tmp"/*.log "$tmp"/errors; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -20 "$f" >&2
	done
	exit 1
}

# The load: rounds of dd, append, cat and ls until $tmp/stop exists;
# every failed command's message goes to $tmp/errors, each finished
# round's number to $tmp/rounds.
load() {
	r=0
	while [ ! -e "$tmp/stop" ]; do
		r=$((r + 1))
		f=$m/f$((r % 8))
		{
			dd if="$tmp/ref" of="$f" bs=64k conv=fsync \
				status=none &&
			printf 'line %d\n' "$r" >>"$m/log" &&
			cat "$f" >"$tmp/back" &&
			cmp -s "$tmp/ref" "$tmp/back" ||
				echo "round $r: $f read back other bytes" >&2
			ls "$m" >/dev/null
		} 2>>"$tmp/errors" || echo "round $r failed" >>"$tmp/errors"
		echo "$r" >>"$tmp/rounds"
	done
}

rounds() {
	[ -e "$tmp/rounds" ] && wc -l <"$tmp/rounds" || echo 0
}

# wait_rounds N: until the load finished N more rounds (60 s at most).
wait_rounds() {
	want=$(($(rounds) + $1))
	i=0
	while [ "$(rounds)" -lt "$want" ]; do
		i=$((i + 1))
		[ "$i" -le 1200 ] || fail "the load stalled at round $(rounds)"
		sleep 0.05
	done
}

# restart DOWN DIR...: kill -9 the daemons whose pid files are in the
# DIRs, start them again DOWN seconds later with `clf up`.
restart() {
	down=$1
	shift
	for d in "$@"; do
		kill -9 "$(cat "$d"/*.pid)"
	done
	sleep "$down"
	"$clf" up --data "$data" >"$tmp/up2.log" 2>&1 || fail "clf up again"
}

# ---------------------------------------------------------------------
step="an instance and a mount"; echo "step: $step" >&2
instance_up "$clf" "$data" "$tmp/up.log" --iods 2 || fail "clf up"
"$mountclf" "$conf" "$m" -o "log=$tmp/mount.log" || fail "mount"
head -c 300000 /dev/urandom >"$tmp/ref"
load &
loop=$!
wait_rounds 3

step="an iod killed and restarted under the load"; echo "step: $step" >&2
restart 1 "$data/iod1"
wait_rounds 3
[ ! -s "$tmp/errors" ] || fail "the load saw errors"

step="metad killed and restarted under the load"; echo "step: $step" >&2
restart 1 "$data/meta"
wait_rounds 3
[ ! -s "$tmp/errors" ] || fail "the load saw errors"

step="both iods at once"; echo "step: $step" >&2
restart 0.3 "$data/iod0" "$data/iod1"
wait_rounds 3
touch "$tmp/stop"
wait "$loop"
loop=""
[ ! -s "$tmp/errors" ] || fail "the load saw errors"
[ "$(wc -l <"$m/log")" -eq "$(rounds)" ] ||
	fail "$(wc -l <"$m/log") appended lines for $(rounds) rounds"

step="an iod down past the grace fails a read after the grace"; echo "step: $step" >&2
umount "$m" || fail "umount"
sed -i 's/^\[global\]$/[global]\nrecovery_grace_s = 2/' "$conf"
"$mountclf" "$conf" "$m" -o "log=$tmp/mount2.log,cache=none" ||
	fail "mount again"
kill -9 "$(cat "$data"/iod1/*.pid)"
t0=$(date +%s%3N)
if cat "$m/f1" >/dev/null 2>"$tmp/cat.err"; then
	fail "the read of a file on a stopped iod succeeded"
fi
took=$(($(date +%s%3N) - t0))
[ "$took" -ge 2000 ] || fail "failed after $took ms, within the grace"
[ "$took" -lt 10000 ] || fail "failed only after $took ms"
grep -q "iod 1" "$tmp/mount2.log" ||
	fail "the mount's log does not name iod 1"
echo "PASS: test_mount_recovery.sh (the read gave up after $took ms)"
