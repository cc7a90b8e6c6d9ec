// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * io_retry.c -- an independent access that met a subfile on the move
 * (`clf iod remove`; docs/elastic.md).
 *
 * While a file's subfiles are copied off an iod, that iod refuses its
 * writes with -ESTALE (its reads too once metad names the new iod); once
 * the iod is gone, connecting to it fails with -EHOSTDOWN.  Either way
 * the client asks metad for the layout again: a subfile that moved gets
 * its new iod (its view is registered there at the next access, as after
 * an iod restart), and the access goes again whole.  That is safe for
 * the same reason as a retry through an iod restart: reads change
 * nothing, and a write puts the same bytes at the same offsets.  While
 * the layout has not changed yet (the copy is running), the access waits
 * and tries again, for at most MOVE_WAIT_MS.
 *
 * A collective access is done again the same way, as an independent
 * access of the process's own bytes (clf_file_io_v): the others' requests
 * to the same operations may have been refused, or taken before the
 * fence, so the operation cannot be met again as it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "client_i.h"
#include "error.h"
#include "proto.h"

/* A copy of a subfile runs at disk speed: 2 minutes is ~10 GiB. */
#define MOVE_WAIT_MS 120000
#define MOVE_PAUSE_MAX_MS 200

/* Forget the view registrations of subfile j, in the current view and
 * in the cached ones: they were made at its old iod. */
static void forget_subfile(struct clf_file *f, int j)
{
	f->handle_gen[j] = 0;
	f->handles[j] = 0;
	for (int i = 0; i < CLF_VIEW_CACHE; i++) {
		struct clf_view_slot *v = &f->view_cache[i];

		if (v->key && v->handle_gen) {
			v->handle_gen[j] = 0;
			v->handles[j] = 0;
		}
	}
}

/* Take the iods metad names now for f's subfiles; *changed when one
 * differs from what f had. */
static int relayout(struct clf_file *f, bool *changed)
{
	struct clf_layout *l = f->layout;
	struct clf_proto_ino req = { f->ino };
	struct clf_proto_layout pl;
	struct wire_reader r;
	void *payload;
	uint32_t len;
	int err;

	*changed = false;
	err = clf_meta_call(CLF_PROTO_OP_GET_LAYOUT, clf_enc_ino, &req,
			    &payload, &len);
	if (err)
		return err;
	r = (struct wire_reader){ .buf = payload, .len = len };
	err = clf_proto_layout_decode(&r, &pl);
	if (err)
		goto free;
	if (pl.kind != CLF_PROTO_LAYOUT_EXPLICIT ||
	    pl.nsubfiles != (uint32_t)l->nsub) {
		err = clf_fail(EPROTO, "clf: file %llu has %u subfiles at metad, %d here",
			       (unsigned long long)f->ino, pl.nsubfiles,
			       l->nsub);
		goto release;
	}
	for (int j = 0; j < l->nsub; j++) {
		if (l->iods[j] == pl.subfiles[j].iod)
			continue;
		l->iods[j] = pl.subfiles[j].iod;
		forget_subfile(f, j);
		*changed = true;
	}
	if (l->head_iod != pl.disp_iod) {
		l->head_iod = pl.disp_iod;
		*changed = true;
	}
release:
	clf_proto_layout_release(&pl);
free:
	free(payload);
	return err;
}

void clf_move_wait_begin(struct clf_move_wait *w)
{
	w->start_ms = clf_now_ms();
	w->pause_ms = 5;
}

bool clf_move_again(struct clf_file *f, struct clf_move_wait *w, int err)
{
	struct timespec ts;
	bool changed;

	if (err != -ESTALE && err != -EHOSTDOWN)
		return false;
	if (relayout(f, &changed))
		return false;	/* the access's own error says more */
	if (changed)
		return true;
	if (err == -EHOSTDOWN ||
	    clf_now_ms() - w->start_ms > MOVE_WAIT_MS)
		return false;
	ts = (struct timespec){ 0, w->pause_ms * 1000000L };
	nanosleep(&ts, NULL);
	if (w->pause_ms < MOVE_PAUSE_MAX_MS)
		w->pause_ms *= 2;
	return true;
}

bool clf_move_coll_again(struct clf_file *f, int err)
{
	bool changed;

	if (err == -ESTALE || err == -EHOSTDOWN)
		return true;
	/* A participant refused by a fenced iod never came to the others'
	 * operations: they time out.  Only a layout that changed tells a
	 * move from a participant that failed. */
	return err == -ETIMEDOUT && !relayout(f, &changed) && changed;
}
