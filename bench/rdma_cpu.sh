#!/bin/sh
# rdma_cpu.sh -- CPU per byte and messages per second, TCP vs RDMA, in
# the soft-RoCE qemu guest (tests/guest/run-guest.sh, rdma_setup.sh):
# bench/rdma_cpu over each transport on the guest's dummy interface.
#
#   bench/rdma_cpu.sh [BUILD_DIR] [MB] [SMALL]   (make bench first)
#
# Figures and what they imply for a 100 Gb/s NIC: docs/performance.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
guest=0
[ "${1:-}" = --in-guest ] && { guest=1; shift; }
B=$(cd "${1:-build}" && pwd)
MB=${2:-32}
SMALL=${3:-3000}
if [ $guest = 0 ]; then
	exec "$here/../tests/guest/run-guest.sh" --build "$B" \
		--out "$B/guest/bench" --timeout 500 "$here/rdma_cpu.sh" \
		--in-guest "$B" "$MB" "$SMALL"
fi
. "$here/../tests/guest/rdma_setup.sh"
# rdma twice: through the bounce buffers only, then server-directed.
for t in tcp rdma-bounce rdma; do
	port=$((24000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
	dm=; [ $t = rdma-bounce ] && dm=0
	CLF_RDMA_DIRECT_MIN=$dm "$B/bench/rdma_cpu" ${t%-bounce} \
		"$RDMA_HOST:$port" "$MB" "$SMALL" |
		if [ $t = tcp ]; then cat; else tail -n +2; fi
done
