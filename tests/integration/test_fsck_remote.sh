#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_fsck_remote.sh -- `clf fsck` asks the iods over the network: iod 1
# runs in a mount namespace of its own with its storage directory on a
# private tmpfs, so nothing fsck could read through the file system
# holds its subfiles.  Damage is made on purpose inside that namespace:
# an orphan subfile, a lost subfile, a subfile longer than metad's size.
# fsck reports each on iod 1 (exit 1), --repair removes the orphan and
# makes the lost subfile (empty) there, the size stays reported, and the
# file's bytes are what a read gave before the repair.  A hole no one
# wrote (a subfile never made, its bytes under metad's size) is reported
# as absent but is no damage: a healthy instance checks clean.
#
# usage: test_fsck_remote.sh [BUILD_DIR]  (default: $CLF_BUILD_DIR or build)
# Exits 77 when a mount namespace cannot be made here (not root).
set -eu

TIME_LIMIT=120
if [ -z "${CLF_FSCK_TEST_TIMED:-}" ]; then
	CLF_FSCK_TEST_TIMED=1
	export CLF_FSCK_TEST_TIMED
	exec timeout -k 10 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
build=$(cd "$build" && pwd)
clf=$build/tools/clf
iod=$build/iod/iod
if [ ! -x "$build/metad/metad" ] || [ ! -x "$iod" ]; then
	echo "SKIP: daemons not built yet"
	exit 77
fi
if ! unshare -m true 2>/dev/null; then
	echo "SKIP: cannot make a mount namespace here"
	exit 77
fi
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-fsck-test.XXXXXX")
data=$tmp/data
hidden=""	# pid of iod 1, in its namespace
cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	[ -n "$hidden" ] && kill "$hidden" 2>/dev/null
	[ -f "$data/clf.conf" ] && "$clf" down --data "$data" >/dev/null 2>&1
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=""
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/instance_lib.sh"

expect_rc() {
	[ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"
}

# in_ns CMD...: run CMD in iod 1's mount namespace.
in_ns() {
	nsenter -t "$hidden" -m "$@"
}

step="up, iod 1 moved into a mount namespace with a private tmpfs"
instance_up "$clf" "$data" "$tmp/up.log" --iods 2 || fail "clf up"
kill "$(cat "$data/iod1/iod.pid")"
i=0
while [ -f "$data/iod1/iod.pid" ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "iod 1 did not stop"
	sleep 0.1
done
# unshare execs the shell, which execs the iod: $! is the iod.
unshare -m sh -c 'mount -t tmpfs clf-fsck-test "$1" && exec "$2" -c "$3" -n 1 -f --log "$4"' \
	sh "$data/iod1" "$iod" "$data/clf.conf" "$tmp/iod1.log" &
hidden=$!
i=0
until grep -q "listening on" "$tmp/iod1.log" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "iod 1 did not start in its namespace"
	sleep 0.1
done

step="a file with a subfile on each iod"
head -c 300000 /dev/urandom >"$tmp/f.bin"
run "$clf" cp --data "$data" -q "$tmp/f.bin" clf:/f.bin
expect_rc 0
sub=$(in_ns find "$data/iod1" -name '*.1' | head -1)
[ -n "$sub" ] || fail "iod 1 holds no subfile 1 in its namespace"
# f.bin's subfile 0, found while it is the only file: the sparse file's
# below is removed through metad's queue, maybe after a later find.
sub0=$(find "$data/iod0" -name '*.0' | head -1)
[ -n "$sub0" ] || fail "iod 0 holds no subfile 0"
[ -e "$sub" ] && fail "iod 1's subfile is visible outside its namespace"
run "$clf" fsck --data "$data"
expect_rc 0
[ "$(grep -c ': ok' "$tmp/out")" -eq 3 ] || fail "not 3 ok lines"
grep -q "^iod 1 (.*): ok (1 subfiles)$" "$tmp/out" ||
	fail "iod 1's subfile not counted"

step="a hole no one wrote is absent, not damage"
# clf cp keeps a local file's holes: the second 64 KiB stripe, all of
# subfile 1 under the size, is never written.
head -c 1000 /dev/urandom >"$tmp/sparse.bin"
truncate -s 131072 "$tmp/sparse.bin"
head -c 1000 /dev/urandom >>"$tmp/sparse.bin"
run "$clf" cp --data "$data" -q "$tmp/sparse.bin" clf:/sparse.bin
expect_rc 0
run "$clf" fsck --data "$data"
expect_rc 0
grep -q '^iod 1: absent subfile 1 of file 0x[0-9a-f]* (metad.s size 132072 covers 65536 bytes of it; they read as zeros: a hole, or a lost subfile)$' "$tmp/out" ||
	fail "the hole on iod 1 not reported as absent"
grep -q "^1 absent subfile under metad's size: its bytes read as zeros" "$tmp/out" ||
	fail "no note of the absent subfile"
run "$clf" cp --data "$data" -q clf:/sparse.bin "$tmp/sparse.back"
expect_rc 0
cmp "$tmp/sparse.bin" "$tmp/sparse.back" || fail "the sparse file read back differs"
run "$clf" rm --data "$data" clf:/sparse.bin
expect_rc 0

step="an orphan, a lost subfile, a subfile past metad's size"
in_ns sh -c 'mkdir -p "$1/ab" && printf orphan >"$1/ab/00000000deadbeab.3"' \
	sh "$data/iod1"
in_ns rm "$sub"
# Subfile 0 on iod 0, on this host, grows past what metad's size covers.
len0=$(stat -c %s "$sub0")
truncate -s $((len0 + 4096)) "$sub0"
run "$clf" fsck --data "$data"
expect_rc 1
grep -q '^iod 1: orphan subfile 3 of file 0xdeadbeab (6 bytes, on ' "$tmp/out" ||
	fail "the orphan on iod 1 not reported"
grep -q '^iod 1: absent subfile 1 of file 0x[0-9a-f]* (metad.s size 300000 covers ' "$tmp/out" ||
	fail "the lost subfile on iod 1 not reported"
grep -q "^iod 0: subfile 0 of file 0x[0-9a-f]* is $((len0 + 4096)) bytes; metad's size 300000 covers $len0 of them$" "$tmp/out" ||
	fail "the long subfile on iod 0 not reported"
grep -q "1 orphan subfile (clf fsck --repair removes them), 1 subfile longer than metad's size" "$tmp/err" ||
	fail "no summary"

step="--repair removes the orphan and makes the lost subfile"
run "$clf" fsck --data "$data" --repair
expect_rc 1
grep -q '^iod 1: removed orphan subfile 3 of file 0xdeadbeab ' "$tmp/out" ||
	fail "the orphan not removed"
grep -q '^iod 1: made absent subfile 1 of file ' "$tmp/out" ||
	fail "the lost subfile not made"
in_ns test ! -e "$data/iod1/ab/00000000deadbeab.3" ||
	fail "the orphan is still in iod 1's directory"
[ "$(in_ns stat -c %s "$sub")" = 0 ] || fail "the subfile made is not empty"
grep -q "^1 subfile longer than metad's size$" "$tmp/err" ||
	grep -q "clf: 1 subfile longer than metad's size" "$tmp/err" ||
	fail "the size is not reported after repair"
truncate -s "$len0" "$sub0"
run "$clf" fsck --data "$data"
expect_rc 0
[ "$(grep -c ': ok' "$tmp/out")" -eq 3 ] || fail "not 3 ok lines after repair"

step="the file reads as zeros where its subfile was lost"
run "$clf" cp --data "$data" -q clf:/f.bin "$tmp/back.bin"
expect_rc 0
[ "$(stat -c %s "$tmp/back.bin")" = 300000 ] || fail "size changed"
# Bytes of subfile 0 (the first 64 KiB stripe) are intact.
cmp -n 65536 "$tmp/f.bin" "$tmp/back.bin" || fail "subfile 0's bytes changed"
head -c 65536 /dev/zero >"$tmp/zeros"
cmp -i 65536:0 -n 65536 "$tmp/back.bin" "$tmp/zeros" ||
	fail "the lost subfile's bytes do not read as zeros"

echo "PASS: clf fsck over the network"
