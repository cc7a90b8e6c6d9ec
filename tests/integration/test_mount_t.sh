#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_mount_t.sh -- `mount -t clf` and an fstab line, through mount(8)
# and the /sbin/mount.clf helper (installed with `make install-mount`
# semantics for the test, and removed again), on a real local instance.
#
# usage: test_mount_t.sh [BUILD_DIR]
# Exits 0 on success, 1 on failure, 77 without /dev/fuse or when not
# root (installing into /sbin needs root).

set -eu

build=${1:-${CLF_BUILD_DIR:-build}}
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: installing /sbin/mount.clf needs root"
	exit 77
fi
build=$(cd "$build" && pwd)
clf=$build/tools/clf
. "$(cd "$(dirname "$0")" && pwd)/instance_lib.sh"
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-mount-t.XXXXXX")
mnt=$tmp/mnt
mkdir "$mnt"
installed=""
backup=""

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

cleanup() {
	rc=$?
	trap - EXIT INT TERM
	if awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
	then
		umount -l "$mnt" 2>/dev/null || true
	fi
	"$clf" down --data "$tmp/data" >/dev/null 2>&1 || true
	if [ -n "$backup" ]; then
		mv -f "$backup" /sbin/mount.clf
	elif [ -n "$installed" ]; then
		rm -f /sbin/mount.clf
	fi
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT INT TERM

instance_up "$clf" "$tmp/data" "$tmp/up.log" --iods 2 || fail "clf up"
conf=$tmp/data/clf.conf

if [ -e /sbin/mount.clf ]; then
	backup=$tmp/mount.clf.orig
	cp -p /sbin/mount.clf "$backup"
fi
install -m 755 "$build/kernel/clf-fuse" /sbin/mount.clf
installed=1

# 1. mount -t clf SOURCE DIR -o OPTIONS
mount -t clf "$conf" "$mnt" -o allow_other,cache=normal ||
	fail "mount -t clf $conf $mnt"
grep -q " $mnt fuse.clf " /proc/mounts || fail "not in /proc/mounts"
printf 'hello through mount(8)\n' > "$mnt/hello"
[ "$(cat "$mnt/hello")" = "hello through mount(8)" ] || fail "read back"
df "$mnt" >/dev/null || fail "df"
umount "$mnt" || fail "umount"
sleep 0.2
grep -q " $mnt " /proc/mounts && fail "still mounted after umount"

# 2. an fstab line (mount -T FILE reads that file as the fstab)
printf '%s %s clf allow_other,noauto 0 0\n' "$conf" "$mnt" > "$tmp/fstab"
mount -T "$tmp/fstab" "$mnt" || fail "mount from fstab"
[ "$(cat "$mnt/hello")" = "hello through mount(8)" ] ||
	fail "the file is not there after remounting from fstab"
umount "$mnt" || fail "umount (fstab)"

# 3. a bad source is refused with a message, and nothing is mounted
if mount -t clf "$tmp/no-such.conf" "$mnt" 2>"$tmp/err"; then
	fail "a missing configuration was accepted"
fi
grep -q "no-such.conf" "$tmp/err" || fail "the error does not name the file: $(cat "$tmp/err")"
grep -q " $mnt " /proc/mounts && fail "mounted despite the error"

echo "PASS: mount -t clf and fstab"
