#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# multihost_scale.sh -- the cost model's check (docs/performance.md): N iods,
# each in a network namespace of its own behind a veth pair (as in
# tests/integration/test_multihost.sh), metad and C client processes
# (bench/iod_clients, native API) in the root namespace.  Prints, per
# client count, total MB/s and the CPU seconds per GB of the clients and
# of all iods together (from /proc), so the per-byte costs of the model
# can be compared with what the run shows.  Needs root; not a test.
#
#   bench/multihost_scale.sh [NIODS=8] [CMAX=16] [MiB per client=32]
#
# Build first (make bench/... : make -j2 && make build/bench/iod_clients).
set -eu

niods=${1:-8}
cmax=${2:-16}
mb=${3:-32}
build=$(cd "${CLF_BUILD_DIR:-build}" && pwd)
tag=cs$$
ns=() vr=()
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-mhscale.XXXXXX")
pids=()

cleanup() {
	set +e
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.5
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for l in "${vr[@]}"; do ip link del "$l" 2>/dev/null; done
	for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

net=
for i in $(seq 0 199); do
	n=$(( ($$ + i * 37) % 200 + 20 ))
	if ! ip -4 addr show | grep -q "inet 10\.214\.$n\."; then
		net=10.214.$n
		break
	fi
done
port=$(( 20000 + $$ % 20000 ))
secret=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
conf=$tmp/clf.conf
{
	echo "[global]"
	echo "secret = $secret"
	echo "[metad]"
	echo "address = 127.0.0.1:$port"
	echo "dir = $tmp/meta"
} >"$conf"
mkdir -p "$tmp/meta"
for i in $(seq 0 $((niods - 1))); do
	ns+=("clf-$tag-$i")
	vr+=("${tag}r$i")
	ip netns add "${ns[i]}"
	ip link add "${vr[i]}" type veth peer name "${tag}n$i" netns "${ns[i]}"
	ip addr add "$net.$((4 * i + 1))/30" dev "${vr[i]}"
	ip link set "${vr[i]}" up
	ip -n "${ns[i]}" link set lo up
	ip -n "${ns[i]}" addr add "$net.$((4 * i + 2))/30" dev "${tag}n$i"
	ip -n "${ns[i]}" link set "${tag}n$i" up
	ip -n "${ns[i]}" route add default via "$net.$((4 * i + 1))"
	mkdir -p "$tmp/iod$i"
	{
		echo "[iod]"
		echo "address = $net.$((4 * i + 2)):$((port + 1 + i))"
		echo "dir = $tmp/iod$i"
	} >>"$conf"
done
chmod 600 "$conf"
"$build/metad/metad" -c "$conf" -f --log "$tmp/metad.log" &
pids+=($!)
for i in $(seq 0 $((niods - 1))); do
	ip netns exec "${ns[i]}" "$build/iod/iod" -c "$conf" -n "$i" -f \
		--log "$tmp/iod$i.log" &
	pids+=($!)
done
sleep 1

# CPU seconds (user + system) of the iods so far.
iod_cpu() {
	local t=0 p
	for p in "${pids[@]:1}"; do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "$t"
}


echo "$niods iods in network namespaces (veth), metad + clients in the root namespace, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
c=1
while [ "$c" -le "$cmax" ]; do
	before=$(iod_cpu)
	out=$(CLF_BENCH_CMIN=$c CLF_CONFIG=$conf \
		"$build/bench/iod_clients" "$mb" "$c" "$niods" | tail -n 1)
	after=$(iod_cpu)
	# iod_clients moved 2 * reps * c * mb MiB (write + read).
	reps=${CLF_BENCH_REPS:-3}
	gb=$(echo "2 * $reps * $c * $mb * 1.048576 / 1000" | bc -l)
	printf '%s  iod CPU s/GB %.3f\n' "$out" \
		"$(echo "($after - $before) / $(getconf CLK_TCK) / $gb" | bc -l)"
	c=$((c * 2))
done
