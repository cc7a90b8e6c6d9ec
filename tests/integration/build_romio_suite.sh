#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build_romio_suite.sh -- build the MPI-IO test programs of MPICH's own
# source with romio-clf/mpicc-clf, for tests/integration/test_romio_suite.sh:
#
#   BUILD_DIR/tests/integration/romio_suite/romio/NAME
#       every program of ROMIO's src/mpi/romio/test, from the copy that
#       ROMIO's configure completed in BUILD_DIR/romio/src/test (misc.c,
#       large_file.c and the Fortran ones are made from .in files there);
#       the Fortran ones only when there is mpifort;
#   BUILD_DIR/tests/integration/romio_suite/mpich/NAME
#       every program of MPICH's test/mpi/io, fetched by
#       romio-clf/fetch-romio.sh beside ROMIO, linked with test/mpi/util's
#       mtest (single-threaded) and a configuration header for Debian's
#       MPICH.
#
# Everything is built, also what the test excludes: the test lists each
# program as run or excluded, and fails on one it does not know.  Only
# programs older than their source are rebuilt.  Third-party code: built
# without warnings (-w), as ROMIO itself.
#
# usage: build_romio_suite.sh BUILD_DIR
# Exits 0 when everything was built, 1 otherwise.
# shellcheck disable=SC3013 # -nt: dash and bash have it (build-romio.sh)
set -eu

build=${1:?usage: build_romio_suite.sh BUILD_DIR}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cc="$here/../../romio-clf/mpicc-clf"
out=$build/tests/integration/romio_suite
romio_tests=$build/romio/src/test
srcver=$(cat "$build/romio-src/.version")
upver=${srcver#*:}
upver=${upver%-*}
mpich_tests=$build/romio-src/mpich-$upver/test/mpi
CLF_BUILD_DIR=$build
export CLF_BUILD_DIR

for d in "$romio_tests" "$mpich_tests/io" "$mpich_tests/util" \
	"$mpich_tests/include"; do
	if [ ! -d "$d" ]; then
		echo "build_romio_suite: $d missing (romio-clf/fetch-romio.sh)" >&2
		exit 1
	fi
done
mkdir -p "$out/romio" "$out/mpich"

# compile OUTPUT SOURCE [ARGS...]: when OUTPUT is older than SOURCE.
compile() {
	o=$1
	s=$2
	shift 2
	if [ -x "$o" ] && [ "$o" -nt "$s" ] && [ "$o" -nt "$cc" ] &&
		[ "$o" -nt "$build/romio-clf/libromio-clf.so" ]; then
		return 0
	fi
	echo "  CCLD    $o"
	if ! "$@" -o "$o" "$s" >"$o.log" 2>&1; then
		cat "$o.log" >&2
		exit 1
	fi
	rm -f "$o.log"
}

for s in "$romio_tests"/*.c; do
	n=$(basename "$s" .c)
	compile "$out/romio/$n" "$s" "$cc" -O2 -w
done
if command -v mpifort >/dev/null 2>&1; then
	MPICC=mpifort
	export MPICC
	for s in "$romio_tests"/*.f; do
		n=$(basename "$s" .f)
		compile "$out/romio/$n" "$s" "$cc" -O2 -w
	done
	unset MPICC
fi

# What test/mpi's configure would find on Debian 12 with MPICH 4.0.
conf=$out/mpich/mpitestconf.h
cat >"$conf.new" <<'EOF'
/* Written by tests/integration/build_romio_suite.sh. */
#define HAVE_STRING_H 1
#define HAVE_STDARG_H 1
#define HAVE_UNISTD_H 1
#define HAVE_MEMORY_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
if cmp -s "$conf.new" "$conf"; then
	rm "$conf.new"
else
	mv "$conf.new" "$conf"
fi
for u in mtest mtest_common mtest_single; do
	o=$out/mpich/$u.o
	if [ ! -f "$o" ] || [ "$mpich_tests/util/$u.c" -nt "$o" ] ||
		[ "$conf" -nt "$o" ]; then
		echo "  CC      $o"
		mpicc -O2 -w -I"$out/mpich" -I"$mpich_tests/include" -c \
			-o "$o" "$mpich_tests/util/$u.c"
	fi
done
for s in "$mpich_tests"/io/*.c; do
	n=$(basename "$s" .c)
	compile "$out/mpich/$n" "$s" "$cc" -O2 -w -I"$out/mpich" \
		-I"$mpich_tests/include" "$out/mpich/mtest.o" \
		"$out/mpich/mtest_common.o" "$out/mpich/mtest_single.o"
done
