/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_rdma_memhooks.h -- the process's memory generation: it
 * changes whenever memory may have been unmapped (policy in
 * transport_rdma_memhooks.c).
 */
#ifndef CLF_TRANSPORT_RDMA_MEMHOOKS_H
#define CLF_TRANSPORT_RDMA_MEMHOOKS_H

#include <stdbool.h>
#include <stdint.h>

uint64_t clf_rdma_mem_generation(void);

/* Before the first cached registration: keep malloc from unmapping
 * behind the hooks' back (once per process). */
void clf_rdma_mem_hold(void);

/* After clf_rdma_mem_hold: whether unmaps are seen, so that a cached
 * registration may serve again (else each lookup is a new generation). */
bool clf_rdma_mem_watched(void);

#endif /* CLF_TRANSPORT_RDMA_MEMHOOKS_H */
