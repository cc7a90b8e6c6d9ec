/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proto_codecs.h -- every message body codec of libclf/runtime/proto.h
 * in one table, with a valid sample of each: shared by the unit tests
 * (tests/unit/test_proto.c, test_proto_golden.c), the fuzz target and its
 * seed generator.  The table is made from CLF_PROTO_MESSAGES, so that a
 * message declared in proto.h is tested and fuzzed once it has a sample
 * s_<name> here (and golden bytes in test_proto_golden.c).
 *
 * Static functions and data only; include from exactly one .c per program.
 */
#ifndef CLF_TESTS_PROTO_CODECS_H
#define CLF_TESTS_PROTO_CODECS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

/* Storage for any decoded message, by codec name. */
#define PROTO_ANY_MEMBER(NAME, TYPE, ...) struct clf_proto_##TYPE NAME;
union proto_any {
	struct clf_proto_error error;
	CLF_PROTO_MESSAGES(PROTO_ANY_MEMBER)
};

struct proto_codec {
	const char *name;
	int (*encode)(struct wire_writer *w, const void *m);
	int (*decode)(struct wire_reader *r, void *m);
	void (*release)(void *m);
	const void *sample;
};

static void proto_no_release(void *m)
{
	(void)m;
}

/* Wrappers with one signature for the table (no calls through casts). */
#define PROTO_CODEC(NAME, TYPE, ENC, DEC)				\
	static int enc_##NAME(struct wire_writer *w, const void *m)	\
	{								\
		return ENC(w, (const struct TYPE *)m);			\
	}								\
	static int dec_##NAME(struct wire_reader *r, void *m)		\
	{								\
		return DEC(r, (struct TYPE *)m);			\
	}
#define PROTO_RELEASE(NAME, TYPE, REL)					\
	static void rel_##NAME(void *m)					\
	{								\
		REL((struct TYPE *)m);					\
	}

PROTO_CODEC(error, clf_proto_error, clf_proto_error_encode,
	    clf_proto_error_decode)
#define PROTO_CODEC_OF(NAME, TYPE, ...)					\
	PROTO_CODEC(NAME, clf_proto_##TYPE, clf_proto_##NAME##_encode,	\
		    clf_proto_##NAME##_decode)				\
	PROTO_RELEASE(NAME, clf_proto_##TYPE, clf_proto_##NAME##_release)
CLF_PROTO_MESSAGES(PROTO_CODEC_OF)

/* ------------------------------------------------------------------ */
/* Samples: valid messages with every optional part present            */
/* ------------------------------------------------------------------ */

#define PSTR(s) { s, sizeof(s) - 1 }

static const uint8_t sample_type_a[] = { 'C', 'T', 1, 0, 9, 9, 9, 9 };
static const uint8_t sample_type_b[] = { 'C', 'T', 1, 0, 1, 2, 3 };
static const uint8_t sample_bytes[] = "some bulk data";

static const struct clf_proto_subfile sample_subfiles[] = {
	{ 0, { sample_type_a, sizeof(sample_type_a) } },
	{ 3, { sample_type_b, sizeof(sample_type_b) } },
	{ 1023, { sample_type_a, 1 } },
};

#define SAMPLE_ATTR { 42, 0100644, 1000, 100, 1, 123456789, \
		      1700000000000000001, 1700000000000000002, \
		      1700000000000000003 }
#define SAMPLE_LAYOUT { .kind = CLF_PROTO_LAYOUT_EXPLICIT, .disp = 4096, \
	.disp_iod = 2, .nsubfiles = 3, \
	.subfiles = (struct clf_proto_subfile *)sample_subfiles }

static const struct clf_proto_dirent sample_dirents[] = {
	{ 2, 10, 0040755, PSTR("dir") },
	{ 3, 11, 0100600, PSTR("a file with spaces") },
	{ 4, 12, 0100600, PSTR("...") },
};

static const struct clf_proto_error s_error = {
	PSTR("cannot create 'a/b': no such directory"),
};
static const struct clf_proto_hello s_hello = {
	.major = 1, .minor = 0, .role = PSTR("client"),
};
static const struct clf_proto_challenge s_challenge = {
	.major = 1, .minor = 7, .nonce = { 1, 2, 3, 4, 5, 6, 7, 8, 9 },
};
static const struct clf_proto_response s_response = {
	{ 9, 8, 7 }, { 0xff, 0xee },
};
static const struct clf_proto_auth_ok s_auth_ok = { { 0xaa, 0xbb, 0xcc } };
static const struct clf_proto_munge_response s_munge_response = {
	{ 5, 4, 3 }, PSTR("MUNGE:AwQFAAB0cmVkYWN0ZWQ=:"),
};
static const struct clf_proto_munge_ok s_munge_ok = {
	PSTR("MUNGE:AwQFAABzZXJ2ZXI=:"),
};
static const struct clf_proto_status s_status = { 1, 2, 3, 4, 5, 6, false, 0, 0 };
static const struct clf_proto_statfs s_statfs = {
	1ull << 40, 1ull << 39, 1ull << 38, 1000, 999, 4096, 255,
};
static const struct clf_proto_ino s_ino = { 0x0123456789abcdefull };
static const struct clf_proto_u32 s_u32 = { 0xdeadbeef };
static const struct clf_proto_data s_data = {
	{ sample_bytes, sizeof(sample_bytes) },
};
static const struct clf_proto_attr s_attr = SAMPLE_ATTR;
static const struct clf_proto_layout s_layout = SAMPLE_LAYOUT;
static const struct clf_proto_lookup_req s_lookup_req = {
	1, CLF_PROTO_LOOKUP_LAYOUT, PSTR("a/b/c"),
};
static const struct clf_proto_lookup_rep s_lookup_rep = {
	SAMPLE_ATTR, true, SAMPLE_LAYOUT,
};
static const struct clf_proto_create_req s_create_req = {
	1, PSTR("dir/file"), 0644, 1000, 100, CLF_PROTO_CREATE_EXCL,
	{ .kind = CLF_PROTO_LAYOUT_ROUND_ROBIN, .stripe_size = 65536,
	  .stripe_count = 4, .first_iod = CLF_PROTO_IOD_DEFAULT },
};
static const struct clf_proto_create_rep s_create_rep = {
	SAMPLE_ATTR, SAMPLE_LAYOUT,
};
static const struct clf_proto_mkdir_req s_mkdir_req = {
	1, PSTR("newdir"), 0755, 0, 0,
};
static const struct clf_proto_readdir_req s_readdir_req = { 1, 77, 100 };
static const struct clf_proto_readdir_rep s_readdir_rep = {
	3, true, (struct clf_proto_dirent *)sample_dirents,
};
static const struct clf_proto_rename_req s_rename_req = {
	1, PSTR("a/b"), 5, PSTR("c"), CLF_PROTO_RENAME_NOREPLACE,
};
static const struct clf_proto_path_req s_path_req = { 9, PSTR("x/y") };
static const struct clf_proto_resolve_req s_resolve_req = { 1, PSTR("a/b/c") };
static const struct clf_proto_resolve_rep s_resolve_rep = {
	(1ull << 56) | 7, 3,
};
static const struct clf_proto_peer_req s_peer_req = {
	8, 0x1234, (2ull << 56) | 9, 42, 0100644, 1, 2, 1, PSTR("name"),
};
static const struct clf_proto_peer_rep s_peer_rep = {
	{ 42, 040755, 0, 0, 2, 0, 1, 2, 3 }, 77,
};
static const struct clf_proto_setattr_req s_setattr_req = {
	42, CLF_PROTO_SETATTR_MODE | CLF_PROTO_SETATTR_SIZE |
	    CLF_PROTO_SETATTR_MTIME_NOW, 0600, 0, 0, -5, 7, 1 << 20,
};
static const struct clf_proto_set_layout_req s_set_layout_req = {
	42, SAMPLE_LAYOUT,
};
static const struct clf_proto_update_size_req s_update_size_req = {
	42, 1 << 30, 1700000000000000000,
};
static const struct clf_proto_append_req s_append_req = {
	42, 1 << 30, 4096, CLF_PROTO_APPEND_EXACT,
};
static const struct clf_proto_append_rep s_append_rep = { (1ll << 30) + 17 };
static const struct clf_proto_lock_req s_setlk_req = {
	42, 0xfeedfacecafebeefull, 4096, 0, CLF_PROTO_LOCK_WRITE,
	CLF_PROTO_LOCK_WAIT, 1500, 12345,
};
static const struct clf_proto_lock_req s_getlk_req = {
	42, 7, CLF_PROTO_LOCK_OFFSET_MAX, 1, CLF_PROTO_LOCK_READ, 0, 0, 1,
};
static const struct clf_proto_lock_holder s_lock_holder = {
	CLF_PROTO_LOCK_WRITE, 100, 50, 4242,
};
static const struct clf_proto_unlock_owner_req s_unlock_owner_req = {
	42, 0xfeedfacecafebeefull,
};
static const struct clf_proto_symlink_req s_symlink_req = {
	1, PSTR("d/link"), PSTR("../target/file"), 1000, 100,
};
static const struct clf_proto_readlink_rep s_readlink_rep = {
	0, PSTR("/abs/target"),
};
static const struct clf_proto_link_req s_link_req = {
	42, 7, PSTR("other/name"),
};
static const struct clf_proto_mknod_req s_mknod_req = {
	1, PSTR("dev/null2"), 0020000 | 0666, 0, 0, 0x0103,
};
static const struct clf_proto_sub_read_req s_sub_read_req = {
	42, 3, 1 << 20, 65536,
};
static const struct clf_proto_sub_write_req s_sub_write_req = {
	42, CLF_PROTO_SUBFILE_HEAD, 100, { sample_bytes, sizeof(sample_bytes) },
};
static const struct clf_proto_view_register_req s_view_register_req = {
	42, 1, 0, { sample_type_a, sizeof(sample_type_a) },
	512, { sample_type_b, sizeof(sample_type_b) },
};
static const struct clf_proto_view_io_req s_view_read_req = {
	7, CLF_PROTO_VIEW_COLLECTIVE, 1000, 5000, 0x1234, 16, { NULL, 0 },
};
static const struct clf_proto_view_io_req s_view_write_req = {
	7, 0, 0, 100, 0, 0, { sample_bytes, sizeof(sample_bytes) },
};
static const struct clf_proto_truncate_req s_truncate_req = { 42, 0, 0 };
static const struct clf_proto_remove_req s_remove_req = {
	42, CLF_PROTO_SUBFILE_ALL,
};
static const struct clf_proto_sub_sizes_req s_sub_sizes_req = {
	42, 3, { 0, 7, CLF_PROTO_SUBFILE_HEAD },
};
static const struct clf_proto_sub_sizes s_sub_sizes = {
	3, { 0, 1234567, 1ll << 50 },
};

static const struct clf_proto_sub_list_req s_sub_list_req = {
	42, CLF_PROTO_SUBFILE_HEAD, CLF_PROTO_SUB_LIST_MAX,
};
static const struct clf_proto_sub_list s_sub_list = {
	true, 2, { 42, 0xdeadbeef }, { 3, CLF_PROTO_SUBFILE_HEAD },
	{ 0, 1ll << 40 },
};

static const struct clf_proto_iod_addr sample_iod_addrs[] = {
	{ PSTR("10.0.0.2:7001") }, { PSTR("[::1]:7002") },
};
static const struct clf_proto_instance s_instance = {
	65536, 2, 0, 5000, 30, 2, (struct clf_proto_iod_addr *)sample_iod_addrs,
	false, 0, 0, NULL,	/* as 1.16 (the metads: a golden variant) */
};
static const struct clf_proto_sub_vec_req s_sub_readv_req = {
	42, 2, { 0, CLF_PROTO_SUBFILE_HEAD }, { 4096, 0 }, { 1000, 24 },
	{ NULL, 0 },
};
static const struct clf_proto_sub_vec_req s_sub_writev_req = {
	42, 2, { 3, 1 }, { 100, 1ll << 33 }, { 10, 5 },
	{ sample_bytes, sizeof(sample_bytes) },
};
static const struct clf_proto_lock_callback_req s_lock_callback_req = {
	0x1122334455667788ull,
};
static const struct clf_proto_lock_enqueue_req s_lock_enqueue_req = {
	0x1122334455667788ull, 42, 1, CLF_PROTO_LOCK_PW, 4096, 5120,
	false, 0, 0, false, 0,
};
static const struct clf_proto_lock_grant s_lock_grant = {
	7, 0, CLF_PROTO_LOCK_EOF, false, 0, 0, false, 0,
};
static const struct clf_proto_lock_release_req s_lock_release_req = {
	0x1122334455667788ull, 7,
};
static const struct clf_proto_revoke s_revoke = {
	7, 42, 1, 1 << 20, 2 << 20,
};
static const struct clf_proto_readdirplus_req s_readdirplus_req = {
	1, 77, 100, CLF_PROTO_READDIRPLUS_LAYOUT,
};
#define SAMPLE_DIR_ATTR { 2, 0040755, 0, 0, 2, 0, 1, 2, 3 }
static const struct clf_proto_dirent_plus sample_dirents_plus[] = {
	{ 10, PSTR("dir"), 2, 0040755, true, SAMPLE_DIR_ATTR, false, { 0 } },
	{ 11, PSTR("a file"), 42, 0100644, true, SAMPLE_ATTR, true,
	  SAMPLE_LAYOUT },
	{ 12, PSTR("remote"), 0x0200000000000007ull, 0100600, false, { 0 },
	  false, { 0 } },
};
static const struct clf_proto_readdirplus_rep s_readdirplus_rep = {
	3, true, (struct clf_proto_dirent_plus *)sample_dirents_plus,
};
static const struct clf_proto_sub_sizes_many_req s_sub_sizes_many_req = {
	3, { 42, 42, 0xdeadbeef }, { 0, CLF_PROTO_SUBFILE_HEAD, 1023 },
};
static const struct clf_proto_remove_many_req s_remove_many_req = {
	2, { 42, 0xdeadbeefcafeull },
};
static const struct clf_proto_remove_many_rep s_remove_many_rep = {
	2, { 0, EIO },
};
static const struct clf_proto_merged_piece sample_merged_pieces[] = {
	{ 40001, CLF_PROTO_OP_VIEW_WRITE, { sample_bytes, sizeof(sample_bytes) } },
	{ 40002, CLF_PROTO_OP_VIEW_READ, { NULL, 0 } },
};
static const struct clf_proto_view_merged_req s_view_merged_req = {
	2, (struct clf_proto_merged_piece *)sample_merged_pieces,
};
static const struct clf_proto_merged_answer sample_merged_answers[] = {
	{ 0, { sample_bytes, 4 } },
	{ ETIMEDOUT, { NULL, 0 } },
};
static const struct clf_proto_view_merged_rep s_view_merged_rep = {
	2, (struct clf_proto_merged_answer *)sample_merged_answers,
};
static const struct clf_proto_fence_req s_fence_req = {
	0x0100000000000042ull, CLF_PROTO_FENCE_MOVING,
};
static const struct clf_proto_sub_move_req s_sub_move_req = {
	42, 3, 1, 2, CLF_PROTO_MOVE_COMMIT,
};

#define PROTO_ENTRY(NAME, ...) \
	{ #NAME, enc_##NAME, dec_##NAME, rel_##NAME, &s_##NAME },

/* The error body (hand-written: an empty one decodes), then the rest. */
static const struct proto_codec proto_codecs[] = {
	{ "error", enc_error, dec_error, proto_no_release, &s_error },
	CLF_PROTO_MESSAGES(PROTO_ENTRY)
};

#define PROTO_NCODECS (sizeof(proto_codecs) / sizeof(proto_codecs[0]))

/*
 * Encode m with codec c into a new buffer (caller frees): its length in
 * *len.  Returns the encoder's error, or -ENOMEM.
 */
static inline int proto_codec_encode(const struct proto_codec *c,
				     const void *m, uint8_t **buf, size_t *len)
{
	struct wire_writer w = { NULL, 0, 0 };
	int err = c->encode(&w, m);

	if (err)
		return err;
	*buf = malloc(w.pos ? w.pos : 1);
	if (!*buf)
		return -ENOMEM;
	w = (struct wire_writer){ *buf, w.pos, 0 };
	err = c->encode(&w, m);
	if (err) {
		free(*buf);
		return err;
	}
	*len = w.pos;
	return 0;
}

#endif /* CLF_TESTS_PROTO_CODECS_H */
