#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_forward.sh -- clf forward: clients that cannot reach the instance
# reach it through a forwarder.  Three network namespaces, the forwarder
# between the other two and routing nothing (ip_forward off):
#
#   ns cl: clients  A.1 ---- A.2  ns fw: clf forward  A.5 ---- A.6  ns sv: metad, iods
#
#  1. from cl, clf://A.6:PORT is out of reach (no route);
#  2. with CLF_FORWARDER=A.2:FPORT the clf command copies a file in and
#     out, the native API (remote_client) works on clf:// names, and
#     MPI-IO (mpiexec -n 2 romio_xfer) writes and reads a file: bytes
#     compared;
#  3. collective writes and reads of 4 clients (forward_coll) through the
#     forwarder leave the bytes the same program leaves without it (run
#     in sv), and each iod receives one message per collective operation
#     (VIEW_MERGED, counted by the iods' test hook CLF_TEST_IOD_LOG_COLL),
#     not one per client;
#  4. the forwarder relays only to the instance's daemons: a clf:// name
#     of another port is refused, saying so.
#
# usage: test_forward.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when namespaces cannot be made
# here.  A trap stops the daemons and the forwarder and deletes the
# namespaces (their links go with them) and the temporary directory.

set -eu

TIME_LIMIT=180
if [ -z "${CLF_FORWARD_TIMED:-}" ]; then
	export CLF_FORWARD_TIMED=1
	exec timeout -k 10 "$TIME_LIMIT" bash "$0" "$@"
fi

. "$(dirname "$0")/netns_lib.sh"
netns_find_build "$@"
coll=$build/tests/integration/forward_coll
[ -x "$coll" ] || { echo "FAIL: $coll not built" >&2; exit 1; }
unset CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT CLF_SECRET_FILE CLF_FORWARDER \
	ROMIO_HINTS ROMIO_FSTYPE_FORCE || true

cl=clffw-c-$$
fw=clffw-f-$$
sv=clffw-s-$$
made=()
tmp=
fwd_pid=

cleanup() {
	local rc=$? l n

	trap - EXIT INT TERM HUP
	set +e
	[ -n "$fwd_pid" ] && kill "$fwd_pid" 2>/dev/null
	if [ -n "$tmp" ] && [ -f "$tmp/srv/clf.conf" ]; then
		ip netns exec "$sv" "$clf" down -c "$tmp/srv/clf.conf" >/dev/null 2>&1
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "$tmp" ]; then
		for l in "$tmp"/srv/*/*.log "$tmp/out" "$tmp/fwd.log"; do
			[ -s "$l" ] || continue
			echo "--- $l (last lines)" >&2
			tail -n 15 "$l" >&2
		done
	fi
	for n in "${made[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	[ -n "$tmp" ] && rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=setup
fail() {
	echo "FAIL: $step: $*" >&2
	exit 1
}

netns_add_first "$cl"
made+=("$cl")
ip netns add "$fw" || fail "ip netns add $fw"
made+=("$fw")
ip netns add "$sv" || fail "ip netns add $sv"
made+=("$sv")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-forward.XXXXXX")

net=10.216.$(( $$ % 200 + 20 ))
ip -n "$cl" link add fwc$$ type veth peer name fwf$$ netns "$fw" ||
	fail "veth cl-fw"
ip -n "$fw" link add fwg$$ type veth peer name fws$$ netns "$sv" ||
	fail "veth fw-sv"
ip -n "$cl" addr add "$net.1/30" dev fwc$$
ip -n "$fw" addr add "$net.2/30" dev fwf$$
ip -n "$fw" addr add "$net.5/30" dev fwg$$
ip -n "$sv" addr add "$net.6/30" dev fws$$
for l in "$cl fwc$$" "$fw fwf$$" "$fw fwg$$" "$sv fws$$"; do
	set -- $l
	ip -n "$1" link set lo up
	ip -n "$1" link set "$2" up
done
# The client side may try the server's network: through fw, which must
# not route it.
ip -n "$cl" route add "$net.4/30" via "$net.2"
ip netns exec "$fw" sh -c 'echo 0 > /proc/sys/net/ipv4/ip_forward'

port=7000
mkdir -p "$tmp/srv" "$tmp/cl" "$tmp/loc"
# Each iod logs every message that carries collective requests.
export CLF_TEST_IOD_LOG_COLL=1
# 6 s: room for the forwarder's wait below (a quarter of it at most).
netns_instance_up "$sv" "$net.6" "$port" "$tmp/srv" "timeout_ms = 6000" \
	"recovery_grace_s = 0"
netns_remote_user "$tmp/srv/secret" "$tmp/cl" "$tmp/cl"
url=clf://$net.6:$port

step="the forwarder starts"
# All the collectives' clients are behind it: a group goes as soon as it
# holds every participant, and the wait only covers a loaded machine;
# MPI-IO's bigger pieces go as they come, and the others of their
# operation with them.
ip netns exec "$fw" "$clf" forward --listen "$net.2:7100" \
	--merge-wait 1500 "$url" >"$tmp/fwd.log" 2>&1 &
fwd_pid=$!
for _ in $(seq 100); do
	grep -qs "^clf forward:" "$tmp/fwd.log" && break
	kill -0 "$fwd_pid" 2>/dev/null || fail "clf forward exited: $(cat "$tmp/fwd.log")"
	sleep 0.05
done
grep -q "(2 iods); merging collective requests per iod" "$tmp/fwd.log" ||
	fail "clf forward says: $(cat "$tmp/fwd.log")"

in_cl() {
	ip netns exec "$cl" "$@"
}

step="without the forwarder the instance is out of reach"
if in_cl "$clf" ls "$url/" >"$tmp/out" 2>&1; then
	fail "clf ls reached $url directly"
fi
echo "direct: $(head -1 "$tmp/out")"

export CLF_FORWARDER=$net.2:7100
step="clf cp through the forwarder"
head -c 3000001 /dev/urandom >"$tmp/loc/a"
in_cl "$clf" cp -q "$tmp/loc/a" "$url/a" >"$tmp/out" 2>&1 || fail "clf cp to"
in_cl "$clf" cp -q "$url/a" "$tmp/loc/a.back" >"$tmp/out" 2>&1 || fail "clf cp from"
cmp "$tmp/loc/a" "$tmp/loc/a.back" || fail "the copy back differs"
echo "clf cp through the forwarder: 3000001 bytes both ways"

step="native API through the forwarder"
in_cl "$client" "$url" 500001 >"$tmp/out" 2>&1 || fail "remote_client"
cat "$tmp/out"

step="MPI-IO through the forwarder"
if [ -x "$xfer" ] && command -v mpiexec >/dev/null 2>&1; then
	in_cl env UCX_NET_DEVICES=lo mpiexec -n 2 "$xfer" write false "$url/mpi" \
		"$tmp/loc/a" >"$tmp/out" 2>&1 </dev/null || fail "romio_xfer write"
	in_cl env UCX_NET_DEVICES=lo mpiexec -n 2 "$xfer" check false "$url/mpi" \
		"$tmp/loc/a" >"$tmp/out" 2>&1 </dev/null || fail "romio_xfer check"
	echo "MPI-IO (2 processes) through the forwarder: written and read back"
else
	echo "MPI-IO part skipped: no mpiexec or romio_xfer"
fi

step="collectives of 4 clients through the forwarder: one message per iod"
# Lines of the collective hook in the iods' logs (each log apart, so
# that the lines of one run are the tail of each).
coll_lines() {
	local l

	for l in "$tmp"/srv/iod*/iod.log; do
		grep "test hook: .* collective request" "$l" | tail -n +$((${1:-0} + 1))
	done
}
(cd "$tmp/srv" && ip netns exec "$sv" env -u CLF_FORWARDER \
	CLF_SECRET_FILE="$tmp/srv/secret" "$coll" "$url" 4 2 4096 coll.direct \
	>"$tmp/out" 2>&1) || fail "forward_coll without the forwarder: $(cat "$tmp/out")"
grep -q "VIEW_WRITE with 1 collective request" "$tmp"/srv/iod0/iod.log ||
	fail "the iods' collective hook (CLF_TEST_IOD_LOG_COLL) logs nothing"
before=$(grep -c "test hook: .* collective request" "$tmp"/srv/iod0/iod.log || true)
before1=$(grep -c "test hook: .* collective request" "$tmp"/srv/iod1/iod.log || true)
[ "$before" = "$before1" ] || fail "the iods logged $before and $before1 collective messages without the forwarder"
in_cl "$coll" "$url" 4 2 4096 coll.fwd >"$tmp/out" 2>&1 ||
	fail "forward_coll through the forwarder: $(cat "$tmp/out")"
cat "$tmp/out"
coll_lines "$before" >"$tmp/coll.lines"
# 2 rounds of a write and a read: 4 operations, at each of the 2 iods.
got=$(wc -l <"$tmp/coll.lines")
merged=$(grep -c "VIEW_MERGED with 4 collective requests" "$tmp/coll.lines" || true)
[ "$got" = 8 ] && [ "$merged" = 8 ] ||
	fail "the iods received $got messages with collective requests ($merged VIEW_MERGED of 4), want 8 of 4 (without the forwarder: $before per iod): $(sed 's/.*test hook: //' "$tmp/coll.lines" | sort | uniq -c)"
in_cl "$clf" cp -q "$url/coll.direct" "$tmp/loc/coll.direct" >"$tmp/out" 2>&1 ||
	fail "clf cp of coll.direct"
in_cl "$clf" cp -q "$url/coll.fwd" "$tmp/loc/coll.fwd" >"$tmp/out" 2>&1 ||
	fail "clf cp of coll.fwd"
cmp "$tmp/loc/coll.direct" "$tmp/loc/coll.fwd" ||
	fail "the collectives left other bytes through the forwarder"
echo "collectives of 4 clients: 8 messages at the iods (one per operation and iod), bytes as without the forwarder"

step="the forwarder relays to the instance's daemons only"
if in_cl "$clf" -c "clf://$net.6:$((port + 50))" ls / >"$tmp/out" 2>&1; then
	fail "it relayed to port $((port + 50))"
fi
grep -q "not a daemon of this forwarder's instance" "$tmp/out" ||
	fail "the refusal does not say why: $(cat "$tmp/out")"
echo "refused: $(head -1 "$tmp/out")"

echo "PASS: clf forward"
