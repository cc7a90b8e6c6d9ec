// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_mds_group.c -- group commit (metad/mds_group.c): concurrent
 * callers share LMDB commits, a failing one rolls back alone, and every
 * change a caller was told is done survives a kill -9.
 */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "check_main.h"
#include "mds_test.h"

#define THREADS 8
#define PER_THREAD 40

struct worker {
	struct mds_store *s;
	int id;
	int fails;		/* calls that did not return 0 */
	int out;		/* acknowledgements, or -1 */
	bool dup;		/* also create a name that exists */
};

static void *create_some(void *arg)
{
	struct worker *w = arg;
	struct mds_attr attr;
	char name[32];

	for (int i = 0; i < PER_THREAD || w->out >= 0; i++) {
		snprintf(name, sizeof(name), "t%d-%d", w->id, i);
		if (mds_create(w->s, MDS_ROOT_INO, name, 0644, 0, 0, NULL,
			       &attr)) {
			w->fails++;
			continue;
		}
		if (w->out >= 0) {
			char line[40];
			int n = snprintf(line, sizeof(line), "%s\n", name);

			if (write(w->out, line, n) != n)
				_exit(3);
		}
		if (w->dup &&
		    mds_create(w->s, MDS_ROOT_INO, "shared", 0644, 0, 0, NULL,
			       &attr) != -EEXIST)
			w->fails++;
	}
	return NULL;
}

static uint64_t last_txnid(struct mds_store *s)
{
	MDB_envinfo info;

	ck_assert_int_eq(mdb_env_info(s->env, &info), 0);
	return info.me_last_txnid;
}

static void run_workers(struct mds_store *s, struct worker *w, int out,
			bool dup)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .s = s, .id = i, .out = out,
					.dup = dup && i % 2 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, create_some,
						&w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

START_TEST(test_concurrent_creates_share_commits)
{
	char *dir = new_store_dir();
	struct mds_store *s = open_store(dir);
	struct worker w[THREADS];
	struct mds_attr attr;
	uint64_t before = last_txnid(s), commits;
	char name[32];

	run_workers(s, w, -1, false);
	commits = last_txnid(s) - before;
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(w[i].fails, 0);
	/* Alone, each create is one LMDB commit with its two syncs. */
	ck_assert_msg(commits < THREADS * PER_THREAD,
		      "%d concurrent creates took %llu commits", THREADS * PER_THREAD,
		      (unsigned long long)commits);
	for (int i = 0; i < THREADS; i++)
		for (int k = 0; k < PER_THREAD; k++) {
			snprintf(name, sizeof(name), "t%d-%d", i, k);
			ck_assert_int_eq(mds_lookup(s, MDS_ROOT_INO, name, &attr,
						    NULL), 0);
		}
	assert_consistent(s);
	mds_store_close(s);
	rm_store_dir(dir);
}
END_TEST

/* Threads of this process. */
static int threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The first request of a group commits it in its own thread: no
 * committer thread to hand each change to and be woken by, so a lone
 * change costs no thread switch.
 */
START_TEST(test_a_lone_change_commits_in_its_own_thread)
{
	char *dir = new_store_dir();
	int before = threads_now();
	struct mds_store *s = open_store(dir);
	uint64_t txn = last_txnid(s);
	struct mds_attr attr;

	ck_assert_int_eq(threads_now(), before);
	ck_assert_int_eq(mds_create(s, MDS_ROOT_INO, "f", 0644, 0, 0, NULL,
				    &attr), 0);
	ck_assert_int_eq(threads_now(), before);
	ck_assert_uint_eq(last_txnid(s), txn + 1);
	ck_assert_int_eq(mds_lookup(s, MDS_ROOT_INO, "f", &attr, NULL), 0);
	mds_store_close(s);
	rm_store_dir(dir);
}
END_TEST

START_TEST(test_failing_call_in_a_group_rolls_back_alone)
{
	char *dir = new_store_dir();
	struct mds_store *s = open_store(dir);
	struct worker w[THREADS];
	struct mds_statfs st;
	struct mds_attr attr;

	ck_assert_int_eq(mds_create(s, MDS_ROOT_INO, "shared", 0644, 0, 0,
				    NULL, &attr), 0);
	/* Half the threads also try to create "shared" again: -EEXIST,
	 * amid the others' creates, in the same groups. */
	run_workers(s, w, -1, true);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(w[i].fails, 0);
	ck_assert_int_eq(mds_statfs(s, &st), 0);
	ck_assert_uint_eq(st.inodes, 2 + THREADS * PER_THREAD);
	assert_consistent(s);
	mds_store_close(s);
	rm_store_dir(dir);
}
END_TEST

START_TEST(test_acknowledged_concurrent_creates_survive_kill_9)
{
	char *dir = new_store_dir(), line[64];
	struct mds_attr attr;
	struct mds_store *s;
	int pipefd[2], status, acked = 0;
	FILE *in;
	pid_t child;

	ck_assert_int_eq(pipe(pipefd), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct worker w[THREADS];

		close(pipefd[0]);
		s = open_store(dir);
		run_workers(s, w, pipefd[1], false);	/* until killed */
		_exit(0);
	}
	close(pipefd[1]);
	srand((unsigned)time(NULL));
	usleep(200000 + rand() % 300000);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	ck_assert(WIFSIGNALED(status));
	s = open_store(dir);
	in = fdopen(pipefd[0], "r");
	ck_assert_ptr_nonnull(in);
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		ck_assert_msg(mds_lookup(s, MDS_ROOT_INO, line, &attr, NULL) == 0,
			      "%s acknowledged, lost after kill -9", line);
		acked++;
	}
	fclose(in);
	ck_assert_int_gt(acked, THREADS);
	assert_consistent(s);
	mds_store_close(s);
	rm_store_dir(dir);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("mds_group");
	TCase *tc = tcase_create("group");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_concurrent_creates_share_commits);
	tcase_add_test(tc, test_a_lone_change_commits_in_its_own_thread);
	tcase_add_test(tc, test_failing_call_in_a_group_rolls_back_alone);
	tcase_add_test(tc, test_acknowledged_concurrent_creates_survive_kill_9);
	suite_add_tcase(su, tc);
	return run_suite(su);
}
