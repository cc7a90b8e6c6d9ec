#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_elastic.sh -- `clf iod add` and `clf iod remove N` under load:
# zero bytes lost.
#
#  1. an instance of 4 iods; two clients (elastic_client) fill a file
#     each, striped over the 4, then keep rewriting random blocks with
#     new generations and reading others back, compared;
#  2. a remove whose mover dies between copy and commit (test hook
#     CLF_TEST_MOVER_DIE): the clients go on (the fence went with the
#     mover's connection; the layout never changed);
#  3. `clf iod add` while they run: iod 4 joins (metad restarted under
#     them); a third client started then stripes its new file over the 5
#     iods: iod 4's store holds its subfile; metad, restarted by the add,
#     logs the move that did not finish;
#  4. 100 small files more (clf stage-in), then `clf iod remove 1`
#     while the three clients run: it says the iod was emptied, and iod
#     1's store holds no subfile any more;
#  5. iod 1 stopped, the clients go on a while, then stop: each reads
#     its whole file back at the end, every byte the last generation it
#     wrote, and no call failed (exit 0);
#  6. metad's layouts name iod 1 nowhere (clf getlayout);
#  7. the small files staged out again are the same bytes;
#  8. again: nothing left to move.
#
# usage: test_elastic.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

if [ -z "${CLF_ELASTIC_TIMED:-}" ]; then
	CLF_ELASTIC_TIMED=1
	export CLF_ELASTIC_TIMED
	exec timeout -k 10 240 /bin/sh "$0" "$@"
fi

. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/instance_lib.sh"
instance_test_begin elastic "${1:-${CLF_BUILD_DIR:-build}}"
client=$build/tests/integration/elastic_client
[ -x "$client" ] || { echo "FAIL: $client not built" >&2; exit 1; }
step=

# subfiles DIR: how many subfiles an iod's store holds.
subfiles() {
	find "$1" -type f | grep -Ec '/[0-9a-f]{2}/[0-9a-f]{16}\.[0-9]+$' || true
}

step="up, 4 iods"
instance_up "$clf" "$data" "$tmp/up.log" --iods 4 || fail "clf up"

step="two clients fill their files and keep writing and checking"
pids=
for f in e1 e2; do
	"$client" "$conf" "/$f" 8 "$tmp/$f.ready" "$tmp/stop" \
		>"$tmp/$f.out" 2>&1 &
	pids="$pids $!"
done
i=0
while [ ! -f "$tmp/e1.ready" ] || [ ! -f "$tmp/e2.ready" ]; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || fail "the clients did not fill their files: $(cat "$tmp"/e*.out)"
	sleep 0.1
done

step="a remove whose mover dies before its commit"
CLF_TEST_MOVER_DIE=1 run "$clf" iod remove 1 --data "$data"
[ "$rc" -eq 3 ] || fail "exit status $rc, not the hook's 3"
grep -q "move from iod 1 to iod [0-9] begins" "$data/meta/metad.log" ||
	fail "metad logged no intent"
if grep -q "move from iod 1 to iod [0-9] committed" "$data/meta/metad.log"; then
	fail "metad committed a move of a mover that died"
fi
# Both clients write on: neither waits on a fence left behind.
for f in e1 e2; do
	was=$(cat "$tmp/$f.ready")
	i=0
	while [ "$(cat "$tmp/$f.ready")" = "$was" ]; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || fail "$f's client writes no more: $(cat "$tmp/$f.out")"
		sleep 0.1
	done
done

step="clf iod add while they run; a new client's file uses iod 4"
run "$clf" iod add --data "$data"
[ "$rc" -eq 0 ] || fail "exit status $rc"
grep -q "^iod 4 added: 127.0.0.1:[0-9]*, storage $data/iod4; .* now has 5 iods" \
	"$tmp/out" || fail "no summary"
cat "$tmp/out"
grep -q "^stripe_count = 5" "$conf" || fail "stripe_count not raised"
grep -q "a move of a subfile did not finish" "$data/meta/metad.log" ||
	fail "the restarted metad did not log the unfinished move"
"$client" "$conf" "/e3" 8 "$tmp/e3.ready" "$tmp/stop" >"$tmp/e3.out" 2>&1 &
pids="$pids $!"
i=0
while [ ! -f "$tmp/e3.ready" ]; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || fail "the third client did not fill its file: $(cat "$tmp"/e3.out)"
	sleep 0.1
done
[ "$(subfiles "$data/iod4")" -eq 1 ] || fail "iod 4 holds no subfile of /e3"
mkdir "$tmp/small"
for i in $(seq 1 100); do
	head -c $((70000 + i * 97)) /dev/urandom >"$tmp/small/f$i"
done
run "$clf" stage-in -q --data "$data" "$tmp/small" clf:/small
[ "$rc" -eq 0 ] || fail "stage-in of 100 small files: exit status $rc"
before=$(subfiles "$data/iod1")
[ "$before" -ge 103 ] || fail "iod 1 holds $before subfiles before the remove"

step="clf iod remove 1 while they run"
run "$clf" iod remove 1 --data "$data"
[ "$rc" -eq 0 ] || fail "exit status $rc"
grep -q "^iod 1 emptied: [0-9]* subfiles of 103 files, [0-9]* bytes moved in " \
	"$tmp/out" || fail "no summary"
cat "$tmp/out"
left=$(subfiles "$data/iod1")
[ "$left" -eq 0 ] || fail "iod 1 still holds $left subfiles"

step="iod 1 stopped, the clients go on, then check their whole files"
kill "$(cat "$data/iod1/iod.pid")"
sleep 1
touch "$tmp/stop"
for p in $pids; do
	wait "$p" || fail "a client failed: $(cat "$tmp"/e*.out)"
done
cat "$tmp/e1.out" "$tmp/e2.out" "$tmp/e3.out"
for f in e1 e2 e3; do
	grep -q "ok$" "$tmp/$f.out" || fail "$f's client did not check its file"
done

step="metad's layouts name iod 1 nowhere"
for f in e1 e2 e3; do
	run "$clf" -c "$conf" getlayout "clf:/$f"
	[ "$rc" -eq 0 ] || fail "getlayout $f: exit status $rc"
	if grep -Eq '(^|[^0-9])iod 1([^0-9]|$)|on 1$' "$tmp/out"; then
		fail "the layout of $f still names iod 1"
	fi
done

step="the small files are the same bytes"
run "$clf" stage-out -q --data "$data" clf:/small "$tmp/back"
[ "$rc" -eq 0 ] || fail "stage-out: exit status $rc"
diff -r "$tmp/small" "$tmp/back" >/dev/null || fail "a small file differs"

step="a second remove finds nothing to move"
run "$clf" iod remove 1 --data "$data"
[ "$rc" -ne 0 ] || grep -q "emptied: 0 subfiles" "$tmp/out" ||
	fail "a second remove moved something: $(cat "$tmp/out")"
echo "PASS: test_elastic"
