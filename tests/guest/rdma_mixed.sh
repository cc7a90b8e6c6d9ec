#!/bin/sh
# rdma_mixed.sh -- sourced by rdma_tests.sh in the guest: an instance
# (metad + 2 iods, transport = rdma on $RDMA_HOST) driven by the clf
# command, for
#   mixed:  a client over RDMA and one over TCP (a configuration naming
#           tcp://) on the same file, each reading what the other wrote,
#           the RDMA client's stripes moved by the iods' RDMA READs and
#           WRITEs, and `clf status` naming the transport of each;
#   killed: an iod killed with SIGKILL in the middle of a client's large
#           write over RDMA: the write fails within the timeout, and after
#           the iod restarts the same client command succeeds.
# Needs $B (build dir), $RDMA_HOST, rxe_sent (rdma_setup.sh).

M=/tmp/mixed
CLF="$B/tools/clf"

mixed_up() {
	rm -rf $M; mkdir -p $M/meta $M/iod0 $M/iod1
	port=$((20000 + $$ % 10000))
	key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	for t in rdma tcp; do
		pfx=; [ $t = tcp ] && pfx=tcp://
		cat > $M/$t.conf <<CONF
[global]
secret = $key
transport = $t
stripe_size = 64k
timeout_ms = 3000
recovery_grace_s = 0
[metad]
address = $pfx$RDMA_HOST:$port
dir = $M/meta
[iod]
address = $pfx$RDMA_HOST:$((port + 1))
dir = $M/iod0
[iod]
address = $pfx$RDMA_HOST:$((port + 2))
dir = $M/iod1
CONF
		chmod 600 $M/$t.conf
	done
	"$B/metad/metad" -c $M/rdma.conf -f --log $M/metad.log &
	echo $! > $M/metad.pid
	for i in 0 1; do iod_start $i; done
	for _ in $(seq 50); do
		"$CLF" -c $M/rdma.conf status -H >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "instance did not come up"; cat $M/*.log; return 1
}

iod_start() {
	"$B/iod/iod" -c $M/rdma.conf -n $1 -f --log $M/iod$1.log &
	echo $! > $M/iod$1.pid
}

mixed_down() {
	for p in $M/*.pid; do kill "$(cat "$p")" 2>/dev/null; done
	wait 2>/dev/null
}

mixed() {
	mixed_up || return 1
	head -c 3000000 /dev/urandom > $M/a
	head -c 2000000 /dev/urandom > $M/b
	before=$(rxe_sent)
	"$CLF" -c $M/rdma.conf cp -q $M/a clf:/shared || return 1
	rdma=$(( $(rxe_sent) - before ))
	"$CLF" -c $M/tcp.conf cp -q clf:/shared $M/a.tcp || return 1
	cmp $M/a $M/a.tcp || { echo "TCP client read other bytes"; return 1; }
	"$CLF" -c $M/tcp.conf cp -q $M/b clf:/shared || return 1
	"$CLF" -c $M/rdma.conf cp -q clf:/shared $M/b.rdma || return 1
	cmp $M/b $M/b.rdma || { echo "RDMA client read other bytes"; return 1; }
	echo "RDMA client's 3 MB write: $rdma RoCE packets"
	[ $rdma -gt 1000 ] || { echo "the RDMA client did not use RDMA"; return 1; }
	# The stripes (64 KiB) went by the iods' RDMA READs and WRITEs, not
	# through the bounce buffers: each iod says so as the clients leave.
	for _ in $(seq 25); do
		[ "$(cat $M/iod0.log $M/iod1.log | grep -c 'moved by')" -ge 2 ] &&
			break
		sleep 0.2
	done
	grep -h "moved by" $M/iod0.log $M/iod1.log
	[ "$(cat $M/iod0.log $M/iod1.log | grep -c 'moved by')" -ge 2 ] ||
		{ echo "no bulk data moved by RDMA READ/WRITE"; return 1; }
	"$CLF" -c $M/rdma.conf status > $M/st.rdma || return 1
	"$CLF" -c $M/tcp.conf status > $M/st.tcp || return 1
	cat $M/st.rdma $M/st.tcp
	[ "$(grep -c "rdma://$RDMA_HOST" $M/st.rdma)" -eq 3 ] &&
		[ "$(grep -c "tcp://$RDMA_HOST" $M/st.tcp)" -eq 3 ] ||
		{ echo "status does not show the transports"; return 1; }
	"$CLF" -c $M/rdma.conf status --json | grep -q '"transport":"rdma"' ||
		{ echo "status --json has no transport"; return 1; }
}

killed() {
	head -c 24000000 /dev/urandom > $M/big
	t0=$(date +%s)
	"$CLF" -c $M/rdma.conf cp -q $M/big clf:/big 2> $M/cp.err &
	cp=$!
	sleep 0.5
	kill -9 "$(cat $M/iod1.pid)"
	if wait $cp; then
		echo "the write finished before the kill: make it larger"
		return 1
	fi
	took=$(( $(date +%s) - t0 ))
	echo "write failed after $took s: $(tail -1 $M/cp.err)"
	[ $took -le 10 ] || { echo "not within the timeout"; return 1; }
	iod_start 1
	for _ in $(seq 50); do
		"$CLF" -c $M/rdma.conf status -H >/dev/null 2>&1 && break
		sleep 0.2
	done
	"$CLF" -c $M/rdma.conf cp -q $M/big clf:/big || return 1
	"$CLF" -c $M/rdma.conf cp -q clf:/big $M/big.back || return 1
	cmp $M/big $M/big.back || { echo "read back other bytes"; return 1; }
}

disconnects() { # CYCLES: clients that vanish mid-message; no leak at iod 0
	t0=$(date +%s)
	"$B/tests/guest/rdma_disconnect" $M/rdma.conf "$(cat $M/iod0.pid)" "$1" ||
		return 1
	echo "$1 cycles in $(( $(date +%s) - t0 )) s"
	"$CLF" -c $M/rdma.conf status -H >/dev/null || {
		echo "the instance does not answer after the disconnects"; return 1; }
	# Every buffer of iod 0's receive pool is posted again once no
	# message waits (the one STATUS came in is read by then), and the
	# pool stayed within its bound (8 chunks of 23) through all those
	# connections.  A buffer a dead connection kept would show here.
	for _ in $(seq 10); do
		pool=$("$CLF" -c $M/rdma.conf status --json | python3 -c '
import json, sys
d = [x for x in json.load(sys.stdin)["daemons"] if x["index"] == 0 and x["role"] == "iod"][0]
print(d["rdma_rx_posted"], d["rdma_rx_buffers"])')
		set -- $pool
		[ "$1" = "$2" ] && break
		sleep 0.3
	done
	echo "iod 0 receive pool: $1 of $2 buffers posted"
	[ "$1" = "$2" ] && [ "$2" -gt 0 ] && [ "$2" -le 184 ] || {
		echo "the receive pool lost buffers or grew past its bound"
		return 1; }
}
