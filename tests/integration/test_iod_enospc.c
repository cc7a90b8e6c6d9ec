// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_iod_enospc.c -- a real full disk: the iod's storage directory on a
 * small tmpfs.  ENOSPC must reach the writer with a message naming the
 * subfile, acknowledged data must stay readable and the iod must go on
 * (and write again once space is freed).
 *
 * Mounting needs CAP_SYS_ADMIN; where it is not allowed the program is
 * skipped (exit 77), the fault hook test in test_iod_faults covering the
 * error path instead.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "iod_harness.h"

#define TIMEOUT_MS 3000
#define FS_SIZE (512 * 1024)
#define CHUNK (64 * 1024)

static int mount_tmpfs(const char *dir)
{
	char opts[64];

	snprintf(opts, sizeof(opts), "size=%d,mode=0700", FS_SIZE);
	return mount("tmpfs", dir, "tmpfs", 0, opts);
}

START_TEST(test_full_disk_reaches_the_writer)
{
	struct iodh h;
	struct clf_conn *c;
	uint8_t *data = iodh_alloc(CHUNK), *back = iodh_alloc(CHUNK);
	int64_t written = 0, n = 0;
	uint32_t handle;

	for (size_t i = 0; i < CHUNK; i++)
		data[i] = iodh_val((int64_t)i, 9);
	iodh_init(&h, TIMEOUT_MS);
	ck_assert_int_eq(mkdir(h.dir, 0700), 0);
	ck_assert_msg(mount_tmpfs(h.dir) == 0, "mount: %s", strerror(errno));
	iodh_start(&h);
	c = iodh_connect(&h);

	/* Fill it: at most twice its size, in chunks. */
	for (int i = 0; i < 2 * FS_SIZE / CHUNK; i++) {
		n = cl_sub_write(c, 0x20, 1, written, data, CHUNK);
		if (n < 0)
			break;
		ck_assert_int_eq(n, CHUNK);
		written += n;
	}
	ck_assert_msg(n == -ENOSPC, "last write: %lld (%s)", (long long)n,
		      CLF_Last_error());
	ck_assert_msg(strstr(CLF_Last_error(),
			     "iod 0: cannot write subfile 1 of file 0x20: No space left on device"),
		      "%s", CLF_Last_error());
	ck_assert_int_gt(written, 0);
	/* View writes and collective writes meet the same wall. */
	ck_assert_int_eq(cl_view_register(c, 0x21, 0, CLF_BYTE, 0, CLF_BYTE, 0,
					  &handle), 0);
	ck_assert_int_eq(cl_view_write(c, handle, 0, CHUNK, data, CHUNK, 0, 0),
			 -ENOSPC);
	ck_assert_int_eq(cl_view_write(c, handle, 0, CHUNK, data, CHUNK, 1, 1),
			 -ENOSPC);
	/* Acknowledged data is intact; the iod still serves. */
	for (int64_t off = 0; off < written; off += CHUNK) {
		ck_assert_int_eq(cl_sub_read(c, 0x20, 1, off, back, CHUNK),
				 CHUNK);
		ck_assert(memcmp(back, data, CHUNK) == 0);
	}
	ck_assert_int_eq(cl_ping(c), 0);
	/* Freeing space lets writes through again. */
	ck_assert_int_eq(cl_remove(c, 0x20, CLF_PROTO_SUBFILE_ALL), 0);
	ck_assert_int_eq(cl_remove(c, 0x21, CLF_PROTO_SUBFILE_ALL), 0);
	ck_assert_int_eq(cl_view_write(c, handle, 0, CHUNK, data, CHUNK, 0, 0),
			 CHUNK);
	clf_conn_close(c);
	iodh_stop(&h);
	ck_assert(iodh_log_has(&h, "No space left on device"));
	iodh_cleanup(&h);
	free(data);
	free(back);
}
END_TEST

/* Whether this process may mount a tmpfs. */
static int can_mount(void)
{
	char dir[] = "/tmp/clf-iod-mnt.XXXXXX";
	int ok;

	if (!mkdtemp(dir))
		return 0;
	ok = mount_tmpfs(dir) == 0;
	if (ok)
		umount(dir);
	rmdir(dir);
	return ok;
}

int main(void)
{
	Suite *s = suite_create("iod_enospc");
	TCase *tc = tcase_create("enospc");

	if (!can_mount()) {
		fprintf(stderr, "cannot mount a tmpfs here (%s): skipped\n",
			strerror(errno));
		return 77;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_full_disk_reaches_the_writer);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
