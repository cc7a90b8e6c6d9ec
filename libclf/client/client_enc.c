// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client_enc.c -- the metad request encoders with one signature, for
 * clf_encode() and clf_meta_call() (client_route.c).
 */
#include <stdlib.h>

#include "client_i.h"

int clf_enc_lookup(struct wire_writer *w, const void *m)
{
	return clf_proto_lookup_req_encode(w, m);
}

int clf_enc_create(struct wire_writer *w, const void *m)
{
	return clf_proto_create_req_encode(w, m);
}

int clf_enc_mkdir(struct wire_writer *w, const void *m)
{
	return clf_proto_mkdir_req_encode(w, m);
}

int clf_enc_path(struct wire_writer *w, const void *m)
{
	return clf_proto_path_req_encode(w, m);
}

int clf_enc_rename(struct wire_writer *w, const void *m)
{
	return clf_proto_rename_req_encode(w, m);
}

int clf_enc_readdir(struct wire_writer *w, const void *m)
{
	return clf_proto_readdir_req_encode(w, m);
}

int clf_enc_ino(struct wire_writer *w, const void *m)
{
	return clf_proto_ino_encode(w, m);
}

int clf_enc_setattr(struct wire_writer *w, const void *m)
{
	return clf_proto_setattr_req_encode(w, m);
}

int clf_enc_update_size(struct wire_writer *w, const void *m)
{
	return clf_proto_update_size_req_encode(w, m);
}

int clf_enc_set_layout(struct wire_writer *w, const void *m)
{
	return clf_proto_set_layout_req_encode(w, m);
}

int clf_enc_empty(struct wire_writer *w, const void *m)
{
	(void)w;
	(void)m;
	return 0;
}
