#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kclient_vs_fuse.sh -- the kernel client (clf.ko + mount.clf's upcall
# daemon) against the FUSE client on the same instance, in the same
# qemu guest run (make bench-kclient runs it through
# tests/guest/run-guest.sh):
#
#   tests/guest/run-guest.sh bench/kclient_vs_fuse.sh BUILD_DIR [MIB] [OPS] [FILES]
#
# Sequential 1 MiB writes (with fsync) and reads (page cache dropped
# first), random 4 KiB writes (fsync at the end) and reads (cache
# dropped), mmap reads, and create / stat / unlink rates.  Prints one
# line per figure: kernel, FUSE, and their ratio; the table also goes to
# the guest's /mnt (BUILD/guest/bench/kclient_vs_fuse.txt).  Under TCG
# absolute figures mean little: read the ratios.
set -eu

build=$1
mib=${2:-32}
ops=${3:-2000}
files=${4:-300}
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf
tmp=/tmp/kb
data=$tmp/data
conf=$data/clf.conf
out=/mnt/kclient_vs_fuse.txt
mkdir -p "$tmp/k" "$tmp/f"

insmod "$build/kernel/module/clf.ko"
modprobe fuse
"$clf" up --data "$data" --base-port 17200 > "$tmp/up" 2>&1 ||
	{ cat "$tmp/up"; exit 1; }
# Each mount works in a directory of its own: the instance is shared.
"$mountclf" "$conf" "$tmp/k" -o "client=kernel,log=$tmp/k.log"
"$mountclf" "$conf" "$tmp/f" -o "client=fuse,log=$tmp/f.log"
grep -q " $tmp/k clf " /proc/mounts && grep -q " $tmp/f fuse.clf " /proc/mounts ||
	{ echo "bench: mounts missing"; cat /proc/mounts; exit 1; }
mkdir "$tmp/k/kernel" "$tmp/f/fuse"

drop() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
}

# A figure of one mount: python prints "VALUE UNIT".
measure() {
	python3 - "$@" <<'EOF'
import mmap, os, random, sys, time
what, d, mib, ops, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
p = os.path.join(d, "bench")
MiB = 1 << 20
def drop():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
if what == "seqwrite":
    buf = os.urandom(MiB)
    t = time.time()
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for i in range(mib):
        os.write(fd, buf)
    os.fsync(fd)
    os.close(fd)
    print("%.1f MB/s" % (mib * MiB / 1e6 / (time.time() - t)))
elif what == "seqread":
    drop()
    t = time.time()
    fd = os.open(p, os.O_RDONLY)
    n = 0
    while True:
        b = os.read(fd, MiB)
        if not b:
            break
        n += len(b)
    os.close(fd)
    assert n == mib * MiB, n
    print("%.1f MB/s" % (n / 1e6 / (time.time() - t)))
elif what in ("randwrite", "randread"):
    rnd = random.Random(1)
    blocks = mib * MiB // 4096
    buf = os.urandom(4096)
    if what == "randread":
        drop()
    t = time.time()
    fd = os.open(p, os.O_RDWR)
    for i in range(ops):
        off = rnd.randrange(blocks) * 4096
        if what == "randwrite":
            os.pwrite(fd, buf, off)
        else:
            os.pread(fd, 4096, off)
    if what == "randwrite":
        os.fsync(fd)
    os.close(fd)
    print("%.0f ops/s" % (ops / (time.time() - t)))
elif what == "mmapread":
    drop()
    t = time.time()
    fd = os.open(p, os.O_RDONLY)
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    s = 0
    for off in range(0, len(m), 4096):
        s += m[off]
    m.close()
    os.close(fd)
    print("%.1f MB/s" % (mib * MiB / 1e6 / (time.time() - t)))
else:
    dd = os.path.join(d, "meta")
    if what == "create":
        os.mkdir(dd)
    names = [os.path.join(dd, "f%05d" % i) for i in range(files)]
    t = time.time()
    for n in names:
        if what == "create":
            os.close(os.open(n, os.O_WRONLY | os.O_CREAT, 0o644))
        elif what == "stat":
            os.stat(n)
        else:
            os.unlink(n)
    print("%.0f ops/s" % (files / (time.time() - t)))
EOF
}

printf '%-10s %14s %14s %8s\n' figure kernel fuse kernel/fuse | tee "$out"
for what in seqwrite seqread randwrite randread mmapread create stat unlink; do
	k=$(measure "$what" "$tmp/k/kernel" "$mib" "$ops" "$files")
	f=$(measure "$what" "$tmp/f/fuse" "$mib" "$ops" "$files")
	ratio=$(echo "${k% *} ${f% *}" | awk '{ printf "%.2f", $1 / $2 }')
	printf '%-10s %14s %14s %8s\n' "$what" "$k" "$f" "$ratio" | tee -a "$out"
done
umount "$tmp/k"
umount "$tmp/f"
"$clf" down --data "$data" > /dev/null 2>&1 || true
