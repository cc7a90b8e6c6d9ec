#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_mount_parallel.sh -- readers of different files through one mount
# are served at once: the mount keeps several connections to each iod
# (clf.conf iod_connections), so one reader's request does not wait for
# another's reply.  The iods delay every reply (CLF_TEST_IOD_DELAY_MS),
# which makes a request's time its wait, not this machine's CPU: 4
# readers at once must take well under the time of the same reads with
# one connection per iod, and read the bytes written.
#
# usage: test_mount_parallel.sh [BUILD_DIR]
# Exits 0 on success, 1 on failure, 77 without /dev/fuse.

set -eu

build=${1:-${CLF_BUILD_DIR:-build}}
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/instance_lib.sh"
instance_test_begin mount-parallel "$build"
mnt=$tmp/mnt
mkdir "$mnt"

cleanup() {
	rc=$?
	umount -l "$mnt" 2>/dev/null || true
	(exit "$rc")
	instance_test_cleanup
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

unmount() {
	if awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
	then
		umount "$mnt" || umount -l "$mnt"
	fi
}

now_ms() {
	date +%s%3N
}

# 4 readers at once through a mount of the instance with lanes
# connections per iod: prints the milliseconds they took.
readers() {
	sed "s/^\[global\]$/[global]\niod_connections = $1/" "$conf" \
		>"$tmp/lanes.conf"
	"$build/kernel/mount.clf" "$tmp/lanes.conf" "$mnt" -o cache=none ||
		fail "mount with iod_connections = $1"
	t0=$(now_ms)
	pids=""
	for i in 0 1 2 3; do
		dd if="$mnt/f$i" of="$tmp/back$i" bs=1M 2>/dev/null &
		pids="$pids $!"
	done
	for p in $pids; do
		wait "$p" || fail "a reader failed (iod_connections = $1)"
	done
	t1=$(now_ms)
	for i in 0 1 2 3; do
		cmp -s "$tmp/f$i" "$tmp/back$i" ||
			fail "f$i read back differs (iod_connections = $1)"
	done
	unmount
	echo $((t1 - t0))
}

# 2 iods, every reply 40 ms late.
CLF_TEST_IOD_DELAY_MS=40 instance_up "$clf" "$data" "$tmp/up.log" \
	--iods 2 || fail "clf up"
for i in 0 1 2 3; do
	head -c $((4 << 20)) /dev/urandom >"$tmp/f$i"
done
"$build/kernel/mount.clf" "$conf" "$mnt" || fail "mount"
for i in 0 1 2 3; do
	cp "$tmp/f$i" "$mnt/f$i" || fail "cp f$i"
done
unmount

one=$(readers 1)
four=$(readers 4)
echo "4 readers of 4 MiB (1 MiB requests), replies 40 ms late:" \
	"$one ms on 1 connection per iod, $four ms on 4"
# Served at once, 4 readers take about a quarter; one at a time, the same.
[ "$four" -lt $((one * 2 / 3)) ] ||
	fail "4 connections per iod: $four ms, not below 2/3 of $one ms"
echo "PASS"
