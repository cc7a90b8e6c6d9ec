#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_paper_plots.sh -- the figures bench/paper.sh draws, from tables of
# our own in the formats mpi_matrix and mpi_btio write: every figure comes
# as PNG and SVG, carries its caption and readable scenario names (not
# the CSV's keys), and draws the machine's limit when it is known.
#
# Exits 0 when every check passed, 1 on a failure, 77 without gnuplot.
# KEEP=1 keeps the figures (the directory is printed on failure).

set -u
command -v gnuplot >/dev/null 2>&1 || { echo "SKIP: no gnuplot"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-plots.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

keys="clf_phys romio_phys romio_rr romio_ufs clf_idx"
{
	printf k
	for s in $keys; do
		printf ",%s_write,%s_read,%s_write_io_s,%s_write_other_s,%s_read_io_s,%s_read_other_s" \
			"$s" "$s" "$s" "$s" "$s" "$s"
	done
	printf ",clf_rr_write,clf_rr_read,clf_ufs_write,clf_ufs_read"
	for s in $keys; do
		printf ",%s_write_min,%s_write_max,%s_read_min,%s_read_max" "$s" "$s" "$s" "$s"
	done
	echo
	for k in 1 2 4 8 16; do
		printf %d "$k"
		for s in $keys; do
			printf ",%d,%d,0.010,0.002,0.008,0.001" $((k * 100)) $((k * 90))
		done
		printf ",3.5,2.5,1.5,1.2"
		for s in $keys; do
			printf ",%d,%d,%d,%d" $((k * 80)) $((k * 120)) $((k * 70)) $((k * 110))
		done
		echo
	done
} >"$tmp/matrix.csv"
cat >"$tmp/btio.csv" <<EOT
procs,grid,scenario,steps,write,read,write_io_s,write_other_s,read_io_s,read_other_s,write_min,write_max,read_min,read_max
2,1x2,clf_phys,5,900.00,800.00,0.1,0.01,0.1,0.01,850.00,950.00,700.00,820.00
2,1x2,romio_rr,5,300.00,350.00,0.1,0.20,0.1,0.10,280.00,330.00,300.00,380.00
1,1x1,clf_phys,5,600.00,500.00,0.1,0.01,0.1,0.01,580.00,640.00,480.00,520.00
EOT

caption_m="matrix test-caption-m; median of 3 repetitions, bars min-max"
caption_b="BTIO-like test-caption-b; median of 3 repetitions, bars min-max"
bench=$(dirname "$0")/../../bench
if ! "$bench/paper_plots.sh" "$tmp" "$caption_m" "$caption_b" 4321 1234 \
	>"$tmp/log" 2>&1; then
	cat "$tmp/log"
	fail "paper_plots.sh failed"
fi
for f in matrix-write matrix-read matrix-split matrix-ratio btio; do
	for ext in png svg; do
		[ -s "$tmp/$f.$ext" ] || fail "no $f.$ext"
	done
done
for f in matrix-write matrix-read; do
	grep -q "test-caption-m" "$tmp/$f.svg" || fail "$f.svg has no caption"
	grep -q "CLF-phys" "$tmp/$f.svg" || fail "$f.svg does not name CLF-phys"
done
grep -q "machine limit (4321 MB/s)" "$tmp/matrix-write.svg" ||
	fail "matrix-write.svg does not draw the machine limit"
grep -q "machine limit (1234 MB/s)" "$tmp/matrix-read.svg" ||
	fail "matrix-read.svg does not draw the machine limit"
grep -q "test-caption-b" "$tmp/btio.svg" || fail "btio.svg has no caption"
grep -q "CLF-phys np2" "$tmp/btio.svg" || fail "btio.svg labels are not readable"
grep -q ">clf_phys" "$tmp/btio.svg" && fail "btio.svg shows the CSV key clf_phys"
# The bars stand on a linear axis from 0 (a log axis started at 100).
grep -q '> *0<' "$tmp/btio.svg" || fail "btio.svg's axis does not start at 0"

[ "$failed" -eq 0 ] && echo "PASS: paper plots"
exit "$failed"
