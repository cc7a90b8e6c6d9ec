#!/bin/sh
# PID 1 of the guest (tests/guest/run-guest.sh), in the host's root:
# the usual mounts, then the test; its status leaves through
# isa-debug-exit (0: pass, qemu exits 3; else 1).
script=$1
args=$(echo "$2" | tr ',' ' ')
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 work /mnt
ip link set lo up 2>/dev/null || ifconfig lo up
hostname clfguest 2>/dev/null
cd /tmp
# shellcheck disable=SC2086
sh "$script" $args < /dev/null
rc=$?
echo "guest: $script exited $rc"
sync
if [ "$rc" -eq 0 ]; then code='\001'; else code='\000'; fi
printf "$code" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
echo "guest: isa-debug-exit did not end qemu"
poweroff -f
