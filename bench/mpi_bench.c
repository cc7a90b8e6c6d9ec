// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_bench.c -- the scenarios, hints and timing shared by the MPI-IO
 * benchmarks (mpi_bench.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <unistd.h>

#include "mpi_bench.h"

const char *const bench_sc_name[SC_COUNT] = { "CLF-phys", "ROMIO-phys",
					      "ROMIO-rr", "ROMIO-ufs",
					      "CLF-idx", "CLF-rr" };
const char *const bench_sc_key[SC_COUNT] = { "clf_phys", "romio_phys",
					     "romio_rr", "romio_ufs",
					     "clf_idx", "clf_rr" };

#define REPS_MAX 31

/* ------------------------------------------------------------------ */
/* Time in pread/pwrite, for ufs: ROMIO calls them from its library,   */
/* and the definitions below come first.                               */
/* ------------------------------------------------------------------ */

static bool counting;		/* inside a timed access */
static double posix_io_secs;	/* time in pread/pwrite while counting */

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static pwrite_fn real;
	double t0;
	ssize_t r;

	if (!real)
		real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
	if (!counting)
		return real(fd, buf, n, off);
	t0 = MPI_Wtime();
	r = real(fd, buf, n, off);
	posix_io_secs += MPI_Wtime() - t0;
	return r;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static pread_fn real;
	double t0;
	ssize_t r;

	if (!real)
		real = (pread_fn)dlsym(RTLD_NEXT, "pread");
	if (!counting)
		return real(fd, buf, n, off);
	t0 = MPI_Wtime();
	r = real(fd, buf, n, off);
	posix_io_secs += MPI_Wtime() - t0;
	return r;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

static int scenario_of(const char *s, size_t len)
{
	for (int i = 0; i < SC_COUNT; i++)
		if ((strlen(bench_sc_key[i]) == len &&
		     !strncasecmp(s, bench_sc_key[i], len)) ||
		    (strlen(bench_sc_name[i]) == len &&
		     !strncasecmp(s, bench_sc_name[i], len)))
			return i;
	return -1;
}

static int parse_scenarios(const char *s, unsigned *mask)
{
	*mask = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		int sc = scenario_of(s, len);

		if (sc < 0)
			return -1;
		*mask |= 1u << sc;
		s += len + (s[len] == ',');
	}
	return *mask ? 0 : -1;
}

int bench_opts_parse(struct bench_opts *o, int argc, char **argv,
		     const char *prog)
{
	const char *reps = getenv("CLF_BENCH_REPS");
	int rank, left = 1, bad = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	*o = (struct bench_opts){
		.reps = reps ? atoi(reps) : 3,
		.iods = 2,
		.stripe = 64 * 1024,
		/* CLF-idx only where a program builds indexed views. */
		.scenarios = ((1u << SC_COUNT) - 1) &
			     ~(1u << SC_CLF_IDX | 1u << SC_CLF_RR),
		.ufs_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		.tag = prog,
	};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--reps") && v)
			o->reps = atoi(v);
		else if (!strcmp(a, "--iods") && v)
			o->iods = atoi(v);
		else if (!strcmp(a, "--stripe") && v)
			o->stripe = atoi(v);
		else if (!strcmp(a, "--scenarios") && v) {
			bad |= parse_scenarios(v, &o->scenarios) != 0;
			o->scenarios_set = true;
		} else if (!strcmp(a, "--ufs-dir") && v)
			o->ufs_dir = v;
		else if (!strcmp(a, "--csv") && v)
			o->csv = v;
		else {
			argv[left++] = argv[i];
			continue;
		}
		i++;
	}
	if (o->reps < 1 || o->reps > REPS_MAX || o->iods < 1 ||
	    o->stripe < 1)
		bad = 1;
	if (bad && rank == 0)
		fprintf(stderr,
			"%s: bad option (--reps 1..%d, --iods N, --stripe BYTES, --scenarios clf_phys,romio_phys,romio_rr,romio_ufs,clf_idx,clf_rr, --ufs-dir DIR, --csv FILE)\n",
			prog, REPS_MAX);
	return bad ? -1 : left;
}

/* ------------------------------------------------------------------ */
/* Hints and names                                                     */
/* ------------------------------------------------------------------ */

static void romio_fair(MPI_Info info, int nprocs)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", nprocs);
	MPI_Info_set(info, "cb_config_list", "*:*");
	MPI_Info_set(info, "cb_nodes", v);
	MPI_Info_set(info, "romio_cb_write", "enable");
	MPI_Info_set(info, "romio_cb_read", "enable");
}

MPI_Info bench_hints(const struct bench_opts *o, enum bench_scenario sc,
		     int nsub, const MPI_Datatype *layout, int nprocs)
{
	MPI_Info info;
	char v[32];

	MPI_Info_create(&info);
	romio_fair(info, nprocs);
	if (sc == SC_ROMIO_UFS)
		return info;
	MPI_Info_set(info, "clf_profile", "true");
	MPI_Info_set(info, "use_romio_optimizations",
		     sc == SC_CLF_PHYS || sc == SC_CLF_IDX || sc == SC_CLF_RR
			     ? "false" : "true");
	if (sc == SC_ROMIO_RR || sc == SC_CLF_RR) {
		snprintf(v, sizeof(v), "%d", o->stripe);
		MPI_Info_set(info, "striping_unit", v);
		snprintf(v, sizeof(v), "%d", o->iods);
		MPI_Info_set(info, "striping_factor", v);
	} else {
		size_t len = (size_t)nsub * 12 + 1;
		char *hint = calloc(len, 1);

		for (int j = 0; j < nsub; j++)
			snprintf(hint + strlen(hint), len - strlen(hint),
				 "%s%d", j ? " " : "",
				 (int)MPI_Type_c2f(layout[j]));
		MPI_Info_set(info, "subfile_datatypes", hint);
		free(hint);
	}
	return info;
}

void bench_print_hints(const struct bench_opts *o, int nprocs)
{
	printf("hints, every scenario: cb_config_list=*:* cb_nodes=%d romio_cb_write=enable romio_cb_read=enable (cb_buffer_size: ROMIO's default, 16 MiB)\n",
	       nprocs);
	printf("  CLF-phys:   subfile_datatypes=<the views> use_romio_optimizations=false\n");
	printf("  ROMIO-phys: subfile_datatypes=<the views> use_romio_optimizations=true\n");
	printf("  ROMIO-rr:   striping_unit=%d striping_factor=%d use_romio_optimizations=true\n",
	       o->stripe, o->iods);
	printf("  ROMIO-ufs:  ufs:%s (local file system)\n", o->ufs_dir);
	if (o->scenarios & (1u << SC_CLF_IDX))
		printf("  CLF-idx:    as CLF-phys, the views written as MPI_Type_indexed lists of row pieces\n");
	if (o->scenarios & (1u << SC_CLF_RR))
		printf("  CLF-rr:     striping_unit=%d striping_factor=%d use_romio_optimizations=false\n",
		       o->stripe, o->iods);
}

void bench_path(const struct bench_opts *o, enum bench_scenario sc,
		const char *name, char *buf, size_t len)
{
	if (sc == SC_ROMIO_UFS)
		snprintf(buf, len, "ufs:%s/%s-%s-%s", o->ufs_dir, o->tag, name,
			 bench_sc_key[sc]);
	else
		snprintf(buf, len, "clf:/%s-%s-%s", o->tag, name,
			 bench_sc_key[sc]);
}

/* ------------------------------------------------------------------ */
/* Timing                                                              */
/* ------------------------------------------------------------------ */

/* Seconds this process spent in file-system data calls since the open. */
static double io_clock(MPI_File fh, enum bench_scenario sc)
{
	char v[MPI_MAX_INFO_VAL + 1];
	MPI_Info info;
	int flag = 0;

	if (sc == SC_ROMIO_UFS)
		return posix_io_secs;
	MPI_File_get_info(fh, &info);
	MPI_Info_get(info, "clf_io_time", MPI_MAX_INFO_VAL, v, &flag);
	MPI_Info_free(&info);
	return flag ? atof(v) : 0;
}

struct bench_time bench_access(MPI_File fh, enum bench_scenario sc,
			       bool write, MPI_Offset offset, void *buf,
			       int count, MPI_Datatype type, long long *got)
{
	struct bench_time t = { 0 };
	double io0, t0, mine[2], sum[2];
	MPI_Status st;
	MPI_Count n = 0;
	int nprocs, rc, rcmax;

	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	io0 = io_clock(fh, sc);
	MPI_Barrier(MPI_COMM_WORLD);
	counting = true;
	t0 = MPI_Wtime();
	if (offset < 0)
		rc = write ? MPI_File_write_all(fh, buf, count, type, &st)
			   : MPI_File_read_all(fh, buf, count, type, &st);
	else
		rc = write ? MPI_File_write_at_all(fh, offset, buf, count, type,
						   &st)
			   : MPI_File_read_at_all(fh, offset, buf, count, type,
						  &st);
	mine[0] = MPI_Wtime() - t0;
	counting = false;
	mine[1] = io_clock(fh, sc) - io0;
	if (rc == MPI_SUCCESS)
		MPI_Get_elements_x(&st, MPI_BYTE, &n);
	*got = n;
	MPI_Allreduce(&mine[0], &t.secs, 1, MPI_DOUBLE, MPI_MAX,
		      MPI_COMM_WORLD);
	MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&rc, &rcmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	t.io_secs = sum[1] / nprocs;
	t.other_secs = (sum[0] - sum[1]) / nprocs;
	t.err = rc != MPI_SUCCESS ? rc : rcmax;
	return t;
}

void bench_time_add(struct bench_time *a, const struct bench_time *b)
{
	a->secs += b->secs;
	a->io_secs += b->io_secs;
	a->other_secs += b->other_secs;
	if (a->err == MPI_SUCCESS)
		a->err = b->err;
}

int bench_calls_per_sample(double secs)
{
	int n = secs > 0 ? (int)(BENCH_SAMPLE_S / secs) + 1 : 1;

	return n < BENCH_SAMPLE_CALLS_MAX ? n : BENCH_SAMPLE_CALLS_MAX;
}

void bench_time_per_call(struct bench_time *t, int n)
{
	t->secs /= n;
	t->io_secs /= n;
	t->other_secs /= n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static int cmp_time(const void *a, const void *b)
{
	return cmp_double(&((const struct bench_time *)a)->secs,
			  &((const struct bench_time *)b)->secs);
}

struct bench_time bench_median_time(struct bench_time *t, int n)
{
	qsort(t, n, sizeof(*t), cmp_time);
	return t[n / 2];
}
