# bench: programs that print figures; not tests.

BENCHES += $(O)/bench/mapping_bench

$(O)/bench/mapping_bench: $(O)/bench/mapping_bench.o $(O)/libclf.a
	$(CC) -o $@ $^ $(ALL_LDFLAGS)

BENCHES += $(O)/bench/meta_bench

$(O)/bench/meta_bench: $(O)/bench/meta_bench.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

BENCHES += $(O)/bench/matrix_native

$(O)/bench/matrix_native.o: ALL_CFLAGS += -Itests/integration
$(O)/bench/matrix_native: $(O)/bench/matrix_native.o \
		$(O)/tests/integration/instance.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

BENCHES += $(O)/bench/native_small

$(O)/bench/native_small.o: ALL_CFLAGS += -Itests/integration
$(O)/bench/native_small: $(O)/bench/native_small.o \
		$(O)/tests/integration/instance.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# The paper's MPI-IO experiments (bench/paper.sh runs them): MPI programs
# linked through romio-clf/mpicc-clf, built only where romio-clf/Build.mk
# builds libromio-clf.so (CONFIG_CLF_ROMIO, no sanitizers, mpicc), and
# skipped, not failed, when the ROMIO source could not be had
# ($(O)/romio/UNAVAILABLE).  romio-clf/Build.mk comes later: names here.
BENCH_MPICC := $(shell command -v mpicc 2>/dev/null)
ifeq ($(CONFIG_CLF_ROMIO)$(CONFIG_CLF_SANITIZERS),yn)
ifneq ($(BENCH_MPICC),)

BENCH_MPI_PROGS := $(O)/bench/mpi_matrix $(O)/bench/mpi_btio
BENCHES += $(BENCH_MPI_PROGS)

# -ldl: mpi_bench.c times pread/pwrite (ROMIO over ufs) through dlsym.
$(BENCH_MPI_PROGS): $(O)/bench/%: bench/%.c bench/mpi_bench.c \
		bench/mpi_bench.h $(O)/romio-clf/libromio-clf.so \
		romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@if test -f $(O)/romio/UNAVAILABLE; then \
		echo "  SKIP    $@ (no libromio-clf.so)"; else \
		echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) romio-clf/mpicc-clf \
		-std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $< bench/mpi_bench.c \
		-ldl; fi

# One-file MPI programs, linked the same way:
#   mpi_small  small accesses: collective write latency, tiny accesses
#              through changing views (PnetCDF's independent mode),
#              native path vs ROMIO's;
#   mpi_fine   layouts of pieces under 64 bytes, native path vs ROMIO's
#              (romio_props' class fine-layout);
#   md_mpi     mdtest-style create / stat / open / remove through MPI-IO,
#              clf: against ufs: in the same run (bench/md_scale.sh);
#   mpi_rio    RIO's experiment: computation alternating with nonblocking
#              writes (bench/wan.sh runs it over an emulated link);
#   mpi_cache  MPI-IO/L's comparison: part or all of a file read once or
#              more, directly, through clf_cache or staged (bench/wan.sh);
#   mpi_realms ROMIO's two-phase I/O in layout-aligned file realms vs
#              ROMIO's own domains vs clf's collective I/O, one file;
#   mpi_coop   checkpoint-then-read (BTIO's file, reads of the next
#              process's blocks) with and without the cooperative cache.
BENCH_MPI_ONE := $(O)/bench/mpi_small $(O)/bench/mpi_fine $(O)/bench/md_mpi \
	$(O)/bench/mpi_rio $(O)/bench/mpi_cache $(O)/bench/mpi_realms \
	$(O)/bench/mpi_coop
BENCHES += $(BENCH_MPI_ONE)

$(BENCH_MPI_ONE): $(O)/bench/%: bench/%.c $(O)/romio-clf/libromio-clf.so \
		romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@if test -f $(O)/romio/UNAVAILABLE; then \
		echo "  SKIP    $@ (no libromio-clf.so)"; else \
		echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) romio-clf/mpicc-clf \
		-std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<; fi

endif
endif

# Set-up cost of a view written as a long indexed list (issue 9): the
# driver's converter and the mapping, no daemons; one MPI process.
ifneq ($(BENCH_MPICC),)
BENCHES += $(O)/bench/dtype_setup

$(O)/bench/dtype_setup: bench/dtype_setup.c romio-clf/ad_clf/ad_clf_dtype.c \
		romio-clf/ad_clf/ad_clf_dtype.h $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(BENCH_MPICC) -std=gnu11 $(WARNINGS) $(CFLAGS) -Iinclude \
		-Iromio-clf/ad_clf -o $@ bench/dtype_setup.c \
		romio-clf/ad_clf/ad_clf_dtype.c $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)
endif

# The cost of authenticating a connection, secret against MUNGE.
BENCHES += $(O)/bench/auth_bench

$(O)/bench/auth_bench.o: ALL_CFLAGS += $(LIBCLF_INCLUDES)
$(O)/bench/auth_bench: $(O)/bench/auth_bench.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# mdtest-style create / stat / ls -l / open / remove, native API (and the
# low-level listing, clf_ll.h) against a local directory in the same run
# (bench/md_scale.sh runs it at 1..P processes).
BENCHES += $(O)/bench/md_bench

$(O)/bench/md_bench.o: ALL_CFLAGS += $(LIBCLF_INCLUDES)
$(O)/bench/md_bench: $(O)/bench/md_bench.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# A small access in many pieces (issue 15): us per call, native API.
BENCHES += $(O)/bench/small_pieces

$(O)/bench/small_pieces: $(O)/bench/small_pieces.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# One iod against 1, 2, 4, 8 clients (issue 20): total MB/s per count.
BENCHES += $(O)/bench/iod_clients

$(O)/bench/iod_clients.o: ALL_CFLAGS += -Itests/integration
$(O)/bench/iod_clients: $(O)/bench/iod_clients.o \
		$(O)/tests/integration/instance.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# A wide-area link between two network namespaces where the kernel has no
# netem (bench/wan.sh): TUN devices, delay, rate, loss.
BENCHES += $(O)/bench/wan_link

$(O)/bench/wan_link: $(O)/bench/wan_link.o
	$(CC) -o $@ $^ $(ALL_LDFLAGS)

# CPU per byte and messages per second of a transport, TCP vs RDMA
# (bench/rdma_cpu.sh runs it in the soft-RoCE guest).
BENCHES += $(O)/bench/rdma_cpu

$(O)/bench/rdma_cpu.o: ALL_CFLAGS += $(LIBCLF_INCLUDES)
$(O)/bench/rdma_cpu: $(O)/bench/rdma_cpu.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)
