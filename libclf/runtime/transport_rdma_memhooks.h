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

/* While some thread is unmapping: neither trust nor keep a registration. */
#define CLF_RDMA_MEM_UNSETTLED 0

/* The generation now, or CLF_RDMA_MEM_UNSETTLED. */
uint64_t clf_rdma_mem_generation(void);

/* Around a call that may drop pages (what munmap here does): between
 * them the generation is unsettled, and each moves it. */
void clf_rdma_mem_unmap_begin(void);
void clf_rdma_mem_unmap_end(void);

/* Before the first cached registration: keep malloc from unmapping
 * behind the hooks' back (once per process). */
void clf_rdma_mem_hold(void);

/* After clf_rdma_mem_hold: whether unmaps are seen, so that a cached
 * registration may serve again (else each lookup is a new generation). */
bool clf_rdma_mem_watched(void);

#endif /* CLF_TRANSPORT_RDMA_MEMHOOKS_H */
