// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * layout.c -- physical layouts and the mappings of views onto them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "error.h"
#include "layout.h"
#include "mapping_prog.h"
#include "type.h"

int clf_layout_create(int64_t disp, int nsub, const CLF_Datatype *types,
		      const uint32_t *iods, uint32_t head_iod,
		      struct clf_layout **out)
{
	struct clf_layout *l;
	int err;

	if (disp < 0)
		return clf_fail(EINVAL, "layout: negative displacement %lld",
				(long long)disp);
	err = CLF_Pattern_check(nsub, types);
	if (err)
		return err;
	l = calloc(1, sizeof(*l));
	if (!l)
		return clf_fail(ENOMEM, "layout: out of memory");
	l->types = calloc(nsub, sizeof(*l->types));
	l->iods = calloc(nsub, sizeof(*l->iods));
	if (!l->types || !l->iods) {
		clf_layout_free(l);
		return clf_fail(ENOMEM, "layout: out of memory");
	}
	/* Every type at the layout's one period. */
	err = clf_pattern_resize(nsub, types, l->types);
	if (err) {
		clf_layout_free(l);
		return err;
	}
	l->disp = disp;
	l->head_iod = head_iod;
	l->nsub = nsub;
	for (int j = 0; j < nsub; j++)
		l->iods[j] = iods ? iods[j] : (uint32_t)j;
	*out = l;
	return 0;
}

int clf_layout_round_robin(int64_t stripe, int count, uint32_t first,
			   uint32_t niods, struct clf_layout **out)
{
	CLF_Datatype *types;
	uint32_t *iods;
	int64_t period;
	int err;

	if (stripe < 1 || count < 1 || niods < 1 ||
	    !mul_ok(stripe, count, &period))
		return clf_fail(EINVAL,
			"layout: bad round-robin striping (%lld bytes x %d subfiles over %u iods)",
			(long long)stripe, count, niods);
	types = calloc(count, sizeof(*types));
	iods = calloc(count, sizeof(*iods));
	if (!types || !iods) {
		err = clf_fail(ENOMEM, "layout: out of memory");
		goto out;
	}
	err = CLF_Type_pitfalls(0, stripe - 1, period, 1, stripe, count,
				CLF_BYTE, types);
	if (err)
		goto out;
	for (int j = 0; j < count; j++)
		iods[j] = (first + (uint32_t)j) % niods;
	err = clf_layout_create(0, count, types, iods, first % niods, out);
	for (int j = 0; j < count; j++)
		CLF_Type_free(&types[j]);
out:
	free(types);
	free(iods);
	return err;
}

void clf_layout_free(struct clf_layout *layout)
{
	if (!layout)
		return;
	for (int j = 0; layout->types && j < layout->nsub; j++)
		CLF_Type_free(&layout->types[j]);
	free(layout->types);
	free(layout->iods);
	free(layout);
}

/* Does the view select any byte below the pattern's displacement? */
static int view_touches_head(int64_t disp, CLF_Datatype type, int64_t end)
{
	int64_t first;

	return end > 0 && disp < end &&
	       CLF_Type_unmap(type, disp, 0, &first) == 0 && first < end;
}

int clf_viewmap_create(const struct clf_layout *layout, int64_t disp,
		    CLF_Datatype type, struct clf_viewmap **out)
{
	struct clf_viewmap *v;
	int err = 0;

	if (!layout || !type || disp < 0)
		return clf_fail(EINVAL, "view: NULL type or negative displacement");
	v = calloc(1, sizeof(*v));
	if (!v)
		return clf_fail(ENOMEM, "view: out of memory");
	v->nmaps = layout->nsub + 1;
	v->maps = calloc(v->nmaps, sizeof(*v->maps));
	if (!v->maps) {
		free(v);
		return clf_fail(ENOMEM, "view: out of memory");
	}
	v->disp = disp;
	v->type = CLF_Type_dup(type);
	v->head_end = layout->disp;
	for (int j = 0; j < layout->nsub && !err; j++) {
		err = CLF_Mapping_create(type, disp, layout->types[j],
					 layout->disp, &v->maps[j]);
		if (!err && CLF_Mapping_bytes_per_period(v->maps[j]) == 0) {
			CLF_Mapping_free(v->maps[j]);
			v->maps[j] = NULL;
		}
	}
	/* The head holds file offset f at subfile offset f: a byte pattern. */
	if (!err && view_touches_head(disp, type, layout->disp))
		err = CLF_Mapping_create(type, disp, CLF_BYTE, 0,
					 &v->maps[CLF_HEAD(layout)]);
	if (err) {
		clf_viewmap_free(v);
		return err;
	}
	*out = v;
	return 0;
}

void clf_viewmap_free(struct clf_viewmap *view)
{
	if (!view)
		return;
	for (int j = 0; j < view->nmaps; j++)
		CLF_Mapping_free(view->maps[j]);
	free(view->maps);
	CLF_Type_free(&view->type);
	free(view);
}

struct head_clip {
	int64_t end;
	CLF_Segment_fn fn;
	void *arg;
};

#define HEAD_DONE 1	/* internal: stop the walk, not an error */

static int clip_to_head(int64_t voff, int64_t soff, int64_t len, void *arg)
{
	struct head_clip *h = arg;
	int err;

	if (soff >= h->end)
		return HEAD_DONE;
	err = h->fn(voff, soff, min64(len, h->end - soff), h->arg);
	if (err)
		return err;
	return soff + len >= h->end ? HEAD_DONE : 0;
}

int clf_viewmap_foreach(const struct clf_viewmap *view, int j, int64_t lo,
		     int64_t hi, CLF_Segment_fn fn, void *arg)
{
	struct head_clip h = { view->head_end, fn, arg };
	int err;

	if (j < 0 || j >= view->nmaps)
		return clf_fail(EINVAL, "view: no subfile %d", j);
	if (!view->maps[j])
		return 0;
	if (j < view->nmaps - 1)
		return CLF_Mapping_foreach(view->maps[j], lo, hi, fn, arg);
	err = CLF_Mapping_foreach(view->maps[j], lo, hi, clip_to_head, &h);
	return err == HEAD_DONE ? 0 : err;
}

static int add_len(int64_t voff, int64_t soff, int64_t len, void *arg)
{
	*(int64_t *)arg += len;
	return 0;
}

int64_t clf_viewmap_count(const struct clf_viewmap *view, int j, int64_t lo,
		       int64_t hi)
{
	int64_t n = 0;
	int err;

	if (j < 0 || j >= view->nmaps)
		return clf_fail(EINVAL, "view: no subfile %d", j);
	if (!view->maps[j])
		return 0;
	if (j < view->nmaps - 1)
		return CLF_Mapping_count(view->maps[j], lo, hi);
	/* The head is short and contiguous in the file: walk it. */
	err = clf_viewmap_foreach(view, j, lo, hi, add_len, &n);
	return err ? err : n;
}

int clf_memlayout_init(struct clf_memlayout *mem, CLF_Datatype memtype)
{
	int err;

	mem->type = NULL;
	mem->map = NULL;
	if (!memtype || CLF_Type_size(memtype) == CLF_Type_extent(memtype))
		return 0;
	err = CLF_Mapping_create(memtype, 0, CLF_BYTE, 0, &mem->map);
	if (err)
		return err;
	mem->type = CLF_Type_dup(memtype);
	return 0;
}

void clf_memlayout_release(struct clf_memlayout *mem)
{
	CLF_Mapping_free(mem->map);
	CLF_Type_free(&mem->type);
	mem->map = NULL;
}

/*
 * The memory runs of a strided user buffer, read forwards in batches.
 * The runs of one subfile come in increasing view (so memory linear)
 * order; looking each one up in the memory type's mapping would cost a
 * walk set-up (an unmap and the cursors) per run -- hundreds of ns for
 * runs of a byte or two.  Instead the memory runs are fetched MEM_BATCH
 * at a time, from where the last batch ended, and each subfile run is
 * cut against them: O(1) per memory run and per subfile run.
 */
#define MEM_BATCH 256

struct mem_run {
	int64_t lin, addr, len;
};

struct mem_cursor {
	const CLF_Mapping *map;
	int64_t next;		/* first linear offset not yet fetched */
	int64_t end;		/* linear offsets of the access end here */
	int n, i;		/* runs in r, the current one */
	struct mem_run r[MEM_BATCH];
};

#define MEM_BATCH_FULL 1	/* internal: stop the fetch */

static int mem_fetch_run(int64_t lin, int64_t addr, int64_t len, void *arg)
{
	struct mem_cursor *k = arg;

	if (k->n == MEM_BATCH)
		return MEM_BATCH_FULL;
	k->r[k->n++] = (struct mem_run){ lin, addr, len };
	return 0;
}

/* The next batch of memory runs from k->next on: 0 or a negative errno. */
static int mem_fetch(struct mem_cursor *k)
{
	int err;

	k->n = k->i = 0;
	if (k->next >= k->end)
		return clf_fail(EINVAL, "clf: memory runs end before the data");
	err = CLF_Mapping_foreach(k->map, k->next, k->end, mem_fetch_run, k);
	if (err < 0)
		return err;
	if (!k->n)
		return clf_fail(EINVAL, "clf: memory runs end before the data");
	k->next = k->r[k->n - 1].lin + k->r[k->n - 1].len;
	return 0;
}

/* One subfile run, copied between the user buffer and packed data. */
struct copy {
	int64_t base;		/* view offset at memory linear offset 0 */
	int64_t done;		/* packed bytes so far */
	const struct clf_memlayout *mem;
	struct mem_cursor *mc;	/* when mem->map */
	uint8_t *user;
	uint8_t *packed;
	int to_packed;		/* gather (1) or scatter (0) */
};

static void copy_bytes(struct copy *c, int64_t mem_off, int64_t packed_off,
		       int64_t len)
{
	if (c->to_packed)
		memcpy(c->packed + packed_off, c->user + mem_off, len);
	else
		memcpy(c->user + mem_off, c->packed + packed_off, len);
}

/* Memory linear [mlin, mlin + len) through the memory runs. */
static int copy_strided(struct copy *c, int64_t mlin, int64_t len)
{
	struct mem_cursor *k = c->mc;
	int64_t packed = c->done;

	while (len > 0) {
		const struct mem_run *r;
		int64_t take;
		int err;

		while (k->i < k->n &&
		       k->r[k->i].lin + k->r[k->i].len <= mlin)
			k->i++;
		if (k->i == k->n) {
			if (k->next <= mlin)
				k->next = mlin;
			err = mem_fetch(k);
			if (err)
				return err;
			continue;
		}
		r = &k->r[k->i];
		if (r->lin > mlin)
			return clf_fail(EINVAL, "clf: memory type misses byte %lld",
					(long long)mlin);
		take = min64(len, r->lin + r->len - mlin);
		copy_bytes(c, r->addr + (mlin - r->lin), packed, take);
		mlin += take;
		packed += take;
		len -= take;
	}
	return 0;
}

static int copy_run(int64_t voff, int64_t soff, int64_t len, void *arg)
{
	struct copy *c = arg;
	int64_t mlin = voff - c->base;
	int err = 0;

	if (!c->mem->map)
		copy_bytes(c, mlin, c->done, len);
	else
		err = copy_strided(c, mlin, len);
	c->done += len;
	return err;
}

/*
 * Fault hook, off by default: with CLF_TEST_CLIENT_FAIL_COPY=1 in the
 * environment every gather and scatter fails with -ENOMEM, as one that
 * cannot allocate a mapping's walk would; tests check that no unfilled
 * buffer then reaches an iod as data.
 */
bool clf_viewmap_copy_fault(void)
{
	const char *v = getenv("CLF_TEST_CLIENT_FAIL_COPY");

	return v && strcmp(v, "1") == 0;
}

/* A contiguous user buffer: progressions by view, compiled copy loops. */
struct prog_copy {
	uint8_t *user, *packed;
	int64_t base;		/* view offset of user[0] */
	int64_t done;
	bool to_packed;
};

static int copy_prog(const struct clf_prog *p, void *arg)
{
	struct prog_copy *c = arg;

	clf_prog_copy(p, c->packed, c->user, c->base, c->to_packed);
	c->done += p->n * p->len;
	return 0;
}

static int64_t view_copy(const struct clf_viewmap *view, int j, int64_t lo,
			 int64_t hi, int64_t base,
			 const struct clf_memlayout *mem, uint8_t *user,
			 uint8_t *packed, int to_packed)
{
	struct copy c = { base, 0, mem, NULL, user, packed, to_packed };
	struct mem_cursor *mc = NULL;
	int err;

	if (clf_viewmap_copy_fault())
		return clf_fail(ENOMEM, "clf: cannot %s view bytes (fault hook)",
				to_packed ? "gather" : "scatter");
	if (!mem->map && j < view->nmaps - 1) {
		struct prog_copy pc = { user, packed, base, 0, to_packed };

		if (!view->maps[j])
			return 0;
		err = clf_mapping_progs(view->maps[j], lo, hi, CLF_PROG_VIEW, 0,
					INT64_MAX, copy_prog, &pc);
		return err ? err : pc.done;
	}
	if (mem->map) {
		mc = malloc(sizeof(*mc));
		if (!mc)
			return clf_fail(ENOMEM, "clf: out of memory");
		mc->map = mem->map;
		mc->next = lo - base;
		mc->end = hi - base;
		mc->n = mc->i = 0;
		c.mc = mc;
	}
	err = clf_viewmap_foreach(view, j, lo, hi, copy_run, &c);
	free(mc);
	return err ? err : c.done;
}

int64_t clf_viewmap_gather(const struct clf_viewmap *view, int j, int64_t lo,
			   int64_t hi, int64_t base, const void *buf,
			   const struct clf_memlayout *mem, void *packed)
{
	return view_copy(view, j, lo, hi, base, mem, (uint8_t *)buf, packed,
			 1);
}

int64_t clf_viewmap_scatter(const struct clf_viewmap *view, int j,
			    int64_t lo, int64_t hi, int64_t base, void *buf,
			    const struct clf_memlayout *mem,
			    const void *packed)
{
	return view_copy(view, j, lo, hi, base, mem, buf, (uint8_t *)packed,
			 0);
}
