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

. "$(dirname "$0")/adhoc_lib.sh"
adhoc_find_build "$@"
unset CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT CLF_SECRET_FILE CLF_ADHOC_HOST || true

tag=$$
br=clfahb$tag
net=10.$((100 + tag % 100)).$((tag / 100 % 250)).
tmp=$(mktemp -d /tmp/clf-adhoc-hosts.XXXXXX)
data=$tmp/inst
launcher=
made=

cleanup() {
	trap - EXIT INT TERM
	set +e
	adhoc_kill_all
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

on() {
	local h=$1
	shift
	ip netns exec "clfah$tag-$h" "$@"
}

launch() {
	exec mpiexec -launcher ssh -launcher-exec "$tmp/nsssh" \
		-localhost "${net}254" -hosts h1,h2 -n 3 \
		"$clf" adhoc start --data "$data" --base-port "$port" \
		--stage-out "clf:/out=$tmp/staged"
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
stop_staged
gone

step="SIGTERM to the launcher"
start
[ -n "$(daemons)" ] || fail "no daemons"
kill -TERM "$launcher"
wait "$launcher" 2>/dev/null || true
launcher=
gone

echo "PASS: clf adhoc over two namespace hosts (hydra, stage-out, SIGTERM)"
