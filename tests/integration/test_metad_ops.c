// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_metad_ops.c -- the real metad, one operation at a time: auth,
 * namespace, attributes, layouts, and what happens to requests that need
 * iods when none is running.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metad_harness.h"

#define ROOT CLF_PROTO_ROOT_INO
#define NIODS 4
#define TIMEOUT_MS 3000

static struct mh H;

static void setup(void)
{
	mh_init(&H, NIODS, TIMEOUT_MS);
	mh_start(&H);
}

static void teardown(void)
{
	mh_cleanup(&H);
}

static void assert_fails(int err, int want, const char *msg_part)
{
	ck_assert_msg(err == want, "got %d (%s), want %d", err,
		      CLF_Last_error(), want);
	if (msg_part)
		ck_assert_msg(strstr(CLF_Last_error(), msg_part),
			      "message '%s' lacks '%s'", CLF_Last_error(),
			      msg_part);
}

/* ------------------------------------------------------------------ */
/* Authentication                                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_auth_with_the_secret_serves)
{
	struct mc *a = mc_open(&H), *b = mc_open(&H);
	struct clf_proto_status st;

	ck_assert_int_eq(mc_ping(a), 0);
	ck_assert_int_eq(mc_ping(b), 0);
	ck_assert_int_eq(mc_status(a, &st), 0);
	ck_assert_uint_eq(st.connections, 2);
	ck_assert_uint_ge(st.requests, 3);
	ck_assert_uint_gt(st.bytes_read, 0);
	ck_assert_uint_eq(st.views, 0);
	mc_close(a);
	mc_close(b);
}
END_TEST

START_TEST(test_auth_with_a_wrong_secret_is_refused_and_logged)
{
	struct clf_secret wrong = H.secret;
	struct mc *m = NULL;
	int err;

	wrong.key[0] ^= 1;
	err = mc_open_with(H.addr, &wrong, 5000, &m);
	assert_fails(err, -EACCES, "wrong secret");
	ck_assert_ptr_null(m);
	/* The daemon goes on serving those who know the secret. */
	m = mc_open(&H);
	ck_assert_int_eq(mc_ping(m), 0);
	mc_close(m);
	/* The worker that refused logs after the client has its answer:
	 * wait for the line a while (a sanitized build is slow). */
	for (int ms = 0; ms < 5000 && !mh_log_has(&H, "refused the connection");
	     ms += 20)
		usleep(20 * 1000);
	ck_assert(mh_log_has(&H, "refused the connection"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Namespace                                                           */
/* ------------------------------------------------------------------ */

/* CLF_PROTO_CREATE_PLAIN (1.21): one round trip for a create that would
 * take its directory's default layout, when the directory has none. */
START_TEST(test_create_plain_is_refused_where_the_directory_has_a_default)
{
	struct mc *m = mc_open(&H);

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "d/a", 0644,
				   CLF_PROTO_CREATE_EXCL | CLF_PROTO_CREATE_PLAIN,
				   NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "d/" CLF_PROTO_DIR_DEFAULT_NAME,
				   0644, CLF_PROTO_CREATE_EXCL, NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "d/b", 0644,
				   CLF_PROTO_CREATE_EXCL | CLF_PROTO_CREATE_PLAIN,
				   NULL, NULL), -EAGAIN);
	ck_assert_int_eq(mc_lookup(m, ROOT, "d/b", 0, NULL), -ENOENT);
	ck_assert_int_eq(mc_create(m, ROOT, "d/b", 0644, CLF_PROTO_CREATE_EXCL,
				   NULL, NULL), 0);
	mc_close(m);
}
END_TEST

START_TEST(test_create_round_robin_uses_the_configured_defaults)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_create_rep rep;
	struct clf_proto_lookup_rep lk;
	struct clf_proto_attr a;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0640, 0, NULL, &rep), 0);
	ck_assert(S_ISREG(rep.attr.mode));
	ck_assert_uint_eq(rep.attr.mode & 07777, 0640);
	ck_assert_uint_eq(rep.attr.uid, 1000);
	ck_assert_int_eq(rep.attr.size, 0);
	ck_assert_uint_eq(rep.layout.kind, CLF_PROTO_LAYOUT_EXPLICIT);
	ck_assert_uint_eq(rep.layout.nsubfiles, NIODS);
	for (uint32_t j = 0; j < NIODS; j++) {
		CLF_Datatype t;

		ck_assert_uint_eq(rep.layout.subfiles[j].iod, j);
		ck_assert_int_eq(CLF_Type_decode(rep.layout.subfiles[j].type.ptr,
						 rep.layout.subfiles[j].type.len,
						 &t), 0);
		ck_assert_int_eq(CLF_Type_size(t), 64 * 1024);
		ck_assert_int_eq(CLF_Type_extent(t), NIODS * 64 * 1024);
		CLF_Type_free(&t);
	}
	clf_proto_create_rep_release(&rep);

	ck_assert_int_eq(mc_lookup(m, ROOT, "f", CLF_PROTO_LOOKUP_LAYOUT, &lk),
			 0);
	ck_assert(lk.has_layout);
	ck_assert_uint_eq(lk.layout.nsubfiles, NIODS);
	ck_assert_int_eq(mc_getattr(m, lk.attr.ino, &a), 0);
	ck_assert_uint_eq(a.ino, lk.attr.ino);
	clf_proto_lookup_rep_release(&lk);
	ck_assert_int_eq(mc_lookup(m, ROOT, "f", 0, &lk), 0);
	ck_assert(!lk.has_layout);
	clf_proto_lookup_rep_release(&lk);
	mc_close(m);
}
END_TEST

START_TEST(test_create_existing_opens_it_unless_exclusive)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_create_rep a, b;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, &a), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "f", 0600, 0, NULL, &b), 0);
	ck_assert_uint_eq(a.attr.ino, b.attr.ino);
	ck_assert_uint_eq(b.attr.mode & 07777, 0644);
	ck_assert_uint_eq(b.layout.nsubfiles, a.layout.nsubfiles);
	clf_proto_create_rep_release(&a);
	clf_proto_create_rep_release(&b);
	assert_fails(mc_create(m, ROOT, "f", 0644, CLF_PROTO_CREATE_EXCL,
			       NULL, NULL),
		     -EEXIST, NULL);
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	assert_fails(mc_create(m, ROOT, "d", 0644, 0, NULL, NULL), -EISDIR,
		     "directory");
	assert_fails(mc_create(m, ROOT, "none/f", 0644, 0, NULL, NULL),
		     -ENOENT, NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_create_with_explicit_and_custom_round_robin_layouts)
{
	struct clf_proto_subfile subs[2];
	struct clf_proto_layout l = {
		.kind = CLF_PROTO_LAYOUT_EXPLICIT,
		.disp = 100,
		.disp_iod = 3,
		.nsubfiles = 2,
		.subfiles = subs,
	};
	struct clf_proto_layout rr = {
		.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
		.stripe_size = 4096,
		.stripe_count = 2,
		.first_iod = 2,
	};
	CLF_Datatype t[2];
	uint8_t enc[2][256];
	struct clf_proto_create_rep rep;
	struct clf_proto_layout got;
	struct mc *m = mc_open(&H);

	ck_assert_int_eq(CLF_Type_pitfalls(0, 7, 16, 1, 8, 2, CLF_BYTE, t), 0);
	for (int j = 0; j < 2; j++) {
		int64_t n = CLF_Type_encode(t[j], enc[j], sizeof(enc[j]));

		ck_assert_int_gt(n, 0);
		subs[j] = (struct clf_proto_subfile){ (uint32_t)j * 2,
						      { enc[j], (uint32_t)n } };
	}
	ck_assert_int_eq(mc_create(m, ROOT, "x", 0644, 0, &l, &rep), 0);
	ck_assert_int_eq(rep.layout.disp, 100);
	ck_assert_uint_eq(rep.layout.disp_iod, 3);
	ck_assert_uint_eq(rep.layout.nsubfiles, 2);
	ck_assert_uint_eq(rep.layout.subfiles[1].iod, 2);
	ck_assert_mem_eq(rep.layout.subfiles[1].type.ptr, enc[1],
			 subs[1].type.len);
	clf_proto_create_rep_release(&rep);
	ck_assert_int_eq(mc_get_layout(m, mc_ino(m, "x"), &got), 0);
	ck_assert_int_eq(got.disp, 100);
	clf_proto_layout_release(&got);

	ck_assert_int_eq(mc_create(m, ROOT, "r", 0644, 0, &rr, &rep), 0);
	ck_assert_uint_eq(rep.layout.nsubfiles, 2);
	ck_assert_uint_eq(rep.layout.subfiles[0].iod, 2);
	ck_assert_uint_eq(rep.layout.subfiles[1].iod, 3);
	clf_proto_create_rep_release(&rep);

	/* An iod the configuration lacks; overlapping subfiles. */
	subs[1].iod = 9;
	assert_fails(mc_create(m, ROOT, "bad", 0644, 0, &l, NULL), -EINVAL,
		     "iod 9");
	subs[1] = subs[0];
	assert_fails(mc_create(m, ROOT, "bad", 0644, 0, &l, NULL), -EINVAL,
		     NULL);
	rr.first_iod = NIODS;
	assert_fails(mc_create(m, ROOT, "bad", 0644, 0, &rr, NULL), -EINVAL,
		     "iod");
	assert_fails(mc_lookup(m, ROOT, "bad", 0, NULL), -ENOENT, NULL);
	CLF_Type_free(&t[0]);
	CLF_Type_free(&t[1]);
	mc_close(m);
}
END_TEST

START_TEST(test_paths_with_several_components)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_lookup_rep lk;
	struct clf_proto_attr d;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "a", 0755, &d), 0);
	ck_assert(S_ISDIR(d.mode));
	ck_assert_int_eq(mc_mkdir(m, ROOT, "a/b", 0700, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "a/b/f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_lookup(m, ROOT, "a/b/f", 0, &lk), 0);
	ck_assert(S_ISREG(lk.attr.mode));
	clf_proto_lookup_rep_release(&lk);
	/* Relative to another directory than the root. */
	ck_assert_int_eq(mc_lookup(m, d.ino, "b/f", 0, &lk), 0);
	clf_proto_lookup_rep_release(&lk);
	assert_fails(mc_mkdir(m, ROOT, "a/b", 0755, NULL), -EEXIST, NULL);
	assert_fails(mc_create(m, ROOT, "a/b/f/g", 0644, 0, NULL, NULL),
		     -ENOTDIR, "not a directory");
	assert_fails(mc_lookup(m, ROOT, "a/x/f", 0, NULL), -ENOENT, NULL);
	assert_fails(mc_lookup(m, 987654, "f", 0, NULL), -ENOENT, NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_readdir_pages_list_every_entry_once)
{
	enum { N = 250, PAGE = 7 };
	struct mc *m = mc_open(&H);
	uint64_t dir, cookie = 0, last = 0;
	bool seen[N] = { false }, eof = false;
	int total = 0;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	dir = mc_ino(m, "d");
	for (int i = 0; i < N; i++) {
		char name[32];

		snprintf(name, sizeof(name), "d/file-%03d", i);
		if (i % 10 == 0)
			ck_assert_int_eq(mc_mkdir(m, ROOT, name, 0755, NULL),
					 0);
		else
			ck_assert_int_eq(mc_create(m, ROOT, name, 0644, 0,
						   NULL, NULL), 0);
	}
	for (int pages = 0; !eof && pages < N; pages++) {
		struct clf_proto_readdir_rep rep;

		ck_assert_int_eq(mc_readdir(m, dir, cookie, PAGE, &rep), 0);
		ck_assert_uint_le(rep.count, PAGE);
		for (uint32_t i = 0; i < rep.count; i++) {
			const struct clf_proto_dirent *e = &rep.ents[i];
			int k;

			ck_assert_int_eq(e->name.len, 8);
			ck_assert_int_eq(sscanf(e->name.ptr, "file-%3d", &k), 1);
			ck_assert(k >= 0 && k < N && !seen[k]);
			seen[k] = true;
			ck_assert(k % 10 == 0 ? S_ISDIR(e->mode)
					      : S_ISREG(e->mode));
			ck_assert_uint_gt(e->cookie, last);
			last = cookie = e->cookie;
			total++;
		}
		eof = rep.eof;
		clf_proto_readdir_rep_release(&rep);
	}
	ck_assert(eof);
	ck_assert_int_eq(total, N);
	assert_fails(mc_readdir(m, mc_ino(m, "d/file-001"), 0, 5, NULL),
		     -ENOTDIR, NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_rename_moves_and_replaces)
{
	struct mc *m = mc_open(&H);
	uint64_t f, g;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "g", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d/e", 0755, NULL), 0);
	f = mc_ino(m, "f");
	g = mc_ino(m, "g");

	assert_fails(mc_rename(m, ROOT, "f", ROOT, "g",
			       CLF_PROTO_RENAME_NOREPLACE), -EEXIST, NULL);
	/* Over an existing file: g now is f, the old g is gone. */
	ck_assert_int_eq(mc_rename(m, ROOT, "f", ROOT, "g", 0), 0);
	ck_assert_uint_eq(mc_ino(m, "g"), f);
	assert_fails(mc_lookup(m, ROOT, "f", 0, NULL), -ENOENT, NULL);
	assert_fails(mc_getattr(m, g, NULL), -ENOENT, NULL);
	/* Into another directory, by paths from two directories. */
	ck_assert_int_eq(mc_rename(m, ROOT, "g", mc_ino(m, "d"), "e/h", 0),
			 0);
	ck_assert_uint_eq(mc_ino(m, "d/e/h"), f);
	assert_fails(mc_rename(m, ROOT, "d", ROOT, "d/e/d2", 0), -EINVAL,
		     NULL);
	assert_fails(mc_rename(m, ROOT, "d/e/h", ROOT, "d", 0), -EISDIR,
		     NULL);
	assert_fails(mc_rename(m, ROOT, "nothing", ROOT, "x", 0), -ENOENT,
		     NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_unlink_and_rmdir)
{
	struct mc *m = mc_open(&H);

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "d/f", 0644, 0, NULL, NULL), 0);
	assert_fails(mc_rmdir(m, ROOT, "d"), -ENOTEMPTY, NULL);
	assert_fails(mc_unlink(m, ROOT, "d"), -EISDIR, NULL);
	assert_fails(mc_rmdir(m, ROOT, "d/f"), -ENOTDIR, NULL);
	/* No iod runs: the metadata goes all the same, the removal of
	 * the subfiles is queued and said so in the log. */
	ck_assert_int_eq(mc_unlink(m, ROOT, "d/f"), 0);
	assert_fails(mc_lookup(m, ROOT, "d/f", 0, NULL), -ENOENT, NULL);
	/* Tried after the reply, by metad's removal thread. */
	for (int t = 0; t < MH_WAIT_MS &&
	     !mh_log_has(&H, "their removal stays queued"); t += 50)
		usleep(50 * 1000);
	ck_assert(mh_log_has(&H, "their removal stays queued"));
	ck_assert_int_eq(mc_rmdir(m, ROOT, "d"), 0);
	assert_fails(mc_lookup(m, ROOT, "d", 0, NULL), -ENOENT, NULL);
	assert_fails(mc_unlink(m, ROOT, "d"), -ENOENT, NULL);
	mc_close(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Attributes and layouts                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_setattr_changes_what_the_mask_names)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_attr a, b;
	struct clf_proto_setattr_req req = {
		.mask = CLF_PROTO_SETATTR_MODE | CLF_PROTO_SETATTR_UID |
			CLF_PROTO_SETATTR_MTIME,
		.mode = 0600,
		.uid = 42,
		.gid = 99,
		.mtime = 1234567890123456789LL,
	};

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	req.ino = mc_ino(m, "f");
	ck_assert_int_eq(mc_getattr(m, req.ino, &a), 0);
	ck_assert_int_eq(mc_setattr(m, &req, &b), 0);
	ck_assert_uint_eq(b.mode, S_IFREG | 0600);
	ck_assert_uint_eq(b.uid, 42);
	ck_assert_uint_eq(b.gid, a.gid);	/* not in the mask */
	ck_assert_int_eq(b.mtime, req.mtime);
	ck_assert_int_ge(b.ctime, a.ctime);
	ck_assert_int_eq(mc_getattr(m, req.ino, &a), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
	req.ino = 123456;
	assert_fails(mc_setattr(m, &req, NULL), -ENOENT, NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_update_size_only_grows)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_attr a;
	uint64_t ino;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	ck_assert_int_eq(mc_update_size(m, ino, 1000, 5000, &a), 0);
	ck_assert_int_eq(a.size, 1000);
	ck_assert_int_eq(mc_update_size(m, ino, 500, 6000, &a), 0);
	ck_assert_int_eq(a.size, 1000);
	ck_assert_int_eq(mc_getattr(m, ino, &a), 0);
	ck_assert_int_eq(a.size, 1000);
	assert_fails(mc_update_size(m, 987654, 1, 1, NULL), -ENOENT, NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_set_layout_only_while_empty)
{
	struct clf_proto_layout rr = {
		.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN,
		.stripe_size = 1024,
		.stripe_count = 3,
		.first_iod = 1,
	};
	struct clf_proto_layout got;
	struct mc *m = mc_open(&H);
	uint64_t ino;

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	ino = mc_ino(m, "f");
	ck_assert_int_eq(mc_set_layout(m, ino, &rr, &got), 0);
	ck_assert_uint_eq(got.nsubfiles, 3);
	ck_assert_uint_eq(got.subfiles[0].iod, 1);
	clf_proto_layout_release(&got);
	ck_assert_int_eq(mc_get_layout(m, ino, &got), 0);
	ck_assert_uint_eq(got.nsubfiles, 3);
	clf_proto_layout_release(&got);
	ck_assert_int_eq(mc_update_size(m, ino, 10, 1, NULL), 0);
	/* The store says -EBUSY (clf_proto.h still says -ENOTEMPTY). */
	assert_fails(mc_set_layout(m, ino, &rr, NULL), -EBUSY, "empty");
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	assert_fails(mc_get_layout(m, mc_ino(m, "d"), &got), -EISDIR, NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_truncate_fails_cleanly_when_an_iod_is_unreachable)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_setattr_req req = {
		.mask = CLF_PROTO_SETATTR_SIZE,
		.size = 100000,
	};
	struct clf_proto_attr a;
	char want[128];

	ck_assert_int_eq(mc_create(m, ROOT, "f", 0644, 0, NULL, NULL), 0);
	req.ino = mc_ino(m, "f");
	snprintf(want, sizeof(want),
		 "cannot truncate 'ino %llu' on iod 0 (127.0.0.1:%d)",
		 (unsigned long long)req.ino, H.port + 1);
	assert_fails(mc_setattr(m, &req, NULL), -EHOSTDOWN, want);
	ck_assert_int_eq(mc_getattr(m, req.ino, &a), 0);
	ck_assert_int_eq(a.size, 0);
	/* A directory is refused before any iod is asked. */
	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	req.ino = mc_ino(m, "d");
	assert_fails(mc_setattr(m, &req, NULL), -EISDIR, NULL);
	mc_close(m);
}
END_TEST

START_TEST(test_statfs_fails_naming_the_unreachable_iod)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_statfs st;
	char want[64];

	snprintf(want, sizeof(want), "iod 0 (127.0.0.1:%d)", H.port + 1);
	assert_fails(mc_statfs(m, &st), -EHOSTDOWN, want);
	ck_assert_int_eq(mc_ping(m), 0);
	mc_close(m);
}
END_TEST

START_TEST(test_unknown_and_iod_opcodes_get_enosys)
{
	struct mc *m = mc_open(&H);
	struct wire_reader r;

	assert_fails(mc_call(m, 999, NULL, 0, &r), -ENOSYS, "unknown opcode");
	assert_fails(mc_call(m, CLF_PROTO_OP_SUB_READ, "12345678", 8, &r),
		     -ENOSYS, "iod request");
	assert_fails(mc_call(m, CLF_PROTO_OP_HELLO, NULL, 0, &r), -EPROTO,
		     NULL);
	ck_assert_int_eq(mc_ping(m), 0);
	mc_close(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The program                                                         */
/* ------------------------------------------------------------------ */

START_TEST(test_restart_keeps_the_namespace)
{
	struct mc *m = mc_open(&H);
	uint64_t ino;

	ck_assert_int_eq(mc_mkdir(m, ROOT, "d", 0755, NULL), 0);
	ck_assert_int_eq(mc_create(m, ROOT, "d/f", 0644, 0, NULL, NULL), 0);
	ck_assert_int_eq(mc_update_size(m, mc_ino(m, "d/f"), 77, 1, NULL), 0);
	ino = mc_ino(m, "d/f");
	mc_close(m);
	mh_stop(&H);
	ck_assert(mh_log_has(&H, "stopped on SIGTERM"));
	ck_assert_int_ne(access(H.meta, F_OK), -1);
	mh_start(&H);
	m = mc_open(&H);
	ck_assert_uint_eq(mc_ino(m, "d/f"), ino);
	{
		struct clf_proto_attr a;

		ck_assert_int_eq(mc_getattr(m, ino, &a), 0);
		ck_assert_int_eq(a.size, 77);
	}
	mc_close(m);
}
END_TEST

START_TEST(test_sigterm_closes_open_connections)
{
	struct mc *m = mc_open(&H);
	struct wire_reader r;

	ck_assert_int_eq(mc_ping(m), 0);
	mh_stop(&H);
	ck_assert_int_ne(mc_call(m, CLF_PROTO_OP_PING, NULL, 0, &r), 0);
	mc_close(m);
}
END_TEST

START_TEST(test_sigint_stops_cleanly_too)
{
	int status;

	ck_assert_int_eq(kill(H.metad, SIGINT), 0);
	status = mh_wait_exit(&H);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "status 0x%x", status);
	ck_assert(mh_log_has(&H, "stopped on SIGINT"));
	/* And the store is free for the next one. */
	mh_start(&H);
}
END_TEST

START_TEST(test_second_metad_on_the_store_is_refused)
{
	const char *args[] = { "-c", H.conf, "-f", "--log", "-", NULL };
	char err[1024];
	int status = mh_run_metad(args, err, sizeof(err));

	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		      "status 0x%x", status);
	ck_assert_msg(strstr(err, "another metad is running on the store"),
		      "stderr: %s", err);
	ck_assert(mh_alive(&H));
}
END_TEST

/* Whether pid has ended: no such process, or a zombie that whoever
 * adopted the daemon has not reaped yet. */
static bool gone(pid_t pid)
{
	char path[64], stat[256];
	FILE *f;
	bool zombie = false;

	if (kill(pid, 0) == -1 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	if (fgets(stat, sizeof(stat), f)) {
		const char *p = strrchr(stat, ')');

		zombie = p && p[1] == ' ' && p[2] == 'Z';
	}
	fclose(f);
	return zombie;
}

START_TEST(test_daemon_mode_reports_ready_and_stops_on_sigterm)
{
	const char *args[] = { "-c", H.conf, NULL };
	char pidfile[MH_LONG + 16], err[1024];
	struct mc *m;
	long pid = 0;
	int status;
	FILE *f;

	/* The store is free once the foreground metad is gone. */
	mh_stop(&H);
	status = mh_run_metad(args, err, sizeof(err));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "status 0x%x, stderr: %s", status, err);
	snprintf(pidfile, sizeof(pidfile), "%s/metad.pid", H.meta);
	f = fopen(pidfile, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	mh_track_pid(&H, (pid_t)pid);
	/* Ready means serving, at once. */
	m = mc_open(&H);
	ck_assert_int_eq(mc_ping(m), 0);
	mc_close(m);
	ck_assert_int_eq(kill((pid_t)pid, SIGTERM), 0);
	for (int i = 0; i < MH_WAIT_MS / 10 && !gone((pid_t)pid); i++)
		usleep(10 * 1000);
	ck_assert_msg(gone((pid_t)pid), "daemon %ld still runs", pid);
	ck_assert_int_eq(access(pidfile, F_OK), -1);
	/* The default log is in the store's directory. */
	snprintf(pidfile, sizeof(pidfile), "%s/metad.log", H.meta);
	ck_assert_int_eq(access(pidfile, F_OK), 0);
}
END_TEST

START_TEST(test_daemon_mode_reports_a_failure_to_start)
{
	const char *args[] = { "-c", H.conf, NULL };
	char err[1024];
	int status;

	/* The foreground metad holds the port and the store. */
	status = mh_run_metad(args, err, sizeof(err));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
		      "status 0x%x", status);
	ck_assert_msg(strstr(err, "another metad"), "stderr: %s", err);
}
END_TEST

START_TEST(test_config_without_secret_is_refused)
{
	const char *args[] = { "-c", H.conf, "-f", NULL };
	char err[1024];
	FILE *f = fopen(H.conf, "w");
	int status;

	ck_assert_ptr_nonnull(f);
	fprintf(f, "[metad]\naddress = 127.0.0.1:1\ndir = %s/other\n"
		   "[iod]\naddress = 127.0.0.1:2\n", H.base);
	fclose(f);
	status = mh_run_metad(args, err, sizeof(err));
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	ck_assert_msg(strstr(err, "no secret"), "stderr: %s", err);
	ck_assert(mh_run_metad((const char *[]){ "--bogus", NULL }, NULL, 0) !=
		  0);
}
END_TEST

/* Workers watch a connection for its next request without sleeping, as
 * on a machine with cores to spare (mds_server.c); long, so that even a
 * loaded 2-core machine's client comes back within the watch. */
static void setup_watching(void)
{
	mh_init(&H, NIODS, TIMEOUT_MS);
	H.env[0] = "CLF_METAD_LINGER_SPIN_US=20000";
	mh_start(&H);
}


START_TEST(test_a_client_in_a_loop_is_served_by_a_worker_watching_its_connection)
{
	struct mc *m = mc_open(&H);
	struct clf_proto_attr a;
	long n;

	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(mc_getattr(m, ROOT, &a), 0);
	mc_close(m);
	mh_stop(&H);
	n = mh_log_number_before(&H, " requests came while a worker watched");
	ck_assert_msg(n > 0,
		      "metad logged %ld requests that came while a worker watched their connection; want some of 200 in a loop",
		      n);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metad_ops");
	TCase *tc = tcase_create("ops");
	TCase *tw = tcase_create("watching");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_auth_with_the_secret_serves);
	tcase_add_test(tc, test_auth_with_a_wrong_secret_is_refused_and_logged);
	tcase_add_test(tc, test_create_round_robin_uses_the_configured_defaults);
	tcase_add_test(tc, test_create_existing_opens_it_unless_exclusive);
	tcase_add_test(tc,
		       test_create_with_explicit_and_custom_round_robin_layouts);
	tcase_add_test(tc, test_paths_with_several_components);
	tcase_add_test(tc, test_readdir_pages_list_every_entry_once);
	tcase_add_test(tc, test_rename_moves_and_replaces);
	tcase_add_test(tc, test_unlink_and_rmdir);
	tcase_add_test(tc, test_setattr_changes_what_the_mask_names);
	tcase_add_test(tc, test_update_size_only_grows);
	tcase_add_test(tc, test_set_layout_only_while_empty);
	tcase_add_test(tc,
		       test_truncate_fails_cleanly_when_an_iod_is_unreachable);
	tcase_add_test(tc, test_statfs_fails_naming_the_unreachable_iod);
	tcase_add_test(tc, test_unknown_and_iod_opcodes_get_enosys);
	tcase_add_test(tc, test_restart_keeps_the_namespace);
	tcase_add_test(tc, test_sigterm_closes_open_connections);
	tcase_add_test(tc, test_sigint_stops_cleanly_too);
	tcase_add_test(tc, test_second_metad_on_the_store_is_refused);
	tcase_add_test(tc, test_daemon_mode_reports_ready_and_stops_on_sigterm);
	tcase_add_test(tc, test_daemon_mode_reports_a_failure_to_start);
	tcase_add_test(tc, test_config_without_secret_is_refused);
	tcase_add_test(tc,
		test_create_plain_is_refused_where_the_directory_has_a_default);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tw, setup_watching, teardown);
	tcase_set_timeout(tw, 120);
	tcase_add_test(tw,
		test_a_client_in_a_loop_is_served_by_a_worker_watching_its_connection);
	suite_add_tcase(s, tw);
	return s;
}

int main(void)
{
	return mh_main(suite());
}
