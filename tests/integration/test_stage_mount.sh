#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_stage_mount.sh -- removals and renames made through the mount
# (the inode-based calls, which know no paths: the client finds them,
# stage_path.c) reach the backing directory of an instance (clf up
# --backing):
#
#  1. a file written through the mount three directories down is
#     written back;
#  2. its top directory renamed: the backing directory has it under the
#     new name only (renamed there, not copied);
#  3. the file renamed inside its directory (a directory the client has
#     to search for): the journal names both paths, and the backing
#     directory has the new name only;
#  4. the file removed, then its directory: both are gone from the
#     backing directory.
#
# usage: test_stage_mount.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/instance_lib.sh"
instance_timed 120 "$0" "$@"
instance_test_begin stage-mount "${1:-${CLF_BUILD_DIR:-build}}"
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
back=$tmp/back
mnt=$tmp/mnt
journal=$back/.clf-stage/journal
tab=$(printf '\t')
step=

# appears FILE WANT / gone FILE: wait up to 10 s.
appears() {
	i=0
	while ! cmp -s "$1" "$2"; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || fail "$1 does not hold the bytes of $2"
		sleep 0.05
	done
}
gone() {
	i=0
	while [ -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || fail "$1 is still there"
		sleep 0.05
	done
}

step="up --backing, mount"
mkdir -p "$mnt"
instance_up "$clf" "$data" "$tmp/up.log" --iods 2 --backing "$back" ||
	fail "clf up --backing"
run "$build/kernel/mount.clf" "$conf" "$mnt" -o client=fuse
[ "$rc" = 0 ] || fail "mount.clf exited $rc"

step="written back through the mount"
head -c 300000 /dev/urandom >"$tmp/f"
mkdir -p "$mnt/d/e/sub"
cp "$tmp/f" "$mnt/d/e/sub/f"
appears "$back/d/e/sub/f" "$tmp/f"

step="a directory renamed through the mount"
mv "$mnt/d" "$mnt/d2"
grep -q "^N /d$tab/d2\$" "$journal" || fail "no rename note: $(cat "$journal")"
appears "$back/d2/e/sub/f" "$tmp/f"
gone "$back/d"

step="a file renamed in a directory the client searches for"
mv "$mnt/d2/e/sub/f" "$mnt/d2/e/sub/g"
grep -q "^N /d2/e/sub/f$tab/d2/e/sub/g\$" "$journal" ||
	fail "no rename note: $(cat "$journal")"
appears "$back/d2/e/sub/g" "$tmp/f"
gone "$back/d2/e/sub/f"
[ "$(grep -c "^W " "$journal")" = 1 ] ||
	fail "a rename copied the file again: $(cat "$journal")"

step="a file and its directory removed through the mount"
rm "$mnt/d2/e/sub/g"
rmdir "$mnt/d2/e/sub"
grep -q "^R /d2/e/sub\$" "$journal" || fail "no removal note: $(cat "$journal")"
gone "$back/d2/e/sub"
[ -d "$back/d2/e" ] || fail "a removal reached $back/d2/e"
umount "$mnt"
echo "PASS: test_stage_mount"
