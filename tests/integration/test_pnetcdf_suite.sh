#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_pnetcdf_suite.sh -- PnetCDF's test suite (built with MPICH by
# build_pnetcdf_suite.sh) on clf, against a real instance on loopback,
# mounted (kernel/, FUSE):
#   - PnetCDF's own scripts, as its `make ptest2` and `make check` run
#     them: the parallel tests with 2 processes (test/header, testcases,
#     nonblocking: parallel_run.sh) and the sequential ones (test/C,
#     cdf_format, fandc, nc_test), TESTOUTDIR a directory on the mount:
#     plain paths, which take clf's driver (libromio-clf.so, loaded with
#     LD_PRELOAD), while the scripts' serial tools (ncvalidator,
#     ncmpidiff) read the same files through the mount: a second path
#     that checks every file a parallel test writes;
#   - with use_romio_optimizations=false, then =true (a ROMIO_HINTS file),
#     then on a local directory (ROMIO's ufs driver) for comparison; the
#     wall time of each pass is printed;
#   - the files both passes leave are compared by PnetCDF's serial
#     cdfdiff (headers and every variable's values), clf through the
#     mount against local, except those listed in VARIES.
# Directories in XFAIL are run alone, each with the component fixing it;
# one that passes says XPASS, for its mark to be removed.
#
# usage: test_pnetcdf_suite.sh [BUILD_DIR]  (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when MPICH, the daemons,
# libromio-clf.so, /dev/fuse or the PnetCDF build are absent.  Everything
# runs in a fresh temporary directory on ports of its own, under a time
# limit; a trap unmounts, stops the daemons and removes the directory.

set -eu

TIME_LIMIT=3000	# seconds, the whole test
PART_LIMIT=900	# seconds, one directory's tests
XFAIL_LIMIT=60	# seconds, one expected failure
if [ -z "${CLF_PNETCDF_SUITE_TIMED:-}" ]; then
	CLF_PNETCDF_SUITE_TIMED=1
	export CLF_PNETCDF_SUITE_TIMED
	exec timeout -k 30 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}

# DIRECTORY TARGET: PnetCDF's test directories and how its Makefile runs
# them (ptest2: parallel_run.sh with 2 processes; check: the sequential
# programs and scripts).
RUN='
header ptest2
testcases ptest2
nonblocking ptest2
C check
cdf_format check
fandc check
testcases check
nonblocking check
header check
nc_test check
'

# DIRECTORY TARGET PROGRAM HINT OWNER...: expected to fail on clf with
# use_romio_optimizations=HINT (false, true or both), with what it says
# and who is fixing it.  PROGRAM is left out of the directory's run
# (check_PROGRAMS) and run alone, under XFAIL_LIMIT; - is the whole
# directory's TARGET.
XFAIL='
'

# Files whose contents depend on the run (none known yet).
VARIES='
'

if ! command -v mpiexec >/dev/null 2>&1; then
	echo "SKIP: no mpiexec (package mpich)"
	exit 77
fi
lib=$build/romio-clf/libromio-clf.so
if [ ! -f "$lib" ]; then
	echo "SKIP: libromio-clf.so not built (CONFIG_CLF_ROMIO=n, no mpicc or no ROMIO source)"
	exit 77
fi
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse: PnetCDF's test scripts read the files MPI-IO wrote with POSIX tools, which only a mount serves"
	exit 77
fi
pnc=$build/pnetcdf
if [ ! -f "$pnc/.built" ]; then
	echo "SKIP: PnetCDF not built (no source or no autoreconf: scripts/install-deps.sh)"
	exit 77
fi
build=$(cd "$build" && pwd)
lib=$build/romio-clf/libromio-clf.so
pnc=$build/pnetcdf
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf
if [ ! -x "$mountclf" ]; then
	echo "SKIP: the mount is not built (CONFIG_CLF_FUSE=n)"
	exit 77
fi
for p in "$clf" "$build/metad/metad" "$build/iod/iod"; do
	if [ ! -x "$p" ]; then
		echo "FAIL: $p not built" >&2
		exit 1
	fi
done
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD \
	ROMIO_HINTS ROMIO_FSTYPE_FORCE PNETCDF_HINTS || true

# shellcheck source=tests/integration/instance_lib.sh
. "$(cd "$(dirname "$0")" && pwd)/instance_lib.sh"
# shellcheck source=tests/integration/suite_lib.sh
. "$(cd "$(dirname "$0")" && pwd)/suite_lib.sh"
suite_up pnetcdf

failed=0

# part PASS DIR SUBDIR TARGET [check_PROGRAMS=...]: PnetCDF's make
# TARGET in test/SUBDIR with its files in DIR; the status; the seconds
# are added to the pass's.
part() {
	_pass=$1 _dir=$2 _sub=$3 _target=$4
	shift 4
	start=$(date +%s)
	set +e
	LD_PRELOAD=$lib timeout -k 10 "$PART_LIMIT" make -s -C "$pnc/test/$_sub" \
		"$_target" TESTOUTDIR="$_dir" TESTMPIRUN="mpiexec -n NP" \
		TESTSEQRUN= "$@" </dev/null >"$tmp/out" 2>&1
	rc=$?
	set -e
	secs=$(($(date +%s) - start))
	echo "$secs" >>"$tmp/secs-$_pass"
	return "$rc"
}

# xfails DIR TARGET HINT: the XFAIL lines for them, PROGRAM and OWNER.
xfails() {
	printf '%s\n' "$XFAIL" | awk -v d="$1" -v t="$2" -v h="$3" \
		'$1 == d && $2 == t && ($4 == h || $4 == "both") {
			p = $3; $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print p, $0
		}'
}

# programs DIR: the directory's check_PROGRAMS, as its Makefile has them.
programs() {
	printf 'pv:\n\t@echo $(check_PROGRAMS)\n' |
		make -s -C "$pnc/test/$1" -f Makefile -f - pv
}

# xfail_run PASS DIR SUBDIR TARGET PROGRAM OWNER: an expected failure,
# its files in DIR-xfail (not compared with the local pass's).
xfail_run() {
	start=$(date +%s)
	mkdir -p "$2-xfail"
	set +e
	if [ "$5" = - ]; then
		LD_PRELOAD=$lib timeout -k 10 "$XFAIL_LIMIT" make -s -C "$pnc/test/$3" \
			"$4" TESTOUTDIR="$2-xfail" TESTMPIRUN="mpiexec -n NP" TESTSEQRUN= \
			</dev/null >"$tmp/out" 2>&1
	else
		(cd "$pnc/test/$3" && LD_PRELOAD=$lib timeout -k 10 "$XFAIL_LIMIT" \
			mpiexec -n 2 "./$5" "$2-xfail/$5.nc") </dev/null >"$tmp/out" 2>&1
	fi
	rc=$?
	set -e
	echo $(($(date +%s) - start)) >>"$tmp/secs-$1"
	if [ "$rc" -eq 0 ]; then
		echo "XPASS: $3 $4 $5 ($1) passes now: remove its XFAIL mark ($6)"
	else
		printf '  %-6s %-24s expected failure (%s)\n' "$1" "$3 $4 $5" "$6"
	fi
}

for pass in false true ufs; do
	: >"$tmp/secs-$pass"
	if [ "$pass" = ufs ]; then
		dir=$tmp/ufs
		unset ROMIO_HINTS
	else
		dir=$mnt/nc-$pass
		printf 'use_romio_optimizations %s\n' "$pass" >"$tmp/hints-$pass"
		ROMIO_HINTS=$tmp/hints-$pass
		export ROMIO_HINTS
	fi
	mkdir "$dir"
	printf '%s\n' "$RUN" | while read -r d target; do
		[ -n "$d" ] || continue
		# On ufs, what clf expects to fail with either hint runs too,
		# its files apart: they are compared with nothing.
		out=$dir
		if [ "$pass" = ufs ]; then
			marks=""
			skip=$({ xfails "$d" "$target" false
				xfails "$d" "$target" true; } | awk '{ print $1 }')
			if printf '%s\n' "$skip" | grep -qx -- -; then
				out=$dir-xfail
				mkdir -p "$out"
				skip=""
			fi
		else
			marks=$(xfails "$d" "$target" "$pass")
			skip=$(printf '%s\n' "$marks" | awk '{ print $1 }')
		fi
		if printf '%s\n' "$skip" | grep -qx -- -; then
			ok=1	# the whole target is expected to fail
		else
			keep=""
			for p in $(programs "$d"); do
				printf '%s\n' "$skip" | grep -qx "$p" || keep="$keep $p"
			done
			ok=0
			if part "$pass" "$out" "$d" "$target" check_PROGRAMS="$keep" &&
				! grep -Eq '^(FAIL|ERROR):|[1-9][0-9]* (errors|failures) found' "$tmp/out"; then
				ok=1
				printf '  %-6s %-24s %3d s  ok\n' "$pass" "$d $target" "$secs"
			fi
		fi
		if [ "$ok" -eq 0 ]; then
			echo "FAIL: $d $target, $pass (exit $rc):" >&2
			grep -E 'FAIL|Error|error' "$tmp/out" | head -20 >&2
			tail -20 "$tmp/out" >&2
			echo x >>"$tmp/failed"
		fi
		printf '%s\n' "$marks" | while read -r p owner; do
			[ -n "$p" ] || continue
			xfail_run "$pass" "$dir" "$d" "$target" "$p" "$owner"
		done
	done
done
if [ -f "$tmp/failed" ]; then
	failed=$(wc -l <"$tmp/failed")
fi

# What clf holds, read through the mount by PnetCDF's serial cdfdiff,
# has the contents of what the local pass wrote (not the bytes: PnetCDF
# aligns variables to the striping_unit MPI_File_get_info reports, which
# clf gives and ufs does not).
cdfdiff=$pnc/src/utils/ncmpidiff/cdfdiff
validator=$pnc/src/utils/ncvalidator/ncvalidator
for pass in false true; do
	same=0
	for f in "$tmp/ufs"/*; do
		[ -f "$f" ] || continue
		n=$(basename "$f")
		if printf '%s\n' "$VARIES" | grep -qx "$n"; then
			continue
		fi
		if [ ! -f "$mnt/nc-$pass/$n" ] || ! "$validator" -q "$f" >/dev/null 2>&1; then
			continue	# an expected failure's, or not a classic file
		fi
		if "$cdfdiff" -q "$f" "$mnt/nc-$pass/$n" >"$tmp/out" 2>&1; then
			same=$((same + 1))
		else
			echo "FAIL: $n: clf ($pass) holds other contents than the local file:" >&2
			head -20 "$tmp/out" >&2
			failed=$((failed + 1))
		fi
	done
	echo "  $same files written on clf ($pass) have the local files' contents (cdfdiff)"
done

total() {
	awk '{ s += $1 } END { print s + 0 }' "$tmp/secs-$1"
}
echo "wall time: clf use_romio_optimizations=false $(total false) s," \
	"=true $(total true) s, local (ufs) $(total ufs) s"
echo "test_pnetcdf_suite: $failed failed"
[ "$failed" -eq 0 ]
