#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kclient_fsx.sh -- fsx (fsx.c) alone on the kernel client, for runs
# longer than check-kclient's (make fsx-kclient FSX_OPS=100000):
#
#   tests/guest/run-guest.sh tests/guest/kclient_fsx.sh BUILD OPS [SEED [MOUNT_OPTS]]
#
# insmod, an instance in the guest's /tmp, a mount through mount.clf,
# fsx with mmap and O_DIRECT (-Z), progress every 2000 operations, then
# no BUG, WARNING or Oops in dmesg.
set -eu

build=$1
ops=$2
seed=${3:-1}
tmp=/tmp/kc
data=$tmp/data
mnt=$tmp/mnt
log=$tmp/kclient.log
mkdir -p "$mnt"

fail() {
	echo "FAIL: $*"
	[ -s "$log" ] && { echo "--- daemon log"; tail -30 "$log"; }
	echo "--- dmesg"
	dmesg | tail -30
	exit 1
}

cp "$build/kernel/module/clf.ko" "$tmp/clf.ko"
insmod "$tmp/clf.ko" || fail "insmod"
"$build/tools/clf" up --data "$data" --base-port 17100 > "$tmp/up" 2>&1 ||
	{ cat "$tmp/up"; fail "clf up"; }
"$build/kernel/mount.clf" "$data/clf.conf" "$mnt" \
	-o "client=kernel,log=$log${4:+,$4}" || fail "mount.clf"
"$build/tests/guest/fsx" -Z -S "$seed" -N "$ops" -p 2000 "$mnt/fsx" ||
	fail "fsx"
if dmesg | grep -E "BUG|WARNING|Oops|general protection|Call Trace"; then
	fail "the kernel complained (above)"
fi
umount "$mnt" || fail "umount"
"$build/tools/clf" down --data "$data" > /dev/null 2>&1 || true
echo "PASS: kclient fsx, $ops operations, seed $seed"
