// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_proto.c -- libFuzzer target for every decoder that reads from the
 * network: the message header, each message body (proto_codecs.h) and
 * CLF_Type_decode.
 *
 * Input: one selector byte, then the bytes to decode.  Besides "no crash,
 * no leak, no undefined behaviour" under ASan and UBSan, it checks that
 * whatever decodes is a valid message: it encodes again, to the very same
 * bytes (bodies are canonical), and a decoded type survives its own
 * encoding.  The head-only decoders of SUB_WRITE and VIEW_WRITE (the
 * iod's direct writes) must accept exactly the bodies the whole decoders
 * accept, with the same fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "proto.h"
#include "proto_codecs.h"

enum { SEL_HEADER = PROTO_NCODECS, SEL_TYPE, SEL_SUB_HEAD, SEL_VIEW_HEAD,
       SEL_NR };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_body(const struct proto_codec *c, const uint8_t *in,
		      size_t len)
{
	struct wire_reader r = { in, len, 0, false };
	union proto_any m;
	uint8_t *again;
	size_t len2;

	if (c->decode(&r, &m))
		return;
	if (proto_codec_encode(c, &m, &again, &len2))
		abort();	/* decoded but refuses to encode */
	/* An empty error body decodes as an empty message, sent as 2 bytes. */
	if (!(len == 0 && strcmp(c->name, "error") == 0) &&
	    (len2 != len || memcmp(again, in, len) != 0))
		abort();	/* not canonical: two encodings, one message */
	free(again);
	c->release(&m);
}

static void fuzz_header(const uint8_t *in, size_t len)
{
	struct wire_reader r = { in, len, 0, false };
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_writer w = { raw, sizeof(raw), 0 };
	struct clf_proto_header h;

	if (clf_proto_header_decode(&r, &h) == 0) {
		clf_proto_header_encode(&w, &h);
		/* Everything but the reserved field comes back. */
		if (w.pos != sizeof(raw) || memcmp(raw, in, 28) != 0)
			abort();
	}
	r = (struct wire_reader){ in, len, 0, false };
	(void)clf_proto_header_decode_any_major(&r, &h);
}

static void fuzz_type(const uint8_t *in, size_t len)
{
	CLF_Datatype t, u;
	int64_t n;
	uint8_t *buf;

	if (CLF_Type_decode(in, len, &t))
		return;
	n = CLF_Type_encode(t, NULL, 0);
	if (n <= 0)
		abort();
	buf = malloc((size_t)n);
	if (!buf)
		abort();
	if (CLF_Type_encode(t, buf, (size_t)n) != n ||
	    CLF_Type_decode(buf, (size_t)n, &u) != 0)
		abort();
	if (CLF_Type_size(u) != CLF_Type_size(t) ||
	    CLF_Type_extent(u) != CLF_Type_extent(t))
		abort();
	CLF_Type_free(&u);
	CLF_Type_free(&t);
	free(buf);
}

/* Head-only and whole decoding of one write body agree. */
static void fuzz_write_head(int view, const uint8_t *in, size_t len)
{
	size_t head = view ? CLF_PROTO_VIEW_WRITE_HEAD : CLF_PROTO_SUB_WRITE_HEAD;
	struct wire_reader rh = { in, len < head ? len : head, 0, false };
	struct wire_reader rw = { in, len, 0, false };
	struct clf_proto_view_io_req vh, vw;
	struct clf_proto_sub_write_req sh, sw;
	int eh, ew;

	if (view) {
		eh = clf_proto_view_write_req_decode_head(&rh, len, &vh);
		ew = clf_proto_view_write_req_decode(&rw, &vw);
	} else {
		eh = clf_proto_sub_write_req_decode_head(&rh, len, &sh);
		ew = clf_proto_sub_write_req_decode(&rw, &sw);
	}
	if ((eh == 0) != (ew == 0))
		abort();
	if (eh)
		return;
	if (view ? (vh.handle != vw.handle || vh.flags != vw.flags ||
		    vh.lo != vw.lo || vh.hi != vw.hi ||
		    vh.coll_tag != vw.coll_tag ||
		    vh.participants != vw.participants ||
		    vh.data.len != vw.data.len || vh.data.ptr)
		 : (sh.file != sw.file || sh.subfile != sw.subfile ||
		    sh.offset != sw.offset || sh.data.len != sw.data.len ||
		    sh.data.ptr))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned sel;

	if (size < 1)
		return 0;
	sel = data[0] % SEL_NR;
	if (sel < PROTO_NCODECS)
		fuzz_body(&proto_codecs[sel], data + 1, size - 1);
	else if (sel == SEL_HEADER)
		fuzz_header(data + 1, size - 1);
	else if (sel == SEL_TYPE)
		fuzz_type(data + 1, size - 1);
	else
		fuzz_write_head(sel == SEL_VIEW_HEAD, data + 1, size - 1);
	return 0;
}
