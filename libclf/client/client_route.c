// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_route.c -- metad calls when the namespace is spread over
 * several metads (include/clf_proto.h "Several metads"): each request
 * goes to the metad of the inode or directory it names, and a path of
 * several names is first walked with RESOLVE, from metad to metad, to
 * the directory of its last name.  With one metad nothing of this runs:
 * requests go to it as they are, and it walks their paths itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client_i.h"
#include "clock.h"
#include "error.h"

/*
 * The directories that path walks reached are kept for ROUTE_TTL_MS, so
 * that a path op costs one round trip, to the metad of its directory,
 * as with one metad, rather than a RESOLVE at metad 0 first (at 16
 * processes over 4 metads, opens ran at a third of one metad's rate).
 * As the mount's dentries (mount.clf(8): one second unless cache=none),
 * a directory another process renames or removes may be reached by its
 * old path until then; this process's own renames and rmdirs forget
 * every walk, and a request that fails after a remembered walk is walked
 * again and, reaching another directory, sent again.
 */
#define ROUTE_TTL_MS 1000

/* ROUTE_TTL_MS, or CLF_TEST_ROUTE_TTL_MS for a test that must not see a
 * loaded machine's delays expire its walks. */
static int64_t route_ttl_ms(void)
{
	const char *v = getenv("CLF_TEST_ROUTE_TTL_MS");

	return v && *v ? strtoll(v, NULL, 10) : ROUTE_TTL_MS;
}

/*
 * One metad request: with one metad straight to it, else to the metad
 * that clf_meta_route picks.  Lives here, not among the encoders, so
 * that the routing may use them without the two files calling each
 * other.
 */
int clf_meta_call(uint16_t op, clf_encode_fn enc, const void *msg,
		  void **reply, uint32_t *rlen)
{
	struct clf_client *cl;
	struct iovec iov;
	void *buf;
	size_t len;
	int err;

	err = clf_client_get(&cl);
	if (err)
		return err;
	if (cl->cfg->nmetads > 1)
		return clf_meta_route(cl, op, enc, msg, reply, rlen);
	err = clf_encode(enc, msg, &buf, &len);
	if (err)
		return err;
	iov = (struct iovec){ buf, len };
	if (clf_op_has_reqid(op))
		err = clf_peer_call_retry(&cl->metad, op, &iov, 1, reply, rlen);
	else
		err = clf_peer_call(&cl->metad, op, &iov, 1, reply, rlen);
	free(buf);
	return err;
}

struct clf_peer *clf_client_metad(struct clf_client *cl, uint32_t index)
{
	if (index == 0 || index >= cl->cfg->nmetads)
		return &cl->metad;
	return &cl->more_metads[index - 1];
}

struct clf_peer *clf_client_metad_locks(struct clf_client *cl, uint64_t ino)
{
	uint32_t index = CLF_PROTO_INO_METAD(ino);

	if (index == 0 || index >= cl->cfg->nmetads)
		return &cl->metad_locks;
	return &cl->more_metad_locks[index - 1];
}

struct clf_peer *clf_client_metad_of(struct clf_client *cl, uint64_t ino)
{
	return clf_client_metad(cl, CLF_PROTO_INO_METAD(ino));
}

/* One call on peer p: with a request identity when op changes metad. */
static int call_on(struct clf_peer *p, uint16_t op, clf_encode_fn enc,
		   const void *msg, void **reply, uint32_t *rlen)
{
	struct iovec iov;
	void *buf;
	size_t len;
	int err = clf_encode(enc, msg, &buf, &len);

	if (err)
		return err;
	iov = (struct iovec){ buf, len };
	if (clf_op_has_reqid(op))
		err = clf_peer_call_retry(p, op, &iov, 1, reply, rlen);
	else
		err = clf_peer_call(p, op, &iov, 1, reply, rlen);
	free(buf);
	return err;
}

static int enc_resolve(struct wire_writer *w, const void *m)
{
	return clf_proto_resolve_req_encode(w, m);
}

static int enc_lookup_rep(struct wire_writer *w, const void *m)
{
	return clf_proto_lookup_rep_encode(w, m);
}

static int enc_create_rep(struct wire_writer *w, const void *m)
{
	return clf_proto_create_rep_encode(w, m);
}

static uint32_t route_slot(uint64_t from, const char *path, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ from;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)path[i]) * 1099511628211ull;
	return (uint32_t)(h % CLF_ROUTE_CACHE);
}

/* The remembered walk of path from directory from, if any. */
static bool route_get(struct clf_client *cl, uint64_t from, const char *path,
		      size_t len, uint64_t *ino)
{
	struct clf_route_entry *e;
	bool hit;

	if (len == 0 || len > CLF_ROUTE_PATH_MAX)
		return false;
	e = &cl->routes[route_slot(from, path, len)];
	pthread_mutex_lock(&cl->route_lock);
	hit = e->len == len && e->from == from &&
	      !memcmp(e->path, path, len) && clf_now_ms() < e->expires_ms;
	if (hit)
		*ino = e->ino;
	pthread_mutex_unlock(&cl->route_lock);
	return hit;
}

static void route_put(struct clf_client *cl, uint64_t from, const char *path,
		      size_t len, uint64_t ino)
{
	struct clf_route_entry *e;

	if (len == 0 || len > CLF_ROUTE_PATH_MAX)
		return;
	e = &cl->routes[route_slot(from, path, len)];
	pthread_mutex_lock(&cl->route_lock);
	e->from = from;
	e->ino = ino;
	e->len = (uint16_t)len;
	memcpy(e->path, path, len);
	e->expires_ms = clf_now_ms() + route_ttl_ms();
	pthread_mutex_unlock(&cl->route_lock);
}

/* Forget every remembered walk (a directory of this process moved). */
static void route_forget_all(struct clf_client *cl)
{
	pthread_mutex_lock(&cl->route_lock);
	for (int i = 0; i < CLF_ROUTE_CACHE; i++)
		cl->routes[i].len = 0;
	pthread_mutex_unlock(&cl->route_lock);
}

/*
 * RESOLVE path (len bytes) from directory dir at dir's metad, and on at
 * each metad the walk reaches: the inode the whole path names.
 */
static int resolve_walk(struct clf_client *cl, uint64_t dir, const char *path,
			size_t len, uint64_t *out)
{
	while (len) {
		struct clf_proto_resolve_req req = {
			.dir = dir,
			.path = { .ptr = path, .len = (uint16_t)len },
		};
		struct clf_proto_resolve_rep rep;
		struct wire_reader r;
		void *reply;
		uint32_t rlen;
		int err;

		err = call_on(clf_client_metad_of(cl, dir),
			      CLF_PROTO_OP_RESOLVE, enc_resolve, &req, &reply,
			      &rlen);
		if (err)
			return err;
		r = (struct wire_reader){ .buf = reply, .len = rlen };
		err = clf_proto_resolve_rep_decode(&r, &rep);
		free(reply);
		if (!err && (rep.done == 0 || rep.done > len))
			err = clf_fail(EPROTO,
				       "clf: metad resolved %u bytes of a path of %zu",
				       rep.done, len);
		if (err)
			return err;
		dir = rep.ino;
		path += rep.done;
		len -= rep.done;
		while (len && *path == '/') {
			path++;
			len--;
		}
	}
	*out = dir;
	return 0;
}

/* resolve_walk, or what a walk of the same path gave within ROUTE_TTL_MS
 * (*cached set then). */
static int resolve_cached(struct clf_client *cl, uint64_t dir,
			  const char *path, size_t len, uint64_t *out,
			  bool *cached)
{
	int err;

	*cached = route_get(cl, dir, path, len, out);
	if (*cached)
		return 0;
	err = resolve_walk(cl, dir, path, len, out);
	if (!err)
		route_put(cl, dir, path, len, *out);
	return err;
}

/*
 * (dir, path of several names) -> (the directory of the last name, the
 * last name), path pointing into the caller's string; *cached when the
 * directory is a remembered walk's (NULL: not wanted).
 */
static int walk_parent_cached(struct clf_client *cl, uint64_t *dir,
			      struct clf_proto_str *path, bool *cached)
{
	const char *slash = NULL;

	for (uint32_t i = path->len; i > 0; i--)
		if (path->ptr[i - 1] == '/') {
			slash = path->ptr + i - 1;
			break;
		}
	if (!slash)
		return 0;
	if (slash > path->ptr) {
		bool hit;
		int err = resolve_cached(cl, *dir, path->ptr,
					 (size_t)(slash - path->ptr), dir,
					 &hit);

		if (err)
			return err;
		if (cached)
			*cached = hit;
	}
	path->len = (uint16_t)(path->len - (slash + 1 - path->ptr));
	path->ptr = slash + 1;
	return 0;
}

static int walk_parent(struct clf_client *cl, uint64_t *dir,
		       struct clf_proto_str *path)
{
	return walk_parent_cached(cl, dir, path, NULL);
}

/*
 * LOOKUP or CREATE of an existing entry of dir whose inode lives on
 * another metad (-EREMOTE): the inode's attributes and layout from its
 * metad, sent back as the reply of op would be.
 */
static int remote_entry(struct clf_client *cl, uint16_t op, uint64_t dir,
			struct clf_proto_str name, bool want_layout,
			void **reply, uint32_t *rlen)
{
	struct clf_proto_lookup_rep lk = { .has_layout = false };
	struct clf_proto_create_rep cr;
	struct clf_proto_ino ino_req;
	struct clf_proto_layout layout;
	struct wire_reader r;
	void *payload;
	uint32_t plen;
	size_t len = 0;
	uint64_t ino;
	bool have_layout = false;
	/* A file's name is walked afresh: files come and go far more
	 * often than directories. */
	int err = resolve_walk(cl, dir, name.ptr, name.len, &ino);

	if (err)
		return err;
	ino_req.ino = ino;
	err = call_on(clf_client_metad_of(cl, ino), CLF_PROTO_OP_GETATTR,
		      clf_enc_ino, &ino_req, &payload, &plen);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = plen };
	err = clf_proto_attr_decode(&r, &lk.attr);
	free(payload);
	if (err)
		return err;
	if (op == CLF_PROTO_OP_CREATE && !S_ISREG(lk.attr.mode))
		return clf_fail(S_ISDIR(lk.attr.mode) ? EISDIR : ENXIO,
				"clf: cannot create '%.*s': it exists and is no file",
				(int)name.len, name.ptr);
	if ((want_layout || op == CLF_PROTO_OP_CREATE) &&
	    S_ISREG(lk.attr.mode)) {
		err = call_on(clf_client_metad_of(cl, ino),
			      CLF_PROTO_OP_GET_LAYOUT, clf_enc_ino, &ino_req,
			      &payload, &plen);
		if (err)
			return err;
		r = (struct wire_reader){ .buf = payload, .len = plen };
		err = clf_proto_layout_decode(&r, &layout);
		if (err) {
			free(payload);
			return err;
		}
		have_layout = true;
		lk.has_layout = true;
		lk.layout = layout;
	}
	if (op == CLF_PROTO_OP_CREATE) {
		cr.attr = lk.attr;
		cr.layout = layout;
		err = clf_encode(enc_create_rep, &cr, reply, &len);
	} else {
		err = clf_encode(enc_lookup_rep, &lk, reply, &len);
	}
	if (!err)
		*rlen = (uint32_t)len;
	if (have_layout) {
		clf_proto_layout_release(&layout);
		free(payload);
	}
	return err;
}

/* The directory (or inode) the metad of a request is chosen by: every
 * routed request body starts with a u64, which C lets us read through a
 * pointer to the struct (its first member). */
static uint64_t first_u64(const void *msg)
{
	return *(const uint64_t *)msg;
}

int clf_meta_route(struct clf_client *cl, uint16_t op, clf_encode_fn enc,
		   const void *msg, void **reply, uint32_t *rlen)
{
	union {
		struct clf_proto_lookup_req lookup;
		struct clf_proto_create_req create;
		struct clf_proto_mkdir_req mkdir;
		struct clf_proto_path_req path;
		struct clf_proto_rename_req rename;
		struct clf_proto_symlink_req symlink;
		struct clf_proto_mknod_req mknod;
		struct clf_proto_link_req link;
	} m;
	uint64_t *dir = NULL, from;
	struct clf_proto_str *path = NULL, whole;
	uint64_t target;
	bool cached = false;
	int err = 0;

	switch (op) {
	case CLF_PROTO_OP_LOOKUP:
		m.lookup = *(const struct clf_proto_lookup_req *)msg;
		dir = &m.lookup.dir, path = &m.lookup.path;
		break;
	case CLF_PROTO_OP_CREATE:
		m.create = *(const struct clf_proto_create_req *)msg;
		dir = &m.create.dir, path = &m.create.path;
		break;
	case CLF_PROTO_OP_MKDIR:
		m.mkdir = *(const struct clf_proto_mkdir_req *)msg;
		dir = &m.mkdir.dir, path = &m.mkdir.path;
		break;
	case CLF_PROTO_OP_RMDIR:
		route_forget_all(cl);
		/* fall through */
	case CLF_PROTO_OP_UNLINK:
		m.path = *(const struct clf_proto_path_req *)msg;
		dir = &m.path.dir, path = &m.path.path;
		break;
	case CLF_PROTO_OP_SYMLINK:
		m.symlink = *(const struct clf_proto_symlink_req *)msg;
		dir = &m.symlink.dir, path = &m.symlink.path;
		break;
	case CLF_PROTO_OP_MKNOD:
		m.mknod = *(const struct clf_proto_mknod_req *)msg;
		dir = &m.mknod.dir, path = &m.mknod.path;
		break;
	case CLF_PROTO_OP_RENAME:
		/* Whatever it moves, no walk remembered before stands. */
		route_forget_all(cl);
		m.rename = *(const struct clf_proto_rename_req *)msg;
		err = walk_parent(cl, &m.rename.new_dir, &m.rename.new_path);
		dir = &m.rename.dir, path = &m.rename.path;
		break;
	case CLF_PROTO_OP_LINK:
		m.link = *(const struct clf_proto_link_req *)msg;
		dir = &m.link.new_dir, path = &m.link.new_path;
		break;
	case CLF_PROTO_OP_STATFS:
		return call_on(&cl->metad, op, enc, msg, reply, rlen);
	default:
		/* Requests about the instance (an empty body): metad 0. */
		if (!msg)
			return call_on(&cl->metad, op, enc, msg, reply, rlen);
		/* Requests about one inode (GETATTR, SETATTR, layouts,
		 * sizes, READDIR, READLINK, CAP_GRANT, RESOLVE). */
		return call_on(clf_client_metad_of(cl, first_u64(msg)), op, enc,
			       msg, reply, rlen);
	}
	from = *dir;
	whole = *path;
	if (!err)
		err = walk_parent_cached(cl, dir, path, &cached);
	if (err)
		return err;
	target = *dir;
	err = call_on(clf_client_metad_of(cl, target), op, enc, &m, reply,
		      rlen);
	if (err && cached) {
		/* The remembered directory may be gone or moved: walk
		 * again, and where that reaches another directory, ask
		 * there (the failed request changed nothing). */
		int e;

		route_forget_all(cl);
		*dir = from;
		*path = whole;
		e = walk_parent_cached(cl, dir, path, NULL);
		if (e)
			return e;
		if (*dir != target) {
			target = *dir;
			err = call_on(clf_client_metad_of(cl, target), op, enc,
				      &m, reply, rlen);
		}
	}
	if (err == -EREMOTE && op == CLF_PROTO_OP_LOOKUP)
		err = remote_entry(cl, op, target, *path,
				   m.lookup.flags & CLF_PROTO_LOOKUP_LAYOUT,
				   reply, rlen);
	else if (err == -EREMOTE && op == CLF_PROTO_OP_CREATE &&
		 !(m.create.flags & CLF_PROTO_CREATE_EXCL))
		err = remote_entry(cl, op, target, *path, true, reply, rlen);
	return err;
}
