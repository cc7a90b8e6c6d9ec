/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mpi_bench.h -- what the MPI-IO benchmarks (mpi_matrix, mpi_btio) share:
 * the scenarios and their hints, timing of one collective access with
 * its split into file-system time and the rest, medians, options.
 *
 * The scenarios, all through MPI_File_write_all / read_all:
 *   CLF-phys    clf file whose layout matches the views (subfile_datatypes),
 *               clf's own views and collective I/O
 *               (use_romio_optimizations=false)
 *   ROMIO-phys  the same layout, ROMIO's two-phase collective I/O on the
 *               file as bytes (use_romio_optimizations=true)
 *   ROMIO-rr    round-robin clf layout (striping_unit, striping_factor =
 *               the number of iods), ROMIO's two-phase I/O
 *   ROMIO-ufs   ROMIO's two-phase I/O on a local file ("ufs:"), the
 *               baseline a user would otherwise pick
 *   CLF-idx     CLF-phys with the views written as MPI_Type_indexed lists
 *               of row pieces instead of vectors (mpi_matrix only, run by
 *               default there): what clf makes of the lists applications
 *               and libraries build
 *   CLF-rr      the round-robin layout of ROMIO-rr, clf's own views and
 *               collective I/O (use_romio_optimizations=false): clf on
 *               the layout a user gets without declaring one (asked for
 *               with --scenarios, e.g. clf_rr,romio_rr)
 * ROMIO gets its fair configuration: every process is an aggregator
 * (cb_config_list "*:*", cb_nodes = processes) and collective buffering
 * is on for reads and writes (romio_cb_write, romio_cb_read "enable").
 */
#ifndef CLF_BENCH_MPI_BENCH_H
#define CLF_BENCH_MPI_BENCH_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

enum bench_scenario {
	SC_CLF_PHYS,
	SC_ROMIO_PHYS,
	SC_ROMIO_RR,
	SC_ROMIO_UFS,
	SC_CLF_IDX,
	SC_CLF_RR,
	SC_COUNT
};

/* "CLF-phys", ...; and "clf_phys", ... for CSV columns. */
extern const char *const bench_sc_name[SC_COUNT];
extern const char *const bench_sc_key[SC_COUNT];

struct bench_opts {
	int reps;		/* runs per figure; the median is reported */
	int iods;		/* striping_factor of ROMIO-rr */
	int stripe;		/* striping_unit of ROMIO-rr, bytes */
	unsigned scenarios;	/* bit per enum bench_scenario */
	bool scenarios_set;	/* --scenarios given (else all but CLF-idx) */
	const char *ufs_dir;	/* where the ROMIO-ufs file goes */
	const char *csv;	/* table as CSV (rank 0), or NULL */
	const char *tag;	/* file name prefix */
};

/*
 * Options common to both programs; consumes what it knows from argv
 * (--reps N, --iods N, --stripe BYTES, --scenarios a,b,... (names as in
 * bench_sc_key or bench_sc_name, case-insensitive), --ufs-dir DIR,
 * --csv FILE) and returns the number of arguments left in argv, or -1
 * on a bad option (printed by rank 0).  Defaults: reps
 * $CLF_BENCH_REPS or 3, 2 iods, 64 KiB stripes, every scenario,
 * ufs_dir $TMPDIR or /tmp.
 */
int bench_opts_parse(struct bench_opts *o, int argc, char **argv,
		     const char *prog);

/*
 * The hints of a scenario.  layout: nsub MPI datatypes for
 * subfile_datatypes (the -phys scenarios); nprocs: cb_nodes.  The caller
 * frees the info.
 */
MPI_Info bench_hints(const struct bench_opts *o, enum bench_scenario sc,
		     int nsub, const MPI_Datatype *layout, int nprocs);

/* One line saying which hints each scenario gets (rank 0 prints it). */
void bench_print_hints(const struct bench_opts *o, int nprocs);

/* File name of a scenario: clf:/TAG-NAME-KEY or ufs:DIR/TAG-NAME-KEY. */
void bench_path(const struct bench_opts *o, enum bench_scenario sc,
		const char *name, char *buf, size_t len);

/* One timed collective access, over every process of the file. */
struct bench_time {
	double secs;		/* wall time of the slowest process */
	double io_secs;		/* mean over processes: file-system data calls */
	double other_secs;	/* mean over processes: the rest */
	int err;		/* MPI error of any process (MPI_SUCCESS: none) */
};

/*
 * Barrier, then MPI_File_write_all (write) or read_all of count items of
 * type from buf -- MPI_File_write_at_all / read_at_all at offset (etypes)
 * when offset >= 0 -- timed.  The file-system time is what the clf driver
 * reports with clf_profile (its data calls: ROMIO's aggregators'
 * contiguous accesses, clf's collective calls) or, for ufs:, the time in
 * pread/pwrite; the rest is ROMIO's shuffle between processes and
 * whatever else the call does.  *got: bytes moved by this process.
 */
struct bench_time bench_access(MPI_File fh, enum bench_scenario sc,
			       bool write, MPI_Offset offset, void *buf,
			       int count, MPI_Datatype type, long long *got);

/* a += b, for a run of several accesses (secs too). */
void bench_time_add(struct bench_time *a, const struct bench_time *b);

/*
 * How many accesses make one timed sample, given that one took secs (the
 * slowest process's, so every process gets the same answer): enough to
 * last BENCH_SAMPLE_S, at least 1, at most BENCH_SAMPLE_CALLS_MAX.  A
 * 64 MiB write_all at clf's speed is over in ~15 ms, where scheduling
 * noise on 2 shared cores is +-30%; a quarter second of them is steady.
 */
#define BENCH_SAMPLE_S 0.25
#define BENCH_SAMPLE_CALLS_MAX 32
int bench_calls_per_sample(double secs);

/* t, a sample of n accesses, as the time of one. */
void bench_time_per_call(struct bench_time *t, int n);

/* Median of n values (sorts v). */
double bench_median(double *v, int n);

/* The median run of n by secs (sorts t). */
struct bench_time bench_median_time(struct bench_time *t, int n);

#endif /* CLF_BENCH_MPI_BENCH_H */
