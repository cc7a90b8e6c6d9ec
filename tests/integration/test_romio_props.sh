#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_romio_props.sh -- the property test of MPI-IO on clf (romio_props):
# random legal MPI datatypes as filetypes and memory types over random
# layouts, every access call, use_romio_optimizations false and true,
# 2 processes against real daemons on loopback, compared byte for byte
# with MPI's own typemaps (MPI_Pack) and read back through libclf.
#
# usage: test_romio_props.sh [--seed S] [--cases N] [BUILD_DIR]
#
# Without CLF_PROPS_SOAK (make check): $CHECK_CASES cases of the fixed
# seed, then $CHECK_CASES_NEW of a seed from the clock (printed), with the
# classes in $CHECK_SKIP left out.  With CLF_PROPS_SOAK=1 (make
# soak-types): --cases N (default 1000) of --seed S (default
# $CLF_TEST_SEED, else the clock), nothing left out; CLF_TEST_CASE=i runs
# case i alone; CLF_PROPS_ONLY=fine-layout runs only that class's cases.
# A case that fails, crashes or runs past its time limit prints its seed
# and number; the run goes on with the next case.
#
# Exits 0 when every case passed, 1 on a failure, 77 when MPICH, the
# daemons or the driver are absent.

set -eu

CHECK_SEED=20261126
CHECK_CASES=100
CHECK_CASES_NEW=25
CASE_LIMIT=120		# seconds a case may take
# Classes make check leaves out (romio_props -x), each for a defect not
# yet fixed on main; make soak-types runs them all:
CHECK_SKIP=""
CHECK_SKIP=${CHECK_SKIP#,}

build=${CLF_BUILD_DIR:-build}
seed=${CLF_TEST_SEED:-}
cases=
while [ $# -gt 0 ]; do
	case $1 in
	--seed) seed=$2; shift 2 ;;
	--cases) cases=$2; shift 2 ;;
	*) build=$1; shift ;;
	esac
done
soak=${CLF_PROPS_SOAK:-}

clf=$build/tools/clf
prog=$build/tests/integration/romio/romio_props
lib=$build/romio-clf/libromio-clf.so

if ! command -v mpiexec >/dev/null 2>&1; then
	echo "SKIP: no mpiexec (package mpich)"
	exit 77
fi
if [ ! -f "$lib" ]; then
	echo "SKIP: $lib not built (CONFIG_CLF_ROMIO=n, no mpicc or no ROMIO)"
	exit 77
fi
if [ ! -x "$build/metad/metad" ] || [ ! -x "$build/iod/iod" ]; then
	echo "SKIP: the daemons are not built"
	exit 77
fi
if [ ! -x "$prog" ] || [ ! -x "$clf" ]; then
	echo "FAIL: $prog or $clf not built" >&2
	exit 1
fi
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD || true

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-props-test.XXXXXX")
inst=$tmp/inst

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if [ -f "$inst/clf.conf" ] &&
		! "$clf" down --data "$inst" >"$tmp/down" 2>&1; then
		echo "cleanup: clf down failed:" >&2
		cat "$tmp/down" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

. "$(dirname "$0")/instance_lib.sh"
instance_up "$clf" "$inst" "$tmp/up" || { echo "FAIL: clf up" >&2; exit 1; }
CLF_CONFIG=$inst/clf.conf
export CLF_CONFIG

failed=0
ran=0

# run_seed SEED FIRST COUNT SKIP: cases FIRST.. of SEED; after a crash
# or a timeout, on with the case after the one it was in.
run_seed() {
	s=$1 at=$2 end=$(($2 + $3)) skip=$4
	while [ "$at" -lt "$end" ]; do
		rm -f "$tmp/progress"
		set +e
		CLF_PROPS_PROGRESS=$tmp/progress CLF_TEST_CASE= \
			timeout -k 10 $(((end - at) * CASE_LIMIT + 60)) \
			mpiexec -n 2 "$prog" -s "$s" -f "$at" -n $((end - at)) \
			-t "$CASE_LIMIT" ${skip:+-x "$skip"} -d "/props-$s" \
			${CLF_PROPS_ONLY:+-c "$CLF_PROPS_ONLY"} \
			>"$tmp/out" 2>&1
		rc=$?
		set -e
		cat "$tmp/out"
		n=$(sed -n 's/^romio_props: seed [0-9]*: \([0-9]*\) cases, \([0-9]*\) failed$/\1 \2/p' "$tmp/out")
		if [ -n "$n" ]; then
			ran=$((ran + ${n% *}))
			failed=$((failed + ${n#* }))
			return 0
		fi
		# It stopped inside a case: count what ran, blame that case.
		last=$(cat "$tmp/progress" 2>/dev/null || echo "$at")
		nfail=$(grep -c '^FAIL case' "$tmp/out" || true)
		ran=$((ran + last - at + 1))
		failed=$((failed + nfail + 1))
		if ! grep -q '^TIMEOUT' "$tmp/out"; then
			echo "FAIL CRASH (exit $rc) in case $last of seed $s"
			echo "  replay: CLF_TEST_SEED=$s CLF_TEST_CASE=$last make soak-types"
		fi
		at=$((last + 1))
	done
}

if [ -n "$soak" ]; then
	[ -n "$seed" ] || seed=$(date +%s)
	if [ -n "${CLF_TEST_CASE:-}" ]; then
		run_seed "$seed" "$CLF_TEST_CASE" 1 ""
	else
		run_seed "$seed" 0 "${cases:-1000}" ""
	fi
else
	new=$(date +%s)
	echo "test_romio_props: seeds $CHECK_SEED (fixed) and $new (from the clock)" \
		"${CHECK_SKIP:+without $CHECK_SKIP}"
	run_seed "$CHECK_SEED" 0 "$CHECK_CASES" "$CHECK_SKIP"
	run_seed "$new" 0 "$CHECK_CASES_NEW" "$CHECK_SKIP"
fi
echo "test_romio_props: $ran cases, $failed failed"
[ "$failed" -eq 0 ]
