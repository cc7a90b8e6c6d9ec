# PnetCDF's test suite on clf: tests/integration/test_pnetcdf_suite.sh
# runs the tests of PnetCDF (built with MPICH by build_pnetcdf_suite.sh
# from Debian's source) against a real, mounted instance, with
# use_romio_optimizations false and true, and once on a local file
# system for comparison.
#
#   make check-pnetcdf-suite      run it
#
# Built only where romio-clf/Build.mk builds the driver; the script skips
# (77) without it, without /dev/fuse, or when the PnetCDF source could not
# be had.  build/pnetcdf caches the build: a second make check does not
# rebuild it (the driver comes in with LD_PRELOAD).

PNETCDF_SUITE_TEST := tests/integration/test_pnetcdf_suite.sh
PNETCDF_SUITE_STAMP :=

ifneq ($(ROMIO_LIB),)
PNETCDF_SUITE_STAMP := $(O)/tests/integration/pnetcdf_suite.built

# The script does nothing once $(O)/pnetcdf/.built is there; 77 (nothing
# to build with) lets the test skip.
$(PNETCDF_SUITE_STAMP): tests/integration/build_pnetcdf_suite.sh
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { rc=0; tests/integration/build_pnetcdf_suite.sh $(O) || rc=$$?; \
		if [ $$rc -eq 77 ]; then echo unavailable >$@; \
		elif [ $$rc -eq 0 ]; then echo built >$@; else exit $$rc; fi; }
endif

.PHONY: check-pnetcdf-suite
check-pnetcdf-suite: $(PNETCDF_SUITE_STAMP) $(ROMIO_LIB) $(O)/tools/clf \
		$(filter $(O)/kernel/mount.clf,$(PROGRAMS)) \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(PNETCDF_SUITE_TEST)

CHECK_TARGETS += check-pnetcdf-suite
