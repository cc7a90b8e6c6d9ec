#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_romio.sh -- MPI-IO on "clf:" files through libromio-clf.so, against
# real daemons on loopback:
#   - the MPI -> clf datatype converter against MPI's own typemaps
#     (dtype_test, one process);
#   - romio_io under mpiexec with 2 processes: a 2-D CYCLIC(k) matrix
#     with write_all / read_all in every layout and both modes, hints
#     reported by MPI_File_get_info, malformed hints, write_shared /
#     write_ordered, atomic mode, independent access, sizes, delete,
#     and one process's write seen by another's read and get_size
#     after a barrier with no MPI_File_sync;
#   - some of it again with 4 processes;
#   - romio_coll with 2 and 4 processes: collective accesses go through
#     clf's collective I/O -- the iods' request counters show one tagged
#     request per subfile, round and participant -- cut in rounds
#     (CLF_TEST_ROMIO_COLL_ROUND makes a round 4 KiB), byte-exact;
#   - romio_realms with 2 and 3 processes: ROMIO's two-phase collective
#     I/O in the driver's layout-aligned file realms, byte-exact against
#     the same calls on ufs:, for round-robin and datatype layouts;
#   - romio_coop with 2 and 3 processes: the cooperative cache
#     (clf_coop_cache) against a model of the file, cache on and off, in
#     front of clf's collective I/O and (2 processes) of file realms,
#     and turned on and off by MPI_File_set_info:
#     reads of another process's kept bytes, later writes that overlap
#     kept ones, sync, close and reopen, another open, atomic mode,
#     independent access; and each of its fault hooks (a flush that
#     drops the bytes, owners that serve nothing, a conflicting write
#     kept without a flush, a set_info that leaves it on) must make it
#     fail, on either path;
#   - romio_cost with 2 processes, both modes: a view whose extent is
#     incommensurate with its darray layout, each access within 10 s
#     (it took 10 to 160 s when the mapping scanned per run);
#   - romio_types with 2 processes, use_romio_optimizations false and
#     true: every MPI datatype constructor as the view and as a subfile
#     type of subfile_datatypes, random darray and subarray views, written
#     and read back byte-exact; then across paths: romio_native reads with
#     CLF_read what MPI wrote and compares the declared layouts with
#     CLF_FCNTL_GETLAYOUT (CLF_Type_map over two extents of every subfile
#     type), writes new bytes with CLF_write, and MPI reads them back;
#   - romio_life: files left open at MPI_Finalize and closed from an
#     MPI_COMM_SELF attribute set before the driver's (as HDF5 does);
#     processes that create one file independently with striping hints;
#     files created collectively keep their access mode on every process
#     (write-only, append, delete on close, both modes);
#   - romio_typemap with 2 processes: every access call (explicit offset,
#     individual and shared pointers, collective or not, blocking or not,
#     split), seek, get_position and get_byte_offset put the bytes where
#     MPI's typemap says (MPI_Pack is the oracle) for filetypes whose
#     bounds ROMIO 4.0.2's flattening got wrong (lb != 0 or < 0, resized
#     twice, bounds that hold no data, zero-length blocks, negative
#     displacements, subarray and darray inside another constructor), on
#     the native path, ROMIO's path and a local file (ufs:);
#   - locks are clf's byte-range locks: an atomic-mode write waits for a
#     native process's write lock on its bytes (and a write beside it
#     does not), and two separate mpiexec jobs doing data sieving on the
#     same bytes lose no update (romio_lock);
#   - romio_recovery with 2 processes, both modes: rounds of
#     write_at_all / read_at_all go on, byte-exact, while an iod is
#     killed -9 and restarted under them (clf.h, "Recovery");
#   - a Fortran program linked with mpicc-clf (MPICC=mpifort);
#   - a program linked with plain mpicc, with and without
#     LD_PRELOAD=libromio-clf.so (without it, "clf:" must be unknown).
#
# usage: test_romio.sh [BUILD_DIR]     (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when MPICH, the daemons or the
# ROMIO source (hence libromio-clf.so) are absent.  Everything runs in a
# fresh temporary directory on ports of its own, under a time limit
# (CLF_ROMIO_TEST_TIME_LIMIT seconds, default 600), and the daemons are
# stopped whatever happens: by the test's trap, or past the limit by the
# shell that set it (instance_timed: by their pid files).

set -eu

TIME_LIMIT=${CLF_ROMIO_TEST_TIME_LIMIT:-600}	# seconds, the whole test
build=${1:-${CLF_BUILD_DIR:-build}}
clf=$build/tools/clf
# Under the time limit in a child (instance_lib.sh, instance_timed):
# past it, the daemons `clf up` detached are stopped by their pid files.
. "$(dirname "$0")/instance_lib.sh"
instance_timed "$TIME_LIMIT" "$0" "$@"

bin=$build/tests/integration/romio
lib=$build/romio-clf/libromio-clf.so

if ! command -v mpiexec >/dev/null 2>&1; then
	echo "SKIP: no mpiexec (package mpich)"
	exit 77
fi
if [ ! -f "$lib" ]; then
	if [ -f "$build/romio/UNAVAILABLE" ]; then
		echo "SKIP: $(cat "$build/romio/UNAVAILABLE")"
	else
		echo "SKIP: $lib not built (CONFIG_CLF_ROMIO=n or no mpicc)"
	fi
	exit 77
fi
if [ ! -x "$build/metad/metad" ] || [ ! -x "$build/iod/iod" ]; then
	echo "SKIP: the daemons are not built"
	exit 77
fi
for p in "$clf" "$bin/dtype_test" "$bin/romio_io" "$bin/romio_io_plain" \
	"$bin/romio_coll" "$bin/romio_types" "$bin/romio_native" \
	"$bin/romio_lock" "$bin/romio_life" "$bin/romio_cost" \
	"$bin/romio_typemap" "$bin/romio_recovery" "$bin/romio_xcache" \
	"$bin/romio_async_order" "$bin/romio_realms" "$bin/romio_coop"; do
	if [ ! -x "$p" ]; then
		echo "FAIL: $p not built" >&2
		exit 1
	fi
done
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD \
	CLF_TEST_ROMIO_COLL_ROUND || true

tmp=$CLF_TEST_TMP
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

# Ports of our own below the ephemeral range, from the pid; another
# block when one is taken.
eph_lo=32768
if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
	eph_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
fi
lo=10002
span=$((eph_lo - 10 - lo))
tries=0
while :; do
	base=$((lo + ($$ * 11 + tries * 787) % span))
	if "$clf" up --data "$inst" --base-port "$base" >"$tmp/up" 2>&1; then
		break
	fi
	"$clf" down --data "$inst" >/dev/null 2>&1 || true
	if ! grep -q "address already in use" "$tmp/up" || [ "$tries" -ge 4 ]; then
		echo "FAIL: clf up:" >&2
		cat "$tmp/up" >&2
		exit 1
	fi
	rm -rf "$inst"
	tries=$((tries + 1))
done
CLF_CONFIG=$inst/clf.conf
export CLF_CONFIG

passed=0
failed=0

# run NAME CMD...: one step, its output kept for a failure.
run() {
	step=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then
		passed=$((passed + 1))
		tail -1 "$tmp/out"
	else
		failed=$((failed + 1))
		echo "FAIL: $step (exit $?):" >&2
		tail -40 "$tmp/out" >&2
	fi
}

run "datatype converter" mpiexec -n 1 "$bin/dtype_test" 3000

for t in matrix info badhints shared atomic misc visible; do
	run "$t, 2 processes" mpiexec -n 2 "$bin/romio_io" "$t" "np2"
done
for t in matrix shared atomic; do
	run "$t, 4 processes" mpiexec -n 4 "$bin/romio_io" "$t" "np4"
done

# Filetypes with odd bounds: MPI's typemap, through every access call,
# on clf's native path, on ROMIO's (the ROMIO we ship flattens types by
# their typemap) and on a local file through ROMIO's ufs: driver.
run "typemap, 2 processes" mpiexec -n 2 "$bin/romio_typemap" typemap
# Nothing on stderr there: ROMIO's data sieving locks, for an access of no
# bytes, a negative length, which clf took for an error and said so.
run "typemap, ROMIO's path" sh -c '"$0" -n 2 "$1" typemap-romio true 2>"$2" &&
	! grep . "$2"' mpiexec "$bin/romio_typemap" "$tmp/stderr"
mkdir "$tmp/ufs"
run "typemap, ufs:" mpiexec -n 2 "$bin/romio_typemap" typemap true "ufs:$tmp/ufs/"

# Collective I/O, in rounds of 4 KiB per process.
for n in 2 4; do
	run "collective I/O, $n processes" env CLF_TEST_ROMIO_COLL_ROUND=4096 \
		mpiexec -n "$n" "$bin/romio_coll" "coll$n"
done

# ROMIO's two-phase collective I/O in file realms made of the layout's
# subfiles (use_romio_optimizations=true): several layouts, calls of
# odd sizes and offsets, byte-exact against the same program on ufs:;
# 3 processes have more aggregators than some layouts have subfiles.
mkdir -p "$tmp/ufs-realms"
# Layouts of pieces under 128 bytes take ROMIO's domains (byte-exact
# too); CLF_TEST_REALM_SMALL=1 gives them realms as well.
for n in 2 3; do
	run "layout-aligned file realms, $n processes" mpiexec -n "$n" \
		-genv CLF_TEST_REALM_SMALL 1 \
		"$bin/romio_realms" /realms "$tmp/ufs-realms"
done
run "layout-aligned file realms, small pieces on ROMIO's domains" \
	mpiexec -n 2 "$bin/romio_realms" /realms-small "$tmp/ufs-realms"

# The cooperative cache: every byte as a model of the file says, with
# the cache and without; each deliberately broken driver must fail it,
# on a wrong byte.
# In front of clf's collective I/O and of ROMIO's two-phase I/O in file
# realms, on from the open or turned on and off by MPI_File_set_info.
for n in 2 3; do
	for c in true false; do
		run "cooperative cache ($c), $n processes" mpiexec -n "$n" \
			"$bin/romio_coop" "clf:/coop$n-$c" "$c" clf
	done
done
for c in true false; do
	run "cooperative cache ($c) on file realms, 2 processes" mpiexec -n 2 \
		"$bin/romio_coop" "clf:/coop-realms-$c" "$c" realms
done
for p in clf realms; do
	for f in noflush noserve noconflict nooff; do
		run "cooperative cache ($p), fault $f is caught" sh -c \
			'"$0" -n 2 -env CLF_TEST_COOP_FAULT "$1" "$2" "$3" true "$4" 2>&1 |
			grep "is [0-9]*, not [0-9]*$\|: read [0-9]* of [0-9]* bytes$\|: size [0-9]*, not [0-9]*$"' \
			mpiexec "$f" "$bin/romio_coop" "clf:/coop-$p-$f" "$p"
	done
done

# A view whose extent is incommensurate with its darray layout (issue
# 19): each access in well under the iods' timeout, byte-exact.
for hint in false true; do
	run "incommensurate view, mapping cost ($hint)" mpiexec -n 2 \
		"$bin/romio_cost" "clf:/cost-$hint" "$hint" 10000
done

# Every constructor, views and layouts; MPI -> native -> MPI.  The
# native side never sees the views: byte off of every file is
# pattern_byte(off, salt) (romio/pattern.h), whoever wrote it.
for hint in false true; do
	d=/types-$hint
	run "mkdir $d" "$clf" mkdir "$d"
	run "datatypes ($hint): MPI writes" mpiexec -n 2 "$bin/romio_types" \
		write "$hint" "$d" 7 "$tmp/manifest-$hint"
	run "datatypes ($hint): CLF_read and GETLAYOUT" "$bin/romio_native" \
		check "$tmp/manifest-$hint" 7
	run "datatypes ($hint): CLF_write" "$bin/romio_native" \
		fill "$tmp/manifest-$hint" 1234
	run "datatypes ($hint): MPI reads" mpiexec -n 2 "$bin/romio_types" \
		read "$hint" "$d" 1234
done

# Small independent accesses kept at the clients under the iods' extent
# locks (client_cache): two processes see each other's writes of the
# same and neighbouring bytes at once, with no sync.
(umask 077 && sed 's/^\[global\]$/[global]\nclient_cache = 1m/' \
	"$inst/clf.conf" >"$tmp/cache.conf")
run "cached small accesses, 2 processes" env CLF_CONFIG="$tmp/cache.conf" \
	mpiexec -n 2 "$bin/romio_xcache" clf:/cached 12 - true
# The hint clf_client_cache turns it on or off for one file, whatever
# clf.conf says; the file's info says what is in force.
run "cached small accesses by the hint" \
	mpiexec -n 2 "$bin/romio_xcache" clf:/cached-hint 6 true true
run "the hint turns clf.conf's cache off" env CLF_CONFIG="$tmp/cache.conf" \
	mpiexec -n 2 "$bin/romio_xcache" clf:/cached-off 2 false false
# MPI-IO files are cached by default, whatever clf.conf says (MPI
# promises durability at sync and close only); the hint turns it off.
run "MPI-IO caches without clf.conf's or the hint's" \
	mpiexec -n 2 "$bin/romio_xcache" clf:/cached-default 6 - true
run "the hint turns the default cache off" \
	mpiexec -n 2 "$bin/romio_xcache" clf:/uncached 2 false false
# Not under ROMIO's two-phase I/O, unless asked for: its aggregators'
# small domains interleave, and the locks would pass back and forth.
run "use_romio_optimizations keeps the default cache off" \
	mpiexec -n 2 "$bin/romio_xcache" clf:/uncached-romio 2 - false romio
run "the hint caches under use_romio_optimizations" \
	mpiexec -n 2 "$bin/romio_xcache" clf:/cached-romio 2 true true romio

# A blocking collective after a nonblocking one of the same file, with
# rank 1's I/O thread slowed: it does not overtake the nonblocking one
# at the iods (each process would wait for the other's until the
# timeout).
run "a blocking collective after a nonblocking one" \
	mpiexec -n 1 "$bin/romio_async_order" clf:/ordered : \
	-n 1 -env CLF_TEST_ROMIO_ASYNC_DELAY_MS 500 \
	"$bin/romio_async_order" clf:/ordered

# Locks reach beyond the job: a native process write-locks 4 KiB and
# holds them 3 s; an atomic-mode MPI write into them ends after the
# holder let go (wall clock), a write beside them waits less than 1 s.
step="atomic mode waits for a native lock"
"$bin/romio_native" lock /locked 4096 4096 3000 >"$tmp/holder" 2>&1 &
holder=$!
i=0
until grep -q locked "$tmp/holder" 2>/dev/null; do
	i=$((i + 1))
	if [ "$i" -gt 200 ]; then
		cat "$tmp/holder" >&2
		break
	fi
	sleep 0.05
done
run "$step" mpiexec -n 2 "$bin/romio_lock" atomic clf:/locked 4100 1000
wait "$holder" || { failed=$((failed + 1)); echo "FAIL: the native holder" >&2; }
done_at=$(sed -n 's/^done_at //p' "$tmp/out")
released=$(sed -n 's/^releasing //p' "$tmp/holder")
if [ -z "$done_at" ] || [ -z "$released" ] || [ "$done_at" -lt "$released" ]; then
	failed=$((failed + 1))
	echo "FAIL: $step: the write ended at ${done_at:-?}, the lock went at ${released:-?}" >&2
fi
# Two jobs at once, read-modify-write of the same regions by data
# sieving: without locks across jobs, updates are lost.
step="data sieving of two jobs at once"
"$bin/romio_native" rm /sieved >/dev/null 2>&1 || true
mpiexec -n 1 "$bin/romio_lock" sieve clf:/sieved 0 200 >"$tmp/sieve0" 2>&1 &
job0=$!
mpiexec -n 1 "$bin/romio_lock" sieve clf:/sieved 1 200 >"$tmp/sieve1" 2>&1 &
job1=$!
if wait "$job0" && wait "$job1"; then
	run "$step" mpiexec -n 1 "$bin/romio_lock" check clf:/sieved 200
else
	failed=$((failed + 1))
	echo "FAIL: $step:" >&2
	cat "$tmp/sieve0" "$tmp/sieve1" >&2
fi

# Files left open at MPI_Finalize and closed from a library's
# MPI_COMM_SELF attribute (HDF5's way) are closed cleanly; independent
# creators of one file with striping hints never fail, nor see another
# layout than the file's.
# recovery OPT: romio_recovery's rounds of write_at_all/read_at_all
# while iod 1 is killed -9 and started again 1 s later.
recovery() {
	rm -f "$tmp/stop" "$tmp/stop.ready"
	mpiexec -n 2 "$bin/romio_recovery" "clf:/recovery-$1" "$1" \
		"$tmp/stop" >"$tmp/recovery.out" 2>&1 &
	job=$!
	i=0
	while [ ! -e "$tmp/stop.ready" ] && [ "$i" -lt 600 ]; do
		i=$((i + 1))
		sleep 0.05
	done
	kill -9 "$(cat "$inst/iod1/iod.pid")"
	sleep 1
	"$clf" up --data "$inst" >"$tmp/up2" 2>&1 || cat "$tmp/up2" >&2
	sleep 1
	touch "$tmp/stop"
	wait "$job" && cat "$tmp/recovery.out"
}
for opt in false true; do
	run "write_all/read_all through an iod restart ($opt)" recovery "$opt"
done

run "files closed in MPI_Finalize" mpiexec -n 2 "$bin/romio_life" shutdown clf:/life-shut
run "what they wrote" mpiexec -n 2 "$bin/romio_life" check clf:/life-shut
run "independent creators with hints" mpiexec -n 2 "$bin/romio_life" race clf:/life-race 40
# A process that misses a collective of the close hangs: 60 s is plenty.
for opt in false true; do
	printf 'use_romio_optimizations %s\n' "$opt" >"$tmp/amode-$opt"
	run "access modes of created files ($opt)" env ROMIO_HINTS="$tmp/amode-$opt" \
		timeout -k 10 60 mpiexec -n 2 "$bin/romio_life" amode "clf:/life-amode-$opt"
done

# Fortran: MPI_File_* called from libmpichfort (mpicc-clf MPICC=mpifort).
if [ -x "$bin/fortran_io" ]; then
	run "Fortran" mpiexec -n 2 "$bin/fortran_io"
else
	echo "(no mpifort: the Fortran program is not built)"
fi

# Debian's own ROMIO does not know clf: ...
step="plain mpicc without the driver"
if mpiexec -n 2 "$bin/romio_io_plain" info plain >"$tmp/out" 2>&1; then
	failed=$((failed + 1))
	echo "FAIL: $step: clf: files open without libromio-clf.so" >&2
else
	passed=$((passed + 1))
	echo "plain mpicc: clf: refused without libromio-clf.so, as expected"
fi
# ... and LD_PRELOAD brings it to an unmodified program.
run "plain mpicc with LD_PRELOAD" \
	mpiexec -n 2 -genv LD_PRELOAD "$lib" "$bin/romio_io_plain" misc preload

echo "test_romio: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
