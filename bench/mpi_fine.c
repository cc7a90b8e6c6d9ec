// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mpi_fine.c -- collective accesses through layouts of pieces under 64
 * bytes (the romio_props class fine-layout), clf's native path against
 * ROMIO's path on the same layout, in the same run.
 *
 * Two processes each write (MPI_File_write_all) and read back
 * (MPI_File_read_all) MB bytes through a view, over each layout:
 *   rr1     striping_unit=1 striping_factor=4
 *   rr3     striping_unit=3 striping_factor=3
 *   grid1   subfile_datatypes: a 2 x 2 CYCLIC(1) x CYCLIC(1) darray grid
 *           of a 256 x 256 byte matrix (4 subfiles)
 *   grid2   a 3 x 1 CYCLIC(2) x CYCLIC(2) darray grid of a 258 x 258
 *           byte matrix (3 subfiles)
 * and each view:
 *   bytes   every other byte (process p: bytes 2i + p)
 *   cyc2    a 2x1 CYCLIC(2) darray of a 512 x 512 byte matrix
 *   halves  contiguous: process p the p-th half
 * The memory is contiguous, or with --strided a vector of 3 bytes in
 * every 4 (the buffer a third larger).  Prints, per (layout, view,
 * path), the slowest process's write and read time and the check of
 * every byte read.
 *
 *   mpiexec -n 2 mpi_fine [--strided] [MB [LV]]
 *
 * MB: MiB per process (default 4); LV: only layout L, view V (digits,
 * e.g. 21 for grid1 x cyc2).  $CLF_CONFIG names the instance.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
static bool strided;	/* --strided: memory 3 bytes in every 4 */

static MPI_Datatype commit(MPI_Datatype t)
{
	MPI_Type_commit(&t);
	return t;
}

static MPI_Datatype grid_cell(int g, int k, int p, int q, int j)
{
	int gs[2] = { g, g }, d[2] = { MPI_DISTRIBUTE_CYCLIC,
				       MPI_DISTRIBUTE_CYCLIC };
	int a[2] = { k, k }, ps[2] = { p, q };
	MPI_Datatype t;

	MPI_Type_create_darray(p * q, j, 2, gs, d, a, ps, MPI_ORDER_C,
			       MPI_BYTE, &t);
	return commit(t);
}

/* Hints of layout l; *name its name.  0 past the last. */
static MPI_Info layout(int l, bool opt, const char **name)
{
	MPI_Info info;
	char hint[256] = "";
	MPI_Datatype t[4];
	int n = 0;

	switch (l) {
	case 0:
		*name = "rr1";
		break;
	case 1:
		*name = "rr3";
		break;
	case 2:
		*name = "grid1";
		for (n = 0; n < 4; n++)
			t[n] = grid_cell(256, 1, 2, 2, n);
		break;
	case 3:
		*name = "grid2";
		for (n = 0; n < 3; n++)
			t[n] = grid_cell(258, 2, 3, 1, n);
		break;
	default:
		return MPI_INFO_NULL;
	}
	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", opt ? "true" : "false");
	if (l == 0) {
		MPI_Info_set(info, "striping_unit", "1");
		MPI_Info_set(info, "striping_factor", "4");
	} else if (l == 1) {
		MPI_Info_set(info, "striping_unit", "3");
		MPI_Info_set(info, "striping_factor", "3");
	}
	for (int j = 0; j < n; j++)
		snprintf(hint + strlen(hint), sizeof(hint) - strlen(hint),
			 "%s%d", j ? " " : "", (int)MPI_Type_c2f(t[j]));
	if (n)
		MPI_Info_set(info, "subfile_datatypes", hint);
	return info;
}

static MPI_Datatype view(int v, MPI_Offset *disp, const char **name)
{
	MPI_Datatype t;

	*disp = 0;
	switch (v) {
	case 0: {
		MPI_Datatype b;

		*name = "bytes";
		MPI_Type_vector(1, 1, 2, MPI_BYTE, &b);
		MPI_Type_create_resized(b, 0, 2, &t);
		MPI_Type_free(&b);
		*disp = rank;
		return commit(t);
	}
	case 1: {
		int gs[2] = { 512, 512 }, d[2] = { MPI_DISTRIBUTE_CYCLIC,
						   MPI_DISTRIBUTE_CYCLIC };
		int a[2] = { 2, 2 }, ps[2] = { 2, 1 };

		*name = "cyc2";
		MPI_Type_create_darray(2, rank, 2, gs, d, a, ps, MPI_ORDER_C,
				       MPI_BYTE, &t);
		return commit(t);
	}
	case 2:
		*name = "halves";
		MPI_Type_contiguous(1, MPI_BYTE, &t);
		return commit(t);
	default:
		return MPI_DATATYPE_NULL;
	}
}

static void run(int l, int v, bool opt, long bytes)
{
	const char *lname = "", *vname = "";
	MPI_Info info = layout(l, opt, &lname);
	MPI_Offset disp;
	MPI_Datatype ft = view(v, &disp, &vname);
	char path[128];
	long span = strided ? bytes / 3 * 4 : bytes;
	unsigned char *buf = malloc(span), *back = malloc(span);
	MPI_Datatype mt = MPI_BYTE;
	int count = (int)bytes;
	MPI_File fh;
	double t0, tw, tr, w, r;
	long bad = 0, allbad;

	if (v == 2)
		disp = rank * bytes;
	for (long i = 0; i < span; i++)
		buf[i] = (unsigned char)(i * 7 + rank * 13 + (i >> 8));
	memset(back, 0, span);
	if (strided) {
		MPI_Type_vector((int)(bytes / 3), 3, 4, MPI_BYTE, &mt);
		MPI_Type_commit(&mt);
		count = 1;
	}
	snprintf(path, sizeof(path), "clf:/fine-%s-%s-%d", lname, vname, opt);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
			  info, &fh)) {
		fprintf(stderr, "mpi_fine: open %s failed\n", path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (MPI_File_write_all(fh, buf, count, mt, MPI_STATUS_IGNORE))
		bad = -1;
	tw = MPI_Wtime() - t0;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	MPI_File_seek(fh, 0, MPI_SEEK_SET);
	if (MPI_File_read_all(fh, back, count, mt, MPI_STATUS_IGNORE))
		bad = -1;
	tr = MPI_Wtime() - t0;
	for (long i = 0; i < span && bad >= 0; i++)
		bad += (!strided || i % 4 < 3) && back[i] != buf[i];
	MPI_File_close(&fh);
	MPI_Reduce(&tw, &w, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&tr, &r, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("%-6s %-7s %-6s %9.3f %9.3f  %s\n", lname, vname,
		       opt ? "ROMIO" : "native", w, r,
		       allbad ? "WRONG" : "ok");
		fflush(stdout);
	}
	MPI_Type_free(&ft);
	if (strided)
		MPI_Type_free(&mt);
	MPI_Info_free(&info);
	free(buf);
	free(back);
}

int main(int argc, char **argv)
{
	long mb;
	const char *only;

	MPI_Init(&argc, &argv);
	if (argc > 1 && !strcmp(argv[1], "--strided")) {
		strided = true;
		argc--;
		argv++;
	}
	mb = argc > 1 ? atol(argv[1]) : 4;
	only = argc > 2 ? argv[2] : NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("%-6s %-7s %-6s %9s %9s  (%ld MiB per process, %s memory)\n",
		       "layout", "view", "path", "write s", "read s", mb,
		       strided ? "strided" : "contiguous");
	for (int l = 0; l < 4; l++)
		for (int v = 0; v < 3; v++) {
			char key[8];

			snprintf(key, sizeof(key), "%d%d", l, v);
			if (only && strcmp(only, key))
				continue;
			run(l, v, false, mb << 20);
			run(l, v, true, mb << 20);
		}
	MPI_Finalize();
	return 0;
}
