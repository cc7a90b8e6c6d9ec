/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_rdma.h -- what the RDMA transport (transport_rdma.c, built
 * with CONFIG_CLF_TRANSPORT_RDMA=y) tells beyond its ops, which callers
 * choose by name ("rdma", see clf_transport_find) or by an address
 * "rdma://host:port" (transport.h).
 */
#ifndef CLF_TRANSPORT_RDMA_H
#define CLF_TRANSPORT_RDMA_H

#include "transport.h"

/* Counts of this process's SENDs posted, receives completed and
 * credit-only SENDs among the former (benchmarks, tests). */
void clf_rdma_stats(unsigned long *sends, unsigned long *recvs,
		    unsigned long *credit_sends);

#endif /* CLF_TRANSPORT_RDMA_H */
