// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * file.c -- open files: CLF_open, CLF_create, CLF_fcntl, CLF_lseek,
 * CLF_ftruncate (the descriptor table is file_table.c, CLF_close
 * file_close.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arith.h"
#include "client_i.h"
#include "clf_ll.h"
#include "error.h"
#include "layout_text.h"
#include "lock.h"
#include "type.h"
#include "xcache.h"

/*
 * Give the file ino that this process just created at rel the default
 * layout of its directory, if that has one (clf_ll.h), and fetch its
 * layout again into *layout.  Best effort, as the mount does it: a
 * directory default that cannot be read, parsed or placed leaves the
 * file as metad made it.
 */
static void apply_dir_default(const char *rel, uint64_t ino,
			      struct clf_proto_attr *attr,
			      struct clf_layout **layout)
{
	char dir[CLF_PROTO_PATH_MAX + 1], *text = NULL;
	const char *slash = strrchr(rel, '/');
	struct clf_layout *fresh = NULL;
	struct clf_layout_desc desc;
	struct clf_proto_attr dattr;
	size_t len = slash ? (size_t)(slash - rel) : 0;

	memcpy(dir, rel, len);
	dir[len] = '\0';
	if (clf_meta_lookup(dir, &dattr, NULL) ||
	    clf_ll_dir_default_read(dattr.ino, &text) || !text)
		goto out;
	if (clf_layout_text_parse(text, &desc))
		goto out;
	if (!clf_ll_check_layout(&desc) && !clf_ll_set_layout(ino, &desc) &&
	    !clf_meta_lookup(rel, attr, &fresh) && fresh && attr->ino == ino) {
		clf_layout_free(*layout);
		*layout = fresh;
		fresh = NULL;
	}
	clf_layout_free(fresh);
	clf_layout_desc_release(&desc);
out:
	free(text);
}

/*
 * Find rel or create it.  A file this call creates gets the layout want
 * (CLF_create), in the create itself, or else its directory's default
 * layout, so that a new file in a directory looks the same whether the
 * mount, `clf cp`, a native program or MPI-IO made it.  Without O_EXCL
 * the file is looked up first and created exclusively, which tells
 * whether this call made it (*created; a lost race finds the winner's).
 * A create that would take its directory's default asks metad to create
 * only where there is none (most directories): one round trip, where the
 * look at the directory after the create took two more.
 */
static int create_inode(const char *rel, mode_t mode, int flags,
			const struct clf_proto_layout *want,
			struct clf_proto_attr *attr, struct clf_layout **layout,
			bool *created)
{
	bool plain;
	int err;

	*created = false;
	if (!(flags & O_EXCL)) {
		err = clf_meta_lookup_open(rel, flags, attr, layout);
		if (err != -ENOENT)
			return err;
	}
	plain = !want && clf_meta_knows_plain();
	err = clf_meta_create(rel, mode, true, plain, want, attr, layout);
	if (err == -EAGAIN && plain) {
		plain = false;
		err = clf_meta_create(rel, mode, true, false, want, attr,
				      layout);
	}
	if (err == -EEXIST && !(flags & O_EXCL))
		return clf_meta_lookup_open(rel, flags, attr, layout);
	*created = !err;
	if (!err && *layout && !want && !plain)
		apply_dir_default(rel, attr->ino, attr, layout);
	return err;
}

/* Look the file up, creating it when asked; fill f's ino, size, layout. */
static int open_inode(struct clf_file *f, const char *rel, int flags,
		      mode_t mode, const struct clf_proto_layout *want,
		      bool *created)
{
	struct clf_layout *layout = NULL;
	struct clf_proto_attr attr;
	int err;

	*created = false;
	if (flags & O_CREAT)
		err = create_inode(rel, mode, flags, want, &attr, &layout,
				   created);
	else
		err = clf_meta_lookup_open(rel, flags, &attr, &layout);
	if (err)
		return err;
	if (S_ISDIR(attr.mode))
		err = clf_fail(EISDIR, "clf: cannot open '/%s': is a directory",
			       rel);
	else if (S_ISLNK(attr.mode))
		err = clf_fail(ELOOP, "clf: cannot open '/%s': is a symbolic "
			       "link (CLF_open follows none)", rel);
	else if (!S_ISREG(attr.mode))
		err = clf_fail(ENXIO, "clf: cannot open '/%s': a fifo, socket "
			       "or device has no data on clf", rel);
	else if (!layout)
		err = clf_fail(EIO, "clf: '/%s' has no layout", rel);
	if (err) {
		clf_layout_free(layout);
		return err;
	}
	f->ino = attr.ino;
	f->size = attr.size;
	return clf_file_set_layout(f, layout);
}

/* CLF_open and CLF_create: want is the layout of a file this call makes. */
static int open_path(const char *path, int flags, mode_t mode,
		     const struct clf_proto_layout *want, bool *created)
{
	char rel[CLF_PROTO_PATH_MAX + 1];
	struct clf_client *cl;
	struct clf_file *f;
	int err, fd;

	err = clf_client_get(&cl);
	if (!err)
		err = clf_path_normalize(path, rel, sizeof(rel));
	if (err)
		return err;
	if (!*rel)
		return clf_fail(EISDIR, "clf: cannot open '/': is a directory");
	f = calloc(1, sizeof(*f));
	if (!f)
		return clf_fail(ENOMEM, "clf: out of memory");
	pthread_mutex_init(&f->lock, NULL);
	f->flags = flags & (O_ACCMODE | O_APPEND);
	f->view_type = CLF_BYTE;
	err = open_inode(f, rel, flags, mode, want, created);
	/* The subfiles may hold bytes that metad's size does not count. */
	if (!err && (flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY)
		err = clf_file_size(f);
	if (!err && (flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY &&
	    f->size > 0) {
		struct clf_proto_attr attr;

		err = clf_meta_truncate(f->ino, 0, &attr);
		if (!err)
			f->size = 0;
	}
	if (err)
		goto fail;
	fd = clf_file_install(f);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	return fd;
fail:
	clf_file_free(f);
	return err;
}

int clf_file_open_path(const char *path, int flags, mode_t mode)
{
	bool created;

	return open_path(path, flags, mode, NULL, &created);
}

/*
 * The metad request for layout sf: *req and the encoded types in *enc
 * (caller releases both with subfiles_request_release, also on failure).
 */
static int subfiles_request(const struct clf_subfiles *sf, const char *what,
			    struct clf_proto_layout *req, uint8_t ***enc)
{
	CLF_Datatype *types;	/* sf->types at the layout's period */
	int err;

	*req = (struct clf_proto_layout){ .kind = CLF_PROTO_LAYOUT_EXPLICIT };
	*enc = NULL;
	if (!sf || sf->disp < 0 || sf->count < 1 || !sf->types)
		return clf_fail(EINVAL, "clf: %s: need a displacement >= 0 and at least one type",
				what);
	if (sf->count > CLF_PROTO_MAX_SUBFILES)
		return clf_fail(E2BIG, "clf: %s: %d subfiles, at most %d",
				what, sf->count, CLF_PROTO_MAX_SUBFILES);
	err = CLF_Pattern_check(sf->count, sf->types);
	if (err)
		return err;
	req->disp = sf->disp;
	/* metad places them (1.22): not on a retired iod. */
	req->disp_iod = CLF_PROTO_IOD_DEFAULT;
	req->nsubfiles = sf->count;
	req->subfiles = calloc(sf->count, sizeof(*req->subfiles));
	*enc = calloc(sf->count, sizeof(**enc));
	types = calloc(sf->count, sizeof(*types));
	if (!req->subfiles || !*enc || !types) {
		free(types);
		return clf_fail(ENOMEM, "clf: out of memory");
	}
	err = clf_pattern_resize(sf->count, sf->types, types);
	if (err) {
		free(types);
		return err;
	}
	for (int j = 0; j < sf->count && !err; j++) {
		int64_t len = CLF_Type_encode(types[j], NULL, 0);

		(*enc)[j] = len > 0 ? malloc(len) : NULL;
		if (len < 0)
			err = (int)len;
		else if (!(*enc)[j])
			err = clf_fail(ENOMEM, "clf: out of memory");
		else
			len = CLF_Type_encode(types[j], (*enc)[j], len);
		req->subfiles[j].iod = CLF_PROTO_IOD_DEFAULT;
		req->subfiles[j].type.ptr = (*enc)[j];
		req->subfiles[j].type.len = (uint32_t)len;
	}
	for (int j = 0; j < sf->count; j++)
		CLF_Type_free(&types[j]);
	free(types);
	return err;
}

static void subfiles_request_release(struct clf_proto_layout *req,
				     uint8_t **enc)
{
	for (uint32_t j = 0; enc && j < req->nsubfiles; j++)
		free(enc[j]);
	free(enc);
	free(req->subfiles);
	req->subfiles = NULL;
}

static int fcntl_subfiles(struct clf_file *f, const struct clf_subfiles *sf)
{
	struct clf_proto_layout req;
	struct clf_layout *layout;
	uint8_t **enc;
	int err;

	if (f->size > 0 || f->dirty_end > 0)
		return clf_fail(EBUSY, "clf: fcntl(SUBFILES): the layout can only be set while the file is empty (it has %lld bytes)",
				(long long)(f->size > f->dirty_end ? f->size : f->dirty_end));
	err = subfiles_request(sf, "fcntl(SUBFILES)", &req, &enc);
	if (!err)
		err = clf_meta_set_layout(f->ino, &req, &layout);
	if (!err)
		err = clf_file_set_layout(f, layout);
	subfiles_request_release(&req, enc);
	return err;
}

int CLF_create(const char *path, int flags, mode_t mode,
	       const struct clf_create_layout *layout, int *created)
{
	struct clf_proto_layout req = {
		.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
		.first_iod = CLF_PROTO_IOD_DEFAULT,
	};
	const struct clf_stripes *st = layout ? &layout->stripes : NULL;
	uint8_t **enc = NULL;
	bool made = false;
	int err = 0;

	if (layout && layout->subfiles) {
		err = subfiles_request(layout->subfiles, "create", &req, &enc);
	} else if (st && (st->unit < 0 || st->count < 0 ||
			  (uint32_t)st->count > CLF_PROTO_MAX_SUBFILES ||
			  st->first_iod < -1)) {
		err = clf_fail(EINVAL, "clf: create: bad stripes: unit %lld, count %d, first iod %d",
			       (long long)st->unit, st->count, st->first_iod);
	} else if (st) {
		req.stripe_size = (uint64_t)st->unit;
		req.stripe_count = (uint32_t)st->count;
		if (st->first_iod >= 0)
			req.first_iod = (uint32_t)st->first_iod;
	}
	if (!err)
		err = open_path(path, flags | O_CREAT, mode, layout ? &req : NULL,
				&made);
	subfiles_request_release(&req, enc);
	if (err >= 0 && created)
		*created = made;
	return err;
}

/* A view seen before comes back with its mapping and registrations. */
static int fcntl_setview(struct clf_file *f, const struct clf_view *v)
{
	int err;

	if (!v || !v->type || v->disp < 0)
		return clf_fail(EINVAL, "clf: fcntl(SETVIEW): need a type and a displacement >= 0");
	err = clf_view_cache_switch(f, v->disp, v->type);
	if (!err)
		f->pos = 0;
	return err;
}

static int fcntl_getlayout(struct clf_file *f, struct clf_layout_info *info)
{
	const struct clf_layout *l = f->layout;

	if (!info)
		return clf_fail(EINVAL, "clf: fcntl(GETLAYOUT): NULL output");
	info->types = calloc(l->nsub, sizeof(*info->types));
	info->iods = calloc(l->nsub, sizeof(*info->iods));
	if (!info->types || !info->iods) {
		free(info->types);
		free(info->iods);
		return clf_fail(ENOMEM, "clf: out of memory");
	}
	info->disp = l->disp;
	info->head_iod = (int)l->head_iod;
	info->count = l->nsub;
	for (int j = 0; j < l->nsub; j++) {
		info->types[j] = CLF_Type_dup(l->types[j]);
		info->iods[j] = (int)l->iods[j];
	}
	return 0;
}

static int fcntl_setcache(struct clf_file *f, const int *on)
{
	if (!on || (*on != 0 && *on != 1))
		return clf_fail(EINVAL, "clf: fcntl SETCACHE: give 1 (on) or 0 (off)");
	return clf_xcache_choose(f, *on);
}

static int fcntl_getcache(struct clf_file *f, int *on)
{
	if (!on)
		return clf_fail(EINVAL, "clf: fcntl GETCACHE: no int to answer in");
	*on = clf_xcache_wanted(f);
	return 0;
}

int CLF_fcntl(int fd, int cmd, ...)
{
	struct clf_file *f;
	va_list ap;
	void *arg;
	int err;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	/* Locks may wait: they must not hold the file meanwhile. */
	if (cmd == CLF_FCNTL_SETLK || cmd == CLF_FCNTL_SETLKW ||
	    cmd == CLF_FCNTL_GETLK)
		return clf_lock_fcntl(fd, cmd, arg);
	err = clf_file_get(fd, &f);
	if (err)
		return err;
	switch (cmd) {
	case CLF_FCNTL_SUBFILES:
		err = fcntl_subfiles(f, arg);
		break;
	case CLF_FCNTL_SETVIEW:
		err = fcntl_setview(f, arg);
		break;
	case CLF_FCNTL_GETLAYOUT:
		err = fcntl_getlayout(f, arg);
		break;
	case CLF_FCNTL_SETCACHE:
		err = fcntl_setcache(f, arg);
		break;
	case CLF_FCNTL_GETCACHE:
		err = fcntl_getcache(f, arg);
		break;
	default:
		err = clf_fail(EINVAL, "clf: fcntl: unknown command %d", cmd);
	}
	clf_file_put(f);
	return err;
}

/* View bytes below the end of file, as far as this client knows. */
static int64_t view_bytes_below(const struct clf_file *f, int64_t size)
{
	return clf_type_count_before(f->view_type, f->view_disp, size);
}

int64_t CLF_lseek(int fd, int64_t off, int whence)
{
	struct clf_file *f;
	int64_t base = 0;
	int err;

	err = clf_file_get(fd, &f);
	if (err)
		return err;
	switch (whence) {
	case SEEK_SET:
		break;
	case SEEK_CUR:
		base = f->pos;
		break;
	case SEEK_END:
		/* Every acknowledged write counts, ours and others'. */
		err = clf_file_size(f);
		if (!err)
			base = view_bytes_below(f, max64(f->size, f->dirty_end));
		break;
	default:
		err = clf_fail(EINVAL, "clf: lseek: bad whence %d", whence);
	}
	if (!err && (off < -base || (off > 0 && base > INT64_MAX - off)))
		err = clf_fail(EINVAL, "clf: lseek: offset out of range");
	if (!err)
		f->pos = base + off;
	clf_file_put(f);
	return err ? err : base + off;
}

int CLF_ftruncate(int fd, int64_t len)
{
	struct clf_proto_attr attr;
	struct clf_file *f;
	int err;

	if (len < 0)
		return clf_fail(EINVAL, "clf: ftruncate: negative length");
	err = clf_file_get(fd, &f);
	if (err)
		return err;
	if ((f->flags & O_ACCMODE) == O_RDONLY)
		err = clf_fail(EBADF, "clf: ftruncate: file opened read-only");
	if (!err)
		err = clf_file_flush_size(f);
	if (!err)
		err = clf_meta_truncate(f->ino, len, &attr);
	if (!err) {
		f->size = attr.size;
		f->dirty_end = 0;
	}
	clf_file_put(f);
	return err;
}

