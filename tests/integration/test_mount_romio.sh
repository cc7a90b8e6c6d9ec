#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_mount_romio.sh -- the mount and MPI-IO on the same files, against
# a real instance on loopback: bytes written through the FUSE mount read
# back identically through MPI-IO ("clf:" names, libromio-clf.so) and the
# reverse, with use_romio_optimizations false and true, for an empty
# file, one of an odd size, one given a layout through the mount
# (user.clf.layout) and one under a directory's default layout, and the
# other way also into a file the mount gave a layout (which it keeps);
# and a file the mount has read, overwritten in place through MPI-IO,
# then read again through the mount (close-to-open: the new bytes); and
# plain paths on the mount, absolute and relative, with no CLF_CONFIG:
# clf's driver takes them (ROMIO_HINTS reaches it) on the mount's
# instance, and the mount and `clf cp` read back what it wrote.
# romio_xfer is the
# MPI side: 2 processes, blocks of 64 KiB + 13 bytes in turn, collective
# (64 KiB under the grid layout: with use_romio_optimizations=false, clf
# maps a view onto the layout over the least common multiple of their
# periods, and refuses, saying so, one of 2 x 65549 bytes onto a 1 MiB
# grid: too many pieces, include/clf.h, CLF_Mapping_create).
#
# usage: test_mount_romio.sh [BUILD_DIR]  (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when /dev/fuse, MPICH or the
# ROMIO source (hence libromio-clf.so) are missing.  Everything runs in a
# fresh temporary directory on ports of its own, under a time limit; a
# trap unmounts, stops the daemons and removes the directory.

set -eu

TIME_LIMIT=300	# seconds, the whole test
if [ -z "${CLF_MOUNT_ROMIO_TEST_TIMED:-}" ]; then
	CLF_MOUNT_ROMIO_TEST_TIMED=1
	export CLF_MOUNT_ROMIO_TEST_TIMED
	exec timeout -k 30 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

build=${1:-${CLF_BUILD_DIR:-build}}
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi
if ! command -v mpiexec >/dev/null 2>&1; then
	echo "SKIP: no mpiexec (package mpich)"
	exit 77
fi
if [ ! -f "$build/romio-clf/libromio-clf.so" ]; then
	if [ -f "$build/romio/UNAVAILABLE" ]; then
		echo "SKIP: $(cat "$build/romio/UNAVAILABLE")"
	else
		echo "SKIP: libromio-clf.so not built (CONFIG_CLF_ROMIO=n or no mpicc)"
	fi
	exit 77
fi
for b in metad/metad iod/iod tools/clf kernel/mount.clf \
	tests/integration/romio/romio_xfer; do
	if [ ! -x "$build/$b" ]; then
		echo "FAIL: $build/$b not built" >&2
		exit 1
	fi
done
if ! command -v python3 >/dev/null; then
	echo "FAIL: python3 not installed (make deps)" >&2
	exit 1
fi
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD \
	ROMIO_HINTS ROMIO_FSTYPE_FORCE || true

build=$(cd "$build" && pwd)
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf
xfer=$build/tests/integration/romio/romio_xfer

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-mount-romio.XXXXXX")
data=$tmp/data
conf=$data/clf.conf
mnt=$tmp/mnt
loc=$tmp/local
mkdir "$mnt" "$loc"

mounted() {
	awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
}

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if mounted "$mnt"; then
		umount -l "$mnt" 2>/dev/null || true
	fi
	if [ -f "$conf" ] && ! "$clf" down --data "$data" >"$tmp/down" 2>&1
	then
		echo "cleanup: clf down --data $data failed:" >&2
		cat "$tmp/down" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=""
fail() {
	echo "FAIL: $step: $*" >&2
	for f in "$tmp/out" "$tmp/mnt.log"; do
		if [ -s "$f" ]; then
			echo "--- $f" >&2
			tail -20 "$f" >&2
		fi
	done
	exit 1
}

# The view's block for file $1 (see above).
block() {
	case $1 in
	*grid) echo 65536 ;;
	*) echo $((65536 + 13)) ;;
	esac
}

# mpi CMD...: romio_xfer under mpiexec, 2 processes; fails the step.
mpi() {
	if ! mpiexec -n 2 "$xfer" "$@" >"$tmp/out" 2>&1 </dev/null; then
		fail "romio_xfer $*"
	fi
}

step="an instance on ports of our own, mounted"
eph_lo=32768
if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
	eph_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
fi
lo=10002
span=$((eph_lo - 10 - lo))
tries=0
while :; do
	base=$((lo + ($$ * 11 + 7001 + tries * 613) % span))
	if "$clf" up --data "$data" --base-port "$base" >"$tmp/out" 2>&1; then
		break
	fi
	"$clf" down --data "$data" >/dev/null 2>&1 || true
	if ! grep -q "address already in use" "$tmp/out" || [ "$tries" -ge 4 ]
	then
		fail "clf up"
	fi
	rm -rf "$data"
	tries=$((tries + 1))
done
CLF_CONFIG=$conf
export CLF_CONFIG
"$mountclf" "$conf" "$mnt" -o "log=$tmp/mnt.log" >"$tmp/out" 2>&1 ||
	fail "mount.clf"
mounted "$mnt" || fail "$mnt is not mounted"

# The files: local references, then the same bytes through the mount.
: >"$loc/empty"
head -c $((5 << 20)) /dev/urandom >"$loc/odd"
head -c 12345 /dev/urandom >>"$loc/odd"
head -c $((3 << 20)) /dev/urandom >"$loc/laid"
head -c 777777 /dev/urandom >"$loc/grid"

step="mount -> MPI-IO"
cp "$loc/empty" "$mnt/empty"
cp "$loc/odd" "$mnt/odd"
: >"$mnt/laid"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.clf.layout",
	b"cyclic:k=4k,p=3")' "$mnt/laid" || fail "setxattr user.clf.layout"
cp "$loc/laid" "$mnt/laid"
mkdir "$mnt/dir"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.clf.layout",
	b"grid:rows=1k,cols=1k,p=2x2,k=64x64")' "$mnt/dir" ||
	fail "setxattr on a directory"
cp "$loc/grid" "$mnt/dir/grid"
for hint in false true; do
	for f in empty odd laid dir/grid; do
		mpi check "$hint" "clf:/$f" "$loc/$(basename "$f")" \
			"$(block "$f")"
	done
done
echo "mount -> MPI-IO: 4 files, read back identically, both hint values"

step="MPI-IO -> mount"
for hint in false true; do
	for f in empty odd laid grid; do
		mpi write "$hint" "clf:/w-$hint-$f" "$loc/$f"
		cmp "$loc/$f" "$mnt/w-$hint-$f" ||
			fail "w-$hint-$f differs through the mount"
	done
	# Into a file the mount made with a layout of its own.
	: >"$mnt/o-$hint-laid"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.clf.layout",
		b"cyclic:k=4k,p=3")' "$mnt/o-$hint-laid" ||
		fail "setxattr user.clf.layout"
	mpi overwrite "$hint" "clf:/o-$hint-laid" "$loc/laid"
	cmp "$loc/laid" "$mnt/o-$hint-laid" ||
		fail "o-$hint-laid differs through the mount"
	l=$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1],
		"user.clf.layout").decode())' "$mnt/o-$hint-laid")
	[ "$l" = "rr:stripe=4k,count=3" ] || fail "o-$hint-laid has layout $l"
done
echo "MPI-IO -> mount: 5 files, read back identically, both hint values"

step="the mount reads, MPI-IO overwrites, the mount reads again"
head -c $((5 << 20)) /dev/urandom >"$loc/odd2"
head -c 12345 /dev/urandom >>"$loc/odd2"
cmp "$loc/odd" "$mnt/odd" || fail "odd differs before the rewrite"
mpi overwrite true clf:/odd "$loc/odd2"
cmp "$loc/odd2" "$mnt/odd" || fail "the mount still reads the old bytes"
mpi check false clf:/odd "$loc/odd2"
echo "overwritten through MPI-IO: the mount reads the new bytes"

step="plain paths on the mount take the clf driver"
# No CLF_CONFIG: the mount's source (the configuration) names the
# instance.  The driver, not ROMIO's ufs one through FUSE, opened the file
# when the hints file's use_romio_optimizations reached it.
# plain CMD...: romio_xfer on plain paths, the hints file of $hint.
plain() {
	env -u CLF_CONFIG ROMIO_HINTS="$tmp/hints-$hint" \
		mpiexec -n 2 "$xfer" "$@" >"$tmp/out" 2>&1 </dev/null ||
		fail "romio_xfer $* (plain path, no CLF_CONFIG)"
}
mkdir "$mnt/plain"
for hint in false true; do
	printf 'use_romio_optimizations %s\n' "$hint" >"$tmp/hints-$hint"
	plain hint "$hint" "$mnt/plain/probe-$hint"
	plain write "$hint" "$mnt/plain/w-$hint" "$loc/odd"
	cmp "$loc/odd" "$mnt/plain/w-$hint" ||
		fail "plain/w-$hint differs through the mount"
	"$clf" cp -q "clf:/plain/w-$hint" "$tmp/back" >"$tmp/out" 2>&1 ||
		fail "clf cp clf:/plain/w-$hint"
	cmp "$loc/odd" "$tmp/back" || fail "plain/w-$hint differs through clf cp"
	rm -f "$tmp/back"
	# Relative to a working directory on the mount, and a file the
	# mount wrote.
	(cd "$mnt/plain" && plain check "$hint" "w-$hint" "$loc/odd")
	(cd "$mnt" && plain check "$hint" "dir/grid" "$loc/grid" 65536)
done
echo "plain paths on the mount: clf's driver, the mount's instance, the same bytes"

echo "PASS: mount and MPI-IO"
