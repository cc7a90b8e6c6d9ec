// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * transport_rdma_memhooks.c -- the memory generation that keeps the
 * registration cache (transport_rdma_regcache.h) from using a
 * registration whose pages were unmapped.
 *
 * Policy, conservative on purpose: any munmap, mremap or page-dropping
 * madvise anywhere in the process starts a new generation when it begins
 * and another when it returns, lookups while one is in flight neither use
 * nor feed the caches, and a new generation empties every registration
 * cache (lazily, at its next lookup).  We see those calls by defining them here: the application's
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
 * process, its events before and after those calls mark them as ours do.
 *
 * Where neither holds -- the process's munmap is not ours (a program on
 * libclf.so, a sanitizer's runtime) and no libucm takes our handlers, or
 * a libucm refuses them (UCX_MEM_EVENTS=no: its earlier hooks may still
 * route munmap past ours) --
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

/*
 * The state: the low STATE_FLIGHT_BITS count unmaps in flight (begun, not
 * yet returned), the rest count every begin and every end.  Marking only
 * the start of an unmap (as a single bump before the syscall would) leaves
 * a window: a lookup after the mark and before the pages go reads the new
 * generation, registers pages that are about to vanish, and keeps them in
 * that generation -- after an mmap at the same address it would serve
 * them again.  With both marks, a lookup that reads "none in flight" got a
 * value that every later unmap changes at its end, and a lookup during an
 * unmap gets CLF_RDMA_MEM_UNSETTLED (cache neither read nor fed).  One
 * atomic word, so the count and the generation are read together.
 */
#define STATE_FLIGHT_BITS 16	/* 65535 threads unmapping at once */
#define STATE_FLIGHT_MASK ((UINT64_C(1) << STATE_FLIGHT_BITS) - 1)
#define STATE_STEP (UINT64_C(1) << STATE_FLIGHT_BITS)

static _Atomic uint64_t state = STATE_STEP;
static _Atomic bool unwatched;	/* unmaps unseen: no reuse (above) */

void clf_rdma_mem_unmap_begin(void)
{
	atomic_fetch_add(&state, STATE_STEP + 1);
}

void clf_rdma_mem_unmap_end(void)
{
	atomic_fetch_add(&state, STATE_STEP - 1);
}

/* An event seen at one instant only (libucm's, or a lookup's own). */
static uint64_t bump(void)
{
	return atomic_fetch_add(&state, STATE_STEP) + STATE_STEP;
}

uint64_t clf_rdma_mem_generation(void)
{
	uint64_t s;

	if (atomic_load_explicit(&unwatched, memory_order_relaxed))
		s = bump();
	else
		s = atomic_load(&state);
	return s & STATE_FLIGHT_MASK ? CLF_RDMA_MEM_UNSETTLED : s;
}

bool clf_rdma_mem_watched(void)
{
	return !atomic_load_explicit(&unwatched, memory_order_relaxed);
}

static pthread_once_t held = PTHREAD_ONCE_INIT;

/*
 * libucm's ucm_set_event_handler() and its native events (ucm/api/ucm.h,
 * a stable ABI), looked up rather than linked: most processes have no
 * UCX.  Its aggregate "VM unmapped" event only comes before the call, so
 * we take the calls that may drop pages themselves: a handler of negative
 * priority runs before the original, one of priority >= 0 after it --
 * the same begin and end as our own hooks (brk also when it grows, and
 * every madvise: more new generations, never fewer; sbrk is brk's, and
 * libucm refuses a handler of it).
 */
#define UCM_EVENT_MUNMAP (1 << 1)
#define UCM_EVENT_MREMAP (1 << 2)
#define UCM_EVENT_SHMDT (1 << 4)
#define UCM_EVENT_MADVISE (1 << 6)
#define UCM_EVENT_BRK (1 << 7)
#define UCM_UNMAPS (UCM_EVENT_MUNMAP | UCM_EVENT_MREMAP | UCM_EVENT_SHMDT | \
		    UCM_EVENT_MADVISE | UCM_EVENT_BRK)
typedef void (*ucm_cb)(int type, void *event, void *arg);
typedef int (*ucm_set_handler)(int events, int priority, ucm_cb cb, void *arg);
typedef void (*ucm_unset_handler)(int events, ucm_cb cb, void *arg);

/* Begins this thread's calls made that an end must match: the "after"
 * handler is installed first, so a call already past the "before" stage
 * when that one is installed ends nothing.  Initial-exec: a handler must
 * not allocate, and a dynamic TLS block may. */
static __thread unsigned ucm_depth __attribute__((tls_model("initial-exec")));

static void ucm_before(int type, void *event, void *arg)
{
	ucm_depth++;
	clf_rdma_mem_unmap_begin();
}

static void ucm_after(int type, void *event, void *arg)
{
	if (!ucm_depth)
		return;
	ucm_depth--;
	clf_rdma_mem_unmap_end();
}

enum ucm_follow { UCM_ABSENT, UCM_FOLLOWED, UCM_REFUSED };

/* Whether libucm is here and took our handlers (UCS_OK is 0). */
static enum ucm_follow follow_ucm(void)
{
	ucm_set_handler set = (ucm_set_handler)dlsym(RTLD_DEFAULT,
						     "ucm_set_event_handler");
	ucm_unset_handler unset = (ucm_unset_handler)dlsym(
		RTLD_DEFAULT, "ucm_unset_event_handler");

	if (!set || !unset)
		return UCM_ABSENT;
	if (set(UCM_UNMAPS, 1, ucm_after, NULL) != 0)
		return UCM_REFUSED;
	if (set(UCM_UNMAPS, -1, ucm_before, NULL) != 0) {
		unset(UCM_UNMAPS, ucm_after, NULL);
		return UCM_REFUSED;
	}
	return UCM_FOLLOWED;
}

/* Whether the process's munmap -- what other code calls -- is ours. */
static bool munmap_is_ours(void)
{
	return dlsym(RTLD_DEFAULT, "munmap") == (void *)munmap;
}

static void hold_once(void)
{
	enum ucm_follow ucm = follow_ucm();

	(void)mallopt(M_MMAP_MAX, 0);
	(void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
	/* A libucm that refused us may still have redirected the process's
	 * munmap calls past ours (its hooks were installed before): then
	 * nothing says an unmap happened. */
	if (ucm == UCM_REFUSED || (ucm == UCM_ABSENT && !munmap_is_ours()))
		atomic_store_explicit(&unwatched, true, memory_order_relaxed);
	bump();	/* what malloc unmapped before is behind us */
}

void clf_rdma_mem_hold(void)
{
	pthread_once(&held, hold_once);
}

int munmap(void *addr, size_t len)
{
	int r;

	clf_rdma_mem_unmap_begin();
	r = (int)syscall(SYS_munmap, addr, len);
	clf_rdma_mem_unmap_end();
	return r;
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
	clf_rdma_mem_unmap_begin();
	r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	clf_rdma_mem_unmap_end();
	return r == -1 ? MAP_FAILED : (void *)r;
}

int madvise(void *addr, size_t len, int advice)
{
	bool drops = advice == MADV_DONTNEED || advice == MADV_FREE ||
		     advice == MADV_REMOVE;
	int r;

	if (drops)
		clf_rdma_mem_unmap_begin();
	r = (int)syscall(SYS_madvise, addr, len, advice);
	if (drops)
		clf_rdma_mem_unmap_end();
	return r;
}
