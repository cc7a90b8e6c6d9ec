// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_proto.c -- the wire codec: header, every message body, and the
 * refusal of truncated, oversized, corrupted and out-of-rule messages.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clf.h"
#include "proto.h"

#include "../fuzz/proto_codecs.h"

static struct clf_proto_header sample_header(void)
{
	struct clf_proto_header h;

	clf_proto_header_init(&h, CLF_PROTO_OP_VIEW_WRITE,
			      0x1122334455667788ull);
	h.payload_len = 1234;
	return h;
}

static void encode_header(const struct clf_proto_header *h,
			  uint8_t raw[CLF_PROTO_HEADER_SIZE])
{
	struct wire_writer w = { raw, CLF_PROTO_HEADER_SIZE, 0 };

	clf_proto_header_encode(&w, h);
	ck_assert_uint_eq(w.pos, CLF_PROTO_HEADER_SIZE);
}

static int decode_header(const uint8_t *raw, size_t len,
			 struct clf_proto_header *h)
{
	struct wire_reader r = { raw, len, 0, false };

	return clf_proto_header_decode(&r, h);
}

START_TEST(test_hello_and_challenge_carry_the_key_share_since_1_8)
{
	struct clf_proto_hello he = { .major = 1, .minor = 8,
				      .role = PSTR("client"), .has_kx = true,
				      .protection = 2, .kx = { 9, 8, 7 } };
	struct clf_proto_challenge ch = { .major = 1, .minor = 8,
					  .nonce = { 1 }, .has_kx = true,
					  .protection = 1, .kx = { 4, 5 } };
	struct clf_proto_hello he2;
	struct clf_proto_challenge ch2;
	uint8_t buf[256];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;

	ck_assert_int_eq(clf_proto_hello_encode(&w, &he), 0);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_hello_decode(&r, &he2), 0);
	ck_assert(he2.has_kx);
	ck_assert_uint_eq(he2.protection, 2);
	ck_assert_mem_eq(he2.kx, he.kx, CLF_PROTO_KX_SIZE);
	/* A 1.7 HELLO has none. */
	he.minor = 7;
	he.has_kx = false;
	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	ck_assert_int_eq(clf_proto_hello_encode(&w, &he), 0);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_hello_decode(&r, &he2), 0);
	ck_assert(!he2.has_kx);

	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	ck_assert_int_eq(clf_proto_challenge_encode(&w, &ch), 0);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_challenge_decode(&r, &ch2), 0);
	ck_assert(ch2.has_kx);
	ck_assert_uint_eq(ch2.protection, 1);
	ck_assert_mem_eq(ch2.kx, ch.kx, CLF_PROTO_KX_SIZE);
	ck_assert_mem_eq(ch2.nonce, ch.nonce, CLF_PROTO_NONCE_SIZE);
}
END_TEST

START_TEST(test_header_round_trips_every_field)
{
	struct clf_proto_header h = sample_header(), back;
	uint8_t raw[CLF_PROTO_HEADER_SIZE];

	h.flags = CLF_PROTO_FLAG_REPLY;
	h.status = -ENOENT;
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &back), 0);
	ck_assert_uint_eq(back.magic, CLF_PROTO_MAGIC);
	ck_assert_uint_eq(back.major, CLF_PROTO_VERSION_MAJOR);
	ck_assert_uint_eq(back.minor, CLF_PROTO_VERSION_MINOR);
	ck_assert_uint_eq(back.opcode, CLF_PROTO_OP_VIEW_WRITE);
	ck_assert_uint_eq(back.flags, CLF_PROTO_FLAG_REPLY);
	ck_assert_uint_eq(back.id, 0x1122334455667788ull);
	ck_assert_uint_eq(back.payload_len, 1234);
	ck_assert_int_eq(back.status, -ENOENT);
}
END_TEST

START_TEST(test_header_is_little_endian_at_documented_offsets)
{
	struct clf_proto_header h = sample_header();
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	static const uint8_t want_id[8] = { 0x88, 0x77, 0x66, 0x55,
					    0x44, 0x33, 0x22, 0x11 };

	h.flags = CLF_PROTO_FLAG_REPLY;
	h.status = -2;
	encode_header(&h, raw);
	ck_assert_mem_eq(raw, "CLF1", 4);
	ck_assert_uint_eq(raw[4], CLF_PROTO_VERSION_MAJOR);
	ck_assert_uint_eq(raw[5], 0);
	ck_assert_uint_eq(raw[8], CLF_PROTO_OP_VIEW_WRITE & 0xff);
	ck_assert_uint_eq(raw[9], CLF_PROTO_OP_VIEW_WRITE >> 8);
	ck_assert_uint_eq(raw[10], 1);
	ck_assert_mem_eq(raw + 12, want_id, 8);
	ck_assert_uint_eq(raw[20] | raw[21] << 8, 1234);
	ck_assert_uint_eq(raw[24], 0xfe);
	ck_assert_uint_eq(raw[27], 0xff);
	for (int i = 28; i < 32; i++)
		ck_assert_uint_eq(raw[i], 0);
}
END_TEST

START_TEST(test_header_refuses_wrong_magic)
{
	struct clf_proto_header h = sample_header(), out = { 0 };
	uint8_t raw[CLF_PROTO_HEADER_SIZE];

	encode_header(&h, raw);
	raw[0] ^= 0x20;
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out), -EPROTO);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "magic"));
	ck_assert_uint_eq(out.magic, 0);	/* untouched on failure */
}
END_TEST

START_TEST(test_header_refuses_other_major_version)
{
	struct clf_proto_header h = sample_header(), out;
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_reader r = { raw, sizeof(raw), 0, false };

	h.major = CLF_PROTO_VERSION_MAJOR + 1;
	h.flags = 0x8000;	/* may mean something in that version */
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out),
			 -EPROTONOSUPPORT);
	ck_assert_int_eq(clf_proto_header_decode_any_major(&r, &out), 0);
	ck_assert_uint_eq(out.major, CLF_PROTO_VERSION_MAJOR + 1);
}
END_TEST

START_TEST(test_header_refuses_unknown_flags_and_bad_status)
{
	struct clf_proto_header h = sample_header(), out;
	uint8_t raw[CLF_PROTO_HEADER_SIZE];

	h.flags = 0x0100;
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out), -EPROTO);

	h = sample_header();
	h.status = -EIO;	/* a request carries no status */
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out), -EPROTO);

	h.flags = CLF_PROTO_FLAG_REPLY;
	h.status = 5;		/* replies carry 0 or -errno */
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out), -EPROTO);

	h.status = -100000;
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out), -EPROTO);
}
END_TEST

START_TEST(test_header_refuses_payload_over_limit)
{
	struct clf_proto_header h = sample_header(), out;
	uint8_t raw[CLF_PROTO_HEADER_SIZE];

	h.payload_len = CLF_PROTO_PAYLOAD_MAX;
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out), 0);
	h.payload_len = CLF_PROTO_PAYLOAD_MAX + 1;
	encode_header(&h, raw);
	ck_assert_int_eq(decode_header(raw, sizeof(raw), &out), -E2BIG);
}
END_TEST

START_TEST(test_header_refuses_truncation)
{
	struct clf_proto_header h = sample_header(), out;
	uint8_t raw[CLF_PROTO_HEADER_SIZE];

	encode_header(&h, raw);
	for (size_t cut = 0; cut < sizeof(raw); cut++)
		ck_assert_int_eq(decode_header(raw, cut, &out), -EPROTO);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Every body                                                          */
/* ------------------------------------------------------------------ */

static int decode_bytes(const struct proto_codec *c, const uint8_t *buf,
			size_t len, union proto_any *m)
{
	struct wire_reader r = { buf, len, 0, false };

	return c->decode(&r, m);
}

START_TEST(test_every_message_round_trips_byte_for_byte)
{
	for (size_t i = 0; i < PROTO_NCODECS; i++) {
		const struct proto_codec *c = &proto_codecs[i];
		uint8_t *buf, *again;
		size_t len, len2;
		union proto_any m;

		ck_assert_msg(proto_codec_encode(c, c->sample, &buf, &len) == 0,
			      "%s: encode: %s", c->name, CLF_Last_error());
		ck_assert_msg(decode_bytes(c, buf, len, &m) == 0,
			      "%s: decode: %s", c->name, CLF_Last_error());
		ck_assert_int_eq(proto_codec_encode(c, &m, &again, &len2), 0);
		ck_assert_msg(len == len2 && memcmp(buf, again, len) == 0,
			      "%s: re-encoding differs", c->name);
		c->release(&m);
		free(again);
		free(buf);
	}
}
END_TEST

START_TEST(test_decoded_fields_equal_the_sample)
{
	const struct proto_codec *c = NULL;
	union proto_any m;
	uint8_t *buf;
	size_t len;

	for (size_t i = 0; i < PROTO_NCODECS; i++)
		if (strcmp(proto_codecs[i].name, "lookup_rep") == 0)
			c = &proto_codecs[i];
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(proto_codec_encode(c, c->sample, &buf, &len), 0);
	ck_assert_int_eq(decode_bytes(c, buf, len, &m), 0);
	ck_assert_uint_eq(m.lookup_rep.attr.ino, 42);
	ck_assert_int_eq(m.lookup_rep.attr.size, 123456789);
	ck_assert_int_eq(m.lookup_rep.attr.ctime, 1700000000000000003);
	ck_assert(m.lookup_rep.has_layout);
	ck_assert_int_eq(m.lookup_rep.layout.disp, 4096);
	ck_assert_uint_eq(m.lookup_rep.layout.nsubfiles, 3);
	ck_assert_uint_eq(m.lookup_rep.layout.subfiles[2].iod, 1023);
	ck_assert_uint_eq(m.lookup_rep.layout.subfiles[1].type.len,
			  sizeof(sample_type_b));
	/* Byte strings are borrowed from the buffer, not copied. */
	ck_assert(m.lookup_rep.layout.subfiles[1].type.ptr > buf &&
		  m.lookup_rep.layout.subfiles[1].type.ptr < buf + len);
	clf_proto_lookup_rep_release(&m.lookup_rep);
	free(buf);
}
END_TEST

START_TEST(test_every_decoder_refuses_every_truncation_and_trailing_byte)
{
	for (size_t i = 0; i < PROTO_NCODECS; i++) {
		const struct proto_codec *c = &proto_codecs[i];
		uint8_t *buf, *longer;
		union proto_any m;
		size_t len;

		ck_assert_int_eq(proto_codec_encode(c, c->sample, &buf, &len),
				 0);
		for (size_t cut = 0; cut < len; cut++) {
			/* An error body may be empty: that is a message. */
			if (cut == 0 && strcmp(c->name, "error") == 0)
				continue;
			ck_assert_msg(decode_bytes(c, buf, cut, &m) == -EPROTO,
				      "%s cut at %zu of %zu decoded", c->name,
				      cut, len);
		}
		longer = malloc(len + 1);
		ck_assert_ptr_nonnull(longer);
		memcpy(longer, buf, len);
		longer[len] = 0;
		ck_assert_msg(decode_bytes(c, longer, len + 1, &m) == -EPROTO,
			      "%s with a trailing byte decoded", c->name);
		free(longer);
		free(buf);
	}
}
END_TEST

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

START_TEST(test_corrupted_messages_fail_cleanly_or_decode_to_valid_messages)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < PROTO_NCODECS; i++) {
		const struct proto_codec *c = &proto_codecs[i];
		uint8_t *buf, *again;
		size_t len, len2;

		ck_assert_int_eq(proto_codec_encode(c, c->sample, &buf, &len),
				 0);
		for (int round = 0; round < 2000; round++) {
			uint8_t *bad = malloc(len);
			union proto_any m;
			int flips = 1 + (int)(rnd(&seed) % 4), err;

			ck_assert_ptr_nonnull(bad);
			memcpy(bad, buf, len);
			for (int f = 0; f < flips; f++) {
				size_t at = rnd(&seed) % len;

				bad[at] ^= (uint8_t)(1 + rnd(&seed) % 255);
			}
			err = decode_bytes(c, bad, len, &m);
			ck_assert(err == 0 || err == -EPROTO || err == -E2BIG);
			if (err == 0) {
				/* What decodes is valid: it encodes back. */
				err = proto_codec_encode(c, &m, &again, &len2);
				ck_assert_int_eq(err, 0);
				ck_assert_mem_eq(again, bad, len);
				free(again);
				c->release(&m);
			}
			free(bad);
		}
		free(buf);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Limits and rules                                                    */
/* ------------------------------------------------------------------ */

static int lookup_path(const char *path, size_t len)
{
	uint8_t buf[8 + 4 + 2 + 5000];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_lookup_req m;

	wire_put_u64(&w, CLF_PROTO_ROOT_INO);
	wire_put_u32(&w, 0);
	wire_put_u16(&w, (uint16_t)len);
	wire_put_bytes(&w, path, len);
	ck_assert_uint_le(w.pos, sizeof(buf));
	r = (struct wire_reader){ buf, w.pos, 0, false };
	return clf_proto_lookup_req_decode(&r, &m);
}

START_TEST(test_paths_are_names_joined_by_single_slashes)
{
	static const char *const good[] = { "a", "a/b/c", "...", ".x/y.",
					    "name with spaces" };
	static const char *const bad[] = { "", "/a", "a/", "a//b", ".",
					   "..", "a/./b", "a/../b", "../a" };
	char big[CLF_PROTO_PATH_MAX + 2];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(lookup_path(good[i], strlen(good[i])) == 0,
			      "'%s' refused: %s", good[i], CLF_Last_error());
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(lookup_path(bad[i], strlen(bad[i])) == -EPROTO,
			      "'%s' accepted", bad[i]);
	ck_assert_int_eq(lookup_path("a\0b", 3), -EPROTO);

	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(lookup_path(big, CLF_PROTO_NAME_MAX), 0);
	ck_assert_int_eq(lookup_path(big, CLF_PROTO_NAME_MAX + 1), -E2BIG);
	for (size_t i = 100; i < sizeof(big); i += 101)
		big[i] = '/';
	ck_assert_int_eq(lookup_path(big, CLF_PROTO_PATH_MAX), 0);
	ck_assert_int_eq(lookup_path(big, CLF_PROTO_PATH_MAX + 1), -E2BIG);
}
END_TEST

static int readdir_with_name(const char *name, size_t len)
{
	uint8_t buf[600];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_readdir_rep m;
	int err;

	wire_put_u32(&w, 1);
	wire_put_u8(&w, 1);
	wire_put_u64(&w, 5);
	wire_put_u64(&w, 6);
	wire_put_u32(&w, 0100644);
	wire_put_u16(&w, (uint16_t)len);
	wire_put_bytes(&w, name, len);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	err = clf_proto_readdir_rep_decode(&r, &m);
	if (!err)
		clf_proto_readdir_rep_release(&m);
	return err;
}

START_TEST(test_names_refuse_slash_nul_dots_and_empty)
{
	char big[CLF_PROTO_NAME_MAX + 1];

	ck_assert_int_eq(readdir_with_name("ok", 2), 0);
	ck_assert_int_eq(readdir_with_name("a/b", 3), -EPROTO);
	ck_assert_int_eq(readdir_with_name("a\0b", 3), -EPROTO);
	ck_assert_int_eq(readdir_with_name(".", 1), -EPROTO);
	ck_assert_int_eq(readdir_with_name("..", 2), -EPROTO);
	ck_assert_int_eq(readdir_with_name("", 0), -EPROTO);
	memset(big, 'n', sizeof(big));
	ck_assert_int_eq(readdir_with_name(big, CLF_PROTO_NAME_MAX), 0);
	ck_assert_int_eq(readdir_with_name(big, CLF_PROTO_NAME_MAX + 1),
			 -E2BIG);
}
END_TEST

/* An explicit layout header claiming n subfiles, then extra bytes. */
static int layout_claiming(uint32_t n, size_t extra)
{
	uint8_t *buf = calloc(1, 32 + extra);
	struct wire_writer w = { buf, 32 + extra, 0 };
	struct wire_reader r;
	struct clf_proto_layout m;
	int err;

	ck_assert_ptr_nonnull(buf);
	wire_put_u8(&w, CLF_PROTO_LAYOUT_EXPLICIT);
	wire_put_i64(&w, 0);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, n);
	r = (struct wire_reader){ buf, w.pos + extra, 0, false };
	err = clf_proto_layout_decode(&r, &m);
	if (!err)
		clf_proto_layout_release(&m);
	free(buf);
	return err;
}

START_TEST(test_layout_refuses_too_many_subfiles_before_allocating)
{
	ck_assert_int_eq(layout_claiming(CLF_PROTO_MAX_SUBFILES + 1, 0),
			 -E2BIG);
	ck_assert_int_eq(layout_claiming(0xffffffffu, 0), -E2BIG);
	/* Within the limit but more than the bytes left could hold. */
	ck_assert_int_eq(layout_claiming(1000, 100), -EPROTO);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "cannot fit"));
	ck_assert_int_eq(layout_claiming(0, 0), -EPROTO);
}
END_TEST

START_TEST(test_readdir_refuses_too_many_entries)
{
	uint8_t buf[16];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_readdir_rep m;

	wire_put_u32(&w, CLF_PROTO_READDIR_MAX + 1);
	wire_put_u8(&w, 0);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_readdir_rep_decode(&r, &m), -E2BIG);

	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	wire_put_u32(&w, 2);
	wire_put_u8(&w, 2);	/* eof is 0 or 1 */
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_readdir_rep_decode(&r, &m), -EPROTO);
}
END_TEST

START_TEST(test_data_and_types_over_limit_are_refused_before_reading)
{
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_data d;
	struct clf_proto_view_register_req v;

	wire_put_u32(&w, CLF_PROTO_DATA_MAX + 1);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_data_decode(&r, &d), -E2BIG);

	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	wire_put_u32(&w, 100);	/* says 100 bytes, has none */
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_data_decode(&r, &d), -EPROTO);

	w = (struct wire_writer){ buf, sizeof(buf), 0 };
	wire_put_u64(&w, 1);
	wire_put_u32(&w, 0);
	wire_put_i64(&w, 0);
	wire_put_u32(&w, CLF_PROTO_TYPE_MAX_BYTES + 1);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_view_register_req_decode(&r, &v), -E2BIG);
}
END_TEST

START_TEST(test_encoders_refuse_invalid_fields_and_append_nothing)
{
	uint8_t buf[256];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_proto_lookup_req lk = { 1, 0, { "a\0b", 3 } };
	struct clf_proto_readdir_req rd = { 1, 0, 0 };
	struct clf_proto_setattr_req sa = { .ino = 1, .mask = 0x100 };
	struct clf_proto_mkdir_req mk = { 1, PSTR("d"), 040755, 0, 0 };
	struct clf_proto_hello he = { .major = 1, .minor = 0,
				      .role = PSTR("has space") };
	struct clf_proto_view_io_req vw = { .lo = 10, .hi = 5 };
	struct clf_proto_layout no_subfiles = {
		.kind = CLF_PROTO_LAYOUT_EXPLICIT,
	};

	ck_assert_int_eq(clf_proto_lookup_req_encode(&w, &lk), -EINVAL);
	ck_assert_int_eq(clf_proto_readdir_req_encode(&w, &rd), -EINVAL);
	rd.max = CLF_PROTO_READDIR_MAX + 1;
	ck_assert_int_eq(clf_proto_readdir_req_encode(&w, &rd), -E2BIG);
	ck_assert_int_eq(clf_proto_setattr_req_encode(&w, &sa), -EINVAL);
	ck_assert_int_eq(clf_proto_mkdir_req_encode(&w, &mk), -EINVAL);
	ck_assert_int_eq(clf_proto_hello_encode(&w, &he), -EINVAL);
	ck_assert_int_eq(clf_proto_view_read_req_encode(&w, &vw), -EINVAL);
	ck_assert_int_eq(clf_proto_layout_encode(&w, &no_subfiles), -EINVAL);
	ck_assert_uint_eq(w.pos, 0);
}
END_TEST

static int view_io(uint32_t flags, int64_t lo, int64_t hi, uint64_t tag,
		   uint32_t participants, uint32_t data_len)
{
	uint8_t buf[128];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	struct clf_proto_view_io_req m;

	wire_put_u32(&w, 3);
	wire_put_u32(&w, flags);
	wire_put_i64(&w, lo);
	wire_put_i64(&w, hi);
	wire_put_u64(&w, tag);
	wire_put_u32(&w, participants);
	wire_put_u32(&w, data_len);
	for (uint32_t i = 0; i < data_len; i++)
		wire_put_u8(&w, (uint8_t)i);
	ck_assert_uint_le(w.pos, sizeof(buf));
	r = (struct wire_reader){ buf, w.pos, 0, false };
	return clf_proto_view_write_req_decode(&r, &m);
}

/* The head alone, as the iod reads it before splicing the data. */
START_TEST(test_write_heads_decode_alone)
{
	uint8_t buf[128];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct clf_proto_view_io_req v = { .handle = 9, .lo = 100,
					   .hi = 100 + 70000 };
	struct clf_proto_sub_write_req sub = { .file = 5, .subfile = 2,
					       .offset = 1000 };
	struct clf_proto_view_io_req vm;
	struct clf_proto_sub_write_req sm;
	struct wire_reader r;

	v.data = (struct clf_proto_bytes){ buf, 70000 };
	ck_assert_int_eq(clf_proto_view_write_req_encode_head(&w, &v), 0);
	ck_assert_uint_eq(w.pos, CLF_PROTO_VIEW_WRITE_HEAD);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_view_write_req_decode_head(&r, w.pos + 70000,
							      &vm), 0);
	ck_assert_uint_eq(vm.handle, 9);
	ck_assert_int_eq(vm.lo, 100);
	ck_assert_int_eq(vm.hi, 100 + 70000);
	ck_assert_uint_eq(vm.data.len, 70000);
	ck_assert_ptr_null(vm.data.ptr);
	/* The body must hold exactly the data announced. */
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_view_write_req_decode_head(&r, w.pos + 69999,
							      &vm), -EPROTO);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_view_write_req_decode_head(&r, w.pos + 70001,
							      &vm), -EPROTO);
	r = (struct wire_reader){ buf, w.pos - 1, 0, false };
	ck_assert_int_eq(clf_proto_view_write_req_decode_head(&r, w.pos + 70000,
							      &vm), -EPROTO);
	/* More data than the range holds: the usual check. */
	v.hi = 100 + 69999;
	v.data.len = 69999;
	w.pos = 0;
	ck_assert_int_eq(clf_proto_view_write_req_encode_head(&w, &v), 0);
	buf[36] = 0x71;		/* data length 70001 (LE): past the range */
	buf[37] = 0x11;
	buf[38] = 0x01;
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_view_write_req_decode_head(&r, w.pos + 70001,
							      &vm), -EPROTO);

	w.pos = 0;
	sub.data = (struct clf_proto_bytes){ buf, 65536 };
	ck_assert_int_eq(clf_proto_sub_write_req_encode_head(&w, &sub), 0);
	ck_assert_uint_eq(w.pos, CLF_PROTO_SUB_WRITE_HEAD);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_sub_write_req_decode_head(&r, w.pos + 65536,
							     &sm), 0);
	ck_assert_uint_eq(sm.file, 5);
	ck_assert_uint_eq(sm.subfile, 2);
	ck_assert_int_eq(sm.offset, 1000);
	ck_assert_uint_eq(sm.data.len, 65536);
	ck_assert_ptr_null(sm.data.ptr);
	/* A length over the protocol's limit. */
	buf[20] = buf[21] = buf[22] = buf[23] = 0xff;
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_sub_write_req_decode_head(&r, w.pos + 65536,
							     &sm), -E2BIG);
}
END_TEST

START_TEST(test_view_io_checks_range_data_and_collective_fields)
{
	const uint32_t coll = CLF_PROTO_VIEW_COLLECTIVE;

	ck_assert_int_eq(view_io(0, 0, 10, 0, 0, 10), 0);
	ck_assert_int_eq(view_io(coll, 0, 10, 77, 4, 3), 0);
	ck_assert_int_eq(view_io(0, 0, 10, 0, 0, 11), -EPROTO);
	ck_assert_int_eq(view_io(0, -1, 10, 0, 0, 0), -EPROTO);
	ck_assert_int_eq(view_io(0, 10, 9, 0, 0, 0), -EPROTO);
	ck_assert_int_eq(view_io(0, 0, (int64_t)CLF_PROTO_DATA_MAX + 1, 0, 0,
				 0), -E2BIG);
	ck_assert_int_eq(view_io(0, 0, 10, 77, 0, 0), -EPROTO);
	ck_assert_int_eq(view_io(coll, 0, 10, 77, 0, 0), -EPROTO);
	ck_assert_int_eq(view_io(coll, 0, 10, 77,
				 CLF_PROTO_MAX_PARTICIPANTS + 1, 0), -E2BIG);
	ck_assert_int_eq(view_io(0x80, 0, 10, 0, 0, 0), -EPROTO);
}
END_TEST

START_TEST(test_setattr_refuses_unknown_mask_and_conflicting_times)
{
	struct clf_proto_setattr_req m = {
		.ino = 1,
		.mask = CLF_PROTO_SETATTR_ATIME | CLF_PROTO_SETATTR_ATIME_NOW,
	};
	uint8_t buf[128];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;

	ck_assert_int_eq(clf_proto_setattr_req_encode(&w, &m), -EINVAL);
	m.mask = CLF_PROTO_SETATTR_SIZE;
	m.size = -1;
	ck_assert_int_eq(clf_proto_setattr_req_encode(&w, &m), -EINVAL);
	m.size = 0;
	ck_assert_int_eq(clf_proto_setattr_req_encode(&w, &m), 0);
	buf[8] = 0;
	buf[11] = 0x80;	/* unknown mask bit */
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_setattr_req_decode(&r, &m), -EPROTO);
}
END_TEST

START_TEST(test_subfile_indexes_are_bounded)
{
	struct clf_proto_sub_read_req m = { 1, CLF_PROTO_MAX_SUBFILES, 0, 1 };
	struct clf_proto_remove_req rm = { 1, CLF_PROTO_SUBFILE_ALL };
	struct clf_proto_truncate_req tr = { 1, CLF_PROTO_SUBFILE_ALL, 0 };
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };

	ck_assert_int_eq(clf_proto_sub_read_req_encode(&w, &m), -E2BIG);
	m.subfile = CLF_PROTO_SUBFILE_HEAD;
	ck_assert_int_eq(clf_proto_sub_read_req_encode(&w, &m), 0);
	m.offset = INT64_MAX;	/* offset + length overflows */
	ck_assert_int_eq(clf_proto_sub_read_req_encode(&w, &m), -EINVAL);
	ck_assert_int_eq(clf_proto_remove_req_encode(&w, &rm), 0);
	ck_assert_int_eq(clf_proto_truncate_req_encode(&w, &tr), -E2BIG);
}
END_TEST

START_TEST(test_sub_sizes_counts_and_lengths_are_bounded)
{
	static struct clf_proto_sub_sizes_req req = { 1, 0, { 0 } };
	static struct clf_proto_sub_sizes rep = { 1, { -1 } };
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;

	ck_assert_int_eq(clf_proto_sub_sizes_req_encode(&w, &req), -E2BIG);
	req.n = CLF_PROTO_SUB_SIZES_MAX + 1;
	ck_assert_int_eq(clf_proto_sub_sizes_req_encode(&w, &req), -E2BIG);
	req.n = 1;
	req.subfile[0] = CLF_PROTO_SUBFILE_ALL;
	ck_assert_int_eq(clf_proto_sub_sizes_req_encode(&w, &req), -E2BIG);
	ck_assert_int_ne(clf_proto_sub_sizes_encode(&w, &rep), 0);
	ck_assert_uint_eq(w.pos, 0);
	/* A count over the limit is refused before the entries are read. */
	wire_put_u64(&w, 1);
	wire_put_u32(&w, CLF_PROTO_SUB_SIZES_MAX + 1);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_sub_sizes_req_decode(&r, &req), -E2BIG);
	ck_assert_uint_eq(req.n, 1);
}
END_TEST

/* SUB_READV / SUB_WRITEV: the data is exactly the ranges, the ranges
 * at most CLF_PROTO_SUB_VEC_DATA_MAX bytes, each inside int64_t. */
START_TEST(test_sub_vectors_hold_exactly_their_ranges_within_the_limit)
{
	static const uint8_t data[15] = "some bulk data";
	static struct clf_proto_sub_vec_req m = {
		7, 2, { 0, 1 }, { 0, 100 }, { 10, 5 }, { data, 15 },
	};
	static struct clf_proto_sub_vec_req d;
	uint8_t buf[256];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;
	size_t len_at;

	ck_assert_int_eq(clf_proto_sub_writev_req_encode(&w, &m), 0);
	/* Decoded, then refused with one byte of data less. */
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_sub_writev_req_decode(&r, &d), 0);
	ck_assert_uint_eq(d.n, 2);
	ck_assert_int_eq(d.offset[1], 100);
	ck_assert_uint_eq(d.length[0], 10);
	ck_assert_mem_eq(d.data.ptr, data, 15);
	len_at = w.pos - 15 - 4;
	buf[len_at] = 14;
	r = (struct wire_reader){ buf, w.pos - 1, 0, false };
	ck_assert_int_eq(clf_proto_sub_writev_req_decode(&r, &d), -EPROTO);
	w.pos = 0;
	m.data.len = 14;
	ck_assert_int_lt(clf_proto_sub_writev_req_encode(&w, &m), 0);
	ck_assert_uint_eq(w.pos, 0);
	m.data.len = 15;
	/* Over the limit in all, or past the end of int64_t. */
	m.length[0] = CLF_PROTO_SUB_VEC_DATA_MAX;
	ck_assert_int_lt(clf_proto_sub_readv_req_encode(&w, &m), 0);
	m.length[0] = 10;
	m.offset[1] = INT64_MAX - 2;
	ck_assert_int_lt(clf_proto_sub_readv_req_encode(&w, &m), 0);
	m.offset[1] = 100;
	m.n = CLF_PROTO_SUB_VEC_MAX + 1;
	ck_assert_int_lt(clf_proto_sub_readv_req_encode(&w, &m), 0);
	m.n = 0;
	ck_assert_int_lt(clf_proto_sub_readv_req_encode(&w, &m), 0);
	ck_assert_uint_eq(w.pos, 0);
	m.n = 2;
	/* A READV of 2 x 1 MiB is refused when decoded. */
	wire_put_u64(&w, 7);
	wire_put_u32(&w, 2);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, 1);
	wire_put_u64(&w, 0);
	wire_put_u64(&w, 0);
	wire_put_u32(&w, CLF_PROTO_SUB_VEC_DATA_MAX);
	wire_put_u32(&w, CLF_PROTO_SUB_VEC_DATA_MAX);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_sub_readv_req_decode(&r, &d), -E2BIG);
}
END_TEST

START_TEST(test_append_refuses_unknown_flags_and_ranges_past_the_end)
{
	struct clf_proto_append_req m = { 1, 100, 10, 0x2 };
	struct clf_proto_append_rep rep = { -1 };
	uint8_t buf[64];
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r;

	ck_assert_int_eq(clf_proto_append_req_encode(&w, &m), -EINVAL);
	m.flags = CLF_PROTO_APPEND_EXACT;
	m.at = -1;
	ck_assert_int_eq(clf_proto_append_req_encode(&w, &m), -EINVAL);
	m.at = INT64_MAX - 9;	/* the last byte would pass off_t's max */
	ck_assert_int_eq(clf_proto_append_req_encode(&w, &m), -EINVAL);
	ck_assert_int_ne(clf_proto_append_rep_encode(&w, &rep), 0);
	ck_assert_uint_eq(w.pos, 0);
	m.at = INT64_MAX - 10;
	ck_assert_int_eq(clf_proto_append_req_encode(&w, &m), 0);
	buf[24] = 0x4;	/* an unknown flag, from a peer */
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_append_req_decode(&r, &m), -EPROTO);
}
END_TEST

START_TEST(test_layout_carries_real_clf_types)
{
	CLF_Datatype t[4];
	uint8_t *enc[4];
	struct clf_proto_subfile sub[4];
	struct clf_proto_layout l = { .kind = CLF_PROTO_LAYOUT_EXPLICIT,
				      .nsubfiles = 4, .subfiles = sub };
	struct clf_proto_layout back;
	struct wire_writer w = { NULL, 0, 0 };
	struct wire_reader r;
	uint8_t *buf;

	ck_assert_int_eq(CLF_Type_pitfalls(0, 7, 32, 1, 8, 4, CLF_BYTE, t), 0);
	for (int i = 0; i < 4; i++) {
		int64_t n = CLF_Type_encode(t[i], NULL, 0);

		ck_assert_int_gt(n, 0);
		enc[i] = malloc((size_t)n);
		ck_assert_int_eq(CLF_Type_encode(t[i], enc[i], (size_t)n), n);
		sub[i] = (struct clf_proto_subfile){ (uint32_t)i,
						     { enc[i], (uint32_t)n } };
	}
	ck_assert_int_eq(clf_proto_layout_encode(&w, &l), 0);
	buf = malloc(w.pos);
	w = (struct wire_writer){ buf, w.pos, 0 };
	ck_assert_int_eq(clf_proto_layout_encode(&w, &l), 0);
	r = (struct wire_reader){ buf, w.pos, 0, false };
	ck_assert_int_eq(clf_proto_layout_decode(&r, &back), 0);
	for (int i = 0; i < 4; i++) {
		CLF_Datatype d;

		ck_assert_int_eq(CLF_Type_decode(back.subfiles[i].type.ptr,
						 back.subfiles[i].type.len, &d),
				 0);
		ck_assert_int_eq(CLF_Type_size(d), 8);
		ck_assert_int_eq(CLF_Type_extent(d), 32);
		CLF_Type_free(&d);
		CLF_Type_free(&t[i]);
		free(enc[i]);
	}
	clf_proto_layout_release(&back);
	free(buf);
}
END_TEST

START_TEST(test_error_body_may_be_empty)
{
	struct wire_reader r = { (const uint8_t *)"", 0, 0, false };
	struct clf_proto_error e;

	ck_assert_int_eq(clf_proto_error_decode(&r, &e), 0);
	ck_assert_uint_eq(e.message.len, 0);
}
END_TEST

START_TEST(test_request_identity_is_two_nonzero_u64_before_the_body)
{
	struct clf_proto_reqid id = { 0x0102030405060708ull, 9 }, back;
	uint8_t buf[CLF_PROTO_REQ_ID_SIZE + 1] = { 0 };
	struct wire_writer w = { buf, sizeof(buf), 0 };
	struct wire_reader r = { buf, sizeof(buf), 0, false };

	ck_assert_int_eq(clf_proto_reqid_encode(&w, &id), 0);
	ck_assert_uint_eq(w.pos, CLF_PROTO_REQ_ID_SIZE);
	ck_assert_uint_eq(buf[0], 0x08);	/* little-endian */
	ck_assert_uint_eq(buf[8], 9);
	/* The opcode's body follows: decoding stops at it. */
	ck_assert_int_eq(clf_proto_reqid_decode(&r, &back), 0);
	ck_assert_uint_eq(r.pos, CLF_PROTO_REQ_ID_SIZE);
	ck_assert_uint_eq(back.client, id.client);
	ck_assert_uint_eq(back.seq, id.seq);
	r = (struct wire_reader){ buf, CLF_PROTO_REQ_ID_SIZE - 1, 0, false };
	ck_assert_int_eq(clf_proto_reqid_decode(&r, &back), -EPROTO);
	memset(buf + 8, 0, 8);
	r = (struct wire_reader){ buf, CLF_PROTO_REQ_ID_SIZE, 0, false };
	ck_assert_int_eq(clf_proto_reqid_decode(&r, &back), -EPROTO);
	id.client = 0;
	w.pos = 0;
	ck_assert_int_eq(clf_proto_reqid_encode(&w, &id), -EINVAL);
}
END_TEST

START_TEST(test_negotiated_minor_is_the_smaller)
{
	ck_assert_uint_eq(clf_proto_negotiate_minor(0), 0);
	ck_assert_uint_eq(
		clf_proto_negotiate_minor(CLF_PROTO_VERSION_MINOR + 5),
		CLF_PROTO_VERSION_MINOR);
}
END_TEST

START_TEST(test_every_opcode_has_a_name)
{
	static const uint16_t ops[] = {
		1, 2, 3, 4, 16, 17, 256, 257, 258, 259, 260, 261, 262, 263,
		264, 265, 266, 267, 268, 269, 270, 271, 272, 512, 513, 514, 515,
		516, 517, 518, 519, 520, 521,
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		ck_assert_ptr_nonnull(clf_proto_op_name(ops[i]));
	ck_assert_ptr_null(clf_proto_op_name(999));
	ck_assert_str_eq(clf_proto_op_name(CLF_PROTO_OP_UPDATE_SIZE),
			 "UPDATE_SIZE");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proto");
	TCase *hdr = tcase_create("header");
	TCase *body = tcase_create("bodies");
	TCase *rules = tcase_create("limits and rules");

	tcase_add_test(hdr, test_header_round_trips_every_field);
	tcase_add_test(hdr, test_hello_and_challenge_carry_the_key_share_since_1_8);
	tcase_add_test(hdr, test_header_is_little_endian_at_documented_offsets);
	tcase_add_test(hdr, test_header_refuses_wrong_magic);
	tcase_add_test(hdr, test_header_refuses_other_major_version);
	tcase_add_test(hdr, test_header_refuses_unknown_flags_and_bad_status);
	tcase_add_test(hdr, test_header_refuses_payload_over_limit);
	tcase_add_test(hdr, test_header_refuses_truncation);
	tcase_add_test(body, test_every_message_round_trips_byte_for_byte);
	tcase_add_test(body, test_decoded_fields_equal_the_sample);
	tcase_add_test(body,
		test_every_decoder_refuses_every_truncation_and_trailing_byte);
	tcase_add_test(body,
		test_corrupted_messages_fail_cleanly_or_decode_to_valid_messages);
	tcase_set_timeout(body, 60);
	tcase_add_test(rules, test_paths_are_names_joined_by_single_slashes);
	tcase_add_test(rules, test_names_refuse_slash_nul_dots_and_empty);
	tcase_add_test(rules, test_layout_refuses_too_many_subfiles_before_allocating);
	tcase_add_test(rules, test_readdir_refuses_too_many_entries);
	tcase_add_test(rules,
		test_data_and_types_over_limit_are_refused_before_reading);
	tcase_add_test(rules, test_encoders_refuse_invalid_fields_and_append_nothing);
	tcase_add_test(rules, test_view_io_checks_range_data_and_collective_fields);
	tcase_add_test(rules, test_write_heads_decode_alone);
	tcase_add_test(rules,
		test_setattr_refuses_unknown_mask_and_conflicting_times);
	tcase_add_test(rules, test_subfile_indexes_are_bounded);
	tcase_add_test(rules, test_sub_sizes_counts_and_lengths_are_bounded);
	tcase_add_test(rules, test_sub_vectors_hold_exactly_their_ranges_within_the_limit);
	tcase_add_test(rules,
		       test_append_refuses_unknown_flags_and_ranges_past_the_end);
	tcase_add_test(rules, test_layout_carries_real_clf_types);
	tcase_add_test(rules, test_error_body_may_be_empty);
	tcase_add_test(rules,
		       test_request_identity_is_two_nonzero_u64_before_the_body);
	tcase_add_test(rules, test_negotiated_minor_is_the_smaller);
	tcase_add_test(rules, test_every_opcode_has_a_name);
	suite_add_tcase(s, hdr);
	suite_add_tcase(s, body);
	suite_add_tcase(s, rules);
	return run_suite(s);
}
