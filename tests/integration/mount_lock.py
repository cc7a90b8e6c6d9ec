#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""mount_lock.py -- fcntl and flock locks on a file, for test_mount_lock.sh.

  mount_lock.py hold KIND PATH READY RELEASE
      take an exclusive lock (KIND fcntl: lockf of the whole file; flock)
      waiting as long as needed, create READY, wait (at most 60 s) until
      RELEASE exists, exit (which closes the file and releases the lock)
  mount_lock.py try KIND TYPE PATH
      one attempt without waiting (TYPE ex or sh): prints "ok" or the
      errno name
  mount_lock.py wait KIND PATH
      an exclusive lock, waiting: prints the milliseconds it waited
  mount_lock.py waitat KIND PATH
      the same, printing when it got the lock (wall clock, ms)
  mount_lock.py getlk PATH
      F_GETLK for a write lock on the whole file: prints "unlocked" or
      "TYPE START LEN PID" (TYPE W or R)
"""
import errno
import fcntl
import os
import struct
import sys
import time


def lock(kind, fd, exclusive, wait):
    if kind == "flock":
        op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        fcntl.flock(fd, op if wait else op | fcntl.LOCK_NB)
    else:
        op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        fcntl.lockf(fd, op if wait else op | fcntl.LOCK_NB)


def main(argv):
    cmd = argv[1]
    if cmd == "hold":
        kind, path, ready, release = argv[2:6]
        fd = os.open(path, os.O_RDWR)
        lock(kind, fd, True, True)
        open(ready, "w").close()
        deadline = time.time() + 60
        while not os.path.exists(release) and time.time() < deadline:
            time.sleep(0.02)
        return 0
    if cmd == "try":
        kind, typ, path = argv[2:5]
        fd = os.open(path, os.O_RDWR)
        try:
            lock(kind, fd, typ == "ex", False)
            print("ok")
        except OSError as e:
            print(errno.errorcode[e.errno])
        return 0
    if cmd == "wait":
        kind, path = argv[2:4]
        fd = os.open(path, os.O_RDWR)
        t0 = time.monotonic()
        lock(kind, fd, True, True)
        print(int((time.monotonic() - t0) * 1000))
        return 0
    if cmd == "waitat":
        kind, path = argv[2:4]
        fd = os.open(path, os.O_RDWR)
        lock(kind, fd, True, True)
        print(int(time.time() * 1000))
        return 0
    if cmd == "getlk":
        fd = os.open(argv[2], os.O_RDWR)
        # struct flock on x86_64 / aarch64 Linux: short, short, off_t,
        # off_t, pid_t (and padding).
        fmt = "hhqqi4x"
        req = struct.pack(fmt, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        typ, _, start, length, pid = struct.unpack(
            fmt, fcntl.fcntl(fd, fcntl.F_GETLK, req))
        if typ == fcntl.F_UNLCK:
            print("unlocked")
        else:
            print("%s %d %d %d" % ("W" if typ == fcntl.F_WRLCK else "R",
                                   start, length, pid))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
