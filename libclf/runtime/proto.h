/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto.h -- encode and decode every clf message (include/clf_proto.h)
 * on the bounds-checked cursors of wire.h.
 *
 * Conventions, for every message type X below:
 *
 *   int clf_proto_X_encode(struct wire_writer *w, const struct clf_proto_X *m)
 *	Checks m against the limits of clf_proto.h (so that nothing a peer
 *	would refuse goes out) and appends its encoding to w.  Returns 0, or
 *	-EINVAL / -E2BIG with nothing appended.  As with any wire_writer, the
 *	caller learns the length from w->pos and that it did not fit from
 *	w->pos > w->cap; a writer with no buffer measures.
 *
 *   int clf_proto_X_decode(struct wire_reader *r, struct clf_proto_X *m)
 *	Decodes one whole payload: everything from r->pos to r->len, no
 *	trailing bytes.  Checks every length and count against the limits
 *	and against what is left in the buffer before using or allocating
 *	anything.  Returns 0 and fills *m, or -EPROTO (malformed, truncated,
 *	trailing bytes, a value out of range), -E2BIG (over a limit), -ENOMEM,
 *	with *m untouched.  CLF_Last_error() says which field failed.
 *
 * Each body below is declared once, as a list of its fields in wire order
 * (proto_decl.h says how): the struct and these functions are made from
 * the list, so a new field is one line there.
 *
 * Memory: decoded strings and byte strings BORROW the reader's buffer (they
 * point into it, are not NUL-terminated and stay valid as long as it does).
 * Arrays (layout subfiles, directory entries) are allocated by the decoder
 * and OWNED by the decoded struct: free them with the X_release function
 * named beside the struct.  For encoding, every pointer in m is only read.
 */
#ifndef CLF_PROTO_LIB_H
#define CLF_PROTO_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clf_proto.h"
#include "wire.h"
#include "proto_decl.h"

/* A string on the wire: not NUL-terminated; borrowed, see above. */
struct clf_proto_str {
	const char *ptr;
	uint32_t len;
};

/* A byte string on the wire (encoded types, bulk data); borrowed. */
struct clf_proto_bytes {
	const uint8_t *ptr;
	uint32_t len;
};

/* A clf_proto_str naming the C string s (borrowed); s may be NULL. */
struct clf_proto_str clf_proto_str_of(const char *s);

/* A NUL-terminated copy of s, which the caller frees; NULL on ENOMEM. */
char *clf_proto_str_dup(struct clf_proto_str s);

/* Whether s equals the C string c. */
bool clf_proto_str_eq(struct clf_proto_str s, const char *c);

/* The minor version two peers use: the smaller of theirs and ours. */
uint16_t clf_proto_negotiate_minor(uint16_t peer_minor);

/* The opcode's name ("LOOKUP"), or NULL for an opcode this side lacks. */
const char *clf_proto_op_name(uint16_t op);

/* ------------------------------------------------------------------ */
/* Header                                                              */
/* ------------------------------------------------------------------ */

struct clf_proto_header {
	uint32_t magic;
	uint16_t major, minor;
	uint16_t opcode;	/* enum clf_proto_op */
	uint16_t flags;		/* CLF_PROTO_FLAG_* */
	uint64_t id;		/* request id, echoed by the reply */
	uint32_t payload_len;	/* bytes after the header */
	int32_t status;		/* 0, or a negative errno in a reply */
};

/* A request header for op with this side's version; payload_len 0. */
void clf_proto_header_init(struct clf_proto_header *h, uint16_t op,
			   uint64_t id);

/* The reply header to req: same opcode and id, REPLY flag, status. */
void clf_proto_header_init_reply(struct clf_proto_header *h,
				 const struct clf_proto_header *req,
				 int32_t status);

/* Appends CLF_PROTO_HEADER_SIZE bytes; the reserved field is sent as 0. */
void clf_proto_header_encode(struct wire_writer *w,
			     const struct clf_proto_header *h);

/*
 * clf_proto_header_decode - read and check one header
 *
 * Reads CLF_PROTO_HEADER_SIZE bytes at r->pos (what follows is the
 * payload, not looked at).  Refuses a wrong magic, unknown flags, a status
 * on a request or a status that is not 0 or a negative errno (-EPROTO), a
 * payload_len over CLF_PROTO_PAYLOAD_MAX (-E2BIG), another major version
 * (-EPROTONOSUPPORT), fewer than CLF_PROTO_HEADER_SIZE bytes (-EPROTO).
 */
int clf_proto_header_decode(struct wire_reader *r, struct clf_proto_header *h);

/*
 * Same, but a header of another major version is returned too, with only
 * magic, major and minor checked and the rest as sent: for the first
 * message of a connection, so that such a peer can be told the versions
 * differ (the only use).  Callers compare h->major themselves.
 */
int clf_proto_header_decode_any_major(struct wire_reader *r,
				      struct clf_proto_header *h);

/* A body that must be empty (PING, STATUS and STATFS requests, ...). */
int clf_proto_empty_decode(struct wire_reader *r);

/*
 * The request identity that starts the body of a request with
 * CLF_PROTO_FLAG_REQ_ID (include/clf_proto.h, "Retries"): both fields
 * non-zero.  Decoding reads CLF_PROTO_REQ_ID_SIZE bytes and leaves r at
 * the opcode's own body; -EPROTO when short or zero.
 */
struct clf_proto_reqid {
	uint64_t client;
	uint64_t seq;
};
int clf_proto_reqid_encode(struct wire_writer *w,
			   const struct clf_proto_reqid *m);
int clf_proto_reqid_decode(struct wire_reader *r, struct clf_proto_reqid *m);

/* Body of a reply whose status < 0; an empty payload decodes as "". */
#define CLF_PROTO_ERROR(X, T)						\
	X(T, STR, message, CLF_PROTO_ERRMSG_MAX, ANY)	/* borrowed */
struct clf_proto_error {
	CLF_PROTO_ERROR(PROTO_MEMBER, _)
};
int clf_proto_error_encode(struct wire_writer *w,
			   const struct clf_proto_error *m);
int clf_proto_error_decode(struct wire_reader *r, struct clf_proto_error *m);

/* ------------------------------------------------------------------ */
/* Authentication (libclf/runtime/auth.h runs the exchange)                    */
/* ------------------------------------------------------------------ */

/* The role: 1..CLF_PROTO_ROLE_MAX bytes of printable ASCII; since 1.8
 * (has_kx): the protection asked and a key share. */
#define CLF_PROTO_HELLO(X, T)						\
	X(T, U16, major)	/* the client's own version */		\
	X(T, U16, minor)						\
	X(T, STR, role, CLF_PROTO_ROLE_MAX, ROLE)			\
	X(T, TAIL, has_kx)						\
	X(T, U8, protection)						\
	X(T, FIXED, kx, CLF_PROTO_KX_SIZE)
struct clf_proto_hello {
	CLF_PROTO_HELLO(PROTO_MEMBER, _)
};

/* Since 1.8 (has_kx): the protection in force, a key share. */
#define CLF_PROTO_CHALLENGE(X, T)					\
	X(T, U16, major)	/* the server's own version */		\
	X(T, U16, minor)						\
	X(T, FIXED, nonce, CLF_PROTO_NONCE_SIZE)			\
	X(T, TAIL, has_kx)						\
	X(T, U8, protection)						\
	X(T, FIXED, kx, CLF_PROTO_KX_SIZE)
struct clf_proto_challenge {
	CLF_PROTO_CHALLENGE(PROTO_MEMBER, _)
};

#define CLF_PROTO_RESPONSE(X, T)					\
	X(T, FIXED, nonce, CLF_PROTO_NONCE_SIZE)	/* the client's */ \
	X(T, FIXED, mac, CLF_PROTO_MAC_SIZE)
struct clf_proto_response {
	CLF_PROTO_RESPONSE(PROTO_MEMBER, _)
};

#define CLF_PROTO_AUTH_OK(X, T)						\
	X(T, FIXED, mac, CLF_PROTO_MAC_SIZE)	/* the server's proof */
struct clf_proto_auth_ok {
	CLF_PROTO_AUTH_OK(PROTO_MEMBER, _)
};

/* Since 1.4: a client without the secret proves who it is with MUNGE;
 * cred is munge_encode output. */
#define CLF_PROTO_MUNGE_RESPONSE(X, T)					\
	X(T, FIXED, nonce, CLF_PROTO_NONCE_SIZE)	/* the client's */ \
	X(T, STR, cred, CLF_PROTO_MUNGE_CRED_MAX, NONEMPTY)
struct clf_proto_munge_response {
	CLF_PROTO_MUNGE_RESPONSE(PROTO_MEMBER, _)
};

/* AUTH_OK answering MUNGE_RESPONSE: the server's own credential. */
#define CLF_PROTO_MUNGE_OK(X, T)					\
	X(T, STR, cred, CLF_PROTO_MUNGE_CRED_MAX, NONEMPTY)
struct clf_proto_munge_ok {
	CLF_PROTO_MUNGE_OK(PROTO_MEMBER, _)
};

/* ------------------------------------------------------------------ */
/* Bodies used by several operations                                   */
/* ------------------------------------------------------------------ */

/* STATUS reply, any daemon. */
#define CLF_PROTO_STATUS(X, T)						\
	X(T, U64, uptime_ms)						\
	X(T, U64, requests)		/* served since start */	\
	X(T, U64, bytes_read)						\
	X(T, U64, bytes_written)					\
	X(T, U32, connections)		/* open now */			\
	X(T, U32, views)		/* registered now (iod) */	\
	X(T, TAIL, has_rx_pool)		/* since 1.25 */		\
	X(T, U32, rx_buffers)		/* RDMA receive pool: size */	\
	X(T, U32, rx_posted)		/* of which posted now */
struct clf_proto_status {
	CLF_PROTO_STATUS(PROTO_MEMBER, _)
};

/* STATFS (metad: whole file system) and IOD_STATFS replies. */
#define CLF_PROTO_STATFS(X, T)						\
	X(T, U64, bytes_total)						\
	X(T, U64, bytes_free)						\
	X(T, U64, bytes_avail)						\
	X(T, U64, files)						\
	X(T, U64, files_free)						\
	X(T, U32, block_size)						\
	X(T, U32, name_max)
struct clf_proto_statfs {
	CLF_PROTO_STATFS(PROTO_MEMBER, _)
};

/* A u64 inode or file id alone: GETATTR, GET_LAYOUT, SYNC requests. */
#define CLF_PROTO_INO(X, T)						\
	X(T, U64, ino)
struct clf_proto_ino {
	CLF_PROTO_INO(PROTO_MEMBER, _)
};

/* A u32 alone: VIEW_REGISTER reply and VIEW_RELEASE request (handle),
 * SUB_WRITE and VIEW_WRITE replies (bytes written, <= CLF_PROTO_DATA_MAX). */
#define CLF_PROTO_U32(X, T)						\
	X(T, U32, value)
struct clf_proto_u32 {
	CLF_PROTO_U32(PROTO_MEMBER, _)
};

/* SUB_READ and VIEW_READ replies: bytes32 data, <= CLF_PROTO_DATA_MAX. */
#define CLF_PROTO_DATA(X, T)						\
	X(T, DATA, data)		/* borrowed */
struct clf_proto_data {
	CLF_PROTO_DATA(PROTO_MEMBER, _)
};
/* Everything but the data bytes (send those from where they are). */
int clf_proto_data_encode_head(struct wire_writer *w,
			       const struct clf_proto_data *m);

/* ------------------------------------------------------------------ */
/* metad                                                               */
/* ------------------------------------------------------------------ */

/* GETATTR, MKDIR, SETATTR and UPDATE_SIZE replies. */
#define CLF_PROTO_ATTR(X, T)						\
	X(T, U64, ino)							\
	X(T, U32, mode)			/* type and permission bits */	\
	X(T, U32, uid)							\
	X(T, U32, gid)							\
	X(T, U32, nlink)						\
	X(T, NONNEG, size)		/* bytes */			\
	X(T, I64, atime)		/* ns since the epoch */	\
	X(T, I64, mtime)						\
	X(T, I64, ctime)
struct clf_proto_attr {
	CLF_PROTO_ATTR(PROTO_MEMBER, _)
};

#define CLF_PROTO_SUBFILE(X, T)						\
	X(T, IOD, iod)			/* iod index in the configuration */ \
	X(T, BYTES, type, 1, CLF_PROTO_TYPE_MAX_BYTES) /* CLF_Type_encode */
struct clf_proto_subfile {
	CLF_PROTO_SUBFILE(PROTO_MEMBER, _)
};

/*
 * SET_LAYOUT and GET_LAYOUT replies, and inside CREATE and LOOKUP.  kind
 * ROUND_ROBIN: 0, 0, CLF_PROTO_IOD_DEFAULT for the configured values.
 * kind EXPLICIT: nsubfiles entries; after decode OWNED
 * (clf_proto_layout_release), for encode only read.
 */
#define CLF_PROTO_LAYOUT(X, T)						\
	X(T, U8, kind)			/* enum clf_proto_layout_kind */ \
	X(T, WHEN, kind, CLF_PROTO_LAYOUT_ROUND_ROBIN)			\
	X(T, U64, stripe_size)		/* bytes */			\
	X(T, U32, stripe_count)						\
	X(T, U32, first_iod)						\
	X(T, WHEN, kind, CLF_PROTO_LAYOUT_EXPLICIT)			\
	X(T, NONNEG, disp)		/* bytes before the pattern */	\
	X(T, IOD, disp_iod)		/* iod holding those bytes */	\
	X(T, U32, nsubfiles)						\
	X(T, ARRAY, subfiles, nsubfiles, subfile, 1, CLF_PROTO_MAX_SUBFILES)
struct clf_proto_layout {
	CLF_PROTO_LAYOUT(PROTO_MEMBER, _)
};

#define CLF_PROTO_LOOKUP_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, FLAGS, flags, CLF_PROTO_LOOKUP_FLAGS)			\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)
struct clf_proto_lookup_req {
	CLF_PROTO_LOOKUP_REQ(PROTO_MEMBER, _)
};

/* The layout, when has_layout, is EXPLICIT; release the reply. */
#define CLF_PROTO_LOOKUP_REP(X, T)					\
	X(T, MSG, attr, attr)						\
	X(T, BOOL, has_layout)						\
	X(T, WHEN, has_layout, 1)					\
	X(T, MSG, layout, layout)
struct clf_proto_lookup_rep {
	CLF_PROTO_LOOKUP_REP(PROTO_MEMBER, _)
};

#define CLF_PROTO_CREATE_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)			\
	X(T, PERM, mode)						\
	X(T, U32, uid)							\
	X(T, U32, gid)							\
	X(T, FLAGS, flags, CLF_PROTO_CREATE_FLAGS)			\
	X(T, MSG, layout, layout)	/* release the request */
struct clf_proto_create_req {
	CLF_PROTO_CREATE_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_CREATE_REP(X, T)					\
	X(T, MSG, attr, attr)						\
	X(T, MSG, layout, layout)	/* EXPLICIT; release the reply */
struct clf_proto_create_rep {
	CLF_PROTO_CREATE_REP(PROTO_MEMBER, _)
};

#define CLF_PROTO_MKDIR_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)			\
	X(T, PERM, mode)						\
	X(T, U32, uid)							\
	X(T, U32, gid)
struct clf_proto_mkdir_req {
	CLF_PROTO_MKDIR_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_READDIR_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, U64, cookie)	/* 0: from the start; else an entry's */ \
	X(T, LIMIT, max, 1, CLF_PROTO_READDIR_MAX)	/* entries wanted */
struct clf_proto_readdir_req {
	CLF_PROTO_READDIR_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_DIRENT(X, T)						\
	X(T, U64, ino)							\
	X(T, U64, cookie)	/* READDIR from here continues after it */ \
	X(T, U32, mode)		/* type bits matter; permissions may be 0 */ \
	X(T, STR, name, CLF_PROTO_NAME_MAX, NAME)
struct clf_proto_dirent {
	CLF_PROTO_DIRENT(PROTO_MEMBER, _)
};

/* count entries; after decode OWNED (clf_proto_readdir_rep_release),
 * for encode only read; eof: no entries after these. */
#define CLF_PROTO_READDIR_REP(X, T)					\
	X(T, U32, count)						\
	X(T, BOOL, eof)							\
	X(T, ARRAY, ents, count, dirent, 0, CLF_PROTO_READDIR_MAX)
struct clf_proto_readdir_rep {
	CLF_PROTO_READDIR_REP(PROTO_MEMBER, _)
};

/* READDIRPLUS (1.14) request. */
#define CLF_PROTO_READDIRPLUS_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, U64, cookie)	/* 0: from the start; else an entry's */ \
	X(T, LIMIT, max, 1, CLF_PROTO_READDIR_MAX)	/* entries wanted */ \
	X(T, FLAGS, flags, CLF_PROTO_READDIRPLUS_FLAGS)
struct clf_proto_readdirplus_req {
	CLF_PROTO_READDIRPLUS_REQ(PROTO_MEMBER, _)
};

/* One READDIRPLUS entry.  has_attr false: the inode lives on another
 * metad (several metads), which a client asks for its attributes; the
 * layout, when has_layout, is EXPLICIT and the entry a regular file's. */
#define CLF_PROTO_DIRENT_PLUS(X, T)					\
	X(T, U64, cookie)	/* READDIRPLUS from here continues after it */ \
	X(T, STR, name, CLF_PROTO_NAME_MAX, NAME)			\
	X(T, U64, ino)							\
	X(T, U32, mode)		/* type bits matter, as in READDIR */	\
	X(T, BOOL, has_attr)						\
	X(T, WHEN, has_attr, 1)						\
	X(T, MSG, attr, attr)						\
	X(T, BOOL, has_layout)						\
	X(T, WHEN, has_layout, 1)					\
	X(T, MSG, layout, layout)
struct clf_proto_dirent_plus {
	CLF_PROTO_DIRENT_PLUS(PROTO_MEMBER, _)
};

/* count entries; after decode OWNED (clf_proto_readdirplus_rep_release),
 * for encode only read; eof: no entries after these. */
#define CLF_PROTO_READDIRPLUS_REP(X, T)					\
	X(T, U32, count)						\
	X(T, BOOL, eof)							\
	X(T, ARRAY, ents, count, dirent_plus, 0, CLF_PROTO_READDIR_MAX)
struct clf_proto_readdirplus_rep {
	CLF_PROTO_READDIRPLUS_REP(PROTO_MEMBER, _)
};

#define CLF_PROTO_RENAME_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)			\
	X(T, U64, new_dir)						\
	X(T, STR, new_path, CLF_PROTO_PATH_MAX, PATH)			\
	X(T, FLAGS, flags, CLF_PROTO_RENAME_FLAGS)
struct clf_proto_rename_req {
	CLF_PROTO_RENAME_REQ(PROTO_MEMBER, _)
};

/* RESOLVE (1.12): the path is walked as far as this metad holds it. */
#define CLF_PROTO_RESOLVE_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)
struct clf_proto_resolve_req {
	CLF_PROTO_RESOLVE_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_RESOLVE_REP(X, T)					\
	X(T, U64, ino)		/* the inode reached */			\
	X(T, U32, done)		/* bytes of path consumed */
struct clf_proto_resolve_rep {
	CLF_PROTO_RESOLVE_REP(PROTO_MEMBER, _)
};

/*
 * MD_PEER (1.12): what one metad asks another (metad/mds_peer.h says
 * what each kind does with the fields).
 */
#define CLF_PROTO_PEER_REQ(X, T)					\
	X(T, U32, kind)		/* MDS_PEER_* */			\
	X(T, U64, txid)		/* a cross-metad rename; 0: none */	\
	X(T, U64, ino)							\
	X(T, U64, dir)							\
	X(T, U32, mode)							\
	X(T, U32, uid)							\
	X(T, U32, gid)							\
	X(T, U32, flags)						\
	X(T, STR, name, CLF_PROTO_NAME_MAX, ANY)
struct clf_proto_peer_req {
	CLF_PROTO_PEER_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_PEER_REP(X, T)					\
	X(T, MSG, attr, attr)						\
	X(T, U64, value)	/* a parent, a state, a count */
struct clf_proto_peer_rep {
	CLF_PROTO_PEER_REP(PROTO_MEMBER, _)
};

/* UNLINK and RMDIR requests. */
#define CLF_PROTO_PATH_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)
struct clf_proto_path_req {
	CLF_PROTO_PATH_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_SETATTR_REQ(X, T)					\
	X(T, U64, ino)							\
	X(T, U32, mask)		/* CLF_PROTO_SETATTR_*: which apply */	\
	X(T, U32, mode)		/* permission bits only */		\
	X(T, U32, uid)							\
	X(T, U32, gid)							\
	X(T, I64, atime)	/* ns since the epoch */		\
	X(T, I64, mtime)						\
	X(T, I64, size)		/* >= 0 */
struct clf_proto_setattr_req {
	CLF_PROTO_SETATTR_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_SET_LAYOUT_REQ(X, T)					\
	X(T, U64, ino)							\
	X(T, MSG, layout, layout)	/* release the request */
struct clf_proto_set_layout_req {
	CLF_PROTO_SET_LAYOUT_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_UPDATE_SIZE_REQ(X, T)					\
	X(T, U64, ino)							\
	X(T, NONNEG, size)	/* new end of file */			\
	X(T, I64, mtime)	/* ns since the epoch of the last write */
struct clf_proto_update_size_req {
	CLF_PROTO_UPDATE_SIZE_REQ(PROTO_MEMBER, _)
};

/* APPEND (1.4): reserve the range of an O_APPEND write. */
#define CLF_PROTO_APPEND_REQ(X, T)					\
	X(T, U64, ino)							\
	X(T, I64, at)		/* the end of file as the client knows it */ \
	X(T, I64, length)	/* file bytes the write covers; at +	\
				   length <= CLF_PROTO_LOCK_OFFSET_MAX */ \
	X(T, FLAGS, flags, CLF_PROTO_APPEND_FLAGS)
struct clf_proto_append_req {
	CLF_PROTO_APPEND_REQ(PROTO_MEMBER, _)
};

/* Where the range starts (reserved unless EXACT and offset != at). */
#define CLF_PROTO_APPEND_REP(X, T)					\
	X(T, NONNEG, offset)
struct clf_proto_append_rep {
	CLF_PROTO_APPEND_REP(PROTO_MEMBER, _)
};

/* ------------------------------------------------------------------ */
/* metad special files and hard links (1.6; proto_link.c)              */
/* ------------------------------------------------------------------ */

#define CLF_PROTO_SYMLINK_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)			\
	X(T, STR, target, CLF_PROTO_SYMLINK_MAX, NONEMPTY)		\
	X(T, U32, uid)							\
	X(T, U32, gid)
struct clf_proto_symlink_req {
	CLF_PROTO_SYMLINK_REQ(PROTO_MEMBER, _)
};

/* READLINK request: a clf_proto_ino.  The reply: */
#define CLF_PROTO_READLINK_REP(X, T)					\
	X(T, U64, rdev)			/* device nodes; else 0 */	\
	X(T, STR, target, CLF_PROTO_SYMLINK_MAX, ANY) /* symlinks */
struct clf_proto_readlink_rep {
	CLF_PROTO_READLINK_REP(PROTO_MEMBER, _)
};

#define CLF_PROTO_LINK_REQ(X, T)					\
	X(T, U64, ino)							\
	X(T, U64, new_dir)						\
	X(T, STR, new_path, CLF_PROTO_PATH_MAX, PATH)
struct clf_proto_link_req {
	CLF_PROTO_LINK_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_MKNOD_REQ(X, T)					\
	X(T, U64, dir)							\
	X(T, STR, path, CLF_PROTO_PATH_MAX, PATH)			\
	X(T, U32, mode)	/* S_IFIFO, S_IFSOCK, S_IFCHR or S_IFBLK | perm */ \
	X(T, U32, uid)							\
	X(T, U32, gid)							\
	X(T, U64, rdev)	/* device nodes; 0 for fifos and sockets */
struct clf_proto_mknod_req {
	CLF_PROTO_MKNOD_REQ(PROTO_MEMBER, _)
};

/* ------------------------------------------------------------------ */
/* metad byte-range locks (1.1; proto_lock.c)                          */
/* ------------------------------------------------------------------ */

/* SETLK and GETLK requests; GETLK also refuses UNLOCK, flags, a wait. */
#define CLF_PROTO_LOCK_REQ(X, T)					\
	X(T, U64, ino)							\
	X(T, U64, owner)	/* chosen by the client, per connection */ \
	X(T, U64, start)	/* bytes, <= CLF_PROTO_LOCK_OFFSET_MAX */ \
	X(T, U64, length)	/* bytes; 0: to the end; last byte	\
				   within CLF_PROTO_LOCK_OFFSET_MAX */	\
	X(T, U32, type)		/* CLF_PROTO_LOCK_READ/WRITE/UNLOCK */	\
	X(T, U32, flags)	/* CLF_PROTO_LOCK_WAIT (SETLK only) */	\
	X(T, U32, wait_ms)	/* <= CLF_PROTO_LOCK_WAIT_MAX_MS; 0	\
				   without WAIT */			\
	X(T, U32, pid)		/* the owner's, for GETLK reports */
struct clf_proto_lock_req {
	CLF_PROTO_LOCK_REQ(PROTO_MEMBER, _)
};

/* GETLK reply: the lock in the way, or type UNLOCK when there is none. */
#define CLF_PROTO_LOCK_HOLDER(X, T)					\
	X(T, U32, type)		/* CLF_PROTO_LOCK_* */			\
	X(T, U64, start)	/* as in a request; 0 for none */	\
	X(T, U64, length)						\
	X(T, U32, pid)		/* of the holder, as it said */
struct clf_proto_lock_holder {
	CLF_PROTO_LOCK_HOLDER(PROTO_MEMBER, _)
};

#define CLF_PROTO_UNLOCK_OWNER_REQ(X, T)				\
	X(T, U64, ino)							\
	X(T, U64, owner)
struct clf_proto_unlock_owner_req {
	CLF_PROTO_UNLOCK_OWNER_REQ(PROTO_MEMBER, _)
};

/* ------------------------------------------------------------------ */
/* iod                                                                 */
/* ------------------------------------------------------------------ */

/* A subfile index is < CLF_PROTO_MAX_SUBFILES or CLF_PROTO_SUBFILE_HEAD. */

#define CLF_PROTO_SUB_READ_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, SUBFILE, subfile)						\
	X(T, I64, offset)	/* subfile bytes, >= 0 */		\
	X(T, LIMIT, length, 0, CLF_PROTO_DATA_MAX)
struct clf_proto_sub_read_req {
	CLF_PROTO_SUB_READ_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_SUB_WRITE_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, SUBFILE, subfile)						\
	X(T, I64, offset)	/* subfile bytes, >= 0 */		\
	X(T, DATA, data)	/* borrowed */
struct clf_proto_sub_write_req {
	CLF_PROTO_SUB_WRITE_REQ(PROTO_MEMBER, _)
};
/* Everything but the data bytes (send those from where they are). */
int clf_proto_sub_write_req_encode_head(
	struct wire_writer *w, const struct clf_proto_sub_write_req *m);
/* The head alone; see clf_proto_view_write_req_decode_head. */
/* Bytes before the data (24), from the declaration. */
#define CLF_PROTO_SUB_WRITE_HEAD (0 CLF_PROTO_SUB_WRITE_REQ(PROTO_WIRE_SIZE, _))
int clf_proto_sub_write_req_decode_head(struct wire_reader *r,
					size_t payload_len,
					struct clf_proto_sub_write_req *m);

#define CLF_PROTO_VIEW_REGISTER_REQ(X, T)				\
	X(T, U64, file)							\
	X(T, SUBFILE, subfile)						\
	X(T, NONNEG, view_disp)						\
	X(T, BYTES, view_type, 1, CLF_PROTO_TYPE_MAX_BYTES) /* encoded */ \
	X(T, NONNEG, subfile_disp)					\
	X(T, BYTES, subfile_type, 1, CLF_PROTO_TYPE_MAX_BYTES)
struct clf_proto_view_register_req {
	CLF_PROTO_VIEW_REGISTER_REQ(PROTO_MEMBER, _)
};

/* VIEW_READ (no data) and VIEW_WRITE (data) requests. */
#define CLF_PROTO_VIEW_READ_REQ(X, T)					\
	X(T, U32, handle)						\
	X(T, FLAGS, flags, CLF_PROTO_VIEW_FLAGS)			\
	X(T, I64, lo)		/* view linear range [lo, hi) */	\
	X(T, I64, hi)							\
	X(T, U64, coll_tag)	/* collective operation; 0 unless	\
				   COLLECTIVE */			\
	X(T, U32, participants)	/* processes in it; 0 unless COLLECTIVE */
#define CLF_PROTO_VIEW_WRITE_REQ(X, T)					\
	CLF_PROTO_VIEW_READ_REQ(X, T)					\
	X(T, DATA, data)	/* at most hi - lo bytes; borrowed */
struct clf_proto_view_io_req {
	CLF_PROTO_VIEW_WRITE_REQ(PROTO_MEMBER, _)
};
int clf_proto_view_write_req_encode_head(struct wire_writer *w,
					 const struct clf_proto_view_io_req *m);
/*
 * The head of a VIEW_WRITE (or SUB_WRITE, above) alone: r holds the
 * bytes before the data, payload_len is the whole body's length, and the
 * data -- the rest of the body -- is left for the caller to receive
 * (into a file).  m->data gets its length and a NULL pointer.
 */
/* Bytes before the data (40), from the declaration. */
#define CLF_PROTO_VIEW_WRITE_HEAD \
	(0 CLF_PROTO_VIEW_WRITE_REQ(PROTO_WIRE_SIZE, _))
int clf_proto_view_write_req_decode_head(struct wire_reader *r,
					 size_t payload_len,
					 struct clf_proto_view_io_req *m);

#define CLF_PROTO_TRUNCATE_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, SUBFILE, subfile)						\
	X(T, NONNEG, length)	/* new subfile length */
struct clf_proto_truncate_req {
	CLF_PROTO_TRUNCATE_REQ(PROTO_MEMBER, _)
};

#define CLF_PROTO_REMOVE_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, SUBFILE_OR_ALL, subfile)
struct clf_proto_remove_req {
	CLF_PROTO_REMOVE_REQ(PROTO_MEMBER, _)
};

/* FENCE (1.18): a file's subfiles leave this iod. */
#define CLF_PROTO_FENCE_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, U32, mode)
struct clf_proto_fence_req {
	CLF_PROTO_FENCE_REQ(PROTO_MEMBER, _)
};

/* SUB_MOVE (1.19): a subfile's move between iods, at metad. */
#define CLF_PROTO_SUB_MOVE_REQ(X, T)					\
	X(T, U64, ino)							\
	X(T, U32, subfile)						\
	X(T, U32, from)							\
	X(T, U32, to)							\
	X(T, U32, phase)
struct clf_proto_sub_move_req {
	CLF_PROTO_SUB_MOVE_REQ(PROTO_MEMBER, _)
};

/* SUB_SIZES: the lengths of n subfiles of one file (or SUBFILE_HEAD). */
#define CLF_PROTO_SUB_SIZES_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, U32, n)							\
	X(T, VEC, subfile, n, SUBFILE, 1, CLF_PROTO_SUB_SIZES_MAX)
struct clf_proto_sub_sizes_req {
	CLF_PROTO_SUB_SIZES_REQ(PROTO_MEMBER, _)
};

/* As many lengths as asked. */
#define CLF_PROTO_SUB_SIZES(X, T)					\
	X(T, U32, n)							\
	X(T, VEC, length, n, NONNEG, 1, CLF_PROTO_SUB_SIZES_MAX)
struct clf_proto_sub_sizes {
	CLF_PROTO_SUB_SIZES(PROTO_MEMBER, _)
};

/* ------------------------------------------------------------------ */
/* Every declared message: name, body struct, fields, what, checks     */
/* ------------------------------------------------------------------ */

/*
 * M(name, type, fields, what, check): clf_proto_<name>_encode, _decode
 * and _release on a struct clf_proto_<type> declared by the field list,
 * "what" naming it in errors, check (proto_i.h) its rules that tie
 * fields together or NULL.  The fuzzer's table is this list, in this
 * order (its inputs name a decoder by index: append only).
 */
/* SUB_LIST request: the subfiles at or after (file, subfile). */
#define CLF_PROTO_SUB_LIST_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, U32, subfile)						\
	X(T, LIMIT, max, 1, CLF_PROTO_SUB_LIST_MAX)
struct clf_proto_sub_list_req {
	CLF_PROTO_SUB_LIST_REQ(PROTO_MEMBER, _)
};

/* SUB_LIST reply: n subfiles in (file, subfile) order, their lengths. */
#define CLF_PROTO_SUB_LIST(X, T)					\
	X(T, BOOL, more)	/* others follow the last */		\
	X(T, LIMIT, n, 0, CLF_PROTO_SUB_LIST_MAX)			\
	X(T, VEC, file, n, U64, 0, CLF_PROTO_SUB_LIST_MAX)		\
	X(T, VEC, subfile, n, U32, 0, CLF_PROTO_SUB_LIST_MAX)		\
	X(T, VEC, length, n, NONNEG, 0, CLF_PROTO_SUB_LIST_MAX)
struct clf_proto_sub_list {
	CLF_PROTO_SUB_LIST(PROTO_MEMBER, _)
};

/* INSTANCE reply (1.10): how to reach the instance, for a client with no
 * configuration file (clf://HOST:PORT names); since 1.17 (has_metads)
 * its metads too, by index, for a namespace spread over several. */
#define CLF_PROTO_IOD_ADDR(X, T)					\
	X(T, STR, addr, CLF_PROTO_ADDR_MAX, NONEMPTY)	/* "host:port" */
struct clf_proto_iod_addr {
	CLF_PROTO_IOD_ADDR(PROTO_MEMBER, _)
};
#define CLF_PROTO_INSTANCE(X, T)					\
	X(T, U64, stripe_size)	/* bytes, the default layout's */	\
	X(T, U32, stripe_count)						\
	X(T, U32, first_iod)						\
	X(T, U32, timeout_ms)	/* what the instance's clients use */	\
	X(T, U32, recovery_grace_s)					\
	X(T, U32, niods)						\
	X(T, ARRAY, iods, niods, iod_addr, 1, CLF_PROTO_MAX_IODS)	\
	X(T, TAIL, has_metads)	/* since 1.17 */			\
	X(T, U32, metad_index)	/* the answering metad's */		\
	X(T, U32, nmetads)						\
	X(T, ARRAY, metads, nmetads, iod_addr, 1, CLF_PROTO_MAX_METADS)
/* After decode OWNED (clf_proto_instance_release); encode only reads. */
struct clf_proto_instance {
	CLF_PROTO_INSTANCE(PROTO_MEMBER, _)
};

/* SUB_READV and SUB_WRITEV (1.11): n ranges of the subfiles of a file. */
#define CLF_PROTO_SUB_READV_REQ(X, T)					\
	X(T, U64, file)							\
	X(T, U32, n)							\
	X(T, VEC, subfile, n, SUBFILE, 1, CLF_PROTO_SUB_VEC_MAX)		\
	X(T, VEC, offset, n, NONNEG, 1, CLF_PROTO_SUB_VEC_MAX)		\
	X(T, VEC, length, n, U32, 1, CLF_PROTO_SUB_VEC_MAX)
#define CLF_PROTO_SUB_WRITEV_REQ(X, T)					\
	CLF_PROTO_SUB_READV_REQ(X, T)					\
	X(T, DATA, data)	/* the ranges' bytes in order; borrowed */
struct clf_proto_sub_vec_req {
	CLF_PROTO_SUB_WRITEV_REQ(PROTO_MEMBER, _)
};
/* Everything but the data bytes (send those from where they are). */
int clf_proto_sub_writev_req_encode_head(
	struct wire_writer *w, const struct clf_proto_sub_vec_req *m);
/* SUB_SIZES_MANY request (1.15): subfile[i] of file[i]; the reply is a
 * clf_proto_sub_sizes. */
#define CLF_PROTO_SUB_SIZES_MANY_REQ(X, T)				\
	X(T, LIMIT, n, 1, CLF_PROTO_SUB_BATCH_MAX)			\
	X(T, VEC, file, n, U64, 1, CLF_PROTO_SUB_BATCH_MAX)		\
	X(T, VEC, subfile, n, SUBFILE, 1, CLF_PROTO_SUB_BATCH_MAX)
struct clf_proto_sub_sizes_many_req {
	CLF_PROTO_SUB_SIZES_MANY_REQ(PROTO_MEMBER, _)
};

/* REMOVE_MANY request (1.16): every subfile of each file. */
#define CLF_PROTO_REMOVE_MANY_REQ(X, T)					\
	X(T, LIMIT, n, 1, CLF_PROTO_SUB_BATCH_MAX)			\
	X(T, VEC, file, n, U64, 1, CLF_PROTO_SUB_BATCH_MAX)
struct clf_proto_remove_many_req {
	CLF_PROTO_REMOVE_MANY_REQ(PROTO_MEMBER, _)
};

/* REMOVE_MANY reply: as many statuses as files asked, in their order:
 * 0 or an errno number. */
#define CLF_PROTO_REMOVE_MANY_REP(X, T)					\
	X(T, LIMIT, n, 1, CLF_PROTO_SUB_BATCH_MAX)			\
	X(T, VEC, status, n, U32, 1, CLF_PROTO_SUB_BATCH_MAX)
struct clf_proto_remove_many_rep {
	CLF_PROTO_REMOVE_MANY_REP(PROTO_MEMBER, _)
};

/*
 * Extent locks (1.13, clf_proto.h "Extent locks"): a caching client's
 * locks on subfile ranges, and the iod's REVOKE pushed on the client's
 * callback connection.
 */
#define CLF_PROTO_LOCK_CALLBACK_REQ(X, T)				\
	X(T, U64, client)
struct clf_proto_lock_callback_req {
	CLF_PROTO_LOCK_CALLBACK_REQ(PROTO_MEMBER, _)
};
#define CLF_PROTO_LOCK_ENQUEUE_REQ(X, T)				\
	X(T, U64, client)						\
	X(T, U64, file)							\
	X(T, SUBFILE, subfile)						\
	X(T, LIMIT, mode, CLF_PROTO_LOCK_PR, CLF_PROTO_LOCK_PW)		\
	X(T, NONNEG, lo)						\
	X(T, NONNEG, hi)						\
	X(T, TAIL, has_stride)		/* since 1.26 */		\
	X(T, NONNEG, stride)						\
	X(T, NONNEG, block)						\
	X(T, TAIL, in_file)		/* since 1.27 */		\
	X(T, NONNEG, phase)
struct clf_proto_lock_enqueue_req {
	CLF_PROTO_LOCK_ENQUEUE_REQ(PROTO_MEMBER, _)
};
#define CLF_PROTO_LOCK_GRANT(X, T)					\
	X(T, U64, id)							\
	X(T, NONNEG, lo)						\
	X(T, NONNEG, hi)						\
	X(T, TAIL, has_stride)		/* since 1.26 */		\
	X(T, NONNEG, stride)						\
	X(T, NONNEG, block)						\
	X(T, TAIL, in_file)		/* since 1.27 */		\
	X(T, NONNEG, phase)
struct clf_proto_lock_grant {
	CLF_PROTO_LOCK_GRANT(PROTO_MEMBER, _)
};
#define CLF_PROTO_LOCK_RELEASE_REQ(X, T)				\
	X(T, U64, client)						\
	X(T, U64, id)
struct clf_proto_lock_release_req {
	CLF_PROTO_LOCK_RELEASE_REQ(PROTO_MEMBER, _)
};
#define CLF_PROTO_REVOKE(X, T)						\
	X(T, U64, id)							\
	X(T, U64, file)							\
	X(T, SUBFILE, subfile)						\
	X(T, NONNEG, lo)						\
	X(T, NONNEG, hi)
struct clf_proto_revoke {
	CLF_PROTO_REVOKE(PROTO_MEMBER, _)
};

/*
 * VIEW_MERGED (1.24, clf_proto.h "Merged collectives"): the collective
 * requests of several relayed connections, and their answers.  Bodies
 * are borrowed; the arrays OWNED after decode
 * (clf_proto_view_merged_req_release, _rep_release).
 */
#define CLF_PROTO_MERGED_PIECE(X, T)					\
	X(T, U16, port)		/* of the relayed connection */		\
	X(T, U16, opcode)	/* VIEW_WRITE or VIEW_READ */		\
	X(T, BYTES, body, 0, CLF_PROTO_PAYLOAD_MAX)
struct clf_proto_merged_piece {
	CLF_PROTO_MERGED_PIECE(PROTO_MEMBER, _)
};
#define CLF_PROTO_VIEW_MERGED_REQ(X, T)					\
	X(T, LIMIT, n, 1, CLF_PROTO_MERGED_MAX)				\
	X(T, ARRAY, pieces, n, merged_piece, 1, CLF_PROTO_MERGED_MAX)
struct clf_proto_view_merged_req {
	CLF_PROTO_VIEW_MERGED_REQ(PROTO_MEMBER, _)
};
#define CLF_PROTO_MERGED_ANSWER(X, T)					\
	X(T, U32, status)	/* 0 or an errno number */		\
	X(T, BYTES, body, 0, CLF_PROTO_PAYLOAD_MAX)
struct clf_proto_merged_answer {
	CLF_PROTO_MERGED_ANSWER(PROTO_MEMBER, _)
};
#define CLF_PROTO_VIEW_MERGED_REP(X, T)					\
	X(T, LIMIT, n, 1, CLF_PROTO_MERGED_MAX)				\
	X(T, ARRAY, answers, n, merged_answer, 1, CLF_PROTO_MERGED_MAX)
struct clf_proto_view_merged_rep {
	CLF_PROTO_VIEW_MERGED_REP(PROTO_MEMBER, _)
};

#define CLF_PROTO_MESSAGES(M)						\
	M(hello, hello, CLF_PROTO_HELLO, "HELLO", proto_check_hello)	\
	M(challenge, challenge, CLF_PROTO_CHALLENGE, "CHALLENGE",	\
	  proto_check_challenge)					\
	M(response, response, CLF_PROTO_RESPONSE, "RESPONSE", NULL)	\
	M(auth_ok, auth_ok, CLF_PROTO_AUTH_OK, "AUTH_OK", NULL)		\
	M(status, status, CLF_PROTO_STATUS, "STATUS reply", NULL)	\
	M(statfs, statfs, CLF_PROTO_STATFS, "STATFS reply", NULL)	\
	M(ino, ino, CLF_PROTO_INO, "inode number", NULL)		\
	M(u32, u32, CLF_PROTO_U32, "u32 body", NULL)			\
	M(data, data, CLF_PROTO_DATA, "data reply", NULL)		\
	M(attr, attr, CLF_PROTO_ATTR, "attr", NULL)			\
	M(layout, layout, CLF_PROTO_LAYOUT, "layout", proto_check_layout) \
	M(lookup_req, lookup_req, CLF_PROTO_LOOKUP_REQ, "LOOKUP", NULL)	\
	M(lookup_rep, lookup_rep, CLF_PROTO_LOOKUP_REP, "LOOKUP reply",	\
	  proto_check_lookup_rep)					\
	M(create_req, create_req, CLF_PROTO_CREATE_REQ, "CREATE", NULL)	\
	M(create_rep, create_rep, CLF_PROTO_CREATE_REP, "CREATE reply",	\
	  proto_check_create_rep)					\
	M(mkdir_req, mkdir_req, CLF_PROTO_MKDIR_REQ, "MKDIR", NULL)	\
	M(readdir_req, readdir_req, CLF_PROTO_READDIR_REQ, "READDIR", NULL) \
	M(readdir_rep, readdir_rep, CLF_PROTO_READDIR_REP,		\
	  "READDIR reply", NULL)					\
	M(rename_req, rename_req, CLF_PROTO_RENAME_REQ, "RENAME", NULL)	\
	M(path_req, path_req, CLF_PROTO_PATH_REQ, "path request", NULL)	\
	M(resolve_req, resolve_req, CLF_PROTO_RESOLVE_REQ, "RESOLVE", NULL) \
	M(resolve_rep, resolve_rep, CLF_PROTO_RESOLVE_REP, "RESOLVE reply", \
	  NULL)								\
	M(peer_req, peer_req, CLF_PROTO_PEER_REQ, "MD_PEER", NULL)	\
	M(peer_rep, peer_rep, CLF_PROTO_PEER_REP, "MD_PEER reply", NULL) \
	M(setattr_req, setattr_req, CLF_PROTO_SETATTR_REQ, "SETATTR",	\
	  proto_check_setattr_req)					\
	M(set_layout_req, set_layout_req, CLF_PROTO_SET_LAYOUT_REQ,	\
	  "SET_LAYOUT", NULL)						\
	M(update_size_req, update_size_req, CLF_PROTO_UPDATE_SIZE_REQ,	\
	  "UPDATE_SIZE", NULL)						\
	M(append_req, append_req, CLF_PROTO_APPEND_REQ, "APPEND",	\
	  proto_check_append_req)					\
	M(append_rep, append_rep, CLF_PROTO_APPEND_REP, "APPEND reply", NULL) \
	M(setlk_req, lock_req, CLF_PROTO_LOCK_REQ, "SETLK",		\
	  proto_check_setlk_req)					\
	M(getlk_req, lock_req, CLF_PROTO_LOCK_REQ, "GETLK",		\
	  proto_check_getlk_req)					\
	M(lock_holder, lock_holder, CLF_PROTO_LOCK_HOLDER, "GETLK reply", \
	  proto_check_lock_holder)					\
	M(unlock_owner_req, unlock_owner_req, CLF_PROTO_UNLOCK_OWNER_REQ, \
	  "UNLOCK_OWNER", NULL)						\
	M(sub_read_req, sub_read_req, CLF_PROTO_SUB_READ_REQ, "SUB_READ", \
	  proto_check_sub_read_req)					\
	M(sub_write_req, sub_write_req, CLF_PROTO_SUB_WRITE_REQ,	\
	  "SUB_WRITE", proto_check_sub_write_req)			\
	M(view_register_req, view_register_req,				\
	  CLF_PROTO_VIEW_REGISTER_REQ, "VIEW_REGISTER", NULL)		\
	M(view_read_req, view_io_req, CLF_PROTO_VIEW_READ_REQ, "VIEW_READ", \
	  proto_check_view_read_req)					\
	M(view_write_req, view_io_req, CLF_PROTO_VIEW_WRITE_REQ,	\
	  "VIEW_WRITE", proto_check_view_write_req)			\
	M(truncate_req, truncate_req, CLF_PROTO_TRUNCATE_REQ, "TRUNCATE", \
	  NULL)								\
	M(remove_req, remove_req, CLF_PROTO_REMOVE_REQ, "REMOVE", NULL)	\
	M(fence_req, fence_req, CLF_PROTO_FENCE_REQ, "FENCE", NULL)	\
	M(sub_move_req, sub_move_req, CLF_PROTO_SUB_MOVE_REQ, "SUB_MOVE", \
	  NULL)								\
	M(sub_sizes_req, sub_sizes_req, CLF_PROTO_SUB_SIZES_REQ,	\
	  "SUB_SIZES", NULL)						\
	M(sub_sizes, sub_sizes, CLF_PROTO_SUB_SIZES, "SUB_SIZES reply", NULL) \
	M(munge_response, munge_response, CLF_PROTO_MUNGE_RESPONSE,	\
	  "MUNGE_RESPONSE", NULL)					\
	M(munge_ok, munge_ok, CLF_PROTO_MUNGE_OK, "AUTH_OK", NULL)	\
	M(symlink_req, symlink_req, CLF_PROTO_SYMLINK_REQ, "SYMLINK", NULL) \
	M(readlink_rep, readlink_rep, CLF_PROTO_READLINK_REP,		\
	  "READLINK reply", proto_check_readlink_rep)			\
	M(link_req, link_req, CLF_PROTO_LINK_REQ, "LINK", NULL)		\
	M(mknod_req, mknod_req, CLF_PROTO_MKNOD_REQ, "MKNOD",		\
	  proto_check_mknod_req)					\
	M(sub_list_req, sub_list_req, CLF_PROTO_SUB_LIST_REQ, "SUB_LIST", \
	  NULL)								\
	M(sub_list, sub_list, CLF_PROTO_SUB_LIST, "SUB_LIST reply", NULL) \
	M(instance, instance, CLF_PROTO_INSTANCE, "INSTANCE reply", NULL) \
	M(sub_readv_req, sub_vec_req, CLF_PROTO_SUB_READV_REQ,		\
	  "SUB_READV", proto_check_sub_readv_req)			\
	M(sub_writev_req, sub_vec_req, CLF_PROTO_SUB_WRITEV_REQ,	\
	  "SUB_WRITEV", proto_check_sub_writev_req)			\
	M(lock_callback_req, lock_callback_req,				\
	  CLF_PROTO_LOCK_CALLBACK_REQ, "LOCK_CALLBACK",			\
	  proto_check_lock_callback_req)				\
	M(lock_enqueue_req, lock_enqueue_req, CLF_PROTO_LOCK_ENQUEUE_REQ, \
	  "LOCK_ENQUEUE", proto_check_lock_enqueue_req)			\
	M(lock_grant, lock_grant, CLF_PROTO_LOCK_GRANT,			\
	  "LOCK_ENQUEUE reply", proto_check_lock_grant)			\
	M(lock_release_req, lock_release_req, CLF_PROTO_LOCK_RELEASE_REQ, \
	  "LOCK_RELEASE", proto_check_lock_release_req)			\
	M(revoke, revoke, CLF_PROTO_REVOKE, "REVOKE", proto_check_revoke) \
	M(readdirplus_req, readdirplus_req, CLF_PROTO_READDIRPLUS_REQ,	\
	  "READDIRPLUS", NULL)						\
	M(readdirplus_rep, readdirplus_rep, CLF_PROTO_READDIRPLUS_REP,	\
	  "READDIRPLUS reply", proto_check_readdirplus_rep)		\
	M(sub_sizes_many_req, sub_sizes_many_req,			\
	  CLF_PROTO_SUB_SIZES_MANY_REQ, "SUB_SIZES_MANY", NULL)		\
	M(remove_many_req, remove_many_req, CLF_PROTO_REMOVE_MANY_REQ,	\
	  "REMOVE_MANY", NULL)						\
	M(remove_many_rep, remove_many_rep, CLF_PROTO_REMOVE_MANY_REP,	\
	  "REMOVE_MANY reply", NULL)					\
	M(view_merged_req, view_merged_req, CLF_PROTO_VIEW_MERGED_REQ,	\
	  "VIEW_MERGED", NULL)						\
	M(view_merged_rep, view_merged_rep, CLF_PROTO_VIEW_MERGED_REP,	\
	  "VIEW_MERGED reply", NULL)

/* Bodies that are parts of messages only: M as above. */
#define CLF_PROTO_PARTS(M)						\
	M(subfile, subfile, CLF_PROTO_SUBFILE, "layout subfile", NULL)	\
	M(dirent, dirent, CLF_PROTO_DIRENT, "READDIR reply", NULL)	\
	M(iod_addr, iod_addr, CLF_PROTO_IOD_ADDR, "INSTANCE reply", NULL) \
	M(dirent_plus, dirent_plus, CLF_PROTO_DIRENT_PLUS,		\
	  "READDIRPLUS reply", NULL)					\
	M(merged_piece, merged_piece, CLF_PROTO_MERGED_PIECE,		\
	  "VIEW_MERGED", NULL)						\
	M(merged_answer, merged_answer, CLF_PROTO_MERGED_ANSWER,	\
	  "VIEW_MERGED reply", NULL)

CLF_PROTO_MESSAGES(PROTO_PROTOTYPES)

#endif /* CLF_PROTO_LIB_H */
