# The tests `make check-tsan` runs under ThreadSanitizer (top Makefile,
# scripts/tsan-check.sh): those whose processes run threads over shared
# state.  TSan makes them 5-15 times slower, so the rest stay with ASan.
#
#   unit tests        those whose code runs threads or takes locks:
#                     transport, auth and sealing, the iod's range
#                     and extent locks, store and views, metad's store and
#                     lock/append tables, the tools, the mount client's
#                     inode table
#   native client     test_native (threads closing a descriptor in use,
#                     collectives), test_native_lock (blocking locks:
#                     metad's waiting threads), test_native_append
#                     (racing appenders), test_native_links,
#                     test_native_recovery (a loading thread while a
#                     daemon is killed and restarted: reconnections),
#                     test_native_cache (the cache's callback thread
#                     answering revocations while the caller writes)
#   iod, metad        all: a thread per connection over shared views,
#                     buffers, collectives, store, gc and replay threads
#   mount client      test_mount.sh (libfuse's worker threads over the
#                     inode table and libclf), test_mount_lock.sh
#
# Left to ASan and the plain build: the mapping engine's and codecs' unit
# tests (one thread, and the slowest under TSan), test_crash (power cuts, one client
# thread; ten daemon restarts), test_mount_t.sh (mount(8) plumbing),
# test_mount_romio.sh (MPI), test_posix.sh (one call at a time), the
# CLI, ROMIO and application suites (single-threaded clients of the
# daemons check-native already runs).

TSAN_UNIT_NAMES := test_transport test_auth test_seal test_iod_rangelock \
	test_iod_lock \
	test_iod_store test_iod_view test_iod_viewio test_iod_merge \
	test_mds_store test_mds_crash test_mds_lock test_mds_append test_tools \
	test_clfs test_mds_iods
TSAN_UNIT := $(TSAN_UNIT_NAMES:%=$(O)/tests/unit/%)
TSAN_NATIVE := $(NATIVE_TEST) $(NATIVE_LOCK_TEST) $(NATIVE_APPEND_TEST) \
	$(NATIVE_LINKS_TEST) $(NATIVE_RECOVERY_TEST) $(NATIVE_CACHE_TEST)
TSAN_MOUNT := $(if $(filter y,$(CONFIG_CLF_FUSE)), \
	tests/integration/test_mount.sh tests/integration/test_mount_lock.sh)

.PHONY: check-tsan-tests
check-tsan-tests: $(TSAN_UNIT) $(TSAN_NATIVE) $(IOD_ITESTS) $(METAD_ITESTS) \
		$(NATIVE_FSYNC_LOG) $(PROGRAMS) $(if $(TSAN_MOUNT),$(MOUNT_HELPER))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(TSAN_UNIT) $(TSAN_NATIVE) \
		$(IOD_ITESTS) $(METAD_ITESTS) $(TSAN_MOUNT)
