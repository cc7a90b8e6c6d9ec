/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * transport_rdma_memhooks.h -- the process's memory generation: it
 * changes whenever memory may have been unmapped (policy in
 * transport_rdma_memhooks.c).
 */
#ifndef CLF_TRANSPORT_RDMA_MEMHOOKS_H
#define CLF_TRANSPORT_RDMA_MEMHOOKS_H

#include <stdint.h>

uint64_t clf_rdma_mem_generation(void);

/* Before the first cached registration: keep malloc from unmapping
 * behind the hooks' back (once per process). */
void clf_rdma_mem_hold(void);

#endif /* CLF_TRANSPORT_RDMA_MEMHOOKS_H */
