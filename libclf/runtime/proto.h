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
struct clf_proto_error {
	struct clf_proto_str message;	/* borrowed */
};
int clf_proto_error_encode(struct wire_writer *w,
			   const struct clf_proto_error *m);
int clf_proto_error_decode(struct wire_reader *r, struct clf_proto_error *m);

/* ------------------------------------------------------------------ */
/* Authentication (libclf/runtime/auth.h runs the exchange)                    */
/* ------------------------------------------------------------------ */

struct clf_proto_hello {
	uint16_t major, minor;		/* the client's own version */
	/* 1..CLF_PROTO_ROLE_MAX bytes of printable ASCII; borrowed */
	struct clf_proto_str role;
	/* Since 1.8 (has_kx): the protection asked, a key share */
	bool has_kx;
	uint8_t protection;
	uint8_t kx[CLF_PROTO_KX_SIZE];
};
int clf_proto_hello_encode(struct wire_writer *w,
			   const struct clf_proto_hello *m);
int clf_proto_hello_decode(struct wire_reader *r, struct clf_proto_hello *m);

struct clf_proto_challenge {
	uint16_t major, minor;		/* the server's own version */
	uint8_t nonce[CLF_PROTO_NONCE_SIZE];
	/* Since 1.8 (has_kx): the protection in force, a key share */
	bool has_kx;
	uint8_t protection;
	uint8_t kx[CLF_PROTO_KX_SIZE];
};
int clf_proto_challenge_encode(struct wire_writer *w,
			       const struct clf_proto_challenge *m);
int clf_proto_challenge_decode(struct wire_reader *r,
			       struct clf_proto_challenge *m);

struct clf_proto_response {
	uint8_t nonce[CLF_PROTO_NONCE_SIZE];	/* the client's */
	uint8_t mac[CLF_PROTO_MAC_SIZE];
};
int clf_proto_response_encode(struct wire_writer *w,
			      const struct clf_proto_response *m);
int clf_proto_response_decode(struct wire_reader *r,
			      struct clf_proto_response *m);

struct clf_proto_auth_ok {
	uint8_t mac[CLF_PROTO_MAC_SIZE];	/* the server's proof */
};
int clf_proto_auth_ok_encode(struct wire_writer *w,
			     const struct clf_proto_auth_ok *m);
int clf_proto_auth_ok_decode(struct wire_reader *r,
			     struct clf_proto_auth_ok *m);

/* Since 1.4: a client without the secret proves who it is with MUNGE. */
struct clf_proto_munge_response {
	uint8_t nonce[CLF_PROTO_NONCE_SIZE];	/* the client's */
	struct clf_proto_str cred;	/* 1..CLF_PROTO_MUNGE_CRED_MAX bytes of
					   munge_encode output; borrowed */
};
int clf_proto_munge_response_encode(struct wire_writer *w,
				    const struct clf_proto_munge_response *m);
int clf_proto_munge_response_decode(struct wire_reader *r,
				    struct clf_proto_munge_response *m);

/* AUTH_OK answering MUNGE_RESPONSE: the server's own credential. */
struct clf_proto_munge_ok {
	struct clf_proto_str cred;	/* borrowed */
};
int clf_proto_munge_ok_encode(struct wire_writer *w,
			      const struct clf_proto_munge_ok *m);
int clf_proto_munge_ok_decode(struct wire_reader *r,
			      struct clf_proto_munge_ok *m);

/* ------------------------------------------------------------------ */
/* Bodies used by several operations                                   */
/* ------------------------------------------------------------------ */

/* STATUS reply, any daemon. */
struct clf_proto_status {
	uint64_t uptime_ms;
	uint64_t requests;	/* served since start */
	uint64_t bytes_read, bytes_written;
	uint32_t connections;	/* open now */
	uint32_t views;		/* registered now (iod) */
};
int clf_proto_status_encode(struct wire_writer *w,
			    const struct clf_proto_status *m);
int clf_proto_status_decode(struct wire_reader *r, struct clf_proto_status *m);

/* STATFS (metad: whole file system) and IOD_STATFS replies. */
struct clf_proto_statfs {
	uint64_t bytes_total, bytes_free, bytes_avail;
	uint64_t files, files_free;
	uint32_t block_size;
	uint32_t name_max;
};
int clf_proto_statfs_encode(struct wire_writer *w,
			    const struct clf_proto_statfs *m);
int clf_proto_statfs_decode(struct wire_reader *r, struct clf_proto_statfs *m);

/* A u64 inode or file id alone: GETATTR, GET_LAYOUT, SYNC requests. */
struct clf_proto_ino {
	uint64_t ino;
};
int clf_proto_ino_encode(struct wire_writer *w, const struct clf_proto_ino *m);
int clf_proto_ino_decode(struct wire_reader *r, struct clf_proto_ino *m);

/* A u32 alone: VIEW_REGISTER reply and VIEW_RELEASE request (handle),
 * SUB_WRITE and VIEW_WRITE replies (bytes written, <= CLF_PROTO_DATA_MAX). */
struct clf_proto_u32 {
	uint32_t value;
};
int clf_proto_u32_encode(struct wire_writer *w, const struct clf_proto_u32 *m);
int clf_proto_u32_decode(struct wire_reader *r, struct clf_proto_u32 *m);

/* SUB_READ and VIEW_READ replies: bytes32 data, <= CLF_PROTO_DATA_MAX. */
struct clf_proto_data {
	struct clf_proto_bytes data;	/* borrowed */
};
int clf_proto_data_encode(struct wire_writer *w,
			  const struct clf_proto_data *m);
/* Everything but the data bytes (send those from where they are). */
int clf_proto_data_encode_head(struct wire_writer *w,
			       const struct clf_proto_data *m);
int clf_proto_data_decode(struct wire_reader *r, struct clf_proto_data *m);

/* ------------------------------------------------------------------ */
/* metad                                                               */
/* ------------------------------------------------------------------ */

struct clf_proto_attr {
	uint64_t ino;
	uint32_t mode;		/* type and permission bits */
	uint32_t uid, gid, nlink;
	int64_t size;		/* bytes, >= 0 */
	int64_t atime, mtime, ctime;	/* ns since the epoch */
};
/* GETATTR, MKDIR, SETATTR and UPDATE_SIZE replies. */
int clf_proto_attr_encode(struct wire_writer *w,
			  const struct clf_proto_attr *m);
int clf_proto_attr_decode(struct wire_reader *r, struct clf_proto_attr *m);

struct clf_proto_subfile {
	uint32_t iod;			/* iod index in the configuration */
	struct clf_proto_bytes type;	/* CLF_Type_encode output; borrowed */
};

struct clf_proto_layout {
	uint8_t kind;			/* enum clf_proto_layout_kind */
	/* kind ROUND_ROBIN; 0, 0, CLF_PROTO_IOD_DEFAULT: configured value */
	uint64_t stripe_size;		/* bytes */
	uint32_t stripe_count;
	uint32_t first_iod;
	/* kind EXPLICIT */
	int64_t disp;			/* bytes before the pattern, >= 0 */
	uint32_t disp_iod;		/* iod holding those bytes */
	uint32_t nsubfiles;
	/* nsubfiles entries; after decode OWNED (clf_proto_layout_release),
	 * for encode only read. */
	struct clf_proto_subfile *subfiles;
};
/* SET_LAYOUT and GET_LAYOUT replies. */
int clf_proto_layout_encode(struct wire_writer *w,
			    const struct clf_proto_layout *m);
int clf_proto_layout_decode(struct wire_reader *r, struct clf_proto_layout *m);
/* Frees a decoded layout's subfiles array; NULL ok. */
void clf_proto_layout_release(struct clf_proto_layout *m);

struct clf_proto_lookup_req {
	uint64_t dir;
	uint32_t flags;			/* CLF_PROTO_LOOKUP_* */
	struct clf_proto_str path;	/* borrowed */
};
int clf_proto_lookup_req_encode(struct wire_writer *w,
				const struct clf_proto_lookup_req *m);
int clf_proto_lookup_req_decode(struct wire_reader *r,
				struct clf_proto_lookup_req *m);

struct clf_proto_lookup_rep {
	struct clf_proto_attr attr;
	bool has_layout;
	struct clf_proto_layout layout;	/* when has_layout; release below */
};
int clf_proto_lookup_rep_encode(struct wire_writer *w,
				const struct clf_proto_lookup_rep *m);
int clf_proto_lookup_rep_decode(struct wire_reader *r,
				struct clf_proto_lookup_rep *m);
void clf_proto_lookup_rep_release(struct clf_proto_lookup_rep *m);

struct clf_proto_create_req {
	uint64_t dir;
	struct clf_proto_str path;	/* borrowed */
	uint32_t mode;			/* permission bits only */
	uint32_t uid, gid;
	uint32_t flags;			/* CLF_PROTO_CREATE_* */
	struct clf_proto_layout layout;	/* release below */
};
int clf_proto_create_req_encode(struct wire_writer *w,
				const struct clf_proto_create_req *m);
int clf_proto_create_req_decode(struct wire_reader *r,
				struct clf_proto_create_req *m);
void clf_proto_create_req_release(struct clf_proto_create_req *m);

struct clf_proto_create_rep {
	struct clf_proto_attr attr;
	struct clf_proto_layout layout;	/* EXPLICIT; release below */
};
int clf_proto_create_rep_encode(struct wire_writer *w,
				const struct clf_proto_create_rep *m);
int clf_proto_create_rep_decode(struct wire_reader *r,
				struct clf_proto_create_rep *m);
void clf_proto_create_rep_release(struct clf_proto_create_rep *m);

struct clf_proto_mkdir_req {
	uint64_t dir;
	struct clf_proto_str path;	/* borrowed */
	uint32_t mode;			/* permission bits only */
	uint32_t uid, gid;
};
int clf_proto_mkdir_req_encode(struct wire_writer *w,
			       const struct clf_proto_mkdir_req *m);
int clf_proto_mkdir_req_decode(struct wire_reader *r,
			       struct clf_proto_mkdir_req *m);

struct clf_proto_readdir_req {
	uint64_t dir;
	uint64_t cookie;	/* 0: from the start; else an entry's cookie */
	uint32_t max;		/* 1..CLF_PROTO_READDIR_MAX entries wanted */
};
int clf_proto_readdir_req_encode(struct wire_writer *w,
				 const struct clf_proto_readdir_req *m);
int clf_proto_readdir_req_decode(struct wire_reader *r,
				 struct clf_proto_readdir_req *m);

struct clf_proto_dirent {
	uint64_t ino;
	uint64_t cookie;	/* READDIR from here continues after this one */
	uint32_t mode;		/* type bits matter; permissions may be 0 */
	struct clf_proto_str name;	/* a single component; borrowed */
};

struct clf_proto_readdir_rep {
	uint32_t count;		/* <= CLF_PROTO_READDIR_MAX */
	bool eof;		/* no entries after these */
	/* count entries; after decode OWNED (clf_proto_readdir_rep_release),
	 * for encode only read. */
	struct clf_proto_dirent *ents;
};
int clf_proto_readdir_rep_encode(struct wire_writer *w,
				 const struct clf_proto_readdir_rep *m);
int clf_proto_readdir_rep_decode(struct wire_reader *r,
				 struct clf_proto_readdir_rep *m);
void clf_proto_readdir_rep_release(struct clf_proto_readdir_rep *m);

struct clf_proto_rename_req {
	uint64_t dir;
	struct clf_proto_str path;	/* borrowed */
	uint64_t new_dir;
	struct clf_proto_str new_path;	/* borrowed */
	uint32_t flags;			/* CLF_PROTO_RENAME_* */
};
int clf_proto_rename_req_encode(struct wire_writer *w,
				const struct clf_proto_rename_req *m);
int clf_proto_rename_req_decode(struct wire_reader *r,
				struct clf_proto_rename_req *m);

/* UNLINK and RMDIR requests. */
struct clf_proto_path_req {
	uint64_t dir;
	struct clf_proto_str path;	/* borrowed */
};
int clf_proto_path_req_encode(struct wire_writer *w,
			      const struct clf_proto_path_req *m);
int clf_proto_path_req_decode(struct wire_reader *r,
			      struct clf_proto_path_req *m);

struct clf_proto_setattr_req {
	uint64_t ino;
	uint32_t mask;		/* CLF_PROTO_SETATTR_*: which fields apply */
	uint32_t mode;		/* permission bits only */
	uint32_t uid, gid;
	int64_t atime, mtime;	/* ns since the epoch */
	int64_t size;		/* >= 0 */
};
int clf_proto_setattr_req_encode(struct wire_writer *w,
				 const struct clf_proto_setattr_req *m);
int clf_proto_setattr_req_decode(struct wire_reader *r,
				 struct clf_proto_setattr_req *m);

struct clf_proto_set_layout_req {
	uint64_t ino;
	struct clf_proto_layout layout;	/* release below */
};
int clf_proto_set_layout_req_encode(struct wire_writer *w,
				    const struct clf_proto_set_layout_req *m);
int clf_proto_set_layout_req_decode(struct wire_reader *r,
				    struct clf_proto_set_layout_req *m);
void clf_proto_set_layout_req_release(struct clf_proto_set_layout_req *m);

struct clf_proto_update_size_req {
	uint64_t ino;
	int64_t size;		/* new end of file, >= 0 */
	int64_t mtime;		/* ns since the epoch of the last write */
};
int clf_proto_update_size_req_encode(struct wire_writer *w,
				     const struct clf_proto_update_size_req *m);
int clf_proto_update_size_req_decode(struct wire_reader *r,
				     struct clf_proto_update_size_req *m);

/* APPEND (1.4): reserve the range of an O_APPEND write. */
struct clf_proto_append_req {
	uint64_t ino;
	int64_t at;		/* the end of file as the client knows it */
	int64_t length;		/* file bytes the write covers; at + length
				   <= CLF_PROTO_LOCK_OFFSET_MAX */
	uint32_t flags;		/* CLF_PROTO_APPEND_* */
};
int clf_proto_append_req_encode(struct wire_writer *w,
				const struct clf_proto_append_req *m);
int clf_proto_append_req_decode(struct wire_reader *r,
				struct clf_proto_append_req *m);

struct clf_proto_append_rep {
	int64_t offset;		/* where the range starts (reserved unless
				   EXACT and offset != at), >= 0 */
};
int clf_proto_append_rep_encode(struct wire_writer *w,
				const struct clf_proto_append_rep *m);
int clf_proto_append_rep_decode(struct wire_reader *r,
				struct clf_proto_append_rep *m);

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

struct clf_proto_sub_read_req {
	uint64_t file;
	uint32_t subfile;
	int64_t offset;		/* subfile bytes, >= 0 */
	uint32_t length;	/* <= CLF_PROTO_DATA_MAX */
};
int clf_proto_sub_read_req_encode(struct wire_writer *w,
				  const struct clf_proto_sub_read_req *m);
int clf_proto_sub_read_req_decode(struct wire_reader *r,
				  struct clf_proto_sub_read_req *m);

struct clf_proto_sub_write_req {
	uint64_t file;
	uint32_t subfile;
	int64_t offset;			/* subfile bytes, >= 0 */
	struct clf_proto_bytes data;	/* <= CLF_PROTO_DATA_MAX; borrowed */
};
int clf_proto_sub_write_req_encode(struct wire_writer *w,
				   const struct clf_proto_sub_write_req *m);
/* Everything but the data bytes (send those from where they are). */
int clf_proto_sub_write_req_encode_head(
	struct wire_writer *w, const struct clf_proto_sub_write_req *m);
int clf_proto_sub_write_req_decode(struct wire_reader *r,
				   struct clf_proto_sub_write_req *m);
/* The head alone; see clf_proto_view_write_req_decode_head. */
#define CLF_PROTO_SUB_WRITE_HEAD 24	/* bytes before the data */
int clf_proto_sub_write_req_decode_head(struct wire_reader *r,
					size_t payload_len,
					struct clf_proto_sub_write_req *m);

struct clf_proto_view_register_req {
	uint64_t file;
	uint32_t subfile;
	int64_t view_disp;		/* >= 0 */
	struct clf_proto_bytes view_type;	/* encoded; borrowed */
	int64_t subfile_disp;		/* >= 0 */
	struct clf_proto_bytes subfile_type;	/* encoded; borrowed */
};
int clf_proto_view_register_req_encode(struct wire_writer *w,
				const struct clf_proto_view_register_req *m);
int clf_proto_view_register_req_decode(struct wire_reader *r,
				struct clf_proto_view_register_req *m);

/* VIEW_READ (no data) and VIEW_WRITE (data) requests. */
struct clf_proto_view_io_req {
	uint32_t handle;
	uint32_t flags;		/* CLF_PROTO_VIEW_* */
	int64_t lo, hi;		/* view linear range [lo, hi) */
	uint64_t coll_tag;	/* collective operation; 0 unless COLLECTIVE */
	uint32_t participants;	/* processes in it; 0 unless COLLECTIVE */
	/* VIEW_WRITE only, at most hi - lo bytes; borrowed */
	struct clf_proto_bytes data;
};
int clf_proto_view_read_req_encode(struct wire_writer *w,
				   const struct clf_proto_view_io_req *m);
int clf_proto_view_read_req_decode(struct wire_reader *r,
				   struct clf_proto_view_io_req *m);
int clf_proto_view_write_req_encode(struct wire_writer *w,
				    const struct clf_proto_view_io_req *m);
int clf_proto_view_write_req_encode_head(struct wire_writer *w,
					 const struct clf_proto_view_io_req *m);
int clf_proto_view_write_req_decode(struct wire_reader *r,
				    struct clf_proto_view_io_req *m);
/*
 * The head of a VIEW_WRITE (or SUB_WRITE, below) alone: r holds the
 * bytes before the data, payload_len is the whole body's length, and the
 * data -- the rest of the body -- is left for the caller to receive
 * (into a file).  m->data gets its length and a NULL pointer.
 */
#define CLF_PROTO_VIEW_WRITE_HEAD 40	/* bytes before the data */
int clf_proto_view_write_req_decode_head(struct wire_reader *r,
					 size_t payload_len,
					 struct clf_proto_view_io_req *m);

struct clf_proto_truncate_req {
	uint64_t file;
	uint32_t subfile;
	int64_t length;		/* new subfile length, >= 0 */
};
int clf_proto_truncate_req_encode(struct wire_writer *w,
				  const struct clf_proto_truncate_req *m);
int clf_proto_truncate_req_decode(struct wire_reader *r,
				  struct clf_proto_truncate_req *m);

struct clf_proto_remove_req {
	uint64_t file;
	uint32_t subfile;	/* or CLF_PROTO_SUBFILE_ALL */
};
int clf_proto_remove_req_encode(struct wire_writer *w,
				const struct clf_proto_remove_req *m);
int clf_proto_remove_req_decode(struct wire_reader *r,
				struct clf_proto_remove_req *m);

/* SUB_SIZES: the lengths of n subfiles of one file. */
struct clf_proto_sub_sizes_req {
	uint64_t file;
	uint32_t n;		/* 1..CLF_PROTO_SUB_SIZES_MAX */
	uint32_t subfile[CLF_PROTO_SUB_SIZES_MAX]; /* or SUBFILE_HEAD */
};
int clf_proto_sub_sizes_req_encode(struct wire_writer *w,
				   const struct clf_proto_sub_sizes_req *m);
int clf_proto_sub_sizes_req_decode(struct wire_reader *r,
				   struct clf_proto_sub_sizes_req *m);

struct clf_proto_sub_sizes {
	uint32_t n;		/* as many as asked */
	int64_t length[CLF_PROTO_SUB_SIZES_MAX];	/* each >= 0 */
};
int clf_proto_sub_sizes_encode(struct wire_writer *w,
			       const struct clf_proto_sub_sizes *m);
int clf_proto_sub_sizes_decode(struct wire_reader *r,
			       struct clf_proto_sub_sizes *m);

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

#define CLF_PROTO_MESSAGES(M)						\
	M(setlk_req, lock_req, CLF_PROTO_LOCK_REQ, "SETLK",		\
	  proto_check_setlk_req)					\
	M(getlk_req, lock_req, CLF_PROTO_LOCK_REQ, "GETLK",		\
	  proto_check_getlk_req)					\
	M(lock_holder, lock_holder, CLF_PROTO_LOCK_HOLDER, "GETLK reply", \
	  proto_check_lock_holder)					\
	M(unlock_owner_req, unlock_owner_req, CLF_PROTO_UNLOCK_OWNER_REQ, \
	  "UNLOCK_OWNER", NULL)						\
	M(symlink_req, symlink_req, CLF_PROTO_SYMLINK_REQ, "SYMLINK", NULL) \
	M(readlink_rep, readlink_rep, CLF_PROTO_READLINK_REP,		\
	  "READLINK reply", proto_check_readlink_rep)			\
	M(link_req, link_req, CLF_PROTO_LINK_REQ, "LINK", NULL)		\
	M(mknod_req, mknod_req, CLF_PROTO_MKNOD_REQ, "MKNOD",		\
	  proto_check_mknod_req)					\
	M(sub_list_req, sub_list_req, CLF_PROTO_SUB_LIST_REQ, "SUB_LIST", \
	  NULL)								\
	M(sub_list, sub_list, CLF_PROTO_SUB_LIST, "SUB_LIST reply", NULL)

CLF_PROTO_MESSAGES(PROTO_PROTOTYPES)

#endif /* CLF_PROTO_LIB_H */
