#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_adhoc_hosts.sh -- clf adhoc over hosts: two network namespaces on a
# bridge play two hosts, and hydra places the ranks in them through a
# launcher that stands in for ssh (ip netns exec HOST):
#
#   root ns: mpiexec, bridge B.254     ns h1: B.1     ns h2: B.2
#
# mpiexec -n 3 -hosts h1,h2 clf adhoc start: rank 0 (h1) runs metad and
# an iod, rank 1 (h2) an iod, rank 2 (h1 again) none, one iod per host.
#
#  1. a client step on h1 writes a file striped over both hosts' iods; a
#     step on h2 reads it back, bytes compared;
#  2. `clf adhoc stop` stages the file out (same bytes), the step ends
#     with status 0, and no daemon is left;
#  3. started again, SIGTERM to mpiexec stops it and leaves no daemon.
#
# usage: test_adhoc_hosts.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when namespaces cannot be made
# here or there is no mpiexec.

set -eu

if [ -z "${CLF_ADHOC_HOSTS_TIMED:-}" ]; then
	export CLF_ADHOC_HOSTS_TIMED=1
	exec timeout -k 10 180 bash "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
if ! build=$(cd "$build" 2>/dev/null && pwd); then
	echo "SKIP: no build directory"
	exit 77
fi
clf=$build/tools/clf
for b in "$build/metad/metad" "$build/iod/iod" "$clf"; do
	[ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
done
command -v mpiexec >/dev/null || { echo "SKIP: no mpiexec"; exit 77; }
unset CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT CLF_SECRET_FILE CLF_ADHOC_HOST || true

tag=$$
br=clfahb$tag
net=10.$((100 + tag % 100)).$((tag / 100 % 250)).
tmp=$(mktemp -d /tmp/clf-adhoc-hosts.XXXXXX)
data=$tmp/inst
launcher=
made=

daemons() {
	pgrep -f -- "-c $data/clf.conf" || true
}

cleanup() {
	trap - EXIT INT TERM
	set +e
	[ -n "$launcher" ] && kill -KILL "$launcher" 2>/dev/null
	for p in $(daemons); do kill -KILL "$p"; done
	for h in $made; do ip netns del "clfah$tag-$h"; done
	ip link del "$br" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

if ! ip link add "$br" type bridge 2>/dev/null; then
	echo "SKIP: cannot make a bridge (not root?)"
	exit 77
fi
ip addr add "${net}254/24" dev "$br"
ip link set "$br" up
for i in 1 2; do
	ns=clfah$tag-h$i
	ip netns add "$ns"
	made="$made h$i"
	ip link add "clfah$tag$i" type veth peer name eth0 netns "$ns"
	ip link set "clfah$tag$i" master "$br" up
	ip -n "$ns" addr add "$net$i/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
done

# hydra's ssh: [-x] HOST COMMAND...: COMMAND in HOST's namespace, its
# address the one its ranks publish.
cat >"$tmp/nsssh" <<EOF
#!/bin/sh
[ "\$1" = -x ] && shift
h=\$1
shift
exec ip netns exec "clfah$tag-\$h" env CLF_ADHOC_HOST="$net\${h#h}" sh -c "\$*"
EOF
chmod +x "$tmp/nsssh"

step=
fail() {
	echo "FAIL: $step: $*" >&2
	for f in "$tmp"/start*.log "$data"/meta/*.log "$data"/iod*/*.log; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -15 "$f" >&2
	done
	exit 1
}

on() {
	local h=$1
	shift
	ip netns exec "clfah$tag-$h" "$@"
}

start() {
	local try
	for try in 1 2 3; do
		port=$((21000 + RANDOM % 8000))
		mpiexec -launcher ssh -launcher-exec "$tmp/nsssh" \
			-localhost "${net}254" -hosts h1,h2 -n 3 \
			"$clf" adhoc start --data "$data" --base-port "$port" \
			--stage-out "clf:/out=$tmp/staged" \
			>"$tmp/start$try.log" 2>&1 &
		launcher=$!
		if "$clf" adhoc wait --data "$data" --timeout 90 \
			>"$tmp/wait.out" 2>&1; then
			return 0
		fi
		grep -q "in use" "$tmp/start$try.log" || break
		wait "$launcher" || true
		launcher=
	done
	fail "the instance did not come up: $(cat "$tmp/wait.out")"
}

gone() {
	local i
	for i in $(seq 200); do
		[ -z "$(daemons)" ] && return 0
		sleep 0.1
	done
	fail "daemons left: $(daemons | tr '\n' ' ')"
}

step="start over two hosts"
start
export CLF_CONFIG=$data/clf.conf
grep -q "rank 1 runs iod 1 (${net}2:" "$tmp"/start*.log ||
	fail "iod 1 is not on h2"
[ "$(daemons | wc -l)" = 3 ] || fail "want metad and 2 iods: $(daemons)"

step="client steps on h1 and h2"
head -c 300000 /dev/urandom >"$tmp/in"
on h1 "$clf" mkdir clf:/out >/dev/null || fail "mkdir"
on h1 "$clf" cp "$tmp/in" clf:/out/f >/dev/null || fail "cp in on h1"
on h1 "$clf" getlayout clf:/out/f >"$tmp/layout" || fail "getlayout"
grep -q "${net}2:" "$tmp/layout" || fail "nothing on h2: $(cat "$tmp/layout")"
on h2 "$clf" cp clf:/out/f "$tmp/back" >/dev/null || fail "cp out on h2"
cmp "$tmp/in" "$tmp/back" || fail "read back differs"

step="stop with stage-out"
"$clf" adhoc stop --data "$data" --timeout 60 || fail "stop failed"
rc=0
wait "$launcher" 2>/dev/null || rc=$?
launcher=
[ "$rc" = 0 ] || fail "the step ended with status $rc"
cmp "$tmp/in" "$tmp/staged/out/f" || fail "staged-out file differs"
gone

step="SIGTERM to the launcher"
start
[ -n "$(daemons)" ] || fail "no daemons"
kill -TERM "$launcher"
wait "$launcher" 2>/dev/null || true
launcher=
gone

echo "PASS: clf adhoc over two namespace hosts (hydra, stage-out, SIGTERM)"
