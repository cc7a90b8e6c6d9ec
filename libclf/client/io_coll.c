// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * io_coll.c -- collective accesses planned per subfile: a process meets
 * the others at an iod only where its pieces merge with theirs.
 *
 * CLF_ncwrite_at_all is a roll call: every participant sends a request
 * to every subfile of the file, empty where it has no bytes, so that
 * each iod knows how many to wait for.  A 1 KiB write_all of 2 processes
 * over 2 iods was 4 requests and two meetings where 2 requests would do,
 * and each meeting costs a wake-up per participant and the wait for the
 * slowest.  A planned access instead:
 *
 *  1. CLF_coll_plan: each process finds, for its own view range, the
 *     subfiles where its share is two runs or more (the share gains from
 *     the iod's merge of everyone's pieces into ordered requests).  Where
 *     its share is one run the merge adds nothing -- the iod writes such
 *     a piece as it comes (iod_direct.c) -- but the wait.
 *  2. The caller sums those marks over its processes, once per access
 *     (the ROMIO driver: one MPI_Allreduce, which it needs anyway to
 *     agree on failures): participants[j] is the number of processes
 *     whose shares merge at subfile j.
 *  3. CLF_ncwrite_at_allv / CLF_ncread_at_allv: each process sends one
 *     request per subfile it has bytes on -- to subfile j's merge, with
 *     participants[j], where its share merges; as an independent request
 *     where it does not.  No request carries an empty range.
 *
 * The iods need nothing new: an operation is (tag, file, subfile) and
 * counts the requests of that subfile (iod_collective.c), so a count per
 * subfile is what they always took.  The guarantees stay: each process's
 * call returns once its own bytes are in the subfiles (visible to any
 * later read, clf_proto.h "Size"), and the caller's sum in step 2, which
 * every process enters after its previous access returned, orders one
 * collective access after the one before, as the roll call did.
 */
#include <errno.h>

#include "client_i.h"
#include "error.h"

static int ensure_view(struct clf_file *f)
{
	if (f->view)
		return 0;
	return clf_viewmap_create(f->layout, f->view_disp, f->view_type,
				  &f->view);
}

int CLF_coll_subfiles(int fd)
{
	struct clf_file *f;
	int err = clf_file_get(fd, &f), n;

	if (err)
		return err;
	n = f->layout->nsub;
	clf_file_put(f);
	return n;
}

int64_t CLF_coll_plan(int fd, int64_t view_off, int64_t n, int write,
		      uint32_t *merge)
{
	struct clf_file *f;
	int err = clf_file_get(fd, &f);

	if (err)
		return err;
	err = clf_file_io_check(f, view_off, n, write);
	if (!err && !write)
		n = clf_file_readable(f, view_off, n);
	if (!err && n > CLF_PROTO_DATA_MAX)
		err = clf_fail(E2BIG, "clf: a collective access moves at most %u view bytes per process (asked %lld)",
			       CLF_PROTO_DATA_MAX, (long long)n);
	if (!err && n >= 0)
		err = ensure_view(f);
	for (int j = 0; !err && n >= 0 && j < f->layout->nsub; j++) {
		int m = clf_coll_merges(f->view, j, view_off, view_off + n);

		if (m < 0)
			err = m;
		else
			merge[j] = (uint32_t)m;
	}
	clf_file_put(f);
	return err ? err : n;
}

static ssize_t io_allv(int fd, int64_t view_off, void *buf,
		       CLF_Datatype memtype, int64_t n, bool write,
		       uint64_t tag, const uint32_t *participants)
{
	struct clf_file *f;
	bool merges = false;
	int64_t ret;
	int err;

	if (memtype && CLF_Type_size(memtype) < n)
		return clf_fail(EINVAL, "clf: the memory type holds %lld bytes, fewer than the %lld to move",
				(long long)CLF_Type_size(memtype),
				(long long)n);
	err = clf_file_get(fd, &f);
	if (err)
		return err;
	err = clf_file_io_check(f, view_off, n, write);
	if (!err)
		err = ensure_view(f);
	for (int j = 0; !err && j < f->layout->nsub; j++) {
		int m = clf_coll_merges(f->view, j, view_off, view_off + n);

		if (m < 0)
			err = m;
		else if (m && (participants[j] < 1 ||
			       participants[j] > CLF_PROTO_MAX_PARTICIPANTS))
			err = clf_fail(EINVAL, "clf: subfile %d: a merge needs 1..%u participants (got %u)",
				       j, CLF_PROTO_MAX_PARTICIPANTS,
				       participants[j]);
		merges = merges || m > 0;
	}
	/* Nothing of ours merges: an independent access (io_small.c's
	 * plain ranges when the view is not registered), through the
	 * client cache where small: processes that interleave small
	 * shares at a stride each hold a strided lock over their own
	 * (xcache.c), and pass no lock back and forth. */
	ret = err ? err
		  : clf_file_io_v(f, view_off, n, buf, memtype, write,
				  merges ? tag : 0, 0,
				  merges ? participants : NULL, !merges);
	clf_file_put(f);
	return ret;
}

ssize_t CLF_ncread_at_allv(int fd, int64_t view_off, void *buf,
			   CLF_Datatype memtype, int64_t n, uint64_t tag,
			   const uint32_t *participants)
{
	return io_allv(fd, view_off, buf, memtype, n, false, tag,
		       participants);
}

ssize_t CLF_ncwrite_at_allv(int fd, int64_t view_off, const void *buf,
			    CLF_Datatype memtype, int64_t n, uint64_t tag,
			    const uint32_t *participants)
{
	return io_allv(fd, view_off, (void *)buf, memtype, n, true, tag,
		       participants);
}
