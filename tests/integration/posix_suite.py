#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""posix_suite.py -- POSIX conformance of a mounted file system.

usage: posix_suite.py DIR [-v] [-k NAME]

Runs, in a fresh subdirectory of DIR, the behaviours POSIX.1-2017 gives
each call -- open, creat, mkdir, rmdir, unlink, rename, link, symlink,
readlink, mknod, mkfifo, chmod, chown, truncate, ftruncate, utimensat,
and the stat fields they change (nlink, size, times) -- in the manner
of pjdfstest (which Debian does not package): every expectation is one
test, as root and, where permissions matter, as an unprivileged user.
Linux's documented choices are expected where POSIX leaves one open
(unlink of a directory is EISDIR; link does not follow a symlink).

Each test that fails on a file system for a reason we accept is listed
in KNOWN_FAILURES with the reason; such a test is counted as "known",
and one of them passing is reported (so the list stays true).  Prints
"posix: N passed, M failed, K known failures" and exits 1 when M > 0.
Runs as root (it changes owners and acts as another user).
"""

import errno
import os
import socket
import stat
import sys
import time

# name -> why it fails on clf and why that is acceptable.
KNOWN_FAILURES = {
}

NOBODY = 65534  # the unprivileged user and group of the permission tests


class Suite:
    def __init__(self, verbose, only):
        self.passed = 0
        self.failed = []
        self.known = 0
        self.known_passed = []
        self.verbose = verbose
        self.only = only
        self.group = ""

    def check(self, name, cond, detail=""):
        full = f"{self.group}: {name}"
        if full in KNOWN_FAILURES:
            if cond:
                self.known_passed.append(full)
            else:
                self.known += 1
            return cond
        if cond:
            self.passed += 1
            if self.verbose:
                print(f"ok   {full}")
        else:
            self.failed.append(f"{full}{': ' + detail if detail else ''}")
            print(f"FAIL {full}{': ' + detail if detail else ''}")
        return cond

    def err(self, name, want, fn, *args, **kw):
        """fn(*args) must fail with errno want (a name, or a tuple of
        names when POSIX allows several)."""
        wants = (want,) if isinstance(want, str) else want
        try:
            fn(*args, **kw)
        except OSError as e:
            got = errno.errorcode.get(e.errno, str(e.errno))
            return self.check(name, got in wants,
                              f"got {got}, want {'/'.join(wants)}")
        return self.check(name, False,
                          f"succeeded, want {'/'.join(wants)}")

    def ok(self, name, fn, *args, **kw):
        """fn(*args) must succeed; returns its value (None on failure)."""
        try:
            v = fn(*args, **kw)
        except OSError as e:
            self.check(name, False, f"failed: {e}")
            return None
        self.check(name, True)
        return v


# ---------------------------------------------------------------------
# Helpers

def lst(p):
    return os.lstat(p)


def tick():
    """Let the clock move, so that a time marked for update differs."""
    time.sleep(0.02)


def touch(p, data=b"", mode=0o644):
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    os.write(fd, data)
    os.close(fd)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def as_user(fn, *args, uid=NOBODY, gid=NOBODY):
    """Run fn(*args) in a child process as uid/gid: 0 when it returned,
    the errno of the OSError it raised, or -1 for anything else."""
    pid = os.fork()
    if pid == 0:
        code = 255
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            fn(*args)
            code = 0
        except OSError as e:
            code = e.errno if e.errno and e.errno < 255 else 254
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def errname(code):
    return "0" if code == 0 else errno.errorcode.get(code, str(code))


def user_err(s, name, want, fn, *args):
    got = errname(as_user(fn, *args))
    s.check(name, got == want, f"as nobody: got {got}, want {want}")


def changed(before, after, field):
    return getattr(after, field) > getattr(before, field)


def same(before, after, field):
    return getattr(after, field) == getattr(before, field)


# ---------------------------------------------------------------------
# The calls, one function each

def t_open(s, d):
    s.group = "open"
    p = f"{d}/f"
    old = os.umask(0o022)
    tick()
    dir0 = os.stat(d)
    tick()
    fd = s.ok("O_CREAT creates", os.open, p, os.O_CREAT | os.O_WRONLY, 0o777)
    os.umask(old)
    if fd is None:
        return
    os.close(fd)
    st = lst(p)
    s.check("new file is regular", stat.S_ISREG(st.st_mode))
    s.check("mode is mode & ~umask", stat.S_IMODE(st.st_mode) == 0o755,
            oct(st.st_mode))
    s.check("owner is the effective uid", st.st_uid == os.geteuid())
    s.check("new file has one link", st.st_nlink == 1)
    s.check("new file is empty", st.st_size == 0)
    s.check("new file times are equal",
            st.st_atime_ns == st.st_mtime_ns == st.st_ctime_ns)
    dir1 = os.stat(d)
    s.check("create marks the directory's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("create marks the directory's ctime", changed(dir0, dir1, "st_ctime_ns"))
    s.err("O_CREAT|O_EXCL on a file: EEXIST", "EEXIST", os.open, p,
          os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.symlink("nowhere", f"{d}/dangling")
    s.err("O_CREAT|O_EXCL on a dangling symlink: EEXIST", "EEXIST", os.open,
          f"{d}/dangling", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    s.check("O_EXCL did not create the link's target",
            not os.path.lexists(f"{d}/nowhere"))
    fd = s.ok("O_CREAT on a dangling symlink creates its target", os.open,
              f"{d}/dangling", os.O_CREAT | os.O_WRONLY, 0o644)
    if fd is not None:
        os.close(fd)
        s.check("the target exists", os.path.isfile(f"{d}/nowhere"))
    fd = s.ok("O_CREAT on an existing file opens it", os.open, p,
              os.O_CREAT | os.O_WRONLY, 0o600)
    if fd is not None:
        os.close(fd)
        s.check("O_CREAT on an existing file keeps its mode",
                stat.S_IMODE(lst(p).st_mode) == 0o755)
    touch(p, b"0123456789")
    tick()
    st0 = lst(p)
    tick()
    fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
    os.close(fd)
    st1 = lst(p)
    s.check("O_TRUNC empties the file", st1.st_size == 0, str(st1.st_size))
    s.check("O_TRUNC marks mtime", changed(st0, st1, "st_mtime_ns"))
    s.check("O_TRUNC marks ctime", changed(st0, st1, "st_ctime_ns"))
    s.err("missing file: ENOENT", "ENOENT", os.open, f"{d}/none", os.O_RDONLY)
    s.err("O_CREAT in a missing directory: ENOENT", "ENOENT", os.open,
          f"{d}/none/f", os.O_CREAT | os.O_WRONLY)
    s.err("a file as a directory: ENOTDIR", "ENOTDIR", os.open, f"{p}/x",
          os.O_RDONLY)
    s.err("O_DIRECTORY on a file: ENOTDIR", "ENOTDIR", os.open, p,
          os.O_RDONLY | os.O_DIRECTORY)
    s.err("a directory for writing: EISDIR", "EISDIR", os.open, d,
          os.O_WRONLY)
    s.err("a name of 256 bytes: ENAMETOOLONG", "ENAMETOOLONG", os.open,
          f"{d}/{'x' * 256}", os.O_CREAT | os.O_WRONLY)
    fd = s.ok("a name of 255 bytes", os.open, f"{d}/{'y' * 255}",
              os.O_CREAT | os.O_WRONLY)
    if fd is not None:
        os.close(fd)
        os.unlink(f"{d}/{'y' * 255}")
    os.symlink("f", f"{d}/lf")
    s.err("O_NOFOLLOW on a symlink: ELOOP", "ELOOP", os.open, f"{d}/lf",
          os.O_RDONLY | os.O_NOFOLLOW)
    fd = s.ok("O_NOFOLLOW on a file", os.open, p, os.O_RDONLY | os.O_NOFOLLOW)
    if fd is not None:
        os.close(fd)
    os.symlink("loop2", f"{d}/loop1")
    os.symlink("loop1", f"{d}/loop2")
    s.err("a symlink loop: ELOOP", "ELOOP", os.open, f"{d}/loop1", os.O_RDONLY)
    s.err("O_CREAT through a symlink loop: ELOOP", "ELOOP", os.open,
          f"{d}/loop1", os.O_CREAT | os.O_WRONLY)
    os.chmod(p, 0o600)
    user_err(s, "read without permission: EACCES", "EACCES",
             lambda: os.open(p, os.O_RDONLY))
    os.chmod(p, 0o644)
    user_err(s, "write without permission: EACCES", "EACCES",
             lambda: os.open(p, os.O_WRONLY))
    user_err(s, "create in a directory without write permission: EACCES",
             "EACCES", lambda: os.open(f"{d}/byuser", os.O_CREAT | os.O_WRONLY))
    os.chmod(d, 0o777)
    user_err(s, "create as another user", "0",
             lambda: os.close(os.open(f"{d}/byuser", os.O_CREAT | os.O_WRONLY,
                                      0o644)))
    os.chmod(d, 0o755)
    if os.path.exists(f"{d}/byuser"):
        st = lst(f"{d}/byuser")
        s.check("a new file is owned by its creator",
                st.st_uid == NOBODY and st.st_gid == NOBODY,
                f"{st.st_uid}:{st.st_gid}")


def t_creat_write(s, d):
    s.group = "write"
    p = f"{d}/w"
    touch(p)
    tick()
    st0 = lst(p)
    tick()
    fd = os.open(p, os.O_WRONLY)
    os.write(fd, b"abc")
    os.close(fd)
    st1 = lst(p)
    s.check("write sets the size", st1.st_size == 3)
    s.check("write marks mtime", changed(st0, st1, "st_mtime_ns"))
    s.check("write marks ctime", changed(st0, st1, "st_ctime_ns"))
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"def")
    os.close(fd)
    s.check("O_APPEND writes at the end", read(p) == b"abcdef")
    fd = os.open(p, os.O_RDWR)
    os.pwrite(fd, b"Z", 10)
    os.close(fd)
    s.check("a write past the end leaves a hole of zeros",
            read(p) == b"abcdef\0\0\0\0Z")
    fd = os.open(p, os.O_RDONLY)
    s.err("write to a read-only descriptor: EBADF", "EBADF", os.write, fd, b"x")
    os.close(fd)


def t_mkdir(s, d):
    s.group = "mkdir"
    p = f"{d}/sub"
    old = os.umask(0o022)
    tick()
    dir0 = os.stat(d)
    tick()
    s.ok("mkdir creates", os.mkdir, p, 0o777)
    os.umask(old)
    st = lst(p)
    s.check("new directory is a directory", stat.S_ISDIR(st.st_mode))
    s.check("mode is mode & ~umask", stat.S_IMODE(st.st_mode) == 0o755,
            oct(st.st_mode))
    s.check("new directory has two links", st.st_nlink == 2, str(st.st_nlink))
    s.check("owner is the effective uid", st.st_uid == os.geteuid())
    dir1 = os.stat(d)
    s.check("mkdir adds a link to the parent",
            dir1.st_nlink == dir0.st_nlink + 1,
            f"{dir0.st_nlink} -> {dir1.st_nlink}")
    s.check("mkdir marks the parent's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("mkdir marks the parent's ctime", changed(dir0, dir1, "st_ctime_ns"))
    s.check("'..' is the parent", os.stat(f"{p}/..").st_ino == dir1.st_ino)
    s.check("'.' is itself", os.stat(f"{p}/.").st_ino == st.st_ino)
    s.check("new directory is empty", os.listdir(p) == [])
    s.err("existing directory: EEXIST", "EEXIST", os.mkdir, p)
    touch(f"{d}/file")
    s.err("existing file: EEXIST", "EEXIST", os.mkdir, f"{d}/file")
    os.symlink("nowhere", f"{d}/dl")
    s.err("existing dangling symlink: EEXIST", "EEXIST", os.mkdir, f"{d}/dl")
    s.err("missing parent: ENOENT", "ENOENT", os.mkdir, f"{d}/none/x")
    s.err("a file as parent: ENOTDIR", "ENOTDIR", os.mkdir, f"{d}/file/x")
    s.err("a name of 256 bytes: ENAMETOOLONG", "ENAMETOOLONG", os.mkdir,
          f"{d}/{'x' * 256}")
    user_err(s, "in a directory without write permission: EACCES", "EACCES",
             os.mkdir, f"{p}/u")


def t_rmdir(s, d):
    s.group = "rmdir"
    os.mkdir(f"{d}/a")
    tick()
    dir0 = os.stat(d)
    tick()
    s.ok("rmdir removes an empty directory", os.rmdir, f"{d}/a")
    s.check("it is gone", not os.path.lexists(f"{d}/a"))
    dir1 = os.stat(d)
    s.check("rmdir takes a link from the parent",
            dir1.st_nlink == dir0.st_nlink - 1,
            f"{dir0.st_nlink} -> {dir1.st_nlink}")
    s.check("rmdir marks the parent's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("rmdir marks the parent's ctime", changed(dir0, dir1, "st_ctime_ns"))
    os.mkdir(f"{d}/b")
    touch(f"{d}/b/f")
    s.err("non-empty: ENOTEMPTY", ("ENOTEMPTY", "EEXIST"), os.rmdir, f"{d}/b")
    s.err("a file: ENOTDIR", "ENOTDIR", os.rmdir, f"{d}/b/f")
    s.err("missing: ENOENT", "ENOENT", os.rmdir, f"{d}/none")
    s.err("'.': EINVAL", "EINVAL", os.rmdir, f"{d}/b/.")
    s.err("'..': ENOTEMPTY", ("ENOTEMPTY", "EEXIST", "EBUSY"), os.rmdir,
          f"{d}/b/..")
    os.mkdir(f"{d}/c")
    os.symlink("c", f"{d}/lc")
    s.err("a symlink to a directory: ENOTDIR", "ENOTDIR", os.rmdir, f"{d}/lc")
    s.check("the directory stays", os.path.isdir(f"{d}/c"))
    os.chmod(d, 0o755)
    user_err(s, "in a directory without write permission: EACCES", "EACCES",
             os.rmdir, f"{d}/c")


def t_unlink(s, d):
    s.group = "unlink"
    p = f"{d}/f"
    touch(p, b"data")
    tick()
    dir0 = os.stat(d)
    tick()
    s.ok("unlink removes a file", os.unlink, p)
    s.check("it is gone", not os.path.lexists(p))
    dir1 = os.stat(d)
    s.check("unlink marks the directory's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("unlink marks the directory's ctime", changed(dir0, dir1, "st_ctime_ns"))
    os.mkdir(f"{d}/dir")
    s.err("a directory: EISDIR (Linux)", ("EISDIR", "EPERM"), os.unlink, f"{d}/dir")
    s.err("missing: ENOENT", "ENOENT", os.unlink, f"{d}/none")
    touch(p)
    s.err("a file as directory: ENOTDIR", "ENOTDIR", os.unlink, f"{p}/x")
    touch(f"{d}/target", b"kept")
    os.symlink("target", f"{d}/link")
    s.ok("unlink of a symlink", os.unlink, f"{d}/link")
    s.check("removes the link", not os.path.lexists(f"{d}/link"))
    s.check("keeps its target", read(f"{d}/target") == b"kept")
    os.symlink("dir", f"{d}/ldir")
    s.ok("unlink of a symlink to a directory", os.unlink, f"{d}/ldir")
    s.check("keeps the directory", os.path.isdir(f"{d}/dir"))
    # An open file outlives its name.
    touch(p, b"still here")
    fd = os.open(p, os.O_RDWR)
    s.ok("unlink of an open file", os.unlink, p)
    s.check("its name is gone", not os.path.lexists(p))
    s.check("it is still readable", os.pread(fd, 100, 0) == b"still here")
    st = os.fstat(fd)
    s.check("fstat shows no link", st.st_nlink == 0, str(st.st_nlink))
    os.pwrite(fd, b"!", 10)
    s.check("it is still writable", os.pread(fd, 100, 0) == b"still here!")
    s.check("the directory does not list it",
            sorted(os.listdir(d)) == ["dir", "target"], str(os.listdir(d)))
    os.close(fd)
    s.check("the directory is unchanged after the last close",
            sorted(os.listdir(d)) == ["dir", "target"], str(os.listdir(d)))
    os.mkdir(f"{d}/sticky", 0o777)
    os.chmod(f"{d}/sticky", 0o1777)
    touch(f"{d}/sticky/root")
    user_err(s, "another's file in a sticky directory: EPERM", "EPERM",
             os.unlink, f"{d}/sticky/root")
    touch(f"{d}/sticky/mine")
    os.chown(f"{d}/sticky/mine", NOBODY, NOBODY)
    user_err(s, "one's own file in a sticky directory", "0",
             os.unlink, f"{d}/sticky/mine")


def t_link(s, d):
    s.group = "link"
    p, q = f"{d}/f", f"{d}/g"
    touch(p, b"shared")
    tick()
    st0 = lst(p)
    dir0 = os.stat(d)
    tick()
    if s.ok("link makes a second name", os.link, p, q) is None and \
            not os.path.lexists(q):
        return
    st1, stq = lst(p), lst(q)
    s.check("both names are one inode", st1.st_ino == stq.st_ino)
    s.check("the file has two links", st1.st_nlink == 2, str(st1.st_nlink))
    s.check("the new name shows two links", stq.st_nlink == 2, str(stq.st_nlink))
    s.check("link marks the file's ctime", changed(st0, st1, "st_ctime_ns"))
    s.check("link keeps the file's mtime", same(st0, st1, "st_mtime_ns"))
    dir1 = os.stat(d)
    s.check("link marks the directory's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("link marks the directory's ctime", changed(dir0, dir1, "st_ctime_ns"))
    s.check("link keeps the directory's link count",
            dir1.st_nlink == dir0.st_nlink)
    with open(q, "ab") as f:
        f.write(b"!")
    s.check("a write through one name shows through the other",
            read(p) == b"shared!")
    os.mkdir(f"{d}/sub")
    s.ok("link into another directory", os.link, p, f"{d}/sub/h")
    s.check("three links", lst(p).st_nlink == 3, str(lst(p).st_nlink))
    tick()
    st2 = lst(q)
    tick()
    s.ok("unlink of one name", os.unlink, p)
    st3 = lst(q)
    s.check("the others stay with one link less", st3.st_nlink == 2,
            str(st3.st_nlink))
    s.check("unlink of a name marks the file's ctime",
            changed(st2, st3, "st_ctime_ns"))
    s.check("the data stays", read(q) == b"shared!")
    os.unlink(f"{d}/sub/h")
    s.check("the last name has one link", lst(q).st_nlink == 1)
    s.check("and the data", read(q) == b"shared!")
    # A name removed while the file is open through another one.
    os.link(q, p)
    fd = os.open(q, os.O_RDONLY)
    os.unlink(q)
    s.check("an open file with a name left keeps its link count",
            os.fstat(fd).st_nlink == 1, str(os.fstat(fd).st_nlink))
    os.unlink(p)
    s.check("and loses it with its last name", os.fstat(fd).st_nlink == 0,
            str(os.fstat(fd).st_nlink))
    s.check("while it is still readable", os.pread(fd, 100, 0) == b"shared!")
    os.close(fd)
    touch(p)
    s.err("an existing name: EEXIST", "EEXIST", os.link, p, f"{d}/sub")
    touch(q)
    s.err("an existing file: EEXIST", "EEXIST", os.link, p, q)
    s.err("a missing source: ENOENT", "ENOENT", os.link, f"{d}/none", f"{d}/x")
    s.err("into a missing directory: ENOENT", "ENOENT", os.link, p,
          f"{d}/none/x")
    s.err("a directory: EPERM", "EPERM", os.link, f"{d}/sub", f"{d}/sub2")
    os.symlink("f", f"{d}/sl")
    s.ok("a symlink (not followed)", os.link, f"{d}/sl", f"{d}/sl2",
         follow_symlinks=False)
    if os.path.lexists(f"{d}/sl2"):
        s.check("links the symlink itself", stat.S_ISLNK(lst(f"{d}/sl2").st_mode))
        s.check("the symlink has two links", lst(f"{d}/sl").st_nlink == 2)
    os.mkfifo(f"{d}/fifo")
    s.ok("a fifo", os.link, f"{d}/fifo", f"{d}/fifo2")
    s.check("the fifo has two links", lst(f"{d}/fifo").st_nlink == 2)
    s.err("a name of 256 bytes: ENAMETOOLONG", "ENAMETOOLONG", os.link, p,
          f"{d}/{'x' * 256}")
    os.chmod(d, 0o755)
    os.chown(p, NOBODY, NOBODY)
    user_err(s, "into a directory without write permission: EACCES", "EACCES",
             os.link, p, f"{d}/byuser")


def t_symlink(s, d):
    s.group = "symlink"
    touch(f"{d}/t", b"target data")
    tick()
    dir0 = os.stat(d)
    tick()
    s.ok("symlink creates", os.symlink, "t", f"{d}/l")
    if not os.path.lexists(f"{d}/l"):
        return
    st = lst(f"{d}/l")
    s.check("lstat shows a symlink", stat.S_ISLNK(st.st_mode))
    s.check("its size is the target's length", st.st_size == 1, str(st.st_size))
    s.check("it has one link", st.st_nlink == 1)
    s.check("owner is the effective uid", st.st_uid == os.geteuid())
    dir1 = os.stat(d)
    s.check("symlink marks the directory's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("symlink marks the directory's ctime", changed(dir0, dir1, "st_ctime_ns"))
    s.check("readlink gives the target", os.readlink(f"{d}/l") == "t")
    s.check("stat follows it", os.stat(f"{d}/l").st_ino == lst(f"{d}/t").st_ino)
    s.check("open follows it", read(f"{d}/l") == b"target data")
    s.check("lstat and stat differ",
            os.stat(f"{d}/l").st_ino != lst(f"{d}/l").st_ino)
    s.ok("a dangling symlink", os.symlink, "nowhere/at/all", f"{d}/dl")
    s.err("stat of a dangling symlink: ENOENT", "ENOENT", os.stat, f"{d}/dl")
    s.check("lstat of a dangling symlink works",
            stat.S_ISLNK(lst(f"{d}/dl").st_mode))
    s.check("readlink of a dangling symlink", os.readlink(f"{d}/dl") ==
            "nowhere/at/all")
    absolute = os.path.abspath(f"{d}/t")
    s.ok("an absolute target", os.symlink, absolute, f"{d}/abs")
    s.check("is followed", read(f"{d}/abs") == b"target data")
    os.mkdir(f"{d}/dir")
    touch(f"{d}/dir/inner", b"in")
    os.symlink("dir", f"{d}/ld")
    s.check("a symlink to a directory is traversed",
            read(f"{d}/ld/inner") == b"in")
    s.check("listing through it", os.listdir(f"{d}/ld") == ["inner"])
    os.symlink("../t", f"{d}/dir/up")
    s.check("a relative target resolves from the link's directory",
            read(f"{d}/dir/up") == b"target data")
    os.symlink("dir/../ld/inner", f"{d}/chain")
    s.check("a chain of links and '..'", read(f"{d}/chain") == b"in")
    s.err("an existing name: EEXIST", "EEXIST", os.symlink, "x", f"{d}/t")
    s.err("an existing symlink: EEXIST", "EEXIST", os.symlink, "x", f"{d}/l")
    s.err("in a missing directory: ENOENT", "ENOENT", os.symlink, "x",
          f"{d}/none/l")
    s.err("a name of 256 bytes: ENAMETOOLONG", "ENAMETOOLONG", os.symlink,
          "x", f"{d}/{'x' * 256}")
    long_target = "a/" * 2047 + "b"     # 4095 bytes
    s.ok("a target of 4095 bytes", os.symlink, long_target, f"{d}/long")
    if os.path.lexists(f"{d}/long"):
        s.check("keeps all of it", os.readlink(f"{d}/long") == long_target)
        s.check("its size", lst(f"{d}/long").st_size == 4095)
    s.err("a target of 4096 bytes: ENAMETOOLONG", "ENAMETOOLONG", os.symlink,
          "a" * 4096, f"{d}/toolong")
    s.err("an empty target: ENOENT", "ENOENT", os.symlink, "", f"{d}/empty")
    os.symlink("self", f"{d}/self")
    s.err("a link to itself: ELOOP", "ELOOP", os.stat, f"{d}/self")
    os.symlink("la", f"{d}/lb")
    os.symlink("lb", f"{d}/la")
    s.err("two links to each other: ELOOP", "ELOOP", os.stat, f"{d}/la")
    s.err("a loop as a directory: ELOOP", "ELOOP", os.stat, f"{d}/la/x")
    names = ["t"] + [f"c{i}" for i in range(1, 51)]
    for i in range(1, len(names)):
        os.symlink(names[i - 1], f"{d}/{names[i]}")
    s.check("a chain of 30 links resolves",
            os.stat(f"{d}/c30").st_ino == lst(f"{d}/t").st_ino)
    s.err("a chain of 50 links: ELOOP", "ELOOP", os.stat, f"{d}/c50")
    s.err("readlink of a file: EINVAL", "EINVAL", os.readlink, f"{d}/t")
    s.err("readlink of a directory: EINVAL", "EINVAL", os.readlink, f"{d}/dir")
    s.err("readlink of a missing name: ENOENT", "ENOENT", os.readlink,
          f"{d}/none")
    user_err(s, "in a directory without write permission: EACCES", "EACCES",
             os.symlink, "t", f"{d}/byuser")
    # Owner and times of the link itself.
    s.ok("lchown changes the link", os.chown, f"{d}/l", NOBODY, NOBODY,
         follow_symlinks=False)
    s.check("the link's owner", lst(f"{d}/l").st_uid == NOBODY)
    s.check("not the target's", lst(f"{d}/t").st_uid == 0)
    s.ok("chown through the link", os.chown, f"{d}/l", 1, 1)
    s.check("changes the target", lst(f"{d}/t").st_uid == 1)
    s.check("not the link", lst(f"{d}/l").st_uid == NOBODY)
    s.ok("utimensat without following", os.utime, f"{d}/l",
         ns=(1000000000123, 2000000000456), follow_symlinks=False)
    st = lst(f"{d}/l")
    s.check("sets the link's times", st.st_atime_ns == 1000000000123 and
            st.st_mtime_ns == 2000000000456, f"{st.st_atime_ns} {st.st_mtime_ns}")
    s.check("not the target's", lst(f"{d}/t").st_mtime_ns != 2000000000456)
    os.chmod(f"{d}/l", 0o600)
    s.check("chmod through the link changes the target",
            stat.S_IMODE(lst(f"{d}/t").st_mode) == 0o600)
    s.check("and keeps the link's mode",
            stat.S_IMODE(lst(f"{d}/l").st_mode) == 0o777)


def t_rename(s, d):
    s.group = "rename"
    touch(f"{d}/a", b"A")
    ino = lst(f"{d}/a").st_ino
    tick()
    st0 = lst(f"{d}/a")
    dir0 = os.stat(d)
    tick()
    s.ok("rename a file", os.rename, f"{d}/a", f"{d}/b")
    s.check("the old name is gone", not os.path.lexists(f"{d}/a"))
    st1 = lst(f"{d}/b")
    s.check("the inode is kept", st1.st_ino == ino)
    s.check("the data is kept", read(f"{d}/b") == b"A")
    s.check("rename marks the file's ctime (Linux)", changed(st0, st1, "st_ctime_ns"))
    dir1 = os.stat(d)
    s.check("rename marks the directory's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("rename marks the directory's ctime", changed(dir0, dir1, "st_ctime_ns"))
    touch(f"{d}/c", b"C")
    s.ok("over an existing file", os.rename, f"{d}/b", f"{d}/c")
    s.check("replaces it", read(f"{d}/c") == b"A" and
            not os.path.lexists(f"{d}/b"))
    # Hard links.
    os.link(f"{d}/c", f"{d}/c2")
    s.ok("onto another name of the same file", os.rename, f"{d}/c", f"{d}/c2")
    s.check("does nothing: both names stay",
            os.path.lexists(f"{d}/c") and os.path.lexists(f"{d}/c2"))
    s.check("with two links", lst(f"{d}/c").st_nlink == 2)
    touch(f"{d}/n", b"N")
    s.ok("over a file with two names", os.rename, f"{d}/n", f"{d}/c2")
    s.check("the other name keeps the data", read(f"{d}/c") == b"A")
    s.check("with one link", lst(f"{d}/c").st_nlink == 1,
            str(lst(f"{d}/c").st_nlink))
    # Open target.
    touch(f"{d}/o", b"old")
    fd = os.open(f"{d}/o", os.O_RDONLY)
    touch(f"{d}/new", b"new")
    os.rename(f"{d}/new", f"{d}/o")
    s.check("over an open file: the name has the new data",
            read(f"{d}/o") == b"new")
    s.check("the open file keeps the old", os.pread(fd, 10, 0) == b"old")
    s.check("and has no link", os.fstat(fd).st_nlink == 0,
            str(os.fstat(fd).st_nlink))
    os.close(fd)
    # Directories.
    os.mkdir(f"{d}/d1")
    os.mkdir(f"{d}/d2")
    touch(f"{d}/d1/f")
    s.ok("a directory within its parent", os.rename, f"{d}/d1", f"{d}/d3")
    s.check("its content follows", os.path.exists(f"{d}/d3/f"))
    s.ok("over an empty directory", os.rename, f"{d}/d3", f"{d}/d2")
    s.check("replaces it", os.path.exists(f"{d}/d2/f"))
    os.mkdir(f"{d}/d4")
    s.err("over a non-empty directory: ENOTEMPTY", ("ENOTEMPTY", "EEXIST"),
          os.rename, f"{d}/d4", f"{d}/d2")
    touch(f"{d}/file")
    s.err("a directory over a file: ENOTDIR", "ENOTDIR", os.rename,
          f"{d}/d4", f"{d}/file")
    s.err("a file over a directory: EISDIR", "EISDIR", os.rename,
          f"{d}/file", f"{d}/d4")
    s.err("a directory into itself: EINVAL", "EINVAL", os.rename,
          f"{d}/d2", f"{d}/d2/sub")
    os.mkdir(f"{d}/d2/deep")
    s.err("a directory into its subtree: EINVAL", "EINVAL", os.rename,
          f"{d}/d2", f"{d}/d2/deep/x")
    s.err("a missing source: ENOENT", "ENOENT", os.rename, f"{d}/none",
          f"{d}/x")
    s.err("into a missing directory: ENOENT", "ENOENT", os.rename,
          f"{d}/file", f"{d}/none/x")
    os.mkdir(f"{d}/p1")
    os.mkdir(f"{d}/p2")
    os.mkdir(f"{d}/p1/m")
    tick()
    p10, p20 = os.stat(f"{d}/p1"), os.stat(f"{d}/p2")
    tick()
    s.ok("a directory to another parent", os.rename, f"{d}/p1/m", f"{d}/p2/m")
    p11, p21 = os.stat(f"{d}/p1"), os.stat(f"{d}/p2")
    s.check("the old parent loses a link", p11.st_nlink == p10.st_nlink - 1,
            f"{p10.st_nlink} -> {p11.st_nlink}")
    s.check("the new parent gains one", p21.st_nlink == p20.st_nlink + 1,
            f"{p20.st_nlink} -> {p21.st_nlink}")
    s.check("its '..' is the new parent",
            os.stat(f"{d}/p2/m/..").st_ino == p21.st_ino)
    s.check("marks the old parent's mtime", changed(p10, p11, "st_mtime_ns"))
    s.check("marks the new parent's mtime", changed(p20, p21, "st_mtime_ns"))
    touch(f"{d}/p1/f", b"moved")
    s.ok("a file to another directory", os.rename, f"{d}/p1/f", f"{d}/p2/f")
    s.check("arrives", read(f"{d}/p2/f") == b"moved")
    # Symlinks and special files.
    os.symlink("p2/f", f"{d}/sl")
    s.ok("a symlink", os.rename, f"{d}/sl", f"{d}/sl2")
    s.check("keeps its target", os.readlink(f"{d}/sl2") == "p2/f")
    s.check("still resolves", read(f"{d}/sl2") == b"moved")
    s.ok("a symlink into another directory", os.rename, f"{d}/sl2",
         f"{d}/p1/sl")
    s.check("a relative target now resolves from there",
            not os.path.exists(f"{d}/p1/sl"))
    touch(f"{d}/victim")
    s.ok("a symlink over a file", os.rename, f"{d}/p1/sl", f"{d}/victim")
    s.check("the name is now the link", stat.S_ISLNK(lst(f"{d}/victim").st_mode))
    os.mkfifo(f"{d}/fifo")
    s.ok("a fifo", os.rename, f"{d}/fifo", f"{d}/fifo2")
    s.check("stays a fifo", stat.S_ISFIFO(lst(f"{d}/fifo2").st_mode))
    os.chmod(f"{d}/p2", 0o755)
    user_err(s, "from a directory without write permission: EACCES", "EACCES",
             os.rename, f"{d}/p2/f", f"{d}/p2/g")


def t_mknod(s, d):
    s.group = "mknod"
    old = os.umask(0o022)
    tick()
    dir0 = os.stat(d)
    tick()
    s.ok("mkfifo creates", os.mkfifo, f"{d}/fifo", 0o666)
    os.umask(old)
    if not os.path.lexists(f"{d}/fifo"):
        return
    st = lst(f"{d}/fifo")
    s.check("a fifo", stat.S_ISFIFO(st.st_mode))
    s.check("mode is mode & ~umask", stat.S_IMODE(st.st_mode) == 0o644,
            oct(st.st_mode))
    s.check("one link", st.st_nlink == 1)
    s.check("size 0", st.st_size == 0)
    dir1 = os.stat(d)
    s.check("mkfifo marks the directory's mtime", changed(dir0, dir1, "st_mtime_ns"))
    s.check("mkfifo marks the directory's ctime", changed(dir0, dir1, "st_ctime_ns"))
    s.err("mkfifo of an existing name: EEXIST", "EEXIST", os.mkfifo,
          f"{d}/fifo")
    # A fifo passes data between processes of this machine.
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(f"{d}/fifo", os.O_WRONLY)
            os.write(fd, b"through the pipe")
            os.close(fd)
        finally:
            os._exit(0)
    fd = os.open(f"{d}/fifo", os.O_RDONLY)
    data = b""
    while True:
        chunk = os.read(fd, 100)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    os.waitpid(pid, 0)
    s.check("a fifo carries data", data == b"through the pipe", repr(data))
    s.ok("mknod of a character device", os.mknod, f"{d}/chr",
         stat.S_IFCHR | 0o600, os.makedev(1, 3))
    if os.path.lexists(f"{d}/chr"):
        st = lst(f"{d}/chr")
        s.check("a character device", stat.S_ISCHR(st.st_mode))
        s.check("with its number", st.st_rdev == os.makedev(1, 3),
                f"{os.major(st.st_rdev)},{os.minor(st.st_rdev)}")
    s.ok("mknod of a block device", os.mknod, f"{d}/blk",
         stat.S_IFBLK | 0o600, os.makedev(259, 70000))
    if os.path.lexists(f"{d}/blk"):
        st = lst(f"{d}/blk")
        s.check("a block device", stat.S_ISBLK(st.st_mode))
        s.check("with its number (large minor)",
                st.st_rdev == os.makedev(259, 70000),
                f"{os.major(st.st_rdev)},{os.minor(st.st_rdev)}")
    s.ok("mknod of a fifo", os.mknod, f"{d}/fifo3", stat.S_IFIFO | 0o600)
    s.check("a fifo", stat.S_ISFIFO(lst(f"{d}/fifo3").st_mode))
    s.ok("mknod of a regular file", os.mknod, f"{d}/reg", stat.S_IFREG | 0o600)
    s.check("a regular empty file", stat.S_ISREG(lst(f"{d}/reg").st_mode) and
            lst(f"{d}/reg").st_size == 0)
    s.ok("mknod of a socket", os.mknod, f"{d}/sock0", stat.S_IFSOCK | 0o600)
    s.check("a socket", stat.S_ISSOCK(lst(f"{d}/sock0").st_mode))
    sk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.ok("bind of a unix socket", sk.bind, f"{d}/sock")
        if os.path.lexists(f"{d}/sock"):
            s.check("makes a socket", stat.S_ISSOCK(lst(f"{d}/sock").st_mode))
            sk.listen(1)
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.ok("connect through its name", c.connect, f"{d}/sock")
            conn, _ = sk.accept()
            c.sendall(b"hello")
            s.check("carries data", conn.recv(10) == b"hello")
            conn.close()
            c.close()
        s.err("bind over an existing name: EADDRINUSE", "EADDRINUSE",
              socket.socket(socket.AF_UNIX).bind, f"{d}/fifo")
    finally:
        sk.close()
    s.err("mknod in a missing directory: ENOENT", "ENOENT", os.mkfifo,
          f"{d}/none/f")
    s.ok("unlink of a fifo", os.unlink, f"{d}/fifo3")
    s.check("is gone", not os.path.lexists(f"{d}/fifo3"))
    s.ok("chmod of a fifo", os.chmod, f"{d}/fifo", 0o600)
    s.check("changes its mode", stat.S_IMODE(lst(f"{d}/fifo").st_mode) == 0o600)
    s.check("keeps it a fifo", stat.S_ISFIFO(lst(f"{d}/fifo").st_mode))
    os.mkdir(f"{d}/open", 0o777)
    os.chmod(f"{d}/open", 0o777)
    user_err(s, "mknod of a device as a user: EPERM", "EPERM", os.mknod,
             f"{d}/open/udev", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    user_err(s, "mkfifo as a user", "0", os.mkfifo, f"{d}/open/ufifo")
    if os.path.lexists(f"{d}/open/ufifo"):
        s.check("owned by the user", lst(f"{d}/open/ufifo").st_uid == NOBODY)


def t_chmod(s, d):
    s.group = "chmod"
    p = f"{d}/f"
    touch(p)
    tick()
    st0 = lst(p)
    tick()
    s.ok("chmod", os.chmod, p, 0o640)
    st1 = lst(p)
    s.check("sets the permission bits", stat.S_IMODE(st1.st_mode) == 0o640)
    s.check("keeps the kind", stat.S_ISREG(st1.st_mode))
    s.check("marks ctime", changed(st0, st1, "st_ctime_ns"))
    s.check("keeps mtime", same(st0, st1, "st_mtime_ns"))
    s.ok("set-user-ID, set-group-ID, sticky", os.chmod, p, 0o7777)
    s.check("all twelve bits", stat.S_IMODE(lst(p).st_mode) == 0o7777,
            oct(lst(p).st_mode))
    os.mkdir(f"{d}/dir")
    s.ok("chmod of a directory", os.chmod, f"{d}/dir", 0o1700)
    s.check("sets its bits", stat.S_IMODE(lst(f"{d}/dir").st_mode) == 0o1700)
    s.err("missing: ENOENT", "ENOENT", os.chmod, f"{d}/none", 0o644)
    s.err("a file as directory: ENOTDIR", "ENOTDIR", os.chmod, f"{p}/x", 0o644)
    os.chmod(p, 0o644)
    user_err(s, "another's file: EPERM", "EPERM", os.chmod, p, 0o666)
    os.chown(p, NOBODY, NOBODY)
    user_err(s, "one's own file", "0", os.chmod, p, 0o600)
    s.check("changed by its owner", stat.S_IMODE(lst(p).st_mode) == 0o600)
    os.chown(p, NOBODY, 0)
    user_err(s, "set-group-ID by a non-member", "0", os.chmod, p, 0o2755)
    s.check("is dropped", stat.S_IMODE(lst(p).st_mode) == 0o755,
            oct(lst(p).st_mode))
    fd = os.open(p, os.O_RDONLY)
    s.ok("fchmod", os.fchmod, fd, 0o604)
    os.close(fd)
    s.check("sets the bits", stat.S_IMODE(lst(p).st_mode) == 0o604)


def t_chown(s, d):
    s.group = "chown"
    p = f"{d}/f"
    touch(p)
    tick()
    st0 = lst(p)
    tick()
    s.ok("chown", os.chown, p, 123, 456)
    st1 = lst(p)
    s.check("sets owner and group", st1.st_uid == 123 and st1.st_gid == 456)
    s.check("marks ctime", changed(st0, st1, "st_ctime_ns"))
    s.check("keeps mtime", same(st0, st1, "st_mtime_ns"))
    s.ok("-1 keeps the owner", os.chown, p, -1, 789)
    st = lst(p)
    s.check("and sets the group", st.st_uid == 123 and st.st_gid == 789)
    s.ok("-1 keeps the group", os.chown, p, 321, -1)
    st = lst(p)
    s.check("and sets the owner", st.st_uid == 321 and st.st_gid == 789)
    os.chmod(p, 0o6755)
    os.chown(p, 5, 5)
    s.check("chown clears set-user-ID and set-group-ID (Linux)",
            stat.S_IMODE(lst(p).st_mode) == 0o755, oct(lst(p).st_mode))
    os.mkdir(f"{d}/dir")
    s.ok("a directory", os.chown, f"{d}/dir", 7, 8)
    s.check("sets it", lst(f"{d}/dir").st_uid == 7)
    s.err("missing: ENOENT", "ENOENT", os.chown, f"{d}/none", 1, 1)
    os.chown(p, 0, 0)
    user_err(s, "giving away another's file: EPERM", "EPERM", os.chown, p,
             NOBODY, NOBODY)
    os.chown(p, NOBODY, NOBODY)
    user_err(s, "giving away one's own file: EPERM", "EPERM", os.chown, p,
             0, -1)
    user_err(s, "to one's own group", "0", os.chown, p, -1, NOBODY)
    fd = os.open(p, os.O_RDONLY)
    s.ok("fchown", os.fchown, fd, 11, 12)
    os.close(fd)
    s.check("sets it", lst(p).st_uid == 11 and lst(p).st_gid == 12)


def t_truncate(s, d):
    s.group = "truncate"
    p = f"{d}/f"
    touch(p, b"0123456789")
    tick()
    st0 = lst(p)
    tick()
    s.ok("truncate shrinks", os.truncate, p, 4)
    st1 = lst(p)
    s.check("to the size", st1.st_size == 4)
    s.check("keeping the start", read(p) == b"0123")
    s.check("marks mtime", changed(st0, st1, "st_mtime_ns"))
    s.check("marks ctime", changed(st0, st1, "st_ctime_ns"))
    s.ok("truncate grows", os.truncate, p, 1 << 20)
    s.check("to the size", lst(p).st_size == 1 << 20)
    data = read(p)
    s.check("with zeros", data[:4] == b"0123" and data[4:] == bytes((1 << 20) - 4))
    s.ok("truncate to 0", os.truncate, p, 0)
    s.check("empties", lst(p).st_size == 0 and read(p) == b"")
    s.err("a directory: EISDIR", "EISDIR", os.truncate, d, 0)
    s.err("missing: ENOENT", "ENOENT", os.truncate, f"{d}/none", 0)
    s.err("a negative size: EINVAL", "EINVAL", os.truncate, p, -1)
    os.symlink("f", f"{d}/l")
    s.ok("through a symlink", os.truncate, f"{d}/l", 3)
    s.check("truncates the target", lst(p).st_size == 3)
    os.mkfifo(f"{d}/fifo")
    s.err("a fifo: EINVAL", "EINVAL", os.truncate, f"{d}/fifo", 0)
    os.chmod(p, 0o644)
    user_err(s, "without write permission: EACCES", "EACCES", os.truncate, p, 0)
    s.group = "ftruncate"
    touch(p, b"abcdef")
    fd = os.open(p, os.O_RDWR)
    tick()
    st0 = os.fstat(fd)
    tick()
    s.ok("ftruncate shrinks", os.ftruncate, fd, 2)
    st1 = os.fstat(fd)
    s.check("to the size", st1.st_size == 2 and read(p) == b"ab")
    s.check("marks mtime", changed(st0, st1, "st_mtime_ns"))
    s.check("marks ctime", changed(st0, st1, "st_ctime_ns"))
    s.ok("ftruncate grows", os.ftruncate, fd, 100)
    s.check("with zeros", read(p) == b"ab" + bytes(98))
    os.close(fd)
    fd = os.open(p, os.O_RDONLY)
    s.err("a read-only descriptor: EINVAL", ("EINVAL", "EBADF"), os.ftruncate,
          fd, 0)
    os.close(fd)
    touch(f"{d}/g", b"open and gone")
    fd = os.open(f"{d}/g", os.O_RDWR)
    os.unlink(f"{d}/g")
    s.ok("an unlinked open file", os.ftruncate, fd, 4)
    s.check("is truncated", os.pread(fd, 100, 0) == b"open")
    os.close(fd)


def t_utimensat(s, d):
    s.group = "utimensat"
    p = f"{d}/f"
    touch(p)
    tick()
    st0 = lst(p)
    tick()
    s.ok("explicit times", os.utime, p, ns=(1234567890123456789, 987654321))
    st = lst(p)
    s.check("sets atime to the nanosecond", st.st_atime_ns == 1234567890123456789,
            str(st.st_atime_ns))
    s.check("sets mtime to the nanosecond", st.st_mtime_ns == 987654321,
            str(st.st_mtime_ns))
    s.check("marks ctime", changed(st0, st, "st_ctime_ns"))
    tick()
    before = time.time_ns()
    s.ok("both now", os.utime, p)
    st = lst(p)
    s.check("sets atime to now", abs(st.st_atime_ns - before) < 5 * 10**9)
    s.check("sets mtime to now", abs(st.st_mtime_ns - before) < 5 * 10**9)
    os.utime(p, ns=(10**9, 2 * 10**9))
    # UTIME_OMIT and UTIME_NOW through utimensat(2) need ctypes.
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)

        class Timespec(ctypes.Structure):
            _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
        UTIME_NOW, UTIME_OMIT, AT_FDCWD = (1 << 30) - 1, (1 << 30) - 2, -100
        ts = (Timespec * 2)(Timespec(0, UTIME_OMIT), Timespec(5, 0))
        rc = libc.utimensat(AT_FDCWD, p.encode(), ts, 0)
        st = lst(p)
        s.check("UTIME_OMIT keeps atime", rc == 0 and st.st_atime_ns == 10**9,
                f"rc {rc}, {st.st_atime_ns}")
        s.check("while mtime is set", st.st_mtime_ns == 5 * 10**9)
        ts = (Timespec * 2)(Timespec(0, UTIME_NOW), Timespec(0, UTIME_OMIT))
        rc = libc.utimensat(AT_FDCWD, p.encode(), ts, 0)
        st = lst(p)
        s.check("UTIME_NOW sets atime only", rc == 0 and
                st.st_atime_ns > 10**18 and st.st_mtime_ns == 5 * 10**9,
                f"rc {rc}, {st.st_atime_ns} {st.st_mtime_ns}")
    except OSError:
        s.check("utimensat through libc", False, "no libc")
    s.err("missing: ENOENT", "ENOENT", os.utime, f"{d}/none")
    os.chmod(p, 0o666)
    user_err(s, "now, by a writer who is not the owner", "0", os.utime, p)
    user_err(s, "explicit times by a non-owner: EPERM", "EPERM",
             lambda: os.utime(p, ns=(1, 1)))
    os.chmod(p, 0o644)
    user_err(s, "now, by a non-owner without write permission: EACCES",
             "EACCES", os.utime, p)
    os.mkdir(f"{d}/dir")
    s.ok("a directory", os.utime, f"{d}/dir", ns=(3 * 10**9, 4 * 10**9))
    s.check("sets its times", lst(f"{d}/dir").st_mtime_ns == 4 * 10**9)


def t_stat(s, d):
    s.group = "stat"
    p = f"{d}/f"
    touch(p, b"x" * 5000)
    st = lst(p)
    s.check("st_size", st.st_size == 5000)
    s.check("st_blocks covers the size", st.st_blocks * 512 >= 5000)
    s.check("st_nlink of a file", st.st_nlink == 1)
    s.check("st_ino is not 0", st.st_ino != 0)
    s.check("st_ino is stable", lst(p).st_ino == st.st_ino)
    os.mkdir(f"{d}/a")
    os.mkdir(f"{d}/a/b")
    os.mkdir(f"{d}/a/c")
    touch(f"{d}/a/f")
    s.check("st_nlink of a directory is 2 + subdirectories",
            lst(f"{d}/a").st_nlink == 4, str(lst(f"{d}/a").st_nlink))
    fd = os.open(p, os.O_RDONLY)
    s.check("fstat and stat agree", os.fstat(fd).st_ino == st.st_ino and
            os.fstat(fd).st_size == 5000)
    os.close(fd)
    s.check("st_dev is that of the directory", st.st_dev == os.stat(d).st_dev)
    names = sorted(os.listdir(f"{d}/a"))
    s.check("readdir lists each entry once", names == ["b", "c", "f"], str(names))
    kinds = {e.name: (e.is_dir(follow_symlinks=False),
                      e.is_symlink()) for e in os.scandir(d)}
    os.symlink("f", f"{d}/l")
    os.mkfifo(f"{d}/p")
    kinds = {e.name: e for e in os.scandir(d)}
    s.check("readdir gives a symlink's type", kinds["l"].is_symlink())
    s.check("readdir gives a directory's type",
            kinds["a"].is_dir(follow_symlinks=False))
    s.check("readdir gives a fifo's type",
            stat.S_ISFIFO(kinds["p"].stat(follow_symlinks=False).st_mode))
    s.check("readdir's inode numbers are lstat's",
            kinds["l"].inode() == lst(f"{d}/l").st_ino)


TESTS = [t_open, t_creat_write, t_mkdir, t_rmdir, t_unlink, t_link,
         t_symlink, t_rename, t_mknod, t_chmod, t_chown, t_truncate,
         t_utimensat, t_stat]


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    only = None
    if "-k" in args:
        only = args[args.index("-k") + 1]
    dirs = [a for a in args if not a.startswith("-") and a != only]
    if len(dirs) != 1 or os.geteuid() != 0:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    s = Suite(verbose, only)
    base = os.path.join(dirs[0], f"posix.{os.getpid()}")
    os.mkdir(base, 0o755)
    os.chmod(base, 0o755)
    start = time.monotonic()
    for t in TESTS:
        if only and only not in t.__name__:
            continue
        d = os.path.join(base, t.__name__[2:])
        os.mkdir(d)
        os.chmod(d, 0o755)
        try:
            t(s, d)
        except Exception as e:      # a crash of the suite is a failure too
            s.check(f"{t.__name__} ran to its end", False, repr(e))
    secs = time.monotonic() - start
    for k in s.known_passed:
        print(f"NOTE: known failure passes now (remove it from the list): {k}")
    print(f"posix: {s.passed} passed, {len(s.failed)} failed, "
          f"{s.known} known failures ({secs:.1f} s)")
    for k, why in KNOWN_FAILURES.items():
        print(f"  known: {k}: {why}")
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
