// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proto_link.c -- the rules of the metad bodies for special files and
 * hard links (1.6) that tie fields together: READLINK's reply, MKNOD.
 * The fields (SYMLINK, READLINK, LINK, MKNOD) are declared in proto.h.
 */
#include <errno.h>
#include <sys/stat.h>

#include "error.h"
#include "proto_i.h"

int proto_check_readlink_rep(const void *msg)
{
	const struct clf_proto_readlink_rep *m = msg;

	if (m->target.len && m->rdev)
		return clf_fail(EPROTO,
				"proto: READLINK: both a target and a device number");
	return 0;
}

int proto_check_mknod_req(const void *msg)
{
	const struct clf_proto_mknod_req *m = msg;
	uint32_t fmt = m->mode & S_IFMT;

	if ((m->mode & ~(uint32_t)(S_IFMT | CLF_PROTO_MODE_PERM)) ||
	    (fmt != S_IFIFO && fmt != S_IFSOCK && fmt != S_IFCHR &&
	     fmt != S_IFBLK))
		return clf_fail(EPROTO, "proto: MKNOD: mode 0%o is no fifo, "
				"socket or device", m->mode);
	if ((fmt == S_IFIFO || fmt == S_IFSOCK) && m->rdev)
		return clf_fail(EPROTO,
				"proto: MKNOD: a device number for a fifo or socket");
	return 0;
}
