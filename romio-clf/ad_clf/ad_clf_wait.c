/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_wait.c -- the collective agreement of clf's collective access
 * (ad_clf_coll.c), waited for without holding the core.
 *
 * MPICH busy-polls in every blocking call.  In a collective access the
 * processes whose requests were answered first enter the next call's
 * MPI_Allreduce and spin there, while the iods still serve the others'
 * requests: with as many processes as cores, every thread the slowest
 * request needs (the iod worker that serves it, the process woken by its
 * reply) finds each core held by a spinning process, and waits until the
 * scheduler takes one away -- a time slice, milliseconds, per call (a
 * 1 KiB write_all took 4.1 ms at 16 processes on 16 cores against 0.12
 * ms at 8).  ROMIO on a local file does its I/O in the process itself,
 * which thus needs no other thread to run.
 *
 * So the agreement is an MPI_Iallreduce, tested in a loop that spins a
 * little (an agreement among processes that are all there takes a few
 * microseconds), then gives the core to whatever else is runnable on it
 * (sched_yield between tests) for ADIOI_CLF_WAIT_YIELD_US, then sleeps
 * with a backoff: a process that waits long waits for a daemon, which
 * then has the core.  Sleeps start at 2 us and double up to 64 us (a
 * late answer costs the agreement at most that), and beyond, in a long
 * wait (a process late to the call), up to a 32nd of the time waited:
 * a 300 ms wait then costs about 2 ms of CPU instead of 300
 * (romio_coll's test_waiting_yields).
 *
 * The barrier that ends a collective write (every process's bytes are
 * visible when it returns: ad_clf_io_strided.c) is waited for the same
 * way: the processes answered first wait there for the slowest request;
 * so are the MPI_Allgather and the per-round agreement of an access cut
 * in rounds (more than 64 MiB per process: ad_clf_coll.c).
 *
 * A large collective read ends with such a barrier too (a write always
 * does; ad_clf_coll.c): otherwise the processes served first go on to
 * the application's next MPI call, where MPICH spins, and hold the cores
 * that the iods serving the others' shares need.
 * CLF_ROMIO_READ_BARRIER=0 leaves it out, for comparisons.
 *
 * The long yield phase of many cores is kept for accesses of every size.
 * Shortened to 50 us for accesses over 256 KiB per process (on the
 * reasoning that a process yielding in a loop stays runnable and keeps
 * the iods' threads off the cores), it lost on the 16-core machine: 16
 * processes, 16 iods (bench/scale.sh --quick, coarse k = 16 and fine
 * k = 1, MB/s written), 50 us 7072 / 7834 and 8123 / 7188 against 2 ms
 * 22394 / 23627 and 24110 / 24882 in the same run: the sleeping processes
 * woke late for each round of their own requests.
 *
 * CLF_ROMIO_COLL_WAIT chooses otherwise, for measurements: "spin" (the
 * plain MPI_Allreduce, as before), "yield" (never sleeps), "sleep" (the
 * default), each optionally followed by ":YIELD_US[:SLEEP_MAX_US]".
 */

#define _GNU_SOURCE
#include "ad_clf.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

/* Tests before the first yield: an agreement of processes that are all
 * there costs a few microseconds. */
#define ADIOI_CLF_WAIT_SPIN_US 5.0
/*
 * Then tests with a yield between them, until this long: a yield gives
 * the core to a daemon or process that needs it and otherwise returns at
 * once, where a sleep's wake-up is what the call would wait for (16
 * processes on 16 cores, 1 KiB write_all: 1214 us with a 50 us phase,
 * 191 us with 2000).  Once only on 8 cores or more: on this 2-core VM a
 * sleep wakes ~100 us late (a nanosleep of 2 us takes 108), and the 50 us
 * phase cost every call that waited longer (mpi_small --only xfer, us
 * per call, 2000 against 50, same invocation: 2 processes, 1 KiB
 * write_all 5.8 against 11.6-43, 47008-byte read_all 68 against 120,
 * 1 MiB write_all 734 against 909; 4 processes on the 2 cores, 1 KiB
 * write_all 109-128 against 945-983, 1 MiB 2803-3018 against 2997-3176).
 */
#define ADIOI_CLF_WAIT_YIELD_US 2000.0
/* A collective read of more bytes than this per process, by any process,
 * ends in a barrier (ADIOI_CLF_Wait_large). */
#define ADIOI_CLF_WAIT_SMALL_BYTES (256 * 1024)
/* Then sleeps, doubling from the first to the longest (ns). */
#define ADIOI_CLF_WAIT_SLEEP_MIN_NS 2000L
#define ADIOI_CLF_WAIT_SLEEP_MAX_NS 64000L
/* The longest sleep of a long wait (a late process). */
#define ADIOI_CLF_WAIT_SLEEP_LONG_NS 8000000L

enum { ADIOI_CLF_WAIT_SPIN, ADIOI_CLF_WAIT_YIELD, ADIOI_CLF_WAIT_SLEEP };

static double yield_us = ADIOI_CLF_WAIT_YIELD_US;
static long sleep_max_ns = ADIOI_CLF_WAIT_SLEEP_MAX_NS;

static int ADIOI_CLF_Wait_mode(void)
{
    static int mode = -1;
    const char *s;

    if (mode >= 0)
        return mode;
    s = getenv("CLF_ROMIO_COLL_WAIT");
    if (s && !strncmp(s, "spin", 4))
        mode = ADIOI_CLF_WAIT_SPIN;
    else if (s && !strncmp(s, "yield", 5))
        mode = ADIOI_CLF_WAIT_YIELD;
    else
        mode = ADIOI_CLF_WAIT_SLEEP;
    if (s && strchr(s, ':')) {
        char *e;

        yield_us = strtod(strchr(s, ':') + 1, &e);
        if (*e == ':')
            sleep_max_ns = strtol(e + 1, NULL, 10) * 1000L;
    }
    return mode;
}

static void ADIOI_CLF_Wait(MPI_Request * req, int mode, ADIO_Offset bytes)
{
    double t0 = MPI_Wtime(), us, yield_for = yield_us;
    long sleep_ns = ADIOI_CLF_WAIT_SLEEP_MIN_NS;
    int done = 0, slack = -1;

    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        us = (MPI_Wtime() - t0) * 1e6;
        if (us < ADIOI_CLF_WAIT_SPIN_US)
            continue;
        if (mode == ADIOI_CLF_WAIT_YIELD || us < yield_for) {
            sched_yield();
            continue;
        }
        /* The default timer slack (50 us) would stretch every short
         * sleep to it: ours is exact while we sleep. */
        if (slack < 0) {
            slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
            if (slack >= 0)
                prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        }
        {
            struct timespec ts = { 0, sleep_ns };

            nanosleep(&ts, NULL);
        }
        /* A long wait sleeps longer, up to a 32nd of what it waited:
         * a few percent later, and almost no CPU. */
        if (sleep_ns < sleep_max_ns || sleep_ns < us * (1000 / 32))
            sleep_ns *= 2;
        if (sleep_ns > ADIOI_CLF_WAIT_SLEEP_LONG_NS)
            sleep_ns = ADIOI_CLF_WAIT_SLEEP_LONG_NS;
    }
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long) slack, 0, 0, 0);
}

int ADIOI_CLF_Wait_large(ADIO_Offset bytes)
{
    static int barrier = -1;

    if (barrier < 0) {
        const char *s = getenv("CLF_ROMIO_READ_BARRIER");

        barrier = !(s && !strcmp(s, "0"));
    }
    return barrier && bytes > ADIOI_CLF_WAIT_SMALL_BYTES;
}

int ADIOI_CLF_Allreduce(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                        ADIO_Offset bytes)
{
    int mode = ADIOI_CLF_Wait_mode(), rc;
    MPI_Request req;

    if (mode == ADIOI_CLF_WAIT_SPIN)
        return MPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm);
    rc = MPI_Iallreduce(MPI_IN_PLACE, buf, count, type, op, comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    ADIOI_CLF_Wait(&req, mode, bytes);
    return MPI_SUCCESS;
}

int ADIOI_CLF_Allgather(const void *sendbuf, int count, MPI_Datatype type, void *recvbuf,
                        MPI_Comm comm, ADIO_Offset bytes)
{
    int mode = ADIOI_CLF_Wait_mode(), rc;
    MPI_Request req;

    if (mode == ADIOI_CLF_WAIT_SPIN)
        return MPI_Allgather(sendbuf, count, type, recvbuf, count, type, comm);
    rc = MPI_Iallgather(sendbuf, count, type, recvbuf, count, type, comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    ADIOI_CLF_Wait(&req, mode, bytes);
    return MPI_SUCCESS;
}

int ADIOI_CLF_Barrier(MPI_Comm comm, ADIO_Offset bytes)
{
    int mode = ADIOI_CLF_Wait_mode(), rc;
    MPI_Request req;

    if (mode == ADIOI_CLF_WAIT_SPIN)
        return MPI_Barrier(comm);
    rc = MPI_Ibarrier(comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    ADIOI_CLF_Wait(&req, mode, bytes);
    return MPI_SUCCESS;
}
