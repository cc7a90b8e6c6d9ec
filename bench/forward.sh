#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# forward.sh -- throughput through one `clf forward` against the direct
# path (issue 21).  Three network namespaces joined by veth pairs, the
# middle one either routing (direct: the client's packets cross it in the
# kernel) or running clf forward (the client sets CLF_FORWARDER):
#
#   client A.1 ---- A.2 middle A.5 ---- A.6 instance (metad, NIODS iods)
#
# Prints, for MB MiB, clf cp into and out of clf both ways, MiB/s; then
# collective writes and reads of CLIENTS clients (forward_coll: ROUNDS
# rounds of ncwrite_at_all + ncread_at_all, 64 blocks of BLOCK bytes per
# client and call, cyclic): direct, through `clf forward --no-merge`
# (one message per client and iod, as before 1.24) and through `clf
# forward` merging them (one VIEW_MERGED per operation and iod).
#
#   bench/forward.sh [MB=256]
#
# Environment: NIODS (4), CLIENTS (2), ROUNDS (200), BLOCK (4096).  Needs
# root; build first (make -j2 and make check-remote's programs).  Not a
# test: docs/performance.md keeps a run's figures.
set -eu

mb=${1:-256}
niods=${NIODS:-4}
clients=${CLIENTS:-2}
rounds=${ROUNDS:-200}
block=${BLOCK:-4096}
build=$(cd "${CLF_BUILD_DIR:-build}" && pwd)
clf=$build/tools/clf
coll=$build/tests/integration/forward_coll
cl=clfbf-c-$$
mid=clfbf-m-$$
sv=clfbf-s-$$
made=()
fwd_pid=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-bench-forward.XXXXXX")

cleanup() {
	set +e
	[ -n "$fwd_pid" ] && kill "$fwd_pid" 2>/dev/null
	[ -f "$tmp/srv/clf.conf" ] &&
		ip netns exec "$sv" "$clf" down -c "$tmp/srv/clf.conf" >/dev/null 2>&1
	for n in "${made[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

for n in "$cl" "$mid" "$sv"; do
	ip netns add "$n"
	made+=("$n")
done
net=10.217.$(( $$ % 200 + 20 ))
ip -n "$cl" link add bfc$$ type veth peer name bfm$$ netns "$mid"
ip -n "$mid" link add bfn$$ type veth peer name bfs$$ netns "$sv"
ip -n "$cl" addr add "$net.1/30" dev bfc$$
ip -n "$mid" addr add "$net.2/30" dev bfm$$
ip -n "$mid" addr add "$net.5/30" dev bfn$$
ip -n "$sv" addr add "$net.6/30" dev bfs$$
for l in "$cl bfc$$" "$mid bfm$$" "$mid bfn$$" "$sv bfs$$"; do
	set -- $l
	ip -n "$1" link set lo up
	ip -n "$1" link set "$2" up
done
ip -n "$cl" route add "$net.4/30" via "$net.2"
ip -n "$sv" route add "$net.0/30" via "$net.5"

port=7000
mkdir -p "$tmp/srv" "$tmp/cl"
{
	echo "[global]"
	echo "secret_file = $tmp/srv/secret"
	echo "auth = secret"
	echo "metad = $net.6:$port:$tmp/srv/meta"
	for i in $(seq 0 $((niods - 1))); do
		echo "iod = $net.6:$((port + 1 + i)):$tmp/srv/iod$i"
	done
} >"$tmp/srv/clf.conf"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/srv/secret"
chmod 600 "$tmp/srv/clf.conf" "$tmp/srv/secret"
ip netns exec "$sv" "$clf" up -c "$tmp/srv/clf.conf" >/dev/null
export CLF_SECRET_FILE=$tmp/srv/secret
unset CLF_CONFIG CLF_DATA_DIR CLF_FORWARDER || true
url=clf://$net.6:$port
head -c $((mb << 20)) /dev/urandom >"$tmp/cl/big"
cd "$tmp/cl"

# run LABEL: clf cp both ways from the client namespace.
run() {
	local t0 t1 w r

	t0=$(date +%s.%N)
	ip netns exec "$cl" "$clf" cp -q "$tmp/cl/big" "$url/big"
	t1=$(date +%s.%N)
	w=$(awk -v a="$t0" -v b="$t1" -v m="$mb" 'BEGIN { printf "%.1f", m / (b - a) }')
	t0=$(date +%s.%N)
	ip netns exec "$cl" "$clf" cp -q "$url/big" /dev/null
	t1=$(date +%s.%N)
	r=$(awk -v a="$t0" -v b="$t1" -v m="$mb" 'BEGIN { printf "%.1f", m / (b - a) }')
	printf '%-28s write %7s MiB/s   read %7s MiB/s\n' "$1" "$w" "$r"
	[ -x "$coll" ] || return 0
	# The collectives' seconds, per call (a write or a read).
	ip netns exec "$cl" "$coll" "$url" "$clients" "$rounds" "$block" \
		>"$tmp/coll.out" 2>&1 || { cat "$tmp/coll.out"; exit 1; }
	awk -v l="$1" -v r="$rounds" '/collectively in/ {
		for (i = 1; i <= NF; i++) if ($i == "in") s = $(i + 1)
		printf "%-28s collectives: %.2f ms per call (%s)\n", l,
			1000 * s / (2 * r), $0 }' "$tmp/coll.out"
}

# start_forward [OPTION]: clf forward in the middle namespace.
start_forward() {
	if [ -n "$fwd_pid" ]; then
		kill "$fwd_pid" 2>/dev/null || true
		wait "$fwd_pid" 2>/dev/null || true
	fi
	ip netns exec "$mid" "$clf" forward --listen "$net.2:7100" "$@" "$url" \
		>"$tmp/fwd.log" 2>&1 &
	fwd_pid=$!
	for _ in $(seq 100); do
		grep -qs "^clf forward:" "$tmp/fwd.log" && break
		sleep 0.05
	done
}

echo "$mb MiB, $niods iods, veth links, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo "collectives: $clients clients, $rounds rounds of a write and a read of 64 x $block bytes each"
ip netns exec "$mid" sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
# Untimed: the file and the iods' first collectives.
[ -x "$coll" ] && ip netns exec "$cl" "$coll" "$url" "$clients" 5 "$block" >/dev/null
run "direct (kernel routing)"
ip netns exec "$mid" sh -c 'echo 0 > /proc/sys/net/ipv4/ip_forward'
export CLF_FORWARDER=$net.2:7100
start_forward --no-merge
run "clf forward --no-merge"
start_forward
grep -q "merging" "$tmp/fwd.log" || { cat "$tmp/fwd.log"; exit 1; }
run "clf forward (merging)"
