// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_ns.c -- the namespace by inode (clf_ll.h): metad requests
 * relative to a directory inode, opening by inode, layouts by inode, and
 * positioned I/O whose size bookkeeping the caller does.
 *
 * Decoded replies borrow their byte strings (names, encoded types) from
 * the reply payload, so each function keeps the payload until it has
 * used them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "client_i.h"
#include "clf_ll.h"
#include "error.h"
#include "stage_note.h"
#include "type.h"

/* A request whose reply is an attr. */
static int ns_call_attr(uint16_t op, clf_encode_fn enc, const void *msg,
			struct clf_proto_attr *attr)
{
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err = clf_meta_call(op, enc, msg, &payload, &len);

	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_attr_decode(&r, attr);
	free(payload);
	return err;
}

/* A request whose reply is empty. */
static int ns_call_empty(uint16_t op, clf_encode_fn enc, const void *msg)
{
	void *payload;
	uint32_t len;
	int err = clf_meta_call(op, enc, msg, &payload, &len);

	if (!err)
		free(payload);
	return err;
}

static int size_from_proto(const struct clf_proto_layout *pl,
			   struct clf_proto_attr *a);

/* LOOKUP; with stat set, the size derived from the subfiles too. */
static int ns_lookup(uint64_t dir, const char *name, bool stat,
		     struct clf_proto_attr *attr)
{
	struct clf_proto_lookup_req req = {
		.dir = dir,
		.flags = stat ? CLF_PROTO_LOOKUP_LAYOUT : 0,
		.path = clf_proto_str_of(name),
	};
	struct clf_proto_lookup_rep rep;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_LOOKUP, clf_enc_lookup, &req, &payload, &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_lookup_rep_decode(&r, &rep);
	if (err)
		goto out;
	/* rep.layout's subfile types point into payload. */
	if (stat && rep.has_layout && S_ISREG(rep.attr.mode))
		err = size_from_proto(&rep.layout, &rep.attr);
	if (!err)
		*attr = rep.attr;
	clf_proto_lookup_rep_release(&rep);
out:
	free(payload);
	return err;
}

int clf_ll_lookup(uint64_t dir, const char *name, struct clf_proto_attr *attr)
{
	return ns_lookup(dir, name, false, attr);
}

int clf_ll_lookup_stat(uint64_t dir, const char *name,
		       struct clf_proto_attr *attr)
{
	return ns_lookup(dir, name, true, attr);
}

int clf_ll_getattr(uint64_t ino, struct clf_proto_attr *attr)
{
	struct clf_proto_ino req = { ino };

	return ns_call_attr(CLF_PROTO_OP_GETATTR, clf_enc_ino, &req, attr);
}

int clf_ll_setattr(uint64_t ino, uint32_t mask,
		   const struct clf_proto_attr *to, struct clf_proto_attr *attr)
{
	struct clf_proto_setattr_req req = {
		.ino = ino,
		.mask = mask,
		.mode = to ? to->mode : 0,
		.uid = to ? to->uid : 0,
		.gid = to ? to->gid : 0,
		.atime = to ? to->atime : 0,
		.mtime = to ? to->mtime : 0,
		.size = to ? to->size : 0,
	};

	return ns_call_attr(CLF_PROTO_OP_SETATTR, clf_enc_setattr, &req, attr);
}

int clf_ll_niods(void)
{
	struct clf_client *cl;

	return clf_client_get(&cl) ? 0 : (int)cl->cfg->niods;
}

int clf_ll_config(const struct clf_config **out)
{
	struct clf_client *cl;
	int err = clf_client_get(&cl);

	if (!err)
		*out = cl->cfg;
	return err;
}

int clf_ll_check_layout(const struct clf_layout_desc *desc)
{
	struct clf_client *cl;
	int err = clf_client_get(&cl);

	if (!err && desc->first_iod >= (int)cl->cfg->niods)
		err = clf_fail(EINVAL,
			       "clf: the layout puts subfile 0 on iod %d; the configuration has iods 0 to %u",
			       desc->first_iod, cl->cfg->niods - 1);
	return err;
}

/*
 * desc as an EXPLICIT wire layout: subfile j on iod (first + j) mod
 * niods.  The encoded types are in enc[j] (caller frees each and the
 * arrays, also on failure).
 */
static int layout_to_proto(const struct clf_layout_desc *desc,
			   struct clf_proto_layout *pl, uint8_t ***enc)
{
	struct clf_client *cl;
	CLF_Datatype *types;
	uint32_t first;
	int err = clf_ll_check_layout(desc);

	if (!err)
		err = clf_client_get(&cl);
	if (err)
		return err;
	first = desc->first_iod >= 0 ? (uint32_t)desc->first_iod
				     : cl->cfg->first_iod;
	/* Where the layout names no iod, metad places (1.22): not on a
	 * retired one. */
	*pl = (struct clf_proto_layout){
		.kind = CLF_PROTO_LAYOUT_EXPLICIT,
		.disp = desc->disp,
		.disp_iod = desc->first_iod >= 0 ? first % cl->cfg->niods
						 : CLF_PROTO_IOD_DEFAULT,
		.nsubfiles = (uint32_t)desc->count,
	};
	pl->subfiles = calloc(desc->count, sizeof(*pl->subfiles));
	*enc = calloc(desc->count, sizeof(**enc));
	types = calloc(desc->count, sizeof(*types));
	if (!pl->subfiles || !*enc || !types) {
		free(types);
		return clf_fail(ENOMEM, "clf: out of memory");
	}
	/* Sent at the layout's period, as metad keeps them. */
	err = clf_pattern_resize(desc->count, desc->types, types);
	if (err) {
		free(types);
		return err;
	}
	for (int j = 0; j < desc->count && !err; j++) {
		int64_t len = CLF_Type_encode(types[j], NULL, 0);

		if (len < 0) {
			err = (int)len;
			break;
		}
		(*enc)[j] = malloc(len);
		if (!(*enc)[j]) {
			err = clf_fail(ENOMEM, "clf: out of memory");
			break;
		}
		CLF_Type_encode(types[j], (*enc)[j], len);
		pl->subfiles[j].iod = j == 0 && desc->first_iod >= 0
				      ? first % cl->cfg->niods
				      : CLF_PROTO_IOD_DEFAULT;
		pl->subfiles[j].type.ptr = (*enc)[j];
		pl->subfiles[j].type.len = (uint32_t)len;
	}
	for (int j = 0; j < desc->count; j++)
		CLF_Type_free(&types[j]);
	free(types);
	return err;
}

static void layout_proto_free(struct clf_proto_layout *pl, uint8_t **enc,
			      int count)
{
	for (int j = 0; enc && j < count; j++)
		free(enc[j]);
	free(enc);
	free(pl->subfiles);
	pl->subfiles = NULL;
}

/*
 * An EXPLICIT wire layout (whose types borrow a reply buffer) decoded
 * into types: *info owns them (CLF_Layout_release).
 */
static int layout_info_from_proto(const struct clf_proto_layout *pl,
				  struct clf_layout_info *info)
{
	struct clf_layout_info li = { 0 };
	int err = 0;

	if (pl->kind != CLF_PROTO_LAYOUT_EXPLICIT || pl->nsubfiles < 1)
		return clf_fail(EPROTO, "clf: metad sent a layout of kind %u",
				pl->kind);
	li.disp = pl->disp;
	li.head_iod = (int)pl->disp_iod;
	li.count = (int)pl->nsubfiles;
	li.types = calloc(pl->nsubfiles, sizeof(*li.types));
	li.iods = calloc(pl->nsubfiles, sizeof(*li.iods));
	if (!li.types || !li.iods)
		err = clf_fail(ENOMEM, "clf: out of memory");
	for (uint32_t j = 0; j < pl->nsubfiles && !err; j++) {
		err = CLF_Type_decode(pl->subfiles[j].type.ptr,
				      pl->subfiles[j].type.len, &li.types[j]);
		li.iods[j] = (int)pl->subfiles[j].iod;
	}
	if (err)
		CLF_Layout_release(&li);	/* NULL types are skipped */
	else
		*info = li;
	return err;
}

/* The types and mappings of a decoded layout (caller frees *out). */
static int layout_from_info(const struct clf_layout_info *info,
			    struct clf_layout **out)
{
	uint32_t *iods = calloc(info->count, sizeof(*iods));
	int err;

	if (!iods)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (int j = 0; j < info->count; j++)
		iods[j] = (uint32_t)info->iods[j];
	err = clf_layout_create(info->disp, info->count, info->types, iods,
				(uint32_t)info->head_iod, out);
	free(iods);
	return err;
}

/* A descriptor on ino with the wire layout pl. */
static int open_with(uint64_t ino, int64_t size, int flags,
		     const struct clf_proto_layout *pl)
{
	struct clf_layout_info info;
	struct clf_layout *layout;
	int err = layout_info_from_proto(pl, &info);

	if (err)
		return err;
	err = layout_from_info(&info, &layout);
	CLF_Layout_release(&info);
	return err ? err : clf_file_open_layout(ino, size, flags, layout);
}

int clf_ll_create(uint64_t dir, const char *name, mode_t mode,
		  const struct clf_ll_owner *owner, bool excl,
		  const struct clf_layout_desc *layout, int flags,
		  struct clf_proto_attr *attr)
{
	struct clf_proto_create_req req = {
		.dir = dir,
		.path = clf_proto_str_of(name),
		.mode = mode & CLF_PROTO_MODE_PERM,
		.uid = owner->uid,
		.gid = owner->gid,
		.flags = excl ? CLF_PROTO_CREATE_EXCL : 0,
		.layout = {
			.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
			.first_iod = CLF_PROTO_IOD_DEFAULT,
		},
	};
	struct clf_proto_create_rep rep;
	struct wire_reader r;
	uint8_t **enc = NULL;
	void *payload;
	uint32_t len;
	int err = 0, fd;

	if (layout)
		err = layout_to_proto(layout, &req.layout, &enc);
	if (!err)
		err = clf_meta_call(CLF_PROTO_OP_CREATE, clf_enc_create, &req, &payload,
			      &len);
	if (layout)
		layout_proto_free(&req.layout, enc, layout->count);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_create_rep_decode(&r, &rep);
	if (err)
		goto free_payload;
	fd = open_with(rep.attr.ino, rep.attr.size, flags, &rep.layout);
	if (fd >= 0)
		*attr = rep.attr;
	err = fd;
	clf_proto_create_rep_release(&rep);
free_payload:
	free(payload);
	return err;
}

int clf_ll_mkdir(uint64_t dir, const char *name, mode_t mode,
		 const struct clf_ll_owner *owner, struct clf_proto_attr *attr)
{
	struct clf_proto_mkdir_req req = {
		.dir = dir,
		.path = clf_proto_str_of(name),
		.mode = mode & CLF_PROTO_MODE_PERM,
		.uid = owner->uid,
		.gid = owner->gid,
	};

	return ns_call_attr(CLF_PROTO_OP_MKDIR, clf_enc_mkdir, &req, attr);
}

/* UNLINK or RMDIR, noted for the backing directory (stage_note.h). */
static int ns_remove(uint16_t op, uint64_t dir, const char *name)
{
	struct clf_proto_path_req req = { dir, clf_proto_str_of(name) };
	char path[CLF_STAGE_PATH_LEN];
	int err = clf_stage_ll_path(dir, name, path);

	if (!err)
		err = ns_call_empty(op, clf_enc_path, &req);
	if (!err && path[0])
		err = clf_stage_note_remove(path);
	return err;
}

int clf_ll_unlink(uint64_t dir, const char *name)
{
	return ns_remove(CLF_PROTO_OP_UNLINK, dir, name);
}

int clf_ll_rmdir(uint64_t dir, const char *name)
{
	return ns_remove(CLF_PROTO_OP_RMDIR, dir, name);
}

int clf_ll_rename(uint64_t dir, const char *name, uint64_t new_dir,
		  const char *new_name, uint32_t flags)
{
	struct clf_proto_rename_req req = {
		.dir = dir,
		.path = clf_proto_str_of(name),
		.new_dir = new_dir,
		.new_path = clf_proto_str_of(new_name),
		.flags = flags,
	};
	char from[CLF_STAGE_PATH_LEN], to[CLF_STAGE_PATH_LEN];
	int err = clf_stage_ll_path(dir, name, from);

	if (!err)
		err = clf_stage_ll_path(new_dir, new_name, to);
	if (!err)
		err = ns_call_empty(CLF_PROTO_OP_RENAME, clf_enc_rename, &req);
	if (!err && from[0])
		err = clf_stage_note_rename(from, to);
	return err;
}

int clf_ll_readdir(uint64_t dir, uint64_t cookie, uint32_t max,
		   struct clf_ll_dirents *out)
{
	struct clf_proto_readdir_req req = { dir, cookie, max };
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_READDIR, clf_enc_readdir, &req, &payload, &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_readdir_rep_decode(&r, &out->rep);
	if (err) {
		free(payload);
		return err;
	}
	out->payload = payload;
	return 0;
}

void clf_ll_dirents_release(struct clf_ll_dirents *d)
{
	if (!d)
		return;
	clf_proto_readdir_rep_release(&d->rep);
	free(d->payload);
	d->payload = NULL;
}

int clf_ll_statfs(struct clf_proto_statfs *st)
{
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_STATFS, clf_enc_empty, NULL, &payload, &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_statfs_decode(&r, st);
	free(payload);
	return err;
}

int clf_ll_get_layout(uint64_t ino, struct clf_layout_info *info)
{
	struct clf_proto_ino req = { ino };
	struct clf_proto_layout pl;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_GET_LAYOUT, clf_enc_ino, &req, &payload, &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_layout_decode(&r, &pl);
	if (!err) {
		err = layout_info_from_proto(&pl, info);
		clf_proto_layout_release(&pl);
	}
	free(payload);
	return err;
}

/* Raise a->size to the end the subfiles of ino (with layout) map to. */
static int size_from_subfiles(const struct clf_layout *layout,
			      struct clf_proto_attr *a)
{
	int64_t end;
	int err = clf_layout_size(layout, a->ino, NULL, &end);

	if (!err && end > a->size)
		a->size = end;
	return err;
}

/* The same from a layout as metad sent it. */
static int size_from_proto(const struct clf_proto_layout *pl,
			   struct clf_proto_attr *a)
{
	struct clf_layout_info info;
	struct clf_layout *layout;
	int err = layout_info_from_proto(pl, &info);

	if (err)
		return err;
	err = layout_from_info(&info, &layout);
	CLF_Layout_release(&info);
	if (err)
		return err;
	err = size_from_subfiles(layout, a);
	clf_layout_free(layout);
	return err;
}

int clf_ll_stat(uint64_t ino, struct clf_proto_attr *attr)
{
	struct clf_layout_info info;
	struct clf_layout *layout;
	struct clf_proto_attr a;
	int err;

	err = clf_ll_getattr(ino, &a);
	if (err || !S_ISREG(a.mode))
		goto out;
	err = clf_ll_get_layout(ino, &info);
	if (err == -ENODATA) {
		/* No layout yet: no data anywhere. */
		err = 0;
		goto out;
	}
	if (err)
		return err;
	err = layout_from_info(&info, &layout);
	CLF_Layout_release(&info);
	if (err)
		return err;
	err = size_from_subfiles(layout, &a);
	clf_layout_free(layout);
out:
	if (!err)
		*attr = a;
	return err;
}

int clf_ll_open(uint64_t ino, int flags, struct clf_proto_attr *attr)
{
	struct clf_layout_info info;
	struct clf_layout *layout = NULL;
	struct clf_proto_attr a;
	int err, fd;

	err = clf_ll_getattr(ino, &a);
	if (err)
		return err;
	if (S_ISDIR(a.mode))
		return clf_fail(EISDIR, "clf: cannot open inode %llu: is a directory",
				(unsigned long long)ino);
	if (!S_ISREG(a.mode))
		return clf_fail(S_ISLNK(a.mode) ? ELOOP : ENXIO,
				"clf: cannot open inode %llu: not a regular file",
				(unsigned long long)ino);
	err = clf_ll_get_layout(ino, &info);
	if (err)
		return err;
	err = layout_from_info(&info, &layout);
	CLF_Layout_release(&info);
	if (!err)
		err = size_from_subfiles(layout, &a);
	if (err) {
		clf_layout_free(layout);
		return err;
	}
	fd = clf_file_open_layout(ino, a.size, flags, layout);
	if (fd >= 0)
		*attr = a;
	return fd;
}

int clf_ll_set_layout(uint64_t ino, const struct clf_layout_desc *desc)
{
	struct clf_proto_set_layout_req req = { .ino = ino };
	uint8_t **enc = NULL;
	void *payload;
	uint32_t len;
	int err;

	err = layout_to_proto(desc, &req.layout, &enc);
	if (!err)
		err = clf_meta_call(CLF_PROTO_OP_SET_LAYOUT, clf_enc_set_layout, &req,
			      &payload, &len);
	layout_proto_free(&req.layout, enc, desc->count);
	if (!err)
		free(payload);
	return err;
}

int clf_ll_reload_layout(int fd)
{
	struct clf_layout_info info;
	struct clf_layout *layout;
	struct clf_file *f;
	uint64_t ino;
	int err;

	err = clf_file_get(fd, &f);
	if (err)
		return err;
	ino = f->ino;
	clf_file_put(f);
	err = clf_ll_get_layout(ino, &info);
	if (err)
		return err;
	err = layout_from_info(&info, &layout);
	CLF_Layout_release(&info);
	if (err)
		return err;
	err = clf_file_get(fd, &f);
	if (err) {
		clf_layout_free(layout);
		return err;
	}
	err = clf_file_replace_layout(f, layout);
	clf_file_put(f);
	return err;
}

int64_t clf_ll_pread(int fd, void *buf, int64_t len, int64_t off,
		     int64_t size)
{
	struct clf_file *f;
	int64_t n;
	int err;

	if (len < 0 || off < 0 || size < 0)
		return clf_fail(EINVAL, "clf: pread: negative length or offset");
	err = clf_file_get(fd, &f);
	if (err)
		return err;
	/* What we know is the end: clf_file_io need not ask metad. */
	f->size = size;
	n = off >= size ? 0 : min64(len, size - off);
	n = n ? clf_file_io(f, off, n, buf, NULL, false, 0, 0) : 0;
	clf_file_put(f);
	return n;
}

int64_t clf_ll_pwrite(int fd, const void *buf, int64_t len, int64_t off)
{
	struct clf_file *f;
	int64_t n;
	int err;

	if (len < 0 || off < 0)
		return clf_fail(EINVAL, "clf: pwrite: negative length or offset");
	err = clf_file_get(fd, &f);
	if (err)
		return err;
	n = clf_file_io(f, off, len, (void *)buf, NULL, true, 0, 0);
	/* The caller reports the end (clf_ll_report_size), not close. */
	f->dirty_end = 0;
	clf_file_put(f);
	return n;
}

int64_t clf_ll_append(int fd, const void *buf, int64_t len, int64_t *off)
{
	struct clf_file *f;
	int64_t n, lo;
	int err;

	if (len < 0)
		return clf_fail(EINVAL, "clf: append: negative length");
	err = clf_file_get(fd, &f);
	if (err)
		return err;
	err = clf_file_append_at(f, len, &lo);
	n = err ? err : clf_file_io(f, lo, len, (void *)buf, NULL, true, 0, 0);
	/* The caller reports the end (clf_ll_report_size), not close. */
	f->dirty_end = 0;
	clf_file_put(f);
	if (n >= 0)
		*off = lo;
	return n;
}

int clf_ll_report_size(uint64_t ino, int64_t size,
		       struct clf_proto_attr *attr)
{
	return clf_meta_update_size(ino, size, attr);
}

/* ------------------------------------------------------------------ */
/* Directory default layouts: the hidden file's text                   */
/* ------------------------------------------------------------------ */

int clf_ll_dir_default_read(uint64_t dir, char **text)
{
	struct clf_proto_attr a;
	char *buf = NULL;
	int64_t n;
	int err, fd;

	err = clf_ll_lookup(dir, CLF_LL_DEFAULT_LAYOUT_NAME, &a);
	if (err == -ENOENT) {
		*text = NULL;
		return 0;
	}
	if (err)
		return err;
	fd = clf_ll_open(a.ino, O_RDONLY, &a);
	if (fd < 0)
		return fd;
	if (a.size > CLF_LL_DEFAULT_LAYOUT_MAX) {
		err = clf_fail(EFBIG,
			       "clf: directory inode %llu: %s has %lld bytes, more than a layout text of %d",
			       (unsigned long long)dir,
			       CLF_LL_DEFAULT_LAYOUT_NAME, (long long)a.size,
			       CLF_LL_DEFAULT_LAYOUT_MAX);
		goto close;
	}
	buf = malloc(a.size + 1);
	if (!buf) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto close;
	}
	n = clf_ll_pread(fd, buf, a.size, 0, a.size);
	if (n < 0) {
		err = (int)n;
		goto close;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
close:
	CLF_close(fd);
	if (err || !buf[0]) {
		free(buf);
		buf = NULL;
	}
	if (!err)
		*text = buf;
	return err;
}

int clf_ll_dir_default_write(uint64_t dir, const struct clf_ll_owner *owner,
			     const char *text)
{
	size_t len = strlen(text);
	struct clf_proto_attr a;
	char *line = malloc(len + 2);
	int64_t n;
	int err, fd;

	if (!line)
		return clf_fail(ENOMEM, "clf: out of memory");
	memcpy(line, text, len);
	line[len++] = '\n';
	fd = clf_ll_create(dir, CLF_LL_DEFAULT_LAYOUT_NAME, 0644, owner, false,
			   NULL, O_RDWR, &a);
	if (fd < 0) {
		err = fd;
		goto free_line;
	}
	err = 0;
	if (a.size > 0) {
		struct clf_proto_attr to = { .size = 0 };

		err = clf_ll_setattr(a.ino, CLF_PROTO_SETATTR_SIZE, &to, &a);
	}
	if (!err) {
		n = clf_ll_pwrite(fd, line, (int64_t)len, 0);
		if (n >= 0 && n != (int64_t)len)
			n = clf_fail(EIO, "clf: directory inode %llu: short write of %s",
				     (unsigned long long)dir,
				     CLF_LL_DEFAULT_LAYOUT_NAME);
		err = n < 0 ? (int)n : 0;
	}
	if (!err)
		err = clf_ll_report_size(a.ino, (int64_t)len, &a);
	CLF_close(fd);
free_line:
	free(line);
	return err;
}

int clf_ll_dir_default_remove(uint64_t dir)
{
	return clf_ll_unlink(dir, CLF_LL_DEFAULT_LAYOUT_NAME);
}
