#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# scale.sh -- issue 20's scaling driver: the matrix experiment, the small
# request loop and the metadata benchmark at 1..P processes, each beside
# ROMIO on a local file (ufs:) measured in the same run, with the ratios
# printed and gathered in one CSV; `--plot` draws one PNG per metric.
#
#   bench/scale.sh [--procs "1 2 4 8 16"] [--out DIR] [--quick]
#                  [--coarse-iods 4] [--fine-iods 16] [--files 500]
#                  [--base-port P] [--local DIR] [--only LIST]
#                  [--metads N]
#   bench/scale.sh --plot DIR/scale.csv DIR
#
# Phases (--only takes a comma list of them):
#   coarse  mpi_matrix, side 16384 (--quick: 4096), k = 16, coarse-iods
#           iods: CLF-phys (layout = views) and CLF-rr (clf's collective
#           on round-robin) against ROMIO-ufs and ROMIO-rr
#   fine    mpi_matrix, side 4096, k = 1 and 4, fine-iods iods: CLF-phys
#           against ROMIO-ufs
#   small   mpi_small xfer: 1 KiB per process per call, independent and
#           collective, clf's path against ROMIO on a local file (us/call)
#   md      md_mpi (MPI-IO, a directory per rank) and md_bench (native
#           API, one shared directory): create, stat, open, remove ops/s
#           against a local directory; with --metads N the instance
#           spreads its namespace over N metads (metrics md_*_mN)
#   iod     iod_clients: 1..max(procs) native clients against ONE iod
#
# Programs come from $CLF_BUILD_DIR (default build/) or, when absent
# there, from PATH (a devbundle: ../shared/devbundle/README.md); with
# $CLF_DRIVER set (the bundle's env.sh sets it), MPI runs preload it.
# The CSV has one row per figure: metric,procs,clf,baseline,ratio where
# ratio > 1 means clf is better (for times: baseline / clf).
# Not a test: it checks the matrix bytes (mpi_matrix does) and prints.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
build=${CLF_BUILD_DIR:-$here/build}
procs="1 2 4 8 16"
out=
quick=0
coarse_iods=4
fine_iods=16
files=500
port=${CLF_BASE_PORT:-$((21000 + $$ % 9000))}
local=${TMPDIR:-/tmp}
only=coarse,fine,small,md,iod
metads=1

plot() {
	local csv=$1 dir=$2 m
	command -v gnuplot >/dev/null || { echo "scale: gnuplot missing" >&2; return 1; }
	for m in $(cut -d, -f1 "$csv" | grep -v '^metric$' | sort -u); do
		grep "^$m," "$csv" | cut -d, -f2- >"$dir/$m.dat"
		gnuplot <<-GP
		set terminal pngcairo size 800,500 noenhanced
		set output '$dir/$m.png'
		set datafile separator ','
		set logscale x 2
		set xlabel 'MPI processes'
		set title '$m (clf vs baseline; ratio on the right axis)'
		set y2tics
		set grid
		plot '$dir/$m.dat' using 1:2 with linespoints title 'clf', \
		     '' using 1:3 with linespoints title 'baseline (ROMIO ufs / local)', \
		     '' using 1:4 axes x1y2 with linespoints dashtype 2 title 'ratio (right)'
		GP
		rm -f "$dir/$m.dat"
	done
	echo "scale: plots in $dir"
}

while [ $# -gt 0 ]; do
	case $1 in
	--procs) procs=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--coarse-iods) coarse_iods=$2; shift 2 ;;
	--fine-iods) fine_iods=$2; shift 2 ;;
	--files) files=$2; shift 2 ;;
	--base-port) port=$2; shift 2 ;;
	--local) local=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--metads) metads=$2; shift 2 ;;
	--plot) plot "$2" "$3"; exit ;;
	*) sed -n '4,35p' "$0" >&2; exit 2 ;;
	esac
done

prog() {
	local p
	for p in "$build/bench/$1" "$build/tools/$1"; do
		[ -x "$p" ] && { echo "$p"; return; }
	done
	command -v "$1" || { echo "scale: $1 not found" >&2; echo false; }
}
clf=$(prog clf)
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/clf-scale.XXXXXX")}
mkdir -p "$out"
csv=$out/scale.csv
echo "metric,procs,clf,baseline,ratio" >"$csv"
data=$out/data
lroot=$(mktemp -d "$local/clf-scale-local.XXXXXX")
preload=()
[ -n "${CLF_DRIVER:-}" ] && preload=(-genv LD_PRELOAD "$CLF_DRIVER")

up() {		# iods [metads]
	"$clf" down --data "$data" >/dev/null 2>&1
	rm -rf "$data"
	"$clf" up --data "$data" --iods "$1" --metads "${2:-1}" \
		--base-port "$port" >/dev/null ||
		{ echo "scale: clf up --iods $1 --metads ${2:-1} failed" >&2; return 1; }
	export CLF_CONFIG=$data/clf.conf
}
stop() {
	"$clf" down --data "$data" >/dev/null 2>&1
	rm -rf "$lroot"
}
trap stop EXIT
trap 'exit 1' INT TERM

row() {		# metric procs clf baseline higher-is-better(1|0)
	awk -v m="$1" -v p="$2" -v c="$3" -v b="$4" -v h="$5" 'BEGIN {
		r = (h ? (b > 0 ? c / b : 0) : (c > 0 ? b / c : 0));
		printf "%s,%d,%.1f,%.1f,%.2f\n", m, p, c, b, r }' >>"$csv"
	tail -1 "$csv"
}

run_mpi() {	# procs log program args...
	local n=$1 log=$2
	shift 2
	timeout 300 mpiexec -n "$n" -genv CLF_CONFIG "$CLF_CONFIG" "${preload[@]}" \
		"$@" >"$log" 2>&1 || { echo "scale: $* at $n failed:" >&2; tail -5 "$log" >&2; }
}

col() {		# csv-file key row-number(1 = first data row)
	awk -F, -v key="$2" -v want="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == key) c = i; next }
		NR - 1 == want && c { print $c }' "$1"
}

matrix() {	# phase side k iods scenarios procs
	local phase=$1 side=$2 k=$3 iods=$4 sc=$5 p=$6 f
	f=$out/$phase.k$k.p$p
	run_mpi "$p" "$f.log" "$(prog mpi_matrix)" --side "$side" --kmin "$k" \
		--kmax "$k" --reps 3 --iods "$iods" --ufs-dir "$lroot" \
		--scenarios "$sc" --csv "$f.csv"
	[ -s "$f.csv" ] || return
	row "${phase}_k${k}_write_MBps" "$p" "$(col "$f.csv" clf_phys_write 1)" "$(col "$f.csv" romio_ufs_write 1)" 1
	row "${phase}_k${k}_read_MBps" "$p" "$(col "$f.csv" clf_phys_read 1)" "$(col "$f.csv" romio_ufs_read 1)" 1
	case $sc in *clf_rr*)
		row "${phase}_k${k}_rr_write_MBps" "$p" "$(col "$f.csv" clfrr_write 1)" "$(col "$f.csv" romio_rr_write 1)" 1
		row "${phase}_k${k}_rr_read_MBps" "$p" "$(col "$f.csv" clfrr_read 1)" "$(col "$f.csv" romio_rr_read 1)" 1
	esac
}

has() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }
side_coarse=16384
[ $quick = 1 ] && side_coarse=4096
echo "# scale.sh: procs '$procs', $(nproc) cores, $(uname -n), $(date -u +%FT%TZ)"

if has coarse; then
	up "$coarse_iods" && for p in $procs; do
		matrix coarse "$side_coarse" 16 "$coarse_iods" clf_phys,romio_ufs,clf_rr,romio_rr "$p"
	done
fi
if has fine; then
	up "$fine_iods" && for p in $procs; do
		for k in 1 4; do
			matrix fine 4096 "$k" "$fine_iods" clf_phys,romio_ufs "$p"
		done
	done
fi
if has small; then
	up "$fine_iods" && "$clf" mkdir /small >/dev/null 2>&1
	for p in $procs; do
		f=$out/small.p$p.log
		run_mpi "$p" "$f" "$(prog mpi_small)" --only xfer --bytes 1024 \
			--calls 200 --reps 3 --dir clf:/small/s$p --ufs-dir "$lroot"
		for op in write read write_all read_all; do
			set -- $(awk -v op="$op" '$1 == op { print $2, $4 }' "$f")
			[ $# = 2 ] && row "small_1KiB_${op}_us" "$p" "$1" "$2" 0
		done
	done
fi
if has md; then
	up "$fine_iods" "$metads"
	sfx=
	[ "$metads" -gt 1 ] && sfx=_m$metads
	for p in $procs; do
		dir=/md.$p
		"$clf" mkdir "$dir" >/dev/null && mkdir -p "$lroot$dir"
		for ((i = 0; i < p; i++)); do
			"$clf" mkdir "$dir/u$i" >/dev/null; mkdir -p "$lroot$dir/u$i"
		done
		f=$out/md_mpi.p$p.log
		run_mpi "$p" "$f" "$(prog md_mpi)" --clf "clf:$dir" \
			--local "ufs:$lroot$dir" --files "$files" --unique
		f=$out/md_bench.p$p.log
		timeout 300 "$(prog md_bench)" --local "$lroot" --procs "$p" \
			--files "$files" --only shared >"$f" 2>&1
		while read -r ph c l; do
			row "md_mpi_${ph}_ops$sfx" "$p" "$c" "$l" 1
		done < <(awk '$1 == "mpiio" { print $3, $9, $12 }' "$out/md_mpi.p$p.log")
		while read -r ph c l; do
			row "md_native_${ph}_ops$sfx" "$p" "$c" "$l" 1
		done < <(awk '$1 == "shared" { print $2, $8, $11 }' "$f")
	done
fi
if has iod; then
	up 1
	max=1
	for p in $procs; do [ "$p" -gt $max ] && max=$p; done
	timeout 300 "$(prog iod_clients)" 64 "$max" >"$out/iod_clients.log" 2>&1
	cat "$out/iod_clients.log"
	awk '$1 ~ /^[0-9]+$/ { print $1, $2, $3 }' "$out/iod_clients.log" |
	while read -r c w r; do
		row iod_total_write_MBps "$c" "$w" 0 1
		row iod_total_read_MBps "$c" "$r" 0 1
	done
fi
echo "# done $(date -u +%FT%TZ); uptime: $(uptime)"
echo "scale: figures in $csv"
