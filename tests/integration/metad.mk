# Integration tests of the metad daemon: each test starts the real metad
# binary (and, in test_metad_iods, real iods) on loopback in its own
# directory and speaks the protocol to it (tests/integration/
# metad_harness.c).  test_metad_iods is skipped (exit 77) while the iod
# program is not built.
#
#   make check-metad                    run them
#   make O=build-asan CONFIG_CLF_SANITIZERS=y check-metad
#                                       the same against an ASan metad

METAD_ITEST_NAMES := test_metad_ops test_metad_robust test_metad_crash \
	test_metad_replay test_metad_links test_metad_dirplus \
	test_metad_iods test_metad_scale test_metad_crash_group \
	test_metad_crash_sync
METAD_ITESTS := $(METAD_ITEST_NAMES:%=$(O)/tests/integration/%)
METAD_ITEST_HARNESS := $(O)/tests/integration/metad_harness.o
METAD_ITEST_OBJS := $(METAD_ITESTS:%=%.o) $(METAD_ITEST_HARNESS)

# Static pattern: these objects only, whatever other fragments define.
$(METAD_ITEST_OBJS): $(O)/tests/integration/%.o: tests/integration/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(LIBCLF_INCLUDES) -Imetad \
		-Itests/integration \
		-DMETAD_BIN='"$(abspath $(O)/metad/metad)"' \
		-DIOD_BIN='"$(abspath $(O)/iod/iod)"' -c -o $@ $<

# test_metad_crash also opens the store itself, once metad is gone, to
# check its invariants (mds_store_verify).
METAD_ITEST_STORE := $(O)/tests/integration/test_metad_crash
# test_metad_crash_sync runs metad under the power-cut shim and builds
# the store a cut leaves (crash_shadow.c, as test_crash).
METAD_ITEST_CUT := $(O)/tests/integration/test_metad_crash_sync

$(filter-out $(METAD_ITEST_STORE) $(METAD_ITEST_CUT),$(METAD_ITESTS)): %: %.o \
		$(METAD_ITEST_HARNESS) $(O)/libclf.a
	$(CC) -o $@ $< $(METAD_ITEST_HARNESS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

$(METAD_ITEST_CUT): %: %.o $(METAD_ITEST_HARNESS) \
		$(O)/tests/integration/crash_shadow.o $(O)/libclf.a \
		$(O)/tests/integration/crash_shim.so
	$(CC) -o $@ $< $(METAD_ITEST_HARNESS) \
		$(O)/tests/integration/crash_shadow.o $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

$(METAD_ITEST_STORE): %: %.o $(METAD_ITEST_HARNESS) $(MDS_STORE_OBJS) \
		$(O)/libclf.a
	$(CC) -o $@ $< $(METAD_ITEST_HARNESS) $(MDS_STORE_OBJS) \
		$(O)/libclf.a $(MDS_STORE_LIBS) $(LIBCLF_EXTRA_LIBS) \
		$(CHECK_LIBS) $(ALL_LDFLAGS)

# The iod program too when the build has it, so that test_metad_iods
# runs rather than skips.
.PHONY: check-metad
check-metad: $(METAD_ITESTS) $(O)/metad/metad \
		$(filter $(O)/iod/iod,$(PROGRAMS))
	@scripts/run-tests.sh $(METAD_ITESTS)

CHECK_TARGETS += check-metad
