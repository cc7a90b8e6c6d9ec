#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-romio.sh -- prepare MPICH's own ROMIO for libromio-clf.so.
#
# usage: build-romio.sh BUILD_DIR
#
# 1. fetch-romio.sh unpacks the ROMIO of the installed MPICH into
#    BUILD_DIR/romio-src (a cache, kept across rebuilds);
# 2. a copy in BUILD_DIR/romio/src gets romio-clf.patch (the clf: row of
#    the file-system table) and ROMIO's standalone configure, run only for
#    its config header and its bundled MPL library;
# 3. ROMIO's own Makefile compiles ROMIO's sources, with ROMIO's flags,
#    less the MPICH glue that romio-clf/glue.c replaces; the objects go
#    into BUILD_DIR/romio/libromio-objs.a, which the top-level Makefile
#    links with the clf driver into libromio-clf.so.
#
# Each step is skipped when its result is newer than its inputs.  When
# the ROMIO source cannot be had (no MPICH, no apt source), writes the
# reason into BUILD_DIR/romio/UNAVAILABLE and exits 0: the driver and its
# tests are then skipped.  Any other failure exits 1.
set -eu

build=${1:?usage: build-romio.sh BUILD_DIR}
mkdir -p "$build"
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
make=${MAKE:-make}
# Keep the parent make's job server and flags, not its variables (O=,
# CFLAGS=...): ROMIO's Makefile has its own.
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed 's/ -- .*//')
export MAKEFLAGS
cache=$build/romio-src
work=$build/romio
src=$work/src

mkdir -p "$work"
rm -f "$work/UNAVAILABLE"

unavailable() {
	echo "romio-clf: $*; libromio-clf.so is not built" >&2
	echo "$*" >"$work/UNAVAILABLE"
	exit 0
}

command -v mpicc >/dev/null 2>&1 || unavailable "mpicc not found (package libmpich-dev)"
set +e
"$here/fetch-romio.sh" "$cache"
rc=$?
set -e
[ "$rc" -eq 77 ] && unavailable "the ROMIO source of the installed MPICH cannot be obtained"
[ "$rc" -eq 0 ] || exit 1

srcver=$(cat "$cache/.version")
upver=${srcver#*:}
upver=${upver%-*}
romio=$cache/mpich-$upver/src/mpi/romio

# The file error-handler calls stay in libmpich and read ROMIO's file
# structure: only the very same MPICH may run with our ROMIO.
installed=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p')
if [ "$installed" != "$upver" ]; then
	echo "romio-clf: the installed MPICH is '$installed' but the ROMIO source is $upver" >&2
	exit 1
fi

# Configure again when the source, the patch or this script changed.
if [ ! -f "$work/.configured" ] ||
	[ "$cache/.version" -nt "$work/.configured" ] ||
	[ "$here/romio-clf.patch" -nt "$work/.configured" ] ||
	[ "$0" -nt "$work/.configured" ]; then
	rm -rf "$src" "$work/.configured" "$work/libromio-objs.a"
	cp -a "$romio" "$src"
	patch -s -d "$src" -p1 <"$here/romio-clf.patch"
	echo "romio-clf: configuring ROMIO $upver (log: $work/configure.log)"
	# ufs, nfs and testfs: what Debian's libmpich has, so that those
	# prefixes keep working when our ROMIO replaces its own.
	if ! (cd "$src" && CC=mpicc ./configure --with-mpi-impl=mpich \
		--with-file-system=ufs+nfs+testfs --disable-f77 \
		>"$work/configure.log" 2>&1); then
		tail -30 "$work/configure.log" >&2
		exit 1
	fi
	# ROMIO_CLF registers the driver (romio-clf.patch).  ROMIO sets
	# statuses only with HAVE_STATUS_SET_BYTES, which its configure
	# defines inside MPICH alone; status_setb.c provides the call.
	cat >>"$src/adio/include/romioconf.h" <<EOF

/* Added by romio-clf/build-romio.sh. */
#define ROMIO_CLF 1
#define HAVE_STATUS_SET_BYTES 1
#define CLF_ROMIO_MPICH_VERSION "$upver"
#define CLF_ROMIO_DEBIAN_VERSION "$srcver"
EOF
	if ! "$make" -C "$src/mpl" >"$work/mpl.log" 2>&1; then
		tail -30 "$work/mpl.log" >&2
		exit 1
	fi
	touch "$work/.configured"
fi

if [ ! -f "$work/libromio-objs.a" ] ||
	[ "$work/.configured" -nt "$work/libromio-objs.a" ]; then
	printf 'print-%%:\n\t@echo $($*)\n' >"$work/print.mk"
	sources=$("$make" -s -C "$src" -f Makefile -f "$work/print.mk" \
		print-libromio_la_SOURCES)
	objs=""
	los=""
	for s in $sources; do
		case $s in
		# Replaced by romio-clf/glue.c: they reach into libmpich's
		# internals, which Debian's libmpich does not export.
		mpi-io/glue/mpich/*) continue ;;
		# Used by libmpich's own MPI_Comm_split_type and errhandler
		# calls, which keep their own copies.
		mpi-io/mpich_fileutil.c | mpi-io/mpir_cst_filesys.c) continue ;;
		esac
		lo=${s%.c}.lo
		los="$los $lo"
		objs="$objs $src/$(dirname "$s")/.libs/$(basename "${s%.c}").o"
	done
	echo "romio-clf: compiling ROMIO (log: $work/compile.log)"
	# shellcheck disable=SC2086 # word lists
	if ! "$make" -C "$src" $los >"$work/compile.log" 2>&1; then
		grep -B2 -A8 'error' "$work/compile.log" | head -60 >&2
		exit 1
	fi
	rm -f "$work/libromio-objs.a"
	# shellcheck disable=SC2086
	ar rcs "$work/libromio-objs.a" $objs
fi
