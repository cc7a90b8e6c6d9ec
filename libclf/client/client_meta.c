// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_meta.c -- namespace calls to metad: paths, stat, mkdir, unlink,
 * rmdir, rename, and the lookups behind CLF_open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "error.h"
#include "stage_note.h"
#include "layout.h"

/*
 * The path of a clf://HOST:PORT/path name, when HOST:PORT is the metad of
 * this process's instance (or no instance is there yet, for the tools
 * that only name paths): a process works with one instance.
 */
static int url_path(const char *name, const char **path)
{
	char addr[CLF_ADDR_MAX];
	int err = clf_url_parse(name, addr, sizeof(addr), path);

	if (err <= 0) {
		*path = name;
		return err;
	}
	if (clf_client_instance &&
	    strcmp(addr, clf_client_instance->cfg->metad.addr))
		return clf_fail(EXDEV,
				"clf: '%s' is on the instance of metad %s, this process works with %s's",
				name, addr, clf_client_instance->cfg->metad.addr);
	if (!**path)
		*path = "/";
	return 0;
}

int clf_path_normalize(const char *path, char *out, size_t outlen)
{
	size_t n = 0;
	const char *p;
	int err;

	if (!path || !*path)
		return clf_fail(ENOENT, "clf: empty path");
	err = url_path(path, &p);
	if (err)
		return err;
	while (*p) {
		const char *end;
		size_t len;

		while (*p == '/')
			p++;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		len = end - p;
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else {
			if (len > CLF_PROTO_NAME_MAX)
				return clf_fail(ENAMETOOLONG,
						"clf: a component of '%s' is too long",
						path);
			if (n + !!n + len + 1 > outlen ||
			    n + !!n + len > CLF_PROTO_PATH_MAX)
				return clf_fail(ENAMETOOLONG,
						"clf: path '%s' is too long", path);
			if (n)
				out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
		}
		p = end;
	}
	out[n] = '\0';
	return 0;
}

static int decode_attr(void *payload, uint32_t len,
		       struct clf_proto_attr *attr)
{
	struct wire_reader r = { .buf = payload, .len = len };
	int err = clf_proto_attr_decode(&r, attr);

	free(payload);
	return err;
}

/* Turn a layout from metad (EXPLICIT) into types and mappings. */
static int layout_from_proto(const struct clf_proto_layout *pl,
			     struct clf_layout **out)
{
	CLF_Datatype *types;
	uint32_t *iods;
	int err = 0, n = (int)pl->nsubfiles;

	if (pl->kind != CLF_PROTO_LAYOUT_EXPLICIT || n < 1)
		return clf_fail(EPROTO, "clf: metad sent a layout of kind %u",
				pl->kind);
	types = calloc(n, sizeof(*types));
	iods = calloc(n, sizeof(*iods));
	if (!types || !iods) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto out;
	}
	for (int j = 0; j < n && !err; j++) {
		err = CLF_Type_decode(pl->subfiles[j].type.ptr,
				      pl->subfiles[j].type.len, &types[j]);
		iods[j] = pl->subfiles[j].iod;
	}
	if (!err)
		err = clf_layout_create(pl->disp, n, types, iods, pl->disp_iod,
					out);
	for (int j = 0; j < n; j++)
		CLF_Type_free(&types[j]);
out:
	free(types);
	free(iods);
	return err;
}

/*
 * A LOOKUP or CREATE reply: attributes, and the layout decoded into types
 * while the reply buffer (which the encoded types borrow) is alive.
 */
static int take_reply(void *payload, uint32_t len, bool create,
		      struct clf_proto_attr *attr, struct clf_layout **layout)
{
	struct wire_reader r = { .buf = payload, .len = len };
	struct clf_proto_lookup_rep lk;
	struct clf_proto_create_rep cr;
	const struct clf_proto_layout *pl = NULL;
	bool decoded;
	int err;

	if (create) {
		err = clf_proto_create_rep_decode(&r, &cr);
		if (!err) {
			*attr = cr.attr;
			pl = &cr.layout;
		}
	} else {
		err = clf_proto_lookup_rep_decode(&r, &lk);
		if (!err) {
			*attr = lk.attr;
			pl = lk.has_layout ? &lk.layout : NULL;
		}
	}
	decoded = !err;
	if (!err && layout) {
		*layout = NULL;
		if (pl)
			err = layout_from_proto(pl, layout);
	}
	if (create && decoded)
		clf_proto_create_rep_release(&cr);
	else if (decoded)
		clf_proto_lookup_rep_release(&lk);
	free(payload);
	return err;
}

int clf_meta_lookup(const char *rel, struct clf_proto_attr *attr,
		    struct clf_layout **layout)
{
	return clf_meta_lookup_open(rel, -1, attr, layout);
}

int clf_meta_lookup_open(const char *rel, int flags,
			 struct clf_proto_attr *attr, struct clf_layout **layout)
{
	struct clf_proto_lookup_req req = {
		.dir = CLF_PROTO_ROOT_INO,
		.flags = layout ? CLF_PROTO_LOOKUP_LAYOUT : 0,
		.path = clf_proto_str_of(rel),
	};
	void *payload;
	uint32_t len;
	int err;

	if (flags >= 0 && (flags & O_ACCMODE) != O_WRONLY)
		req.flags |= CLF_PROTO_OPEN_READ;
	if (flags >= 0 && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		req.flags |= CLF_PROTO_OPEN_WRITE;
	if (!*rel) {
		/* The root itself. */
		if (layout)
			*layout = NULL;
		return clf_meta_getattr(CLF_PROTO_ROOT_INO, attr);
	}
	err = clf_meta_call(CLF_PROTO_OP_LOOKUP, clf_enc_lookup, &req, &payload, &len);
	if (err)
		return err;
	return take_reply(payload, len, false, attr, layout);
}

/* The first protocol minor with CLF_PROTO_CREATE_PLAIN. */
#define CREATE_PLAIN_MINOR 21

bool clf_meta_knows_plain(void)
{
	struct clf_client *cl;
	bool knows;

	if (clf_client_get(&cl))
		return false;
	/*
	 * The connection in use answers without clf_peer_lock's look at its
	 * socket (a poll: one system call of the seven a create cost).  The
	 * create that follows takes the lock again and reconnects if the
	 * connection went meanwhile, as it always could between the two.
	 */
	pthread_mutex_lock(&cl->metad.lock);
	if (cl->metad.conn && !clf_conn_broken(cl->metad.conn)) {
		knows = clf_conn_minor(cl->metad.conn) >= CREATE_PLAIN_MINOR;
		pthread_mutex_unlock(&cl->metad.lock);
		return knows;
	}
	pthread_mutex_unlock(&cl->metad.lock);
	if (clf_peer_lock(&cl->metad))
		return false;
	knows = cl->metad.conn &&
		clf_conn_minor(cl->metad.conn) >= CREATE_PLAIN_MINOR;
	clf_peer_unlock(&cl->metad);
	return knows;
}

int clf_meta_create(const char *rel, mode_t mode, bool excl, bool plain,
		    const struct clf_proto_layout *want,
		    struct clf_proto_attr *attr, struct clf_layout **layout)
{
	struct clf_proto_create_req req = {
		.dir = CLF_PROTO_ROOT_INO,
		.path = clf_proto_str_of(rel),
		.mode = mode & CLF_PROTO_MODE_PERM,
		.uid = geteuid(),
		.gid = getegid(),
		.flags = (excl ? CLF_PROTO_CREATE_EXCL : 0) |
			 (plain ? CLF_PROTO_CREATE_PLAIN : 0),
		.layout = {
			.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
			.first_iod = CLF_PROTO_IOD_DEFAULT,
		},
	};
	void *payload;
	uint32_t len;
	int err;

	if (want)
		req.layout = *want;
	err = clf_meta_call(CLF_PROTO_OP_CREATE, clf_enc_create, &req, &payload, &len);
	if (err)
		return err;
	return take_reply(payload, len, true, attr, layout);
}

int clf_meta_getattr(uint64_t ino, struct clf_proto_attr *attr)
{
	struct clf_proto_ino req = { ino };
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_GETATTR, clf_enc_ino, &req, &payload, &len);
	return err ? err : decode_attr(payload, len, attr);
}

int clf_meta_truncate(uint64_t ino, int64_t size, struct clf_proto_attr *attr)
{
	struct clf_proto_setattr_req req = {
		.ino = ino,
		.mask = CLF_PROTO_SETATTR_SIZE | CLF_PROTO_SETATTR_MTIME_NOW,
		.size = size,
	};
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_SETATTR, clf_enc_setattr, &req, &payload,
			&len);
	return err ? err : decode_attr(payload, len, attr);
}

int clf_meta_update_size(uint64_t ino, int64_t end,
			 struct clf_proto_attr *attr)
{
	struct clf_proto_update_size_req req = {
		.ino = ino,
		.size = end,
		.mtime = clf_wall_ns(),
	};
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_UPDATE_SIZE, clf_enc_update_size, &req,
			&payload, &len);
	return err ? err : decode_attr(payload, len, attr);
}

int clf_meta_set_layout(uint64_t ino, const struct clf_proto_layout *layout,
			struct clf_layout **out)
{
	struct clf_proto_set_layout_req req = { .ino = ino, .layout = *layout };
	struct clf_proto_layout reply;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_SET_LAYOUT, clf_enc_set_layout, &req,
			&payload, &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_layout_decode(&r, &reply);
	if (!err) {
		/* The types borrow payload: decode them before freeing it. */
		err = layout_from_proto(&reply, out);
		clf_proto_layout_release(&reply);
	}
	free(payload);
	return err;
}

/* Split a normalized path into its parent and its last component. */
static int path_op(uint16_t op, const char *path)
{
	struct clf_proto_path_req req = { .dir = CLF_PROTO_ROOT_INO };
	char rel[CLF_PROTO_PATH_MAX + 1];
	void *payload;
	uint32_t len;
	int err;

	err = clf_path_normalize(path, rel, sizeof(rel));
	if (err)
		return err;
	if (!*rel)
		return clf_fail(EBUSY, "clf: cannot remove the root directory");
	req.path = clf_proto_str_of(rel);
	err = clf_meta_call(op, clf_enc_path, &req, &payload, &len);
	if (!err)
		free(payload);
	if (!err && clf_stage_backed()) {
		char abs[CLF_STAGE_PATH_LEN];

		snprintf(abs, sizeof(abs), "/%s", rel);
		err = clf_stage_note_remove(abs);
	}
	return err;
}

int CLF_unlink(const char *path)
{
	return path_op(CLF_PROTO_OP_UNLINK, path);
}

int CLF_rmdir(const char *path)
{
	return path_op(CLF_PROTO_OP_RMDIR, path);
}

int CLF_mkdir(const char *path, mode_t mode)
{
	struct clf_proto_mkdir_req req = {
		.dir = CLF_PROTO_ROOT_INO,
		.mode = mode & CLF_PROTO_MODE_PERM,
		.uid = geteuid(),
		.gid = getegid(),
	};
	char rel[CLF_PROTO_PATH_MAX + 1];
	void *payload;
	uint32_t len;
	int err;

	err = clf_path_normalize(path, rel, sizeof(rel));
	if (err)
		return err;
	if (!*rel)
		return clf_fail(EEXIST, "clf: mkdir '/': the root exists");
	req.path = clf_proto_str_of(rel);
	err = clf_meta_call(CLF_PROTO_OP_MKDIR, clf_enc_mkdir, &req, &payload, &len);
	if (!err)
		free(payload);
	return err;
}

static int rename_paths(const char *from, const char *to, bool note)
{
	struct clf_proto_rename_req req = {
		.dir = CLF_PROTO_ROOT_INO,
		.new_dir = CLF_PROTO_ROOT_INO,
	};
	char a[CLF_PROTO_PATH_MAX + 1], b[CLF_PROTO_PATH_MAX + 1];
	void *payload;
	uint32_t len;
	int err;

	err = clf_path_normalize(from, a, sizeof(a));
	if (!err)
		err = clf_path_normalize(to, b, sizeof(b));
	if (err)
		return err;
	if (!*a || !*b)
		return clf_fail(EBUSY, "clf: cannot rename the root directory");
	req.path = clf_proto_str_of(a);
	req.new_path = clf_proto_str_of(b);
	err = clf_meta_call(CLF_PROTO_OP_RENAME, clf_enc_rename, &req, &payload, &len);
	if (!err)
		free(payload);
	if (!err && note && clf_stage_backed()) {
		char f[CLF_STAGE_PATH_LEN], t[CLF_STAGE_PATH_LEN];

		snprintf(f, sizeof(f), "/%s", a);
		snprintf(t, sizeof(t), "/%s", b);
		err = clf_stage_note_rename(f, t);
	}
	return err;
}

int CLF_rename(const char *from, const char *to)
{
	return rename_paths(from, to, true);
}

int clf_rename_unnoted(const char *from, const char *to)
{
	return rename_paths(from, to, false);
}
