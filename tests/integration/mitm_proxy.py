#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""mitm_proxy.py -- a man in the middle between clf clients and one
daemon, for test_protect.sh.

    mitm_proxy.py LISTEN_PORT TARGET_PORT TAG MODE CAPTURE

Relays every connection to 127.0.0.1:TARGET_PORT and appends every byte
that crosses it, both ways, to CAPTURE.  It reads the client's messages
(32-byte header, payload_len at offset 20, then TAG more bytes of tag
after the handshake's first two messages) and, with MODE "flip", flips
one payload byte of the first message after the handshake whose payload
is over 4 KiB (a write's data) on each connection.  MODE "pass" changes
nothing.  Prints its port when listening.
"""
import socket
import struct
import sys
import threading

HEADER = 32


def read_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def pump_raw(src, dst, cap, lock):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            with lock:
                cap.write(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def pump_client(src, dst, tag, mode, cap, lock):
    n = 0
    flipped = False
    try:
        while True:
            head = read_exact(src, HEADER)
            if head is None:
                break
            (plen,) = struct.unpack_from("<I", head, 20)
            rest = read_exact(src, plen + (tag if n >= 2 else 0))
            if rest is None:
                break
            if mode == "flip" and n >= 2 and not flipped and plen > 4096:
                rest = bytearray(rest)
                rest[plen // 2] ^= 0x01
                rest = bytes(rest)
                flipped = True
                print("flipped a byte of message %d" % n, flush=True)
            n += 1
            with lock:
                cap.write(head + rest)
            dst.sendall(head + rest)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    port, target, tag, mode, capture = sys.argv[1:6]
    tag = int(tag)
    cap = open(capture, "ab", buffering=0)
    lock = threading.Lock()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(port)))
    ls.listen(16)
    print("listening %d" % ls.getsockname()[1], flush=True)
    while True:
        c, _ = ls.accept()
        s = socket.create_connection(("127.0.0.1", int(target)))
        threading.Thread(target=pump_client,
                         args=(c, s, tag, mode, cap, lock),
                         daemon=True).start()
        threading.Thread(target=pump_raw, args=(s, c, cap, lock),
                         daemon=True).start()


if __name__ == "__main__":
    main()
