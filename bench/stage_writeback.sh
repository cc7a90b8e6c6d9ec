#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# stage_writeback.sh -- the write-back of an instance with a backing
# directory (docs/staging.md) against `clf cp` of the same file, in the
# same run, on the same instance and file systems.
#
# For each of ROUNDS rounds, cp and drain in alternating order, each on
# /big just written again (the first read of a file just written costs
# more than a later one: both measure the same state):
#   cp      clf cp clf:/big DIR/cp.out, then sync(1) of the file (the
#           stager syncs what it writes back: the same durability)
#   drain   clf stager --drain with /big noted and not written back:
#           the write-back (clf cp to a temporary name, fsync, rename,
#           fsync of the directory, the D note)
#   async   the stager running: from the return of the close (clf cp
#           into clf) to the file in place in the backing directory
#
# usage: bench/stage_writeback.sh [MIB] [ROUNDS] [BUILD_DIR]
#   (default 256 MiB, 3 rounds, build); prints one line per measurement
#   and the medians.
set -eu

mib=${1:-256}
rounds=${2:-3}
build=$(cd "${3:-build}" && pwd)
clf=$build/tools/clf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-stagebench.XXXXXX")
data=$tmp/data
back=$tmp/back
base=$((21000 + ($$ * 7) % 9000))
trap '"$clf" down --data "$data" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{ printf "%.3f", $1 - $2 }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

"$clf" up --data "$data" --base-port "$base" --backing "$back" >/dev/null
head -c $((mib << 20)) /dev/urandom >"$tmp/in"
: >"$tmp/cp" ; : >"$tmp/drain" ; : >"$tmp/async"

stop_stager() {
	p=$(cat "$data/stager.pid")
	kill -9 "$p"
	while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
}

# fresh: /big written again (noted; the stager is stopped), then 1 s:
# every measurement reads a file in the same state, just written.
fresh() {
	"$clf" cp --data "$data" -q "$tmp/in" clf:/big
	sleep 1
}

measure_cp() {
	fresh
	t=$(now)
	"$clf" cp --data "$data" -q clf:/big "$tmp/cp.out"
	sync "$tmp/cp.out"
	s=$(since "$t")
	echo "cp     $mib MiB: $s s"
	echo "$s" >>"$tmp/cp"
	rm -f "$tmp/cp.out"
}

measure_drain() {
	fresh
	rm -f "$back/big"
	t=$(now)
	"$clf" stager --drain --data "$data"
	s=$(since "$t")
	cmp -s "$tmp/in" "$back/big" || { echo "drain: bytes differ" >&2; exit 1; }
	echo "drain  $mib MiB: $s s"
	echo "$s" >>"$tmp/drain"
}

measure_async() {
	"$clf" stager --data "$data" >/dev/null
	rm -f "$back/big"
	"$clf" cp --data "$data" -q "$tmp/in" clf:/big
	t=$(now)
	while ! cmp -s "$tmp/in" "$back/big" 2>/dev/null; do sleep 0.02; done
	s=$(since "$t")
	echo "async  $mib MiB: $s s (close to in place)"
	echo "$s" >>"$tmp/async"
	stop_stager
}

stop_stager
for r in $(seq "$rounds"); do
	if [ $((r % 2)) = 1 ]; then
		measure_cp; measure_drain
	else
		measure_drain; measure_cp
	fi
	measure_async
done
echo "median over $rounds: cp $(median <"$tmp/cp") s, write-back (drain) $(median <"$tmp/drain") s, async close-to-in-place $(median <"$tmp/async") s"
