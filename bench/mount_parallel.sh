#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mount_parallel.sh -- parallel readers and writers through the mount:
# N processes each dd a file of their own of M MiB (1 MiB requests,
# cache=none so that every byte goes to the iods) at once, with the
# client's iod_connections at 1 (every request to an iod on one
# connection, as before lanes) and at the default 4; prints the total
# MB/s of each.
#
# usage: bench/mount_parallel.sh [BUILD_DIR] [READERS] [MIB]
#        (defaults: build, 4, 64; BASE_PORT overrides the ports)

set -eu

build=$(cd "${1:-build}" && pwd)
n=${2:-4}
mib=${3:-64}
port=${BASE_PORT:-$((21000 + $$ % 20000))}
clf=$build/tools/clf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-mount-par.XXXXXX")
data=$tmp/data
mnt=$tmp/mnt
mkdir "$mnt"

cleanup() {
	umount -l "$mnt" 2>/dev/null || true
	"$clf" down --data "$data" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

now_ms() {
	date +%s%3N
}

# N dd at once (their command after the index): MB/s of all together.
parallel() {
	t0=$(now_ms)
	pids=""
	i=0
	while [ "$i" -lt "$n" ]; do
		sh -c "$1" sh "$i" 2>"$tmp/dd$i" &
		pids="$pids $!"
		i=$((i + 1))
	done
	for p in $pids; do
		wait "$p"
	done
	t1=$(now_ms)
	echo $((n * mib * 1048576 / 1000 / (t1 - t0)))
}

"$clf" up --data "$data" --base-port "$port" >/dev/null
for lanes in 1 4; do
	conf=$tmp/lanes$lanes.conf
	sed "s/^\[global\]$/[global]\niod_connections = $lanes/" \
		"$data/clf.conf" >"$conf"
	"$build/kernel/mount.clf" "$conf" "$mnt" -o cache=none
	w=$(parallel "dd if=/dev/zero of=$mnt/f\$1 bs=1M count=$mib \
		conv=fsync")
	r=$(parallel "dd if=$mnt/f\$1 of=/dev/null bs=1M")
	echo "iod_connections = $lanes: $n writers $w MB/s, $n readers $r MB/s" \
		"($mib MiB each, 1 MiB requests, cache=none)"
	rm -f "$mnt"/f*
	umount "$mnt"
done
