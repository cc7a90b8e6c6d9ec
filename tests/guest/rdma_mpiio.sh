#!/bin/sh
# rdma_mpiio.sh -- sourced by rdma_tests.sh in the guest: MPI-IO over
# RDMA on the instance of rdma_mixed.sh (mixed_up).  Two processes of the
# host's MPICH (mpiexec) run romio_xfer through the clf: driver with
# the RDMA configuration:
#   collective writes and reads (write_all, read_all), clf's own
#   collective path (use_romio_optimizations=false) and ROMIO's two-phase
#   one (true), independent writes and reads (write, read), blocks that
#   are stripe-aligned and blocks that are not;
#   a buffer unmapped and mapped again at the same address between two
#   writes (the registration cache must not serve the old pages);
# every file read back by romio_xfer against the local reference, and
# again by a TCP client with cmp.  The iods' logs must show the bytes
# moved by their RDMA READs and WRITEs (each logs, as a client leaves,
# "N bytes moved by M RDMA READs/WRITEs").
# Needs $B, $M, $CLF, rxe_sent (rdma_setup.sh, rdma_mixed.sh).

# Bytes the iods' logs say RDMA READs/WRITEs moved, all clients together.
rdma_moved() {
	cat $M/iod0.log $M/iod1.log |
		sed -n 's/.* \([0-9]*\) bytes moved by [0-9]* RDMA.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

# xfer ARGS: romio_xfer ARGS in 2 processes over RDMA.  MPICH's own
# messages stay in shared memory (UCX would take the rxe device too,
# and its packets would count as clf's).
xfer() {
	CLF_CONFIG=$M/mpi.conf UCX_TLS=self,sm timeout 300 \
		mpiexec -n 2 "$B/tests/integration/romio/romio_xfer" "$@" \
		> $M/mpi.out 2>&1 < /dev/null ||
		{ cat $M/mpi.out; echo "romio_xfer $*: failed"; return 1; }
	cat $M/mpi.out
}

mpiio() {
	[ -x "$B/tests/integration/romio/romio_xfer" ] ||
		{ echo "romio_xfer not built (MPICH and ROMIO: make deps)"; return 1; }
	command -v mpiexec > /dev/null || { echo "no mpiexec (mpich)"; return 1; }
	# The instance's 3 s timeout is for the killed iod; two MPI processes
	# spinning in their waits on the guest's two emulated CPUs starve the
	# daemons for longer than that on a loaded machine.
	sed 's/^timeout_ms = .*/timeout_ms = 60000/' $M/rdma.conf > $M/mpi.conf
	chmod 600 $M/mpi.conf
	# Not a multiple of any block: every pattern ends in a short piece.
	head -c 2500000 /dev/urandom > $M/m
	moved0=$(rdma_moved)
	sent0=$(rxe_sent)
	# Blocks of 4 stripes (256 KiB): whole 64 KiB pieces, each moved by
	# one RDMA READ or WRITE; then the default 64 KiB + 13, unaligned.
	# Each path writes one file and reads another's; an mpiexec costs
	# some 15 s under TCG.
	xfer write false clf:/mpi-coll $M/m 262144 || return 1
	xfer check true clf:/mpi-coll $M/m || return 1
	xfer iwrite false clf:/mpi-ind $M/m 262144 || return 1
	xfer icheck false clf:/mpi-ind $M/m || return 1
	xfer write true clf:/mpi-two $M/m || return 1
	xfer check false clf:/mpi-two $M/m 262144 || return 1
	xfer remap false clf:/mpi-remap || return 1
	for f in mpi-coll mpi-ind mpi-two; do
		"$CLF" -c $M/tcp.conf cp -q clf:/$f $M/$f.tcp || return 1
		cmp $M/m $M/$f.tcp || { echo "/$f: other bytes over TCP"; return 1; }
	done
	echo "rxe0 sent $(( $(rxe_sent) - sent0 )) packets"
	# Each MPI process's connections close as it ends: the iods log
	# them then.  Three files of 2.5 MB written and read (rank 0 of a
	# check reads the file twice), and 4 MiB of remap: at least 8 of
	# those 26 MB by RDMA (the unaligned pieces go inline).
	want=8000000
	for _ in $(seq 25); do
		[ $(( $(rdma_moved) - moved0 )) -ge $want ] && break
		sleep 0.2
	done
	moved=$(( $(rdma_moved) - moved0 ))
	echo "MPI-IO: $moved bytes moved by the iods' RDMA READs and WRITEs"
	[ $moved -ge $want ] ||
		{ echo "MPI-IO's bytes were not moved by RDMA READ/WRITE"; return 1; }
}

# The paper's 2-D matrix experiment (bench/mpi_matrix, 2 processes, the
# checkerboard of CYCLIC(k) x CYCLIC(k) cells: nested strided views) over
# RDMA: clf's views and collective path (CLF-phys, CLF-idx) and ROMIO's
# two-phase on the same layout (ROMIO-phys), write_all then read_all,
# every byte read back checked by mpi_matrix.  After mpiio (its mpi.conf).
matrix() {
	[ -x "$B/bench/mpi_matrix" ] ||
		{ echo "bench/mpi_matrix not built (MPICH and ROMIO: make deps)"; return 1; }
	sent0=$(rxe_sent)
	CLF_CONFIG=$M/mpi.conf UCX_TLS=self,sm timeout 400 \
		mpiexec -n 2 "$B/bench/mpi_matrix" --side 1024 --kmin 16 \
		--kmax 256 --reps 1 --scenarios clf_phys,clf_idx,romio_phys \
		--ufs-dir $M > $M/matrix.out 2>&1 < /dev/null
	rc=$?
	cat $M/matrix.out
	[ $rc -eq 0 ] || { echo "mpi_matrix failed ($rc)"; return 1; }
	sent=$(( $(rxe_sent) - sent0 ))
	echo "rxe0 sent $sent packets"
	# 5 k x 3 scenarios x a 1 MiB matrix written and read: thousands.
	[ $sent -gt 1000 ] || { echo "the matrix did not go over RDMA"; return 1; }
}
