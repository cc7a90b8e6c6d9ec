#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_remote_names.sh -- clf://HOST:PORT/path names from a client that
# has no configuration file.  The instance (metad and two iods) runs in
# a network namespace of its own, reached over a veth pair; the client
# side runs in the root namespace with no $CLF_CONFIG, no ./clf-data and
# no /etc/clf (CLF_TEST_SYSCONFDIR points at an empty directory), and the
# instance's secret copied to a file of its own ($CLF_SECRET_FILE, as a
# remote user would be given it):
#
#     root ns: clients  A.1 on vr ------------ A.2 on vn  ns: metad, iods
#
#  1. native API (remote_client): CLF_init("clf://A.2:PORT") learns the
#     iods from metad; mkdir, create, write, stat, read back, rename,
#     unlink, rmdir on clf:// names; another instance's name is EXDEV;
#     a namespace over 3 metads (a second instance, its metads named by
#     INSTANCE): directories land on all 3, a file renamed across them
#     reads back (remote_client --metads 3);
#  2. the clf command: mkdir, cp both ways, ls, stat, getlayout, rm on
#     clf:// names, bytes compared;
#     clf stage-in and stage-out -j 3 of a tree, bytes and a layout that
#     goes out as user.clf.layout and comes back;
#  3. the mount: mount.clf clf://A.2:PORT/ DIR: a file written natively
#     reads back through it, one written through it reads back with clf
#     cp; `clf iod add` in the namespace, and a file the mount makes then
#     is striped over the new iod 2 (skipped without /dev/fuse);
#  4. MPI-IO: mpiexec -n 2 romio_xfer on "clf://A.2:PORT/..." names (the
#     clf driver by prefix): written collectively, checked through MPI-IO
#     and clf cp (skipped without MPICH or libromio-clf.so);
#  5. MPI-IO through a local cache (romio_cache, hint clf_cache=DIR):
#     written back at the close and not before, read back by a second
#     reader and through the cache, two cached writers: the last close
#     wins;
#  6. nonblocking MPI-IO (romio_async) with iods that delay every reply by
#     DELAY_MS: MPI_File_iwrite_at returns at once and overlaps with the
#     computation that follows; iread_at, iread, iwrite, Waitall, bytes;
#  7. with the same iods, sequential MPI_File_read_at of a read-only file
#     read ahead (romio_ahead, hint clf_read_ahead): 24 reads in less
#     than 3/4 of their delays, and windows dropped in atomic mode, so
#     another process's writes are read then, and after a reopen.
#
# usage: test_remote_names.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when namespaces cannot be made
# here.  A trap stops the daemons, unmounts, deletes the namespace, the
# link and the temporary directory whatever happens.

set -eu

TIME_LIMIT=240		# seconds, the whole test
DELAY_MS=400		# the slow iods' delay of every reply (romio_async)
if [ -z "${CLF_REMOTE_NAMES_TIMED:-}" ]; then
	export CLF_REMOTE_NAMES_TIMED=1
	exec timeout -k 10 "$TIME_LIMIT" bash "$0" "$@"
fi

. "$(dirname "$0")/netns_lib.sh"
netns_find_build "$@"
mountclf=$build/kernel/mount.clf
unset CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT CLF_SECRET_FILE ROMIO_HINTS \
	ROMIO_FSTYPE_FORCE || true

ns=clfrn-$$
vr=clfrn$$r
vn=clfrn$$n
made_ns=
made_link=
tmp=
mnt=

cleanup() {
	local rc=$? l

	trap - EXIT INT TERM HUP
	set +e
	if [ -n "$mnt" ] && awk -v m="$mnt" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
	then
		umount -l "$mnt" 2>/dev/null
	fi
	if [ -n "$tmp" ] && [ -f "$tmp/srv/clf.conf" ]; then
		ip netns exec "$ns" "$clf" down -c "$tmp/srv/clf.conf" >/dev/null 2>&1
	fi
	if [ -n "$tmp" ] && [ -f "$tmp/srv3/clf.conf" ]; then
		ip netns exec "$ns" "$clf" down -c "$tmp/srv3/clf.conf" >/dev/null 2>&1
	fi
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "$tmp" ]; then
		for l in "$tmp"/srv/*.log "$tmp"/srv/*/*.log "$tmp"/srv3/*/*.log \
			"$tmp/out" "$tmp/mnt.log"; do
			[ -s "$l" ] || continue
			echo "--- $l (last lines)" >&2
			tail -n 15 "$l" >&2
		done
	fi
	[ -n "$made_link" ] && ip link del "$vr" 2>/dev/null
	[ -n "$made_ns" ] && ip netns del "$ns" 2>/dev/null
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

netns_add_first "$ns"
made_ns=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-remote-names.XXXXXX")

# A /30 of 10.214.0.0/16 that no address or route of this host touches.
net=
for i in $(seq 0 199); do
	n=$(( ($$ + i * 37) % 200 + 20 ))
	if ! ip -4 addr show | grep -q "inet 10\.214\.$n\." &&
	   ! ip -4 route show match "10.214.$n.1" | grep -qv '^default'
	then
		net=10.214.$n
		break
	fi
done
[ -n "$net" ] || fail "no free 10.214.x.0/24 here"
ip link add "$vr" type veth peer name "$vn" netns "$ns" ||
	fail "cannot create veth $vr"
made_link=1
ip addr add "$net.1/30" dev "$vr"
ip link set "$vr" up
ip -n "$ns" link set lo up
ip -n "$ns" addr add "$net.2/30" dev "$vn"
ip -n "$ns" link set "$vn" up

# The namespace has its ports to itself.
port=$(( 20000 + ($$ * 37) % 20000 ))
mkdir -p "$tmp/srv" "$tmp/cl" "$tmp/etc" "$tmp/loc"
step="clf up in the namespace"
netns_instance_up "$ns" "$net.2" "$port" "$tmp/srv" "stripe_size = 64k"
netns_remote_user "$tmp/srv/secret" "$tmp/cl" "$tmp/etc"
url=clf://$net.2:$port

step="native API on clf:// names"
"$client" "$url" 1000003 >"$tmp/out" 2>&1 || fail "remote_client"
cat "$tmp/out"

step="a namespace over 3 metads on clf:// names"
# The same secret, ports of their own: 3 metads, one iod.
p3=$((port + 10))
mkdir -p "$tmp/srv3"
{
	echo "[global]"
	echo "secret_file = $tmp/srv/secret"
	echo "auth = secret"
	for i in 0 1 2; do
		echo "metad = $net.2:$((p3 + i)):$tmp/srv3/meta$i"
	done
	echo "iod = $net.2:$((p3 + 3)):$tmp/srv3/iod0"
} >"$tmp/srv3/clf.conf"
chmod 600 "$tmp/srv3/clf.conf"
ip netns exec "$ns" "$clf" up -c "$tmp/srv3/clf.conf" >"$tmp/out" 2>&1 ||
	fail "clf up (3 metads)"
"$client" "clf://$net.2:$p3" 200003 --metads 3 >"$tmp/out" 2>&1 ||
	fail "remote_client --metads 3"
cat "$tmp/out"
ip netns exec "$ns" "$clf" down -c "$tmp/srv3/clf.conf" >"$tmp/out" 2>&1 ||
	fail "clf down (3 metads)"
rm -f "$tmp/srv3/clf.conf"

step="a client without the secret is refused"
if env -u CLF_SECRET_FILE "$clf" ls "$url/" >"$tmp/out" 2>&1; then
	fail "clf ls without CLF_SECRET_FILE succeeded"
fi

step="clf on clf:// names"
head -c 777777 /dev/urandom >"$tmp/loc/a"
"$clf" mkdir "$url/cli" >"$tmp/out" 2>&1 || fail "clf mkdir"
"$clf" cp -q "$tmp/loc/a" "$url/cli/a" >"$tmp/out" 2>&1 || fail "clf cp to"
"$clf" ls "$url/cli" >"$tmp/out" 2>&1 || fail "clf ls"
grep -qx "a" "$tmp/out" || fail "clf ls does not list a: $(cat "$tmp/out")"
"$clf" stat "$url/cli/a" >"$tmp/out" 2>&1 || fail "clf stat"
grep -q "Size: 777777" "$tmp/out" || fail "clf stat: $(cat "$tmp/out")"
"$clf" getlayout "$url/cli/a" >"$tmp/out" 2>&1 || fail "clf getlayout"
grep -q "$net.2:$((port + 2))" "$tmp/out" ||
	fail "getlayout names no iod 1 at its address: $(cat "$tmp/out")"
"$clf" cp -q "$url/cli/a" "$tmp/loc/a.back" >"$tmp/out" 2>&1 ||
	fail "clf cp from"
cmp "$tmp/loc/a" "$tmp/loc/a.back" || fail "the copy back differs"
"$clf" rm "$url/cli/a" >"$tmp/out" 2>&1 || fail "clf rm"
if "$clf" stat "$url/cli/a" >/dev/null 2>&1; then
	fail "clf rm left the file"
fi
echo "clf mkdir, cp, ls, stat, getlayout, rm on $url: the same bytes"

step="clf stage-in and stage-out: a tree in parallel, layouts kept"
mkdir -p "$tmp/loc/tree/d/e"
for i in 1 2 3 4 5 6; do
	head -c $((i * 70001)) /dev/urandom >"$tmp/loc/tree/f$i"
done
head -c 123457 /dev/urandom >"$tmp/loc/tree/d/e/deep"
: >"$tmp/loc/tree/d/empty"
"$clf" stage-in -q -j 3 "$tmp/loc/tree" "$url/" >"$tmp/out" 2>&1 ||
	fail "stage-in"
"$clf" cp -q --pattern 'cyclic:k=4k,p=2' "$tmp/loc/tree/f2" "$url/tree/d/laid" \
	>"$tmp/out" 2>&1 || fail "clf cp --pattern"
cp "$tmp/loc/tree/f2" "$tmp/loc/tree/d/laid"
"$clf" stage-out -j 3 "$url/tree" "$tmp/loc/out" >"$tmp/out" 2>&1 ||
	fail "stage-out"
[ "$(grep -c ' -> ' "$tmp/out")" = 9 ] || fail "stage-out did not say 9 files: $(cat "$tmp/out")"
diff -r "$tmp/loc/tree" "$tmp/loc/out" || fail "the tree staged out differs"
if python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.t", b"1")' \
	"$tmp/loc/out/f1" 2>/dev/null; then
	"$clf" stage-in -q "$tmp/loc/out" "$url/again" >"$tmp/out" 2>&1 ||
		fail "stage-in of the staged-out tree"
	"$clf" getlayout "$url/again/d/laid" >"$tmp/out" 2>&1 || fail "getlayout"
	grep -q "^layout rr:stripe=4k,count=2" "$tmp/out" ||
		fail "the layout did not come back: $(head -1 "$tmp/out")"
	echo "clf stage-out, stage-in -j 3: 9 files, the same bytes, the layout back"
else
	echo "clf stage-in, stage-out -j 3: 9 files, the same bytes (no user xattrs here: layouts not checked)"
fi
if "$clf" stage-in "$url/tree" "$tmp/loc/x" >/dev/null 2>&1; then
	fail "stage-in from clf was taken"
fi

step="the mount of clf://HOST:PORT/"
if [ -c /dev/fuse ] && [ -x "$mountclf" ]; then
	mnt=$tmp/mnt
	mkdir "$mnt"
	"$client" "$url" 300001 from-native >"$tmp/out" 2>&1 ||
		fail "remote_client write"
	"$mountclf" "$url/" "$mnt" -o "secret_file=$tmp/cl/secret,log=$tmp/mnt.log" \
		>"$tmp/out" 2>&1 || fail "mount.clf $url/"
	python3 - "$mnt/from-native" <<-'EOF' || fail "the mount reads other bytes"
	import sys
	data = open(sys.argv[1], "rb").read()
	ok = len(data) == 300001 and all(
	    data[i] == (i * 131 + (i >> 9) + 7) & 0xff for i in range(len(data)))
	sys.exit(0 if ok else 1)
	EOF
	head -c 1234567 /dev/urandom >"$tmp/loc/m"
	cp "$tmp/loc/m" "$mnt/from-mount" || fail "cp into the mount"
	"$clf" cp -q "$url/from-mount" "$tmp/loc/m.back" >"$tmp/out" 2>&1 ||
		fail "clf cp of the mount's file"
	cmp "$tmp/loc/m" "$tmp/loc/m.back" || fail "the mount's file differs"
	grep -q " $mnt fuse.clf " /proc/mounts || fail "no fuse.clf mount"
	echo "mount.clf $url/: native bytes read, its own written"
	# An iod joins while the mount runs: the mount, which learnt the
	# iods from metad, asks metad again when a layout names iod 2.
	ip netns exec "$ns" "$clf" iod add -c "$tmp/srv/clf.conf" \
		>"$tmp/out" 2>&1 || fail "clf iod add: $(cat "$tmp/out")"
	grep -q "^iod 2 added" "$tmp/out" || fail "no iod 2: $(cat "$tmp/out")"
	cp "$tmp/loc/m" "$mnt/after-add" || fail "cp into the mount after the add"
	"$clf" getlayout "$url/after-add" >"$tmp/out" 2>&1 ||
		fail "getlayout: $(cat "$tmp/out")"
	grep -q "$net.2:$((port + 3))" "$tmp/out" ||
		fail "the file made after the add is not on iod 2: $(cat "$tmp/out")"
	cmp "$tmp/loc/m" "$mnt/after-add" || fail "the mount reads after-add back wrong"
	echo "mount.clf $url/: a file made after clf iod add is striped over the new iod"
else
	echo "mount part skipped: no /dev/fuse or mount.clf"
fi

step="MPI-IO on clf:// names"
if [ -x "$xfer" ] && command -v mpiexec >/dev/null 2>&1; then
	head -c $((3 << 20)) /dev/urandom >"$tmp/loc/x"
	head -c 4321 /dev/urandom >>"$tmp/loc/x"
	for hint in false true; do
		mpiexec -n 2 "$xfer" write "$hint" "$url/mpi-$hint" "$tmp/loc/x" \
			>"$tmp/out" 2>&1 </dev/null || fail "romio_xfer write $hint"
		mpiexec -n 2 "$xfer" check "$hint" "$url/mpi-$hint" "$tmp/loc/x" \
			>"$tmp/out" 2>&1 </dev/null || fail "romio_xfer check $hint"
		"$clf" cp -q "$url/mpi-$hint" "$tmp/loc/x.back" >"$tmp/out" 2>&1 ||
			fail "clf cp of the MPI file"
		cmp "$tmp/loc/x" "$tmp/loc/x.back" || fail "mpi-$hint differs"
	done
	echo "MPI-IO (2 processes) on $url/...: written and read, both hint values"
else
	echo "MPI-IO part skipped: no mpiexec or romio_xfer"
fi

step="MPI-IO through a local cache (clf_cache)"
cache=$build/tests/integration/romio/romio_cache
if [ -x "$cache" ] && command -v mpiexec >/dev/null 2>&1; then
	mkdir -p "$tmp/cache"
	mpiexec -n 2 "$cache" "$url/cached" "$tmp/cache" >"$tmp/out" 2>&1 </dev/null ||
		{ cat "$tmp/out" >&2; fail "romio_cache"; }
	cat "$tmp/out"
else
	echo "cache part skipped: no mpiexec or romio_cache"
fi

step="nonblocking MPI-IO overlaps with computation"
async=$build/tests/integration/romio/romio_async
if [ -x "$async" ] && command -v mpiexec >/dev/null 2>&1; then
	# The far end slowed down: every iod reply waits DELAY_MS.
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	ip netns exec "$ns" "$clf" down -c "$tmp/srv/clf.conf" >"$tmp/out" 2>&1 ||
		fail "clf down"
	ip netns exec "$ns" env CLF_TEST_IOD_DELAY_MS=$DELAY_MS \
		"$clf" up -c "$tmp/srv/clf.conf" >"$tmp/out" 2>&1 || fail "clf up (slow iods)"
	mpiexec -n 2 "$async" "$url/async" "$DELAY_MS" >"$tmp/out" 2>&1 </dev/null ||
		fail "romio_async"
	cat "$tmp/out"
else
	echo "nonblocking part skipped: no mpiexec or romio_async"
fi

step="sequential MPI-IO reads read ahead, dropped in atomic mode"
ahead=$build/tests/integration/romio/romio_ahead
if [ -x "$ahead" ] && [ -x "$async" ] && command -v mpiexec >/dev/null 2>&1; then
	# The iods still delay every reply by DELAY_MS.
	mpiexec -n 2 "$ahead" "$url/ahead" "$DELAY_MS" >"$tmp/out" 2>&1 </dev/null ||
		{ cat "$tmp/out" >&2; fail "romio_ahead"; }
	cat "$tmp/out"
else
	echo "read-ahead part skipped: no mpiexec or romio_ahead"
fi

echo "PASS: clf:// names without a configuration file"
