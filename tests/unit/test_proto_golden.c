// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto_golden.c -- the wire format, byte for byte: every message
 * body of the fuzzer's table (tests/fuzz/proto_codecs.h) and the variants
 * its samples leave out, encoded and compared with bytes captured from
 * protocol 1.8's hand-written codec.  A change to the declarations that
 * moves one byte fails here; a deliberate change of the wire format bumps
 * the protocol version and recaptures these (the failure message prints
 * the bytes the codec now writes).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "clf.h"
#include "proto.h"

#include "../fuzz/proto_codecs.h"

struct golden {
	const char *name;
	const char *hex;	/* the encoding, two hex digits a byte */
};

/* The samples of proto_codecs.h, by codec name. */
static const struct golden golden_codecs[] = {
	{ "error",
	  "260063616e6e6f74206372656174652027612f62273a206e6f20737563682064"
	  "69726563746f7279" },
	{ "hello",
	  "010000000600636c69656e74" },
	{ "challenge",
	  "0100070001020304050607080900000000000000000000000000000000000000"
	  "00000000" },
	{ "response",
	  "0908070000000000000000000000000000000000000000000000000000000000"
	  "ffee000000000000000000000000000000000000000000000000000000000000" },
	{ "auth_ok",
	  "aabbcc0000000000000000000000000000000000000000000000000000000000" },
	{ "status",
	  "0100000000000000020000000000000003000000000000000400000000000000"
	  "0500000006000000" },
	{ "statfs",
	  "000000000001000000000000800000000000000040000000e803000000000000"
	  "e70300000000000000100000ff000000" },
	{ "ino",
	  "efcdab8967452301" },
	{ "u32",
	  "efbeadde" },
	{ "data",
	  "0f000000736f6d652062756c6b206461746100" },
	{ "attr",
	  "2a00000000000000a4810000e8030000640000000100000015cd5b0700000000"
	  "01002a36fe9c971702002a36fe9c971703002a36fe9c9717" },
	{ "layout",
	  "0200100000000000000200000003000000000000000800000043540100090909"
	  "09030000000700000043540100010203ff0300000100000043" },
	{ "lookup_req",
	  "0100000000000000010000000500612f622f63" },
	{ "lookup_rep",
	  "2a00000000000000a4810000e8030000640000000100000015cd5b0700000000"
	  "01002a36fe9c971702002a36fe9c971703002a36fe9c97170102001000000000"
	  "0000020000000300000000000000080000004354010009090909030000000700"
	  "000043540100010203ff0300000100000043" },
	{ "create_req",
	  "010000000000000008006469722f66696c65a4010000e8030000640000000100"
	  "000001000001000000000004000000ffffffff" },
	{ "create_rep",
	  "2a00000000000000a4810000e8030000640000000100000015cd5b0700000000"
	  "01002a36fe9c971702002a36fe9c971703002a36fe9c97170200100000000000"
	  "0002000000030000000000000008000000435401000909090903000000070000"
	  "0043540100010203ff0300000100000043" },
	{ "mkdir_req",
	  "010000000000000006006e6577646972ed0100000000000000000000" },
	{ "readdir_req",
	  "01000000000000004d0000000000000064000000" },
	{ "readdir_rep",
	  "030000000102000000000000000a00000000000000ed41000003006469720300"
	  "0000000000000b00000000000000808100001200612066696c65207769746820"
	  "73706163657304000000000000000c000000000000008081000003002e2e2e" },
	{ "rename_req",
	  "01000000000000000300612f62050000000000000001006301000000" },
	{ "path_req",
	  "09000000000000000300782f79" },
	{ "peer_rep", "2a00000000000000ed41000000000000000000000200000000000000000000000100000000000000020000000000000003000000000000004d00000000000000" },
	{ "peer_req", "08000000341200000000000009000000000000022a00000000000000a481000001000000020000000100000004006e616d65" },
	{ "resolve_rep", "070000000000000103000000" },
	{ "resolve_req", "01000000000000000500612f622f63" },
	{ "setattr_req",
	  "2a0000000000000089000000800100000000000000000000fbffffffffffffff"
	  "07000000000000000000100000000000" },
	{ "set_layout_req",
	  "2a00000000000000020010000000000000020000000300000000000000080000"
	  "004354010009090909030000000700000043540100010203ff03000001000000"
	  "43" },
	{ "update_size_req",
	  "2a00000000000000000000400000000000002a36fe9c9717" },
	{ "append_req",
	  "2a000000000000000000004000000000001000000000000001000000" },
	{ "append_rep",
	  "1100004000000000" },
	{ "setlk_req",
	  "2a00000000000000efbefecacefaedfe00100000000000000000000000000000"
	  "0200000001000000dc05000039300000" },
	{ "getlk_req",
	  "2a000000000000000700000000000000ffffffffffffff7f0100000000000000"
	  "01000000000000000000000001000000" },
	{ "lock_holder",
	  "020000006400000000000000320000000000000092100000" },
	{ "unlock_owner_req",
	  "2a00000000000000efbefecacefaedfe" },
	{ "sub_read_req",
	  "2a0000000000000003000000000010000000000000000100" },
	{ "sub_write_req",
	  "2a00000000000000ffffffff64000000000000000f000000736f6d652062756c"
	  "6b206461746100" },
	{ "view_register_req",
	  "2a00000000000000010000000000000000000000080000004354010009090909"
	  "00020000000000000700000043540100010203" },
	{ "view_read_req",
	  "0700000001000000e80300000000000088130000000000003412000000000000"
	  "10000000" },
	{ "view_write_req",
	  "0700000000000000000000000000000064000000000000000000000000000000"
	  "000000000f000000736f6d652062756c6b206461746100" },
	{ "truncate_req",
	  "2a00000000000000000000000000000000000000" },
	{ "remove_req",
	  "2a00000000000000feffffff" },
	{ "sub_sizes_req",
	  "2a00000000000000030000000000000007000000ffffffff" },
	{ "sub_sizes",
	  "03000000000000000000000087d61200000000000000000000000400" },
	{ "munge_response",
	  "0504030000000000000000000000000000000000000000000000000000000000"
	  "1b004d554e47453a4177514641414230636d566b59574e305a57513d3a" },
	{ "munge_ok",
	  "17004d554e47453a417751464141427a5a584a325a58493d3a" },
	{ "symlink_req",
	  "01000000000000000600642f6c696e6b0e002e2e2f7461726765742f66696c65"
	  "e803000064000000" },
	{ "readlink_rep",
	  "00000000000000000b002f6162732f746172676574" },
	{ "link_req",
	  "2a0000000000000007000000000000000a006f746865722f6e616d65" },
	{ "mknod_req",
	  "010000000000000009006465762f6e756c6c32b6210000000000000000000003"
	  "01000000000000" },
	{ "sub_list_req",
	  "2a00000000000000ffffffff00040000" },
	{ "sub_list",
	  "01020000002a00000000000000efbeadde0000000003000000ffffffff00000000"
	  "000000000000000000010000" },
	{ "instance",
	  "00000100000000000200000000000000881300001e000000020000000d003130"
	  "2e302e302e323a373030310a005b3a3a315d3a37303032" },
	{ "sub_readv_req",
	  "2a000000000000000200000000000000ffffffff001000000000000000000000"
	  "00000000e803000018000000" },
	{ "sub_writev_req",
	  "2a00000000000000020000000300000001000000640000000000000000000000"
	  "020000000a000000050000000f000000736f6d652062756c6b206461746100" },
	{ "lock_callback_req", "8877665544332211" },
	{ "lock_enqueue_req",
	  "88776655443322112a000000000000000100000002000000"
	  "00100000000000000014000000000000" },
	{ "lock_grant",
	  "07000000000000000000000000000000ffffffffffffff7f" },
	{ "lock_release_req", "88776655443322110700000000000000" },
	{ "revoke",
	  "07000000000000002a0000000000000001000000"
	  "00001000000000000000200000000000" },
	{ "readdirplus_req",
	  "01000000000000004d000000000000006400000001000000" },
	{ "readdirplus_rep",
	  "03000000010a0000000000000003006469720200000000000000ed4100000102"
	  "00000000000000ed410000000000000000000002000000000000000000000001"
	  "0000000000000002000000000000000300000000000000000b00000000000000"
	  "0600612066696c652a00000000000000a4810000012a00000000000000a48100"
	  "00e8030000640000000100000015cd5b070000000001002a36fe9c971702002a"
	  "36fe9c971703002a36fe9c971701020010000000000000020000000300000000"
	  "000000080000004354010009090909030000000700000043540100010203ff03"
	  "000001000000430c00000000000000060072656d6f7465070000000000000280"
	  "81000000" },
	{ "sub_sizes_many_req",
	  "030000002a000000000000002a00000000000000efbeadde0000000000000000"
	  "ffffffffff030000" },
	{ "remove_many_req",
	  "020000002a00000000000000fecaefbeadde0000" },
	{ "remove_many_rep",
	  "020000000000000005000000" },
	{ "fence_req", "420000000000000101000000" },
	{ "view_merged_req",
	  "02000000419c05020f000000736f6d652062756c6b206461746100"
	  "429c040200000000" },
	{ "view_merged_rep",
	  "020000000000000004000000736f6d65" "6e00000000000000" },
	{ "sub_move_req",
	  "2a00000000000000030000000100000002000000" "02000000" },
};

/* Variants: optional parts absent or present, heads, other kinds. */
typedef int (*golden_enc)(struct wire_writer *w, const void *m);

#define GOLD_ENC(NAME, TYPE, FN)					\
	static int gold_##NAME(struct wire_writer *w, const void *m)	\
	{								\
		return FN(w, (const struct TYPE *)m);			\
	}

GOLD_ENC(hello, clf_proto_hello, clf_proto_hello_encode)
GOLD_ENC(challenge, clf_proto_challenge, clf_proto_challenge_encode)
GOLD_ENC(lookup_rep, clf_proto_lookup_rep, clf_proto_lookup_rep_encode)
GOLD_ENC(layout, clf_proto_layout, clf_proto_layout_encode)
GOLD_ENC(readdir_rep, clf_proto_readdir_rep, clf_proto_readdir_rep_encode)
GOLD_ENC(error, clf_proto_error, clf_proto_error_encode)
GOLD_ENC(data, clf_proto_data, clf_proto_data_encode)
GOLD_ENC(data_head, clf_proto_data, clf_proto_data_encode_head)
GOLD_ENC(view_read, clf_proto_view_io_req, clf_proto_view_read_req_encode)
GOLD_ENC(view_write, clf_proto_view_io_req, clf_proto_view_write_req_encode)
GOLD_ENC(view_write_head, clf_proto_view_io_req,
	 clf_proto_view_write_req_encode_head)
GOLD_ENC(sub_write_head, clf_proto_sub_write_req,
	 clf_proto_sub_write_req_encode_head)
GOLD_ENC(symlink_req, clf_proto_symlink_req, clf_proto_symlink_req_encode)
GOLD_ENC(readlink_rep, clf_proto_readlink_rep, clf_proto_readlink_rep_encode)
GOLD_ENC(link_req, clf_proto_link_req, clf_proto_link_req_encode)
GOLD_ENC(mknod_req, clf_proto_mknod_req, clf_proto_mknod_req_encode)
GOLD_ENC(reqid, clf_proto_reqid, clf_proto_reqid_encode)
GOLD_ENC(create_req, clf_proto_create_req, clf_proto_create_req_encode)
GOLD_ENC(setlk_req, clf_proto_lock_req, clf_proto_setlk_req_encode)
GOLD_ENC(sub_sizes_req, clf_proto_sub_sizes_req,
	 clf_proto_sub_sizes_req_encode)
GOLD_ENC(instance, clf_proto_instance, clf_proto_instance_encode)
GOLD_ENC(status, clf_proto_status, clf_proto_status_encode)
GOLD_ENC(lock_enqueue_req, clf_proto_lock_enqueue_req,
	 clf_proto_lock_enqueue_req_encode)
GOLD_ENC(lock_grant, clf_proto_lock_grant, clf_proto_lock_grant_encode)

static const struct clf_proto_hello v_hello_kx = {
	.major = 1, .minor = 8, .role = PSTR("iod"), .has_kx = true,
	.protection = 2, .kx = { 1, 2, 3, 4, 5, 6, 7, 8, [31] = 0xee },
};
static const struct clf_proto_challenge v_challenge_kx = {
	.major = 1, .minor = 8, .nonce = { 0x10, [31] = 0x1f },
	.has_kx = true, .protection = 1, .kx = { 0xa0, [31] = 0xaf },
};
static const struct clf_proto_lookup_rep v_lookup_rep_plain = {
	SAMPLE_ATTR, false, { 0 },
};
static const struct clf_proto_layout v_layout_rr = {
	.kind = CLF_PROTO_LAYOUT_ROUND_ROBIN, .stripe_size = 1 << 20,
	.stripe_count = 8, .first_iod = 5,
};
static const struct clf_proto_readdir_rep v_readdir_rep_empty = {
	0, false, NULL,
};
static const struct clf_proto_error v_error_empty = { { "", 0 } };
static const struct clf_proto_data v_data_empty = { { NULL, 0 } };
static const struct clf_proto_view_io_req v_view_read_plain = {
	3, 0, 0, 65536, 0, 0, { NULL, 0 },
};
static const struct clf_proto_view_io_req v_view_write_coll = {
	9, CLF_PROTO_VIEW_COLLECTIVE, 100, 200, 0xabcdef, 4,
	{ sample_bytes, sizeof(sample_bytes) },
};
static const struct clf_proto_symlink_req v_symlink_req = {
	1, PSTR("d/link"), PSTR("../target/file"), 1000, 100,
};
static const struct clf_proto_readlink_rep v_readlink_target = {
	0, PSTR("/abs/target"),
};
static const struct clf_proto_readlink_rep v_readlink_dev = {
	0x0000000800000001ull, { "", 0 },
};
static const struct clf_proto_link_req v_link_req = {
	42, 7, PSTR("other/name"),
};
static const struct clf_proto_mknod_req v_mknod_req = {
	1, PSTR("dev/null2"), S_IFCHR | 0666, 0, 0, 0x0103,
};
static const struct clf_proto_reqid v_reqid = {
	0x0102030405060708ull, 0x1112131415161718ull,
};
static const struct clf_proto_create_req v_create_req_explicit = {
	2, PSTR("f"), 0600, 1, 2, 0, SAMPLE_LAYOUT,
};
static const struct clf_proto_lock_req v_setlk_unlock = {
	1, 2, 0, 0, CLF_PROTO_LOCK_UNLOCK, 0, 0, 99,
};
static const struct clf_proto_sub_sizes_req v_sub_sizes_one = {
	43, 1, { 1023 },
};
/* 1.17: the metads follow the iods (here the same two addresses). */
static const struct clf_proto_instance v_instance_metads = {
	65536, 2, 0, 5000, 30, 2, (struct clf_proto_iod_addr *)sample_iod_addrs,
	true, 0, 2, (struct clf_proto_iod_addr *)sample_iod_addrs,
};
#define INSTANCE_METADS_HEX						\
	"00000100000000000200000000000000881300001e000000020000000d003130" \
	"2e302e302e323a373030310a005b3a3a315d3a37303032"			\
	"00000000020000000d0031302e302e302e323a373030310a005b3a3a315d3a" \
	"37303032"

/* 1.25: an iod's RDMA receive pool follows. */
static const struct clf_proto_status v_status_rx_pool = {
	1, 2, 3, 4, 5, 6, true, 184, 180,
};

/* 1.26: a strided lock, 1 KiB blocks every 2 KiB. */
static const struct clf_proto_lock_enqueue_req v_lock_enqueue_strided = {
	0x1122334455667788ull, 42, 1, CLF_PROTO_LOCK_PW, 4096, 5120,
	true, 2048, 1024, false, 0,
};
static const struct clf_proto_lock_grant v_lock_grant_strided = {
	7, 0, CLF_PROTO_LOCK_EOF, true, 2048, 1024, false, 0,
};

/* 1.27: strided in the file, IOR's 47008-byte segments of 2 processes,
 * the second's. */
static const struct clf_proto_lock_enqueue_req v_lock_enqueue_in_file = {
	0x1122334455667788ull, 42, 1, CLF_PROTO_LOCK_PW, 4096, 5120,
	true, 94016, 47008, true, 47008,
};
static const struct clf_proto_lock_grant v_lock_grant_in_file = {
	7, 0, CLF_PROTO_LOCK_EOF, true, 94016, 47008, true, 47008,
};

struct golden_variant {
	const char *name;
	golden_enc encode;
	const void *m;
	const char *hex;
};

static const struct golden_variant golden_variants[] = {
	{ "hello_with_key_share", gold_hello, &v_hello_kx,
	  "010008000300696f640201020304050607080000000000000000000000000000"
	  "000000000000000000ee" },
	{ "challenge_with_key_share", gold_challenge, &v_challenge_kx,
	  "0100080010000000000000000000000000000000000000000000000000000000"
	  "0000001f01a00000000000000000000000000000000000000000000000000000"
	  "00000000af" },
	{ "lookup_rep_without_layout", gold_lookup_rep, &v_lookup_rep_plain,
	  "2a00000000000000a4810000e8030000640000000100000015cd5b0700000000"
	  "01002a36fe9c971702002a36fe9c971703002a36fe9c971700" },
	{ "layout_round_robin", gold_layout, &v_layout_rr,
	  "0100001000000000000800000005000000" },
	{ "readdir_rep_empty", gold_readdir_rep, &v_readdir_rep_empty,
	  "0000000000" },
	{ "error_empty", gold_error, &v_error_empty,
	  "0000" },
	{ "data_empty", gold_data, &v_data_empty,
	  "00000000" },
	{ "data_head", gold_data_head, &s_data,
	  "0f000000" },
	{ "view_read_independent", gold_view_read, &v_view_read_plain,
	  "0300000000000000000000000000000000000100000000000000000000000000"
	  "00000000" },
	{ "view_write_collective", gold_view_write, &v_view_write_coll,
	  "09000000010000006400000000000000c800000000000000efcdab0000000000"
	  "040000000f000000736f6d652062756c6b206461746100" },
	{ "view_write_head", gold_view_write_head, &v_view_write_coll,
	  "09000000010000006400000000000000c800000000000000efcdab0000000000"
	  "040000000f000000" },
	{ "sub_write_head", gold_sub_write_head, &s_sub_write_req,
	  "2a00000000000000ffffffff64000000000000000f000000" },
	{ "symlink_req", gold_symlink_req, &v_symlink_req,
	  "01000000000000000600642f6c696e6b0e002e2e2f7461726765742f66696c65"
	  "e803000064000000" },
	{ "readlink_rep_target", gold_readlink_rep, &v_readlink_target,
	  "00000000000000000b002f6162732f746172676574" },
	{ "readlink_rep_device", gold_readlink_rep, &v_readlink_dev,
	  "01000000080000000000" },
	{ "link_req", gold_link_req, &v_link_req,
	  "2a0000000000000007000000000000000a006f746865722f6e616d65" },
	{ "mknod_req", gold_mknod_req, &v_mknod_req,
	  "010000000000000009006465762f6e756c6c32b6210000000000000000000003"
	  "01000000000000" },
	{ "reqid", gold_reqid, &v_reqid,
	  "08070605040302011817161514131211" },
	{ "create_req_explicit", gold_create_req, &v_create_req_explicit,
	  "0200000000000000010066800100000100000002000000000000000200100000"
	  "0000000002000000030000000000000008000000435401000909090903000000"
	  "0700000043540100010203ff0300000100000043" },
	{ "setlk_req_unlock", gold_setlk_req, &v_setlk_unlock,
	  "0100000000000000020000000000000000000000000000000000000000000000"
	  "03000000000000000000000063000000" },
	{ "sub_sizes_req_one", gold_sub_sizes_req, &v_sub_sizes_one,
	  "2b0000000000000001000000ff030000" },
	{ "instance_with_metads", gold_instance, &v_instance_metads,
	  INSTANCE_METADS_HEX },
	{ "status_with_rx_pool", gold_status, &v_status_rx_pool,
	  "0100000000000000020000000000000003000000000000000400000000000000"
	  "0500000006000000b8000000b4000000" },
	{ "lock_enqueue_req_strided", gold_lock_enqueue_req,
	  &v_lock_enqueue_strided,
	  "88776655443322112a000000000000000100000002000000"
	  "00100000000000000014000000000000"
	  "00080000000000000004000000000000" },
	{ "lock_grant_strided", gold_lock_grant, &v_lock_grant_strided,
	  "07000000000000000000000000000000ffffffffffffff7f"
	  "00080000000000000004000000000000" },
	{ "lock_enqueue_req_in_file", gold_lock_enqueue_req,
	  &v_lock_enqueue_in_file,
	  "88776655443322112a000000000000000100000002000000"
	  "00100000000000000014000000000000"
	  "406f010000000000a0b7000000000000a0b7000000000000" },
	{ "lock_grant_in_file", gold_lock_grant, &v_lock_grant_in_file,
	  "07000000000000000000000000000000ffffffffffffff7f"
	  "406f010000000000a0b7000000000000a0b7000000000000" },
};

static char *to_hex(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[2 * n] = '\0';
	return s;
}

/* Encode with enc (measuring first) and return the bytes as hex. */
static char *encode_hex(golden_enc enc, const void *m)
{
	struct wire_writer w = { NULL, 0, 0 };
	uint8_t *buf;
	char *hex;

	ck_assert_int_eq(enc(&w, m), 0);
	buf = malloc(w.pos ? w.pos : 1);
	ck_assert_ptr_nonnull(buf);
	w = (struct wire_writer){ buf, w.pos, 0 };
	ck_assert_int_eq(enc(&w, m), 0);
	hex = to_hex(buf, w.pos);
	free(buf);
	return hex;
}

static const char *golden_of(const char *name)
{
	for (size_t i = 0; i < sizeof(golden_codecs) / sizeof(golden_codecs[0]);
	     i++)
		if (strcmp(golden_codecs[i].name, name) == 0)
			return golden_codecs[i].hex;
	return NULL;
}

START_TEST(test_every_codec_sample_encodes_to_its_golden_bytes)
{
	for (size_t i = 0; i < PROTO_NCODECS; i++) {
		const struct proto_codec *c = &proto_codecs[i];
		const char *want = golden_of(c->name);
		char *got = encode_hex(c->encode, c->sample);

		ck_assert_msg(want, "%s: no golden bytes; it encodes as\n"
			      "\t{ \"%s\", \"%s\" },", c->name, c->name, got);
		ck_assert_msg(strcmp(got, want) == 0,
			      "%s: encodes as\n\t%s\nnot\n\t%s", c->name, got,
			      want);
		free(got);
	}
}
END_TEST

/* The golden bytes decode, and encode back to themselves. */
START_TEST(test_golden_bytes_decode_and_encode_back)
{
	for (size_t i = 0; i < PROTO_NCODECS; i++) {
		const struct proto_codec *c = &proto_codecs[i];
		const char *hex = golden_of(c->name);
		size_t n = hex ? strlen(hex) / 2 : 0;
		uint8_t *buf = malloc(n ? n : 1);
		struct wire_reader r;
		union proto_any m;
		char *again;

		ck_assert_ptr_nonnull(hex);
		ck_assert_ptr_nonnull(buf);
		for (size_t j = 0; j < n; j++) {
			unsigned v;

			ck_assert_int_eq(sscanf(hex + 2 * j, "%2x", &v), 1);
			buf[j] = (uint8_t)v;
		}
		r = (struct wire_reader){ buf, n, 0, false };
		ck_assert_msg(c->decode(&r, &m) == 0, "%s: %s", c->name,
			      CLF_Last_error());
		again = encode_hex(c->encode, &m);
		ck_assert_str_eq(again, hex);
		c->release(&m);
		free(again);
		free(buf);
	}
}
END_TEST

START_TEST(test_every_variant_encodes_to_its_golden_bytes)
{
	for (size_t i = 0;
	     i < sizeof(golden_variants) / sizeof(golden_variants[0]); i++) {
		const struct golden_variant *v = &golden_variants[i];
		char *got = encode_hex(v->encode, v->m);

		ck_assert_msg(strcmp(got, v->hex) == 0,
			      "%s: encodes as\n\t%s\nnot\n\t%s", v->name, got,
			      v->hex);
		free(got);
	}
}
END_TEST

/* A 1.17 INSTANCE reply names the metads; a 1.16 one (the codec's
 * golden bytes) decodes without them, so either side may be older. */
START_TEST(test_instance_reply_names_metads_only_when_they_follow)
{
	static const char hex[] = INSTANCE_METADS_HEX;
	uint8_t buf[sizeof(hex) / 2];
	struct clf_proto_instance m;
	struct wire_reader r;

	for (size_t j = 0; j < sizeof(buf); j++) {
		unsigned v;

		ck_assert_int_eq(sscanf(hex + 2 * j, "%2x", &v), 1);
		buf[j] = (uint8_t)v;
	}
	r = (struct wire_reader){ buf, sizeof(buf), 0, false };
	ck_assert_int_eq(clf_proto_instance_decode(&r, &m), 0);
	ck_assert(m.has_metads);
	ck_assert_uint_eq(m.metad_index, 0);
	ck_assert_uint_eq(m.nmetads, 2);
	ck_assert(clf_proto_str_eq(m.metads[1].addr, "[::1]:7002"));
	clf_proto_instance_release(&m);
	/* Cut where 1.16 ends: no metads, no error. */
	r = (struct wire_reader){ buf, sizeof(buf) - 8 - 15 - 12, 0, false };
	ck_assert_int_eq(clf_proto_instance_decode(&r, &m), 0);
	ck_assert(!m.has_metads);
	ck_assert_uint_eq(m.niods, 2);
	clf_proto_instance_release(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto_golden");
	TCase *tc = tcase_create("golden");

	tcase_add_test(tc, test_every_codec_sample_encodes_to_its_golden_bytes);
	tcase_add_test(tc, test_golden_bytes_decode_and_encode_back);
	tcase_add_test(tc, test_every_variant_encodes_to_its_golden_bytes);
	tcase_add_test(tc, test_instance_reply_names_metads_only_when_they_follow);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
