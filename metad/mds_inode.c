// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_inode.c -- the on-disk records of the store.
 *
 * Inode record, version 1, all integers little-endian:
 *
 *   u8 'M', u8 'I', u8 version (1), u8 flags (bit 0: has a layout
 *   here; bit 1: has a layout in the layouts database, format 2)
 *   u64 ino (equal to the key: a record copied under another key is
 *            caught), u64 parent (dirs; 0 for files)
 *   u32 mode, u32 uid, u32 gid, u32 nlink
 *   i64 size, i64 atime, i64 mtime, i64 ctime
 *   [layout section, when flag bit 0 is set:
 *    i64 displacement, u32 head iod, u32 n,
 *    n x (u32 iod, u32 type length, type bytes)]
 *   [special section, when flag bit 2 is set (format 3), for symlinks,
 *    fifos, sockets and device nodes, which never have a layout:
 *    u64 rdev, u32 target length (symlinks 1..MDS_SYMLINK_MAX, equal
 *    to the size; others 0), target bytes]
 *
 * Superblock: u8 'M', u8 'S', u8 format version, u8 flags (0),
 *             16 bytes fsid, u64 next_ino, u64 next_cookie.
 *
 * The decoders trust nothing read from the disk: every field is checked
 * against its limits and against the others, and a record that fails
 * gives -EIO with a message, never a crash.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mds_store_i.h"
#include "wire.h"

#define INODE_MAGIC0 'M'
#define INODE_MAGIC1 'I'
#define SUPER_MAGIC0 'M'
#define SUPER_MAGIC1 'S'
#define INODE_HAS_LAYOUT 0x01u
#define INODE_LAYOUT_APART 0x02u
#define INODE_SPECIAL 0x04u
#define INODE_FLAGS_KNOWN 0x07u
#define INODE_FIXED_LEN (4 + 8 + 8 + 4 * 4 + 4 * 8)

size_t mds_inode_encode(const struct mds_inode *in, uint8_t *buf, size_t cap)
{
	struct wire_writer w = { .buf = buf, .cap = buf ? cap : 0 };
	const struct mds_attr *a = &in->attr;

	wire_put_u8(&w, INODE_MAGIC0);
	wire_put_u8(&w, INODE_MAGIC1);
	wire_put_u8(&w, MDS_INODE_VERSION);
	wire_put_u8(&w, mds_mode_special(a->mode) ? INODE_SPECIAL :
			!in->layout ? 0 :
			mds_layout_apart(in) ? INODE_LAYOUT_APART :
			INODE_HAS_LAYOUT);
	wire_put_u64(&w, a->ino);
	wire_put_u64(&w, in->parent);
	wire_put_u32(&w, a->mode);
	wire_put_u32(&w, a->uid);
	wire_put_u32(&w, a->gid);
	wire_put_u32(&w, a->nlink);
	wire_put_i64(&w, a->size);
	wire_put_i64(&w, a->atime);
	wire_put_i64(&w, a->mtime);
	wire_put_i64(&w, a->ctime);
	if (mds_mode_special(a->mode)) {
		wire_put_u64(&w, a->rdev);
		wire_put_u32(&w, in->target ? in->target_len : 0);
		if (in->target)
			wire_put_bytes(&w, in->target, in->target_len);
	} else if (in->layout && !mds_layout_apart(in)) {
		wire_put_bytes(&w, in->layout, in->layout_len);
	}
	return w.pos;
}

/* Why the fixed part of a decoded inode is inconsistent, or NULL. */
static const char *attr_problem(const struct mds_inode *in, uint64_t ino,
				bool has_layout)
{
	const struct mds_attr *a = &in->attr;
	uint32_t fmt = a->mode & S_IFMT;

	if (a->ino != ino)
		return "inode number differs from its key";
	if (fmt != S_IFREG && fmt != S_IFDIR && !mds_mode_special(a->mode))
		return "of an unknown kind";
	if (a->mode & ~(uint32_t)(S_IFMT | 07777))
		return "unknown mode bits";
	if (a->size < 0)
		return "negative size";
	if (mds_mode_special(a->mode)) {
		if (a->nlink < 1)
			return "special file without links";
		if (in->parent != 0)
			return "special file with a parent";
		if (has_layout)
			return "special file with a layout";
		return NULL;
	}
	if (fmt == S_IFREG) {
		if (a->nlink < 1)
			return "file without links";
		if (in->parent != 0)
			return "file with a parent";
		return NULL;
	}
	if (a->nlink < 2)
		return "directory with fewer than 2 links";
	if (a->size != 0)
		return "directory with a size";
	if (has_layout)
		return "directory with a layout";
	if (in->parent == 0)
		return "directory without a parent";
	return NULL;
}

/* The special section of a symlink, fifo, socket or device node. */
static const char *special_decode(struct wire_reader *r, struct mds_inode *in)
{
	uint32_t fmt = in->attr.mode & S_IFMT;
	uint32_t tlen;

	in->attr.rdev = wire_get_u64(r);
	tlen = wire_get_u32(r);
	if (r->bad)
		return "truncated";
	if (tlen != r->len - r->pos)
		return "bad target length";
	if (fmt == S_IFLNK) {
		if (tlen < 1 || tlen > MDS_SYMLINK_MAX ||
		    (int64_t)tlen != in->attr.size ||
		    memchr(r->buf + r->pos, 0, tlen))
			return "bad symlink target";
		in->target = r->buf + r->pos;
		in->target_len = tlen;
		return in->attr.rdev ? "symlink with a device number" : NULL;
	}
	if (tlen || in->attr.size)
		return "special file with a target or size";
	if ((fmt == S_IFIFO || fmt == S_IFSOCK) && in->attr.rdev)
		return "fifo or socket with a device number";
	return NULL;
}

int mds_inode_decode(const uint8_t *buf, size_t len, uint64_t ino,
		     struct mds_inode *out)
{
	struct wire_reader r = { .buf = buf, .len = len };
	struct mds_inode in = { 0 };
	const char *why = NULL;
	uint8_t version, flags;

	if (wire_get_u8(&r) != INODE_MAGIC0 || wire_get_u8(&r) != INODE_MAGIC1)
		return clf_fail(EIO, "mds: inode %llu: corrupt record: %s",
				(unsigned long long)ino,
				r.bad ? "truncated" : "bad magic");
	version = wire_get_u8(&r);
	flags = wire_get_u8(&r);
	if (!r.bad && version != MDS_INODE_VERSION)
		return clf_fail(EIO,
			"mds: inode %llu: record version %u, this metad reads %u",
			(unsigned long long)ino, version, MDS_INODE_VERSION);
	in.attr.ino = wire_get_u64(&r);
	in.parent = wire_get_u64(&r);
	in.attr.mode = wire_get_u32(&r);
	in.attr.uid = wire_get_u32(&r);
	in.attr.gid = wire_get_u32(&r);
	in.attr.nlink = wire_get_u32(&r);
	in.attr.size = wire_get_i64(&r);
	in.attr.atime = wire_get_i64(&r);
	in.attr.mtime = wire_get_i64(&r);
	in.attr.ctime = wire_get_i64(&r);
	if (r.bad)
		why = "truncated";
	else if (flags & ~INODE_FLAGS_KNOWN)
		why = "unknown flags";
	else if ((flags & INODE_HAS_LAYOUT) && (flags & INODE_LAYOUT_APART))
		why = "layout both here and apart";
	else if (!(flags & INODE_SPECIAL) != !mds_mode_special(in.attr.mode))
		why = "special section on the wrong kind";
	else
		why = attr_problem(&in, ino, (flags & ~INODE_SPECIAL) != 0);
	if (!why && (flags & INODE_SPECIAL)) {
		why = special_decode(&r, &in);
	} else if (!why && (flags & INODE_LAYOUT_APART)) {
		in.layout_apart = true;
		in.attr.has_layout = true;
		if (r.pos != len)
			why = "trailing bytes";
	} else if (!why && (flags & INODE_HAS_LAYOUT)) {
		in.layout = buf + r.pos;
		in.layout_len = len - r.pos;
		in.attr.has_layout = true;
		why = mds_layout_raw_check(in.layout, in.layout_len);
	} else if (!why && r.pos != len) {
		why = "trailing bytes";
	}
	if (why)
		return clf_fail(EIO, "mds: inode %llu: corrupt record: %s",
				(unsigned long long)ino, why);
	*out = in;
	return 0;
}

void mds_super_encode(const struct mds_super *sb, uint8_t buf[MDS_SUPER_LEN])
{
	struct wire_writer w = { .buf = buf, .cap = MDS_SUPER_LEN };

	wire_put_u8(&w, SUPER_MAGIC0);
	wire_put_u8(&w, SUPER_MAGIC1);
	wire_put_u8(&w, MDS_FORMAT_VERSION);
	wire_put_u8(&w, 0);
	wire_put_bytes(&w, sb->fsid, sizeof(sb->fsid));
	wire_put_u64(&w, sb->next_ino);
	wire_put_u64(&w, sb->next_cookie);
}

int mds_super_decode(const uint8_t *buf, size_t len, struct mds_super *out)
{
	struct wire_reader r = { .buf = buf, .len = len };
	struct mds_super sb;
	uint8_t version;

	if (wire_get_u8(&r) != SUPER_MAGIC0 || wire_get_u8(&r) != SUPER_MAGIC1)
		return clf_fail(EIO, "mds: corrupt superblock: bad magic");
	version = wire_get_u8(&r);
	if (!r.bad && version > MDS_FORMAT_VERSION)
		return clf_fail(EPROTONOSUPPORT,
			"mds: store format %u is newer than this metad's (%u)",
			version, MDS_FORMAT_VERSION);
	if (wire_get_u8(&r) != 0 || version == 0)
		return clf_fail(EIO, "mds: corrupt superblock: %s",
				r.bad ? "truncated" : "bad version or flags");
	for (size_t i = 0; i < sizeof(sb.fsid); i++)
		sb.fsid[i] = wire_get_u8(&r);
	sb.next_ino = wire_get_u64(&r);
	sb.next_cookie = wire_get_u64(&r);
	if (r.bad || r.pos != len)
		return clf_fail(EIO, "mds: corrupt superblock: %s",
				r.bad ? "truncated" : "trailing bytes");
	if (sb.next_ino <= MDS_ROOT_INO || sb.next_cookie == 0)
		return clf_fail(EIO, "mds: corrupt superblock: counters %llu, %llu",
				(unsigned long long)sb.next_ino,
				(unsigned long long)sb.next_cookie);
	*out = sb;
	return 0;
}

void mds_dirent_encode(uint64_t ino, uint64_t cookie,
		       uint8_t buf[MDS_DIRENT_LEN])
{
	struct wire_writer w = { .buf = buf, .cap = MDS_DIRENT_LEN };

	wire_put_u64(&w, ino);
	wire_put_u64(&w, cookie);
}

int mds_dirent_decode(const MDB_val *v, uint64_t *ino, uint64_t *cookie)
{
	uint32_t mode;

	return mds_dirent_decode_mode(v, ino, cookie, &mode);
}

size_t mds_dirent_encode_mode(uint64_t ino, uint64_t cookie, uint32_t mode,
			      uint8_t buf[MDS_DIRENT_REMOTE_LEN])
{
	struct wire_writer w = { .buf = buf, .cap = MDS_DIRENT_REMOTE_LEN };

	wire_put_u64(&w, ino);
	wire_put_u64(&w, cookie);
	if (mode)
		wire_put_u32(&w, mode);
	return w.pos;
}

int mds_dirent_decode_mode(const MDB_val *v, uint64_t *ino, uint64_t *cookie,
			   uint32_t *mode)
{
	struct wire_reader r = { .buf = v->mv_data, .len = v->mv_size };
	uint64_t i = wire_get_u64(&r), c = wire_get_u64(&r);
	uint32_t m = v->mv_size == MDS_DIRENT_REMOTE_LEN ? wire_get_u32(&r) : 0;

	if (r.bad || r.pos != v->mv_size || i == 0 || c == 0)
		return -EIO;
	*ino = i;
	*cookie = c;
	*mode = m;
	return 0;
}
