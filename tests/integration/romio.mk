# Integration test of the MPI-IO driver: tests/integration/test_romio.sh
# runs the MPI programs of tests/integration/romio/ under mpiexec against
# real daemons on loopback.
#
#   make check-romio      run it
#
# The programs are built only where romio-clf/Build.mk builds the driver
# (CONFIG_CLF_ROMIO, mpicc); the script skips (77) without it, or when
# the ROMIO source could not be had.

ROMIO_TEST := tests/integration/test_romio.sh
ROMIO_TEST_DIR := $(O)/tests/integration/romio
ROMIO_TEST_PROGS :=

ifneq ($(ROMIO_LIB),)
ROMIO_TEST_PROGS := $(ROMIO_TEST_DIR)/dtype_test $(ROMIO_TEST_DIR)/romio_io \
	$(ROMIO_TEST_DIR)/romio_io_plain $(ROMIO_TEST_DIR)/romio_coll \
	$(ROMIO_TEST_DIR)/romio_types $(ROMIO_TEST_DIR)/romio_xfer \
	$(ROMIO_TEST_DIR)/romio_native $(ROMIO_TEST_DIR)/romio_lock \
	$(ROMIO_TEST_DIR)/romio_life $(ROMIO_TEST_DIR)/romio_cost \
	$(ROMIO_TEST_DIR)/romio_typemap $(ROMIO_TEST_DIR)/romio_recovery \
	$(ROMIO_TEST_DIR)/romio_xcache $(ROMIO_TEST_DIR)/romio_async_order \
	$(ROMIO_TEST_DIR)/romio_realms $(ROMIO_TEST_DIR)/romio_coop

# The converter alone, with libclf: no ROMIO needed.
$(ROMIO_TEST_DIR)/dtype_test: tests/integration/romio/dtype_test.c \
		romio-clf/ad_clf/ad_clf_dtype.c romio-clf/ad_clf/ad_clf_dtype.h \
		$(O)/libclf.a
	@mkdir -p $(dir $@)
	$(ROMIO_MPICC) -std=gnu11 $(WARNINGS) $(CFLAGS) -Iinclude \
		-Iromio-clf/ad_clf -o $@ tests/integration/romio/dtype_test.c \
		romio-clf/ad_clf/ad_clf_dtype.c $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# Linked through mpicc-clf, as users do.
$(ROMIO_TEST_DIR)/romio_io: tests/integration/romio/romio_io.c $(ROMIO_LIB) \
		romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<; }

# Every constructor as a view and a subfile type; whole files to and
# from a local one (also for the mount's test); locks across jobs; the
# driver's lifecycle; accesses that must finish in time; every access
# call against MPI's typemap.
$(ROMIO_TEST_DIR)/romio_types $(ROMIO_TEST_DIR)/romio_xfer \
		$(ROMIO_TEST_DIR)/romio_lock $(ROMIO_TEST_DIR)/romio_life \
		$(ROMIO_TEST_DIR)/romio_cost $(ROMIO_TEST_DIR)/romio_typemap \
		$(ROMIO_TEST_DIR)/romio_recovery $(ROMIO_TEST_DIR)/romio_xcache \
		$(ROMIO_TEST_DIR)/romio_async_order $(ROMIO_TEST_DIR)/romio_realms \
		$(ROMIO_TEST_DIR)/romio_coop: \
		$(ROMIO_TEST_DIR)/%: tests/integration/romio/%.c \
		tests/integration/romio/pattern.h $(ROMIO_LIB) romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<; }

# The native API's side of the cross-path checks: no MPI.
$(ROMIO_TEST_DIR)/romio_native: tests/integration/romio/romio_native.c \
		tests/integration/romio/pattern.h $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) \
		$(ALL_LDFLAGS)

# Collective I/O: also asks the iods for their request counters, through
# the tools' probe and libclf's private protocol (a copy of its own: the
# driver's libclf inside libromio-clf.so is hidden).
$(ROMIO_TEST_DIR)/romio_coll: tests/integration/romio/romio_coll.c $(ROMIO_LIB) \
		romio-clf/mpicc-clf $(O)/tools/probe.o $(O)/libclf.a
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -Iinclude \
		$(LIBCLF_INCLUDES) -Itools -o $@ $< $(O)/tools/probe.o $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS); }

ROMIO_PROPS_PROG := $(ROMIO_TEST_DIR)/romio_props

# The property test: random datatypes against MPI's own typemaps; reads
# the files back through libclf's native API, hence libclf.a too.
$(ROMIO_PROPS_PROG): tests/integration/romio/romio_props.c $(ROMIO_LIB) \
		romio-clf/mpicc-clf $(O)/libclf.a
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -Iinclude \
		-o $@ $< $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS); }

# Fortran, through mpicc-clf's MPICC=mpifort, when there is mpifort.
ifneq ($(shell command -v mpifort 2>/dev/null),)
ROMIO_TEST_PROGS += $(ROMIO_TEST_DIR)/fortran_io
$(ROMIO_TEST_DIR)/fortran_io: tests/integration/romio/fortran_io.f90 \
		$(ROMIO_LIB) romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  FCLD    $@"; MPICC=mpifort CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -O2 -o $@ $<; }
endif

# Plain mpicc: the test loads libromio-clf.so with LD_PRELOAD.
$(ROMIO_TEST_DIR)/romio_io_plain: tests/integration/romio/romio_io.c
	@mkdir -p $(dir $@)
	$(ROMIO_MPICC) -std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<
endif

.PHONY: check-romio
check-romio: $(ROMIO_TEST_PROGS) $(O)/tools/clf \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(ROMIO_TEST)

CHECK_TARGETS += check-romio

# Random legal datatypes, layouts and access calls against an oracle of
# MPI's own typemaps (tests/integration/test_romio_props.sh): a bounded
# run in make check, a longer one on demand:
#   make soak-types [SEED=n] [CASES=n]     print the seed of any failure
#   CLF_TEST_SEED=s CLF_TEST_CASE=i make soak-types   replay one case
ROMIO_PROPS_TEST := tests/integration/test_romio_props.sh

.PHONY: check-romio-props soak-types
check-romio-props: $(ROMIO_PROPS_PROG) $(O)/tools/clf \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(ROMIO_PROPS_TEST)

soak-types: $(ROMIO_PROPS_PROG) $(O)/tools/clf \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) CLF_PROPS_SOAK=1 $(ROMIO_PROPS_TEST) \
		$(if $(SEED),--seed $(SEED)) $(if $(CASES),--cases $(CASES))

CHECK_TARGETS += check-romio-props

# The kernel client's guest test runs romio_xfer on its mount
# (tests/guest/kclient.sh); kclient.mk is read before this file.
ifeq ($(CONFIG_CLF_KERNEL_MODULE),y)
check-kclient: $(filter %/romio_xfer,$(ROMIO_TEST_PROGS))
endif
