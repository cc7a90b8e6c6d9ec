// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_crash_sync.c -- a power cut between a group commit and its
 * sync (metad/mds_group.c).  metad commits a group's LMDB transaction,
 * then makes it durable (its meta page synced by the next commit or an
 * explicit sync), and only then answers the group's clients, while the
 * next group already runs.  Here metad runs under the power-cut shim
 * (crash_shim.so records what each sync made durable, crash_shadow.h)
 * with many clients creating at once, and kills itself at a chosen group
 * commit: before that commit's sync, or just after its clients were
 * answered.  The store is then replaced by what a power cut at that
 * moment leaves, and every create a client was told of must be in it.
 * An answer sent before the sync, or a sync that does not reach the
 * disk, loses the group's creates in the cut and fails the test; a
 * kill -9 alone could not tell (the page cache survives it).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash_shadow.h"
#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define WRITERS 8
#define MAX_OPS 20000		/* per writer; the kill comes long before */
#define KILL_AT 40		/* group commits before the kill */

static struct mh H;
static char shadow[MH_LONG];
static char env_preload[PATH_MAX + 16];
static char env_root[MH_LONG + 32];
static char env_shadow[MH_LONG + 32];
static char env_hook[96];

static void setup(void)
{
	mh_init(&H, 2, 5000);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

/* The shim beside this build's metad: BUILD/metad/metad ->
 * BUILD/tests/integration/crash_shim.so. */
static void shim_path(char *out, size_t len)
{
	const char *bin = mh_metad_bin();
	const char *tail = strstr(bin, "/metad/metad");

	ck_assert_ptr_nonnull(tail);
	snprintf(out, len, "%.*s/tests/integration/crash_shim.so",
		 (int)(tail - bin), bin);
	ck_assert_msg(access(out, R_OK) == 0, "%s: not built", out);
}

/* Start metad under the shim, recording from an empty store directory,
 * with hook ("CLF_TEST_METAD_CRASH_...=N"). */
static void start_recorded(const char *hook)
{
	char so[PATH_MAX];

	shim_path(so, sizeof(so));
	/* A sanitized metad accepts the shim loaded before its runtime
	 * (as in test_crash). */
	if (!strstr(getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "",
		    "verify_asan_link_order")) {
		char asan[512];
		const char *old = getenv("ASAN_OPTIONS");

		snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0",
			 old ? old : "", old ? ":" : "");
		setenv("ASAN_OPTIONS", asan, 1);
	}
	snprintf(shadow, sizeof(shadow), "%s/shadow", H.base);
	ck_assert(mkdir(H.meta, 0700) == 0 || errno == EEXIST);
	ck_assert_int_eq(crash_shadow_sync_tree(shadow, H.meta), 0);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", so);
	snprintf(env_root, sizeof(env_root), "CLF_TEST_CRASH_ROOT=%s",
		 H.meta);
	snprintf(env_shadow, sizeof(env_shadow), "CLF_TEST_CRASH_SHADOW=%s",
		 shadow);
	snprintf(env_hook, sizeof(env_hook), "%s", hook);
	H.env[0] = env_preload;
	H.env[1] = env_root;
	H.env[2] = env_shadow;
	H.env[3] = env_hook;
	mh_start(&H);
	H.env[0] = NULL;
}

/* Replace the store by what the shadow says a power cut leaves. */
static void cut_power(void)
{
	char image[MH_LONG + 8], cmd[3 * MH_LONG + 64];
	int err;

	snprintf(image, sizeof(image), "%s.cut", H.meta);
	err = crash_shadow_build(shadow, image);
	ck_assert_msg(err == 0, "building the image: %s", strerror(-err));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mv '%s' '%s'", H.meta,
		 image, H.meta);
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

struct writer {
	int w;
	int acked;		/* creates metad answered 0 */
	bool other_error;	/* a failure not from the kill */
	char error[160];
};

static void *writer_main(void *arg)
{
	struct writer *wr = arg;
	struct mc *m = mc_open(&H);

	for (int i = 0; i < MAX_OPS; i++) {
		char name[64];

		snprintf(name, sizeof(name), "burst/w%d-%d", wr->w, i);
		if (mc_create(m, ROOT, name, 0644, CLF_PROTO_CREATE_EXCL,
			      NULL, NULL)) {
			/* Only the kill may stop the burst. */
			if (!clf_conn_broken(m->c)) {
				wr->other_error = true;
				snprintf(wr->error, sizeof(wr->error), "%s: %s",
					 name, CLF_Last_error());
			}
			break;
		}
		wr->acked++;
	}
	mc_close(m);
	return NULL;
}

/* Whether burst/w<w>-<i> exists now (asserts no other failure). */
static bool exists(struct mc *m, int w, int i)
{
	char name[64];
	int err;

	snprintf(name, sizeof(name), "burst/w%d-%d", w, i);
	err = mc_lookup(m, ROOT, name, 0, NULL);
	ck_assert_msg(err == 0 || err == -ENOENT, "lookup %s: %s", name,
		      CLF_Last_error());
	return err == 0;
}

/* Creates by WRITERS clients until metad kills itself at hook, a power
 * cut, and the check that every acknowledged create is there. */
static void creates_through_a_cut(const char *hook)
{
	struct writer wr[WRITERS] = { 0 };
	pthread_t t[WRITERS];
	struct mc *m;
	int status, total = 0;

	start_recorded(hook);
	m = mc_open(&H);
	ck_assert_int_eq(mc_mkdir(m, ROOT, "burst", 0755, NULL), 0);
	mc_close(m);
	for (int w = 0; w < WRITERS; w++) {
		wr[w].w = w;
		ck_assert_int_eq(pthread_create(&t[w], NULL, writer_main,
						&wr[w]), 0);
	}
	for (int w = 0; w < WRITERS; w++)
		pthread_join(t[w], NULL);
	status = mh_wait_exit(&H);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "metad did not kill itself at the hook (status %d)",
		      status);
	for (int w = 0; w < WRITERS; w++) {
		ck_assert_msg(!wr[w].other_error, "writer %d: %s", w,
			      wr[w].error);
		total += wr[w].acked;
	}
	/* The mkdir was group 1: more creates than groups means that
	 * groups held several. */
	ck_assert_int_ge(total, KILL_AT - 1);

	if (getenv("CLF_TEST_DEBUG")) {
		char cmd[MH_LONG * 2 + 64];

		snprintf(cmd, sizeof(cmd), "tail -n 5 %s %s", H.log, H.out);
		system(cmd);
		printf("acked %d\n", total);
	}
	cut_power();
	mh_start(&H);
	m = mc_open(&H);
	for (int w = 0; w < WRITERS; w++)
		for (int i = 0; i < wr[w].acked; i++)
			ck_assert_msg(exists(m, w, i),
				      "acknowledged create w%d-%d lost in the "
				      "cut (%d acknowledged in all)", w, i,
				      total);
	mc_close(m);
}

START_TEST(test_cut_between_group_commit_and_its_sync_keeps_every_acknowledged_create)
{
	char hook[64];

	snprintf(hook, sizeof(hook), "CLF_TEST_METAD_CRASH_UNSYNCED=%d",
		 KILL_AT);
	creates_through_a_cut(hook);
}
END_TEST

START_TEST(test_cut_after_group_answered_keeps_its_creates)
{
	char hook[64];

	snprintf(hook, sizeof(hook), "CLF_TEST_METAD_CRASH_SYNCED=%d",
		 KILL_AT);
	creates_through_a_cut(hook);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_crash_sync");
	TCase *tc = tcase_create("crash_sync");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc,
		test_cut_between_group_commit_and_its_sync_keeps_every_acknowledged_create);
	tcase_add_test(tc, test_cut_after_group_answered_keeps_its_creates);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
