#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build_pnetcdf_suite.sh -- build PnetCDF and its C test programs with
# Debian's MPICH, for tests/integration/test_pnetcdf_suite.sh (Debian's
# own libpnetcdf-dev is built with OpenMPI):
#
#   BUILD_DIR/pnetcdf-src/pnetcdf-VERSION
#       the source of Debian's pnetcdf package (apt-get source, with the
#       deb-src entry romio-clf/fetch-romio.sh adds), its build system
#       made with autoreconf (Debian ships none); .version once complete;
#   BUILD_DIR/pnetcdf
#       the library (static, C only), its utilities (ncvalidator,
#       ncmpidiff, ncmpigen, which the test scripts call) and the test
#       programs of test/ (make check TESTS=), with plain mpicc: the test
#       loads libromio-clf.so with LD_PRELOAD, so a new driver needs no
#       rebuild.  .built marks a complete build: a second run does
#       nothing (about four minutes on two cores the first time).
#
# usage: build_pnetcdf_suite.sh BUILD_DIR
# Exits 0 when everything was built, 77 when the source or the tools to
# build it (autoreconf) are not to be had (the test then skips), 1
# otherwise.  Third-party code: built without warnings (-w).
set -eu

build=${1:?usage: build_pnetcdf_suite.sh BUILD_DIR}
build=$(cd "$build" && pwd)
srcdir=$build/pnetcdf-src
out=$build/pnetcdf

if ! command -v autoreconf >/dev/null 2>&1 || ! command -v libtoolize >/dev/null 2>&1; then
	echo "build_pnetcdf_suite: autoreconf and libtoolize are needed (scripts/install-deps.sh)" >&2
	exit 77
fi
ver=$(apt-cache showsrc pnetcdf 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
if [ -z "$ver" ]; then
	echo "build_pnetcdf_suite: apt knows no pnetcdf source (a deb-src entry: romio-clf/fetch-romio.sh)" >&2
	exit 77
fi
upver=${ver#*:}
upver=${upver%-*}
tree=$srcdir/pnetcdf-$upver

if [ -f "$out/.built" ] && [ "$(cat "$out/.built")" = "$ver" ]; then
	exit 0
fi

if [ ! -f "$srcdir/.version" ] || [ "$(cat "$srcdir/.version")" != "$ver" ] ||
	[ ! -x "$tree/configure" ]; then
	rm -rf "$srcdir"
	mkdir -p "$srcdir"
	if ! (cd "$srcdir" && apt-get source "pnetcdf=$ver") >"$srcdir/fetch.log" 2>&1; then
		cat "$srcdir/fetch.log" >&2
		echo "build_pnetcdf_suite: apt-get source pnetcdf=$ver failed" >&2
		exit 77
	fi
	if [ ! -d "$tree/test" ]; then
		echo "build_pnetcdf_suite: no $tree/test in the unpacked source" >&2
		exit 1
	fi
	find "$srcdir" -maxdepth 1 -type f ! -name fetch.log -delete
	echo "  AUTORECONF $tree"
	if ! (cd "$tree" && autoreconf -fi) >"$srcdir/autoreconf.log" 2>&1; then
		cat "$srcdir/autoreconf.log" >&2
		exit 1
	fi
	echo "$ver" >"$srcdir/.version"
fi

rm -rf "$out"
mkdir -p "$out"
echo "  CONFIGURE $out"
if ! (cd "$out" && "$tree/configure" --disable-fortran --disable-cxx \
	--disable-shared --enable-static MPICC=mpicc CFLAGS="-O2 -w") \
	>"$out/configure.log" 2>&1; then
	tail -30 "$out/configure.log" >&2
	exit 1
fi
echo "  MAKE      $out (library, utilities, test programs)"
if ! make -C "$out" -j2 >"$out/make.log" 2>&1 ||
	! make -C "$out/test" -j2 check TESTS= >>"$out/make.log" 2>&1; then
	tail -30 "$out/make.log" >&2
	exit 1
fi
echo "$ver" >"$out/.built"
