#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_mount_lock.sh -- fcntl and flock locks through the mount client
# are metad's byte-range locks: a lock taken through one mount is seen
# through another mount of the same instance (another client), and a
# lock taken with the native API (mount_helper lock) through a mount;
# F_GETLK names the holder, a blocking lock waits until the holder lets
# go, and closing (also by a killed holder) releases.
#
# usage: test_mount_lock.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 only when /dev/fuse is missing.

set -eu

TIME_LIMIT=180	# seconds, the whole test
if [ -z "${CLF_MOUNT_LOCK_TIMED:-}" ]; then
	CLF_MOUNT_LOCK_TIMED=1
	export CLF_MOUNT_LOCK_TIMED
	exec timeout -k 10 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
for b in metad/metad iod/iod tools/clf kernel/mount.clf \
	tests/integration/mount_helper; do
	if [ ! -x "$build/$b" ]; then
		echo "FAIL: $build/$b not built" >&2
		exit 1
	fi
done
command -v python3 >/dev/null || { echo "FAIL: python3 missing" >&2; exit 1; }
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true

build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/instance_lib.sh"
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf
helper=$build/tests/integration/mount_helper
lk="python3 $here/mount_lock.py"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-mount-lock.XXXXXX")
data=$tmp/data
conf=$data/clf.conf
m1=$tmp/m1
m2=$tmp/m2
mkdir "$m1" "$m2"
bg=""

mounted() {
	awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
}

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	for p in $bg; do
		kill -9 "$p" 2>/dev/null || true
	done
	for m in "$m1" "$m2"; do
		if mounted "$m"; then
			umount -l "$m" 2>/dev/null || true
		fi
	done
	"$clf" down --data "$data" >/dev/null 2>&1 || true
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=""
fail() {
	echo "FAIL: $step: $*" >&2
	for f in "$tmp"/*.log; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -20 "$f" >&2
	done
	exit 1
}

# wait_file F: until F exists (10 s at most).
wait_file() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "$1 never appeared"
		sleep 0.05
	done
}

# hold KIND PATH NAME: a background holder of an exclusive lock; its
# pid in $holder, released by touching $tmp/NAME.release.
hold() {
	$lk hold "$1" "$2" "$tmp/$3.ready" "$tmp/$3.release" &
	holder=$!
	bg="$bg $holder"
	wait_file "$tmp/$3.ready"
}

expect() {
	[ "$1" = "$2" ] || fail "got '$1', expected '$2'"
}

expect_refused() {
	case $1 in
	EAGAIN|EACCES) ;;
	*) fail "got '$1', expected EAGAIN or EACCES" ;;
	esac
}

# ---------------------------------------------------------------------
step="an instance and two mounts of it"
instance_up "$clf" "$data" "$tmp/up.log" --iods 2 || fail "clf up"
"$mountclf" "$conf" "$m1" -o "log=$tmp/m1.log" || fail "mount $m1"
"$mountclf" "$conf" "$m2" -o "log=$tmp/m2.log,cache=none" ||
	fail "mount $m2"
printf 'some bytes to lock\n' >"$m1/f"
[ "$(cat "$m2/f")" = "some bytes to lock" ] || fail "not the same file"

step="an fcntl lock through one mount excludes through the other"
hold fcntl "$m1/f" a
expect_refused "$($lk try fcntl ex "$m2/f")"
expect_refused "$($lk try fcntl sh "$m2/f")"
expect "$($lk getlk "$m2/f")" "W 0 0 $holder"
# Two processes on one mount are two owners too.
expect_refused "$($lk try fcntl ex "$m1/f")"

step="a blocking fcntl lock waits until the holder lets go"
$lk waitat fcntl "$m2/f" >"$tmp/waited" &
waiter=$!
bg="$bg $waiter"
sleep 1.5
# The waiter must get the lock after this moment (wall clock, ms): a
# duration would depend on how fast the waiter started.
released=$(date +%s%3N)
touch "$tmp/a.release"
wait "$waiter" || fail "the waiter failed"
at=$(cat "$tmp/waited")
[ "$at" -ge "$released" ] || fail "got the lock at $at, before its release at $released"
wait "$holder" || true
expect "$($lk getlk "$m1/f")" "unlocked"
expect "$($lk try fcntl ex "$m2/f")" "ok"

step="flock(2) locks are shared between mounts"
hold flock "$m1/f" b
expect "$($lk try flock ex "$m2/f")" "EAGAIN"
expect "$($lk try flock sh "$m2/f")" "EAGAIN"
touch "$tmp/b.release"
wait "$holder" || true
expect "$($lk try flock ex "$m2/f")" "ok"

step="a killed holder leaves no lock behind"
hold fcntl "$m2/f" c
expect_refused "$($lk try fcntl ex "$m1/f")"
kill -9 "$holder"
wait "$holder" 2>/dev/null || true
i=0
while [ "$($lk try fcntl ex "$m1/f")" != ok ]; do
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "still locked after the holder was killed"
	sleep 0.1
done

step="a native process's lock is seen through the mount"
"$helper" lock "$conf" /f 3000 >"$tmp/native.out" 2>"$tmp/native.log" &
native=$!
bg="$bg $native"
i=0
until grep -q locked "$tmp/native.out"; do
	i=$((i + 1))
	[ "$i" -le 200 ] || fail "the native process never locked"
	sleep 0.05
done
expect_refused "$($lk try fcntl sh "$m1/f")"
# Compared on the wall clock, not as a duration: on a loaded machine the
# holder may be near its release before the waiter even starts.
at=$($lk waitat fcntl "$m1/f")
wait "$native" || fail "the native holder failed"
released=$(sed -n 's/^releasing //p' "$tmp/native.out")
[ -n "$released" ] && [ "$at" -ge "$released" ] ||
	fail "got the lock at $at, the native holder released it at ${released:-?}"

step="unmount"
umount "$m1" || fail "umount $m1"
umount "$m2" || fail "umount $m2"
echo "PASS: locks through the mount"
