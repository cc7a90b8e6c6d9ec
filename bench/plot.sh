#!/bin/sh
# Draw a benchmark table (CSV from matrix_native) as a PNG with gnuplot.
#   bench/plot.sh table.csv out.png
# Installs gnuplot-nox when it is missing (as root, or through sudo).
set -eu
csv=$1
png=$2
if ! command -v gnuplot >/dev/null 2>&1; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get install -y -qq gnuplot-nox >/dev/null
fi
gnuplot <<GP
set terminal pngcairo size 900,560
set output '$png'
set datafile separator ','
set key autotitle columnhead left bottom
set logscale x 2
set xlabel 'k of CYCLIC(k) x CYCLIC(k)'
set ylabel 'MB/s'
set title '2-D matrix, 2 processes, 2 iods: clf native'
set grid
plot '$csv' using 1:2 with linespoints title '(a) matching layout, write', \
     '' using 1:3 with linespoints title '(a) matching layout, read', \
     '' using 1:4 with linespoints title '(b) round-robin 64 KiB, write', \
     '' using 1:5 with linespoints title '(b) round-robin 64 KiB, read', \
     '' using 1:6 with lines dashtype 2 title 'reference write (TCP into pwrite)', \
     '' using 1:7 with lines dashtype 3 title 'reference read'
GP
echo "bench: plot written to $png"
