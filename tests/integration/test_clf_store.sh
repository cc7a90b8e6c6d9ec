#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_clf_store.sh -- `clf fsck`, `clf backup` and `clf restore` on a
# real instance: fsck passes on a live instance; a backup taken while
# metad runs (and writes) is restored after `clf down`, and the
# restored metad serves the namespace of the backup's moment (a
# directory made after it is gone); fsck then finds the subfiles of a
# file made after the backup (orphans) and a hand-made one, --repair
# removes them and nothing else; restore refuses while metad runs, and
# a damaged store or backup is reported, not used.
#
# usage: test_clf_store.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)
set -eu

TIME_LIMIT=180
if [ -z "${CLF_STORE_TEST_TIMED:-}" ]; then
	CLF_STORE_TEST_TIMED=1
	export CLF_STORE_TEST_TIMED
	exec timeout -k 30 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
clf=$build/tools/clf
if [ ! -x "$build/metad/metad" ] || [ ! -x "$build/iod/iod" ]; then
	echo "SKIP: daemons not built yet"
	exit 77
fi
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-store-test.XXXXXX")
data=$tmp/data
cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
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

step="up"
instance_up "$clf" "$data" "$tmp/up.log" --iods 2 || fail "clf up"
head -c 100000 /dev/urandom >"$tmp/f.bin"
run "$clf" mkdir --data "$data" -p /keep/sub
expect_rc 0
run "$clf" cp --data "$data" -q "$tmp/f.bin" clf:/keep/f.bin
expect_rc 0

step="fsck on a live instance"
run "$clf" fsck --data "$data"
expect_rc 0
grep -q "^metad store $data/meta: ok$" "$tmp/out" || fail "no ok line"

step="backup while metad runs"
run "$clf" backup --data "$data" "$tmp/bk"
expect_rc 0
[ -f "$tmp/bk/data.mdb" ] || fail "no data.mdb in the backup"
run "$clf" backup --data "$data" "$tmp/bk"
expect_rc 1
grep -q 'holds a backup already' "$tmp/err" || fail "second backup not refused"
run "$clf" mkdir --data "$data" /after
expect_rc 0
run "$clf" cp --data "$data" -q "$tmp/f.bin" clf:/late.bin
expect_rc 0

step="restore refuses while metad runs"
run "$clf" restore --data "$data" "$tmp/bk"
expect_rc 1
grep -q 'stop it first' "$tmp/err" || fail "restore while running"

step="restore after clf down"
run "$clf" down --data "$data"
expect_rc 0
run "$clf" restore --data "$data" "$tmp/bk"
expect_rc 0
[ -f "$data/meta/data.mdb.before-restore" ] || fail "old store not kept"
run "$clf" up --data "$data"
expect_rc 0
run "$clf" ls --data "$data" /
expect_rc 0
grep -qx keep "$tmp/out" || fail "restored namespace lacks /keep"
grep -qx after "$tmp/out" && fail "restored namespace has /after, made after the backup"
run "$clf" cp --data "$data" -q clf:/keep/f.bin "$tmp/back.bin"
expect_rc 0
cmp -s "$tmp/f.bin" "$tmp/back.bin" || fail "file differs after restore"

step="fsck finds the orphans of a file made after the backup"
run "$clf" fsck --data "$data"
expect_rc 1
[ "$(grep -c '^iod [01]: orphan subfile ' "$tmp/out")" -ge 2 ] ||
	fail "not the orphan subfiles of /late.bin on both iods"
grep -q 'orphan subfiles (clf fsck --repair removes them)' "$tmp/err" ||
	fail "no summary"
# One made by hand, beside the iod's own files and a file not the iod's.
mkdir -p "$data/iod1/ab"
: >"$data/iod1/ab/00000000deadbeab.3"
: >"$data/iod1/ab/notes.txt"
run "$clf" fsck --data "$data" --repair
expect_rc 0
grep -q '^iod 1: removed orphan subfile 3 of file 0xdeadbeab ' "$tmp/out" ||
	fail "the hand-made orphan not removed"
[ -f "$data/iod1/ab/notes.txt" ] || fail "fsck --repair removed a file not the iod's"
run "$clf" fsck --data "$data"
expect_rc 0
[ "$(grep -c ': ok' "$tmp/out")" -eq 3 ] || fail "not 3 ok lines"
run "$clf" cp --data "$data" -q clf:/keep/f.bin "$tmp/back2.bin"
expect_rc 0
cmp -s "$tmp/f.bin" "$tmp/back2.bin" || fail "--repair touched a live file"

step="damage is reported"
mkdir "$tmp/bad"
head -c 65536 /dev/urandom >"$tmp/bad/data.mdb"
run "$clf" down --data "$data"
expect_rc 0
run "$clf" restore --data "$data" "$tmp/bad"
expect_rc 1
grep -q "cannot open the store '$tmp/bad'" "$tmp/err" || fail "bad backup used"
cp "$tmp/bad/data.mdb" "$data/meta/data.mdb"
rm -f "$data/meta/lock.mdb"
run "$clf" fsck --data "$data"
expect_rc 1
grep -q "cannot open the store '$data/meta'" "$tmp/err" ||
	fail "fsck did not report the damaged store"

echo "PASS: clf fsck, backup, restore"
