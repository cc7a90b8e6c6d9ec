// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_iods.c -- the real metad with real iods: truncation and
 * removal reach the subfiles, statfs sums the iods, and an iod that goes
 * away and comes back is handled.  Skipped (77) while the iod program is
 * not built.
 *
 * Subfiles are checked where the iods keep them, as files on disk
 * (iod/iod_store.h: <dir>/<low byte of the file id, hex>/<16 hex digits
 * of the file id>.<subfile index>), so that what metad asked for is
 * checked independently of the iod's own answers.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define NIODS 4
#define STRIPE (64 * 1024)

static struct mh H;

static void setup(void)
{
	mh_init(&H, NIODS, 3000);
	for (int i = 0; i < NIODS; i++)
		mh_start_iod(&H, i);
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

/* The length of subfile sub of file ino on iod, -1 when absent. */
static int64_t disk_len(int iod, uint64_t ino, uint32_t sub)
{
	char path[MH_LONG + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%02x/%016" PRIx64 ".%" PRIu32,
		 H.iod_dir[iod], (unsigned)(ino & 0xff), ino, sub);
	return stat(path, &st) ? -1 : (int64_t)st.st_size;
}

/* A subfile has length len: absent counts as length 0. */
static void assert_len(int iod, uint64_t ino, uint32_t sub, int64_t len)
{
	int64_t got = disk_len(iod, ino, sub);

	ck_assert_msg(got == len || (len == 0 && got == -1),
		      "subfile %u of ino %llu on iod %d: length %lld, want %lld",
		      sub, (unsigned long long)ino, iod, (long long)got,
		      (long long)len);
}

/* Round robin over NIODS by STRIPE: subfile j's share of size bytes. */
static int64_t rr_len(int64_t size, int j)
{
	int64_t period = (int64_t)STRIPE * NIODS, rem = size % period;
	int64_t part = rem - (int64_t)j * STRIPE;

	part = part < 0 ? 0 : part > STRIPE ? STRIPE : part;
	return size / period * STRIPE + part;
}

/* Wait (bounded) until subfile sub of ino is gone from iod. */
static bool gone_within(int iod, uint64_t ino, uint32_t sub, int ms)
{
	for (int t = 0; t < ms; t += 50) {
		if (disk_len(iod, ino, sub) == -1)
			return true;
		usleep(50 * 1000);
	}
	return disk_len(iod, ino, sub) == -1;
}

static int set_size(struct mc *m, uint64_t ino, int64_t size)
{
	struct clf_proto_setattr_req req = {
		.ino = ino,
		.mask = CLF_PROTO_SETATTR_SIZE,
		.size = size,
	};

	return mc_setattr(m, &req, NULL);
}

START_TEST(test_truncate_sets_each_subfile_to_its_share)
{
	static const int64_t sizes[] = { 300000, 70000, 1, 0,
					 3 * STRIPE * NIODS + 5 };
	struct mc *m = mc_open(&H);
	struct clf_proto_attr a;
	uint64_t ino;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
		ck_assert_msg(set_size(m, ino, sizes[k]) == 0, "%s",
			      CLF_Last_error());
		ck_assert_int_eq(mc_getattr(m, ino, &a), 0);
		ck_assert_int_eq(a.size, sizes[k]);
		for (int j = 0; j < NIODS; j++)
			assert_len(j, ino, (uint32_t)j, rr_len(sizes[k], j));
	}
	mc_close(m);
}
END_TEST

/* Bytes of [disp, size) that t selects, one byte at a time. */
static int64_t ref_len(CLF_Datatype t, int64_t disp, int64_t size)
{
	int64_t n = 0, lin;

	for (int64_t f = disp; f < size; f++)
		n += CLF_Type_map(t, disp, f, &lin) == 0;
	return n;
}

START_TEST(test_truncate_with_a_displacement_cuts_the_head_too)
{
	static const int64_t sizes[] = { 500, 1100, 1000, 4321, 0 };
	struct clf_proto_subfile subs[2];
	struct clf_proto_layout l = {
		.kind = CLF_PROTO_LAYOUT_EXPLICIT,
		.disp = 1000,
		.disp_iod = 3,
		.nsubfiles = 2,
		.subfiles = subs,
	};
	CLF_Datatype t[2];
	uint8_t enc[2][256];
	struct mc *m = mc_open(&H);
	uint64_t ino;

	/* Blocks of 8 alternating; subfile 1 on iod 2, 0 on iod 1. */
	ck_assert_int_eq(CLF_Type_pitfalls(0, 7, 16, 1, 8, 2, CLF_BYTE, t), 0);
	for (int j = 0; j < 2; j++) {
		int64_t n = CLF_Type_encode(t[j], enc[j], sizeof(enc[j]));

		subs[j] = (struct clf_proto_subfile){ (uint32_t)j + 1,
						      { enc[j], (uint32_t)n } };
	}
	ck_assert_int_eq(mc_create(m, ROOT, "x", 0644, 0, &l, NULL), 0);
	ino = mc_ino(m, "x");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
		int64_t s = sizes[k];

		ck_assert_msg(set_size(m, ino, s) == 0, "%s",
			      CLF_Last_error());
		assert_len(3, ino, CLF_PROTO_SUBFILE_HEAD, s < 1000 ? s : 1000);
		assert_len(1, ino, 0, ref_len(t[0], 1000, s));
		assert_len(2, ino, 1, ref_len(t[1], 1000, s));
	}
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
	mc_close(m);
}
END_TEST

START_TEST(test_unlink_and_rename_over_remove_the_subfiles)
{
	struct mc *m = mc_open(&H);
	uint64_t a, b;

	ck_assert_int_eq(mc_create(m, ROOT, "a", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "b", 0644, 0, NULL, NULL), 0);
	a = mc_ino(m, "a");
	b = mc_ino(m, "b");
	ck_assert_int_eq(set_size(m, a, 300000), 0);
	ck_assert_int_eq(set_size(m, b, 300000), 0);
	for (int j = 0; j < NIODS; j++) {
		ck_assert_int_eq(disk_len(j, a, (uint32_t)j), rr_len(300000, j));
		ck_assert_int_eq(disk_len(j, b, (uint32_t)j), rr_len(300000, j));
	}
	/* The reply does not wait for the iods; the removal follows. */
	ck_assert_int_eq(mc_unlink(m, ROOT, "a"), 0);
	for (int j = 0; j < NIODS; j++)
		ck_assert(gone_within(j, a, (uint32_t)j, MH_WAIT_MS));
	/* b, replaced by c, goes the same way; c keeps its data. */
	ck_assert_int_eq(mc_create(m, ROOT, "c", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(set_size(m, mc_ino(m, "c"), 5), 0);
	ck_assert_int_eq(mc_rename(m, ROOT, "c", ROOT, "b", 0), 0);
	for (int j = 0; j < NIODS; j++)
		ck_assert(gone_within(j, b, (uint32_t)j, MH_WAIT_MS));
	ck_assert_int_eq(disk_len(0, mc_ino(m, "b"), 0), 5);
	mc_close(m);
}
END_TEST

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * An unlink is acknowledged once it and the removal of its subfiles are
 * durable in metad's store, without a round trip to the iods: an iod
 * that stalls (stopped, not dead: no connection refused to give up on)
 * costs the unlink nothing, and its subfile goes once it resumes.
 */
START_TEST(test_unlink_does_not_wait_for_a_stalled_iod)
{
	struct mc *m = mc_open(&H);
	int64_t t0, took;
	uint64_t ino;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	ck_assert_int_eq(set_size(m, ino, 300000), 0);	/* connects */
	ck_assert_int_eq(kill(H.iods[1], SIGSTOP), 0);
	t0 = now_ms();
	ck_assert_int_eq(mc_unlink(m, ROOT, "f"), 0);
	took = now_ms() - t0;
	ck_assert_int_eq(kill(H.iods[1], SIGCONT), 0);
	/* Waiting for the iod would take the whole call timeout (3 s). */
	ck_assert_msg(took < H.timeout_ms / 2,
		      "unlink took %lld ms with an iod stalled",
		      (long long)took);
	ck_assert_int_eq(mc_lookup(m, ROOT, "f", 0, NULL), -ENOENT);
	for (int j = 0; j < NIODS; j++)
		ck_assert_msg(gone_within(j, ino, (uint32_t)j, MH_WAIT_MS),
			      "subfile %d of the unlinked file stays", j);
	mc_close(m);
}
END_TEST

START_TEST(test_statfs_sums_the_iods)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_statfs st;
	uint64_t total = 0;

	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		ck_assert_int_eq(mc_create(m, ROOT, name, 0644, 0, NULL, NULL),
				 0);
	}
	for (int i = 0; i < NIODS; i++) {
		struct statvfs v;

		ck_assert_int_eq(statvfs(H.iod_dir[i], &v), 0);
		total += (uint64_t)v.f_blocks * v.f_frsize;
	}
	ck_assert_msg(mc_statfs(m, &st) == 0, "%s", CLF_Last_error());
	ck_assert_uint_eq(st.bytes_total, total);
	ck_assert_uint_le(st.bytes_free, st.bytes_total);
	ck_assert_uint_le(st.bytes_avail, st.bytes_free);
	ck_assert_uint_eq(st.files, 4);	/* the root and three files */
	ck_assert_uint_gt(st.files_free, 0);
	ck_assert_uint_gt(st.block_size, 0);
	ck_assert_uint_eq(st.name_max, CLF_PROTO_NAME_MAX);
	mc_close(m);
}
END_TEST

START_TEST(test_an_iod_that_comes_back_is_used_again)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_attr a;
	char want[64];
	uint64_t ino;
	int err = -1;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	ck_assert_int_eq(set_size(m, ino, 1000), 0);	/* connects */
	mh_stop_iod(&H, 1, SIGKILL);
	snprintf(want, sizeof(want), "on iod 1 (127.0.0.1:%d)", H.port + 2);
	err = set_size(m, ino, 300000);
	ck_assert_msg(err == -EHOSTDOWN && strstr(CLF_Last_error(), want),
		      "got %d: %s", err, CLF_Last_error());
	ck_assert_int_eq(mc_getattr(m, ino, &a), 0);
	ck_assert_int_eq(a.size, 1000);
	ck_assert_int_eq(mc_statfs(m, &(struct clf_proto_statfs){ 0 }),
			 -EHOSTDOWN);
	mh_start_iod(&H, 1);
	/* After at most the reconnect pause, the iod is used again. */
	for (int i = 0; i < 100 && err; i++) {
		err = set_size(m, ino, 300000);
		if (err)
			usleep(50 * 1000);
	}
	ck_assert_msg(err == 0, "%s", CLF_Last_error());
	for (int j = 0; j < NIODS; j++)
		assert_len(j, ino, (uint32_t)j, rr_len(300000, j));
	mc_close(m);
	ck_assert(mh_log_has(&H, "cannot connect to iod 1"));
}
END_TEST

/* How many times metad's log says s. */
static int log_count(const char *s)
{
	char line[4096];
	FILE *f = fopen(H.log, "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, s) != NULL;
	fclose(f);
	return n;
}

START_TEST(test_unlink_with_an_iod_down_removes_its_subfile_when_it_returns)
{
	struct mc *m = mc_open(&H);
	uint64_t ino, old;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "g", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "h", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	old = mc_ino(m, "g");
	ck_assert_int_eq(set_size(m, ino, 300000), 0);
	ck_assert_int_eq(set_size(m, old, 300000), 0);
	mh_stop_iod(&H, 2, SIGKILL);
	ck_assert_int_eq(mc_unlink(m, ROOT, "f"), 0);
	ck_assert_int_eq(mc_rename(m, ROOT, "h", ROOT, "g", 0), 0);
	ck_assert_int_eq(mc_lookup(m, ROOT, "f", 0, NULL), -ENOENT);
	for (int j = 0; j < NIODS; j++) {
		if (j == 2)
			continue;
		ck_assert(gone_within(j, ino, (uint32_t)j, MH_WAIT_MS));
		ck_assert(gone_within(j, old, (uint32_t)j, MH_WAIT_MS));
	}
	ck_assert_int_eq(disk_len(2, ino, 2), rr_len(300000, 2));
	ck_assert_int_eq(disk_len(2, old, 2), rr_len(300000, 2));
	usleep(1500 * 1000);	/* a retry or two while it is down */
	mh_start_iod(&H, 2);
	ck_assert_msg(gone_within(2, ino, 2, MH_WAIT_MS),
		      "the subfile of the unlinked file stays on iod 2");
	ck_assert_msg(gone_within(2, old, 2, MH_WAIT_MS),
		      "the subfile of the replaced file stays on iod 2");
	/* Two removals and their retries failed on iod 2: one line. */
	ck_assert_int_eq(log_count("cannot remove subfiles on iod 2"), 1);
	ck_assert_int_eq(log_count("removes subfiles again"), 1);
	mc_close(m);
}
END_TEST

START_TEST(test_removals_cut_short_by_a_metad_crash_finish_at_restart)
{
	struct mc *m;
	uint64_t ino;
	int status;

	mh_stop(&H);
	H.env[0] = "CLF_TEST_METAD_CRASH_AFTER_UNLINKS=1";
	mh_start(&H);
	m = mc_open(&H);
	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	ck_assert_int_eq(set_size(m, ino, 300000), 0);
	/* Committed, then metad dies before it removes anything. */
	ck_assert_int_ne(mc_unlink(m, ROOT, "f"), 0);
	mc_close(m);
	status = mh_wait_exit(&H);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	for (int j = 0; j < NIODS; j++)
		ck_assert_int_eq(disk_len(j, ino, (uint32_t)j),
				 rr_len(300000, j));

	H.env[0] = NULL;
	mh_start(&H);
	for (int j = 0; j < NIODS; j++)
		ck_assert_msg(gone_within(j, ino, (uint32_t)j, MH_WAIT_MS),
			      "subfile %d of the unlinked file stays", j);
	ck_assert(mh_log_has(&H, "subfile removals pending from before"));
	m = mc_open(&H);
	ck_assert_int_eq(mc_lookup(m, ROOT, "f", 0, NULL), -ENOENT);
	mc_close(m);
}
END_TEST

START_TEST(test_new_layout_drops_unreported_bytes_of_the_old_one)
{
	struct clf_proto_sub_write_req wr = { .subfile = 0, .offset = 0,
					      .data = { (const uint8_t *)"xyz",
							3 } };
	struct clf_proto_layout rr = {
		.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
		.stripe_count = 2,
		.first_iod = 2,
	};
	struct mc *m = mc_open(&H), *iod;
	struct wire_writer w;
	struct wire_reader r;
	char addr[64];
	uint64_t ino;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	/* A client wrote to subfile 0 on iod 0 and has not reported it. */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", H.port + 1);
	ck_assert_int_eq(mc_open_with(addr, &H.secret, MH_WAIT_MS, &iod), 0);
	wr.file = ino;
	w = (struct wire_writer){ iod->buf, sizeof(iod->buf), 0 };
	ck_assert_int_eq(clf_proto_sub_write_req_encode(&w, &wr), 0);
	ck_assert_int_eq(mc_call(iod, CLF_PROTO_OP_SUB_WRITE, iod->buf, w.pos,
				 &r), 0);
	mc_close(iod);
	ck_assert_int_eq(disk_len(0, ino, 0), 3);
	ck_assert_int_eq(mc_set_layout(m, ino, &rr, NULL), 0);
	ck_assert_int_eq(disk_len(0, ino, 0), -1);
	mc_close(m);
}
END_TEST

/* Requests iod i has served since it started (its STATUS). */
static uint64_t iod_requests(int i)
{
	struct clf_proto_status st;
	struct mc *iod;
	char addr[64];

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", H.port + 1 + i);
	ck_assert_int_eq(mc_open_with(addr, &H.secret, MH_WAIT_MS, &iod), 0);
	ck_assert_int_eq(mc_status(iod, &st), 0);
	mc_close(iod);
	return st.requests;
}

/* Subfiles in iod i's store (<dir>/<fan>/<file id>.<index>). */
static int disk_files(int i)
{
	char cmd[MH_LONG + 64];
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "find '%s' -mindepth 2 -type f -name '*.*' | wc -l",
		 H.iod_dir[i]);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &n), 1);
	pclose(f);
	return n;
}

START_TEST(test_many_unlinks_drain_to_each_iod_in_batches)
{
	enum { N = 120 };
	struct mc *m = mc_open(&H);
	char name[32];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		ck_assert_int_eq(mc_create(m, ROOT, name, 0644, 0, NULL, NULL),
				 0);
		ck_assert_int_eq(set_size(m, mc_ino(m, name), 300000), 0);
	}
	for (int j = 0; j < NIODS; j++)
		ck_assert_int_eq(disk_files(j), N);
	/* With the iods down the removals pile up in the queue ... */
	for (int j = 0; j < NIODS; j++)
		mh_stop_iod(&H, j, SIGKILL);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		ck_assert_int_eq(mc_unlink(m, ROOT, name), 0);
	}
	for (int j = 0; j < NIODS; j++)
		mh_start_iod(&H, j);
	for (int j = 0; j < NIODS; j++) {
		for (int t = 0; t < MH_WAIT_MS && disk_files(j); t += 50)
			usleep(50 * 1000);
		ck_assert_msg(disk_files(j) == 0,
			      "iod %d keeps %d subfiles of unlinked files", j,
			      disk_files(j));
	}
	/* ... and drain in batches: one REMOVE per file would be N
	 * requests to each iod since it started (the STATUS asked now
	 * counts too). */
	for (int j = 0; j < NIODS; j++) {
		uint64_t served = iod_requests(j);

		ck_assert_msg(served < N / 4,
			      "iod %d served %llu requests for %d removals", j,
			      (unsigned long long)served, N);
	}
	mc_close(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_iods");
	TCase *tc = tcase_create("iods");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_truncate_sets_each_subfile_to_its_share);
	tcase_add_test(tc, test_truncate_with_a_displacement_cuts_the_head_too);
	tcase_add_test(tc, test_unlink_and_rename_over_remove_the_subfiles);
	tcase_add_test(tc, test_unlink_does_not_wait_for_a_stalled_iod);
	tcase_add_test(tc, test_statfs_sums_the_iods);
	tcase_add_test(tc, test_an_iod_that_comes_back_is_used_again);
	tcase_add_test(tc,
		test_unlink_with_an_iod_down_removes_its_subfile_when_it_returns);
	tcase_add_test(tc,
		test_removals_cut_short_by_a_metad_crash_finish_at_restart);
	tcase_add_test(tc,
		       test_new_layout_drops_unreported_bytes_of_the_old_one);
	tcase_add_test(tc, test_many_unlinks_drain_to_each_iod_in_batches);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (!mh_have_iod()) {
		printf("skipped: %s is not built\n", mh_iod_bin());
		return 77;
	}
	return mh_main(suite());
}
