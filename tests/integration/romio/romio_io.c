// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * romio_io.c -- MPI-IO on "clf:" files through libromio-clf.so, against
 * a real clf instance ($CLF_CONFIG).  Run by test_romio.sh under mpiexec.
 *
 * usage: romio_io TEST [DIR]
 *   matrix     write_all / read_all of a 2-D CYCLIC(k) matrix, each rank
 *              through its darray filetype: default, striping and
 *              subfile_datatypes layouts, use_romio_optimizations false
 *              and true, contiguous and strided memory; every byte of the
 *              file checked, and read back in the other mode
 *   info       MPI_File_get_info reports the hints in effect
 *   badhints   malformed hints fail MPI_File_open everywhere, saying why
 *   shared     write_shared, write_ordered, seek_shared
 *   atomic     atomic mode: readers never see half a write
 *   misc       independent strided access with the individual pointer,
 *              seek, get_position, set_size, preallocate, delete
 *   visible    one rank's independent write, a barrier, and the next
 *              rank's read and MPI_File_get_size see it, with no
 *              MPI_File_sync (HDF5's t_mpi and testphdf5 rely on it)
 *
 * Files are named clf:/DIR-TEST-... (DIR defaults to "romio") so runs do
 * not collide.  Exits 0 when every check passed on every rank.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, nprocs, checks, failures;
static const char *prefix = "romio";

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		checks++;                                                  \
		if (!(cond)) {                                             \
			failures++;                                        \
			fprintf(stderr, "FAIL rank %d %s:%d: ", rank,      \
				__FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
		}                                                          \
	} while (0)

/* MPI_SUCCESS, or the error's class and string in the message. */
#define CHECK_MPI(call, what)                                              \
	do {                                                               \
		int rc_ = (call);                                          \
		char s_[MPI_MAX_ERROR_STRING];                             \
		int l_ = 0;                                                \
		if (rc_ != MPI_SUCCESS)                                    \
			MPI_Error_string(rc_, s_, &l_);                    \
		s_[l_] = '\0';                                             \
		CHECK(rc_ == MPI_SUCCESS, "%s: %s", what, s_);             \
	} while (0)

static void name(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "clf:/%s-", prefix);

	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static void info_value(MPI_Info info, const char *key, char *value)
{
	int flag;

	MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
	if (!flag)
		strcpy(value, "(unset)");
}

/* ------------------------------------------------------------------ */
/* matrix                                                              */
/* ------------------------------------------------------------------ */

#define ROWS 60
#define COLS 44
#define K 4	/* CYCLIC(K) in both dimensions */

static int grid[2];

static int element(int i, int j, int salt)
{
	return i * 1000 + j + salt * 1000000;
}

static MPI_Datatype darray(int r)
{
	int g[2] = { ROWS, COLS }, dist[2] = { MPI_DISTRIBUTE_CYCLIC,
					       MPI_DISTRIBUTE_CYCLIC };
	int darg[2] = { K, K };
	MPI_Datatype t;

	MPI_Type_create_darray(nprocs, r, 2, g, dist, darg, grid, MPI_ORDER_C,
			       MPI_INT, &t);
	MPI_Type_commit(&t);
	return t;
}

static bool owns(int r, int i, int j)
{
	return (i / K) % grid[0] == r / grid[1] && (j / K) % grid[1] == r % grid[1];
}

/* This rank's elements in view order (row-major). */
static int local_elements(int *buf, int salt)
{
	int n = 0;

	for (int i = 0; i < ROWS; i++)
		for (int j = 0; j < COLS; j++)
			if (owns(rank, i, j))
				buf[n++] = element(i, j, salt);
	return n;
}

/* Every byte of the file, read on rank 0 through the byte view. */
static void check_whole_file(const char *path, int salt, const char *what)
{
	MPI_File fh;
	int *all = calloc(ROWS * COLS + 1, sizeof(int)), bad = -1;
	MPI_Offset size = -1;
	MPI_Status st;
	int got = -1;

	if (rank == 0) {
		CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY,
					MPI_INFO_NULL, &fh), "reopen");
		MPI_File_get_size(fh, &size);
		CHECK(size == ROWS * COLS * 4, "%s: file size %lld", what,
		      (long long)size);
		CHECK_MPI(MPI_File_read_at(fh, 0, all, ROWS * COLS + 1, MPI_INT,
					   &st), "read whole");
		MPI_Get_count(&st, MPI_INT, &got);
		CHECK(got == ROWS * COLS, "%s: read %d elements", what, got);
		for (int e = 0; e < ROWS * COLS && bad < 0; e++)
			if (all[e] != element(e / COLS, e % COLS, salt))
				bad = e;
		CHECK(bad < 0, "%s: element (%d, %d) is %d, want %d", what,
		      bad / COLS, bad % COLS, bad >= 0 ? all[bad] : 0,
		      element(bad / COLS, bad % COLS, salt));
		MPI_File_close(&fh);
	}
	free(all);
}

/*
 * Write the matrix collectively with hints, check the file, read it back
 * collectively with read_hints (another mode) and compare.  strided:
 * the memory buffer holds each element followed by a hole.
 */
static void matrix_case(const char *label, MPI_Info hints, MPI_Info read_hints,
			bool strided, int salt)
{
	char path[256], what[300];
	int *mine = malloc(ROWS * COLS * sizeof(int));
	int *mem = calloc(2 * ROWS * COLS, sizeof(int));
	int *back = calloc(2 * ROWS * COLS, sizeof(int));
	int n = local_elements(mine, salt), bad = -1, got = -1;
	MPI_Datatype ft = darray(rank), memtype = MPI_INT;
	MPI_File fh;
	MPI_Status st;
	int count = n;

	name(path, sizeof(path), "matrix-%s", label);
	snprintf(what, sizeof(what), "matrix %s", label);
	if (strided) {
		MPI_Type_vector(n, 1, 2, MPI_INT, &memtype);
		MPI_Type_commit(&memtype);
		count = 1;
		for (int e = 0; e < n; e++)
			mem[2 * e] = mine[e];
	} else {
		memcpy(mem, mine, n * sizeof(int));
	}

	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
		  what);
	CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native",
				    MPI_INFO_NULL), "set_view");
	CHECK_MPI(MPI_File_write_all(fh, mem, count, memtype, &st), "write_all");
	MPI_Get_count(&st, memtype, &got);
	CHECK(got == count, "%s: write_all wrote %d of %d", what, got, count);
	/* Read back through the same handle: a collective write is visible. */
	CHECK_MPI(MPI_File_read_at_all(fh, 0, back, count, memtype, &st),
		  "read_at_all");
	for (int e = 0; e < n && bad < 0; e++)
		if (back[strided ? 2 * e : e] != mine[e])
			bad = e;
	CHECK(bad < 0, "%s: same handle: local element %d wrong", what, bad);
	CHECK_MPI(MPI_File_close(&fh), "close");
	check_whole_file(path, salt, what);

	/* Read it again, in the other mode, through the individual pointer. */
	memset(back, 0, 2 * ROWS * COLS * sizeof(int));
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
				read_hints, &fh), "reopen for read_all");
	CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native",
				    MPI_INFO_NULL), "set_view");
	CHECK_MPI(MPI_File_read_all(fh, back, count, memtype, &st), "read_all");
	MPI_Get_count(&st, memtype, &got);
	CHECK(got == count, "%s: read_all read %d of %d", what, got, count);
	bad = -1;
	for (int e = 0; e < n && bad < 0; e++)
		if (back[strided ? 2 * e : e] != mine[e])
			bad = e;
	CHECK(bad < 0, "%s: read_all: local element %d is %d, want %d", what,
	      bad, bad >= 0 ? back[strided ? 2 * bad : bad] : 0,
	      bad >= 0 ? mine[bad] : 0);
	if (strided)
		for (int e = 0; e < n; e++)
			CHECK(back[2 * e + 1] == 0, "%s: hole %d written", what, e);
	{
		MPI_Offset pos;

		MPI_File_get_position(fh, &pos);
		CHECK(pos == n, "%s: position %lld after read_all, want %d",
		      what, (long long)pos, n);
	}
	CHECK_MPI(MPI_File_close(&fh), "close");

	if (strided)
		MPI_Type_free(&memtype);
	MPI_Type_free(&ft);
	free(mine);
	free(mem);
	free(back);
}

static MPI_Info new_info(const char *key, const char *value, ...)
{
	MPI_Info info;
	va_list ap;

	MPI_Info_create(&info);
	va_start(ap, value);
	while (key) {
		MPI_Info_set(info, key, value);
		key = va_arg(ap, const char *);
		if (key)
			value = va_arg(ap, const char *);
	}
	va_end(ap);
	return info;
}

/* The subfile_datatypes hint: one subfile per rank's darray. */
static char *layout_hint(MPI_Datatype *types)
{
	char *hint = calloc(nprocs, 16);

	for (int r = 0; r < nprocs; r++) {
		types[r] = darray(r);
		sprintf(hint + strlen(hint), "%s%d", r ? " " : "",
			(int)MPI_Type_c2f(types[r]));
	}
	return hint;
}

static void test_matrix(void)
{
	MPI_Datatype types[16];
	char *hint = layout_hint(types);
	MPI_Info native = new_info("use_romio_optimizations", "false", NULL);
	MPI_Info romio = new_info("use_romio_optimizations", "true", NULL);
	MPI_Info layout = new_info("subfile_datatypes", hint, NULL);
	MPI_Info layout_romio = new_info("subfile_datatypes", hint,
					 "use_romio_optimizations", "true",
					 NULL);
	MPI_Info stripes = new_info("striping_unit", "256", "striping_factor",
				    "3", NULL);

	matrix_case("default", MPI_INFO_NULL, romio, false, 1);
	matrix_case("default-romio", romio, native, false, 2);
	matrix_case("layout", layout, romio, false, 3);
	matrix_case("layout-romio", layout_romio, native, false, 4);
	matrix_case("stripes", stripes, romio, true, 5);
	matrix_case("layout-strided-mem", layout, native, true, 6);

	for (int r = 0; r < nprocs; r++)
		MPI_Type_free(&types[r]);
	MPI_Info_free(&native);
	MPI_Info_free(&romio);
	MPI_Info_free(&layout);
	MPI_Info_free(&layout_romio);
	MPI_Info_free(&stripes);
	free(hint);
}

/* ------------------------------------------------------------------ */
/* info                                                                */
/* ------------------------------------------------------------------ */

/*
 * A new file created with the hint clf_layout=text has that layout:
 * get_info reports it in the same words (reported, when the text was
 * itself a report), with count subfiles; its bytes read back.
 */
static void layout_text_round_trip(const char *text, int count)
{
	char path[256], v[MPI_MAX_INFO_VAL + 1], want[32];
	MPI_Info hints = new_info("clf_layout", text, NULL), got;
	int buf[1000], back[1000];
	MPI_File fh;
	MPI_Status st;
	static int seq;

	name(path, sizeof(path), "info-text-%d", seq++);
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
		  "open with clf_layout");
	MPI_Info_free(&hints);
	MPI_File_get_info(fh, &got);
	info_value(got, "striping_factor", v);
	snprintf(want, sizeof(want), "%d", count);
	CHECK(!strcmp(v, want), "clf_layout=%s: striping_factor '%s', want %s",
	      text, v, want);
	info_value(got, "clf_layout", v);
	if (strncmp(text, "cyclic:", 7))
		CHECK(!strcmp(v, text), "clf_layout=%s: reported '%s'", text,
		      v);
	else
		CHECK(!strcmp(v, "rr:stripe=4k,count=2") ||
		      !strcmp(v, "cyclic:k=4k,p=2"),
		      "clf_layout=%s: reported '%s'", text, v);
	MPI_Info_free(&got);
	for (int e = 0; e < 1000; e++)
		buf[e] = e * 7 + rank;
	CHECK_MPI(MPI_File_write_at_all(fh, rank * sizeof(buf), buf, 1000,
					MPI_INT, &st), "write_at_all");
	CHECK_MPI(MPI_File_read_at_all(fh, rank * sizeof(buf), back, 1000,
				       MPI_INT, &st), "read_at_all");
	CHECK(!memcmp(buf, back, sizeof(buf)), "clf_layout=%s: read back",
	      text);
	MPI_File_close(&fh);
}

static void test_info(void)
{
	MPI_Datatype types[16];
	char *hint = layout_hint(types), path[256], v[MPI_MAX_INFO_VAL + 1];
	char want[32];
	MPI_Info hints = new_info("subfile_datatypes", hint,
				  "use_romio_optimizations", "true", NULL);
	MPI_Info stripes = new_info("striping_unit", "4096", "striping_factor",
				    "2", "start_iodevice", "1", NULL);
	MPI_Info got;
	MPI_File fh;

	name(path, sizeof(path), "info-layout");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
		  "open with layout");
	MPI_File_get_info(fh, &got);
	/* Handles mean nothing to another program: the layout is text. */
	info_value(got, "subfile_datatypes", v);
	CHECK(strstr(v, "applied") != NULL, "subfile_datatypes reported '%s'",
	      v);
	info_value(got, "use_romio_optimizations", v);
	CHECK(!strcmp(v, "true"), "use_romio_optimizations reported '%s'", v);
	info_value(got, "striping_factor", v);
	snprintf(want, sizeof(want), "%d", nprocs);
	CHECK(!strcmp(v, want), "striping_factor '%s' for %d subfiles", v,
	      nprocs);
	info_value(got, "clf_layout", v);
	CHECK(strstr(v, "vec(") != NULL || strstr(v, "grid:") != NULL,
	      "clf_layout '%s'", v);
	MPI_Info_free(&got);
	MPI_File_close(&fh);
	layout_text_round_trip(v, nprocs);

	/* An existing file keeps its layout, and says so. */
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, stripes, &fh),
		  "reopen with other hints");
	MPI_File_get_info(fh, &got);
	info_value(got, "striping_factor", v);
	CHECK(!strcmp(v, want), "existing file: striping_factor '%s', want %s",
	      v, want);
	info_value(got, "use_romio_optimizations", v);
	CHECK(!strcmp(v, "false"), "default use_romio_optimizations '%s'", v);
	MPI_Info_free(&got);
	MPI_File_close(&fh);
	MPI_Info_free(&hints);

	hints = new_info("subfile_datatypes", hint, NULL);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, hints, &fh),
		  "reopen with subfile_datatypes");
	MPI_File_get_info(fh, &got);
	info_value(got, "subfile_datatypes", v);
	CHECK(strstr(v, "ignored") && strstr(v, "keeps its layout"),
	      "existing file: subfile_datatypes reported '%s'", v);
	MPI_Info_free(&got);
	MPI_File_close(&fh);

	/* Round-robin hints on a new file. */
	name(path, sizeof(path), "info-stripes");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, stripes, &fh),
		  "open with striping");
	MPI_File_get_info(fh, &got);
	info_value(got, "striping_unit", v);
	CHECK(!strcmp(v, "4096"), "striping_unit '%s'", v);
	info_value(got, "striping_factor", v);
	CHECK(!strcmp(v, "2"), "striping_factor '%s'", v);
	info_value(got, "start_iodevice", v);
	CHECK(!strcmp(v, "1"), "start_iodevice '%s'", v);
	info_value(got, "clf_layout", v);
	CHECK(!strcmp(v, "rr:stripe=4k,count=2,first=1"), "clf_layout '%s'",
	      v);
	MPI_Info_free(&got);
	MPI_File_close(&fh);
	layout_text_round_trip(v, 2);
	layout_text_round_trip("cyclic:k=4k,p=2", 2);

	for (int r = 0; r < nprocs; r++)
		MPI_Type_free(&types[r]);
	MPI_Info_free(&hints);
	MPI_Info_free(&stripes);
	free(hint);
}

/* ------------------------------------------------------------------ */
/* badhints                                                            */
/* ------------------------------------------------------------------ */

static void expect_open_fails(MPI_Info hints, int amode, const char *want,
			      const char *what)
{
	char path[256], s[MPI_MAX_ERROR_STRING];
	MPI_File fh;
	int rc, len = 0, cls = -1;

	name(path, sizeof(path), "bad-%s", what);
	rc = MPI_File_open(MPI_COMM_WORLD, path, amode, hints, &fh);
	CHECK(rc != MPI_SUCCESS, "%s: open succeeded", what);
	if (rc == MPI_SUCCESS) {
		MPI_File_close(&fh);
		return;
	}
	MPI_Error_string(rc, s, &len);
	s[len] = '\0';
	MPI_Error_class(rc, &cls);
	CHECK(strstr(s, want) != NULL, "%s: error string lacks '%s': %s", what,
	      want, s);
	CHECK(cls != MPI_ERR_OTHER && cls != MPI_SUCCESS,
	      "%s: error class %d", what, cls);
	/* A refused layout leaves no file behind. */
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL,
			   &fh);
	CHECK(rc != MPI_SUCCESS, "%s: a file was left behind", what);
	if (rc == MPI_SUCCESS)
		MPI_File_close(&fh);
	else
		MPI_Error_class(rc, &cls);
	CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_NO_SUCH_FILE,
	      "%s: reopen error class %d", what, cls);
}

static void test_badhints(void)
{
	int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
	MPI_Datatype half, neg, tmp;
	MPI_Info i;
	char hint[64];

	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

	i = new_info("subfile_datatypes", "12345678", NULL);
	expect_open_fails(i, amode, "not a valid datatype handle", "handle");
	MPI_Info_free(&i);

	i = new_info("subfile_datatypes", "x1 3", NULL);
	expect_open_fails(i, amode, "'x1' is not a datatype handle", "word");
	MPI_Info_free(&i);

	/* Two subfiles that both hold bytes [0, 8) of 16. */
	MPI_Type_contiguous(8, MPI_BYTE, &tmp);
	MPI_Type_create_resized(tmp, 0, 16, &half);
	MPI_Type_commit(&half);
	MPI_Type_free(&tmp);
	snprintf(hint, sizeof(hint), "%d %d", (int)MPI_Type_c2f(half),
		 (int)MPI_Type_c2f(half));
	i = new_info("subfile_datatypes", hint, NULL);
	expect_open_fails(i, amode, "not a partitioning pattern", "overlap");
	MPI_Info_free(&i);

	i = new_info("subfile_datatypes", hint, "striping_factor", "3", NULL);
	expect_open_fails(i, amode, "2 types for 3 subfiles", "count");
	MPI_Info_free(&i);

	/* Bytes [0, 4) and [8, 12) of 16: bytes 4 to 7 are in no subfile. */
	{
		MPI_Datatype lo4, hi4, wide;
		int four = 4, eight = 8;

		MPI_Type_contiguous(4, MPI_BYTE, &tmp);
		MPI_Type_create_resized(tmp, 0, 16, &lo4);
		MPI_Type_free(&tmp);
		MPI_Type_indexed(1, &four, &eight, MPI_BYTE, &tmp);
		MPI_Type_create_resized(tmp, 0, 16, &hi4);
		MPI_Type_free(&tmp);
		MPI_Type_commit(&lo4);
		MPI_Type_commit(&hi4);
		snprintf(hint, sizeof(hint), "%d %d", (int)MPI_Type_c2f(lo4),
			 (int)MPI_Type_c2f(hi4));
		i = new_info("subfile_datatypes", hint, NULL);
		expect_open_fails(i, amode, "byte 4 is in no subfile", "gap");
		MPI_Info_free(&i);

		/* [0, 8) of 16 and [8, 16) of 32: the period is 32, the
		 * first type is not tiled to it, bytes 16 to 31 are
		 * nobody's. */
		MPI_Type_indexed(1, &eight, &eight, MPI_BYTE, &tmp);
		MPI_Type_create_resized(tmp, 0, 32, &wide);
		MPI_Type_free(&tmp);
		MPI_Type_commit(&wide);
		snprintf(hint, sizeof(hint), "%d %d", (int)MPI_Type_c2f(half),
			 (int)MPI_Type_c2f(wide));
		i = new_info("subfile_datatypes", hint, NULL);
		expect_open_fails(i, amode, "of period 32 (the largest upper "
				  "bound): pattern: byte 16 is in no subfile",
				  "extents");
		MPI_Info_free(&i);
		MPI_Type_free(&lo4);
		MPI_Type_free(&hi4);
		MPI_Type_free(&wide);
	}

	/* Bytes [0, 8) with an upper bound of 4: beyond the period. */
	MPI_Type_contiguous(8, MPI_BYTE, &tmp);
	MPI_Type_create_resized(tmp, 0, 4, &neg);
	MPI_Type_free(&tmp);
	MPI_Type_commit(&neg);
	snprintf(hint, sizeof(hint), "%d", (int)MPI_Type_c2f(neg));
	i = new_info("subfile_datatypes", hint, NULL);
	expect_open_fails(i, amode, "selects bytes 0 to 7, outside the "
			  "layout's period [0, 4)", "beyond");
	MPI_Info_free(&i);

	/* Bytes [0, 16) and, lower bound 8, [8, 24): both hold 8 to 15. */
	{
		MPI_Datatype first, second;
		int sixteen = 16;
		MPI_Aint at = 8;

		MPI_Type_contiguous(16, MPI_BYTE, &first);
		MPI_Type_create_hindexed(1, &sixteen, &at, MPI_BYTE, &second);
		MPI_Type_commit(&first);
		MPI_Type_commit(&second);
		snprintf(hint, sizeof(hint), "%d %d", (int)MPI_Type_c2f(first),
			 (int)MPI_Type_c2f(second));
		i = new_info("subfile_datatypes", hint, NULL);
		expect_open_fails(i, amode, "of period 24 (the largest upper "
				  "bound): pattern: subfile 0 and subfile 1 "
				  "overlap at byte 8", "overlap-lb");
		MPI_Info_free(&i);
		snprintf(hint, sizeof(hint), "%d", (int)MPI_Type_c2f(second));
		i = new_info("subfile_datatypes", hint, "striping_factor", "2",
			     NULL);
		expect_open_fails(i, amode, "1 type for 2 subfiles", "count-1");
		MPI_Info_free(&i);
		MPI_Type_free(&first);
		MPI_Type_free(&second);
	}

	/* The layout in words: malformed, given twice; unknown clf_ keys. */
	i = new_info("clf_layout", "cyclic:k=4k,p=", NULL);
	expect_open_fails(i, amode, "hint clf_layout='cyclic:k=4k,p=': layout: "
			  "at column", "layout-text");
	MPI_Info_free(&i);
	i = new_info("clf_layout", "cyclic:k=4k,p=2", "subfile_datatypes",
		     "12345678", NULL);
	expect_open_fails(i, amode, "hints clf_layout and subfile_datatypes "
			  "both give the layout", "layout-twice");
	MPI_Info_free(&i);
	i = new_info("clf_stripe", "4k", NULL);
	expect_open_fails(i, amode, "hint clf_stripe: no such clf hint",
			  "unknown-key");
	MPI_Info_free(&i);

	i = new_info("use_romio_optimizations", "maybe", NULL);
	expect_open_fails(i, amode, "use_romio_optimizations='maybe'", "bool");
	MPI_Info_free(&i);
	i = new_info("clf_profile", "yes", NULL);
	expect_open_fails(i, amode, "clf_profile='yes'", "profile");
	MPI_Info_free(&i);

	i = new_info("striping_unit", "-5", NULL);
	expect_open_fails(i, amode, "striping_unit='-5'", "unit");
	MPI_Info_free(&i);

	MPI_Type_free(&half);
	MPI_Type_free(&neg);
}

/* ------------------------------------------------------------------ */
/* shared                                                              */
/* ------------------------------------------------------------------ */

#define RECORDS 40

struct record {
	int rank, seq, pad[2];
};

static void test_shared(void)
{
	char path[256];
	struct record r, *all = NULL;
	MPI_File fh;
	MPI_Offset pos, size;
	int total = nprocs * RECORDS, ordered = nprocs * (nprocs + 1) / 2;

	name(path, sizeof(path), "shared");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
				&fh), "open");
	for (int s = 0; s < RECORDS; s++) {
		r = (struct record){ rank, s, { 0, 0 } };
		CHECK_MPI(MPI_File_write_shared(fh, &r, sizeof(r), MPI_BYTE,
						MPI_STATUS_IGNORE),
			  "write_shared");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_get_position_shared(fh, &pos);
	CHECK(pos == (MPI_Offset)(total * sizeof(r)),
	      "shared position %lld after %d records", (long long)pos, total);

	/* Every record once; each rank's in its order. */
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
	if (rank == 0) {
		int *seen = calloc(total, sizeof(int)), *last = malloc(nprocs * sizeof(int));

		all = calloc(total, sizeof(*all));
		for (int p = 0; p < nprocs; p++)
			last[p] = -1;
		CHECK_MPI(MPI_File_read_at(fh, 0, all, total * sizeof(r), MPI_BYTE,
					   MPI_STATUS_IGNORE), "read records");
		for (int k = 0; k < total; k++) {
			struct record *x = &all[k];
			bool ok = x->rank >= 0 && x->rank < nprocs && x->seq >= 0 &&
				  x->seq < RECORDS;

			CHECK(ok, "record %d is (%d, %d)", k, x->rank, x->seq);
			if (!ok)
				continue;
			CHECK(!seen[x->rank * RECORDS + x->seq]++,
			      "record (%d, %d) twice", x->rank, x->seq);
			CHECK(x->seq > last[x->rank], "rank %d's record %d after %d",
			      x->rank, x->seq, last[x->rank]);
			last[x->rank] = x->seq;
		}
		free(seen);
		free(last);
		free(all);
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* write_ordered: rank r writes r + 1 records after everything. */
	{
		struct record mine[16];
		MPI_Offset start = total * sizeof(r);

		for (int s = 0; s <= rank; s++)
			mine[s] = (struct record){ rank, 1000 + s, { 0, 0 } };
		CHECK_MPI(MPI_File_write_ordered(fh, mine, (rank + 1) * sizeof(r),
						 MPI_BYTE, MPI_STATUS_IGNORE),
			  "write_ordered");
		MPI_File_get_size(fh, &size);
		CHECK(size == start + (MPI_Offset)(ordered * sizeof(r)),
		      "size %lld after write_ordered", (long long)size);
		if (rank == 0) {
			struct record *o = calloc(ordered, sizeof(*o));
			int k = 0;

			MPI_File_read_at(fh, start, o, ordered * sizeof(r), MPI_BYTE,
					 MPI_STATUS_IGNORE);
			for (int p = 0; p < nprocs; p++)
				for (int s = 0; s <= p; s++, k++)
					CHECK(o[k].rank == p && o[k].seq == 1000 + s,
					      "ordered record %d is (%d, %d)", k,
					      o[k].rank, o[k].seq);
			free(o);
		}
	}

	/* seek_shared is collective and moves everyone's shared pointer. */
	CHECK_MPI(MPI_File_seek_shared(fh, 3, MPI_SEEK_SET), "seek_shared");
	MPI_File_get_position_shared(fh, &pos);
	CHECK(pos == 3, "shared position %lld after seek_shared", (long long)pos);
	CHECK_MPI(MPI_File_close(&fh), "close");
}

/* ------------------------------------------------------------------ */
/* atomic                                                              */
/* ------------------------------------------------------------------ */

#define REGION (192 * 1024)	/* over several 64 KiB stripes and iods */
#define ROUNDS 30

static void test_atomic(void)
{
	char path[256], *buf = malloc(REGION);
	MPI_File fh;
	int flag = 0, torn = 0, writers = nprocs / 2;

	name(path, sizeof(path), "atomic");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
				&fh), "open");
	CHECK_MPI(MPI_File_set_atomicity(fh, 1), "set_atomicity");
	MPI_File_get_atomicity(fh, &flag);
	CHECK(flag == 1, "atomicity %d", flag);
	memset(buf, 'a', REGION);
	if (rank == 0)
		MPI_File_write_at(fh, 32 * 1024, buf, REGION, MPI_BYTE,
				  MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);

	/* Writers write whole regions of their own letter; readers must see
	 * one letter only, whatever the interleaving. */
	for (int round = 0; round < ROUNDS; round++) {
		if (rank < writers) {
			memset(buf, 'b' + rank * 2 + (round & 1), REGION);
			CHECK_MPI(MPI_File_write_at(fh, 32 * 1024, buf, REGION,
						    MPI_BYTE, MPI_STATUS_IGNORE),
				  "atomic write");
		} else {
			MPI_Status st;
			int got = 0;

			CHECK_MPI(MPI_File_read_at(fh, 32 * 1024, buf, REGION,
						   MPI_BYTE, &st), "atomic read");
			MPI_Get_count(&st, MPI_BYTE, &got);
			CHECK(got == REGION, "atomic read got %d bytes", got);
			for (int x = 1; x < REGION; x++)
				if (buf[x] != buf[0]) {
					torn++;
					break;
				}
		}
	}
	CHECK(torn == 0, "%d of %d reads saw a torn write", torn, ROUNDS);
	MPI_File_set_atomicity(fh, 0);
	MPI_File_get_atomicity(fh, &flag);
	CHECK(flag == 0, "atomicity %d after reset", flag);
	CHECK_MPI(MPI_File_close(&fh), "close");
	free(buf);
}

/* ------------------------------------------------------------------ */
/* misc                                                                */
/* ------------------------------------------------------------------ */

static int handler_calls;

static void count_errors(MPI_File *fh, int *code, ...)
{
	handler_calls++;
}

/* File error handlers stay in libmpich but must see our files. */
static void check_errhandlers(const char *path)
{
	MPI_Errhandler eh;
	MPI_File fh;
	char missing[256];
	int buf[4];

	MPI_File_create_errhandler(count_errors, &eh);
	MPI_File_set_errhandler(MPI_FILE_NULL, eh);
	name(missing, sizeof(missing), "no-such-file");
	CHECK(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY,
			    MPI_INFO_NULL, &fh) != MPI_SUCCESS, "missing file opens");
	CHECK(handler_calls == 1, "MPI_FILE_NULL's handler called %d times",
	      handler_calls);
	/* A new file inherits MPI_FILE_NULL's handler. */
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
				MPI_INFO_NULL, &fh), "open read-only");
	CHECK(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE) !=
	      MPI_SUCCESS, "write on a read-only file");
	CHECK(handler_calls == 2, "inherited handler called %d times",
	      handler_calls);
	MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	CHECK(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE) !=
	      MPI_SUCCESS, "write on a read-only file");
	CHECK(handler_calls == 2, "MPI_ERRORS_RETURN called the handler");
	MPI_File_close(&fh);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	MPI_Errhandler_free(&eh);
}

static void test_misc(void)
{
	char path[256];
	MPI_Datatype ft;
	MPI_File fh;
	MPI_Offset pos, size, byte;
	int buf[16], back[16], got;
	MPI_Status st;

	/* Rank r owns ints r, r + p, r + 2p, ...: a vector filetype. */
	MPI_Type_vector(1, 1, nprocs, MPI_INT, &ft);
	{
		MPI_Datatype t;

		MPI_Type_create_resized(ft, 0, nprocs * sizeof(int), &t);
		MPI_Type_free(&ft);
		ft = t;
	}
	MPI_Type_commit(&ft);
	name(path, sizeof(path), "misc");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
				&fh), "open");
	CHECK_MPI(MPI_File_set_view(fh, rank * sizeof(int), MPI_INT, ft,
				    "native", MPI_INFO_NULL), "set_view");
	for (int k = 0; k < 16; k++)
		buf[k] = (k * nprocs + rank) * 7;
	/* Two independent writes through the individual file pointer. */
	CHECK_MPI(MPI_File_write(fh, buf, 10, MPI_INT, &st), "write");
	CHECK_MPI(MPI_File_write(fh, buf + 10, 6, MPI_INT, &st), "write");
	MPI_File_get_position(fh, &pos);
	CHECK(pos == 16, "position %lld after 16 ints", (long long)pos);
	MPI_File_get_byte_offset(fh, pos, &byte);
	CHECK(byte == (MPI_Offset)((16 * nprocs + rank) * sizeof(int)),
	      "byte offset %lld", (long long)byte);
	CHECK_MPI(MPI_File_seek(fh, 4, MPI_SEEK_SET), "seek");
	CHECK_MPI(MPI_File_read(fh, back, 12, MPI_INT, &st), "read");
	MPI_Get_count(&st, MPI_INT, &got);
	CHECK(got == 12, "read %d ints", got);
	for (int k = 0; k < 12; k++)
		CHECK(back[k] == buf[4 + k], "int %d is %d, want %d", k, back[k],
		      buf[4 + k]);
	/* Reading past the end stops there. */
	MPI_File_sync(fh);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_sync(fh);
	CHECK_MPI(MPI_File_read_at(fh, 14, back, 8, MPI_INT, &st), "read at end");
	MPI_Get_count(&st, MPI_INT, &got);
	CHECK(got == 2, "read %d ints at the end, want 2", got);
	/* Nonblocking, the end inside an element of 3 ints: 2 ints, not a
	 * request of negative size (which aborted the job). */
	{
		MPI_Datatype three;
		MPI_Request req;

		MPI_Type_contiguous(3, MPI_INT, &three);
		MPI_Type_commit(&three);
		CHECK_MPI(MPI_File_iread_at(fh, 14, back, 2, three, &req),
			  "iread_at at end");
		CHECK_MPI(MPI_Wait(&req, &st), "wait");
		MPI_Get_elements(&st, MPI_INT, &got);
		CHECK(got == 2, "iread_at got %d ints at the end, want 2", got);
		MPI_Type_free(&three);
	}
	/* The same into 3 ints backwards (the driver packs such memory):
	 * the 2 ints of the cut element are stored, the third is not. */
	{
		int bl[3] = { 1, 1, 1 };
		MPI_Aint d[3] = { 8, 4, 0 };
		MPI_Datatype back3;

		MPI_Type_create_hindexed(3, bl, d, MPI_INT, &back3);
		MPI_Type_commit(&back3);
		back[0] = back[1] = back[2] = -1;
		CHECK_MPI(MPI_File_read_at(fh, 14, back, 1, back3, &st),
			  "read_at at end, backwards");
		MPI_Get_elements(&st, MPI_INT, &got);
		CHECK(got == 2, "backwards read got %d ints at the end, want 2", got);
		CHECK(back[2] == buf[14] && back[1] == buf[15] && back[0] == -1,
		      "backwards read at the end stored %d %d %d, want -1 %d %d",
		      back[0], back[1], back[2], buf[15], buf[14]);
		MPI_Type_free(&back3);
	}

	MPI_File_get_size(fh, &size);
	CHECK(size == (MPI_Offset)(16 * nprocs * sizeof(int)), "size %lld",
	      (long long)size);
	CHECK_MPI(MPI_File_set_size(fh, 100), "set_size");
	MPI_File_get_size(fh, &size);
	CHECK(size == 100, "size %lld after set_size(100)", (long long)size);
	CHECK_MPI(MPI_File_preallocate(fh, 5000), "preallocate");
	MPI_File_get_size(fh, &size);
	CHECK(size == 5000, "size %lld after preallocate(5000)",
	      (long long)size);
	CHECK_MPI(MPI_File_close(&fh), "close");
	check_errhandlers(path);

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL), "delete");
	MPI_Barrier(MPI_COMM_WORLD);
	{
		int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
				       MPI_INFO_NULL, &fh), cls = -1;

		CHECK(rc != MPI_SUCCESS, "deleted file opens");
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_NO_SUCH_FILE, "deleted file: class %d", cls);
	}
	MPI_Type_free(&ft);
}

static unsigned char visible_byte(MPI_Offset off)
{
	return (unsigned char)(off * 29 + (off >> 7) + 1);
}

/*
 * Rank w writes, with no sync, and rank (w + 1) % nprocs reads after a
 * barrier.  First a strided write through a vector view (blocks of 100
 * bytes every 300 from byte 50), then a contiguous one further on
 * through the byte view; hints: use_romio_optimizations=hint.
 */
static void visible_case(const char *hint)
{
	enum { BLOCK = 100, STRIDE = 300, DISP = 50, NBLOCK = 10 };
	MPI_Offset ends[2] = { DISP + (NBLOCK - 1) * STRIDE + BLOCK, 10100 };
	unsigned char buf[NBLOCK * BLOCK], back[10200];
	MPI_Datatype vec, ft;
	char path[256];
	MPI_Info info;
	MPI_Status st;
	MPI_File fh;
	MPI_Offset size;
	int got;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", (char *)hint);
	MPI_Type_vector(1, BLOCK, STRIDE, MPI_BYTE, &vec);
	MPI_Type_create_resized(vec, 0, STRIDE, &ft);
	MPI_Type_commit(&ft);
	name(path, sizeof(path), "visible-%s", hint);
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
		  "open");
	for (int step = 0; step < 2; step++) {
		int writer = step % nprocs, reader = (step + 1) % nprocs;

		if (step == 0) {
			/* set_view is collective; only the writer writes. */
			for (int k = 0; k < NBLOCK * BLOCK; k++)
				buf[k] = visible_byte(DISP + k / BLOCK * STRIDE +
						      k % BLOCK);
			CHECK_MPI(MPI_File_set_view(fh, DISP, MPI_BYTE, ft,
						    "native", MPI_INFO_NULL),
				  "set_view");
			if (rank == writer)
				CHECK_MPI(MPI_File_write_at(fh, 0, buf,
							    NBLOCK * BLOCK,
							    MPI_BYTE, &st),
					  "write_at");
			CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE,
						    "native", MPI_INFO_NULL),
				  "set_view");
		} else if (rank == writer) {
			for (int k = 0; k < 100; k++)
				buf[k] = visible_byte(10000 + k);
			CHECK_MPI(MPI_File_write_at(fh, 10000, buf, 100,
						    MPI_BYTE, &st), "write_at");
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank != reader)
			continue;
		CHECK_MPI(MPI_File_get_size(fh, &size), "get_size");
		CHECK(size == ends[step], "%s, step %d: size %lld, want %lld",
		      hint, step, (long long)size, (long long)ends[step]);
		memset(back, 0xee, sizeof(back));
		CHECK_MPI(MPI_File_read_at(fh, 0, back, sizeof(back), MPI_BYTE,
					   &st), "read_at");
		MPI_Get_count(&st, MPI_BYTE, &got);
		CHECK(got == ends[step], "%s, step %d: read %d bytes, want %lld",
		      hint, step, got, (long long)ends[step]);
		for (MPI_Offset f = 0; f < ends[step] && f < got; f++) {
			MPI_Offset x = f - DISP;
			int in_block = (x >= 0 && x < NBLOCK * STRIDE &&
					x % STRIDE < BLOCK) || f >= 10000;
			unsigned char want = in_block ? visible_byte(f) : 0;

			/* ROMIO's data sieving writes its buffer over holes. */
			if (!in_block && !strcmp(hint, "true"))
				continue;
			if (back[f] != want) {
				CHECK(false, "%s, step %d: byte %lld is %u, want %u",
				      hint, step, (long long)f, back[f], want);
				break;
			}
		}
	}
	CHECK_MPI(MPI_File_close(&fh), "close");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Type_free(&ft);
	MPI_Type_free(&vec);
	MPI_Info_free(&info);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A collective read in which some process moves a large share ends on
 * every process together (ad_clf_coll.c): the processes served first
 * wait in the call, without holding a core, rather than go on to the
 * application's next MPI call, where MPICH spins on the cores the iods
 * still need for the large share.  The last rank reads 24 MiB, the
 * others 4 KiB each: each of those returns less than half the big
 * read's time before the last rank (before, at once).
 */
static void read_all_ends_together(void)
{
	const int big = 24 << 20, small = 4096;
	int mine = rank == nprocs - 1 ? big : small;
	MPI_Offset at = (MPI_Offset)rank * small;
	unsigned char *buf = malloc(mine);
	double t[3], *all = malloc(3 * sizeof(double) * nprocs);
	char path[256];
	MPI_Info info;
	MPI_Status st;
	MPI_File fh;

	MPI_Info_create(&info);
	MPI_Info_set(info, "use_romio_optimizations", "false");
	name(path, sizeof(path), "read-all-ends");
	MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path,
				MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
		  "open");
	for (int k = 0; k < mine; k++)
		buf[k] = visible_byte(at + k);
	CHECK_MPI(MPI_File_write_at_all(fh, at, buf, mine, MPI_BYTE, &st),
		  "write_at_all");
	memset(buf, 0, mine);
	MPI_Barrier(MPI_COMM_WORLD);
	t[0] = mono_s();
	CHECK_MPI(MPI_File_read_at_all(fh, at, buf, mine, MPI_BYTE, &st),
		  "read_at_all");
	t[1] = mono_s();
	t[2] = buf[0] == visible_byte(at) &&
	       buf[mine - 1] == visible_byte(at + mine - 1);
	MPI_Allgather(t, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, MPI_COMM_WORLD);
	if (rank == 0) {
		double end = all[3 * (nprocs - 1) + 1];
		double took = end - all[3 * (nprocs - 1)];

		for (int r = 0; r < nprocs; r++) {
			CHECK(all[3 * r + 2] == 1, "rank %d read back wrong bytes", r);
			CHECK(all[3 * r + 1] > end - took / 2,
			      "rank %d's read_at_all of %d bytes returned %.1f ms before the last rank's of %d (which took %.1f ms)",
			      r, small, (end - all[3 * r + 1]) * 1e3, big,
			      took * 1e3);
		}
	}
	CHECK_MPI(MPI_File_close(&fh), "close");
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	MPI_Info_free(&info);
	free(all);
	free(buf);
}

static void test_visible(void)
{
	visible_case("false");
	visible_case("true");
	read_all_ends_together();
}

int main(int argc, char **argv)
{
	const char *test = argc > 1 ? argv[1] : "";
	int all_failures = 0, all_checks = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc > 2)
		prefix = argv[2];
	MPI_Dims_create(nprocs, 2, grid);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

	if (!strcmp(test, "matrix"))
		test_matrix();
	else if (!strcmp(test, "info"))
		test_info();
	else if (!strcmp(test, "badhints"))
		test_badhints();
	else if (!strcmp(test, "shared"))
		test_shared();
	else if (!strcmp(test, "atomic"))
		test_atomic();
	else if (!strcmp(test, "misc"))
		test_misc();
	else if (!strcmp(test, "visible"))
		test_visible();
	else
		CHECK(false, "unknown test '%s'", test);

	MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM,
		      MPI_COMM_WORLD);
	MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("romio_io %s on %d ranks: %d checks, %d failed\n", test,
		       nprocs, all_checks, all_failures);
	MPI_Finalize();
	return all_failures ? 1 : 0;
}
