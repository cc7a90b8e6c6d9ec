#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# wan.sh -- clf over an emulated wide-area link (issue 21): the instance
# (metad and NIODS iods) in one network namespace, the client in another,
# one veth pair between them shaped with tc netem on both ends: RTT_MS
# round trip (half each way), RATE_MBIT each way, LOSS_PCT loss each way
# (bench/wan_link, TUN devices and a process between them, where the
# kernel has no netem).
# The client names the instance by clf://HOST:PORT (no configuration
# file).  Prints:
#
#   1. one TCP stream alone over the link (python), for reference;
#   2. a sequential transfer of MB MiB with `clf cp` (native API, the
#      client's pipeline of requests over its connections to the iods),
#      written and read back: MiB/s and the fraction of the link's rate,
#      and what varies between runs: TCP's retransmissions and the
#      emulator's losses, drops and late deliveries meanwhile;
#   3. RIO's experiment (bench/mpi_rio): STEPS steps of COMPUTE_MS of
#      computation each followed by a nonblocking MPI_File_iwrite_at of
#      STEP_MB MiB, waited for before the next one is issued: the total
#      time against compute alone and transfer alone, and what the sum
#      and the max of those would be.
#
#   4. MPI-IO/L's comparison (bench/mpi_cache): one CACHE_MB MiB file read
#      10% once, all once, all three times: directly, through the hint
#      clf_cache, and staged to local disk first (staging timed too).
#
#   bench/wan.sh [MB=256]
#
# Environment: RTT_MS (50), RATE_MBIT (100), LOSS_PCT (0.1), NIODS (4),
# STEPS (8), STEP_MB (8), COMPUTE_MS (800), CACHE_MB (64), CACHE_NP (1),
# PARTS ("1 2 3 4": which of the parts above to run).  Needs root (ip
# netns, tc); build first (make -j2 && make build/bench/mpi_rio
# build/bench/mpi_cache).  Not a test: the figures depend on the
# machine; docs/performance.md keeps a run's.
set -eu

mb=${1:-256}
parts=" ${PARTS:-1 2 3 4} "
part() { case $parts in *" $1 "*) return 0 ;; esac; return 1; }
rtt=${RTT_MS:-50}
rate=${RATE_MBIT:-100}
loss=${LOSS_PCT:-0.1}
niods=${NIODS:-4}
steps=${STEPS:-8}
step_mb=${STEP_MB:-8}
compute_ms=${COMPUTE_MS:-800}
build=$(cd "${CLF_BUILD_DIR:-build}" && pwd)
clf=$build/tools/clf
rio=$build/bench/mpi_rio
tag=cw$$
nss=clfwan-s-$$
nsc=clfwan-c-$$
made=()
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-wan.XXXXXX")

link_pid=
cleanup() {
	set +e
	[ -n "$link_pid" ] && kill "$link_pid" 2>/dev/null
	[ -f "$tmp/srv/clf.conf" ] &&
		ip netns exec "$nss" "$clf" down -c "$tmp/srv/clf.conf" >/dev/null 2>&1
	for n in "${made[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

for b in "$clf" "$build/metad/metad" "$build/iod/iod"; do
	[ -x "$b" ] || { echo "wan.sh: $b not built (make -j2)" >&2; exit 1; }
done

net=
for i in $(seq 0 199); do
	n=$(( ($$ + i * 37) % 200 + 20 ))
	if ! ip -4 addr show | grep -q "inet 10\.215\.$n\."; then
		net=10.215.$n
		break
	fi
done
[ -n "$net" ] || { echo "wan.sh: no free 10.215.x.0/24" >&2; exit 1; }

ip netns add "$nss"
made+=("$nss")
ip netns add "$nsc"
made+=("$nsc")
# The link: tc netem where the kernel has it, else bench/wan_link between
# a TUN device in each namespace (both shape each direction alike).
if ip -n "$nsc" link add "${tag}c" type veth peer name "${tag}s" netns "$nss" &&
   ip netns exec "$nsc" tc qdisc add dev "${tag}c" root netem delay 1ms 2>/dev/null
then
	ip netns exec "$nsc" tc qdisc del dev "${tag}c" root
	for side in "$nsc ${tag}c" "$nss ${tag}s"; do
		set -- $side
		ip netns exec "$1" tc qdisc add dev "$2" root netem \
			delay "$((rtt / 2))ms" rate "${rate}mbit" \
			loss "${loss}%" limit 100000
	done
	shaper="tc netem"
else
	ip -n "$nsc" link del "${tag}c" 2>/dev/null || true
	[ -x "$build/bench/wan_link" ] ||
		{ echo "wan.sh: no netem here and $build/bench/wan_link not built" >&2; exit 1; }
	# Real-time priority where allowed: on a loaded machine a starved
	# wan_link let its TUN queues overflow, 5-14% of the packets dropped
	# besides LOSS_PCT (retransmissions counted below), and the link
	# emulated was no longer the one asked for.
	chrt=
	chrt -f 10 true 2>/dev/null && chrt="chrt -f 10"
	# A queue as deep as netem's above (limit 100000 packets; the ring
	# holds 65536): the 2 bandwidth-delay products of wan_link's
	# default dropped 5-8% of a read's packets (BBR's flows overfill
	# it), a link other than the netem one.
	$chrt "$build/bench/wan_link" "$nsc" "${tag}c" "$nss" "${tag}s" "$rtt" "$rate" \
		"$loss" 96000 >"$tmp/link" 2>&1 &
	link_pid=$!
	for _ in $(seq 100); do
		grep -q ready "$tmp/link" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ready "$tmp/link" || { cat "$tmp/link" >&2; exit 1; }
	# Room for the bursts a TCP window sends at once (the default 500
	# packets is 0.7 MB, about one bandwidth-delay product).
	ip -n "$nsc" link set dev "${tag}c" txqueuelen 10000
	ip -n "$nss" link set dev "${tag}s" txqueuelen 10000
	shaper="bench/wan_link${chrt:+ ($chrt)} (no netem in this kernel)"
fi
ip -n "$nsc" addr add "$net.1" peer "$net.2" dev "${tag}c"
ip -n "$nss" addr add "$net.2" peer "$net.1" dev "${tag}s"
for side in "$nsc ${tag}c" "$nss ${tag}s"; do
	set -- $side
	ip -n "$1" link set lo up
	ip -n "$1" link set "$2" up
done

port=7000
mkdir -p "$tmp/srv" "$tmp/cl"
{
	echo "[global]"
	echo "secret_file = $tmp/srv/secret"
	echo "auth = secret"
	echo "timeout_ms = 20000"
	echo "metad = $net.2:$port:$tmp/srv/meta"
	for i in $(seq 0 $((niods - 1))); do
		echo "iod = $net.2:$((port + 1 + i)):$tmp/srv/iod$i"
	done
} >"$tmp/srv/clf.conf"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/srv/secret"
chmod 600 "$tmp/srv/clf.conf" "$tmp/srv/secret"
ip netns exec "$nss" "$clf" up -c "$tmp/srv/clf.conf" >"$tmp/up" 2>&1 ||
	{ cat "$tmp/up" >&2; exit 1; }
url=clf://$net.2:$port
export CLF_SECRET_FILE=$tmp/srv/secret
unset CLF_CONFIG CLF_DATA_DIR || true
cd "$tmp/cl"

link_mibs=$(awk -v r="$rate" 'BEGIN { printf "%.2f", r * 1e6 / 8 / 1048576 }')
echo "link ($shaper): RTT ${rtt} ms, ${rate} Mbit/s (${link_mibs} MiB/s), loss ${loss}% each way;" \
	"$niods iods; TCP congestion control $(ip netns exec "$nsc" cat /proc/sys/net/ipv4/tcp_congestion_control)"

# mibs BYTES SECONDS: MiB/s and the fraction of the link.
mibs() {
	awk -v b="$1" -v s="$2" -v l="$link_mibs" \
		'BEGIN { m = b / 1048576 / s; printf "%.2f MiB/s, %.0f%% of the link", m, 100 * m / l }'
}

if part 1; then
# 1. One TCP stream alone.
ip netns exec "$nss" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 6999)); s.listen(1); c, _ = s.accept()
while c.recv(1 << 20): pass
' "$net.2" &
sink=$!
sleep 0.5
tcp_mb=$((mb / 4))
t=$(ip netns exec "$nsc" python3 -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], 6999)); buf = b"x" * (1 << 20)
t = time.time()
for _ in range(int(sys.argv[2])): s.sendall(buf)
s.shutdown(socket.SHUT_WR); s.recv(1); print("%.3f" % (time.time() - t))
' "$net.2" "$tcp_mb")
wait "$sink" 2>/dev/null || true
echo "one TCP stream, $tcp_mb MiB: $t s, $(mibs $((tcp_mb << 20)) "$t")"
fi

# tcp_counts: the TCP counters of both namespaces that say how the
# link's losses were recovered (retransmitted segments, retransmission
# timeouts, tail loss probes) and the packets their devices dropped,
# summed, and the CPU time (user + system jiffies) of the whole machine:
# what varies from run to run.
tcp_counts() {
	local ns
	for ns in "$nsc" "$nss"; do
		ip netns exec "$ns" cat /proc/net/snmp /proc/net/netstat
		ip netns exec "$ns" sh -c 'cat /sys/class/net/*/statistics/tx_dropped' |
			awk '{ d += $1 } END { print "Drops:", d }'
	done | awk '
	/^Tcp:/ { if (!th) { for (i = 2; i <= NF; i++) ti[$i] = i; th = 1 }
		  else { rs += $ti["RetransSegs"]; th = 0 } }
	/^TcpExt:/ { if (!eh) { for (i = 2; i <= NF; i++) ei[$i] = i; eh = 1 }
		     else { to += $ei["TCPTimeouts"]; lp += $ei["TCPLossProbes"]; eh = 0 } }
	/^Drops:/ { dr += $2 }
	END { printf "%d %d %d %d", rs, to, lp, dr }'
	awk '/^cpu / { printf " %d %d", $2 + $3 + $4, $5 }' /proc/stat
	# The emulator's own: packets lost at random, dropped at its queue.
	if [ -n "$link_pid" ]; then
		kill -USR1 "$link_pid" 2>/dev/null
		sleep 0.2
		grep "^counters:" "$tmp/link" | tail -1 |
			awk '{ printf " %d %d %d\n", $7 + $8, $10 + $11, $13 + $14 }'
	else
		echo " 0 0 0"
	fi
}

# timed LABEL COMMAND...: run it in the client namespace; its time, the
# share of the link, and what tcp_counts saw change meanwhile.
timed() {
	local label=$1 a b t0 t1 t
	shift
	a=$(tcp_counts)
	t0=$(date +%s.%N)
	ip netns exec "$nsc" env CLF_SECRET_FILE="$CLF_SECRET_FILE" "$@"
	t1=$(date +%s.%N)
	b=$(tcp_counts)
	t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	echo "$label, $mb MiB: $t s, $(mibs $((mb << 20)) "$t"); $(echo "$a $b" |
		awk '{ busy = $14 - $5; idle = $15 - $6
		       printf "retransmitted %d segments, %d timeouts, %d loss probes, %d packets dropped at the devices; the link lost %d at random, dropped %d at its full queue, delivered %d late; CPUs busy %.0f%%",
		       $10 - $1, $11 - $2, $12 - $3, $13 - $4, $16 - $7, $17 - $8, $18 - $9, 100 * busy / (busy + idle + 1e-9) }')"
}

if part 2; then
# 2. clf cp, both ways.
head -c $((mb << 20)) /dev/urandom >"$tmp/cl/big"
timed "clf cp to clf" "$clf" cp -q "$tmp/cl/big" "$url/big"
timed "clf cp from clf" "$clf" cp -q "$url/big" "$tmp/cl/back"
cmp "$tmp/cl/big" "$tmp/cl/back" || { echo "wan.sh: the copy back differs" >&2; exit 1; }
timed "clf cp from clf to /dev/null (no local disk)" "$clf" cp -q "$url/big" /dev/null
rm -f "$tmp/cl/big" "$tmp/cl/back"
fi

if part 3; then
# 3. RIO's experiment.
if [ -x "$rio" ] && command -v mpiexec >/dev/null; then
	ip netns exec "$nsc" env CLF_SECRET_FILE="$CLF_SECRET_FILE" \
		UCX_NET_DEVICES=lo mpiexec -n 1 "$rio" "$url/rio" "$steps" \
		"$step_mb" "$compute_ms" </dev/null
else
	echo "RIO's experiment skipped: build/bench/mpi_rio or mpiexec missing"
fi
fi

# 4. MPI-IO/L's comparison: one CACHE_MB MiB file at the far end read by
# bench/mpi_cache (CACHE_NP processes) -- 10% of it once, all of it
# once, all of it three times -- directly (clf:// name), through the hint
# clf_cache (a copy on local disk, fetched at the open), and staged (clf
# stage-out to local disk first, timed, then the program on the copy
# through ROMIO's ufs driver).
if part 4; then
	cache=$build/bench/mpi_cache
	if [ -x "$cache" ] && command -v mpiexec >/dev/null; then
		cmb=${CACHE_MB:-64}
		cnp=${CACHE_NP:-1}
		head -c $((cmb << 20)) /dev/urandom >"$tmp/cl/cf"
		ip netns exec "$nsc" env CLF_SECRET_FILE="$CLF_SECRET_FILE" \
			"$clf" cp -q "$tmp/cl/cf" "$url/cf"
		rm -f "$tmp/cl/cf"
		mkdir -p "$tmp/cl/cache" "$tmp/cl/stage"
		runc() {
			ip netns exec "$nsc" env CLF_SECRET_FILE="$CLF_SECRET_FILE" \
				UCX_NET_DEVICES=lo mpiexec -n "$cnp" "$cache" "$@" </dev/null |
				awk '{ print $1 }'
		}
		echo "MPI-IO/L's comparison, one $cmb MiB file, $cnp process(es), seconds from open to close:"
		printf "  %-22s %10s %10s %10s\n" "" direct clf_cache staged
		for w in "10 1" "100 1" "100 3"; do
			set -- $w
			d=$(runc "$url/cf" "$1" "$2")
			c=$(runc "$url/cf" "$1" "$2" "$tmp/cl/cache")
			rm -f "$tmp/cl/stage/cf"
			t0=$(date +%s.%N)
			ip netns exec "$nsc" env CLF_SECRET_FILE="$CLF_SECRET_FILE" \
				"$clf" stage-out -q "$url/cf" "$tmp/cl/stage/cf"
			t1=$(date +%s.%N)
			p=$(runc "ufs:$tmp/cl/stage/cf" "$1" "$2")
			s=$(awk -v a="$t0" -v b="$t1" -v p="$p" 'BEGIN { printf "%.3f", b - a + p }')
			printf "  %-22s %10s %10s %10s\n" "$1% of it, $2 time(s)" "$d" "$c" "$s"
		done
	else
		echo "MPI-IO/L's comparison skipped: build/bench/mpi_cache or mpiexec missing"
	fi
fi
