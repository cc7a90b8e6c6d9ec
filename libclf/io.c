// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * io.c -- reads and writes through views.
 *
 * An access of view bytes [lo, hi) is cut into pieces of at most
 * CLF_PROTO_DATA_MAX view bytes.  For each piece and each subfile the
 * view touches, the bytes of that subfile are gathered from the user
 * buffer into one packed buffer (when the view falls contiguously on the
 * subfile this is the user's bytes themselves, in one run) and sent with
 * (view handle, lo, hi): the iod expands the range through the projection
 * it stored when the view was registered.  Requests to every iod go out
 * before any reply is read, so the iods work in parallel.  Reads are the
 * mirror image.  Bytes before the layout's displacement (the head) are
 * plain subfile ranges.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "client_i.h"
#include "error.h"
#include "type.h"

static int enc_register(struct wire_writer *w, const void *m)
{
	return clf_proto_view_register_req_encode(w, m);
}

static int enc_u32(struct wire_writer *w, const void *m)
{
	return clf_proto_u32_encode(w, m);
}

static int enc_ino(struct wire_writer *w, const void *m)
{
	return clf_proto_ino_encode(w, m);
}

static int enc_sub_read(struct wire_writer *w, const void *m)
{
	return clf_proto_sub_read_req_encode(w, m);
}

/* An encoded type in a new buffer (caller frees). */
static int encode_type(CLF_Datatype t, uint8_t **buf, uint32_t *len)
{
	int64_t n = CLF_Type_encode(t, NULL, 0);

	if (n < 0)
		return (int)n;
	*buf = malloc(n);
	if (!*buf)
		return clf_fail(ENOMEM, "clf: out of memory");
	*len = (uint32_t)CLF_Type_encode(t, *buf, n);
	return 0;
}

/* Register the view's projection on subfile j with its (locked) iod. */
static int register_view(struct clf_file *f, struct clf_peer *p, int j)
{
	struct clf_proto_view_register_req req = {
		.file = f->ino,
		.subfile = (uint32_t)j,
		.view_disp = f->view_disp,
		.subfile_disp = f->layout->disp,
	};
	struct clf_proto_u32 handle;
	uint8_t *vt = NULL, *st = NULL;
	struct wire_reader r;
	struct iovec iov;
	void *body = NULL, *reply;
	uint32_t rlen;
	size_t len;
	uint64_t id;
	int err;

	err = encode_type(f->view_type, &vt, &req.view_type.len);
	if (!err)
		err = encode_type(f->layout->types[j], &st, &req.subfile_type.len);
	if (err)
		goto out;
	req.view_type.ptr = vt;
	req.subfile_type.ptr = st;
	err = clf_encode(enc_register, &req, &body, &len);
	if (err)
		goto out;
	iov = (struct iovec){ body, len };
	err = clf_peer_send(p, CLF_PROTO_OP_VIEW_REGISTER, &iov, 1, &id);
	if (!err)
		err = clf_peer_recv(p, CLF_PROTO_OP_VIEW_REGISTER, id, &reply,
				    &rlen);
	if (err)
		goto out;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	err = clf_proto_u32_decode(&r, &handle);
	free(reply);
	if (!err) {
		f->handles[j] = handle.value;
		f->handle_gen[j] = p->generation;
	}
out:
	free(body);
	free(vt);
	free(st);
	return err;
}

void clf_file_release_views(struct clf_file *f)
{
	struct clf_client *cl = clf_client_instance;

	for (int j = 0; f->layout && j < f->layout->nsub; j++) {
		struct clf_peer *p = clf_client_iod(cl, f->layout->iods[j]);
		struct clf_proto_u32 req = { f->handles[j] };
		struct iovec iov;
		void *body, *reply;
		uint32_t rlen;
		size_t len;

		if (!f->handle_gen[j] || !p)
			continue;
		/* A handle of an older connection died with it. */
		if (f->handle_gen[j] == p->generation &&
		    clf_encode(enc_u32, &req, &body, &len) == 0) {
			iov = (struct iovec){ body, len };
			if (clf_peer_call(p, CLF_PROTO_OP_VIEW_RELEASE, &iov, 1,
					  &reply, &rlen) == 0)
				free(reply);
			free(body);
		}
		f->handle_gen[j] = 0;
	}
}

/* One subfile's share of one piece of an access. */
struct job {
	int j;			/* subfile */
	struct clf_peer *peer;
	int64_t count;		/* packed bytes */
	uint8_t *packed;	/* owned */
	uint8_t head[64];	/* encoded request without the data */
	size_t head_len;
	uint64_t id;
	bool sent;
};

static int cmp_job_iod(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	return x->j - y->j;
}

/* Bytes before the displacement: plain subfile ranges, run by run. */
struct head_io {
	struct clf_file *f;
	struct clf_peer *peer;
	uint8_t *packed;
	int64_t done;
	bool write;
};

static int head_run(int64_t voff, int64_t soff, int64_t len, void *arg)
{
	struct head_io *h = arg;
	struct iovec iov[2];
	void *body = NULL, *reply = NULL;
	uint32_t rlen;
	size_t blen;
	int err;

	if (h->write) {
		struct clf_proto_sub_write_req req = {
			.file = h->f->ino,
			.subfile = CLF_PROTO_SUBFILE_HEAD,
			.offset = soff,
			.data = { h->packed + h->done, (uint32_t)len },
		};
		uint8_t head[64];
		struct wire_writer w = { head, sizeof(head), 0 };

		err = clf_proto_sub_write_req_encode_head(&w, &req);
		if (err)
			return err;
		iov[0] = (struct iovec){ head, w.pos };
		iov[1] = (struct iovec){ h->packed + h->done, len };
		err = clf_peer_call(h->peer, CLF_PROTO_OP_SUB_WRITE, iov, 2,
				    &reply, &rlen);
	} else {
		struct clf_proto_sub_read_req req = {
			.file = h->f->ino,
			.subfile = CLF_PROTO_SUBFILE_HEAD,
			.offset = soff,
			.length = (uint32_t)len,
		};
		struct clf_proto_data data;
		struct wire_reader r;

		err = clf_encode(enc_sub_read, &req, &body, &blen);
		if (err)
			return err;
		iov[0] = (struct iovec){ body, blen };
		err = clf_peer_call(h->peer, CLF_PROTO_OP_SUB_READ, iov, 1,
				    &reply, &rlen);
		free(body);
		if (!err) {
			r = (struct wire_reader){ .buf = reply, .len = rlen };
			err = clf_proto_data_decode(&r, &data);
		}
		if (!err) {
			/* Short at the end of the head subfile: zeros. */
			memset(h->packed + h->done, 0, len);
			memcpy(h->packed + h->done, data.data.ptr,
			       min64(data.data.len, len));
		}
	}
	free(reply);
	h->done += len;
	return err;
}

static int head_io(struct clf_file *f, int64_t lo, int64_t hi, uint8_t *packed,
		   bool write)
{
	struct clf_client *cl = clf_client_instance;
	struct head_io h = { f, NULL, packed, 0, write };

	h.peer = clf_client_iod(cl, f->layout->head_iod);
	if (!h.peer)
		return -EINVAL;
	return clf_viewmap_foreach(f->view, CLF_HEAD(f->layout), lo, hi,
				   head_run, &h);
}

/* Send the request of job k (peer locked and view registered). */
static int send_job(struct clf_file *f, struct job *jb, int64_t lo,
		    int64_t hi, bool write)
{
	struct clf_proto_view_io_req req = {
		.handle = f->handles[jb->j],
		.lo = lo,
		.hi = hi,
		.data = { jb->packed, (uint32_t)jb->count },
	};
	struct wire_writer w = { jb->head, sizeof(jb->head), 0 };
	struct iovec iov[2];
	int err;

	err = write ? clf_proto_view_write_req_encode_head(&w, &req)
		    : clf_proto_view_read_req_encode(&w, &req);
	if (err)
		return err;
	iov[0] = (struct iovec){ jb->head, w.pos };
	iov[1] = (struct iovec){ jb->packed, jb->count };
	err = clf_peer_send(jb->peer, write ? CLF_PROTO_OP_VIEW_WRITE
					    : CLF_PROTO_OP_VIEW_READ,
			    iov, write ? 2 : 1, &jb->id);
	jb->sent = !err;
	return err;
}

static int recv_job(struct job *jb, bool write)
{
	uint16_t op = write ? CLF_PROTO_OP_VIEW_WRITE : CLF_PROTO_OP_VIEW_READ;
	struct wire_reader r;
	void *reply;
	uint32_t rlen;
	int err;

	err = clf_peer_recv(jb->peer, op, jb->id, &reply, &rlen);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = reply, .len = rlen };
	if (write) {
		struct clf_proto_u32 n;

		err = clf_proto_u32_decode(&r, &n);
		if (!err && n.value != jb->count)
			err = clf_fail(EIO, "clf: %s wrote %u of %lld bytes",
				       jb->peer->name, n.value,
				       (long long)jb->count);
	} else {
		struct clf_proto_data d;

		err = clf_proto_data_decode(&r, &d);
		if (!err && d.data.len != jb->count)
			err = clf_fail(EIO, "clf: %s sent %u of %lld bytes",
				       jb->peer->name, d.data.len,
				       (long long)jb->count);
		if (!err)
			memcpy(jb->packed, d.data.ptr, jb->count);
	}
	free(reply);
	return err;
}

/*
 * The iods' part of one piece: lock every iod involved (in a fixed
 * order), register missing views, send every request, then read every
 * reply.  The first error wins; replies of requests already sent are
 * still read so that the connections stay in step.
 */
static int exchange(struct clf_file *f, struct job *jobs, int njobs,
		    int64_t lo, int64_t hi, bool write, bool *stale)
{
	int err = 0, locked = 0;

	*stale = false;
	for (int k = 0; k < njobs; k++)
		jobs[k].sent = false;

	qsort(jobs, njobs, sizeof(*jobs), cmp_job_iod);
	for (; locked < njobs && !err; locked++) {
		if (locked == 0 || jobs[locked].peer != jobs[locked - 1].peer)
			err = clf_peer_lock(jobs[locked].peer);
		if (err)
			break;
	}
	/* Registrations first: their replies must not queue behind data. */
	for (int k = 0; k < locked && !err; k++)
		if (f->handle_gen[jobs[k].j] != jobs[k].peer->generation)
			err = register_view(f, jobs[k].peer, jobs[k].j);
	for (int k = 0; k < locked && !err; k++)
		err = send_job(f, &jobs[k], lo, hi, write);
	for (int k = 0; k < locked; k++) {
		int e;

		if (!jobs[k].sent)
			continue;
		e = recv_job(&jobs[k], write);
		if (!err)
			err = e;
	}
	for (int k = 0; k < locked; k++) {
		if (err && clf_peer_stale(jobs[k].peer))
			*stale = true;
		if (k + 1 == locked || jobs[k].peer != jobs[k + 1].peer)
			clf_peer_unlock(jobs[k].peer);
	}
	return err;
}

/* One piece [lo, hi) of an access; base is the view offset of buf. */
static int piece_io(struct clf_file *f, int64_t lo, int64_t hi, int64_t base,
		    void *buf, const struct clf_memlayout *mem, bool write)
{
	struct clf_client *cl = clf_client_instance;
	const struct clf_layout *l = f->layout;
	struct job *jobs;
	int njobs = 0, err = 0, head = CLF_HEAD(l);
	uint8_t *head_buf = NULL;
	int64_t head_count = 0;

	jobs = calloc(l->nsub, sizeof(*jobs));
	if (!jobs)
		return clf_fail(ENOMEM, "clf: out of memory");
	for (int j = 0; j <= l->nsub && !err; j++) {
		int64_t count;
		uint8_t *packed;

		if (!clf_viewmap_touches(f->view, j))
			continue;
		count = clf_viewmap_count(f->view, j, lo, hi);
		if (count <= 0) {
			err = count < 0 ? (int)count : 0;
			continue;
		}
		packed = malloc(count);
		if (!packed) {
			err = clf_fail(ENOMEM, "clf: out of memory");
			break;
		}
		if (write)
			clf_viewmap_gather(f->view, j, lo, hi, base, buf, mem,
					   packed);
		if (j == head) {
			head_buf = packed;
			head_count = count;
			continue;
		}
		jobs[njobs] = (struct job){ .j = j, .count = count,
					    .packed = packed };
		jobs[njobs].peer = clf_client_iod(cl, l->iods[j]);
		njobs++;
		if (!jobs[njobs - 1].peer)
			err = -EINVAL;
	}
	if (!err && head_buf)
		err = head_io(f, lo, hi, head_buf, write);
	/* A daemon restarted since our last request: retry once, afresh. */
	for (int attempt = 0; attempt < 2 && !err && njobs; attempt++) {
		bool stale;

		err = exchange(f, jobs, njobs, lo, hi, write, &stale);
		if (!err || !stale || attempt == 1)
			break;
		err = 0;
	}
	if (!err && !write) {
		for (int k = 0; k < njobs; k++)
			clf_viewmap_scatter(f->view, jobs[k].j, lo, hi, base,
					    buf, mem, jobs[k].packed);
		if (head_buf)
			clf_viewmap_scatter(f->view, head, lo, hi, base, buf,
					    mem, head_buf);
	}
	(void)head_count;
	for (int k = 0; k < njobs; k++)
		free(jobs[k].packed);
	free(jobs);
	free(head_buf);
	return err;
}

/* The view bytes this client knows to lie below the end of file. */
static int64_t readable_below(struct clf_file *f)
{
	int64_t size = max64(f->size, f->dirty_end);

	return clf_type_count_before(f->view_type, f->view_disp, size);
}

int64_t clf_file_io(struct clf_file *f, int64_t lo, int64_t n, void *buf,
		    CLF_Datatype memtype, bool write)
{
	struct clf_memlayout mem;
	int64_t done, last;
	int err;

	if (lo < 0 || n < 0 || lo > INT64_MAX - n)
		return clf_fail(EINVAL, "clf: bad access range");
	if (write && (f->flags & O_ACCMODE) == O_RDONLY)
		return clf_fail(EBADF, "clf: write: file opened read-only");
	if (!write && (f->flags & O_ACCMODE) == O_WRONLY)
		return clf_fail(EBADF, "clf: read: file opened write-only");
	if (!write && lo + n > readable_below(f)) {
		/* Someone may have written further: ask metad. */
		struct clf_proto_attr attr;

		err = clf_meta_getattr(f->ino, &attr);
		if (err)
			return err;
		f->size = attr.size;
		n = max64(0, min64(n, readable_below(f) - lo));
	}
	if (n == 0)
		return 0;
	err = clf_memlayout_init(&mem, memtype);
	if (err)
		return err;
	for (done = 0; done < n && !err;) {
		int64_t len = min64(n - done, CLF_PROTO_DATA_MAX);

		err = piece_io(f, lo + done, lo + done + len, lo, buf, &mem,
			       write);
		if (!err)
			done += len;
	}
	clf_memlayout_release(&mem);
	if (write && done > 0 &&
	    CLF_Type_unmap(f->view_type, f->view_disp, lo + done - 1, &last) == 0)
		f->dirty_end = max64(f->dirty_end, last + 1);
	return done > 0 ? done : err;
}

static ssize_t io_at(int fd, int64_t *off, int64_t n, void *buf,
		     CLF_Datatype memtype, bool write, bool advance)
{
	struct clf_file *f;
	int64_t lo, ret;
	int err;

	err = clf_file_get(fd, &f);
	if (err)
		return err;
	lo = off ? *off : f->pos;
	if (write && advance && (f->flags & O_APPEND)) {
		struct clf_proto_attr attr;

		err = clf_meta_getattr(f->ino, &attr);
		if (err) {
			clf_file_put(f);
			return err;
		}
		f->size = attr.size;
		lo = readable_below(f);
	}
	ret = clf_file_io(f, lo, n, buf, memtype, write);
	if (ret > 0 && advance)
		f->pos = lo + ret;
	clf_file_put(f);
	return ret;
}

ssize_t CLF_read(int fd, void *buf, size_t len)
{
	return io_at(fd, NULL, (int64_t)len, buf, NULL, false, true);
}

ssize_t CLF_write(int fd, const void *buf, size_t len)
{
	return io_at(fd, NULL, (int64_t)len, (void *)buf, NULL, true, true);
}

static int64_t memtype_size(CLF_Datatype memtype)
{
	if (!memtype)
		return clf_fail(EINVAL, "clf: NULL memory type");
	return CLF_Type_size(memtype);
}

ssize_t CLF_ncread(int fd, void *buf, CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n : io_at(fd, NULL, n, buf, memtype, false, true);
}

ssize_t CLF_ncwrite(int fd, const void *buf, CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n : io_at(fd, NULL, n, (void *)buf, memtype, true, true);
}

ssize_t CLF_ncread_at(int fd, int64_t view_off, void *buf,
		      CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n : io_at(fd, &view_off, n, buf, memtype, false, false);
}

ssize_t CLF_ncwrite_at(int fd, int64_t view_off, const void *buf,
		       CLF_Datatype memtype)
{
	int64_t n = memtype_size(memtype);

	return n < 0 ? n : io_at(fd, &view_off, n, (void *)buf, memtype, true,
				 false);
}

int CLF_sync(int fd)
{
	struct clf_client *cl = clf_client_instance;
	struct clf_file *f;
	bool *done;
	int err;

	err = clf_file_get(fd, &f);
	if (err)
		return err;
	err = clf_file_flush_size(f);
	done = calloc(cl->cfg->niods, sizeof(*done));
	if (!done && !err)
		err = clf_fail(ENOMEM, "clf: out of memory");
	for (int j = 0; j <= f->layout->nsub && !err; j++) {
		uint32_t iod = j < f->layout->nsub ? f->layout->iods[j]
						   : f->layout->head_iod;
		struct clf_proto_ino req = { f->ino };
		struct clf_peer *p = clf_client_iod(cl, iod);
		struct iovec iov;
		void *body, *reply;
		uint32_t rlen;
		size_t len;

		if (!p || done[iod])
			continue;
		done[iod] = true;
		err = clf_encode(enc_ino, &req, &body, &len);
		if (err)
			break;
		iov = (struct iovec){ body, len };
		err = clf_peer_call(p, CLF_PROTO_OP_SYNC, &iov, 1, &reply, &rlen);
		free(body);
		if (!err)
			free(reply);
	}
	free(done);
	clf_file_put(f);
	return err;
}
