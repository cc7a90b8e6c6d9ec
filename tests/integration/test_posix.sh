#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_posix.sh -- POSIX conformance of the mount (kernel/, FUSE):
# posix_suite.py, our own pjdfstest-like suite of every namespace call
# (open, creat, mkdir, rmdir, unlink, rename, link, symlink, readlink,
# mknod, mkfifo, chmod, chown, truncate, ftruncate, utimensat and the
# stat fields they change), as root and as nobody, over a real instance
# on loopback mounted twice: with the kernel's caches (allow_other, as
# users mount it) and with cache=none.  Then the same objects through
# the native API: mount_helper reads the links and counts the names
# made through the mount, and makes some the mount then sees.
#
# usage: test_posix.sh [BUILD_DIR]     (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 only when /dev/fuse is missing
# or we are not root (the suite changes owners and acts as nobody).

set -eu

TIME_LIMIT=180	# seconds, the whole test
if [ -z "${CLF_POSIX_TEST_TIMED:-}" ]; then
	CLF_POSIX_TEST_TIMED=1
	export CLF_POSIX_TEST_TIMED
	exec timeout -k 10 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root"
	exit 77
fi
for b in metad/metad iod/iod tools/clf kernel/mount.clf \
	tests/integration/mount_helper; do
	if [ ! -x "$build/$b" ]; then
		echo "FAIL: $build/$b not built" >&2
		exit 1
	fi
done
if ! command -v python3 >/dev/null; then
	echo "FAIL: python3 not installed (make deps)" >&2
	exit 1
fi
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true

build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf
helper=$build/tests/integration/mount_helper

# shellcheck source=tests/integration/instance_lib.sh
. "$here/instance_lib.sh"
# shellcheck source=tests/integration/suite_lib.sh
. "$here/suite_lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-posix-test.XXXXXX")
chmod 755 "$tmp"	# nobody walks to the mount points
data=$tmp/data
mnt=$tmp/mnt
mnt2=$tmp/mnt2
mkdir "$mnt" "$mnt2"

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	for m in "$mnt" "$mnt2"; do
		if mounted "$m"; then
			umount -l "$m" 2>/dev/null || true
		fi
	done
	if [ -f "$data/clf.conf" ] &&
		! "$clf" down --data "$data" >"$tmp/down" 2>&1; then
		echo "cleanup: clf down failed:" >&2
		cat "$tmp/down" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

fail() {
	echo "FAIL: $*" >&2
	for f in "$tmp"/mnt*.log; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -20 "$f" >&2
	done
	exit 1
}

instance_up "$clf" "$data" "$tmp/up" || fail "clf up"
"$mountclf" "$data/clf.conf" "$mnt" -o "allow_other,log=$tmp/mnt.log" ||
	fail "mount with allow_other"
"$mountclf" "$data/clf.conf" "$mnt2" \
	-o "allow_other,cache=none,log=$tmp/mnt2.log" ||
	fail "mount with cache=none"
chmod 755 "$mnt" "$mnt2"

rc=0
echo "-- mount, kernel caches on"
python3 "$here/posix_suite.py" "$mnt" || rc=1
echo "-- mount, cache=none"
python3 "$here/posix_suite.py" "$mnt2" || rc=1
[ "$rc" -eq 0 ] || fail "posix_suite.py (above)"

echo "-- native API on what the mount made, and the reverse"
mkdir "$mnt/nat"
printf 'linked data' >"$mnt/nat/f"
ln "$mnt/nat/f" "$mnt/nat/g"
ln -s ../nat/f "$mnt/nat/l"
mkfifo "$mnt/nat/p"
"$helper" links "$data/clf.conf" /nat >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out" >&2; fail "mount_helper links"; }
for want in "g: S_IFREG nlink 2" "l: S_IFLNK '../nat/f'" "p: S_IFIFO" \
	"native link: nlink 3" "native symlink: ok" "open l: ELOOP" \
	"open p: ENXIO"; do
	grep -qF "$want" "$tmp/out" ||
		{ cat "$tmp/out" >&2; fail "native API: no '$want'"; }
done
# Another client's changes: through the mount that caches nothing (the
# other trusts what it was told for its attribute timeout, as NFS).
[ "$(readlink "$mnt2/nat/nl")" = "f" ] || fail "native symlink, seen by the mount"
[ "$(cat "$mnt2/nat/nl")" = "linked data" ] || fail "native symlink, followed"
[ "$(stat -c %h "$mnt2/nat/f")" = 3 ] || fail "native link, seen by the mount"
[ "$(cat "$mnt2/nat/h")" = "linked data" ] || fail "native link, its data"
echo "-- clf ls -l shows the kinds and a symlink's target"
"$clf" -c "$data/clf.conf" ls -l /nat >"$tmp/out" 2>&1 ||
	{ cat "$tmp/out" >&2; fail "clf ls -l"; }
grep -Eq '^l.* l -> \.\./nat/f$' "$tmp/out" &&
	grep -Eq '^p.* p$' "$tmp/out" ||
	{ cat "$tmp/out" >&2; fail "clf ls -l: symlink or fifo shown wrong"; }
echo "posix: passed"
