#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# coll_probe.sh -- where clf's collective calls lose time as processes
# grow (issue 20, point 4), in one run of under a minute on a many-core
# machine: the knobs that decide how clients and iods wait, each beside
# its default, on one instance and one build.
#
#   bench/coll_probe.sh [--iods 16] [--procs "8 16"] [--small 2]
#                       [--base-port P] [--local DIR]
#
# Rows (one line each; "w/r": write / read):
#   small P <variant>  1 KiB write_all / read_all per process (IOR's
#                      pattern: mpi_small --only xfer), us per call, clf
#                      native path and ROMIO on a local file in the same
#                      run; variants: default, recv-spin=0 (the client
#                      sleeps at once while waiting for an iod:
#                      CLF_CLIENT_RECV_SPIN_US=0, as before), iod-spin
#                      (the iods restarted with CLF_IOD_LINGER_SPIN_US=100)
#   rr P <variant>     mpi_matrix side 4096, k = 16, CLF-rr (clf's own
#                      collective on round-robin) and ROMIO-rr, MB/s w/r,
#                      and CLF-rr's write time split in data calls + the
#                      rest; variants (CLF-rr alone): as-before (a
#                      process waiting in the collective's agreement or
#                      end barrier yields 2 ms before sleeping whatever
#                      the access, CLF_ROMIO_COLL_WAIT=sleep:2000, a read
#                      has no end barrier, CLF_ROMIO_READ_BARRIER=0, and
#                      the client sleeps at once, CLF_CLIENT_RECV_SPIN_US=0),
#                      no-rd-barrier and recv-spin=0 (each alone), 4-iods
#                      (the file striped over 4 of the iods: each serves
#                      4 times the bytes)
# and, once the instance stopped, each iod's count of collective
# operations and how their waiting participants were answered.
#
# Programs come from $CLF_BUILD_DIR (default build/) or PATH (a
# devbundle), with $CLF_DRIVER preloaded into MPI runs when set, as
# bench/scale.sh does.  Not a test: it prints.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
build=${CLF_BUILD_DIR:-$here/build}
iods=16
procs="8 16"
small=2
port=${CLF_BASE_PORT:-$((23000 + $$ % 9000))}
local=${TMPDIR:-/tmp}

while [ $# -gt 0 ]; do
	case $1 in
	--iods) iods=$2; shift 2 ;;
	--procs) procs=$2; shift 2 ;;
	--small) small=$2; shift 2 ;;
	--base-port) port=$2; shift 2 ;;
	--local) local=$2; shift 2 ;;
	*) sed -n '4,36p' "$0" >&2; exit 2 ;;
	esac
done

prog() {
	local p
	for p in "$build/bench/$1" "$build/tools/$1"; do
		[ -x "$p" ] && { echo "$p"; return; }
	done
	command -v "$1" || { echo "coll_probe: $1 not found" >&2; echo false; }
}
clf=$(prog clf)
work=$(mktemp -d "$local/clf-coll-probe.XXXXXX")
data=$work/data
preload=()
[ -n "${CLF_DRIVER:-}" ] && preload=(-genv LD_PRELOAD "$CLF_DRIVER")

up() {		# [env assignments for the daemons]
	"$clf" down --data "$data" >/dev/null 2>&1
	env "$@" "$clf" up --data "$data" --iods "$iods" --base-port "$port" \
		>/dev/null || { echo "coll_probe: clf up failed" >&2; exit 1; }
	export CLF_CONFIG=$data/clf.conf
}
logs() {	# the iods' own counts, once they stopped
	"$clf" down --data "$data" >/dev/null 2>&1
	cat "$data"/iod*/iod.log 2>/dev/null | awk '
		/collective operations: [0-9]+ run/ {
			sub(/.*collective operations: /, "")
			ops += $1; answered += $10; woken += $19; n++ }
		END { printf "iods  %d logged: %d merged collective operations; waiting participants: %d answered by the one that did the I/O, %d woken to answer\n", n, ops, answered, woken }'
}
trap '"$clf" down --data "$data" >/dev/null 2>&1; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

mpi() {		# procs env... -- program args...
	local n=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=(-genv "${1%%=*}" "${1#*=}"); shift; done
	shift
	timeout 40 mpiexec -n "$n" -genv CLF_CONFIG "$CLF_CONFIG" \
		"${preload[@]}" "${envs[@]}" "$@" 2>&1
}

small_row() {	# procs variant env...
	local p=$1 v=$2
	shift 2
	mpi "$p" "$@" -- "$(prog mpi_small)" --only xfer --path native \
		--ops write_all,read_all --bytes 1024 --calls 300 --reps 3 \
		--dir "clf:/probe-$p-$v" --ufs-dir "$work" |
		awk -v p="$p" -v v="$v" '$1 == "write_all" { w = $2; uw = $4 }
			$1 == "read_all" { r = $2; ur = $4 }
			END { printf "small %2d %-13s clf %7s / %7s us   ufs %6s / %6s us\n", p, v, w, r, uw, ur }'
}

rr_row() {	# procs variant [stripes] env...: CLF-rr, beside ROMIO-rr by default
	local p=$1 v=$2 n=$iods sc=clf_rr
	shift 2
	case ${1:-} in [0-9]*) n=$1; shift ;; esac
	[ "$v" = default ] && sc=clf_rr,romio_rr
	mpi "$p" "$@" -- "$(prog mpi_matrix)" --side 4096 --kmin 16 --kmax 16 \
		--reps 3 --iods "$n" --scenarios "$sc" |
		awk -v p="$p" -v v="$v" -v both="${sc#clf_rr}" '
			/^ +16 \|/ && !t { t = 1; rw = "-"; rr = "-"; cw = $3; cr = $4
				if (both != "") { rw = $3; rr = $4; cw = $6; cr = $7 }
				next }
			/^ +16 \|/ && t { split($0, f, "|"); sp = f[both != "" ? 3 : 2]; next }
			END { printf "rr    %2d %-13s CLF-rr %8s / %8s MB/s  ROMIO-rr %7s / %7s  CLF-rr write ms:%s\n", p, v, cw, cr, rw, rr, sp }'
}

echo "# coll_probe: $(nproc) cores, $iods iods, $(uname -n), $(date -u +%FT%TZ)"
up
small_row "$small" default
small_row "$small" recv-spin=0 CLF_CLIENT_RECV_SPIN_US=0
for p in $procs; do
	rr_row "$p" default
done
last=${procs##* }
rr_row "$last" as-before CLF_ROMIO_COLL_WAIT=sleep:2000 CLF_ROMIO_READ_BARRIER=0 \
	CLF_CLIENT_RECV_SPIN_US=0
rr_row "$last" no-rd-barrier CLF_ROMIO_READ_BARRIER=0
rr_row "$last" recv-spin=0 CLF_CLIENT_RECV_SPIN_US=0
rr_row "$last" 4-iods 4
small_row "$last" default
logs
up CLF_IOD_LINGER_SPIN_US=100
small_row "$small" iod-spin
small_row "$last" iod-spin
