#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# paper_plots.sh -- the figures of bench/paper.sh, from its tables.
#
#   paper_plots.sh OUT CAPTION_MATRIX CAPTION_BTIO [REF_WRITE [REF_READ]]
#
# Reads OUT/matrix.csv (bench/mpi_matrix --csv) and OUT/btio.csv
# (bench/mpi_btio --csv) and writes OUT/matrix-write, matrix-read,
# matrix-split, matrix-ratio and btio, each as .png and .svg: the median
# of the repetitions with bars from the slowest to the fastest, readable
# scenario names, the caption at the bottom, and the machine's limit
# (REF_WRITE / REF_READ MB/s, when given) drawn as a dashed line.  The
# BTIO bars stand on a linear axis from 0.  Needs gnuplot; exits
# non-zero when it fails.  Kept apart from paper.sh so the drawing can
# be tested on tables of our own (tests/integration/test_paper_plots.sh).

set -eu
[ $# -ge 3 ] || { echo "usage: paper_plots.sh OUT CAPTION_MATRIX CAPTION_BTIO [REF_WRITE [REF_READ]]" >&2; exit 2; }
out=$1
caption_m=$2
caption_b=$3
ref_w=${4:-}
ref_r=${5:-}

# A line at the machine's limit, when it was measured.
ref_line() {
	if [ -n "$1" ]; then
		printf ", %s with lines lc rgb 'black' dt 2 lw 2 title 'machine limit (%s MB/s)'" "$1" "$1"
	fi
}

# gnuplot_script TERMINAL EXT: every figure for one terminal.
gnuplot_script() {
	cat <<GP
set terminal $1
set datafile separator ','
set datafile columnheaders
set datafile missing 'NaN'
set grid
set key top left opaque box
set bmargin 6
set style line 1 lc rgb '#c0392b' lw 2 pt 7
set style line 2 lc rgb '#2471a3' lw 2 pt 5
set style line 3 lc rgb '#229954' lw 2 pt 9
set style line 4 lc rgb '#7d3c98' lw 2 pt 11
set style line 5 lc rgb '#d68910' lw 2 pt 13
name(s) = s eq 'clf_phys' ? 'CLF-phys' : s eq 'clf_idx' ? 'CLF-idx' : s eq 'romio_phys' ? 'ROMIO-phys' : s eq 'romio_rr' ? 'ROMIO-rr' : s eq 'romio_ufs' ? 'ROMIO-ufs' : s

set logscale x 2
set logscale y 10
set xlabel 'k of CYCLIC(k) x CYCLIC(k), bytes'
set ylabel 'MB/s'
set label 1 "$caption_m" at screen 0.01, 0.02 font ',9'
set output '$out/matrix-write.$2'
set title '2-D matrix, 2 processes, 2 iods: MPI_File_write_all'
plot '$out/matrix.csv' using 1:(column('clf_phys_write')):(column('clf_phys_write_min')):(column('clf_phys_write_max')) with yerrorlines ls 1 title 'CLF-phys', \\
     '' using 1:(column('romio_phys_write')):(column('romio_phys_write_min')):(column('romio_phys_write_max')) with yerrorlines ls 2 title 'ROMIO-phys', \\
     '' using 1:(column('romio_rr_write')):(column('romio_rr_write_min')):(column('romio_rr_write_max')) with yerrorlines ls 3 title 'ROMIO-rr', \\
     '' using 1:(column('romio_ufs_write')):(column('romio_ufs_write_min')):(column('romio_ufs_write_max')) with yerrorlines ls 4 title 'ROMIO-ufs'$(ref_line "$ref_w")

set output '$out/matrix-read.$2'
set title '2-D matrix, 2 processes, 2 iods: MPI_File_read_all'
plot '$out/matrix.csv' using 1:(column('clf_phys_read')):(column('clf_phys_read_min')):(column('clf_phys_read_max')) with yerrorlines ls 1 title 'CLF-phys', \\
     '' using 1:(column('romio_phys_read')):(column('romio_phys_read_min')):(column('romio_phys_read_max')) with yerrorlines ls 2 title 'ROMIO-phys', \\
     '' using 1:(column('romio_rr_read')):(column('romio_rr_read_min')):(column('romio_rr_read_max')) with yerrorlines ls 3 title 'ROMIO-rr', \\
     '' using 1:(column('romio_ufs_read')):(column('romio_ufs_read_min')):(column('romio_ufs_read_max')) with yerrorlines ls 4 title 'ROMIO-ufs'$(ref_line "$ref_r")

set output '$out/matrix-split.$2'
set title "write_all time per process: in file-system data calls (solid) and the rest, i.e. ROMIO's shuffle (dashed)"
set ylabel 'ms (median repetition)'
plot '$out/matrix.csv' using 1:(1000*column('clf_phys_write_io_s')) with linespoints ls 1 title 'CLF-phys, data calls', \\
     '' using 1:(1000*column('clf_phys_write_other_s')) with linespoints ls 1 dt 2 title 'CLF-phys, rest', \\
     '' using 1:(1000*column('romio_phys_write_io_s')) with linespoints ls 2 title 'ROMIO-phys, data calls', \\
     '' using 1:(1000*column('romio_phys_write_other_s')) with linespoints ls 2 dt 2 title 'ROMIO-phys, shuffle', \\
     '' using 1:(1000*column('romio_rr_write_io_s')) with linespoints ls 3 title 'ROMIO-rr, data calls', \\
     '' using 1:(1000*column('romio_rr_write_other_s')) with linespoints ls 3 dt 2 title 'ROMIO-rr, shuffle', \\
     '' using 1:(1000*column('romio_ufs_write_io_s')) with linespoints ls 4 title 'ROMIO-ufs, data calls', \\
     '' using 1:(1000*column('romio_ufs_write_other_s')) with linespoints ls 4 dt 2 title 'ROMIO-ufs, shuffle'

set output '$out/matrix-ratio.$2'
set title 'CLF-phys speed-up over ROMIO (2-D matrix, 2 processes; medians)'
set ylabel 'CLF-phys MB/s / ROMIO MB/s'
plot '$out/matrix.csv' using 1:(column('clf_rr_write')) with linespoints ls 3 title 'over ROMIO-rr, write', \\
     '' using 1:(column('clf_rr_read')) with linespoints ls 3 dt 2 title 'over ROMIO-rr, read', \\
     '' using 1:(column('clf_ufs_write')) with linespoints ls 4 title 'over ROMIO-ufs, write', \\
     '' using 1:(column('clf_ufs_read')) with linespoints ls 4 dt 2 title 'over ROMIO-ufs, read', \\
     1 with lines lc rgb 'black' dt 3 notitle

unset logscale
set yrange [0:*]
set label 1 "$caption_b" at screen 0.01, 0.02 font ',9'
set output '$out/btio.$2'
set title 'BTIO-like (class A grid): write (solid) and read (hatched), MB/s'
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xlabel 'scenario, processes'
set bmargin 9
set ylabel 'MB/s'
set xtics rotate by -30
plot '$out/btio.csv' using (column('write')):(column('write_min')):(column('write_max')):xtic(name(stringcolumn('scenario')).' np'.stringcolumn('procs')) title 'write' lc rgb '#c0392b', \\
     '' using (column('read')):(column('read_min')):(column('read_max')) title 'read' lc rgb '#2471a3' fs pattern 4$(ref_line "$ref_w")
GP
}
gnuplot_script "pngcairo noenhanced size 1100,680 font ',11'" png | gnuplot
gnuplot_script "svg noenhanced size 1100,680 font 'sans,11'" svg | gnuplot
