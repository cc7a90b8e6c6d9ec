# HDF5's parallel tests on clf: tests/integration/test_hdf5_suite.sh runs
# the testpar programs that build_hdf5_suite.sh builds from the source of
# the installed libhdf5-mpich-dev (romio-clf/mpicc-clf, Debian's
# libhdf5.a), against a real instance, with use_romio_optimizations
# false and true, and once on a local file system for comparison.
#
#   make check-hdf5-suite      run it
#
# Built only where romio-clf/Build.mk builds the driver; the script skips
# (77) without it, without libhdf5-mpich-dev, or when the HDF5 source
# could not be had (build/hdf5-src caches it: a second make check does
# not fetch or rebuild).

HDF5_SUITE_TEST := tests/integration/test_hdf5_suite.sh
HDF5_SUITE_STAMP :=

ifneq ($(ROMIO_LIB),)
HDF5_SUITE_STAMP := $(O)/tests/integration/hdf5_suite/.built

# The script rebuilds only what is stale; 77 (nothing to build with)
# leaves the stamp saying so, for the test to skip.
$(HDF5_SUITE_STAMP): $(ROMIO_LIB) romio-clf/mpicc-clf \
		tests/integration/build_hdf5_suite.sh
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { rc=0; tests/integration/build_hdf5_suite.sh $(O) || rc=$$?; \
		if [ $$rc -eq 77 ]; then echo unavailable >$@; \
		elif [ $$rc -eq 0 ]; then echo built >$@; else exit $$rc; fi; }
endif

.PHONY: check-hdf5-suite
check-hdf5-suite: $(HDF5_SUITE_STAMP) $(O)/tools/clf \
		$(filter $(O)/kernel/mount.clf,$(PROGRAMS)) \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(HDF5_SUITE_TEST)

CHECK_TARGETS += check-hdf5-suite
