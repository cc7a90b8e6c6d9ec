// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stage_path.c -- the clf path of an entry of a directory inode, for
 * the notes of removals and renames (stage_note.h) made through the
 * inode-based calls (clf_ll.h: the mount), which know no paths.  metad
 * keeps no parent a client can ask for, so the directory is searched
 * for from the root (READDIR), and the last ones found are kept and
 * checked with one LOOKUP of their path before use.  metad is asked
 * directly, below client_ns.c, which calls here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "error.h"
#include "stage_note.h"

struct path_dirents {
	struct clf_proto_readdir_rep rep;
	void *payload;
};

static int path_readdir(uint64_t dir, uint64_t cookie, struct path_dirents *out)
{
	struct clf_proto_readdir_req req = { dir, cookie, CLF_PROTO_READDIR_MAX };
	struct wire_reader r;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_READDIR, clf_enc_readdir, &req,
			    &out->payload, &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = out->payload, .len = len };
	err = clf_proto_readdir_rep_decode(&r, &out->rep);
	if (err)
		free(out->payload);
	return err;
}

static void path_readdir_release(struct path_dirents *d)
{
	clf_proto_readdir_rep_release(&d->rep);
	free(d->payload);
}

/* The inode path (from the root, no leading '/') names now. */
static int path_ino(const char *path, uint64_t *ino)
{
	struct clf_proto_lookup_req req = {
		.dir = CLF_PROTO_ROOT_INO,
		.path = clf_proto_str_of(path),
	};
	struct clf_proto_lookup_rep rep;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	err = clf_meta_call(CLF_PROTO_OP_LOOKUP, clf_enc_lookup, &req, &payload,
			    &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_lookup_rep_decode(&r, &rep);
	if (!err) {
		*ino = rep.attr.ino;
		clf_proto_lookup_rep_release(&rep);
	}
	free(payload);
	return err;
}

/*
 * Directory inode want under directory dir (whose path is out[0..n)):
 * its path into out.  Depth first over the directories (metad keeps no
 * parent that a client can ask for: ".." is no name on the wire).
 * 1 found, 0 not there, or a negative errno.
 */
static int path_search(uint64_t dir, uint64_t want, char *out, size_t n,
		       size_t len, int depth)
{
	struct path_dirents d;
	uint64_t cookie = 0;
	int err, found = 0;

	if (depth > CLF_PROTO_PATH_MAX / 2)
		return -ELOOP;
	for (;;) {
		bool eof;

		err = path_readdir(dir, cookie, &d);
		if (err)
			return err;
		for (uint32_t i = 0; i < d.rep.count && !found; i++) {
			const struct clf_proto_dirent *e = &d.rep.ents[i];
			size_t m = n + (n ? 1 : 0) + e->name.len;

			cookie = e->cookie;
			if (!S_ISDIR(e->mode) || (e->name.len <= 2 && e->name.ptr[0] == '.' &&
			    (e->name.len == 1 || e->name.ptr[1] == '.')))
				continue;
			if (m + 1 > len)
				continue;
			if (n)
				out[n] = '/';
			memcpy(out + n + (n ? 1 : 0), e->name.ptr, e->name.len);
			out[m] = '\0';
			if (e->ino == want)
				found = 1;
			else
				found = path_search(e->ino, want, out, m, len, depth + 1);
			if (found < 0)
				err = found;
		}
		eof = d.rep.eof || d.rep.count == 0;
		path_readdir_release(&d);
		if (found || err || eof)
			break;
	}
	if (!found)
		out[n] = '\0';
	return err ? err : found;
}

/* The directories found last, checked by a lookup before use. */
#define PATH_CACHE 16
static struct { uint64_t ino; char path[CLF_STAGE_PATH_LEN]; } path_cache[PATH_CACHE];
static unsigned path_cache_next;
static pthread_mutex_t path_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The path of directory inode dir from the root, without a leading '/'
 * ("" for the root), into out (CLF_STAGE_PATH_LEN bytes). */
static int dir_path(uint64_t dir, char *out)
{
	uint64_t ino;
	int err;

	out[0] = '\0';
	if (dir == CLF_PROTO_ROOT_INO)
		return 0;
	pthread_mutex_lock(&path_cache_lock);
	for (int i = 0; i < PATH_CACHE && !out[0]; i++)
		if (path_cache[i].ino == dir)
			snprintf(out, CLF_STAGE_PATH_LEN, "%s", path_cache[i].path);
	pthread_mutex_unlock(&path_cache_lock);
	if (out[0] && !path_ino(out, &ino) && ino == dir)
		return 0;
	err = path_search(CLF_PROTO_ROOT_INO, dir, out, 0, CLF_STAGE_PATH_LEN, 0);
	if (err <= 0)
		return err ? err : -ENOENT;
	pthread_mutex_lock(&path_cache_lock);
	path_cache[path_cache_next].ino = dir;
	snprintf(path_cache[path_cache_next].path, CLF_STAGE_PATH_LEN, "%s", out);
	path_cache_next = (path_cache_next + 1) % PATH_CACHE;
	pthread_mutex_unlock(&path_cache_lock);
	return 0;
}

int clf_stage_path_of(uint64_t dir, const char *name, char *out, size_t len)
{
	char d[CLF_STAGE_PATH_LEN];
	int err = dir_path(dir, d);

	if (err)
		return err;
	if ((size_t)snprintf(out, len, "%s%s/%s", d[0] ? "/" : "", d, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int clf_stage_ll_path(uint64_t dir, const char *name, char *out)
{
	int err;

	out[0] = '\0';
	if (!clf_stage_backed())
		return 0;
	err = clf_stage_path_of(dir, name, out, CLF_STAGE_PATH_LEN);
	if (err)
		return clf_fail_neg(err, "clf: cannot find the path of '%s' (directory inode %llu) to note its change for the backing directory: %s",
				    name, (unsigned long long)dir, strerror(-err));
	return 0;
}
