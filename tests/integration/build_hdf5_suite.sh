#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build_hdf5_suite.sh -- build HDF5's parallel tests (testpar) against
# Debian's libhdf5-mpich-dev with romio-clf/mpicc-clf, for
# tests/integration/test_hdf5_suite.sh:
#
#   BUILD_DIR/hdf5-src/hdf5-VERSION/{src,test,testpar}
#       the source of the installed libhdf5-mpich-dev (apt-get source, with
#       the deb-src entry romio-clf/fetch-romio.sh adds), pruned to what
#       the tests compile with; .version records it once complete;
#   BUILD_DIR/tests/integration/hdf5_suite/NAME
#       the programs below, linked statically with Debian's libhdf5.a
#       (the tests call HDF5's internal functions) and dynamically with
#       libromio-clf.so, as mpicc-clf links any program.
#
# Only the test programs are built, not HDF5: about a minute on two
# cores, once; later runs rebuild only what is older than its source or
# the driver.  Third-party code: built without warnings (-w).
#
# usage: build_hdf5_suite.sh BUILD_DIR
# Exits 0 when everything was built, 77 when libhdf5-mpich-dev or the
# source is not to be had (the test then skips), 1 otherwise.
# shellcheck disable=SC3013 # -nt: dash and bash have it (build-romio.sh)
set -eu

build=${1:?usage: build_hdf5_suite.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cc="$here/../../romio-clf/mpicc-clf"
out=$build/tests/integration/hdf5_suite
srcdir=$build/hdf5-src
CLF_BUILD_DIR=$build
export CLF_BUILD_DIR

# The programs of testpar/Makefile.am that run here, with their sources.
PROGRAMS='
t_mpi t_mpi.c
testphdf5 testphdf5.c t_dset.c t_file.c t_file_image.c t_mdset.c t_ph5basic.c t_coll_chunk.c t_span_tree.c t_chunk_alloc.c t_filter_read.c t_prop.c t_coll_md_read.c
t_filters_parallel t_filters_parallel.c
t_shapesame t_shapesame.c
t_pflush1 t_pflush1.c
t_pflush2 t_pflush2.c
t_pshutdown t_pshutdown.c
t_prestart t_prestart.c
t_init_term t_init_term.c
'
H5TEST='h5test testframe cache_common swmr_common external_common'

ver=$(dpkg-query -W -f='${Version}' libhdf5-mpich-dev 2>/dev/null || true)
libdir=/usr/lib/x86_64-linux-gnu/hdf5/mpich
incdir=/usr/include/hdf5/mpich
if [ -z "$ver" ] || [ ! -f "$libdir/libhdf5.a" ]; then
	echo "build_hdf5_suite: libhdf5-mpich-dev is not installed (scripts/install-deps.sh)" >&2
	exit 77
fi
upver=${ver#*:}
upver=${upver%-*}
upver=${upver%+repack*}
tree=$srcdir/hdf5-$upver

# The source, once: apt-get source unpacks 150 MB; we keep 20.
if [ ! -f "$srcdir/.version" ] || [ "$(cat "$srcdir/.version")" != "$ver" ] ||
	[ ! -d "$tree/testpar" ]; then
	rm -rf "$srcdir"
	mkdir -p "$srcdir"
	if ! (cd "$srcdir" && apt-get source --only-source "hdf5=$ver") \
		>"$srcdir/fetch.log" 2>&1; then
		cat "$srcdir/fetch.log" >&2
		echo "build_hdf5_suite: apt-get source hdf5=$ver failed (a deb-src entry: romio-clf/fetch-romio.sh)" >&2
		exit 77
	fi
	unpacked=$(find "$srcdir" -mindepth 1 -maxdepth 1 -type d -name 'hdf5-*' | head -1)
	if [ -z "$unpacked" ] || [ ! -d "$unpacked/testpar" ]; then
		echo "build_hdf5_suite: no testpar in the unpacked source" >&2
		exit 1
	fi
	[ "$unpacked" = "$tree" ] || mv "$unpacked" "$tree"
	(cd "$tree" && find . -mindepth 1 -maxdepth 1 ! -name src ! -name test \
		! -name testpar -exec rm -rf {} +)
	find "$srcdir" -maxdepth 1 -type f ! -name fetch.log -delete
	echo "$ver" >"$srcdir/.version"
fi

mkdir -p "$out/obj"
sed "s|@srcdir@|$tree/test|" "$tree/test/H5srcdir_str.h.in" >"$out/obj/H5srcdir_str.h.new"
if cmp -s "$out/obj/H5srcdir_str.h.new" "$out/obj/H5srcdir_str.h"; then
	rm "$out/obj/H5srcdir_str.h.new"
else
	mv "$out/obj/H5srcdir_str.h.new" "$out/obj/H5srcdir_str.h"
fi
cflags="-O1 -w -I$out/obj -I$incdir -I$tree/src -I$tree/test -I$tree/testpar"

# object OUTPUT SOURCE: compile when OUTPUT is older than SOURCE.
object() {
	if [ -f "$1" ] && [ "$1" -nt "$2" ]; then
		return 0
	fi
	echo "  CC      $1"
	# shellcheck disable=SC2086 # flags are words
	if ! mpicc $cflags -c -o "$1" "$2" >"$1.log" 2>&1; then
		cat "$1.log" >&2
		exit 1
	fi
	rm -f "$1.log"
}

h5test_objs=""
for u in $H5TEST; do
	object "$out/obj/$u.o" "$tree/test/$u.c"
	h5test_objs="$h5test_objs $out/obj/$u.o"
done

printf '%s\n' "$PROGRAMS" | while read -r name sources; do
	[ -n "$name" ] || continue
	objs=""
	newest=$out/$name
	stale=0
	for s in $sources; do
		o=$out/obj/${s%.c}.o
		object "$o" "$tree/testpar/$s"
		objs="$objs $o"
		[ -x "$newest" ] && [ "$newest" -nt "$o" ] || stale=1
	done
	if [ "$stale" -eq 0 ] && [ "$newest" -nt "$cc" ] &&
		[ "$newest" -nt "$build/romio-clf/libromio-clf.so" ]; then
		continue
	fi
	echo "  CCLD    $out/$name"
	# shellcheck disable=SC2086 # lists of objects
	if ! "$cc" -o "$out/$name" $objs $h5test_objs "$libdir/libhdf5.a" \
		-lz -lsz -lm -ldl >"$out/$name.log" 2>&1; then
		cat "$out/$name.log" >&2
		exit 1
	fi
	rm -f "$out/$name.log"
done
