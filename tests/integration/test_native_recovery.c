// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native_recovery.c -- a client under load waits through a kill -9
 * and restart of metad or of an iod (clf.h, "Recovery"): every
 * operation succeeds and every byte reads back right; a daemon that stays
 * down longer than recovery_grace_s fails the operation after that time
 * with an error that names it, never a hang.
 *
 * Every test starts its own metad and iods (instance.h).  The load is a
 * thread doing creates, writes and reads through the default view and a
 * strided one (whose registrations at the iods die with an iod), mkdir
 * and rename, while the test kills and restarts a daemon under it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clf.h"
#include "clock.h"
#include "instance.h"

#define FILE_BYTES (320 << 10)	/* over the small-access path's limit */
#define ROUNDS_AFTER 4		/* load rounds after the restart */

static struct instance inst;

static uint8_t pattern(int64_t f, int salt)
{
	return (uint8_t)((f * 131 + (f >> 8) * 7 + salt) & 0xff);
}

static void start(int niods, int grace_s)
{
	ck_assert_int_eq(instance_start_native(&inst, niods, 3000, grace_s), 0);
}

static void stop(void)
{
	instance_stop_native(&inst);
}

/* ---- the load ---- */

struct load {
	pthread_t thread;
	atomic_int rounds;	/* done */
	atomic_bool restarted;	/* the daemon is back: finish soon */
	int after;		/* rounds done when it came back */
	int64_t worst_ms;	/* the longest round */
	char failure[1024];	/* the first failure; "" if none */
};

#define FAIL(l, ...)                                                     \
	do {                                                             \
		snprintf((l)->failure, sizeof((l)->failure), __VA_ARGS__); \
		goto out;                                                \
	} while (0)

/* Every other 4 KiB of the file: a view with holes, registered at the
 * iods, which lose it when they restart. */
static int strided_view(int fd)
{
	struct clf_view v = { 0, CLF_Type_vector(0, 4095, 8192, 1, CLF_BYTE) };
	int err;

	if (!v.type)
		return -ENOMEM;
	err = CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v);
	CLF_Type_free(&v.type);
	return err;
}

/* One round r: create, write, read back (two views), mkdir, rename. */
static int round_once(struct load *l, int r, uint8_t *buf, uint8_t *back)
{
	char name[64], dir[64], to[96];
	struct stat st;
	int fd = -1;

	snprintf(name, sizeof(name), "/f%d", r);
	snprintf(dir, sizeof(dir), "/d%d", r);
	snprintf(to, sizeof(to), "%s/g", dir);
	for (int64_t i = 0; i < FILE_BYTES; i++)
		buf[i] = pattern(i, r);
	fd = CLF_open(name, O_CREAT | O_RDWR, 0644);
	if (fd < 0)
		FAIL(l, "round %d: open %s: %s", r, name, CLF_Last_error());
	if (CLF_write(fd, buf, FILE_BYTES) != FILE_BYTES)
		FAIL(l, "round %d: write: %s", r, CLF_Last_error());
	if (CLF_lseek(fd, 0, SEEK_SET) != 0 ||
	    CLF_read(fd, back, FILE_BYTES) != FILE_BYTES)
		FAIL(l, "round %d: read: %s", r, CLF_Last_error());
	if (memcmp(buf, back, FILE_BYTES))
		FAIL(l, "round %d: read back other bytes", r);
	/* The strided view: rewrite its bytes with salt r + 1. */
	if (strided_view(fd))
		FAIL(l, "round %d: view: %s", r, CLF_Last_error());
	for (int64_t i = 0; i < FILE_BYTES / 2; i++)
		buf[(i / 4096) * 8192 + i % 4096] = pattern(i, r + 1);
	if (CLF_lseek(fd, 0, SEEK_SET) != 0)
		FAIL(l, "round %d: seek: %s", r, CLF_Last_error());
	{
		uint8_t *half = malloc(FILE_BYTES / 2);

		for (int64_t i = 0; i < FILE_BYTES / 2; i++)
			half[i] = pattern(i, r + 1);
		if (CLF_write(fd, half, FILE_BYTES / 2) != FILE_BYTES / 2) {
			free(half);
			FAIL(l, "round %d: view write: %s", r, CLF_Last_error());
		}
		if (CLF_lseek(fd, 0, SEEK_SET) != 0 ||
		    CLF_read(fd, back, FILE_BYTES / 2) != FILE_BYTES / 2 ||
		    memcmp(half, back, FILE_BYTES / 2)) {
			free(half);
			FAIL(l, "round %d: view read: %s", r, CLF_Last_error());
		}
		free(half);
	}
	if (CLF_close(fd))
		FAIL(l, "round %d: close: %s", r, CLF_Last_error());
	fd = -1;
	/* Both views' bytes, from a fresh descriptor. */
	fd = CLF_open(name, O_RDONLY);
	if (fd < 0 || CLF_read(fd, back, FILE_BYTES) != FILE_BYTES)
		FAIL(l, "round %d: reopen and read: %s", r, CLF_Last_error());
	if (memcmp(buf, back, FILE_BYTES))
		FAIL(l, "round %d: the file holds other bytes", r);
	CLF_close(fd);
	fd = -1;
	if (CLF_mkdir(dir, 0755))
		FAIL(l, "round %d: mkdir %s: %s", r, dir, CLF_Last_error());
	if (CLF_rename(name, to))
		FAIL(l, "round %d: rename: %s", r, CLF_Last_error());
	if (CLF_stat(to, &st) || st.st_size != FILE_BYTES)
		FAIL(l, "round %d: stat %s: %s", r, to, CLF_Last_error());
	return 0;
out:
	if (fd >= 0)
		CLF_close(fd);
	return -1;
}

/* Rounds of every load of a test have names of their own. */
static int next_round;

static void *load_main(void *arg)
{
	struct load *l = arg;
	uint8_t *buf = malloc(FILE_BYTES), *back = malloc(FILE_BYTES);

	for (int r = 0;; r++) {
		int64_t t0 = clf_now_ms(), took;

		if (round_once(l, next_round++, buf, back))
			break;
		took = clf_now_ms() - t0;
		if (took > l->worst_ms)
			l->worst_ms = took;
		atomic_store(&l->rounds, r + 1);
		if (atomic_load(&l->restarted) && r + 1 >= l->after + ROUNDS_AFTER)
			break;
	}
	free(buf);
	free(back);
	return NULL;
}

/* Kill -9 daemon idx (-1: metad) under the load, restart it after
 * down_ms, and check the load went through. */
static void restart_under_load(int idx, int down_ms)
{
	struct load *l = calloc(1, sizeof(*l));
	const char *who = idx < 0 ? "metad" : "an iod";

	ck_assert_int_eq(pthread_create(&l->thread, NULL, load_main, l), 0);
	while (atomic_load(&l->rounds) < 2 && !l->failure[0])
		usleep(10 * 1000);
	usleep(30 * 1000);	/* into a round */
	instance_kill(&inst, idx, SIGKILL);
	usleep(down_ms * 1000);
	ck_assert_int_eq(instance_start_daemon(&inst, idx), 0);
	l->after = atomic_load(&l->rounds);
	atomic_store(&l->restarted, true);
	pthread_join(l->thread, NULL);
	ck_assert_msg(!l->failure[0], "%s restarted under load: %s", who,
		      l->failure);
	ck_assert_int_ge(atomic_load(&l->rounds), l->after + ROUNDS_AFTER);
	fprintf(stderr, "%s down %d ms: %d rounds, the longest %lld ms\n",
		who, down_ms, atomic_load(&l->rounds), (long long)l->worst_ms);
	free(l);
}

START_TEST(test_load_goes_on_through_an_iod_restart)
{
	start(3, -1);		/* the default grace, 30 s */
	restart_under_load(1, 500);
	stop();
}
END_TEST

START_TEST(test_load_goes_on_through_a_metad_restart)
{
	start(3, -1);
	restart_under_load(-1, 500);
	stop();
}
END_TEST

/* Each iod in turn, quickly: views registered anew at each. */
START_TEST(test_load_goes_on_through_restarts_of_every_iod)
{
	start(3, -1);
	for (int i = 0; i < 3; i++)
		restart_under_load(i, 100);
	stop();
}
END_TEST

/* ---- locks ---- */

/* metad keeps locks in memory: a restart loses them, and the holder is
 * told at its next lock call rather than given them back unawares. */
START_TEST(test_locks_lost_with_metad_fail_the_holders_next_lock_call)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd;

	start(2, -1);
	fd = CLF_open("/l", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl) == 0, "%s",
		      CLF_Last_error());
	instance_kill(&inst, -1, SIGKILL);
	ck_assert_int_eq(instance_start_daemon(&inst, -1), 0);
	fl.l_type = F_UNLCK;
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl), -ENOLCK);
	ck_assert_msg(strstr(CLF_Last_error(), "locks on 1 file(s) are lost"),
		      "message: %s", CLF_Last_error());
	/* Told once: the process takes its lock again. */
	fl.l_type = F_WRLCK;
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl) == 0, "%s",
		      CLF_Last_error());
	fl.l_type = F_UNLCK;
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl), 0);
	/* With none held, a restart costs nothing. */
	instance_kill(&inst, -1, SIGKILL);
	ck_assert_int_eq(instance_start_daemon(&inst, -1), 0);
	fl.l_type = F_WRLCK;
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl) == 0, "%s",
		      CLF_Last_error());
	ck_assert_int_eq(CLF_close(fd), 0);
	stop();
}
END_TEST

/* ---- collectives ---- */

#define COLL_BLOCK 4096
#define COLL_BYTES (64 * COLL_BLOCK)	/* each participant's: both iods */

struct coll_part {
	int p;
	pthread_barrier_t *ready;
	ssize_t wrote;
	char why[1024];
};

static uint8_t coll_byte(int64_t f)
{
	return (uint8_t)((f * 7 + (f >> 12) * 13) % 251 + 1);
}

/* Participant p of 2: blocks p, p + 2, ... of the file, one
 * collective write of all of them. */
static void *coll_participant(void *arg)
{
	struct coll_part *pt = arg;
	CLF_Datatype t = CLF_Type_vector(pt->p * COLL_BLOCK,
					 (pt->p + 1) * COLL_BLOCK - 1,
					 2 * COLL_BLOCK, 1, CLF_BYTE);
	CLF_Datatype mem = CLF_Type_vector(0, COLL_BYTES - 1, COLL_BYTES, 1,
					   CLF_BYTE);
	uint8_t *buf = malloc(COLL_BYTES);
	struct clf_view v = { 0, t };
	int fd = CLF_open("/coll", O_RDWR);

	pt->wrote = -1;
	if (fd < 0 || !buf || CLF_fcntl(fd, CLF_FCNTL_SETVIEW, &v)) {
		snprintf(pt->why, sizeof(pt->why), "open: %s", CLF_Last_error());
		pthread_barrier_wait(pt->ready);
		goto out;
	}
	for (int64_t w = 0; w < COLL_BYTES; w++) {
		int64_t f;

		CLF_Type_unmap(t, 0, w, &f);
		buf[w] = coll_byte(f);
	}
	pthread_barrier_wait(pt->ready);
	pt->wrote = CLF_ncwrite_at_all(fd, 0, buf, mem, 5, 2);
	if (pt->wrote != COLL_BYTES)
		snprintf(pt->why, sizeof(pt->why), "write_at_all: %zd: %s",
			 pt->wrote, CLF_Last_error());
out:
	if (fd >= 0)
		CLF_close(fd);
	CLF_Type_free(&t);
	CLF_Type_free(&mem);
	free(buf);
	return NULL;
}

/*
 * iod 1 does a collective write's I/O, answers the participant that
 * waited, and dies before answering the other (the test hook
 * CLF_TEST_IOD_COLL_EXIT).  The first goes on; the other sends its
 * request again to the restarted iod, which must serve it alone rather
 * than wait timeout_ms for a partner that is gone (iod_coll_done.c).
 */
START_TEST(test_a_collective_whose_iod_died_between_replies_completes)
{
	struct coll_part pts[2];
	pthread_barrier_t ready;
	pthread_t th[2];
	static uint8_t all[2 * COLL_BYTES];
	int fd;

	ck_assert_int_eq(instance_start(&inst, 2, 2000, NULL), 0);
	ck_assert_int_eq(instance_add_global(&inst, "iod_connections = 2"), 0);
	instance_kill(&inst, 1, SIGTERM);
	setenv("CLF_TEST_IOD_COLL_EXIT", "1", 1);
	ck_assert_int_eq(instance_start_daemon(&inst, 1), 0);
	unsetenv("CLF_TEST_IOD_COLL_EXIT");
	ck_assert_msg(CLF_init(inst.conf) == 0, "%s", CLF_Last_error());
	fd = CLF_open("/coll", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);

	pthread_barrier_init(&ready, NULL, 2);
	for (int p = 0; p < 2; p++) {
		pts[p] = (struct coll_part){ .p = p, .ready = &ready };
		ck_assert_int_eq(pthread_create(&th[p], NULL, coll_participant,
						&pts[p]), 0);
	}
	instance_kill(&inst, 1, 0);	/* reaps it when the hook exits */
	ck_assert_int_eq(instance_start_daemon(&inst, 1), 0);
	for (int p = 0; p < 2; p++) {
		pthread_join(th[p], NULL);
		ck_assert_msg(pts[p].wrote == COLL_BYTES, "participant %d: %s",
			      p, pts[p].why);
	}
	pthread_barrier_destroy(&ready);
	ck_assert_int_eq(CLF_read(fd, all, sizeof(all)), (ssize_t)sizeof(all));
	for (int64_t f = 0; f < (int64_t)sizeof(all); f++)
		if (all[f] != coll_byte(f))
			ck_abort_msg("byte %lld: %u, want %u", (long long)f,
				     all[f], coll_byte(f));
	ck_assert_int_eq(CLF_close(fd), 0);
	stop();
}
END_TEST

/* ---- beyond the grace ---- */

static void assert_gives_up(int idx, int grace_s)
{
	const char *name = idx < 0 ? "metad" : "iod 1";
	static uint8_t buf[256 << 10];	/* over every iod */
	int64_t t0, took;
	int fd, err;

	memset(buf, 1, sizeof(buf));

	fd = CLF_open("/x", O_CREAT | O_RDWR, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(CLF_write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	instance_kill(&inst, idx, SIGKILL);
	t0 = clf_now_ms();
	if (idx < 0) {
		err = CLF_mkdir("/late", 0755);
	} else {
		CLF_lseek(fd, 0, SEEK_SET);
		err = (int)CLF_read(fd, buf, sizeof(buf));
	}
	took = clf_now_ms() - t0;
	ck_assert_int_eq(err, -EHOSTDOWN);
	ck_assert_msg(strstr(CLF_Last_error(), name) &&
		      strstr(CLF_Last_error(), "recovery_grace_s"),
		      "message: %s", CLF_Last_error());
	ck_assert_int_ge(took, grace_s * 1000);
	ck_assert_int_lt(took, grace_s * 1000 + 1500);
	/* Back: the same descriptor works again. */
	ck_assert_int_eq(instance_start_daemon(&inst, idx), 0);
	CLF_lseek(fd, 0, SEEK_SET);
	ck_assert_int_eq(CLF_read(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	ck_assert_int_eq(buf[0], 1);
	ck_assert_int_eq(CLF_close(fd), 0);
}

START_TEST(test_an_iod_down_past_the_grace_fails_naming_it)
{
	start(2, 2);
	assert_gives_up(1, 2);
	stop();
}
END_TEST

START_TEST(test_metad_down_past_the_grace_fails_naming_it)
{
	start(2, 2);
	assert_gives_up(-1, 2);
	stop();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("native_recovery");
	TCase *tc = tcase_create("restarts");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_load_goes_on_through_an_iod_restart);
	tcase_add_test(tc, test_load_goes_on_through_a_metad_restart);
	tcase_add_test(tc, test_load_goes_on_through_restarts_of_every_iod);
	tcase_add_test(tc, test_locks_lost_with_metad_fail_the_holders_next_lock_call);
	tcase_add_test(tc, test_a_collective_whose_iod_died_between_replies_completes);
	tcase_add_test(tc, test_an_iod_down_past_the_grace_fails_naming_it);
	tcase_add_test(tc, test_metad_down_past_the_grace_fails_naming_it);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
