#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""mount_randio.py -- random reads, writes, truncations, appends and
reopens on a file of the mount and on a local reference file, side by
side; every read, every size and the final contents must agree.

usage: mount_randio.py MOUNT_FILE REF_FILE SEED OPS [OTHER_MOUNT_FILE]

OTHER_MOUNT_FILE, the same file seen through another mount (another
client), is compared with the reference after each close: close-to-open
consistency.  Exit status 0, or 1 with the first difference printed.
"""
import os
import random
import sys


def fail(msg):
    print("mount_randio: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def differ(path, want):
    """None when the file at path holds want, else how it differs."""
    got = read_all(path)
    if got == want:
        return None
    if len(got) != len(want):
        return "%d bytes, want %d" % (len(got), len(want))
    first = next(i for i in range(len(got)) if got[i] != want[i])
    return "%d bytes as wanted, first difference at byte %d" % (len(got),
                                                                 first)


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    mpath, rpath = sys.argv[1], sys.argv[2]
    rnd = random.Random(int(sys.argv[3]))
    nops = int(sys.argv[4])
    other = sys.argv[5] if len(sys.argv) == 6 else None
    flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC
    fm = os.open(mpath, flags, 0o644)
    fr = os.open(rpath, flags, 0o644)
    counts = {}
    for i in range(nops):
        size = os.fstat(fr).st_size
        op = rnd.random()
        if op < 0.40:
            name = "write"
            off = rnd.randint(0, size + 70000)
            data = rnd.randbytes(rnd.choice((1, 7, 4096, 65536, 200000,
                                             rnd.randint(1, 1 << 20))))
            if os.pwrite(fm, data, off) != len(data):
                fail("op %d: short write of %d at %d" % (i, len(data), off))
            os.pwrite(fr, data, off)
        elif op < 0.80:
            name = "read"
            off = rnd.randint(0, size + 1000)
            n = rnd.randint(1, 300000)
            got, want = os.pread(fm, n, off), os.pread(fr, n, off)
            if got != want:
                fail("op %d: read of %d at %d: %d bytes, want %d%s" %
                     (i, n, off, len(got), len(want),
                      "" if len(got) != len(want) else " (contents differ)"))
        elif op < 0.86:
            name = "truncate"
            n = rnd.randint(0, size + 100000)
            os.ftruncate(fm, n)
            os.ftruncate(fr, n)
        elif op < 0.92:
            name = "append"
            data = rnd.randbytes(rnd.randint(1, 100000))
            fa = os.open(mpath, os.O_WRONLY | os.O_APPEND)
            ra = os.open(rpath, os.O_WRONLY | os.O_APPEND)
            os.write(fa, data)
            os.write(ra, data)
            os.close(fa)
            os.close(ra)
        elif op < 0.97:
            name = "reopen"
            os.close(fm)
            why = other and differ(other, read_all(rpath))
            if why:
                fail("op %d: through the other mount: %s" % (i, why))
            fm = os.open(mpath, os.O_RDWR)
        else:
            name = "fsync"
            os.fsync(fm)
        counts[name] = counts.get(name, 0) + 1
        if os.fstat(fm).st_size != os.fstat(fr).st_size:
            fail("op %d (%s): size %d, want %d" %
                 (i, name, os.fstat(fm).st_size, os.fstat(fr).st_size))
    os.close(fm)
    os.close(fr)
    why = differ(mpath, read_all(rpath))
    if why:
        fail("at the end: %s" % why)
    why = other and differ(other, read_all(rpath))
    if why:
        fail("at the end, through the other mount: %s" % why)
    print("mount_randio: %d operations agree (%s), final size %d" %
          (nops, ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())),
           os.path.getsize(rpath)))


main()
