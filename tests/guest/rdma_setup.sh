#!/bin/sh
# rdma_setup.sh -- sourced inside the guest (tests/guest/run-guest.sh): soft-RoCE
# (rdma_rxe) on a dummy interface with address $RDMA_HOST, the address
# rdma_cm resolves to the rxe device (it cannot use loopback).
RDMA_HOST=10.9.9.1
modprobe crc32_generic 2>/dev/null || true
modprobe rdma_rxe || { echo "FAIL: modprobe rdma_rxe"; exit 1; }
modprobe rdma_ucm 2>/dev/null || true
modprobe ib_uverbs 2>/dev/null || true
ip link set lo up
ip link add dummy0 type dummy
ip addr add $RDMA_HOST/24 dev dummy0
ip link set dummy0 up
rdma link add rxe0 type rxe netdev dummy0 || { echo "FAIL: rdma link add"; exit 1; }
ibv_devices | grep -q rxe0 || { echo "FAIL: no rxe0 in ibv_devices"; exit 1; }
# Packets the soft-RoCE device sent: proof that a test went over RDMA.
rxe_sent() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts; }
