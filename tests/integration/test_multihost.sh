#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_multihost.sh -- clf across hosts, with network namespaces standing
# in for the hosts.  metad and the client run in the root namespace; iod 0
# and iod 1 each run in a namespace of their own, reached over a veth
# pair, so every byte between the client (or metad) and an iod crosses a
# real network device:
#
#     root ns: metad, client          ns h1: iod 0       ns h2: iod 1
#     A.1 on vr1 ---------------------- A.2 on vn1
#     A.5 on vr2 ------------------------------------------ A.6 on vn2
#
# (A = 10.213.N, N derived from the pid and unused on this machine.)
#
#  1. a file with an explicit layout cyclic(K) over the two iods, written
#     by two processes through the views cyclic(B) (B does not divide K),
#     read back whole and compared byte for byte;
#  2. each iod's storage directory holds exactly its subfile, with the
#     right bytes, and none of the other's;
#  3. the veth byte counters grew by at least what each iod stores, on
#     the way out (writes) and back (reads);
#  4. iod 0 killed with SIGKILL inside its namespace: a read fails with
#     -EHOSTDOWN or -ETIMEDOUT naming it within the timeout (+ margin),
#     metad still answers; the iod is restarted and the same descriptor
#     reads everything again;
#  5. iod 1's host cut off the network (its link down, packets dropped
#     silently): the same, then the link comes back;
#  6. a fresh client reads everything; metad truncates the subfiles on
#     both hosts; clf fsck lists both iods over their links and removes
#     an orphan from iod 1; unlink removes the subfiles from both hosts.
#
# usage: test_multihost.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when namespaces cannot be made
# here (not root, no ip) or the binaries are not built.  A trap stops
# every daemon, deletes the namespaces and links and the temporary
# directory whatever happens (CLF_TEST_KEEP=1 keeps the directory), and
# the whole test runs under a time limit.

set -eu

TIME_LIMIT=60		# seconds, the whole test
if [ -z "${CLF_MULTIHOST_TIMED:-}" ]; then
	export CLF_MULTIHOST_TIMED=1
	exec timeout -k 10 "$TIME_LIMIT" bash "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
if ! build=$(cd "$build" 2>/dev/null && pwd); then
	echo "SKIP: no build directory ${1:-${CLF_BUILD_DIR:-build}}"
	exit 77
fi
metad_bin=$build/metad/metad
iod_bin=$build/iod/iod
client=$build/tests/integration/multihost_client
for b in "$metad_bin" "$iod_bin" "$client"; do
	if [ ! -x "$b" ]; then
		echo "SKIP: $b not built"
		exit 77
	fi
done
unset CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true

TIMEOUT_MS=2000		# the instance's network timeout
# How long a read may take to fail while a host drops every packet: one
# timeout (a timed-out request is not retried).
PARTITION_LIMIT_MS=$TIMEOUT_MS
K=8192			# layout: cyclic(K) over the two iods
B=1536			# views: cyclic(B) over the two writers
SIZE=$((2 * B * 700))	# 2150400: a multiple of 2*B, not of 2*K
SIZE2=1000001		# after the truncation
FILE=/multihost.dat

ns=(clf-h1-$$ clf-h2-$$)	# the hosts of iod 0 and iod 1
vr=(clf$$r1 clf$$r2)		# their veths, root side
vn=(clf$$n1 clf$$n2)		# and namespace side
made_ns=()
made_links=()
tmp=
conf=
pids=()				# daemons started here, and found in pid files

# --- cleanup --------------------------------------------------------

# Is pid one of our daemons (its command line names our configuration)?
ours() {
	[ -n "$1" ] && [ -r "/proc/$1/cmdline" ] &&
		{ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null |
		grep -qF -- "$conf"
}

stop_daemons() {
	local p f all=()

	for f in "$tmp"/iod*/iod.pid "$tmp"/meta/metad.pid; do
		[ -r "$f" ] && all+=("$(cat "$f")")
	done
	all+=("${pids[@]}")
	for p in "${all[@]}"; do
		ours "$p" && kill -TERM "$p" 2>/dev/null
	done
	for _ in $(seq 50); do
		local left=0
		for p in "${all[@]}"; do
			ours "$p" && left=1
		done
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	for p in "${all[@]}"; do
		ours "$p" && kill -KILL "$p" 2>/dev/null
	done
	return 0
}

cleanup() {
	local rc=$? l n

	trap - EXIT INT TERM HUP
	set +e
	[ -n "$tmp" ] && stop_daemons
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "$tmp" ]; then
		for l in "$tmp"/*.log; do
			[ -s "$l" ] || continue
			echo "--- $l (last lines)" >&2
			tail -n 15 "$l" >&2
		done
	fi
	for l in "${made_links[@]}"; do
		ip link del "$l" 2>/dev/null
	done
	for n in "${made_ns[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	if [ -n "$tmp" ]; then
		if [ -n "${CLF_TEST_KEEP:-}" ]; then
			echo "kept $tmp" >&2
		else
			rm -rf "$tmp"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=setup
fail() {
	echo "FAIL: $step: $*" >&2
	exit 1
}

say() {
	echo "-- $step${*:+: $*}"
}

# --- the hosts -------------------------------------------------------

. "$(dirname "$0")/netns_lib.sh"
netns_add_first "${ns[0]}"
made_ns+=("${ns[0]}")
ip netns add "${ns[1]}" || fail "ip netns add ${ns[1]}"
made_ns+=("${ns[1]}")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-multihost.XXXXXX")
conf=$tmp/clf.conf

# A /24 of 10.213.0.0/16 that no address or route of this host touches.
net=
for i in $(seq 0 199); do
	n=$(( ($$ + i * 37) % 200 + 20 ))
	if ! ip -4 addr show | grep -q "inet 10\.213\.$n\." &&
	   ! ip -4 route show match "10.213.$n.1" | grep -qv '^default'
	then
		net=10.213.$n
		break
	fi
done
[ -n "$net" ] || fail "no free 10.213.x.0/24 here"
root_ip=("$net.1" "$net.5")	# root side of each pair
host_ip=("$net.2" "$net.6")	# iod i's address

for i in 0 1; do
	ip link add "${vr[i]}" type veth peer name "${vn[i]}" \
		netns "${ns[i]}" || fail "cannot create veth ${vr[i]}"
	made_links+=("${vr[i]}")
	ip addr add "${root_ip[i]}/30" dev "${vr[i]}"
	ip link set "${vr[i]}" up
	ip -n "${ns[i]}" link set lo up
	ip -n "${ns[i]}" addr add "${host_ip[i]}/30" dev "${vn[i]}"
	ip -n "${ns[i]}" link set "${vn[i]}" up
	ip -n "${ns[i]}" route add default via "${root_ip[i]}"
done

# metad's port: free in the root namespace; the iods have theirs alone.
port=
for i in $(seq 0 199); do
	p=$(( 10000 + ($$ * 37 + i * 101) % 22000 ))
	if [ -z "$(ss -Hltn "sport = :$p")" ]; then
		port=$p
		break
	fi
done
[ -n "$port" ] || fail "no free port"

secret=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
mkdir -p "$tmp/meta" "$tmp/iod0" "$tmp/iod1"
{
	echo "[global]"
	echo "secret = $secret"
	echo "stripe_size = 64k"
	echo "timeout_ms = $TIMEOUT_MS"
	# The faults below must fail the read, not be waited through
	# (test_native_recovery covers the wait).
	echo "recovery_grace_s = 0"
	echo "[metad]"
	echo "address = ${root_ip[0]}:$port"
	echo "dir = $tmp/meta"
	for i in 0 1; do
		echo "[iod]"
		echo "address = ${host_ip[i]}:$((port + 1 + i))"
		echo "dir = $tmp/iod$i"
	done
} >"$conf"
chmod 600 "$conf"

# wait_listen NS ADDR PORT PID: until the daemon PID listens (10 s).
wait_listen() {
	local in=() i

	[ -n "$1" ] && in=(ip netns exec "$1")
	for i in $(seq 200); do
		if [ -n "$("${in[@]}" ss -Hltn "src = $2:$3")" ]; then
			return 0
		fi
		kill -0 "$4" 2>/dev/null || fail "daemon $4 exited before listening on $2:$3"
		sleep 0.05
	done
	fail "daemon $4 does not listen on $2:$3"
}

step="start metad"
"$metad_bin" -c "$conf" -f --log "$tmp/metad.log" &
pids+=($!)
disown $!	# no job notices; bash reaps it, cleanup finds it by pid
wait_listen "" "${root_ip[0]}" "$port" "${pids[-1]}"

iod_pid=()
start_iod() {
	step="start iod $1"
	ip netns exec "${ns[$1]}" "$iod_bin" -c "$conf" -n "$1" -f \
		--log "$tmp/iod$1.log" &
	iod_pid[$1]=$!
	pids+=($!)
	disown $!
	wait_listen "${ns[$1]}" "${host_ip[$1]}" "$((port + 1 + $1))" \
		"${iod_pid[$1]}"
}
start_iod 0
start_iod 1

# --- helpers ---------------------------------------------------------

mc() {
	"$client" "$conf" "$@"
}

# Bytes through each root-side veth: "tx0 rx0 tx1 rx1".
counters() {
	local i s=

	for i in 0 1; do
		s+="$(cat "/sys/class/net/${vr[i]}/statistics/tx_bytes") "
		s+="$(cat "/sys/class/net/${vr[i]}/statistics/rx_bytes") "
	done
	echo "$s"
}

# expect_traffic BEFORE AFTER DIR...: for iod i, the bytes of the veth
# in each direction DIR (tx: to the iod, rx: from it) grew by at least
# what the iod stores.
expect_traffic() {
	local b a i d k

	read -r -a b <<<"$1"
	read -r -a a <<<"$2"
	shift 2
	for i in 0 1; do
		for d in "$@"; do
			k=$((2 * i))
			[ "$d" = rx ] && k=$((k + 1))
			local grew=$(( a[k] - b[k] )) need=${sub_len[i]}
			echo "   ${vr[i]} $d: $grew bytes (iod $i stores $need)"
			[ "$grew" -ge "$need" ] ||
				fail "only $grew bytes went $d over ${vr[i]} (iod $i), want >= $need"
		done
	done
}

# Subfile j's length in a file of $1 bytes, layout cyclic(K) over 2.
cyclic_length() {
	local size=$1 j=$2 rem
	rem=$(( size % (2 * K) - j * K ))
	[ "$rem" -lt 0 ] && rem=0
	[ "$rem" -gt "$K" ] && rem=$K
	echo $(( (size / (2 * K)) * K + rem ))
}

# Where iod i keeps subfile j of inode $ino.
subfile_path() {
	printf '%s/iod%d/%02x/%016x.%d' "$tmp" "$1" $((ino & 255)) "$ino" "$2"
}

# check_subfiles SIZE: iod i holds subfile i, right bytes, and not 1-i.
check_subfiles() {
	local i
	for i in 0 1; do
		"$client" - subfile "$(subfile_path $i $i)" $i "$1" $K ||
			fail "iod $i does not hold subfile $i as it should"
		[ ! -e "$(subfile_path $i $((1 - i)))" ] ||
			fail "iod $i holds subfile $((1 - i)) too"
	done
	echo "   iod 0: $(stat -c %s "$(subfile_path 0 0)") bytes," \
		"iod 1: $(stat -c %s "$(subfile_path 1 1)") bytes"
}

# --- the test --------------------------------------------------------

sub_len=("$(cyclic_length $SIZE 0)" "$(cyclic_length $SIZE 1)")

step="write through strided views from two processes, read back"
say "$SIZE bytes, layout cyclic($K), views cyclic($B)"
c0=$(counters)
mc write "$FILE" $SIZE $K $B || fail "client failed"
c1=$(counters)
expect_traffic "$c0" "$c1" tx rx

step="subfiles on their hosts"
say
read -r ino size < <(mc stat "$FILE") || fail "stat failed"
[ "$size" = "$SIZE" ] || fail "size $size, want $SIZE"
check_subfiles $SIZE

step="iod 0 killed with SIGKILL on its host"
say
old=${iod_pid[0]}
mc fault "$FILE" $SIZE $TIMEOUT_MS 0 \
	-- ip netns exec "${ns[0]}" kill -9 "$old" \
	-- ip netns exec "${ns[0]}" "$iod_bin" -c "$conf" -n 0 \
		--log "$tmp/iod0.log" ||
	fail "client failed"
pids+=("$(cat "$tmp/iod0/iod.pid")")
ours "$(cat "$tmp/iod0/iod.pid")" || fail "no restarted iod 0"

step="iod 1's host cut off the network"
say
mc fault "$FILE" $SIZE $PARTITION_LIMIT_MS 1 \
	-- ip -n "${ns[1]}" link set "${vn[1]}" down \
	-- sh -c "ip -n '${ns[1]}' link set '${vn[1]}' up &&
		  ip -n '${ns[1]}' route replace default via '${root_ip[1]}'" ||
	fail "client failed"

step="a fresh client reads everything"
say
c0=$(counters)
mc read "$FILE" $SIZE || fail "client failed"
c1=$(counters)
expect_traffic "$c0" "$c1" rx

step="metad truncates the subfiles on both hosts"
say "to $SIZE2 bytes"
mc truncate "$FILE" $SIZE2 || fail "client failed"
check_subfiles $SIZE2

step="clf fsck asks both iods over their links"
say
clf=$build/tools/clf
"$clf" -c "$conf" fsck >"$tmp/fsck.out" 2>&1 || fail "$(cat "$tmp/fsck.out")"
for i in 0 1; do
	grep -q "^iod $i (${host_ip[i]}:$((port + 1 + i))): ok (1 subfiles)$" \
		"$tmp/fsck.out" || fail "no ok line for iod $i: $(cat "$tmp/fsck.out")"
done
mkdir -p "$tmp/iod1/ab"
printf orphan >"$tmp/iod1/ab/00000000deadbeab.3"
"$clf" -c "$conf" fsck >"$tmp/fsck.out" 2>&1 && fail "an orphan not found"
grep -q "^iod 1: orphan subfile 3 of file 0xdeadbeab (6 bytes, on ${host_ip[1]}:" \
	"$tmp/fsck.out" || fail "orphan on iod 1: $(cat "$tmp/fsck.out")"
"$clf" -c "$conf" fsck --repair >"$tmp/fsck.out" 2>&1 ||
	fail "$(cat "$tmp/fsck.out")"
[ ! -e "$tmp/iod1/ab/00000000deadbeab.3" ] || fail "orphan not removed"
check_subfiles $SIZE2

step="unlink removes the subfiles from both hosts"
say
mc unlink "$FILE" || fail "client failed"
# metad removes them after the reply, from its durable queue.
for i in 0 1; do
	t=0
	while [ -e "$(subfile_path $i $i)" ] && [ "$t" -lt 100 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	[ ! -e "$(subfile_path $i $i)" ] ||
		fail "iod $i still holds $(subfile_path $i $i) 10 s after the unlink"
done

step="daemons still up"
for p in "${pids[@]}"; do
	[ "$p" = "$old" ] && continue
	ours "$p" || fail "daemon $p died"
done

echo "PASS: multi-host test ($SECONDS s)"
