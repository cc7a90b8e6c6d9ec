#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kclient.sh -- the kernel client (kernel/module/, clf.ko, served by
# mount.clf -o client=kernel) inside the qemu guest of run-guest.sh:
#
#   tests/guest/run-guest.sh tests/guest/kclient.sh BUILD_DIR [FSX_OPS]
#
# insmod, an instance (clf up) in the guest's /tmp, a mount through
# mount.clf (which starts the upcall daemon) and one through mount(8)
# without a helper (the same daemon serves it); cp/dd/cmp, tar, mkdir,
# mv, rm -r, find, df, symlinks and hard links, random I/O against a
# local reference, growing truncations that send no writes (debugfs
# clf/upcalls), fsx (fsx.c: mmap, O_DIRECT, truncations), O_DIRECT,
# cache=none,
# xattrs, the FUSE mount's POSIX suite; fcntl and flock locks contended
# by two mounts and a native client (EAGAIN, F_SETLKW waits and a
# signal ends it, a killed holder's lock goes), on files and on
# directories; a name the native API replaces just after the module
# looked it up opens as the new file (ESTALE, then LOOKUP_REVAL); bytes
# written through the module read back with the native API and MPI-IO
# (mpiexec, 2 processes:
# clf: names, plain paths on the mount, which clf's ROMIO driver takes,
# and ROMIO's ufs driver through the module itself), and the reverse;
# the daemon killed during a write (the write and later calls fail with
# EIO, no hang), restarted with -o reconnect (the mount works again);
# unmount, rmmod; 100 mounts and unmounts beside a mount with the
# module's objects (its slab caches' counts, exact under slab_nomerge)
# and references no more after than before; 100 loads and unloads, with
# the caches gone each time (a leftover object makes
# kmem_cache_destroy complain); 3 cycles of mount.clf, write, unmount,
# unload; fstab lines through mount(8) and mount.clf, for the kernel
# client and (client=fuse) FUSE; at the end, no BUG, WARNING or Oops in
# dmesg.
#
# FSX_OPS (second argument): fsx's operations, 10000 by default: about
# 155 a second under TCG on a quiet 2-core machine, 15-60 on a loaded
# one (CI: 20000 took 320 s of its 90 minutes); make fsx-kclient
# FSX_OPS=100000 runs 100k alone (kclient_fsx.sh: 33 minutes loaded).
set -eu

build=$1
fsx_ops=${2:-10000}
here=$(cd "$(dirname "$0")" && pwd)
tests=$here/../integration
clf=$build/tools/clf
mountclf=$build/kernel/mount.clf
helper=$build/tests/integration/mount_helper
fsx=$build/tests/guest/fsx
ko=$build/kernel/module/clf.ko
tmp=/tmp/kc
data=$tmp/data
conf=$data/clf.conf
mnt=$tmp/mnt
mnt2=$tmp/mnt2
loc=$tmp/local
log=$tmp/kclient.log
mkdir -p "$mnt" "$mnt2" "$loc"
step=start

fail() {
	echo "FAIL: $step: $*"
	[ -s "$log" ] && { echo "--- daemon log"; tail -30 "$log"; }
	echo "--- dmesg"
	dmesg | tail -30
	exit 1
}

t_step=$(date +%s)
ok() {
	echo "ok - $step ($(($(date +%s) - t_step)) s)"
	t_step=$(date +%s)
}

mounted() {
	awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
}

daemon_pid() {
	for p in $(pgrep -x mount.clf || true); do
		echo "$p"
		return 0
	done
	return 1
}

# wait_gone PID: the daemon exits after the last unmount.
wait_gone() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 100 ] || fail "process $1 still alive after 10 s"
		sleep 0.1
	done
}

check_dmesg() {
	if dmesg | grep -E "BUG|WARNING|Oops|general protection|Call Trace|clf: .*leak"; then
		fail "the kernel complained (above)"
	fi
}

kmount() {
	"$mountclf" "$conf" "$1" -o "client=kernel,log=$log${2:+,$2}" ||
		fail "mount.clf -o client=kernel $1"
	mounted "$1" || fail "$1 is not mounted"
}

# ---------------------------------------------------------------------
step="insmod clf.ko: /dev/clf and the file system type"
[ -f "$ko" ] || fail "$ko not built"
# Read from tmpfs, not over 9p, by the many insmods below.
cp "$ko" "$tmp/clf.ko"
ko=$tmp/clf.ko
insmod "$ko" || fail "insmod"
[ -c /dev/clf ] || fail "no /dev/clf"
grep -qw clf /proc/filesystems || fail "clf not in /proc/filesystems"
ok

step="an instance"
"$clf" up --data "$data" --base-port 17100 > "$tmp/up" 2>&1 ||
	{ cat "$tmp/up"; fail "clf up"; }
ok

step="mount.clf picks the kernel client when the module is loaded"
"$mountclf" "$conf" "$mnt" -o "log=$log" || fail "mount.clf"
grep " $mnt clf " /proc/mounts || fail "not a clf kernel mount: $(grep "$mnt" /proc/mounts)"
daemon=$(daemon_pid) || fail "no daemon"
ok

step="mount(8) with no helper: the same daemon serves a second mount"
mount -i -t clf -o cache=none "$conf" "$mnt2" || fail "mount -t clf"
grep " $mnt2 clf .*cache=none\| $mnt2 clf " /proc/mounts > /dev/null ||
	fail "$mnt2 not mounted"
ok

step="a mount of another instance is refused"
if mount -i -t clf /nonexistent/clf.conf "$loc" 2> "$tmp/err"; then
	fail "mounted another source"
fi
ok

# ---------------------------------------------------------------------
step="cp, dd, cmp, sizes"
dd if=/dev/urandom of="$loc/r" bs=64k count=50 2>/dev/null
cp "$loc/r" "$mnt/r"
cmp "$loc/r" "$mnt/r" || fail "cp then cmp"
cmp "$loc/r" "$mnt2/r" || fail "cmp through the cache=none mount"
[ "$(stat -c %s "$mnt/r")" = 3276800 ] || fail "size $(stat -c %s "$mnt/r")"
dd if="$loc/r" of="$mnt/d" bs=1M conv=fsync 2>/dev/null || fail "dd conv=fsync"
cmp "$loc/r" "$mnt/d" || fail "dd then cmp"
printf 'hello' > "$mnt/small"
printf ' world' >> "$mnt/small"
[ "$(cat "$mnt/small")" = "hello world" ] || fail "append: $(cat "$mnt/small")"
truncate -s 3 "$mnt/small"
[ "$(cat "$mnt/small")" = "hel" ] || fail "truncate"
truncate -s 100000 "$mnt/small"
[ "$(stat -c %s "$mnt/small")" = 100000 ] || fail "extend"
ok

step="mkdir, mv, rename over a file, rm -r, find, symlinks, links"
mkdir -p "$mnt/a/b/c"
for i in 1 2 3 4 5; do echo "$i" > "$mnt/a/b/c/f$i"; done
mv "$mnt/a/b" "$mnt/a/bb"
[ "$(cat "$mnt/a/bb/c/f3")" = 3 ] || fail "mv of a directory"
mv "$mnt/a/bb/c/f1" "$mnt/a/bb/c/f2"
[ "$(cat "$mnt/a/bb/c/f2")" = 1 ] || fail "mv over a file"
[ "$(find "$mnt/a" -type f | wc -l)" = 4 ] || fail "find: $(find "$mnt/a")"
ln -s bb/c/f2 "$mnt/a/sl"
[ "$(cat "$mnt/a/sl")" = 1 ] || fail "symlink"
[ "$(readlink "$mnt/a/sl")" = bb/c/f2 ] || fail "readlink"
ln "$mnt/a/bb/c/f3" "$mnt/a/hl"
[ "$(stat -c %h "$mnt/a/hl")" = 2 ] || fail "link count $(stat -c %h "$mnt/a/hl")"
rm -r "$mnt/a"
[ ! -e "$mnt/a" ] || fail "rm -r left $mnt/a"
if rmdir "$mnt/nonexistent" 2>/dev/null; then fail "rmdir of nothing"; fi
ok

step="tar round trip"
mkdir "$loc/tree"
for d in x y z; do
	mkdir "$loc/tree/$d"
	for i in 1 2 3; do head -c $((i * 5000)) /dev/urandom > "$loc/tree/$d/$i"; done
done
tar -C "$loc" -cf - tree | tar -C "$mnt" -xf -
tar -C "$mnt" -cf - tree | tar -C "$tmp" -xf - -O > /dev/null
diff -r "$loc/tree" "$mnt/tree" || fail "diff -r"
ok

step="df and statfs"
df "$mnt" > "$tmp/df" || fail "df"
[ "$(stat -f -c %T "$mnt")" != "" ] || fail "stat -f"
ok

step="random I/O against a local reference (and a cache=none mount)"
python3 "$tests/mount_randio.py" "$mnt/rand" "$loc/rand" 7 1500 "$mnt2/rand" ||
	fail "mount_randio.py"
ok

step="mmap writes and reads"
python3 - "$mnt/mm" <<'EOF' || fail "mmap"
import mmap, os, sys
p = sys.argv[1]
with open(p, "wb") as f:
    f.truncate(3 * 4096 + 100)
with open(p, "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    for i in range(0, len(m), 997):
        m[i] = (i * 7) % 251
    m.flush()
    m.close()
want = bytearray(3 * 4096 + 100)
for i in range(0, len(want), 997):
    want[i] = (i * 7) % 251
with open(p, "rb") as f:
    got = f.read()
if got != bytes(want):
    sys.exit("mmap: bytes differ")
with open(p, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    if m[:] != bytes(want):
        sys.exit("mmap read: bytes differ")
EOF
ok

step="a truncation that grows the file sends no writes (debugfs clf/upcalls)"
grep -qw debugfs /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug
upcalls=/sys/kernel/debug/clf/upcalls
[ -r "$upcalls" ] || fail "no $upcalls"
python3 - "$mnt/grow" "$loc/grow" "$upcalls" <<'EOF' || fail "growing truncations"
import os, sys
path, ref, upcalls = sys.argv[1:]

def writes():
    for line in open(upcalls):
        op, n = line.split()
        if op == "write":
            return int(n)
    sys.exit("no write line in " + upcalls)

fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
want = bytearray()
w0 = writes()
# Written at the end, then grown past it: the pages stay dirty, as
# only a shrink needs them at the daemon first.
for i in range(20):
    chunk = bytes([65 + i]) * 3000
    os.pwrite(fd, chunk, len(want))
    want += chunk
    os.ftruncate(fd, len(want) + 5000)
    want += bytes(5000)
w1 = writes()
os.close(fd)
w2 = writes()
print("write requests: %d during 20 writes and growing truncations, "
      "%d at the close" % (w1 - w0, w2 - w1))
if w1 - w0 > 2:
    sys.exit("the growing truncations wrote the pages back")
if w2 == w1:
    sys.exit("the close wrote nothing back")
with open(path, "rb") as f:
    if f.read() != bytes(want):
        sys.exit("the bytes read back differ")
with open(ref, "wb") as f:
    f.write(want)
EOF
"$helper" get "$conf" /grow > "$loc/grow.native" || fail "mount_helper get"
cmp "$loc/grow" "$loc/grow.native" || fail "the native read of the grown file"
ok

step="fsx: writes, reads, truncations, mmap and O_DIRECT, against a model"
"$fsx" -Z -S 1 -N "$fsx_ops" -p 2000 "$mnt/fsx" || fail "fsx"
ok

step="O_DIRECT"
dd if="$loc/r" of="$mnt/direct" bs=1M oflag=direct 2>/dev/null || fail "dd oflag=direct"
dd if="$mnt/direct" of="$loc/direct" bs=1M iflag=direct 2>/dev/null || fail "dd iflag=direct"
cmp "$loc/r" "$loc/direct" || fail "O_DIRECT bytes"
ok

step="the native API reads what the module wrote, and the reverse"
"$helper" get "$conf" /r > "$loc/r.native" || fail "mount_helper get"
cmp "$loc/r" "$loc/r.native" || fail "native read of the module's bytes"
head -c 300000 /dev/urandom > "$loc/n"
# The miss just looked up must not hide the name another client makes
# (the module does not cache negative dentries).
[ ! -e "$mnt/native" ] || fail "$mnt/native exists before its put"
"$helper" put "$conf" /native < "$loc/n" || fail "mount_helper put"
cmp "$loc/n" "$mnt/native" || fail "the module's read of native bytes"
ok

step="a name another client replaces at once: the open finds the new file"
# The module trusts a name and its inode for a second; the daemon says
# ESTALE of the old inode, and the VFS walks again with LOOKUP_REVAL.
"$helper" replace "$conf" /replaced "$mnt/replaced" > "$tmp/replace.out" 2>&1 ||
	{ cat "$tmp/replace.out"; fail "mount_helper replace"; }
cat "$tmp/replace.out"
ok

step="MPI-IO reads what the module wrote, and the reverse"
xfer=$build/tests/integration/romio/romio_xfer
[ -x "$xfer" ] || fail "$xfer not built (MPICH and ROMIO: make deps)"
command -v mpiexec > /dev/null || fail "no mpiexec (the host's mpich)"
# mpi [VAR=VALUE...] ARGS: romio_xfer ARGS, 2 processes.
mpi() {
	while [ "${1#*=}" != "$1" ]; do
		export "${1?}"
		shift
	done
	timeout 120 mpiexec -n 2 "$xfer" "$@" > "$tmp/mpi.out" 2>&1 < /dev/null ||
		{ cat "$tmp/mpi.out"; fail "romio_xfer $*"; }
}
# clf: names, through libclf.
(mpi CLF_CONFIG="$conf" check true clf:/r "$loc/r")
(mpi CLF_CONFIG="$conf" write true clf:/mpi-clf "$loc/n")
cmp "$loc/n" "$mnt/mpi-clf" || fail "the module's read of MPI-IO's clf: file"
# Plain paths on the kernel mount: clf's driver takes them (the hints
# file reaches it), on the mount's instance.
printf 'use_romio_optimizations true\n' > "$tmp/hints"
(mpi ROMIO_HINTS="$tmp/hints" hint true "$mnt/mpi-probe")
(mpi ROMIO_HINTS="$tmp/hints" write true "$mnt/mpi-plain" "$loc/n")
cmp "$loc/n" "$mnt/mpi-plain" || fail "the module's read of MPI-IO's plain path"
(mpi ROMIO_HINTS="$tmp/hints" check true "$mnt/d" "$loc/r")
# ROMIO's ufs driver: MPI-IO's reads and writes through the module.
(mpi check false "ufs:$mnt/d" "$loc/r")
(mpi write false "ufs:$mnt/mpi-ufs" "$loc/r")
"$helper" get "$conf" /mpi-ufs > "$loc/ufs.native" || fail "mount_helper get"
cmp "$loc/r" "$loc/ufs.native" || fail "native read of MPI-IO's bytes through the module"
cmp "$loc/r" "$mnt/mpi-ufs" || fail "the module's read of its own MPI-IO bytes"
ok

step="xattrs: user.clf.layout on a file and a directory; mkfifo"
python3 - "$mnt" <<'EOF' || fail "xattrs"
import os, sys
d = sys.argv[1]
os.mkdir(d + "/lay")
lay = os.getxattr(d + "/r", "user.clf.layout")
if "user.clf.layout" not in os.listxattr(d + "/r"):
    sys.exit("listxattr: %r" % os.listxattr(d + "/r"))
os.setxattr(d + "/lay", "user.clf.layout", lay)
with open(d + "/lay/f", "w") as f:
    f.write("x")
if os.getxattr(d + "/lay/f", "user.clf.layout") != lay:
    sys.exit("the directory's layout was not inherited")
try:
    os.setxattr(d + "/r", "user.other", b"1")
    sys.exit("user.other accepted")
except OSError:
    pass
os.mkfifo(d + "/lay/fifo")
if not os.path.exists(d + "/lay/fifo"):
    sys.exit("mkfifo")
EOF
ok

step="the FUSE mount's POSIX suite (posix_suite.py)"
chmod 755 "$tmp" "$mnt"
python3 "$tests/posix_suite.py" "$mnt" > "$tmp/posix.out" 2>&1 ||
	{ tail -30 "$tmp/posix.out"; fail "posix_suite.py"; }
tail -1 "$tmp/posix.out"
ok

step="sqlite"
if command -v sqlite3 > /dev/null; then
	sqlite3 "$mnt/db" "create table t(a, b); insert into t values (1, 'x'), (2, 'y');" ||
		fail "sqlite3 create"
	[ "$(sqlite3 "$mnt/db" 'select count(*) from t')" = 2 ] || fail "sqlite3 select"
fi
ok
step="fcntl and flock locks reach metad: two mounts and a native client contend, on files and directories"
python3 - "$mnt/lk" "$mnt2/lk" "$helper" "$conf" <<'EOF' || fail "locks"
import errno, fcntl, os, signal, struct, subprocess, sys, time
a, b, helper, conf = sys.argv[1:]
open(a, "w").close()

class Alarm(Exception):
    pass

def on_alarm(sig, frame):
    raise Alarm()

signal.signal(signal.SIGALRM, on_alarm)

def holder(path, how, release_after, flags=os.O_RDWR):
    """A child locking path on its own fd: "l" on the pipe; it closes
    the fd release_after s after a byte comes (None: never)."""
    r, w = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        fd = os.open(path, flags)
        how(fd)
        os.write(w, b"l")
        os.read(r2, 1)
        if release_after is None:
            time.sleep(3600)
        time.sleep(release_after)
        os.close(fd)
        time.sleep(0.5)
        os._exit(0)
    if os.read(r, 1) != b"l":
        sys.exit("the holder did not lock")
    return pid, w2

def busy(fd, what, lock=fcntl.lockf):
    try:
        lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return
    sys.exit(what + ": the lock was granted while another client holds it")

def waited(fd, at_least, lock=fcntl.lockf):
    t = time.monotonic()
    signal.alarm(20)
    lock(fd, fcntl.LOCK_EX)
    signal.alarm(0)
    dt = time.monotonic() - t
    if dt < at_least:
        sys.exit("the wait returned after %.2f s, before the release" % dt)
    lock(fd, fcntl.LOCK_UN)

fb = os.open(b, os.O_RDWR)

# Held through the first mount: the second sees it (F_SETLK, F_GETLK).
pid, go = holder(a, lambda fd: fcntl.lockf(fd, fcntl.LOCK_EX), 1.5)
busy(fb, "F_SETLK")
got = fcntl.fcntl(fb, fcntl.F_GETLK,
                  struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
if struct.unpack("hhqqi4x", got)[0] != fcntl.F_WRLCK:
    sys.exit("F_GETLK does not see the other mount's lock")

# A signal ends a waiting F_SETLKW (EINTR), and the wait takes nothing.
t = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 1.0)
try:
    fcntl.lockf(fb, fcntl.LOCK_EX)
    sys.exit("F_SETLKW granted while the holder holds it")
except Alarm:
    pass
if time.monotonic() - t > 5:
    sys.exit("the interrupted F_SETLKW took %.1f s" % (time.monotonic() - t))
busy(fb, "F_SETLK after the interrupted wait")

# F_SETLKW waits for the holder's close (which releases its lock).
os.write(go, b"g")
waited(fb, 1.0)
os.waitpid(pid, 0)

# A holder killed with SIGKILL: its lock goes with it.
pid, go = holder(a, lambda fd: fcntl.lockf(fd, fcntl.LOCK_EX), None)
busy(fb, "F_SETLK against a live holder")
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
fcntl.lockf(fb, fcntl.LOCK_EX | fcntl.LOCK_NB)
fcntl.lockf(fb, fcntl.LOCK_UN)

# flock(2): the same, whole file; released at the holder's close.
pid, go = holder(a, lambda fd: fcntl.flock(fd, fcntl.LOCK_EX), 1.0)
busy(fb, "flock LOCK_NB", fcntl.flock)
os.write(go, b"g")
waited(fb, 0.5, fcntl.flock)
os.waitpid(pid, 0)

# A native client's lock (libclf, its own metad connection).
n = subprocess.Popen([helper, "lock", conf, "/lk", "1500"],
                     stdout=subprocess.PIPE, text=True)
if n.stdout.readline().strip() != "locked":
    sys.exit("mount_helper lock")
busy(fb, "F_SETLK against the native client")
waited(fb, 0.5)
n.wait()
os.close(fb)

# A directory's locks are metad's too: flock, and fcntl read locks (a
# directory opens read-only).  The two mounts are two super blocks: the
# kernel alone would lock two inodes and grant both.
def getlk(fd):
    got = fcntl.fcntl(fd, fcntl.F_GETLK,
                      struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
    return struct.unpack("hhqqi4x", got)[0]

da = os.path.dirname(a) + "/lkdir"
os.mkdir(da)
fdb = os.open(os.path.dirname(b) + "/lkdir", os.O_RDONLY)
pid, go = holder(da, lambda fd: fcntl.flock(fd, fcntl.LOCK_EX), 1.0,
                 os.O_RDONLY)
busy(fdb, "flock of a directory", fcntl.flock)
if getlk(fdb) != fcntl.F_WRLCK:
    sys.exit("F_GETLK of a directory does not see the other mount's flock")
os.write(go, b"g")
waited(fdb, 0.5, fcntl.flock)
os.waitpid(pid, 0)
pid, go = holder(da, lambda fd: fcntl.lockf(fd, fcntl.LOCK_SH), None,
                 os.O_RDONLY)
if getlk(fdb) != fcntl.F_RDLCK:
    sys.exit("F_GETLK of a directory does not see the other mount's "
             "read lock")
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
if getlk(fdb) != fcntl.F_UNLCK:
    sys.exit("the killed holder's lock on the directory stayed")
fcntl.flock(fdb, fcntl.LOCK_EX | fcntl.LOCK_NB)
fcntl.flock(fdb, fcntl.LOCK_UN)
os.close(fdb)
EOF
ok

check_dmesg

# ---------------------------------------------------------------------
step="the daemon killed during a write: EIO, no hang"
umount "$mnt2" || fail "umount $mnt2"
dd if=/dev/zero of="$mnt/big" bs=1M count=400 conv=fsync 2> "$tmp/dd.err" &
ddpid=$!
sleep 2
kill -9 "$daemon"
wait_gone "$daemon"
if wait "$ddpid"; then
	fail "dd succeeded with its daemon killed"
fi
grep -q "Input/output error" "$tmp/dd.err" || fail "dd: $(cat "$tmp/dd.err")"
if ls "$mnt" > /dev/null 2> "$tmp/err"; then fail "ls with no daemon"; fi
grep -q "Input/output error" "$tmp/err" || fail "ls: $(cat "$tmp/err")"
if cat "$mnt/r" > /dev/null 2>&1; then fail "cat with no daemon"; fi
check_dmesg
ok

step="a new daemon (-o reconnect) serves the mount again"
"$mountclf" "$conf" "$mnt" -o "client=kernel,reconnect,log=$log" ||
	fail "mount.clf -o reconnect"
daemon=$(daemon_pid) || fail "no daemon"
ls "$mnt" > /dev/null || fail "ls after the restart"
cmp "$loc/r" "$mnt/r" || fail "cmp after the restart"
echo again > "$mnt/again"
[ "$(cat "$mnt/again")" = again ] || fail "write after the restart"
ok

caches="clf_inode_cache clf_req clf_file"

# caches_gone WHEN: rmmod took the module's slab caches (one still
# holding an object would stay, and kmem_cache_destroy complain).
caches_gone() {
	for c in $caches; do
		grep -q "^$c " /proc/slabinfo && fail "$c left $1"
	done
	return 0
}

# counts: "cache=objects ..." in use now, exactly: the kernel's
# slab_nomerge (run-guest.sh) gives each cache its own line, and shrink
# flushes the per-CPU slabs, whose free objects slabinfo counts as used.
counts() {
	sync
	echo 2 > /proc/sys/vm/drop_caches
	for c in $caches; do
		echo 1 > "/sys/kernel/slab/$c/shrink"
		printf '%s=%s ' "$c" \
			"$(awk -v c="$c" '$1 == c { print $2 }' /proc/slabinfo)"
	done
}

# no_more A B: each count in A is at most the same cache's in B.
no_more() {
	for kv in $1; do
		m=$(echo " $2" | sed -n "s/.* ${kv%%=*}=\([0-9]*\).*/\1/p")
		[ "${kv#*=}" -le "$m" ] || return 1
	done
}

refcnt() {
	cat /sys/module/clf/refcnt
}

step="unmount: the daemon ends, the module unloads"
umount "$mnt" || fail "umount"
wait_gone "$daemon"
[ "$(refcnt)" = 0 ] || fail "module references left: $(refcnt)"
rmmod clf || fail "rmmod"
caches_gone "after rmmod"
ok

step="100 mounts and unmounts beside a mount: no object or reference left"
insmod "$ko" || fail "insmod"
kmount "$mnt"
daemon=$(daemon_pid) || fail "no daemon"
echo kept > "$mnt/kept"
for c in $caches; do
	[ -w "/sys/kernel/slab/$c/shrink" ] ||
		fail "no /sys/kernel/slab/$c (merged with another cache?)"
done
ref0=$(refcnt)
before=$(counts)
for i in $(seq 1 100); do
	mount -i -t clf "$conf" "$mnt2" || fail "mount -t clf, cycle $i"
	# The shell's own reads and writes: a process costs seconds here.
	echo "cycle $i" > "$mnt2/m$i"
	read -r got < "$mnt2/m$i"
	[ "$got" = "cycle $i" ] || fail "cycle $i bytes: $got"
	read -r got < "$mnt2/kept"
	[ "$got" = kept ] || fail "cycle $i: kept: $got"
	umount "$mnt2" || fail "umount, cycle $i"
done
[ "$(find "$mnt" -maxdepth 1 -name 'm[0-9]*' | wc -l)" = 100 ] || fail "not 100 files"
# Inodes are freed after an RCU grace period, forgets read by the
# daemon: give them a moment.
i=0
until after=$(counts) && no_more "$after" "$before"; do
	i=$((i + 1))
	[ "$i" -le 50 ] || fail "objects left: before $before, after $after"
	sleep 0.2
done
echo "slab objects before: $before"
echo "slab objects after:  $after"
[ "$(refcnt)" = "$ref0" ] || fail "module references: $ref0, then $(refcnt)"
umount "$mnt" || fail "umount"
wait_gone "$daemon"
[ "$(refcnt)" = 0 ] || fail "module references left: $(refcnt)"
rmmod clf || fail "rmmod"
caches_gone "after rmmod"
check_dmesg
ok

step="100 loads and unloads"
for i in $(seq 1 100); do
	insmod "$ko" || fail "insmod, cycle $i"
	[ -c /dev/clf ] || fail "no /dev/clf, cycle $i"
	rmmod clf || fail "rmmod, cycle $i"
done
caches_gone "after 100 unloads"
check_dmesg
ok

step="mount.clf, write, unmount, unload: 3 cycles"
for i in $(seq 1 3); do
	insmod "$ko" || fail "insmod, cycle $i"
	kmount "$mnt"
	daemon=$(daemon_pid) || fail "no daemon, cycle $i"
	echo "cycle $i" > "$mnt/cycle$i"
	[ "$(cat "$mnt/cycle$i")" = "cycle $i" ] || fail "cycle $i bytes"
	umount "$mnt" || fail "umount, cycle $i"
	wait_gone "$daemon"
	[ "$(refcnt)" = 0 ] || fail "module references left, cycle $i: $(refcnt)"
	rmmod clf || fail "rmmod, cycle $i"
	caches_gone "after rmmod, cycle $i"
done
ok

step="fstab lines through mount(8) and /sbin/mount.clf: the kernel client, and FUSE with client=fuse"
# The host's / is read-only here: mount.clf goes into an overlay of
# /usr/sbin (tmpfs above), where mount(8) looks for helpers.
mkdir -p "$tmp/sbin/up" "$tmp/sbin/work"
mount -t overlay overlay \
	-o "lowerdir=/usr/sbin,upperdir=$tmp/sbin/up,workdir=$tmp/sbin/work" \
	/usr/sbin || fail "an overlay on /usr/sbin"
ln -s "$mountclf" /usr/sbin/mount.clf
insmod "$ko" || fail "insmod"
modprobe fuse 2> /dev/null || true
[ -c /dev/fuse ] || fail "no /dev/fuse (modprobe fuse)"
printf '%s %s clf noauto,log=%s 0 0\n%s %s clf noauto,client=fuse,log=%s 0 0\n' \
	"$conf" "$mnt" "$log" "$conf" "$mnt2" "$tmp/fuse.log" > "$tmp/fstab"
mount -T "$tmp/fstab" "$mnt" || fail "mount -T $tmp/fstab $mnt"
grep -q " $mnt clf " /proc/mounts || fail "not a kernel mount: $(grep "$mnt" /proc/mounts)"
daemon=$(daemon_pid) || fail "no daemon"
mount -T "$tmp/fstab" "$mnt2" || fail "mount -T $tmp/fstab $mnt2"
grep -q " $mnt2 fuse.clf " /proc/mounts || fail "not a FUSE mount: $(grep "$mnt2" /proc/mounts)"
[ "$(cat "$mnt2/cycle3")" = "cycle 3" ] || fail "FUSE reads the module's file"
echo fstab > "$mnt2/fstab"
[ "$(cat "$mnt/fstab")" = fstab ] || fail "the module reads FUSE's file"
umount "$mnt2" || fail "umount $mnt2"
umount "$mnt" || fail "umount $mnt"
wait_gone "$daemon"
rmmod clf || fail "rmmod"
umount /usr/sbin || fail "umount /usr/sbin"
ok

step="dmesg: no BUG, WARNING or Oops"
check_dmesg
ok
"$clf" down --data "$data" > /dev/null 2>&1 || true
echo "PASS: kclient"
