#!/bin/sh
# rdma_tests.sh -- the RDMA transport's integration tests, run inside the
# guest by `make check-rdma-guest` (tests/guest/run-guest.sh): soft-RoCE on a
# dummy interface, then over RDMA
#   1. test_native's quick cases (the native API against metad + 2 iods,
#      every daemon with transport = rdma), the kill of an iod included;
#   2. one client over TCP and one over RDMA on the same file;
#   3. an iod killed in the middle of a large write, then restarted;
#   4. 1000 clients that close in the middle of a 1 MiB request (its
#      64 KiB pieces READ by the iod over RDMA): the
#      iod's descriptors, threads and memory do not grow, and its shared
#      receive pool has every buffer posted again (clf status --json);
#   5. a program linked against libclf.so (whose unmaps libclf cannot
#      see, no UCX) writes from pages it then unmaps and maps again at
#      the same address with other bytes: no stale bytes (rdma_remap_so);
#   6. 64 idle RDMA connections to an iod cost it little memory each:
#      its receive buffers are one shared pool (rdma_conns);
#   7. MPI-IO: 2 MPICH processes through the clf: driver, collective and
#      independent writes and reads, compared with a local reference, the
#      bytes moved by the iods' RDMA READs and WRITEs (rdma_mpiio.sh);
#   8. the paper's 2-D matrix experiment (bench/mpi_matrix) with 2
#      processes over RDMA, every byte read back checked (rdma_mpiio.sh);
#   9. a second rxe device on a second dummy interface: a client with
#      connections through both registers its buffer once per device,
#      and two connections on one device share one registration
#      (rdma_devices).
# Data stay small: TCG emulates every instruction.
#   rdma_tests.sh BUILD_DIR [CASES [CYCLES]]   (BUILD_DIR absolute)
set -u
B=$1
cd "$(dirname "$0")/../.."
. "$(dirname "$0")/rdma_setup.sh" || exit 1
export CLF_BUILD_DIR=$B CLF_TEST_TRANSPORT=rdma CLF_TEST_HOST=$RDMA_HOST
# One malloc arena per process: the iod's workers come and go (the event
# loop's pool), and a new thread's first allocation can open an arena and
# add megabytes of RSS at once, which case 4 would take for a leak.  With
# one arena, memory that stays is memory kept.
export GLIBC_TUNABLES=glibc.malloc.arena_max=1
fails=0
check() { # name command...
	name=$1; shift
	t0=$(date +%s)
	if "$@"; then
		echo "PASS: rdma: $name ($(( $(date +%s) - t0 )) s)"
	else
		echo "FAIL: rdma: $name ($(( $(date +%s) - t0 )) s)"
		fails=$((fails + 1))
	fi
}

native() { # one test_native case over RDMA
	before=$(rxe_sent)
	CLF_TEST_ONLY=$1 "$B/tests/integration/test_native" | tail -n +2 ||
		return 1
	sent=$(( $(rxe_sent) - before ))
	echo "rxe0 sent $sent packets"
	# Every case moves data: dozens of RoCE packets at least (0 over TCP).
	[ $sent -gt 20 ] || { echo "not over RDMA"; return 1; }
}
CASES=${2:-test_default_view_round_trips_a_file,test_namespace_calls_reach_metad,test_view_on_one_subfile_is_one_transfer,test_layout_rules_are_enforced_with_the_rule_named,test_killed_iod_fails_fast_and_comes_back_with_its_data}
for c in $(echo "$CASES" | tr ',' ' '); do
	check "native: $c" native "$c"
done
. "$(dirname "$0")/rdma_mixed.sh"
. "$(dirname "$0")/rdma_mpiio.sh"

remap_so() { # after mixed: its instance
	moved0=$(rdma_moved)
	"$B/tests/guest/rdma_remap_so" $M/rdma.conf /remap-so 2> $M/remap_so.err
	rc=$?
	cat $M/remap_so.err
	# The mode this case is about, said by the library itself.
	grep -q "each registration serves one transfer" $M/remap_so.err ||
		{ echo "libclf.so's client did not run with unmaps unseen"; return 1; }
	[ $rc -eq 0 ] || return 1
	# 2 MiB written, 2 MiB read, in 64 KiB pieces: by RDMA READ/WRITE of
	# registered pages, not through bounce buffers.
	for _ in $(seq 25); do
		[ $(( $(rdma_moved) - moved0 )) -ge 4194304 ] && break
		sleep 0.2
	done
	echo "remap_so: $(( $(rdma_moved) - moved0 )) bytes moved by RDMA READs and WRITEs"
	[ $(( $(rdma_moved) - moved0 )) -ge 4194304 ] ||
		{ echo "the pages were not moved by RDMA"; return 1; }
}
check "one TCP and one RDMA client on one file" mixed
check "a program on libclf.so sends a remapped buffer's new bytes" remap_so
check "64 RDMA connections cost an iod at most 512 KiB each" \
	"$B/tests/guest/rdma_conns" $M/rdma.conf "$(cat $M/iod0.pid)" 64 512
check "MPI-IO, collective and independent, through clf: over RDMA" mpiio
check "the 2-D matrix experiment (mpi_matrix) over RDMA, every byte checked" \
	matrix
devices() { # a second device, then rdma_devices
	ip link add dummy1 type dummy &&
	ip addr add 10.9.8.1/24 dev dummy1 &&
	ip link set dummy1 up &&
	rdma link add rxe1 type rxe netdev dummy1 || return 1
	"$B/tests/guest/rdma_devices" $RDMA_HOST 10.9.8.1 20190 20
}
check "two RDMA devices: a buffer registered once per device" devices
check "an iod killed in the middle of a write" killed
check "clients gone mid-message leave nothing at the iod" disconnects \
	"${3:-1000}"
mixed_down

[ $fails -eq 0 ]
