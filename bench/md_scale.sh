#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# md_scale.sh -- the mdtest-style metadata benchmark at 1..P processes:
# md_bench (native API, one shared directory and one per process) and
# md_mpi (MPI-IO), each beside a local directory in the same run.
#
# usage: bench/md_scale.sh [--daemons BUILD] [--procs "1 2 4 8"]
#        [--mpi-procs "1 2"] [--files N] [--base-port P] [--local DIR]
#        [--metads N]
#
#   --daemons BUILD  run the metad and iods of another build directory
#                    (say, today's main) under this build's clients, to
#                    compare two servers in the same conditions
#   --procs          process counts of md_bench (default "1 2 4 8")
#   --mpi-procs      process counts of md_mpi (default "1 2"; none when
#                    md_mpi or mpiexec is missing)
#   --files N        files per process (default 300)
#   --local DIR      the baseline's directory (default $TMPDIR or /tmp)
#   --metads N       spread the namespace over N metads (default 1)
#
# Starts a fresh instance (4 iods) in a temporary directory and stops it
# at the end.  Prints md_bench's and md_mpi's lines, then `uptime`: on a
# shared machine the load says how far to trust the figures; last, the
# requests metad committed and the fdatasyncs they cost (its log).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
build=${CLF_BUILD_DIR:-$here/build}
daemons=$build
procs="1 2 4 8"
mpi_procs="1 2"
files=300
port=${CLF_BASE_PORT:-$((20000 + $$ % 20000))}
local=${TMPDIR:-/tmp}
metads=1

while [ $# -gt 0 ]; do
	case $1 in
	--daemons) daemons=$2; shift 2 ;;
	--procs) procs=$2; shift 2 ;;
	--mpi-procs) mpi_procs=$2; shift 2 ;;
	--files) files=$2; shift 2 ;;
	--base-port) port=$2; shift 2 ;;
	--local) local=$2; shift 2 ;;
	--metads) metads=$2; shift 2 ;;
	*) echo "usage: md_scale.sh [--daemons BUILD] [--procs LIST] [--mpi-procs LIST] [--files N] [--base-port P] [--local DIR] [--metads N]" >&2
	   exit 2 ;;
	esac
done
[ -x "$build/bench/md_bench" ] || { echo "md_scale: build $build/bench/md_bench first (make bench)" >&2; exit 2; }
if [ ! -x "$build/bench/md_mpi" ] || ! command -v mpiexec >/dev/null; then
	mpi_procs=
fi

data=$(mktemp -d "${TMPDIR:-/tmp}/md_scale.XXXXXX")
lroot=$(mktemp -d "$local/md_scale_local.XXXXXX")
clf=$daemons/tools/clf
stop() {
	"$clf" down --data "$data" >/dev/null 2>&1 || true
	# metad's count of requests per fdatasync (group commit), if it logs it
	grep -h "group commit:" "$data"/meta*/metad.log 2>/dev/null | sed 's/^/# /' || true
	# and how many requests a worker watching the connection caught
	grep -ho "[0-9]* requests came while a worker watched.*" \
		"$data"/meta*/metad.log 2>/dev/null | sed 's/^/# /' || true
	rm -rf "$data" "$lroot"
}
trap stop EXIT INT TERM
"$clf" up --data "$data" --base-port "$port" --metads "$metads" >/dev/null
conf=$data/clf.conf
echo "# metads: $metads"
echo "# daemons: $daemons ($(git -C "$(dirname "$daemons")" rev-parse --short HEAD 2>/dev/null || echo '?'))"

for p in $procs; do
	"$build/bench/md_bench" --config "$conf" --local "$lroot" \
		--procs "$p" --files "$files"
done

for p in $mpi_procs; do
	for mode in shared unique; do
		dir=/md_mpi.$p.$mode
		"$build/tools/clf" mkdir --data "$data" "$dir" >/dev/null
		mkdir -p "$lroot$dir"
		flag=
		if [ "$mode" = unique ]; then
			flag=--unique
			i=0
			while [ "$i" -lt "$p" ]; do
				"$build/tools/clf" mkdir --data "$data" "$dir/u$i" >/dev/null
				mkdir -p "$lroot$dir/u$i"
				i=$((i + 1))
			done
		fi
		CLF_CONFIG=$conf mpiexec -n "$p" "$build/bench/md_mpi" \
			--clf "clf:$dir" --local "ufs:$lroot$dir" \
			--files "$files" $flag
	done
done
uptime
