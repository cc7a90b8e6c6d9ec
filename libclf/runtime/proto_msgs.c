// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_msgs.c -- the codec functions of every declared message, made
 * from CLF_PROTO_MESSAGES and the field lists of proto.h: a descriptor
 * table per body, and encode, decode and release calling proto_decl.c.
 */
#include <stddef.h>

#include "proto_i.h"

#define PROTO_DESCRIPTOR(NAME, TYPE, FIELDS, WHAT, CHECK)		\
	static const struct proto_field NAME##_fields[] = {		\
		FIELDS(PROTO_FIELD, struct clf_proto_##TYPE)		\
	};								\
	const struct proto_msg proto_msg_##NAME = {			\
		WHAT, NAME##_fields,					\
		sizeof(NAME##_fields) / sizeof(NAME##_fields[0]),	\
		sizeof(struct clf_proto_##TYPE), CHECK			\
	};

#define PROTO_FUNCTIONS(NAME, TYPE, FIELDS, WHAT, CHECK)		\
	int clf_proto_##NAME##_encode(struct wire_writer *w,		\
				      const struct clf_proto_##TYPE *m)	\
	{								\
		return proto_msg_encode(w, &proto_msg_##NAME, m, false); \
	}								\
	int clf_proto_##NAME##_decode(struct wire_reader *r,		\
				      struct clf_proto_##TYPE *m)	\
	{								\
		struct clf_proto_##TYPE t;				\
		int err = proto_msg_decode(r, &proto_msg_##NAME, &t);	\
									\
		if (!err)						\
			*m = t;						\
		return err;						\
	}								\
	void clf_proto_##NAME##_release(struct clf_proto_##TYPE *m)	\
	{								\
		if (m)							\
			proto_msg_release(&proto_msg_##NAME, m);	\
	}

#define PROTO_EXTERN(NAME, TYPE, FIELDS, WHAT, CHECK) \
	extern const struct proto_msg proto_msg_##NAME;

PROTO_DESCRIPTOR(error, error, CLF_PROTO_ERROR, "error", NULL)
CLF_PROTO_PARTS(PROTO_EXTERN)
CLF_PROTO_MESSAGES(PROTO_EXTERN)
CLF_PROTO_PARTS(PROTO_DESCRIPTOR)
CLF_PROTO_MESSAGES(PROTO_DESCRIPTOR)
CLF_PROTO_MESSAGES(PROTO_FUNCTIONS)

/* The error body: declared, but an empty payload decodes as "". */
int clf_proto_error_encode(struct wire_writer *w,
			   const struct clf_proto_error *m)
{
	return proto_msg_encode(w, &proto_msg_error, m, false);
}

int clf_proto_error_decode(struct wire_reader *r, struct clf_proto_error *m)
{
	struct clf_proto_error t;
	int err;

	if (proto_left(r) == 0 && !r->bad) {
		m->message = (struct clf_proto_str){ "", 0 };
		return 0;
	}
	err = proto_msg_decode(r, &proto_msg_error, &t);
	if (!err)
		*m = t;
	return err;
}

/* The sizes 1.8 has; a field added before the data changes them. */
_Static_assert(CLF_PROTO_SUB_WRITE_HEAD == 24, "SUB_WRITE head");
_Static_assert(CLF_PROTO_VIEW_WRITE_HEAD == 40, "VIEW_WRITE head");

/* Heads: the bodies of a write without its data bytes. */
int clf_proto_data_encode_head(struct wire_writer *w,
			       const struct clf_proto_data *m)
{
	return proto_msg_encode(w, &proto_msg_data, m, true);
}

int clf_proto_sub_write_req_encode_head(struct wire_writer *w,
					const struct clf_proto_sub_write_req *m)
{
	return proto_msg_encode(w, &proto_msg_sub_write_req, m, true);
}

int clf_proto_sub_writev_req_encode_head(struct wire_writer *w,
					 const struct clf_proto_sub_vec_req *m)
{
	return proto_msg_encode(w, &proto_msg_sub_writev_req, m, true);
}

int clf_proto_view_write_req_encode_head(struct wire_writer *w,
					 const struct clf_proto_view_io_req *m)
{
	return proto_msg_encode(w, &proto_msg_view_write_req, m, true);
}

int clf_proto_sub_write_req_decode_head(struct wire_reader *r,
					size_t payload_len,
					struct clf_proto_sub_write_req *m)
{
	struct clf_proto_sub_write_req t;
	int err = proto_msg_decode_head(r, payload_len,
					&proto_msg_sub_write_req, &t);

	if (!err)
		*m = t;
	return err;
}

int clf_proto_view_write_req_decode_head(struct wire_reader *r,
					 size_t payload_len,
					 struct clf_proto_view_io_req *m)
{
	struct clf_proto_view_io_req t;
	int err = proto_msg_decode_head(r, payload_len,
					&proto_msg_view_write_req, &t);

	if (!err)
		*m = t;
	return err;
}
