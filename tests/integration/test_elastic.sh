#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_elastic.sh -- `clf iod add` and `clf iod remove N` under load:
# zero bytes lost.
#
#  1. an instance of 4 iods; two clients (elastic_client) fill a file
#     each, striped over the 4, then keep rewriting random blocks with
#     new generations and reading others back, compared (e2 with
#     collective accesses, CLF_ncwrite_at_all / CLF_ncread_at_all);
#  2. a remove whose mover dies between copy and commit (test hook
#     CLF_TEST_MOVER_DIE): the clients go on (the fence went with the
#     mover's connection; the layout never changed); metad restarted
#     under them logs the move that did not finish;
#  3. `clf iod add` while they run: iod 4 joins the running metad (not
#     restarted: it logs the join); a third client started then stripes
#     its new file over the 5 iods: iod 4's store holds its subfile;
#  4. 100 small files more (clf stage-in), then `clf iod remove 1`
#     while the three clients run: it says the iod was emptied, and iod
#     1's store holds no subfile any more;
#  5. iod 1 stopped, the clients go on a while, then stop: each reads
#     its whole file back at the end, every byte the last generation it
#     wrote, and no call failed (exit 0);
#  6. metad's layouts name iod 1 nowhere (clf getlayout);
#  7. the small files staged out again are the same bytes;
#  8. again: nothing left to move.
#  Between 4 and 5: the remove retired iod 1: files made after it by
#  clf cp, setlayout (count, pattern), CLF_open(O_CREAT) and MPI-IO
#  with striping hints (when romio_xfer is built) have no
#  subfile there, before and after a restart of metad; a layout naming
#  it is refused; at the end `clf iod add 1` brings it back (metad
#  not restarted) and a new file is striped over it again.
#
# usage: test_elastic.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/instance_lib.sh"
instance_timed 240 "$0" "$@"
instance_test_begin elastic "${1:-${CLF_BUILD_DIR:-build}}"
client=$build/tests/integration/elastic_client
[ -x "$client" ] || { echo "FAIL: $client not built" >&2; exit 1; }
step=

# subfiles DIR: how many subfiles an iod's store holds.
subfiles() {
	find "$1" -type f | grep -Ec '/[0-9a-f]{2}/[0-9a-f]{16}\.[0-9]+$' || true
}

# restart_metad: stop metad (SIGTERM) and start it again with clf up.
restart_metad() {
	pid=$(cat "$data/meta/metad.pid")
	kill "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 100 ] || fail "metad did not stop"
		sleep 0.1
	done
	run "$clf" up --data "$data"
	[ "$rc" -eq 0 ] || fail "clf up: exit status $rc: $(cat "$tmp/err")"
}

step="up, 4 iods"
instance_up "$clf" "$data" "$tmp/up.log" --iods 4 || fail "clf up"

step="two clients fill their files and keep writing and checking"
pids=
# e2's rewrites and reads are collective accesses (ELASTIC_COLLECTIVE).
for f in e1 e2; do
	coll=
	[ "$f" = e2 ] && coll=1
	ELASTIC_COLLECTIVE=$coll "$client" "$conf" "/$f" 8 "$tmp/$f.ready" \
		"$tmp/stop" >"$tmp/$f.out" 2>&1 &
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

step="metad restarted under the clients: the unfinished move is logged"
restart_metad
grep -q "a move of a subfile did not finish" "$data/meta/metad.log" ||
	fail "the restarted metad did not log the unfinished move"

# The remove retired iod 1 before it died: new files stay off it until
# it is brought back (here, so that the remove below has files to move).
run "$clf" iod add 1 --data "$data"
[ "$rc" -eq 0 ] || fail "clf iod add 1: exit status $rc: $(cat "$tmp/err")"
grep -q "^iod 1 is back" "$tmp/out" || fail "no summary: $(cat "$tmp/out")"

step="clf iod add while they run; a new client's file uses iod 4"
mdpid=$(cat "$data/meta/metad.pid")
run "$clf" iod add --data "$data"
[ "$rc" -eq 0 ] || fail "exit status $rc"
grep -q "^iod 4 added: 127.0.0.1:[0-9]*, storage $data/iod4; .* now has 5 iods" \
	"$tmp/out" || fail "no summary"
cat "$tmp/out"
grep -q "^stripe_count = 5" "$conf" || fail "stripe_count not raised"
[ "$(cat "$data/meta/metad.pid")" = "$mdpid" ] || fail "metad was restarted"
grep -q "iod 4 joined: 127.0.0.1:[0-9]* (5 iods" "$data/meta/metad.log" ||
	fail "metad did not log the join: $(tail -3 "$data/meta/metad.log")"
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

step="after the remove, new files of every kind avoid the retired iod 1"
grep -q "^iod 1 retired: no new files are placed on it" "$tmp/out" ||
	fail "the remove did not say iod 1 is retired"
# on_iod1 FILE: whether metad's layout of FILE names iod 1.
on_iod1() {
	run "$clf" -c "$conf" getlayout "clf:$1"
	[ "$rc" -eq 0 ] || fail "getlayout $1: exit status $rc: $(cat "$tmp/err")"
	awk '($1 == "head" || $1 ~ /^[0-9]+$/) && $2 == 1 { f = 1 }
		END { exit !f }' "$tmp/out"
}
# new_files TAG: a file made each way a client makes one: clf cp (the
# configuration's round robin at metad), setlayout with a count and
# with a pattern (the client's layout, placed by metad), and
# CLF_open(O_CREAT) (elastic_client, which runs on to the end).
new_files() {
	head -c 300000 /dev/urandom >"$tmp/new.$1"
	run "$clf" -c "$conf" cp "$tmp/new.$1" "clf:/cp.$1"
	[ "$rc" -eq 0 ] || fail "cp: exit status $rc: $(cat "$tmp/err")"
	run "$clf" -c "$conf" setlayout --stripe-count 5 "clf:/sl.$1"
	[ "$rc" -eq 0 ] || fail "setlayout: exit status $rc: $(cat "$tmp/err")"
	run "$clf" -c "$conf" setlayout --pattern 'cyclic:k=4k,p=4' \
		"clf:/pat.$1"
	[ "$rc" -eq 0 ] || fail "setlayout --pattern: exit status $rc: $(cat "$tmp/err")"
	"$client" "$conf" "/open.$1" 1 "$tmp/open.$1.ready" "$tmp/stop" \
		>"$tmp/open.$1.out" 2>&1 &
	pids="$pids $!"
	i=0
	while [ ! -f "$tmp/open.$1.ready" ]; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || fail "CLF_open's client did not fill its file: $(cat "$tmp/open.$1.out")"
		sleep 0.1
	done
	mpi=
	if [ -n "$xfer" ]; then
		# MPI-IO: the ROMIO driver's striping hints (CLF_create).
		printf 'striping_factor 3\nstriping_unit 65536\n' >"$tmp/hints"
		CLF_CONFIG=$conf ROMIO_HINTS=$tmp/hints mpiexec -n 2 "$xfer" \
			write false "clf:/mpi.$1" "$tmp/new.$1" >"$tmp/mpi.out" \
			2>&1 </dev/null ||
			fail "MPI-IO create: $(cat "$tmp/mpi.out")"
		mpi="/mpi.$1"
	fi
	for f in "/cp.$1" "/sl.$1" "/pat.$1" "/open.$1" $mpi; do
		if on_iod1 "$f"; then
			fail "new file $f has a subfile on the retired iod 1: $(cat "$tmp/out")"
		fi
	done
	left=$(subfiles "$data/iod1")
	[ "$left" -eq 0 ] || fail "iod 1 holds $left subfiles of new files"
}
# MPI-IO where check-romio built its test program and MPICH is here.
xfer=$build/tests/integration/romio/romio_xfer
if [ ! -x "$xfer" ] || ! command -v mpiexec >/dev/null 2>&1; then
	echo "note: no romio_xfer or mpiexec: new files made without MPI-IO"
	xfer=
fi
new_files a
# A layout that names the retired iod is refused, saying why.
run "$clf" -c "$conf" setlayout --stripe-count 2 --first-iod 1 clf:/bad
[ "$rc" -ne 0 ] || fail "a layout on the retired iod 1 was taken"
grep -q "iod 1, which is retired" "$tmp/err" ||
	fail "no clear error: $(cat "$tmp/err")"

step="metad restarted: iod 1 is still retired"
restart_metad
grep -q "iod 1 is retired" "$data/meta/metad.log" ||
	fail "the restarted metad did not log the retired iod"
new_files b

step="cp --preserve=xattr on a mount: a file over 64 MiB placed off the retired iod"
# The mount's user.clf.layout names no iod for a file metad placed
# around iod 1 (cyclic:..., not rr:...): cp's setxattr after the data
# must find it the same layout, not refuse it with EBUSY.
mountclf=$build/kernel/mount.clf
if [ -x "$mountclf" ] && [ -c /dev/fuse ]; then
	mkdir "$tmp/mnt"
	run "$mountclf" "$conf" "$tmp/mnt"
	[ "$rc" -eq 0 ] || fail "mount.clf: exit status $rc: $(cat "$tmp/err")"
	head -c $((65 << 20)) /dev/urandom >"$tmp/big"
	cp "$tmp/big" "$tmp/mnt/big" || fail "cp onto the mount"
	# --preserve=xattr, not -a: cp -a ignores a refused setxattr.
	cp --preserve=xattr "$tmp/mnt/big" "$tmp/mnt/big.a" 2>"$tmp/err" ||
		fail "cp --preserve=xattr on the mount: $(cat "$tmp/err")"
	cmp "$tmp/big" "$tmp/mnt/big.a" || fail "cp's copy differs"
	for f in /big /big.a; do
		if on_iod1 "$f"; then
			fail "$f has a subfile on the retired iod 1: $(cat "$tmp/out")"
		fi
	done
	rm "$tmp/mnt/big" "$tmp/mnt/big.a" "$tmp/big"
	umount "$tmp/mnt" || fail "umount"
else
	echo "note: no mount.clf or /dev/fuse: cp --preserve=xattr not tried"
fi

step="iod 1 stopped, the clients go on, then check their whole files"
kill "$(cat "$data/iod1/iod.pid")"
sleep 1
touch "$tmp/stop"
for p in $pids; do
	wait "$p" || fail "a client failed: $(cat "$tmp"/e*.out)"
done
cat "$tmp/e1.out" "$tmp/e2.out" "$tmp/e3.out"
for f in e1 e2 e3 open.a open.b; do
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

step="clf iod add 1: the retired iod takes new files again, metad goes on"
mdpid=$(cat "$data/meta/metad.pid")
run "$clf" iod add 1 --data "$data"
[ "$rc" -eq 0 ] || fail "exit status $rc: $(cat "$tmp/err")"
grep -q "^iod 1 is back" "$tmp/out" || fail "no summary: $(cat "$tmp/out")"
[ "$(cat "$data/meta/metad.pid")" = "$mdpid" ] || fail "metad was restarted"
run "$clf" -c "$conf" cp "$tmp/new.a" clf:/back
[ "$rc" -eq 0 ] || fail "cp: exit status $rc: $(cat "$tmp/err")"
on_iod1 /back || fail "the new file /back is not striped over iod 1 again"
[ "$(subfiles "$data/iod1")" -ge 1 ] || fail "iod 1 holds no subfile of /back"
echo "PASS: test_elastic"
