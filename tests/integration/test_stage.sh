#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_stage.sh -- an instance backed by a directory (clf up --backing):
# write-back after close through the journal, a stager killed between
# the note and the copy, and a file that cannot be written back.
#
#  1. clf up --backing B starts the stager; a file written into clf
#     (clf cp) appears in B, same bytes, with no stage-out asked; the
#     same file rewritten in place (same size) appears again with the
#     new bytes;
#  2. a stager held between the note and the copy (test hook
#     CLF_STAGER_TEST_HOLD_MS): the close's note is in the journal, the
#     file is not in B; kill -9 of the stager; a new stager writes it
#     back, same bytes, saying it replays what was noted;
#  3. clf stage-in clf:/PATH copies B/PATH (a tree) into clf, same
#     bytes; an open of a file that only B has stages it in (its clf
#     directories made, no hidden copy left);
#  4. the journal, every note done, compacted by a second stager
#     (--drain, CLF_STAGER_COMPACT_BYTES=1): it holds only where each
#     file was written back, and the
#     running stager reads the new one from its start: a file closed
#     after it is written back;
#  5. a journal that cannot be written (B/.clf-stage made a regular
#     file): a close fails and says why, naming the journal;
#  6. removals and renames reach B: a file renamed (clf mv) is renamed
#     in B, not copied again; a removed one is removed; a directory
#     renamed, then removed with what it holds; a directory renamed onto
#     one that only B has, holding a file clf never had: that file
#     stays, the renamed file is written there; with the stager held
#     (no note applied) and killed: a file created and removed, one
#     created and renamed, one written back and renamed, all noted in
#     the journal; the next stager applies them in order: the removed
#     file never reaches B, the renamed ones are in B under their new
#     names only;
#  7. a file whose place in B is taken by a regular file: clf down says
#     which file could not be written back and why, exits 1, and still
#     stops every daemon.
#
# usage: test_stage.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/instance_lib.sh"
instance_timed 120 "$0" "$@"
instance_test_begin stage "${1:-${CLF_BUILD_DIR:-build}}"
back=$tmp/back
journal=$back/.clf-stage/journal
step=

# appears FILE WANT: wait up to 10 s until FILE holds WANT's bytes.
appears() {
	i=0
	while ! cmp -s "$1" "$2"; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || fail "$1 does not hold the bytes of $2"
		sleep 0.05
	done
}

# gone FILE: wait up to 10 s until FILE is no more.
gone() {
	i=0
	while [ -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -lt 200 ] || fail "$1 is still there"
		sleep 0.05
	done
}

# stager_pid: the running stager's pid (stager.pid).
stager_pid() {
	p=$(cat "$data/stager.pid" 2>/dev/null || true)
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null || fail "no stager runs"
	echo "$p"
}

step="up --backing"
instance_up "$clf" "$data" "$tmp/up.log" --iods 2 --backing "$back" ||
	fail "clf up --backing"
grep -q "^backing = $back\$" "$conf" || fail "no backing key in $conf"
grep -q "^stager .* started" "$tmp/up.log" ||
	fail "up started no stager: $(cat "$tmp/up.log")"

step="write-back after close"
head -c 2500000 /dev/urandom >"$tmp/a"
run "$clf" mkdir --data "$data" clf:/out
[ "$rc" = 0 ] || fail "mkdir"
run "$clf" cp --data "$data" "$tmp/a" clf:/out/a
[ "$rc" = 0 ] || fail "cp in"
appears "$back/out/a" "$tmp/a"
grep -q "^W " "$journal" || fail "no note in the journal"

step="rewritten in place, same size"
head -c 2500000 /dev/urandom >"$tmp/a2"
run "$clf" cp --data "$data" "$tmp/a2" clf:/out/a
[ "$rc" = 0 ] || fail "cp in again"
appears "$back/out/a" "$tmp/a2"

step="stager killed between the note and the copy"
p=$(stager_pid)
kill -9 "$p"
while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
CLF_STAGER_TEST_HOLD_MS=600000 "$clf" stager --data "$data" \
	>"$tmp/out" 2>"$tmp/err" || fail "stager with a hold"
held=$(stager_pid)
[ "$held" != "$p" ] || fail "the killed stager still runs"
notes=$(grep -c "^W " "$journal")
head -c 1500000 /dev/urandom >"$tmp/k"
run "$clf" cp --data "$data" "$tmp/k" clf:/k
[ "$rc" = 0 ] || fail "cp in k"
[ "$(grep -c "^W " "$journal")" -gt "$notes" ] ||
	fail "the close left no note in the journal"
sleep 0.5
[ ! -e "$back/k" ] || fail "the held stager copied k"
kill -9 "$held"
while kill -0 "$held" 2>/dev/null; do sleep 0.05; done
[ ! -e "$back/k" ] || fail "k written back by a killed stager"
run "$clf" stager --data "$data"
[ "$rc" = 0 ] || fail "stager restart"
appears "$back/k" "$tmp/k"
grep -q "noted in $journal and not yet written back" "$data/stager.log" ||
	fail "the new stager did not replay the journal: $(cat "$data/stager.log")"

step="stage-in from the backing directory"
mkdir -p "$back/in/sub"
head -c 700000 /dev/urandom >"$back/in/sub/x"
run "$clf" stage-in --data "$data" -q clf:/in
[ "$rc" = 0 ] || fail "stage-in clf:/in"
run "$clf" cp --data "$data" -q clf:/in/sub/x "$tmp/x"
[ "$rc" = 0 ] || fail "cp out x"
cmp -s "$tmp/x" "$back/in/sub/x" || fail "staged-in bytes differ"
mkdir -p "$back/lazy/deep"
head -c 900000 /dev/urandom >"$back/lazy/deep/z"
run "$clf" cp --data "$data" -q clf:/lazy/deep/z "$tmp/z"
[ "$rc" = 0 ] || fail "an open of a file only the backing directory has"
cmp -s "$tmp/z" "$back/lazy/deep/z" || fail "staged-in-at-open bytes differ"
run "$clf" ls --data "$data" -a clf:/lazy/deep
[ "$(cat "$tmp/out")" = z ] || fail "clf:/lazy/deep holds $(cat "$tmp/out")"
run "$clf" stage-in --data "$data" clf:/nothing
[ "$rc" = 1 ] || fail "stage-in of a missing path exited $rc"
grep -q "/nothing: No such file" "$tmp/err" || fail "no reason for the missing path"

step="the journal compacted once every note is done"
export CLF_STAGER_COMPACT_BYTES=1
run "$clf" stager --drain --data "$data"
unset CLF_STAGER_COMPACT_BYTES
[ "$rc" = 0 ] || fail "drain with compaction exited $rc: $(cat "$tmp/err")"
grep -q "compacted: [0-9]* bytes of notes, all done" "$tmp/err" ||
	fail "the drain did not compact: $(cat "$tmp/err")"
! grep -qv "^D [0-9]* 0 /" "$journal" ||
	fail "the compacted journal holds more than where files are: $(cat "$journal")"
grep -q "^D [0-9]* 0 /out/a\$" "$journal" ||
	fail "the compacted journal does not say where /out/a was written back"
ls "$back/.clf-stage" | grep -q "journal.new" && fail "a temporary journal is left"
head -c 1200000 /dev/urandom >"$tmp/c"
run "$clf" cp --data "$data" "$tmp/c" clf:/out/c
[ "$rc" = 0 ] || fail "cp in c"
appears "$back/out/c" "$tmp/c"
[ "$(grep -c "^W " "$journal")" = 1 ] || fail "want one note: $(cat "$journal")"
grep -q "was compacted (every note done): reading the new one" \
	"$data/stager.log" ||
	fail "the running stager did not see the new journal: $(cat "$data/stager.log")"

step="a journal that cannot be written"
run "$clf" stager --drain --data "$data"
[ "$rc" = 0 ] || fail "drain before moving the journal"
mv "$back/.clf-stage" "$tmp/stage-dir"
echo "not a directory" >"$back/.clf-stage"
run "$clf" cp --data "$data" "$tmp/k" clf:/nojournal
[ "$rc" = 1 ] || fail "a close with no journal exited $rc"
grep -q "cannot note inode [0-9]* for write-back in $back/.clf-stage" "$tmp/err" ||
	fail "the close does not say why"
rm "$back/.clf-stage"
mv "$tmp/stage-dir" "$back/.clf-stage"
run "$clf" rm --data "$data" clf:/nojournal
[ "$rc" = 0 ] || fail "rm nojournal"

step="removals and renames reach the backing directory"
tab=$(printf '\t')
run "$clf" mv --data "$data" clf:/out/a clf:/out/a-moved
[ "$rc" = 0 ] || fail "mv out/a"
grep -q "^N /out/a$tab/out/a-moved\$" "$journal" ||
	fail "no rename note in the journal: $(cat "$journal")"
appears "$back/out/a-moved" "$tmp/a2"
gone "$back/out/a"
run "$clf" rm --data "$data" clf:/out/c
[ "$rc" = 0 ] || fail "rm out/c"
grep -q "^R /out/c\$" "$journal" || fail "no removal note in the journal"
gone "$back/out/c"
run "$clf" mv --data "$data" clf:/lazy clf:/lazy2
[ "$rc" = 0 ] || fail "mv lazy"
appears "$back/lazy2/deep/z" "$tmp/z"
gone "$back/lazy"
run "$clf" rm --data "$data" -r clf:/lazy2
[ "$rc" = 0 ] || fail "rm -r lazy2"
gone "$back/lazy2"
# Renamed onto a directory that only the backing directory has, with a
# file clf never had: that stays, the renamed files are written there.
mkdir -p "$back/keep"
echo "only in the backing directory" >"$back/keep/own"
run "$clf" mkdir --data "$data" clf:/mine
[ "$rc" = 0 ] || fail "mkdir mine"
run "$clf" cp --data "$data" "$tmp/z" clf:/mine/z
[ "$rc" = 0 ] || fail "cp mine/z"
appears "$back/mine/z" "$tmp/z"
run "$clf" mv --data "$data" clf:/mine clf:/keep
[ "$rc" = 0 ] || fail "mv mine keep"
appears "$back/keep/z" "$tmp/z"
[ -e "$back/keep/own" ] || fail "a rename removed a file clf never had"
[ -e "$back/in/sub/x" ] || fail "a removal reached a file it did not name"

step="removals and renames noted, the stager killed before it applied them"
p=$(stager_pid)
kill -9 "$p"
while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
CLF_STAGER_TEST_HOLD_MS=600000 "$clf" stager --data "$data" \
	>"$tmp/out" 2>"$tmp/err" || fail "stager with a hold"
held=$(stager_pid)
head -c 300000 /dev/urandom >"$tmp/t"
head -c 400000 /dev/urandom >"$tmp/m"
for c in "cp $tmp/t clf:/t" "rm clf:/t" "cp $tmp/m clf:/m1" \
	"mv clf:/m1 clf:/m2" "mv clf:/k clf:/k2"; do
	# shellcheck disable=SC2086
	run "$clf" ${c%% *} --data "$data" ${c#* }
	[ "$rc" = 0 ] || fail "clf $c: $(cat "$tmp/err")"
done
grep -q "^R /t\$" "$journal" || fail "no note of the removal of /t"
grep -q "^N /m1$tab/m2\$" "$journal" || fail "no note of the rename of /m1"
grep -q "^N /k$tab/k2\$" "$journal" || fail "no note of the rename of /k"
sleep 0.3
[ -e "$back/k" ] && [ ! -e "$back/k2" ] || fail "the held stager applied a note"
kill -9 "$held"
while kill -0 "$held" 2>/dev/null; do sleep 0.05; done
run "$clf" stager --data "$data"
[ "$rc" = 0 ] || fail "stager restart"
appears "$back/k2" "$tmp/k"
appears "$back/m2" "$tmp/m"
gone "$back/k"
run "$clf" stager --drain --data "$data"
[ "$rc" = 0 ] || fail "drain after the notes exited $rc: $(cat "$tmp/err")"
for f in t m1; do
	[ ! -e "$back/$f" ] || fail "$back/$f is there"
done
ls -a "$back" | grep -q "clf-stage\." && fail "a temporary copy is left in $back"

step="a file that cannot be written back"
echo "not a directory" >"$back/blocked"
run "$clf" mkdir --data "$data" clf:/blocked
[ "$rc" = 0 ] || fail "mkdir blocked"
run "$clf" cp --data "$data" "$tmp/k" clf:/blocked/f
[ "$rc" = 0 ] || fail "cp in blocked/f"
run "$clf" down --data "$data"
[ "$rc" = 1 ] || fail "down exited $rc, not 1"
grep -q "not written back: clf:/blocked/f -> $back/blocked/f: .*not a directory" "$tmp/err" ||
	fail "down does not say which file and why"
grep -q "^metad .* stopped" "$tmp/out" || fail "down did not stop metad"
[ "$(grep -c "^iod .* stopped" "$tmp/out")" = 2 ] ||
	fail "down did not stop the iods"
cmp -s "$back/k2" "$tmp/k" || fail "k2 changed"
echo "PASS: test_stage"
