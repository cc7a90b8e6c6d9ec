// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_rdma_memhooks.c -- the memory generation that keeps the
 * registration cache (transport_rdma_regcache.h) from using a
 * registration whose pages were unmapped.
 *
 * Policy, conservative on purpose: any munmap, mremap or page-dropping
 * madvise anywhere in the process starts a new generation, and a new
 * generation empties every registration cache (lazily, at its next
 * lookup).  We see those calls by defining them here: the application's
 * and other libraries' calls resolve to these before libc's (ELF symbol
 * interposition) and reach the kernel through syscall(2).  A shared
 * library holding libclf must export them unversioned for that
 * (romio-clf/libromio-clf.map does; libclf.so's CLF_0 node cannot, so a
 * program on libclf.so is seen only by libclf's own unmaps).  What we cannot
 * see is glibc's malloc unmapping or trimming through its internal
 * aliases; so the first registration in a process tells malloc never to
 * do that (mmap'd chunks off, trimming only beyond 2 GiB of free top):
 * memory that free() returns stays mapped, with its pages, for malloc to
 * hand out again -- which is also what makes a reused buffer hit.  A
 * sanitizer's runtime, loaded first, takes these symbols before us and the
 * cache then still empties on our own unmaps only: sanitizer builds are
 * not run over RDMA.
 *
 * UCX's memory hooks (libucm, loaded by MPICH and Open MPI over UCX)
 * take the same calls a stronger way: they patch the code of the first
 * munmap, mremap and madvise the process resolves -- these, in a library
 * that exports them -- so ours no longer run.  When libucm is in the
 * process, its unmap events start a new generation too.
 *
 * Where neither holds -- the process's munmap is not ours (a program on
 * libclf.so, a sanitizer's runtime) and no libucm takes our handler --
 * unmaps go unseen, and every lookup starts a generation of its own: a
 * registration then serves one transfer only, slower but never stale.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "transport_rdma_memhooks.h"

static _Atomic uint64_t generation = 1;
static _Atomic bool unwatched;	/* unmaps unseen: no reuse (above) */

static void bump(void)
{
	atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

uint64_t clf_rdma_mem_generation(void)
{
	if (atomic_load_explicit(&unwatched, memory_order_relaxed))
		bump();
	return atomic_load_explicit(&generation, memory_order_acquire);
}

bool clf_rdma_mem_watched(void)
{
	return !atomic_load_explicit(&unwatched, memory_order_relaxed);
}

static pthread_once_t held = PTHREAD_ONCE_INIT;

/* libucm's ucm_set_event_handler() and UCM_EVENT_VM_UNMAPPED (ucm/api/
 * ucm.h, a stable ABI), looked up rather than linked: most processes have
 * no UCX. */
#define UCM_EVENT_VM_UNMAPPED (1 << 17)
typedef void (*ucm_cb)(int type, void *event, void *arg);
typedef int (*ucm_set_handler)(int events, int priority, ucm_cb cb, void *arg);

static void ucm_unmapped(int type, void *event, void *arg)
{
	bump();
}

/* Whether libucm took our handler (UCS_OK is 0). */
static bool follow_ucm(void)
{
	ucm_set_handler set = (ucm_set_handler)dlsym(RTLD_DEFAULT,
						     "ucm_set_event_handler");

	/* Fails (and ours run) where UCX's hooks are off. */
	return set && set(UCM_EVENT_VM_UNMAPPED, 0, ucm_unmapped, NULL) == 0;
}

/* Whether the process's munmap -- what other code calls -- is ours. */
static bool munmap_is_ours(void)
{
	return dlsym(RTLD_DEFAULT, "munmap") == (void *)munmap;
}

static void hold_once(void)
{
	bool ucm = follow_ucm();

	(void)mallopt(M_MMAP_MAX, 0);
	(void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
	if (!ucm && !munmap_is_ours())
		atomic_store_explicit(&unwatched, true, memory_order_relaxed);
	bump();	/* what malloc unmapped before is behind us */
}

void clf_rdma_mem_hold(void)
{
	pthread_once(&held, hold_once);
}

int munmap(void *addr, size_t len)
{
	bump();
	return (int)syscall(SYS_munmap, addr, len);
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	long r;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	bump();
	r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	return r == -1 ? MAP_FAILED : (void *)r;
}

int madvise(void *addr, size_t len, int advice)
{
	if (advice == MADV_DONTNEED || advice == MADV_FREE ||
	    advice == MADV_REMOVE)
		bump();
	return (int)syscall(SYS_madvise, addr, len, advice);
}
