# MPICH's own MPI-IO tests on clf: tests/integration/test_romio_suite.sh
# runs ROMIO's test programs (src/mpi/romio/test) and MPICH's
# (test/mpi/io), from the source romio-clf/fetch-romio.sh fetched, built
# with romio-clf/mpicc-clf by build_romio_suite.sh, against a real
# instance, with use_romio_optimizations false and true.
#
#   make check-romio-suite      run it (about three minutes on two cores)
#
# Built only where romio-clf/Build.mk builds the driver; the script skips
# (77) without it, or when the source could not be had.

ROMIO_SUITE_TEST := tests/integration/test_romio_suite.sh
ROMIO_SUITE_STAMP :=

ifneq ($(ROMIO_LIB),)
ROMIO_SUITE_STAMP := $(O)/tests/integration/romio_suite/.built

# The programs are the fetched source's, whatever it holds: the script
# decides what runs.  The script itself only rebuilds what is stale.
$(ROMIO_SUITE_STAMP): $(ROMIO_LIB) romio-clf/mpicc-clf \
		tests/integration/build_romio_suite.sh
	@$(ROMIO_SKIP) { tests/integration/build_romio_suite.sh $(O) && \
		touch $@; }
endif

.PHONY: check-romio-suite
check-romio-suite: $(ROMIO_SUITE_STAMP) $(ROMIO_TEST_PROGS) $(O)/tools/clf \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(ROMIO_SUITE_TEST)

CHECK_TARGETS += check-romio-suite
