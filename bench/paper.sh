#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# paper.sh -- the MPI-IO experiments of the Clusterfile paper, reproduced
# on clf: builds what it needs, starts a local instance (metad + 2 iods on
# loopback), runs
#   1. the 2-D matrix (bench/mpi_matrix) with 2 processes, CYCLIC(k) x
#      CYCLIC(k) checkerboard views, k = 1 ... 1024, scenarios CLF-phys,
#      ROMIO-phys, ROMIO-rr and ROMIO-ufs (bench/mpi_bench.h), and
#      CLF-idx: CLF-phys with the views written as MPI_Type_indexed lists
#      of row pieces (its ratio to CLF-phys and both set_view times are
#      in the table);
#   2. the same program with 4 processes on a small matrix, for
#      correctness only (4 busy processes on 2 cores measure the
#      scheduler);
#   3. the BTIO-like pattern (bench/mpi_btio): the main figure with 2
#      processes on a 1 x 2 process grid, then 1 process and, when the
#      time budget allows, 4 processes on BT's 2 x 2 grid
#      (oversubscribed: secondary, indicative only);
#   4. the machine's limit for the same traffic, the reference of
#      bench/matrix_native: 2 TCP streams over loopback spliced into files
#      (sent back with sendfile for reads), half the matrix each, no file system
#      code;
# and writes the tables (text and CSV) and plots, PNG and SVG (gnuplot;
# the package gnuplot-nox is installed when missing): the median of the
# repetitions with bars from the slowest to the fastest, the machine's
# limit drawn as a line, a caption with the size, repetitions, machine
# and date.
#
# usage: bench/paper.sh [--full] [--quick] [--reps N] [--out DIR]
#                       [--no-btio4] [--build DIR] [--base-port P]
#                       [--config FILE]
#   --full       a 256 MiB matrix and 40 BTIO steps (class A) instead of
#                64 MiB and 10 steps
#   --quick      tiny sizes, one run each: checks that everything works
#   --reps N     runs per figure, the median is reported (default 5, or
#                $CLF_BENCH_REPS)
#   --out DIR    where the results go (default bench/out)
#   --no-btio4   skip BTIO with 4 processes
#   --build DIR  the build directory (default $O, else build)
#   --base-port P  the instance it starts listens on P (metad) and P+1,
#                P+2 (iods), instead of free ports it picks
#   --config FILE  use the instance of FILE, already running (also
#                $CLF_CONFIG), instead of starting one; it needs 2 iods
#                or more
#
# Default settings take about 7 minutes on 2 cores; --full about four
# times as long (ROMIO's time at small k grows with the matrix).  The
# instance and the ROMIO-ufs files live in a temporary directory on the
# same disk (${TMPDIR:-/tmp}); a trap stops the daemons and removes it.

set -eu

full=0
quick=0
reps=${CLF_BENCH_REPS:-5}
out=bench/out
btio4=1
build=${O:-build}
base_port=""
config=${CLF_CONFIG:-}
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=1 ;;
	--quick) quick=1 ;;
	--reps) reps=$2; shift ;;
	--out) out=$2; shift ;;
	--no-btio4) btio4=0 ;;
	--build) build=$2; shift ;;
	--base-port) base_port=$2; shift ;;
	--config) config=$2; shift ;;
	-h | --help) sed -n '3,51p' "$0" | cut -c3-; exit 0 ;;
	*) echo "paper.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done

cd "$(dirname "$0")/.."
start=$(date +%s)
budget=660	# seconds: BTIO with 4 processes only if we are below
mkdir -p "$out"
out=$(cd "$out" && pwd)

# ---- build ----
if ! command -v mpiexec >/dev/null 2>&1 || ! command -v mpicc >/dev/null 2>&1; then
	echo "paper.sh: MPICH is missing (apt-get install mpich libmpich-dev)" >&2
	exit 1
fi
echo "paper.sh: building in $build ..."
make -s O="$build" "$build/tools/clf" "$build/metad/metad" "$build/iod/iod" \
	"$build/romio-clf/libromio-clf.so" "$build/bench/mpi_matrix" \
	"$build/bench/mpi_btio" "$build/bench/matrix_native" \
	>"$out/build.log" 2>&1 || {
	tail -30 "$out/build.log" >&2
	echo "paper.sh: the build failed (full log: $out/build.log)" >&2
	exit 1
}
if [ -f "$build/romio/UNAVAILABLE" ]; then
	echo "paper.sh: no libromio-clf.so: $(cat "$build/romio/UNAVAILABLE")" >&2
	exit 1
fi
clf=$build/tools/clf
bin=$build/bench

# ---- gnuplot ----
plots=1
if ! command -v gnuplot >/dev/null 2>&1; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "paper.sh: installing gnuplot-nox ..."
	if ! $SUDO apt-get install -y -qq gnuplot-nox >"$out/apt.log" 2>&1 &&
		! { $SUDO apt-get update -qq >>"$out/apt.log" 2>&1 &&
			$SUDO apt-get install -y -qq gnuplot-nox >>"$out/apt.log" 2>&1; }; then
		echo "paper.sh: cannot install gnuplot-nox (see $out/apt.log): no plots" >&2
		plots=0
	fi
fi

# ---- the instance ----
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-paper.XXXXXX")
inst=$tmp/inst
mkdir -p "$tmp/ufs"
cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if [ -z "$config" ] && [ -f "$inst/clf.conf" ]; then
		"$clf" down --data "$inst" >/dev/null 2>&1 ||
			echo "paper.sh: clf down failed" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

eph_lo=32768
if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
	eph_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
fi
lo=10002
span=$((eph_lo - 10 - lo))
tries=0
if [ -n "$config" ]; then
	config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
	"$clf" -c "$config" status >"$tmp/up" 2>&1 || {
		cat "$tmp/up" >&2
		echo "paper.sh: the instance of $config does not answer" >&2
		exit 1
	}
fi
while [ -z "$config" ]; do
	base=$((lo + ($$ * 13 + tries * 787) % span))
	[ -n "$base_port" ] && base=$base_port
	if "$clf" up --data "$inst" --iods 2 --base-port "$base" >"$tmp/up" 2>&1; then
		break
	fi
	"$clf" down --data "$inst" >/dev/null 2>&1 || true
	if ! grep -q "address already in use" "$tmp/up" || [ "$tries" -ge 4 ] ||
		[ -n "$base_port" ]; then
		cat "$tmp/up" >&2
		echo "paper.sh: cannot start the instance" >&2
		exit 1
	fi
	rm -rf "$inst"
	tries=$((tries + 1))
done
CLF_CONFIG=${config:-$inst/clf.conf}
export CLF_CONFIG
unset CLF_TEST_ROMIO_COLL_ROUND || true

# ---- the runs ----
common="--reps $reps --iods 2 --ufs-dir $tmp/ufs"
matrix_args=""
steps=10
[ "$full" -eq 1 ] && { matrix_args="--full"; steps=40; budget=3600; }
if [ "$quick" -eq 1 ]; then
	matrix_args="--side 1024 --kmax 64"
	steps=2
	common="--reps 1 --iods 2 --ufs-dir $tmp/ufs"
fi
rm -f "$out/matrix.csv" "$out/btio.csv"

echo "paper.sh: 2-D matrix, 2 processes ($(date +%T))"
# shellcheck disable=SC2086
mpiexec -n 2 "$bin/mpi_matrix" $matrix_args $common \
	--csv "$out/matrix.csv" | tee "$out/matrix.txt"

echo "paper.sh: 2-D matrix, 4 processes, small, correctness only ($(date +%T))"
# shellcheck disable=SC2086
if mpiexec -n 4 "$bin/mpi_matrix" --side 2048 --kmax 64 --reps 1 --iods 2 \
	--ufs-dir "$tmp/ufs" >"$out/matrix-np4-check.txt" 2>&1; then
	check4="4 processes: every byte read back right, every scenario, k = 1 ... 64 (2048 x 2048 matrix)"
else
	check4="4 processes: FAILED (see $out/matrix-np4-check.txt)"
fi
echo "  $check4"

echo "paper.sh: BTIO-like, 2 processes, 1 x 2 grid: the main figure ($(date +%T))"
# shellcheck disable=SC2086
mpiexec -n 2 "$bin/mpi_btio" --steps "$steps" --grid 1x2 $common \
	--csv "$out/btio.csv" | tee "$out/btio-np2.txt"

echo "paper.sh: BTIO-like, 1 process ($(date +%T))"
# shellcheck disable=SC2086
mpiexec -n 1 "$bin/mpi_btio" --steps "$steps" $common --csv "$out/btio.csv" |
	tee "$out/btio-np1.txt"
elapsed=$(($(date +%s) - start))
if [ "$btio4" -eq 1 ] && [ "$elapsed" -lt "$budget" ]; then
	echo "paper.sh: BTIO-like, 4 processes on 2 cores: secondary, oversubscribed, indicative only ($(date +%T))"
	# shellcheck disable=SC2086
	mpiexec -n 4 "$bin/mpi_btio" --steps "$steps" $common \
		--csv "$out/btio.csv" | tee "$out/btio-np4.txt"
	btio4_note="SECONDARY: BTIO with 4 processes ran oversubscribed (4 busy processes, 2 cores): indicative only"
else
	rm -f "$out/btio-np4.txt"
	btio4_note="BTIO with 4 processes skipped (--no-btio4, or ${elapsed}s already spent of a ${budget}s budget)"
fi
echo "  $btio4_note"

# The machine's limit: matrix_native's reference, with its own daemons
# (it runs no clf access with layouts "-").  No file system can beat it:
# it is the bytes of the 2-D matrix over loopback TCP into a file.
echo "paper.sh: reference, TCP streams spliced into files ($(date +%T))"
ref_side=8192
[ "$full" -eq 1 ] && ref_side=16384
[ "$quick" -eq 1 ] && ref_side=1024
if CLF_BUILD_DIR=$build CLF_BENCH_REPS=$reps "$bin/matrix_native" "$ref_side" 1 - - \
	>"$out/reference-run.txt" 2>&1; then
	sed -n 's/^reference (\(.*\)): write \([0-9]*\) MB\/s, read \([0-9]*\) MB\/s$/reference (\1, 2 streams of half the matrix each, median of '"$reps"'): write \2 MB\/s, read \3 MB\/s/p' \
		"$out/reference-run.txt" >"$out/reference.txt"
else
	echo "reference: matrix_native failed (see $out/reference-run.txt)" >"$out/reference.txt"
fi
cat "$out/reference.txt"

# ---- the table ----
{
	echo "clf: the paper's MPI-IO experiments ($(date '+%Y-%m-%d %H:%M'), $(nproc) cores, metad + 2 iods on loopback, MPICH $(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p'))"
	echo
	cat "$out/matrix.txt"
	echo
	echo "$check4"
	echo
	echo "== BTIO-like, main figure: 2 processes, 1 x 2 grid =="
	cat "$out/btio-np2.txt"
	echo
	echo "== BTIO-like, 1 process =="
	cat "$out/btio-np1.txt"
	if [ -f "$out/btio-np4.txt" ]; then
		echo
		echo "== BTIO-like, SECONDARY: 4 processes on 2 cores, oversubscribed, indicative only =="
		cat "$out/btio-np4.txt"
	fi
	echo
	echo "$btio4_note"
	echo
	echo "== The machine's limit =="
	cat "$out/reference.txt"
} >"$out/paper.txt"

# ---- the plots ----
# Every figure: the median of the repetitions, bars from the slowest to
# the fastest, and a caption saying what ran where and when.
case "$quick$full" in
1*) msize="1024 x 1024 bytes (1 MiB)"; bsize="$steps steps" ;;
01) msize="16384 x 16384 bytes (256 MiB)"; bsize="class A, $steps steps" ;;
*) msize="8192 x 8192 bytes (64 MiB)"; bsize="class A, $steps steps" ;;
esac
[ "$quick" -eq 1 ] && reps_used=1 || reps_used=$reps
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)
machine="$(hostname), $(nproc) cores${cpu:+ ($cpu)}"
when=$(date '+%Y-%m-%d %H:%M')
caption_m="matrix $msize; median of $reps_used repetitions, bars min-max; $machine; $when"
caption_b="BTIO-like, $bsize; median of $reps_used repetitions, bars min-max; $machine; $when"
ref_w=$(sed -n 's/.*write \([0-9]*\) MB\/s.*/\1/p' "$out/reference.txt")
ref_r=$(sed -n 's/.*read \([0-9]*\) MB\/s.*/\1/p' "$out/reference.txt")
if [ "$plots" -eq 1 ]; then
	"$(dirname "$0")/paper_plots.sh" "$out" "$caption_m" "$caption_b" \
		"$ref_w" "$ref_r" >"$out/gnuplot.log" 2>&1 ||
		{ plots=0; echo "paper.sh: gnuplot failed (see $out/gnuplot.log)" >&2; }
fi

total=$(($(date +%s) - start))
echo
echo "paper.sh: done in ${total}s"
echo "  table:  $out/paper.txt"
echo "  CSV:    $out/matrix.csv $out/btio.csv"
if [ "$plots" -eq 1 ]; then
	echo "  plots:  $out/matrix-write.png $out/matrix-read.png $out/matrix-split.png $out/matrix-ratio.png $out/btio.png (and .svg beside each)"
fi
