# clf://HOST:PORT names without a configuration file:
# tests/integration/test_remote_names.sh runs an instance in a network
# namespace and uses it from the root namespace through the native API
# (remote_client), the clf command, the mount and MPI-IO, and then, with
# its iods slowed down, nonblocking MPI-IO overlapping computation
# (romio_async), sequential reads read ahead (romio_ahead), and the hint
# clf_cache (romio_cache).  test_forward.sh: clients in a namespace that reaches the
# instance only through `clf forward`.  Needs root
# (ip netns); skips (77) without it.
#
#   make check-remote

REMOTE_CLIENT := $(O)/tests/integration/remote_client
REMOTE_TEST := tests/integration/test_remote_names.sh \
	tests/integration/test_forward.sh

$(O)/tests/integration/remote_client.o: tests/integration/remote_client.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(REMOTE_CLIENT): $(O)/tests/integration/remote_client.o $(O)/libclf.a
	$(CC) -o $@ $< $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# Collective writes and reads of several clients (test_forward.sh's
# merged collectives, bench/forward.sh).
FORWARD_COLL := $(O)/tests/integration/forward_coll
$(O)/tests/integration/forward_coll.o: tests/integration/forward_coll.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -c -o $@ $<

$(FORWARD_COLL): $(O)/tests/integration/forward_coll.o $(O)/libclf.a
	$(CC) -o $@ $< $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) -lpthread $(ALL_LDFLAGS)

# Nonblocking MPI-IO that overlaps with computation (romio-clf's I/O
# thread), linked as the other ROMIO test programs (romio.mk).
REMOTE_ASYNC :=
ifneq ($(ROMIO_LIB),)
REMOTE_ASYNC := $(ROMIO_TEST_DIR)/romio_async
$(REMOTE_ASYNC): tests/integration/romio/romio_async.c $(ROMIO_LIB) \
		romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<; }
# Sequential reads read ahead (hint clf_read_ahead), dropped at sync.
REMOTE_ASYNC += $(ROMIO_TEST_DIR)/romio_ahead
$(ROMIO_TEST_DIR)/romio_ahead: tests/integration/romio/romio_ahead.c $(ROMIO_LIB) \
		romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<; }
# The hint clf_cache: a local copy, written back at the close.
REMOTE_ASYNC += $(ROMIO_TEST_DIR)/romio_cache
$(ROMIO_TEST_DIR)/romio_cache: tests/integration/romio/romio_cache.c $(ROMIO_LIB) \
		romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<; }
endif

.PHONY: check-remote
check-remote: $(REMOTE_CLIENT) $(FORWARD_COLL) $(PROGRAMS) $(REMOTE_ASYNC) \
		$(filter %/romio_xfer,$(ROMIO_TEST_PROGS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(REMOTE_TEST)

CHECK_TARGETS += check-remote
