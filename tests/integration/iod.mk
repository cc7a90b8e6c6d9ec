# Integration tests of the iod daemon: each test starts the real iod
# binary on loopback in its own directory and speaks the protocol to it
# (tests/integration/iod_harness.c).  test_iod_enospc mounts a small
# tmpfs and is skipped (exit 77) where mounting is not allowed.
#
#   make check-iod                      run them
#   make O=build-asan CONFIG_CLF_SANITIZERS=y check-iod
#                                       the same against an ASan iod

IOD_ITEST_NAMES := test_iod_daemon test_iod_io test_iod_collective \
	test_iod_faults test_iod_enospc test_iod_memory test_iod_scale \
	test_iod_lock test_iod_many
IOD_ITESTS := $(IOD_ITEST_NAMES:%=$(O)/tests/integration/%)
IOD_ITEST_HARNESS := $(O)/tests/integration/iod_harness.o
IOD_ITEST_OBJS := $(IOD_ITESTS:%=%.o) $(IOD_ITEST_HARNESS)

# Static pattern: these objects only, whatever other fragments define.
$(IOD_ITEST_OBJS): $(O)/tests/integration/%.o: tests/integration/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(LIBCLF_INCLUDES) -Itests/unit -Itests/integration \
		-DIOD_BIN='"$(abspath $(O)/iod/iod)"' -c -o $@ $<

$(IOD_ITESTS): %: %.o $(IOD_ITEST_HARNESS) $(O)/libclf.a
	$(CC) -o $@ $< $(IOD_ITEST_HARNESS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

.PHONY: check-iod
check-iod: $(IOD_ITESTS) $(O)/iod/iod
	@scripts/run-tests.sh $(IOD_ITESTS)

CHECK_TARGETS += check-iod
