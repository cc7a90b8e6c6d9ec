// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mds_data.c -- removal, truncation and capacity of a file's data on the
 * iods (see mds_data.h for the order of metadata and data changes).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mds.h"
#include "mds_data.h"

/* Send an encoded request to iod and expect an empty reply. */
static int call_empty(struct mds_iods *io, uint32_t iod, uint16_t op,
		      const struct wire_writer *w)
{
	struct wire_reader r;
	uint32_t len;
	void *reply;
	int err;

	err = mds_iods_call(io, iod, op, w->buf, w->pos, &reply, &len);
	if (err)
		return err;
	r = (struct wire_reader){ reply, len, 0, false };
	err = clf_proto_empty_decode(&r);
	free(reply);
	return err;
}

static int truncate_one(struct mds_iods *io, uint32_t iod, uint64_t ino,
			uint32_t subfile, int64_t length)
{
	struct clf_proto_truncate_req req = { ino, subfile, length };
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	int err = clf_proto_truncate_req_encode(&w, &req);

	if (!err)
		err = call_empty(io, iod, CLF_PROTO_OP_TRUNCATE, &w);
	if (err)
		return mds_fail_ctx(err,
				    "metad: cannot truncate 'ino %llu' on iod %u (%s)",
				    (unsigned long long)ino, iod,
				    mds_iods_addr(io, iod));
	return 0;
}

int mds_data_truncate(struct mds_iods *io, uint64_t ino,
		      const struct mds_layout *layout, int64_t size)
{
	int err = 0;

	if (layout->disp > 0)
		err = truncate_one(io, layout->head_iod, ino,
				   CLF_PROTO_SUBFILE_HEAD,
				   size < layout->disp ? size : layout->disp);
	for (uint32_t j = 0; j < layout->nsubfiles && !err; j++) {
		const struct mds_subfile *sf = &layout->subfiles[j];
		CLF_Datatype t;
		int64_t len;

		err = CLF_Type_decode(sf->type, sf->type_len, &t);
		if (err) {
			err = mds_fail_ctx(err,
					   "metad: 'ino %llu': type of subfile %u",
					   (unsigned long long)ino, j);
			break;
		}
		err = mds_subfile_length(t, layout->disp, size, &len);
		CLF_Type_free(&t);
		if (!err)
			err = truncate_one(io, sf->iod, ino, j, len);
	}
	if (err)
		mds_log("%s", CLF_Last_error());
	return err;
}

int mds_data_remove_on(struct mds_iods *io, uint32_t iod, uint64_t ino)
{
	struct clf_proto_remove_req req = { ino, CLF_PROTO_SUBFILE_ALL };
	uint8_t buf[32];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	int err = clf_proto_remove_req_encode(&w, &req);

	if (!err)
		err = call_empty(io, iod, CLF_PROTO_OP_REMOVE, &w);
	/* The iod removes what it has: none is no error, but say so. */
	return err == -ENOENT ? 0 : err;
}

/* An iod older than 1.16: one REMOVE per file. */
static void remove_each(struct mds_iods *io, uint32_t iod,
			const uint64_t *inos, uint32_t n, uint32_t *status)
{
	for (uint32_t i = 0; i < n; i++)
		status[i] = (uint32_t)-mds_data_remove_on(io, iod, inos[i]);
}

int mds_data_remove_many(struct mds_iods *io, uint32_t iod,
			 const uint64_t *inos, uint32_t n, uint32_t *status)
{
	struct clf_proto_remove_many_req *req = malloc(sizeof(*req));
	struct clf_proto_remove_many_rep *rep = malloc(sizeof(*rep));
	struct wire_writer w = { NULL, 0, 0 };
	struct wire_reader r;
	uint32_t len;
	void *reply;
	int err = req && rep ? 0 : clf_fail(ENOMEM, "metad: out of memory");

	if (!err && (n == 0 || n > CLF_PROTO_SUB_BATCH_MAX))
		err = clf_fail(EINVAL, "metad: REMOVE_MANY of %u files", n);
	if (!err) {
		req->n = n;
		memcpy(req->file, inos, n * sizeof(*inos));
		w.cap = 4 + 8 * (size_t)n;
		w.buf = malloc(w.cap);
		err = w.buf ? clf_proto_remove_many_req_encode(&w, req) :
			      clf_fail(ENOMEM, "metad: out of memory");
	}
	if (!err)
		err = mds_iods_call(io, iod, CLF_PROTO_OP_REMOVE_MANY, w.buf,
				    w.pos, &reply, &len);
	if (err == -ENOSYS) {
		remove_each(io, iod, inos, n, status);
		err = 0;
		goto free_req;
	}
	if (!err) {
		r = (struct wire_reader){ reply, len, 0, false };
		err = clf_proto_remove_many_rep_decode(&r, rep);
		free(reply);
	}
	if (!err && rep->n != n)
		err = clf_fail(EPROTO,
			       "iod %u (%s) answered %u removals for %u",
			       iod, mds_iods_addr(io, iod), rep->n, n);
	if (!err)
		memcpy(status, rep->status, n * sizeof(*status));
free_req:
	free(w.buf);
	free(req);
	free(rep);
	return err;
}

static void remove_on(struct mds_iods *io, uint32_t iod, uint64_t ino)
{
	int err = mds_data_remove_on(io, iod, ino);

	if (err)
		mds_log("cannot remove the subfiles of removed 'ino %llu' on iod %u (%s), left behind as garbage: %s",
			(unsigned long long)ino, iod, mds_iods_addr(io, iod),
			CLF_Last_error());
}

void mds_data_remove(struct mds_iods *io, uint64_t ino,
		     const struct mds_layout *layout)
{
	uint32_t n = mds_iods_count(io);
	bool *hit = calloc(n, sizeof(*hit));

	if (!hit) {
		mds_log("out of memory: the subfiles of removed 'ino %llu' are left behind as garbage",
			(unsigned long long)ino);
		return;
	}
	if (layout->disp > 0 && layout->head_iod < n)
		hit[layout->head_iod] = true;
	for (uint32_t j = 0; j < layout->nsubfiles; j++) {
		uint32_t iod = layout->subfiles[j].iod;

		if (iod < n)
			hit[iod] = true;
		else
			mds_log("subfile %u of removed 'ino %llu' is on iod %u, which the configuration lacks: left behind",
				j, (unsigned long long)ino, iod);
	}
	for (uint32_t i = 0; i < n; i++)
		if (hit[i])
			remove_on(io, i, ino);
	free(hit);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int mds_data_statfs(struct mds_iods *io, struct clf_proto_statfs *out)
{
	struct clf_proto_statfs sum = { .name_max = CLF_PROTO_NAME_MAX };
	uint32_t n = mds_iods_count(io);

	for (uint32_t i = 0; i < n; i++) {
		struct clf_proto_statfs one;
		struct wire_reader r;
		uint32_t len;
		void *reply;
		int err;

		err = mds_iods_call(io, i, CLF_PROTO_OP_IOD_STATFS, NULL, 0,
				    &reply, &len);
		if (!err) {
			r = (struct wire_reader){ reply, len, 0, false };
			err = clf_proto_statfs_decode(&r, &one);
			free(reply);
		}
		if (err) {
			err = mds_fail_ctx(err, "metad: statfs: iod %u (%s)", i,
					   mds_iods_addr(io, i));
			mds_log("%s", CLF_Last_error());
			return err;
		}
		sum.bytes_total = add_sat(sum.bytes_total, one.bytes_total);
		sum.bytes_free = add_sat(sum.bytes_free, one.bytes_free);
		sum.bytes_avail = add_sat(sum.bytes_avail, one.bytes_avail);
		if (one.block_size > sum.block_size)
			sum.block_size = one.block_size;
	}
	*out = sum;
	return 0;
}
