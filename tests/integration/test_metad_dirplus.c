// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_dirplus.c -- READDIRPLUS against the real metad: every
 * entry with the attributes GETATTR gives and the layout GET_LAYOUT
 * gives, paged by cookie over thousands of entries, stable under
 * concurrent creates and unlinks, bounded in bytes, and malformed
 * requests refused with the connection kept.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define NIODS 4

static struct mh H;

static void setup(void)
{
	mh_init(&H, NIODS, 5000);
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

/* One READDIRPLUS page on m; the reply borrows from m until its next
 * call (the caller releases it). */
static int readdirplus(struct mc *m, uint64_t dir, uint64_t cookie,
		       uint32_t max, uint32_t flags,
		       struct clf_proto_readdirplus_rep *out)
{
	struct clf_proto_readdirplus_req req = { dir, cookie, max, flags };
	struct wire_writer w = { m->buf, sizeof(m->buf), 0 };
	struct wire_reader r;
	int err = clf_proto_readdirplus_req_encode(&w, &req);

	if (!err)
		err = mc_call(m, CLF_PROTO_OP_READDIRPLUS, m->buf, w.pos, &r);
	if (!err)
		err = clf_proto_readdirplus_rep_decode(&r, out);
	return err;
}

struct maker {
	int first, n;		/* names f<first>..f<first + n - 1> */
	int err;
};

/* Entries made from several connections at once, so that group commit
 * shares the syncs: thousands of them in a few seconds. */
static void *make_entries(void *arg)
{
	struct maker *mk = arg;
	struct mc *m = mc_open(&H);
	char name[32];

	for (int i = mk->first; i < mk->first + mk->n && !mk->err; i++) {
		snprintf(name, sizeof(name), "d/f%05d", i);
		mk->err = i % 16 == 0 ?
			  mc_mkdir(m, ROOT, name, 0700 + i % 64, NULL) :
			  mc_create(m, ROOT, name, 0600 + i % 64, 0, NULL,
				    NULL);
	}
	mc_close(m);
	return NULL;
}

static void make_many(int n, int threads)
{
	pthread_t t[8];
	struct maker mk[8];

	for (int i = 0; i < threads; i++) {
		mk[i] = (struct maker){ i * (n / threads), n / threads, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, make_entries,
						&mk[i]), 0);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		ck_assert_msg(mk[i].err == 0, "making entries: %d",
			      mk[i].err);
	}
}

static void assert_same_layout(const struct clf_proto_layout *a,
			       const struct clf_proto_layout *b)
{
	ck_assert_uint_eq(a->kind, b->kind);
	ck_assert_int_eq(a->disp, b->disp);
	ck_assert_uint_eq(a->nsubfiles, b->nsubfiles);
	for (uint32_t j = 0; j < a->nsubfiles; j++) {
		ck_assert_uint_eq(a->subfiles[j].iod, b->subfiles[j].iod);
		ck_assert_uint_eq(a->subfiles[j].type.len,
				  b->subfiles[j].type.len);
		ck_assert(!memcmp(a->subfiles[j].type.ptr,
				  b->subfiles[j].type.ptr,
				  a->subfiles[j].type.len));
	}
}

START_TEST(test_readdirplus_gives_getattr_of_every_entry_across_pages)
{
	enum { N = 2000 };
	static const uint32_t pages[] = { CLF_PROTO_READDIR_MAX, 7 };
	struct mc *m = mc_open(&H), *g = mc_open(&H);
	uint64_t dir;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	dir = mc_ino(m, "d");
	make_many(N, 4);
	for (size_t p = 0; p < 2; p++) {
		static bool seen[N];
		uint64_t cookie = 0, last = 0;
		bool eof = false;
		int total = 0, reqs = 0;
		uint32_t flags = p ? CLF_PROTO_READDIRPLUS_LAYOUT : 0;

		memset(seen, 0, sizeof(seen));
		while (!eof) {
			struct clf_proto_readdirplus_rep rep;

			ck_assert_int_eq(readdirplus(m, dir, cookie, pages[p],
						     flags, &rep), 0);
			ck_assert_uint_le(rep.count, pages[p]);
			ck_assert(rep.count > 0 || rep.eof);
			reqs++;
			for (uint32_t i = 0; i < rep.count; i++) {
				const struct clf_proto_dirent_plus *e =
					&rep.ents[i];
				struct clf_proto_attr a;
				int k;

				ck_assert_int_eq(sscanf(e->name.ptr, "f%5d", &k),
						 1);
				ck_assert(k >= 0 && k < N && !seen[k]);
				seen[k] = true;
				ck_assert_uint_gt(e->cookie, last);
				last = cookie = e->cookie;
				ck_assert_int_eq(mc_getattr(g, e->attr.ino, &a),
						 0);
				ck_assert(!memcmp(&a, &e->attr, sizeof(a)));
				ck_assert(k % 16 == 0 ? S_ISDIR(a.mode) :
					  S_ISREG(a.mode));
				ck_assert_uint_eq(a.mode & 07777,
						  (k % 16 ? 0600u : 0700u) +
						  k % 64);
				ck_assert(e->has_layout ==
					  (flags && S_ISREG(a.mode)));
				if (e->has_layout) {
					struct clf_proto_layout l;

					ck_assert_int_eq(mc_get_layout(g,
						e->attr.ino, &l), 0);
					assert_same_layout(&l, &e->layout);
					clf_proto_layout_release(&l);
				}
				total++;
			}
			eof = rep.eof;
			clf_proto_readdirplus_rep_release(&rep);
		}
		ck_assert_int_eq(total, N);
		/* One round trip per page, not one per entry. */
		ck_assert_int_le(reqs, N / (int)pages[p] + 1);
	}
	mc_close(g);
	mc_close(m);
}
END_TEST

struct churn {
	uint64_t dir;
	atomic_bool stop, done;	/* shared with the churn thread */
	atomic_int made, err;
};

/*
 * New names come and old ones go while a listing pages through.  Bounded:
 * the new names sort after the kept ones, so a churn faster than the
 * listing (a loaded machine) would otherwise keep it going without end.
 */
enum { CHURN_MAX = 3000 };

/* Room for every name the listing can meet, as "/name/". */
#define SEEN_MAX ((size_t)(400 + CHURN_MAX) * 24)

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	struct mc *m = mc_open(&H);
	char name[32];

	for (int i = 0; !c->stop && !c->err && i < CHURN_MAX; i++) {
		snprintf(name, sizeof(name), "d/new%05d", i);
		c->err = mc_create(m, ROOT, name, 0644, 0, NULL, NULL);
		if (!c->err && i % 2 == 0) {
			snprintf(name, sizeof(name), "d/gone%05d", i / 2);
			c->err = mc_unlink(m, ROOT, name);
			if (c->err == -ENOENT)
				c->err = 0;
		}
		c->made++;
	}
	c->done = true;
	mc_close(m);
	return NULL;
}

START_TEST(test_readdirplus_under_creates_and_unlinks_lists_each_once)
{
	enum { KEEP = 200, GONE = 200 };
	struct mc *m = mc_open(&H);
	struct churn c = { 0 };
	static bool keep_seen[KEEP];
	char name[32], *seen_names = calloc(SEEN_MAX, 1);
	size_t at = 0;
	uint64_t cookie = 0;
	pthread_t t;
	bool eof = false;

	ck_assert_ptr_nonnull(seen_names);
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	c.dir = mc_ino(m, "d");
	for (int i = 0; i < KEEP + GONE; i++) {
		snprintf(name, sizeof(name), i < KEEP ? "d/keep%05d" :
			 "d/gone%05d", i < KEEP ? i : i - KEEP);
		ck_assert_int_eq(mc_create(m, ROOT, name, 0644, 0, NULL, NULL),
				 0);
	}
	ck_assert_int_eq(pthread_create(&t, NULL, churn_main, &c), 0);
	while (!eof) {
		struct clf_proto_readdirplus_rep rep;

		ck_assert_int_eq(readdirplus(m, c.dir, cookie, 9,
					     CLF_PROTO_READDIRPLUS_LAYOUT,
					     &rep), 0);
		for (uint32_t i = 0; i < rep.count; i++) {
			const struct clf_proto_dirent_plus *e = &rep.ents[i];
			char one[CLF_PROTO_NAME_MAX + 3];
			int k;

			snprintf(one, sizeof(one), "/%.*s/", (int)e->name.len,
				 e->name.ptr);
			ck_assert_msg(!strstr(seen_names, one),
				      "%s listed twice", one);
			ck_assert(at + strlen(one) < SEEN_MAX);
			strcpy(seen_names + at, one);
			at += strlen(one) - 1;
			if (sscanf(e->name.ptr, "keep%5d", &k) == 1) {
				ck_assert(k >= 0 && k < KEEP);
				keep_seen[k] = true;
			}
			ck_assert(S_ISREG(e->attr.mode));
			cookie = e->cookie;
		}
		eof = rep.eof;
		clf_proto_readdirplus_rep_release(&rep);
		/* Some change between every two pages. */
		for (int made = c.made, ms = 0; c.made == made && !c.err &&
		     !c.done && ms < 5000; ms += 5)
			usleep(5000);
	}
	c.stop = true;
	pthread_join(t, NULL);
	ck_assert_int_eq(c.err, 0);
	ck_assert_int_gt(c.made, 0);
	for (int k = 0; k < KEEP; k++)
		ck_assert_msg(keep_seen[k], "keep%05d was not listed", k);
	free(seen_names);
	mc_close(m);
}
END_TEST

START_TEST(test_readdirplus_pages_stay_within_their_byte_bound)
{
	enum { N = 24 };
	struct clf_proto_layout wide = {
		.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
		.stripe_size = 4096,
		.stripe_count = CLF_PROTO_MAX_SUBFILES,
		.first_iod = CLF_PROTO_IOD_DEFAULT,
	};
	struct mc *m = mc_open(&H);
	uint64_t dir, cookie = 0;
	int total = 0, pages = 0;
	bool eof = false;
	char name[32];

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	dir = mc_ino(m, "d");
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "d/w%02d", i);
		ck_assert_int_eq(mc_create(m, ROOT, name, 0644, 0, &wide,
					   NULL), 0);
	}
	while (!eof) {
		struct clf_proto_readdirplus_rep rep;
		size_t bytes = 0;

		ck_assert_int_eq(readdirplus(m, dir, cookie,
					     CLF_PROTO_READDIR_MAX,
					     CLF_PROTO_READDIRPLUS_LAYOUT,
					     &rep), 0);
		ck_assert_uint_ge(rep.count, 1);
		for (uint32_t i = 0; i < rep.count; i++) {
			const struct clf_proto_layout *l = &rep.ents[i].layout;

			ck_assert(rep.ents[i].has_layout);
			ck_assert_uint_eq(l->nsubfiles, CLF_PROTO_MAX_SUBFILES);
			for (uint32_t j = 0; j < l->nsubfiles; j++)
				bytes += 8 + l->subfiles[j].type.len;
			cookie = rep.ents[i].cookie;
		}
		ck_assert_uint_le(bytes, CLF_PROTO_READDIRPLUS_BYTES);
		total += (int)rep.count;
		pages++;
		eof = rep.eof;
		clf_proto_readdirplus_rep_release(&rep);
	}
	ck_assert_int_eq(total, N);
	ck_assert_int_gt(pages, 1);
	mc_close(m);
}
END_TEST

/* A READDIRPLUS body of len bytes as given: the reply's status. */
static int raw_readdirplus(struct mc *m, const uint8_t *body, size_t len)
{
	struct wire_reader r;

	return mc_call(m, CLF_PROTO_OP_READDIRPLUS, body, len, &r);
}

START_TEST(test_readdirplus_refuses_malformed_requests)
{
	struct mc *m = mc_open(&H);
	uint8_t body[32] = { 0 };
	struct wire_writer w = { body, sizeof(body), 0 };
	struct clf_proto_readdirplus_rep rep;

	/* dir 1, cookie 0, max, flags */
	wire_put_u64(&w, ROOT);
	wire_put_u64(&w, 0);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, 0);
	ck_assert_int_eq(raw_readdirplus(m, body, 24), -EPROTO);
	body[16] = 0x01;
	body[17] = 0x10;	/* 4097 entries */
	ck_assert_int_eq(raw_readdirplus(m, body, 24), -E2BIG);
	body[17] = 0;
	body[20] = 0x80;	/* an unknown flag */
	ck_assert_int_eq(raw_readdirplus(m, body, 24), -EPROTO);
	body[20] = 0;
	ck_assert_int_eq(raw_readdirplus(m, body, 23), -EPROTO);
	ck_assert_int_eq(raw_readdirplus(m, body, 25), -EPROTO);
	/* Not a directory; no such inode. */
	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(readdirplus(m, mc_ino(m, "f"), 0, 4, 0, &rep),
			 -ENOTDIR);
	ck_assert_int_eq(readdirplus(m, 987654, 0, 4, 0, &rep), -ENOENT);
	/* The connection goes on. */
	ck_assert_int_eq(readdirplus(m, ROOT, 0, 4, 0, &rep), 0);
	ck_assert_uint_eq(rep.count, 1);
	ck_assert(rep.eof);
	clf_proto_readdirplus_rep_release(&rep);
	ck_assert(mh_log_has(&H, "malformed READDIRPLUS"));
	mc_close(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_dirplus");
	TCase *tc = tcase_create("readdirplus");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc,
		test_readdirplus_gives_getattr_of_every_entry_across_pages);
	tcase_add_test(tc,
		test_readdirplus_under_creates_and_unlinks_lists_each_once);
	tcase_add_test(tc, test_readdirplus_pages_stay_within_their_byte_bound);
	tcase_add_test(tc, test_readdirplus_refuses_malformed_requests);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
