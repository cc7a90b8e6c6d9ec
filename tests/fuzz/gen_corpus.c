// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gen_corpus.c -- write the seed corpus of fuzz_proto into a directory:
 * one valid input per decoder (selector byte + encoding), so that the
 * fuzzer starts from messages that get past the first checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "proto.h"
#include "proto_codecs.h"

static int put(const char *dir, const char *name, unsigned sel,
	       const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;
	uint8_t s = (uint8_t)sel;

	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&s, 1, 1, f) != 1 ||
	    (len && fwrite(buf, 1, len, f) != len) || fclose(f)) {
		fprintf(stderr, "gen_corpus: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

static int put_type(const char *dir, const char *name, CLF_Datatype t)
{
	int64_t n = CLF_Type_encode(t, NULL, 0);
	uint8_t *buf;
	int bad;

	if (n <= 0 || !(buf = malloc((size_t)n)))
		return 1;
	bad = CLF_Type_encode(t, buf, (size_t)n) != n ||
	      put(dir, name, PROTO_NCODECS + 1, buf, (size_t)n);
	free(buf);
	return bad;
}

int main(int argc, char **argv)
{
	uint8_t raw[CLF_PROTO_HEADER_SIZE];
	struct wire_writer w = { raw, sizeof(raw), 0 };
	struct clf_proto_header h;
	CLF_Datatype cyc[4], vec, nested, both[2], st;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	for (unsigned i = 0; i < PROTO_NCODECS; i++) {
		const struct proto_codec *c = &proto_codecs[i];
		uint8_t *buf;
		size_t len;

		if (proto_codec_encode(c, c->sample, &buf, &len)) {
			fprintf(stderr, "gen_corpus: %s: %s\n", c->name,
				CLF_Last_error());
			return 1;
		}
		bad |= put(argv[1], c->name, i, buf, len);
		free(buf);
	}
	clf_proto_header_init(&h, CLF_PROTO_OP_LOOKUP, 7);
	h.payload_len = 100;
	clf_proto_header_encode(&w, &h);
	bad |= put(argv[1], "header", PROTO_NCODECS, raw, sizeof(raw));

	if (CLF_Type_pitfalls(0, 3, 16, 1, 4, 4, CLF_BYTE, cyc))
		goto no_type;
	vec = CLF_Type_vector(2, 5, 10, 3, CLF_BYTE);	/* extent 30 */
	nested = vec ? CLF_Type_vector(0, 59, 100, 5, vec) : NULL;
	both[0] = cyc[0];
	both[1] = cyc[2];
	st = CLF_Type_struct(2, both);
	if (!vec || !nested || !st)
		goto no_type;
	bad |= put_type(argv[1], "type-cyclic", cyc[1]);
	bad |= put_type(argv[1], "type-nested", nested);
	bad |= put_type(argv[1], "type-struct", st);
	for (int i = 0; i < 4; i++)
		CLF_Type_free(&cyc[i]);
	CLF_Type_free(&vec);
	CLF_Type_free(&nested);
	CLF_Type_free(&st);
	return bad;

no_type:
	fprintf(stderr, "gen_corpus: %s\n", CLF_Last_error());
	return 1;
}
