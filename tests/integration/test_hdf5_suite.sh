#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_hdf5_suite.sh -- HDF5's parallel tests (testpar, built by
# build_hdf5_suite.sh) on clf, against a real instance on loopback,
# mounted (kernel/, FUSE):
#   - files under the mount through HDF5_PARAPREFIX: their plain paths
#     take clf's driver (ad_clf_mount.c), and the POSIX opens HDF5 makes
#     of the same names (serial creates, format checks) reach the same
#     files through the mount, as on a parallel file system;
#   - each program with 2 processes, with use_romio_optimizations=false,
#     then =true (a ROMIO_HINTS file), then on a local directory (ROMIO's
#     ufs driver) for comparison; the wall time of each is printed;
#   - second paths: HDF5's own POSIX (sec2) opens in the programs read
#     through the mount what MPI-IO wrote and the reverse (calloc,
#     fltread, t_filters_parallel), and t_pflush2 and t_prestart read
#     what t_pflush1 and t_pshutdown left (testpar removes its files
#     whatever HDF5_NOCLEANUP says, so no file is left to compare);
#   - HDF5TestExpress=3 (HDF5's smoke level, testframe.c) keeps the run
#     short: t_shapesame alone takes minutes at the full level.
# A program passes when it exits 0 (HDF5's tests exit 1 on an error).
# Subtests listed in XFAIL are run alone (-o), each with the component
# fixing it; one that passes says XPASS, for its mark to be removed (some
# fail by a race, so a pass is not yet a fix).
#
# usage: test_hdf5_suite.sh [BUILD_DIR]  (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when MPICH, the daemons,
# libromio-clf.so, /dev/fuse or HDF5 (libhdf5-mpich-dev, its source) are
# absent.  Everything runs in a fresh temporary directory on ports of its
# own, under a time limit; a trap unmounts, stops the daemons and removes
# the directory.

set -eu

TIME_LIMIT=3000	# seconds, the whole test
PROGRAM_LIMIT=900	# seconds, one program
if [ -z "${CLF_HDF5_SUITE_TIMED:-}" ]; then
	CLF_HDF5_SUITE_TIMED=1
	export CLF_HDF5_SUITE_TIMED
	exec timeout -k 30 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}

# NAME ARGUMENTS: run in this order (t_pflush2 checks what t_pflush1 left,
# t_prestart what t_pshutdown left at MPI_Finalize).
RUN='
t_mpi
testphdf5
t_filters_parallel
t_shapesame
t_pflush1
t_pflush2
t_pshutdown
t_prestart
t_init_term
'

# PROGRAM SUBTEST HINT OWNER...: expected to fail on clf with
# use_romio_optimizations=HINT (false, true or both), with what it says
# and who is fixing it.  The program runs without them (-x SUBTEST); a
# SUBTEST of - is the whole program (t_mpi has no subtest options).
# None at present (t_mpi, t_shapesame sscontig1/sschecker1 and testphdf5
# tldsc were here until writes became visible without MPI_File_sync).
XFAIL='
'

if ! command -v mpiexec >/dev/null 2>&1; then
	echo "SKIP: no mpiexec (package mpich)"
	exit 77
fi
if [ ! -f "$build/romio-clf/libromio-clf.so" ]; then
	echo "SKIP: libromio-clf.so not built (CONFIG_CLF_ROMIO=n, no mpicc or no ROMIO source)"
	exit 77
fi
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse: HDF5 opens its files both through MPI-IO and POSIX, which only a mount serves"
	exit 77
fi
suite=$build/tests/integration/hdf5_suite
if [ "$(cat "$suite/.built" 2>/dev/null)" = unavailable ]; then
	echo "SKIP: HDF5's tests not built: no libhdf5-mpich-dev or no HDF5 source (scripts/install-deps.sh)"
	exit 77
fi
build=$(cd "$build" && pwd)
suite=$build/tests/integration/hdf5_suite
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf
if [ ! -x "$mountclf" ]; then
	echo "SKIP: the mount is not built (CONFIG_CLF_FUSE=n)"
	exit 77
fi
for p in "$clf" "$build/metad/metad" "$build/iod/iod" \
	"$suite/.built"; do
	if [ ! -e "$p" ]; then
		echo "FAIL: $p not built (make check-hdf5-suite)" >&2
		exit 1
	fi
done
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD \
	ROMIO_HINTS ROMIO_FSTYPE_FORCE HDF5_PARAPREFIX || true

# shellcheck source=tests/integration/instance_lib.sh
. "$(cd "$(dirname "$0")" && pwd)/instance_lib.sh"
# shellcheck source=tests/integration/suite_lib.sh
. "$(cd "$(dirname "$0")" && pwd)/suite_lib.sh"
suite_up hdf5

HDF5TestExpress=3
export HDF5TestExpress
failed=0

# runone LABEL DIR PROGRAM ARGS...: one run in DIR (also its working
# directory, for the files HDF5 names without the prefix); its status.
runone() {
	label=$1 dir=$2
	shift 2
	start=$(date +%s)
	set +e
	(cd "$dir" && HDF5_PARAPREFIX=$dir timeout -k 10 "$PROGRAM_LIMIT" \
		mpiexec -n 2 "$@") </dev/null >"$tmp/out" 2>&1
	rc=$?
	set -e
	secs=$(($(date +%s) - start))
	echo "$secs" >>"$tmp/secs-$label"
	return "$rc"
}

# xfail_args PROGRAM HINT: -x for each of its subtests marked for HINT,
# or - when the whole program is.
xfail_args() {
	printf '%s\n' "$XFAIL" | awk -v p="$1" -v h="$2" \
		'$1 == p && ($3 == h || $3 == "both") {
			if ($2 == "-") { printf " -"; exit }
			printf " -x %s", $2
		}'
}

for pass in false true ufs; do
	: >"$tmp/secs-$pass"
	if [ "$pass" = ufs ]; then
		dir=$tmp/ufs
		mkdir "$dir"
		unset ROMIO_HINTS
	else
		dir=$mnt/h5-$pass
		mkdir "$dir"
		printf 'use_romio_optimizations %s\n' "$pass" >"$tmp/hints-$pass"
		ROMIO_HINTS=$tmp/hints-$pass
		export ROMIO_HINTS
	fi
	for n in $RUN; do
		x=""
		[ "$pass" = ufs ] || x=$(xfail_args "$n" "$pass")
		[ "$x" != " -" ] || continue
		# shellcheck disable=SC2086 # -x NAME words
		if runone "$pass" "$dir" "$suite/$n" $x; then
			printf '  %-6s %-20s %3d s  ok\n' "$pass" "$n" "$secs"
		elif [ "$n" = t_pflush1 ] && grep -q PASSED "$tmp/out"; then
			# It leaves without MPI_Finalize on purpose (testpflush.sh).
			printf '  %-6s %-20s %3d s  ok (no MPI_Finalize, as meant)\n' \
				"$pass" "$n" "$secs"
		else
			echo "FAIL: $n, $pass (exit $rc):" >&2
			# The error lines first: a failing subtest may print
			# many more "Testing" lines after them (2 processes).
			grep -n -i -E 'error|fail|abort|assert|signal|killed' \
				"$tmp/out" | head -40 >&2 || :
			tail -30 "$tmp/out" >&2
			failed=$((failed + 1))
		fi
	done
	[ "$pass" = ufs ] && continue
	printf '%s\n' "$XFAIL" | while read -r n sub hint owner; do
		[ -n "$n" ] || continue
		[ "$hint" = "$pass" ] || [ "$hint" = both ] || continue
		only="-o $sub"
		[ "$sub" != - ] || only=""
		# shellcheck disable=SC2086 # -o NAME, or nothing
		if runone "$pass" "$dir" "$suite/$n" $only; then
			echo "XPASS: $n $sub ($pass) passes now: remove its XFAIL mark ($owner)"
		else
			printf '  %-6s %-20s expected failure (%s)\n' "$pass" "$n $sub" "$owner"
		fi
	done
done

total() {
	awk '{ s += $1 } END { print s + 0 }' "$tmp/secs-$1"
}
echo "wall time: clf use_romio_optimizations=false $(total false) s," \
	"=true $(total true) s, local (ufs) $(total ufs) s"
echo "test_hdf5_suite: $failed failed"
[ "$failed" -eq 0 ]
