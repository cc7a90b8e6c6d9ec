// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_native_lock.c -- byte-range locks of the native API
 * (CLF_FCNTL_SETLK, _SETLKW, _GETLK) between processes, against a real
 * metad: conflicts, GETLK's report, a blocking lock that waits for the
 * holder, a killed holder, close, shared read locks, a deadlock of two
 * processes, and the struct flock rules.
 *
 * The other process is a forked child with its own CLF_init, driven over
 * pipes: it runs one command at a time (open, lock, unlock later, close)
 * and answers each, so the test can keep it blocked in a lock while it
 * acts itself.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "clf.h"
#include "instance.h"
#include "transport.h"

#define PATH "/locked"
#define FILE_SIZE 1000

static struct instance inst;

static void setup(void)
{
	uint8_t buf[FILE_SIZE] = { 0 };
	int err = instance_start(&inst, 1, 5000, NULL);
	int fd;

	if (err == 77) {
		fprintf(stderr, "SKIP: daemons not built\n");
		exit(77);
	}
	ck_assert_int_eq(err, 0);
	ck_assert_msg(CLF_init(NULL) == 0, "%s", CLF_Last_error());
	fd = CLF_open(PATH, O_CREAT | O_RDWR, 0644);
	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	ck_assert_int_eq(CLF_write(fd, buf, sizeof(buf)), FILE_SIZE);
	ck_assert_int_eq(CLF_close(fd), 0);
}

static void teardown(void)
{
	CLF_finalize();
	instance_stop(&inst);
}

/* ------------------------------------------------------------------ */
/* The other process                                                   */
/* ------------------------------------------------------------------ */

enum op { OP_OPEN, OP_SETLK, OP_SETLKW, OP_GETLK, OP_UNLOCK_LATER,
	  OP_CLOSE };

struct cmd {
	enum op op;
	int slot;		/* which of its descriptors */
	int flags;		/* OP_OPEN */
	int delay_ms;		/* OP_UNLOCK_LATER */
	struct flock fl;
};

struct answer {
	int result;
	struct flock fl;	/* OP_GETLK */
};

struct child {
	pid_t pid;
	int to, from;		/* pipes: commands, answers */
};

static struct flock range(short type, short whence, off_t start, off_t len)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = whence;
	fl.l_start = start;
	fl.l_len = len;
	return fl;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int run(int *fds, struct cmd *c, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	switch (c->op) {
	case OP_OPEN:
		return fds[c->slot] = CLF_open(PATH, c->flags);
	case OP_SETLK:
		return CLF_fcntl(fds[c->slot], CLF_FCNTL_SETLK, &c->fl);
	case OP_SETLKW:
		return CLF_fcntl(fds[c->slot], CLF_FCNTL_SETLKW, &c->fl);
	case OP_GETLK:
		a->fl = c->fl;
		return CLF_fcntl(fds[c->slot], CLF_FCNTL_GETLK, &a->fl);
	case OP_UNLOCK_LATER:
		sleep_ms(c->delay_ms);
		c->fl.l_type = F_UNLCK;
		return CLF_fcntl(fds[c->slot], CLF_FCNTL_SETLK, &c->fl);
	case OP_CLOSE:
		return CLF_close(fds[c->slot]);
	}
	return -ENOSYS;
}

static void child_main(int in, int out)
{
	int fds[4] = { -1, -1, -1, -1 };
	struct answer a;
	struct cmd c;

	/* Its own connections, hence its own locks. */
	CLF_finalize();
	if (CLF_init(NULL))
		_exit(10);
	while (read(in, &c, sizeof(c)) == sizeof(c)) {
		a.result = 0;
		a.result = run(fds, &c, &a);
		if (a.result < 0)
			fprintf(stderr, "child: %s\n", CLF_Last_error());
		if (write(out, &a, sizeof(a)) != sizeof(a))
			_exit(11);
	}
	_exit(0);
}

static struct child child_start(void)
{
	int to[2], from[2];
	struct child ch;

	ck_assert_int_eq(pipe(to), 0);
	ck_assert_int_eq(pipe(from), 0);
	ch.pid = fork();
	ck_assert_int_ge(ch.pid, 0);
	if (ch.pid == 0) {
		close(to[1]);
		close(from[0]);
		child_main(to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	ch.to = to[1];
	ch.from = from[0];
	return ch;
}

static void child_send(struct child *ch, struct cmd c)
{
	ck_assert_int_eq(write(ch->to, &c, sizeof(c)), sizeof(c));
}

static struct answer child_answer(struct child *ch)
{
	struct answer a;

	ck_assert_int_eq(read(ch->from, &a, sizeof(a)), sizeof(a));
	return a;
}

/* Send one command and wait for its answer's result. */
static int child_do(struct child *ch, struct cmd c)
{
	child_send(ch, c);
	return child_answer(ch).result;
}

static void child_stop(struct child *ch)
{
	int status;

	close(ch->to);
	close(ch->from);
	ck_assert_int_eq(waitpid(ch->pid, &status, 0), ch->pid);
}

/* A child with descriptor 0 open read-write, holding fl. */
static struct child child_holding(struct flock fl)
{
	struct child ch = child_start();

	ck_assert_int_ge(child_do(&ch, (struct cmd){ .op = OP_OPEN,
						     .flags = O_RDWR }), 0);
	ck_assert_int_eq(child_do(&ch, (struct cmd){ .op = OP_SETLK, .fl = fl }),
			 0);
	return ch;
}

static int open_rw(void)
{
	int fd = CLF_open(PATH, O_RDWR);

	ck_assert_msg(fd >= 0, "%s", CLF_Last_error());
	return fd;
}

static int setlk(int fd, short type, off_t start, off_t len)
{
	struct flock fl = range(type, SEEK_SET, start, len);

	return CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_a_conflict_fails_and_getlk_names_the_holder)
{
	struct child ch = child_holding(range(F_WRLCK, SEEK_SET, 100, 100));
	struct flock fl = range(F_RDLCK, SEEK_SET, 0, 0);
	int fd = open_rw();

	ck_assert_int_eq(setlk(fd, F_WRLCK, 150, 1), -EAGAIN);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "locked"));
	ck_assert_int_eq(setlk(fd, F_RDLCK, 199, 1), -EAGAIN);
	ck_assert_int_eq(setlk(fd, F_WRLCK, 0, 100), 0);
	ck_assert_int_eq(setlk(fd, F_WRLCK, 200, 0), 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_GETLK, &fl), 0);
	ck_assert_int_eq(fl.l_type, F_WRLCK);
	ck_assert_int_eq(fl.l_whence, SEEK_SET);
	ck_assert_int_eq(fl.l_start, 100);
	ck_assert_int_eq(fl.l_len, 100);
	ck_assert_int_eq(fl.l_pid, ch.pid);
	/* The holder sees this process's lock to the end as length 0. */
	child_send(&ch, (struct cmd){ .op = OP_GETLK,
				      .fl = range(F_RDLCK, SEEK_SET, 500, 1) });
	{
		struct answer a = child_answer(&ch);

		ck_assert_int_eq(a.result, 0);
		ck_assert_int_eq(a.fl.l_type, F_WRLCK);
		ck_assert_int_eq(a.fl.l_start, 200);
		ck_assert_int_eq(a.fl.l_len, 0);
		ck_assert_int_eq(a.fl.l_pid, getpid());
	}
	child_stop(&ch);
	CLF_close(fd);
}
END_TEST

START_TEST(test_setlkw_waits_until_the_holder_unlocks)
{
	struct flock all = range(F_WRLCK, SEEK_SET, 0, 0);
	struct child ch = child_holding(all);
	int fd = open_rw();
	int64_t t0, waited;

	child_send(&ch, (struct cmd){ .op = OP_UNLOCK_LATER, .delay_ms = 1500,
				      .fl = all });
	t0 = clf_now_ms();
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SETLKW, &all) == 0, "%s",
		      CLF_Last_error());
	waited = clf_now_ms() - t0;
	/* More than one bounded wait of metad's: the client asked again. */
	ck_assert_int_ge(waited, 1300);
	ck_assert_int_lt(waited, 5000);
	ck_assert_int_eq(child_answer(&ch).result, 0);
	/* Now the child is the one refused. */
	ck_assert_int_eq(child_do(&ch, (struct cmd){ .op = OP_SETLK,
				   .fl = range(F_RDLCK, SEEK_SET, 7, 1) }),
			 -EAGAIN);
	child_stop(&ch);
	CLF_close(fd);
}
END_TEST

struct killer {
	pid_t pid;
	int delay_ms;
};

static void *kill_main(void *arg)
{
	struct killer *k = arg;

	sleep_ms(k->delay_ms);
	kill(k->pid, SIGKILL);
	return NULL;
}

START_TEST(test_a_killed_holder_leaves_no_lock_behind)
{
	struct flock all = range(F_WRLCK, SEEK_SET, 0, 0);
	struct child ch = child_holding(all);
	struct killer k = { ch.pid, 700 };
	int fd = open_rw();
	pthread_t t;
	int64_t t0, waited;

	ck_assert_int_eq(setlk(fd, F_RDLCK, 0, 1), -EAGAIN);
	ck_assert_int_eq(pthread_create(&t, NULL, kill_main, &k), 0);
	t0 = clf_now_ms();
	ck_assert_msg(CLF_fcntl(fd, CLF_FCNTL_SETLKW, &all) == 0, "%s",
		      CLF_Last_error());
	waited = clf_now_ms() - t0;
	pthread_join(t, NULL);
	ck_assert_int_ge(waited, 500);
	ck_assert_int_lt(waited, 5000);
	child_stop(&ch);
	CLF_close(fd);
}
END_TEST

START_TEST(test_closing_any_descriptor_releases_the_process_locks)
{
	struct child ch = child_holding(range(F_WRLCK, SEEK_SET, 0, 10));
	int fd = open_rw();

	/* A second descriptor of the child, never used for locking. */
	ck_assert_int_ge(child_do(&ch, (struct cmd){ .op = OP_OPEN, .slot = 1,
						     .flags = O_RDONLY }), 0);
	ck_assert_int_eq(setlk(fd, F_WRLCK, 5, 1), -EAGAIN);
	ck_assert_int_eq(child_do(&ch, (struct cmd){ .op = OP_CLOSE,
						     .slot = 1 }), 0);
	ck_assert_int_eq(setlk(fd, F_WRLCK, 5, 1), 0);
	/* This process's own descriptors share its locks. */
	{
		int fd2 = open_rw();

		ck_assert_int_eq(setlk(fd2, F_WRLCK, 0, 100), 0);
		ck_assert_int_eq(CLF_close(fd2), 0);
	}
	ck_assert_int_eq(child_do(&ch, (struct cmd){ .op = OP_SETLK,
				   .fl = range(F_WRLCK, SEEK_SET, 5, 1) }), 0);
	child_stop(&ch);
	CLF_close(fd);
}
END_TEST

START_TEST(test_read_locks_are_shared_write_locks_are_not)
{
	struct child ch = child_holding(range(F_RDLCK, SEEK_SET, 0, 0));
	int fd = open_rw();

	ck_assert_int_eq(setlk(fd, F_RDLCK, 0, 0), 0);
	ck_assert_int_eq(setlk(fd, F_WRLCK, 10, 10), -EAGAIN);
	/* Neither can upgrade while the other reads. */
	ck_assert_int_eq(child_do(&ch, (struct cmd){ .op = OP_SETLK,
				   .fl = range(F_WRLCK, SEEK_SET, 10, 10) }),
			 -EAGAIN);
	ck_assert_int_eq(setlk(fd, F_UNLCK, 0, 0), 0);
	ck_assert_int_eq(child_do(&ch, (struct cmd){ .op = OP_SETLK,
				   .fl = range(F_WRLCK, SEEK_SET, 10, 10) }), 0);
	child_stop(&ch);
	CLF_close(fd);
}
END_TEST

START_TEST(test_two_processes_waiting_for_each_other_are_told_deadlock)
{
	struct child ch = child_holding(range(F_WRLCK, SEEK_SET, 0, 10));
	struct flock mine = range(F_WRLCK, SEEK_SET, 10, 10);
	struct flock theirs = range(F_WRLCK, SEEK_SET, 0, 10);
	int fd = open_rw();

	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &mine), 0);
	child_send(&ch, (struct cmd){ .op = OP_SETLKW, .fl = mine });
	sleep_ms(300);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLKW, &theirs), -EDEADLK);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "deadlock"));
	/* Giving way lets the child through. */
	mine.l_type = F_UNLCK;
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &mine), 0);
	ck_assert_int_eq(child_answer(&ch).result, 0);
	child_stop(&ch);
	CLF_close(fd);
}
END_TEST

START_TEST(test_flock_ranges_follow_posix)
{
	struct child ch = child_start();
	struct flock fl;
	struct answer a;
	int fd = open_rw();

	ck_assert_int_ge(child_do(&ch, (struct cmd){ .op = OP_OPEN,
						     .flags = O_RDONLY }), 0);
	/* A negative length: the bytes before l_start. */
	ck_assert_int_eq(setlk(fd, F_WRLCK, 100, -50), 0);
	/* From the position, and from the end of the file. */
	ck_assert_int_eq(CLF_lseek(fd, 300, SEEK_SET), 300);
	fl = range(F_WRLCK, SEEK_CUR, 0, 10);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl), 0);
	fl = range(F_WRLCK, SEEK_END, -10, 10);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl), 0);
	{
		static const off_t want[][2] = { { 50, 50 }, { 300, 10 },
						 { FILE_SIZE - 10, 10 } };
		off_t from = 0;

		for (int i = 0; i < 3; i++) {
			child_send(&ch, (struct cmd){ .op = OP_GETLK,
				.fl = range(F_RDLCK, SEEK_SET, from, 0) });
			a = child_answer(&ch);
			ck_assert_int_eq(a.result, 0);
			ck_assert_int_eq(a.fl.l_type, F_WRLCK);
			ck_assert_int_eq(a.fl.l_start, want[i][0]);
			ck_assert_int_eq(a.fl.l_len, want[i][1]);
			from = a.fl.l_start + a.fl.l_len;
		}
	}
	/* What POSIX refuses. */
	fl = range(99, SEEK_SET, 0, 1);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl), -EINVAL);
	fl = range(F_WRLCK, 7, 0, 1);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_SETLK, &fl), -EINVAL);
	ck_assert_int_eq(setlk(fd, F_WRLCK, -5, 1), -EINVAL);
	ck_assert_int_eq(setlk(fd, F_WRLCK, 10, -11), -EINVAL);
	ck_assert_int_eq(setlk(fd, F_WRLCK, INT64_MAX, 2), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "largest offset"));
	ck_assert_int_eq(setlk(fd, F_WRLCK, INT64_MAX, 1), 0);
	fl = range(F_UNLCK, SEEK_SET, 0, 0);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_GETLK, &fl), -EINVAL);
	ck_assert_int_eq(CLF_fcntl(fd, CLF_FCNTL_GETLK, NULL), -EINVAL);
	/* A write lock needs a descriptor open for writing. */
	ck_assert_int_eq(child_do(&ch, (struct cmd){ .op = OP_SETLK,
				   .fl = range(F_WRLCK, SEEK_SET, 0, 1) }),
			 -EBADF);
	child_stop(&ch);
	CLF_close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("native_lock");
	TCase *tc = tcase_create("locks between processes");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_a_conflict_fails_and_getlk_names_the_holder);
	tcase_add_test(tc, test_setlkw_waits_until_the_holder_unlocks);
	tcase_add_test(tc, test_a_killed_holder_leaves_no_lock_behind);
	tcase_add_test(tc,
		       test_closing_any_descriptor_releases_the_process_locks);
	tcase_add_test(tc, test_read_locks_are_shared_write_locks_are_not);
	tcase_add_test(tc,
		test_two_processes_waiting_for_each_other_are_told_deadlock);
	tcase_add_test(tc, test_flock_ranges_follow_posix);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
