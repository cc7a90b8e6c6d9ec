#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""fsx_mmap.py -- fsx's idea (Apple's file system exerciser) on one file
of a mount, in Python: random writes, reads, truncations, mmap writes
(msync'd) and mmap reads, fsyncs and reopens, each checked against an
in-memory model of the file.  No fsx package in Debian: this is ours.

usage: fsx_mmap.py FILE SEED OPS [MAXLEN]

Exit status 0, or 1 with the first mismatch (operation, offset) printed.
"""
import mmap
import os
import random
import sys


def fail(msg):
    print("fsx_mmap: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path, rnd, nops = sys.argv[1], random.Random(int(sys.argv[2])), int(sys.argv[3])
    maxlen = int(sys.argv[4]) if len(sys.argv) == 5 else 256 * 1024
    model = bytearray()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    counts = {}
    for i in range(nops):
        size = len(model)
        r = rnd.random()
        if r < 0.25:
            name = "write"
            off = rnd.randint(0, maxlen - 1)
            n = rnd.randint(1, min(65536, maxlen - off))
            data = rnd.randbytes(n)
            os.pwrite(fd, data, off)
            if off > size:
                model.extend(bytes(off - size))
            model[off:off + n] = data
        elif r < 0.50:
            name = "read"
            off = rnd.randint(0, size) if size else 0
            n = rnd.randint(1, 65536)
            got = os.pread(fd, n, off)
            if got != bytes(model[off:off + n]):
                fail("op %d: read %d at %d: got %d bytes, want %d%s" %
                     (i, n, off, len(got), len(model[off:off + n]),
                      "" if len(got) != len(model[off:off + n]) else " (differ)"))
        elif r < 0.60:
            name = "truncate"
            n = rnd.randint(0, maxlen)
            os.ftruncate(fd, n)
            if n < size:
                del model[n:]
            else:
                model.extend(bytes(n - size))
        elif r < 0.75 and size:
            name = "mapwrite"
            off = rnd.randint(0, size - 1)
            n = rnd.randint(1, min(16384, size - off))
            data = rnd.randbytes(n)
            m = mmap.mmap(fd, size)
            m[off:off + n] = data
            if rnd.random() < 0.5:
                m.flush()
            m.close()
            model[off:off + n] = data
        elif r < 0.90 and size:
            name = "mapread"
            off = rnd.randint(0, size - 1)
            n = rnd.randint(1, min(65536, size - off))
            m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
            got = m[off:off + n]
            m.close()
            if got != bytes(model[off:off + n]):
                fail("op %d: mapread %d at %d differs" % (i, n, off))
        elif r < 0.95:
            name = "fsync"
            os.fsync(fd)
        else:
            name = "reopen"
            os.close(fd)
            fd = os.open(path, os.O_RDWR)
        counts[name] = counts.get(name, 0) + 1
        st = os.fstat(fd).st_size
        if st != len(model):
            fail("op %d (%s): size %d, want %d" % (i, name, st, len(model)))
    os.close(fd)
    with open(path, "rb") as f:
        if f.read() != bytes(model):
            fail("at the end: the file differs from the model")
    print("fsx_mmap: %d operations, 0 mismatches (%s), final size %d" %
          (nops, ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())),
           len(model)))


main()
