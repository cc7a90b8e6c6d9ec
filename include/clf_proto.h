/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clf_proto.h -- the clf wire protocol, shared by the client library,
 * metad, the iods and the tools.
 *
 * This header is the contract between components built at different times:
 * numbers written here never change meaning.  Nothing is sent as a C
 * struct; every field is encoded explicitly, little-endian, by the codec
 * of libclf/runtime/proto.h, where each body is declared once as a list
 * of its fields (a field appended to a body in a new minor is one TAIL
 * line there: libclf/runtime/proto_decl.h).
 *
 * Changelog
 * ---------
 *   1.0  first version: header, authentication, metad namespace and layout
 *        operations, iod subfile and view operations, PING and STATUS.
 *   1.1  POSIX byte-range locks served by metad: SETLK, GETLK,
 *        UNLOCK_OWNER (not durable: see "Locks" below).
 *   1.2  large layouts and views: an encoded type may hold
 *        CLF_TYPE_MAX_NODES = 2^19 FALLS (1.1: 65536), and the types of
 *        one layout together CLF_PROTO_LAYOUT_TYPES_MAX bytes (1.1: metad
 *        took 32 MiB).  Encodings are unchanged; a 1.1 receiver refuses a
 *        larger type with -E2BIG and a message naming the limit.
 *   1.3  SUB_SIZES: the lengths of subfiles, from which clients derive
 *        the file size (see "Size" below).
 *   1.4  request identities: the REQ_ID flag on a metad request that
 *        changes something, and metad's reply cache (see "Retries"
 *        below).
 *   1.5  APPEND: metad reserves the range of an O_APPEND write, so that
 *        appends of different clients never overlap (see "Appends").
 *   1.6  POSIX objects: SYMLINK, READLINK, LINK (hard links: a
 *        non-directory's nlink counts its names) and MKNOD (fifos,
 *        sockets, device nodes); see "Special files" below.  attr.mode
 *        may then carry S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK.
 *   1.7  user credentials and permissions (see "Identity" below):
 *        MUNGE_RESPONSE authenticates a connection with a MUNGE credential
 *        instead of the secret; the CRED header flag lets a connection
 *        that holds the secret act for a user; LOOKUP and CREATE flags
 *        OPEN_READ / OPEN_WRITE ask metad to check an open.
 *   1.8  message protection and capabilities (see "Protection" and
 *        "Capabilities" below): HELLO and CHALLENGE end with the
 *        protection level and an X25519 key share; every message after
 *        the handshake then carries a tag; LOOKUP and CREATE replies to
 *        an open carry a capability, CAP hands it to an iod.
 *   1.9  SUB_LIST: an iod lists the subfiles it stores and their lengths,
 *        for `clf fsck` (connections that hold the secret only); a
 *        SUB_WRITE of 0 bytes creates its subfile when it is missing.
 *   1.10 INSTANCE: metad tells any authenticated client the instance's
 *        iods (addresses by index) and defaults, so that a client named
 *        by clf://HOST:PORT needs no configuration file.
 *   1.11 SUB_READV and SUB_WRITEV: several ranges of the subfiles of one
 *        file in one request (see "Vectors" below), so that a small
 *        access in many pieces costs one request per iod, not one per
 *        piece.
 *   1.12 a namespace spread over several metads (see "Several metads"
 *        below): RESOLVE walks a path as far as one metad holds it;
 *        MD_PEER carries what metads ask each other; status -EREMOTE
 *        says an entry's inode lives on another metad.
 *   1.13 LOCK_CALLBACK, LOCK_ENQUEUE, LOCK_RELEASE and the iod's REVOKE:
 *        extent locks for clients that cache (see "Extent locks").
 *   1.14 READDIRPLUS: directory entries with their attributes (and, when
 *        asked, the layouts of regular files), so that `ls -l` costs one
 *        round trip per page, not one per entry.
 *   1.15 SUB_SIZES_MANY: the lengths of subfiles of many files in one
 *        request, to derive the sizes of a READDIRPLUS page at once.
 *   1.16 REMOVE_MANY: metad removes the subfiles of many removed files
 *        from an iod in one request (its durable removal queue).
 *   1.17 the INSTANCE reply ends with the answering metad's index and the
 *        addresses of the instance's metads by index, so that a client
 *        named by clf://HOST:PORT reaches a namespace over several.
 *   1.18 FENCE: the mover of `clf iod remove` stops writes (then reads)
 *        of a file at the iod its subfiles leave; clients see -ESTALE
 *        and ask metad for the layout again.
 *   1.19 SUB_MOVE: metad records a subfile's move between iods (a
 *        durable intent) and names its new iod (the commit).
 *   1.20 CLF_PROTO_VIEW_AGAIN: a collective request sent again after its
 *        iod broke off; a restarted iod serves it alone when its
 *        operation already ran (the others had their replies).
 *   1.21 CREATE flag CLF_PROTO_CREATE_PLAIN: create only in a directory
 *        without a default layout, so that a create costs one round trip
 *        where the client had to look the directory's default up after it.
 *   1.22 IOD_STATE: `clf iod remove` retires an iod at metad (no new
 *        subfiles go there) and `clf iod add N` brings it back; an
 *        EXPLICIT layout of a CREATE or SET_LAYOUT may leave a subfile's
 *        iod (and disp_iod) to metad with CLF_PROTO_IOD_DEFAULT.
 *   1.23 IOD_STATE JOIN (CLF_PROTO_IOD_JOIN): metad reads its
 *        configuration again and serves the iods appended to it, without
 *        a restart (`clf iod add` of a new iod).
 *   1.24 VIEW_MERGED: a forwarder (`clf forward`) that holds the secret
 *        hands an iod the collective requests of several relayed
 *        connections in one message (see "Merged collectives" below).
 *   1.25 STATUS reply: an iod's RDMA receive pool, its buffers and how
 *        many are posted now (`clf status --json`), so that a pool that
 *        loses buffers shows.
 *   1.26 strided extent locks: LOCK_ENQUEUE and its grant may carry a
 *        stride and a block (see "Extent locks"), so that processes
 *        interleaving small accesses each hold a lock over their own
 *        blocks instead of passing one lock back and forth.
 *   1.27 extent locks strided in the file's bytes: LOCK_ENQUEUE and its
 *        grant may say that the stride and block count file offsets,
 *        from a phase (see "Extent locks"): IOR's 47008-byte segments
 *        over 64 KiB stripes are strided in the file, not in a subfile.
 *
 * Version negotiation
 * -------------------
 *   Every header carries (major, minor).  The first 8 bytes of the header
 *   (magic, major, minor) keep this layout in every future version, so any
 *   two peers can always tell each other apart.
 *   - The major version must be equal: a receiver refuses a message with
 *     another major (-EPROTONOSUPPORT).  A server that receives a HELLO of
 *     another major answers with status -EPROTONOSUPPORT, in its own version,
 *     and closes the connection.
 *   - A minor version only adds: new opcodes, new flag bits, new fields
 *     appended at the end of a body.  HELLO and CHALLENGE carry each side's
 *     (major, minor); both then use minor = min(client minor, server minor)
 *     for the rest of the connection and never send what that minor lacks.
 *   - A receiver answers an opcode it does not know with status -ENOSYS and
 *     keeps the connection.
 *   - Receivers refuse unknown flag bits, unknown mask bits and trailing
 *     bytes after a body (-EPROTO): under the rules above a correct peer never
 *     sends them.
 *
 * Conversation
 * ------------
 *   Each connection starts with authentication (HELLO, CHALLENGE, RESPONSE,
 *   AUTH_OK; libclf/runtime/auth.h) and then carries requests and their replies.
 *   A reply has the request's opcode and request id, the REPLY flag, and a
 *   status: 0, or a negative errno with an optional error body (a message
 *   for the user) instead of the reply body.  Requests have status 0.
 *   The only replies with another opcode: HELLO is answered by CHALLENGE
 *   and RESPONSE by AUTH_OK, also when their status is negative.
 *   Replies on one connection come in request order unless a server says
 *   otherwise; clients match them by request id.
 *
 * Encoding of variable-size fields
 * --------------------------------
 *   str16    u16 length + bytes; no NUL terminator, no NUL inside.
 *   bytes32  u32 length + bytes.
 *   A "name" is one path component: 1..CLF_PROTO_NAME_MAX bytes, no '/',
 *   not "." or "..".  A "path" is names joined by single '/', relative to a
 *   directory inode (no leading, trailing or double '/'); clients normalise
 *   "." and ".." before sending.
 *   Times are i64 nanoseconds since the Unix epoch.  Modes use the
 *   traditional POSIX values (S_IFDIR 0040000, S_IFREG 0100000, permission
 *   bits 07777).
 */
#ifndef CLF_PROTO_H
#define CLF_PROTO_H

#include <stdint.h>

#include "clf.h"

#define CLF_PROTO_MAGIC 0x31464c43u /* "CLF1" as bytes on the wire */
#define CLF_PROTO_VERSION_MAJOR 1
#define CLF_PROTO_VERSION_MINOR 27

/*
 * Message header, 32 bytes, every field little-endian:
 *
 *   offset  size  field
 *    0      u32   magic        CLF_PROTO_MAGIC
 *    4      u16   major        CLF_PROTO_VERSION_MAJOR of the sender
 *    6      u16   minor        the negotiated minor (the sender's own in
 *                              HELLO and CHALLENGE)
 *    8      u16   opcode       enum clf_proto_op
 *   10      u16   flags        CLF_PROTO_FLAG_*
 *   12      u64   id           request id, chosen by the requester, echoed
 *   20      u32   payload_len  bytes after the header,
 *                              <= CLF_PROTO_PAYLOAD_MAX
 *   24      i32   status       0, or a negative errno in a reply
 *   28      u32   reserved     sent as 0, ignored on receipt
 */
#define CLF_PROTO_HEADER_SIZE 32
_Static_assert(4 + 2 + 2 + 2 + 2 + 8 + 4 + 4 + 4 == CLF_PROTO_HEADER_SIZE,
	       "header fields must add up to CLF_PROTO_HEADER_SIZE");

#define CLF_PROTO_FLAG_REPLY 0x0001u	/* this message answers a request */
/* Since 1.4, metad requests only: the body starts with a request
 * identity (see "Retries" below). */
#define CLF_PROTO_FLAG_REQ_ID 0x0002u
/* Since 1.7: the payload starts with a cred prefix (see "Identity"). */
#define CLF_PROTO_FLAG_CRED 0x0004u
#define CLF_PROTO_FLAGS_KNOWN 0x0007u

/* ------------------------------------------------------------------ */
/* Limits on everything variable-sized                                 */
/* ------------------------------------------------------------------ */

#define CLF_PROTO_NAME_MAX 255		/* bytes in one path component */
#define CLF_PROTO_PATH_MAX 4096		/* bytes in a path */
#define CLF_PROTO_ROLE_MAX 32		/* bytes in the HELLO role string */
#define CLF_PROTO_ADDR_MAX 272		/* "host:port" of a daemon (a DNS name
					   of 253, brackets, ':', 5 digits) */
#define CLF_PROTO_ERRMSG_MAX 1024	/* bytes in an error reply's message */
#define CLF_PROTO_READDIR_MAX 1024	/* entries in one READDIR reply */
/* Bytes of the entries of one READDIRPLUS reply: metad ends a page
 * before the entry that would pass it (never before the first). */
#define CLF_PROTO_READDIRPLUS_BYTES (1u << 20)
/* (file, subfile) pairs in one SUB_SIZES_MANY, files in one REMOVE_MANY */
#define CLF_PROTO_SUB_BATCH_MAX 1024
#define CLF_PROTO_MAX_SUBFILES 1024	/* subfiles of one file */
#define CLF_PROTO_MAX_IODS 1024		/* iod indexes: 0..MAX_IODS-1 */
#define CLF_PROTO_STRIPE_MAX (1u << 30) /* round-robin stripe size, bytes */
#define CLF_PROTO_MAX_PARTICIPANTS (1u << 20) /* processes in a collective */
#define CLF_PROTO_NONCE_SIZE 32
#define CLF_PROTO_MAC_SIZE 32		/* HMAC-SHA256 */
#define CLF_PROTO_KX_SIZE 32		/* X25519 public key (1.8) */
#define CLF_PROTO_MUNGE_CRED_MAX 1024	/* bytes of a MUNGE credential (one
					   with a 32-byte payload is ~150) */
/* Bulk data in one SUB_READ/SUB_WRITE/VIEW_READ/VIEW_WRITE, and the
 * largest view range [lo, hi) one VIEW_READ/VIEW_WRITE may name. */
#define CLF_PROTO_DATA_MAX (64u << 20)
/* Room for the fixed fields that come with the largest data. */
#define CLF_PROTO_PAYLOAD_MAX (CLF_PROTO_DATA_MAX + (64u << 10))
#define CLF_PROTO_MESSAGE_MAX (CLF_PROTO_HEADER_SIZE + CLF_PROTO_PAYLOAD_MAX)
/*
 * An encoded CLF type (CLF_Type_encode) is a 16-byte header plus, per set,
 * a u32 count and 33 bytes per FALLS; a type has at most
 * CLF_TYPE_MAX_NODES FALLS and no more sets than FALLS.
 */
#define CLF_PROTO_TYPE_MAX_BYTES (16u + 37u * CLF_TYPE_MAX_NODES)
/* VIEW_REGISTER carries two types with their fixed fields. */
_Static_assert(8 + 4 + 2 * (8 + 4 + (uint64_t)CLF_PROTO_TYPE_MAX_BYTES) <=
	       CLF_PROTO_PAYLOAD_MAX,
	       "a view and a subfile type of the maximal size fit a message");
/*
 * The encoded types of one layout together (CREATE, SET_LAYOUT and the
 * replies that carry a layout).  The payload's 64 KiB beyond the data
 * limit hold the rest: a path, an attr and 8 bytes per subfile.
 */
#define CLF_PROTO_LAYOUT_TYPES_MAX CLF_PROTO_DATA_MAX
_Static_assert(CLF_PROTO_LAYOUT_TYPES_MAX + 2 + CLF_PROTO_PATH_MAX + 128 +
	       8u * CLF_PROTO_MAX_SUBFILES <= CLF_PROTO_PAYLOAD_MAX,
	       "a layout of the maximal size fits a message");

/* ------------------------------------------------------------------ */
/* Opcodes (stable numbers; a reply reuses its request's opcode)       */
/* ------------------------------------------------------------------ */

/*
 * Each opcode with its request body -> reply body (field names as in the
 * bodies below and in libclf/runtime/proto.h).
 */
enum clf_proto_op {
	/* Authentication, the first messages of every connection. */
	/* c->s: u16 major, u16 minor, str16 role */
	CLF_PROTO_OP_HELLO = 1,
	/* s->c, the reply to HELLO: u16 major, u16 minor, nonce[32] */
	CLF_PROTO_OP_CHALLENGE = 2,
	/* c->s: client nonce[32], mac[32] */
	CLF_PROTO_OP_RESPONSE = 3,
	/* s->c, the reply to RESPONSE: mac[32]; to MUNGE_RESPONSE:
	 * str16 the server's MUNGE credential */
	CLF_PROTO_OP_AUTH_OK = 4,
	/* Since 1.7.  c->s, instead of RESPONSE, by a client that does not
	 * hold the secret: client nonce[32], str16 MUNGE credential
	 * (libclf/runtime/auth.h says what it binds) */
	CLF_PROTO_OP_MUNGE_RESPONSE = 5,

	/* Any daemon. */
	CLF_PROTO_OP_PING = 16,		/* empty -> empty */
	CLF_PROTO_OP_STATUS = 17,	/* empty -> status */

	/* metad.  "dir" is a directory inode; CLF_PROTO_ROOT_INO is "/". */
	/* u64 dir, u32 flags, str16 path -> attr, u8 has_layout, [layout] */
	CLF_PROTO_OP_LOOKUP = 256,
	/* u64 dir, str16 path, u32 mode, u32 uid, u32 gid, u32 flags, layout
	 * -> attr, layout (explicit) */
	CLF_PROTO_OP_CREATE = 257,
	/* u64 dir, str16 path, u32 mode, u32 uid, u32 gid -> attr */
	CLF_PROTO_OP_MKDIR = 258,
	/* u64 dir, u64 cookie, u32 max -> u32 count, u8 eof, count x dirent */
	CLF_PROTO_OP_READDIR = 259,
	/* u64 dir, str16 path, u64 new dir, str16 new path, u32 flags
	 * -> empty */
	CLF_PROTO_OP_RENAME = 260,
	/* u64 dir, str16 path -> empty */
	CLF_PROTO_OP_UNLINK = 261,
	/* u64 dir, str16 path -> empty */
	CLF_PROTO_OP_RMDIR = 262,
	/* u64 ino -> attr */
	CLF_PROTO_OP_GETATTR = 263,
	/* u64 ino, u32 mask, u32 mode, u32 uid, u32 gid, i64 atime,
	 * i64 mtime, i64 size -> attr */
	CLF_PROTO_OP_SETATTR = 264,
	/* empty -> statfs of the whole file system */
	CLF_PROTO_OP_STATFS = 265,
	/* u64 ino, layout -> layout (explicit); -ENOTEMPTY unless the file
	 * holds no data */
	CLF_PROTO_OP_SET_LAYOUT = 266,
	/* u64 ino -> layout (explicit) */
	CLF_PROTO_OP_GET_LAYOUT = 267,
	/* u64 ino, i64 size, i64 mtime -> attr: a client's writes ended at
	 * size; the file size only grows through this */
	CLF_PROTO_OP_UPDATE_SIZE = 268,
	/* Since 1.1; see "Locks" below. */
	/* lock req -> empty; -EAGAIN when not granted (in time),
	 * -EDEADLK when waiting would close a cycle */
	CLF_PROTO_OP_SETLK = 269,
	/* lock req -> lock holder: the first lock in the way, or type
	 * UNLOCK when the lock could be granted */
	CLF_PROTO_OP_GETLK = 270,
	/* u64 ino, u64 owner -> empty: every lock of owner on ino */
	CLF_PROTO_OP_UNLOCK_OWNER = 271,
	/* Since 1.5; see "Appends" below. */
	/* u64 ino, i64 at, i64 length, u32 flags (CLF_PROTO_APPEND_*)
	 * -> i64 offset */
	CLF_PROTO_OP_APPEND = 272,
	/* Since 1.6; see "Special files" below. */
	/* u64 dir, str16 path, str16 target, u32 uid, u32 gid -> attr */
	CLF_PROTO_OP_SYMLINK = 273,
	/* u64 ino -> u64 rdev, str16 target */
	CLF_PROTO_OP_READLINK = 274,
	/* u64 ino, u64 new dir, str16 new path -> attr (of ino, one more
	 * link) */
	CLF_PROTO_OP_LINK = 275,
	/* u64 dir, str16 path, u32 mode, u32 uid, u32 gid, u64 rdev
	 * -> attr */
	CLF_PROTO_OP_MKNOD = 276,
	/* Since 1.8; see "Capabilities" below. */
	/* u64 ino, u32 rights (CLF_PROTO_CAP_*) -> cap */
	CLF_PROTO_OP_CAP_GRANT = 277,
	/* Since 1.10: what a client needs to reach the instance.
	 * empty -> u64 stripe_size, u32 stripe_count, u32 first_iod,
	 * u32 timeout_ms, u32 recovery_grace_s, u32 niods
	 * (1..CLF_PROTO_MAX_IODS), niods x str16 address ("host:port",
	 * 1..CLF_PROTO_ADDR_MAX bytes) by iod index; since 1.17, to a
	 * peer of 1.17 or later: u32 metad_index, u32 nmetads
	 * (1..CLF_PROTO_MAX_METADS), nmetads x str16 address by index */
	CLF_PROTO_OP_INSTANCE = 278,
	/* Since 1.12; see "Several metads" below. */
	/* u64 dir, str16 path -> u64 ino, u32 done */
	CLF_PROTO_OP_RESOLVE = 279,
	/* metad to metad, connections that hold the secret only:
	 * peer req -> peer rep */
	CLF_PROTO_OP_MD_PEER = 280,
	/* Since 1.14: u64 dir, u64 cookie, u32 max, u32 flags
	 * (CLF_PROTO_READDIRPLUS_*) -> u32 count, u8 eof, count x dirent
	 * plus: READDIR's entries with metad's attr of each, and with the
	 * LAYOUT flag the layout (explicit) of each regular file that has
	 * one; at most CLF_PROTO_READDIRPLUS_BYTES of entries (past the
	 * first).  The size in an attr is metad's: a client derives the
	 * size of a regular file from its subfiles ("Size"). */
	CLF_PROTO_OP_READDIRPLUS = 281,
	/* Since 1.19: u64 ino, u32 subfile, u32 from, u32 to, u32 phase
	 * (CLF_PROTO_MOVE_*) -> empty.  For connections that hold the
	 * secret.  BEGIN keeps a durable intent (the move of subfile from
	 * iod from to iod to); COMMIT names iod to in the layout and drops
	 * the intent in one transaction (again: nothing); ABORT drops it. */
	CLF_PROTO_OP_SUB_MOVE = 282,
	/* Since 1.22: u32 iod, u32 state (CLF_PROTO_IOD_*) -> u32 n, n x
	 * u32 the retired iods.  For connections that hold the secret.
	 * RETIRED: metad places no new subfile on iod (durably; refused
	 * for the last iod not retired); ACTIVE: it does again; QUERY
	 * (iod ignored): only the reply.  Since 1.23, JOIN: metad reads
	 * its configuration file again and the iods appended to it, iod
	 * among them, join it (placed on by new files; `clf iod add`). */
	CLF_PROTO_OP_IOD_STATE = 283,

	/* iod.  Subfiles are named by (file id = inode, subfile index). */
	/* u64 file, u32 subfile, i64 offset, u32 length -> bytes32 data
	 * (short at the end of the subfile) */
	CLF_PROTO_OP_SUB_READ = 512,
	/* u64 file, u32 subfile, i64 offset, bytes32 data -> u32 count */
	CLF_PROTO_OP_SUB_WRITE = 513,
	/* u64 file, u32 subfile, i64 view disp, bytes32 view type,
	 * i64 subfile disp, bytes32 subfile type -> u32 view handle */
	CLF_PROTO_OP_VIEW_REGISTER = 514,
	/* u32 handle -> empty */
	CLF_PROTO_OP_VIEW_RELEASE = 515,
	/* view io -> bytes32 data: the view bytes of [lo, hi) that lie in
	 * the subfile, in view order */
	CLF_PROTO_OP_VIEW_READ = 516,
	/* view io, bytes32 data -> u32 count */
	CLF_PROTO_OP_VIEW_WRITE = 517,
	/* u64 file (or CLF_PROTO_FILE_ALL) -> empty */
	CLF_PROTO_OP_SYNC = 518,
	/* u64 file, u32 subfile, i64 length -> empty */
	CLF_PROTO_OP_TRUNCATE = 519,
	/* u64 file, u32 subfile (or CLF_PROTO_SUBFILE_ALL) -> empty */
	CLF_PROTO_OP_REMOVE = 520,
	/* empty -> statfs of this iod */
	CLF_PROTO_OP_IOD_STATFS = 521,
	/* Since 1.3; see "Size" below. */
	/* u64 file, u32 n (1..CLF_PROTO_SUB_SIZES_MAX), n x u32 subfile
	 * -> u32 n, n x i64 length (0 for a subfile that does not exist) */
	CLF_PROTO_OP_SUB_SIZES = 522,
	/* Since 1.8; see "Capabilities" below. */
	/* cap -> empty */
	CLF_PROTO_OP_CAP = 523,
	/* Since 1.9: the subfiles this iod stores, for clf fsck.
	 * u64 file, u32 subfile, u32 max (1..CLF_PROTO_SUB_LIST_MAX)
	 * -> u8 more, u32 n (<= max), n x u64 file, n x u32 subfile,
	 * n x i64 length: the first n subfiles at or after (file,
	 * subfile) in that order; more when others follow. */
	CLF_PROTO_OP_SUB_LIST = 524,
	/* Since 1.11; see "Vectors" below. */
	/* u64 file, u32 n, n x u32 subfile, n x i64 offset, n x u32 length
	 * -> bytes32 data: the n ranges one after the other, each zeros
	 * past the end of its subfile */
	CLF_PROTO_OP_SUB_READV = 525,
	/* u64 file, u32 n, n x u32 subfile, n x i64 offset, n x u32 length,
	 * bytes32 data (the n ranges' bytes one after the other)
	 * -> u32 count */
	CLF_PROTO_OP_SUB_WRITEV = 526,
	/* Since 1.13; see "Extent locks" below. */
	/* u64 client -> empty; the connection then carries REVOKEs */
	CLF_PROTO_OP_LOCK_CALLBACK = 530,
	/* u64 client, u64 file, u32 subfile, u32 mode, i64 lo, i64 hi
	 * -> u64 id, i64 lo, i64 hi (the granted extent) */
	CLF_PROTO_OP_LOCK_ENQUEUE = 531,
	/* u64 client, u64 id -> empty */
	CLF_PROTO_OP_LOCK_RELEASE = 532,
	/* iod to client, on its callback connection, no reply:
	 * u64 id, u64 file, u32 subfile, i64 lo, i64 hi */
	CLF_PROTO_OP_REVOKE = 533,
	/* Since 1.15: u32 n (1..CLF_PROTO_SUB_BATCH_MAX), n x u64 file,
	 * n x u32 subfile -> u32 n, n x i64 length: SUB_SIZES of subfiles
	 * of several files (a READDIRPLUS page) in one request. */
	CLF_PROTO_OP_SUB_SIZES_MANY = 527,
	/* Since 1.16: u32 n (1..CLF_PROTO_SUB_BATCH_MAX), n x u64 file
	 * -> u32 n, n x u32 status: REMOVE of every subfile of each file;
	 * status 0 (removed, or there was none) or the errno number that
	 * stopped that one.  For connections that hold the secret. */
	CLF_PROTO_OP_REMOVE_MANY = 528,
	/* Since 1.18: u64 file, u32 mode (CLF_PROTO_FENCE_*) -> empty.  For
	 * connections that hold the secret (the mover of `clf iod
	 * remove`).  MOVING: writes of the file are refused with -ESTALE
	 * (except on this connection) once the reply comes, and none is
	 * still being served; the fence goes with the connection.  GONE:
	 * reads too, until the iod stops.  LIFT: no fence. */
	CLF_PROTO_OP_FENCE = 534,
	/* Since 1.24; see "Merged collectives" below.  For connections
	 * that hold the secret.  u32 n (1..CLF_PROTO_MERGED_MAX), n x
	 * (u16 port, u16 opcode, bytes32 body) -> u32 n, n x (u32 status,
	 * bytes32 body) */
	CLF_PROTO_OP_VIEW_MERGED = 535,
};

/* ------------------------------------------------------------------ */
/* Bodies shared by several messages                                   */
/* ------------------------------------------------------------------ */

/*
 * error body (replies with status < 0; may also be empty):
 *   str16 message, <= CLF_PROTO_ERRMSG_MAX bytes, for the user.
 *
 * attr:
 *   u64 ino, u32 mode, u32 uid, u32 gid, u32 nlink, i64 size,
 *   i64 atime, i64 mtime, i64 ctime
 *
 * layout:
 *   u8 kind
 *   kind ROUND_ROBIN: u64 stripe_size (0: configured default),
 *                     u32 stripe_count (0: default),
 *                     u32 first_iod (CLF_PROTO_IOD_DEFAULT: default)
 *   kind EXPLICIT:    i64 displacement, u32 iod of the bytes before the
 *                     displacement, u32 n (1..CLF_PROTO_MAX_SUBFILES),
 *                     n x (u32 iod index, bytes32 encoded CLF type)
 *   A request may carry either kind; replies always carry EXPLICIT.
 *
 * dirent:
 *   u64 ino, u64 cookie (resume READDIR after this entry), u32 mode,
 *   str16 name
 *
 * dirent plus (READDIRPLUS):
 *   u64 cookie, str16 name, u64 ino, u32 mode, u8 has_attr, [attr,
 *   u8 has_layout, [layout (explicit), a regular file's, when
 *   has_layout], when has_attr: without, the inode lives on another
 *   metad, which the client asks]
 *
 * statfs:
 *   u64 bytes_total, u64 bytes_free, u64 bytes_avail, u64 files,
 *   u64 files_free, u32 block_size, u32 name_max
 *
 * status:
 *   u64 uptime_ms, u64 requests, u64 bytes_read, u64 bytes_written,
 *   u32 connections, u32 views
 *
 * lock req (SETLK, GETLK):
 *   u64 ino, u64 owner, u64 start, u64 length (0: to the end of any
 *   file), u32 type (CLF_PROTO_LOCK_*), u32 flags (CLF_PROTO_LOCK_WAIT,
 *   SETLK only), u32 wait_ms (<= CLF_PROTO_LOCK_WAIT_MAX_MS, 0 without
 *   WAIT), u32 pid (of the owner, for GETLK reports)
 *   start and the last byte, start + length - 1, are
 *   <= CLF_PROTO_LOCK_OFFSET_MAX; GETLK asks with type READ or WRITE, no
 *   flags and no wait.
 *
 * lock holder (GETLK reply):
 *   u32 type, u64 start, u64 length (0: to the end), u32 pid
 *
 * view io (VIEW_READ, VIEW_WRITE):
 *   u32 handle, u32 flags (CLF_PROTO_VIEW_*), i64 lo, i64 hi
 *   (0 <= lo <= hi, hi - lo <= CLF_PROTO_DATA_MAX, view linear offsets),
 *   u64 collective tag, u32 participants (both 0 unless COLLECTIVE;
 *   1..CLF_PROTO_MAX_PARTICIPANTS when set): the requests the iod waits
 *   for at this subfile -- every process of the access (each sending an
 *   empty range where it has no bytes), or, in a planned access
 *   (libclf/client/io_coll.c), only those whose pieces merge there: the iods
 *   of every minor count requests per subfile, so this is no new rule.
 *   AGAIN (1.20, with COLLECTIVE only): the client sends this request
 *   again after the iod broke off; iod/iod_collective.c, rule 10.
 */

#define CLF_PROTO_ROOT_INO 1ull

/*
 * Several metads (1.12)
 * ---------------------
 *   The configuration may list several metads (indexes 0, 1, ...); the
 *   namespace is then spread over them.  An inode lives on one metad,
 *   which its number names: CLF_PROTO_INO_METAD(ino).  The root lives on
 *   metad 0.  A directory's entries live with the directory; a new file
 *   lives with its directory; a new directory on the metad that a hash
 *   of (parent, name) picks, so that a tree spreads over all of them.
 *   An entry may thus name an inode of another metad (a "remote" entry:
 *   a directory made there, or a file renamed or linked across).
 *   A client sends a request about inode ino (GETATTR, SETATTR, layouts,
 *   sizes, locks, READDIR of a directory) to the inode's metad, and one
 *   about a name in directory dir (LOOKUP, CREATE, MKDIR, UNLINK, RMDIR,
 *   SYMLINK, MKNOD, LINK's new name, RENAME's source) to dir's metad,
 *   with a path of one name: it walks longer paths with RESOLVE, which
 *   follows path from dir through the entries this metad holds and
 *   answers the inode reached and how many bytes of path it consumed
 *   (all of them, or up to and including the name of a remote entry,
 *   where the client goes on at the inode's metad).  LOOKUP and CREATE
 *   of an existing remote entry answer -EREMOTE: the client asks the
 *   inode's metad (GETATTR, GET_LAYOUT) instead.  A change that spans
 *   two metads (MKDIR of a remote directory, RENAME and LINK across,
 *   UNLINK and RMDIR of remote entries) is carried out by the metad
 *   that received it, asking the other with MD_PEER; a RENAME across
 *   metads is a two-phase commit with durable intents on both sides
 *   (metad/mds_xrename.c), so that a crash of either leaves the old name
 *   or the new one, never both or none.
 */
#define CLF_PROTO_INO_METAD_SHIFT 56
#define CLF_PROTO_INO_METAD(ino) ((uint32_t)((ino) >> CLF_PROTO_INO_METAD_SHIFT))
#define CLF_PROTO_MAX_METADS 64
#define CLF_PROTO_FILE_ALL 0ull		/* SYNC: every file of the iod */
#define CLF_PROTO_SUBFILE_HEAD 0xffffffffu /* bytes before the displacement */
#define CLF_PROTO_SUBFILE_ALL 0xfffffffeu  /* REMOVE: every subfile */
#define CLF_PROTO_FENCE_LIFT 0
#define CLF_PROTO_FENCE_MOVING 1
#define CLF_PROTO_FENCE_GONE 2
#define CLF_PROTO_MOVE_BEGIN 1
#define CLF_PROTO_MOVE_COMMIT 2
#define CLF_PROTO_MOVE_ABORT 3
#define CLF_PROTO_IOD_DEFAULT 0xffffffffu  /* round robin: configured first;
					     explicit (1.22): metad places */

/* IOD_STATE states. */
#define CLF_PROTO_IOD_ACTIVE 0u
#define CLF_PROTO_IOD_RETIRED 1u
#define CLF_PROTO_IOD_QUERY 2u
#define CLF_PROTO_IOD_JOIN 3u		/* since 1.23 */

enum clf_proto_layout_kind {
	CLF_PROTO_LAYOUT_ROUND_ROBIN = 1,
	CLF_PROTO_LAYOUT_EXPLICIT = 2,
};

#define CLF_PROTO_LOOKUP_LAYOUT 0x1u	/* LOOKUP: also return the layout */
/* Since 1.7, LOOKUP and CREATE (of a name that exists): the caller opens
 * the file for reading / writing; metad refuses (-EACCES) what the mode
 * bits do not allow it. */
#define CLF_PROTO_OPEN_READ 0x2u
#define CLF_PROTO_OPEN_WRITE 0x4u
#define CLF_PROTO_LOOKUP_FLAGS 0x7u
#define CLF_PROTO_CREATE_EXCL 0x1u	/* CREATE: fail with -EEXIST */
/* Since 1.21, CREATE: the caller would give the new file its directory's
 * default layout (the entry CLF_PROTO_DIR_DEFAULT_NAME of the directory,
 * libclf/client/clf_ll.h).  metad creates the file only where the
 * directory has no such entry, else fails with -EAGAIN and creates
 * nothing: the caller then creates and lays the file out as before. */
#define CLF_PROTO_CREATE_PLAIN 0x8u
#define CLF_PROTO_CREATE_FLAGS 0xfu
#define CLF_PROTO_DIR_DEFAULT_NAME ".clf-default-layout"
#define CLF_PROTO_RENAME_NOREPLACE 0x1u /* RENAME: fail with -EEXIST */
/* READDIRPLUS: also the layouts of regular files. */
#define CLF_PROTO_READDIRPLUS_LAYOUT 0x1u
#define CLF_PROTO_READDIRPLUS_FLAGS 0x1u
#define CLF_PROTO_RENAME_FLAGS 0x1u

/* SETATTR mask; *_NOW set the time to the server's clock. */
#define CLF_PROTO_SETATTR_MODE 0x01u
#define CLF_PROTO_SETATTR_UID 0x02u
#define CLF_PROTO_SETATTR_GID 0x04u
#define CLF_PROTO_SETATTR_SIZE 0x08u
#define CLF_PROTO_SETATTR_ATIME 0x10u
#define CLF_PROTO_SETATTR_MTIME 0x20u
#define CLF_PROTO_SETATTR_ATIME_NOW 0x40u
#define CLF_PROTO_SETATTR_MTIME_NOW 0x80u
#define CLF_PROTO_SETATTR_KNOWN 0xffu

#define CLF_PROTO_MODE_PERM 07777u	/* what CREATE/MKDIR/SETATTR may set */

/*
 * Locks
 * -----
 *   POSIX fcntl byte-range locks: read locks share, a write lock excludes
 *   every other owner; a lock of an owner replaces, splits and merges the
 *   owner's own locks where they overlap or touch.  A lock belongs to
 *   (connection, owner): the owner is a number chosen by the client (a
 *   process, a FUSE lock owner), meaningful within its connection only.
 *   metad keeps locks in memory: they end when their connection closes
 *   (the holder exits or is killed) and when metad stops; nothing is
 *   reclaimed after a restart (like NFSv3 without a grace period).
 *   A waiting SETLK holds its connection for at most wait_ms, which the
 *   server also caps (below any sane client timeout); -EAGAIN then means
 *   "not yet", and a client that wants to block asks again.
 */
#define CLF_PROTO_LOCK_READ 1u
#define CLF_PROTO_LOCK_WRITE 2u
#define CLF_PROTO_LOCK_UNLOCK 3u	/* SETLK: release the range */
#define CLF_PROTO_LOCK_WAIT 0x1u	/* SETLK: wait up to wait_ms */
#define CLF_PROTO_LOCK_FLAGS 0x1u
#define CLF_PROTO_LOCK_WAIT_MAX_MS 60000u
#define CLF_PROTO_LOCK_OFFSET_MAX 0x7fffffffffffffffull /* off_t's max */

/*
 * Size
 * ----
 *   The file size is the largest of metad's size and the ends that the
 *   subfiles map to: subfile j of length L > 0 ends at file offset
 *   MAP_j^-1(L - 1) + 1 through its type and the displacement, and the
 *   head (bytes before the displacement) of length L ends at L.  An iod
 *   answers VIEW_WRITE and SUB_WRITE only once the bytes are in the
 *   subfile, so a SUB_SIZES sent after a write's reply sees its end: a
 *   client needs no size report for others to see what it wrote (as
 *   PVFS2 and Lustre derive sizes from their data objects).  metad's size
 *   counts truncations and the reports clients still send when they close
 *   (UPDATE_SIZE), so stat through metad alone stays close.  Peers of
 *   minor < 3 do not know SUB_SIZES: their clients use metad's size only.
 */
#define CLF_PROTO_SUB_SIZES_MAX (CLF_PROTO_MAX_SUBFILES + 1) /* + head */
#define CLF_PROTO_SUB_LIST_MAX 1024	/* subfiles in one SUB_LIST reply */

/*
 * Retries
 * -------
 *   A client that sent a request and got no reply (a timeout, a
 *   connection that broke) cannot tell whether metad applied it.  Since
 *   1.4 a client sends every metad request that changes the namespace or
 *   an inode (CREATE, MKDIR, RENAME, UNLINK, RMDIR, SETATTR, SET_LAYOUT,
 *   and each such opcode added later) with the REQ_ID flag, and its body
 *   then starts with a request identity:
 *
 *     u64 client   non-zero, drawn at random once per client process
 *                  (and again in a forked child); the same on every
 *                  connection the process opens
 *     u64 seq      non-zero, never reused by that client
 *
 *   followed by the body of the opcode, unchanged.  metad records the
 *   outcome of every such request that changed its store, in the same
 *   transaction as the change, and keeps it at least
 *   CLF_PROTO_REPLY_KEEP_S seconds, across metad restarts.  The same
 *   identity sent again (on any connection) is not executed again: it
 *   is answered from the record, with status 0 and the reply body built
 *   from the inode the request touched as it is now (CREATE: attr and
 *   layout; MKDIR and SETATTR: attr; SET_LAYOUT: layout; the others
 *   empty), or -ESTALE when that inode has gone since.  A repeat that
 *   arrives while the first is being served waits for it.  A request
 *   that failed changed nothing and is not recorded: a repeat runs again
 *   as if it were the first.  An identity repeated with another opcode
 *   is refused with -EINVAL.  Requests that are idempotent anyway
 *   (lookups, UPDATE_SIZE: size = max) carry no identity; byte-range
 *   lock requests neither: a lock belongs to its connection, which a
 *   retry does not have (see "Locks").  A client only sends the flag
 *   when the negotiated minor is >= 4; metad ignores it on opcodes it
 *   does not record.
 */
#define CLF_PROTO_REQ_ID_SIZE 16
#define CLF_PROTO_REPLY_KEEP_S 600

/*
 * Appends
 * -------
 *   An O_APPEND write must land at the end of file, and two of them,
 *   from any clients, must never overlap.  The bytes go to the iods
 *   directly, so the end is agreed at metad: a client derives the size
 *   (above), asks APPEND with at = that size and length = the file bytes
 *   its write will cover, and writes at the offset in the reply.  metad
 *   keeps, per file, the end of the ranges it reserved (in memory: the
 *   "append end") and answers offset = max(at, append end), which
 *   becomes the new append end at offset + length.  With the EXACT flag
 *   the range is reserved only if offset == at; otherwise nothing is
 *   reserved and the reply says where the end is now (for views whose
 *   extent of a write depends on where it starts: the client recomputes
 *   and asks again).  An APPEND never waits: byte-range locks (above)
 *   neither block it nor are taken by it.
 *   metad forgets an append end CLF_PROTO_APPEND_HOLD_MS after its last
 *   reservation (by then the write has reached the subfiles, or failed),
 *   and when the file is truncated (SETATTR with SIZE).  A reserved range
 *   that its client never writes (the client died) is a hole that reads
 *   as zeros once a later append lands beyond it.  The append ends die
 *   with metad: a range reserved before a restart whose write was still
 *   under way may be given again.  Peers of minor < 5 do not know APPEND.
 *   APPEND carries no request identity ("Retries" above): the append
 *   ends are not in the store, and a repeat after a lost reply reserves
 *   a second range, a hole under the next append.
 */
#define CLF_PROTO_APPEND_EXACT 0x1u	/* reserve only at at */
#define CLF_PROTO_APPEND_FLAGS 0x1u
#define CLF_PROTO_APPEND_HOLD_MS 60000u

/*
 * Special files (1.6)
 * -------------------
 *   A symbolic link keeps its target (1..CLF_PROTO_SYMLINK_MAX bytes, no
 *   NUL) as given: metad never follows it, and LOOKUP of a path through
 *   one fails with -ENOTDIR; clients follow links themselves.  Its mode
 *   is S_IFLNK | 0777 and its size the target's length.  Fifos, sockets
 *   and character and block devices (MKNOD mode: one of those kinds |
 *   permission bits) are metadata only: each client's kernel makes the
 *   pipe, socket or device; a device's number (rdev, the kernel's
 *   encoding) is given back by READLINK, which answers a symlink with
 *   rdev 0 and its target, a device node with its rdev and an empty
 *   target, and -EINVAL any other kind.  Hard links: LINK gives a
 *   non-directory another name (-EPERM for a directory, -EMLINK past
 *   CLF_PROTO_LINK_MAX); UNLINK and a replacing RENAME remove one name,
 *   and the inode with its data goes with its last.  RENAME onto another
 *   name of the same inode does nothing, as POSIX says.  Sizes and
 *   layouts are for regular files only (-EINVAL for these kinds).
 *   SYMLINK, LINK and MKNOD carry request identities ("Retries"); a
 *   repeat is answered with the attr of the inode made (SYMLINK, MKNOD)
 *   or linked (LINK) as it is now.
 */
#define CLF_PROTO_SYMLINK_MAX 4095	/* bytes of a target: PATH_MAX - 1 */
#define CLF_PROTO_LINK_MAX 65000u	/* names of one inode */

/*
 * Identity
 * --------
 *   metad checks every request against the POSIX permissions of the
 *   files it touches, as the user the request acts for:
 *   - on a connection authenticated with a MUNGE credential
 *     (MUNGE_RESPONSE), the uid and gid of the credential, and the
 *     supplementary groups metad resolves for that uid (getgrouplist), for
 *     every request of the connection; the uid and gid fields of CREATE
 *     and MKDIR are ignored, and the CRED flag is refused (-EPERM);
 *   - on a connection authenticated with the secret (root on a client
 *     node, the daemons), the user of the cred prefix when the header has
 *     CLF_PROTO_FLAG_CRED, else root (uid 0).  Such a peer is trusted as
 *     a kernel is: the mount passes the uid and gid of each caller.
 *   cred prefix, at the start of the payload, before the body:
 *     u32 uid, u32 gid
 *   payload_len counts it; a sender uses it only once 1.7 is negotiated.
 */
#define CLF_PROTO_CRED_SIZE 8

/*
 * Protection (1.8)
 * ----------------
 *   HELLO ends with u8 protection (the level the client asks: 0 none,
 *   1 integrity, 2 privacy) and the client's X25519 public key; the
 *   CHALLENGE ends with the level in force, the higher of the client's
 *   and the server's, and the server's key.  After AUTH_OK every message
 *   in both directions, when the level is not none, is followed by a
 *   16-byte XChaCha20-Poly1305 tag under a session key of its direction
 *   and its sequence number there (libclf/runtime/seal.h; payload_len does not
 *   count the tag; with privacy the payload is encrypted).  The session
 *   keys come from the key exchange, the transcript (both key shares,
 *   the levels, the nonces) and, when the client proved the secret, the
 *   secret; a MUNGE credential covers the transcript, so a man in the
 *   middle can neither read the keys nor swap the shares.  A receiver
 *   closes the connection on a tag that does not check.  A server whose
 *   level is not none refuses a HELLO without the fields (minor < 8)
 *   with -EPROTONOSUPPORT; a client that asks for protection refuses a
 *   CHALLENGE without them.
 */

/*
 * Capabilities (1.8)
 * ------------------
 *   An iod serves the data of a file to a connection authenticated with
 *   MUNGE only under a capability metad granted (libclf/runtime/cap.h has the
 *   form and the MAC):
 *     CAP_GRANT to metad: u64 ino, u32 rights -> cap, after the same
 *       check as an open for those rights (mds_perm_open), for the uid of
 *       the connection's credential, valid capability_lifetime seconds
 *       (configuration; default 300);
 *     CAP to an iod: cap -> empty; the iod checks its MAC, expiry and uid
 *       once and keeps it for the connection (at most CLF_PROTO_CAPS_MAX
 *       files; a newer one for the same file replaces the older).
 *   Then SUB_READ and VIEW_READ need READ, SUB_WRITE, VIEW_WRITE and
 *   TRUNCATE need WRITE, VIEW_REGISTER needs either, on the file they
 *   name (VIEW_READ/VIEW_WRITE: the file of the view), unexpired; else
 *   -EACCES, or -EKEYEXPIRED when the capability has expired (the client
 *   asks metad again and hands the new one over).  REMOVE and SUB_LIST
 *   are for connections that hold the secret (metad's collection, clf
 *   fsck), and so is REMOVE_MANY; SUB_SIZES_MANY is as SUB_SIZES.  SUB_SIZES,
 *   SYNC, IOD_STATFS, STATUS and PING need none: sizes are what stat
 *   shows anyone, and the others touch no file's bytes.  A connection
 *   that holds the secret needs no capability: the secret is what signs
 *   them.
 */
#define CLF_PROTO_CAP_READ 0x1u
#define CLF_PROTO_CAP_WRITE 0x2u
#define CLF_PROTO_CAPS_MAX 64

/*
 * Vectors (1.11)
 * --------------
 *   SUB_READV and SUB_WRITEV carry n (1..CLF_PROTO_SUB_VEC_MAX) ranges
 *   of the subfiles of one file, of CLF_PROTO_SUB_VEC_DATA_MAX bytes in
 *   all at most, and are served as n SUB_READs or SUB_WRITEs in order,
 *   under the same capability rules: a client's small access whose
 *   pieces fall on one iod is one request there (libclf/client/
 *   io_small.c).  A SUB_WRITEV is answered once all its bytes are in
 *   their subfiles; when one range fails, the reply is that error and
 *   the ranges before it may be written (as after a failed SUB_WRITE in
 *   a row of them).  A SUB_READV's reply always holds every range whole:
 *   zeros where a subfile is shorter (its size comes from SUB_SIZES).
 *   Peers of minor < 11 answer -ENOSYS; clients then send one SUB_READ
 *   or SUB_WRITE per range.
 */
#define CLF_PROTO_SUB_VEC_MAX 256
#define CLF_PROTO_SUB_VEC_DATA_MAX (1u << 20)

/*
 * Extent locks (1.13)
 * -------------------
 *   A client that caches (opt-in: clf_cache) names itself by a random
 *   u64 client id, opens a callback connection to each iod and sends
 *   LOCK_CALLBACK on it; from then on the iod sends on that connection
 *   only REVOKE messages (a request header, seq 0, no reply expected)
 *   and the client only reads it (the iod closes a callback connection
 *   that carries a request).  LOCK_ENQUEUE asks for a PR (shared,
 *   cached reads) or PW (exclusive, cached writes) lock on [lo, hi) of a
 *   subfile; the iod revokes the other clients' conflicting locks first
 *   and answers with the granted extent, which covers [lo, hi) and may
 *   be larger (to the end of the subfile: CLF_PROTO_LOCK_EOF).  On a
 *   REVOKE the client sends its dirty bytes under the lock (plain
 *   writes, on a connection that sent a LOCK_* request with its id, which
 *   no lock holds back: a LOCK_RELEASE of lock 0, which no lock has,
 *   only says that a connection is the client's), drops its cached bytes and sends
 *   LOCK_RELEASE.  A REVOKE's [lo, hi) is the part of the lock to give
 *   back: the whole lock, or (iods since 1.25's release, with no version
 *   of its own: no message changed) the lock from an offset up, the iod keeping the part below granted under the same id; a
 *   client that gives back the whole lock anyway stays correct.  Every
 *   access under no lock -- from any connection not
 *   of the holder -- waits for the conflicting locks' release first, so
 *   an acknowledged write stays visible to every later read.  A holder
 *   that does not release within the iod's lease, or whose callback
 *   connection closes, is evicted: its locks and held-back bytes are
 *   gone, and its RELEASE then answers -ENOENT.  Peers of minor < 13
 *   answer -ENOSYS; clients then do not cache.
 *
 *   Strided locks (1.26): a LOCK_ENQUEUE with a stride S and a block B
 *   (0 < B < S) asks for the bytes x of [lo, hi) with (x - lo) mod S <
 *   B only: blocks of B bytes every S, the first at lo.  The grant
 *   answers with the same stride and block; its extent may be larger,
 *   and its lo then lies a whole number of strides below the request's,
 *   so the blocks stay where they were asked.  Two strided locks conflict
 *   only where their blocks meet: processes that interleave accesses of
 *   B bytes every S (IOR's segments) each keep a lock over their own
 *   blocks.  A REVOKE's [lo, hi) and a shrunk lock keep the stride.  A
 *   client sends a stride only to an iod of minor >= 26; a grant without
 *   one (an older iod) is a plain lock over its extent.
 *
 *   Locks strided in the file (1.27): with in_file and a phase P, the
 *   stride and block count the file's bytes, not the subfile's: the lock
 *   holds the bytes of [lo, hi) of the subfile whose file offsets x have
 *   (x - P) mod S < B.  A process writing B bytes every S of the file
 *   (IOR's segments of 47008 bytes, which no stride of a subfile of 64
 *   KiB stripes describes) holds its own blocks on every subfile.  The
 *   iod does not map subfile bytes to the file: two such locks conflict
 *   unless their blocks can never meet in the file (the phase test), and
 *   such a lock meets every other lock and access whose extent overlaps
 *   its own.  The grant keeps the stride, block and phase, its lo and hi
 *   move freely.  in_file comes only with a stride; a client sends it
 *   only to an iod of minor >= 27; a grant without it (an older iod)
 *   holds what a stride of the subfile would, which the client does not
 *   take for its file blocks.
 */
#define CLF_PROTO_LOCK_PR 1u
#define CLF_PROTO_LOCK_PW 2u
#define CLF_PROTO_LOCK_EOF INT64_MAX

/*
 * Merged collectives (1.24)
 * -------------------------
 *   A forwarder (`clf forward`, tools/cmd_forward_merge.c) relays each
 *   client connection to an iod as its own connection, which
 *   authenticates end to end.  Where the messages are not sealed
 *   (protection none), it may hold the collective VIEW_WRITE and
 *   VIEW_READ requests of one operation (same tag) that its clients
 *   send to one iod and hand them over in one VIEW_MERGED, on a
 *   connection of its own that holds the secret:
 *     piece: u16 port, the relayed connection the request came on, named
 *       by its peer port as the iod sees it (the peer host is the
 *       VIEW_MERGED connection's); u16 opcode, VIEW_WRITE or VIEW_READ;
 *       bytes32 body, the request's body as the client sent it, with
 *       COLLECTIVE set and AGAIN not.
 *   The iod serves each piece as if it had come on its connection
 *   (that connection's views and capabilities; the relayed connection
 *   must be idle: the forwarder sends a piece only once every earlier
 *   request of its connection was answered) and joins all of them to
 *   their operations at once, so the pieces count as participants as
 *   their own requests would (iod/iod_collective.c).  The reply holds,
 *   per piece in order, the status its own request would have been
 *   answered with (0 or an errno number) and the body of that answer
 *   (VIEW_WRITE: u32 count; VIEW_READ: bytes32 data; an error: the
 *   error body), which the forwarder sends to the piece's client as the
 *   reply to its request.  A VIEW_MERGED answered with a negative
 *   status did nothing with any piece (a piece not allowed, not idle,
 *   extent locks in use, no room): the forwarder then sends each
 *   request on its own connection.  Peers of minor < 24 answer -ENOSYS.
 */
#define CLF_PROTO_MERGED_MAX 1024	/* pieces in one VIEW_MERGED */

/* VIEW_READ / VIEW_WRITE flags */
#define CLF_PROTO_VIEW_COLLECTIVE 0x1u	/* part of collective operation tag */
#define CLF_PROTO_VIEW_AGAIN 0x2u	/* since 1.20: sent again after the
					   iod broke off (COLLECTIVE only) */
#define CLF_PROTO_VIEW_FLAGS 0x3u

#endif /* CLF_PROTO_H */
