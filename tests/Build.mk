# tests: Check unit tests (one program per module) and integration tests.
#
# A unit test tests/unit/NAME.c becomes $(O)/tests/unit/NAME, linked with
# the test model, libclf.a and Check.  Add a module's test by appending
# its name to UNIT_TEST_NAMES; a test of a daemon's internals names the
# objects it needs in TEST_OBJS_NAME and its libraries in TEST_LIBS_NAME
# (e.g. TEST_OBJS_test_mds_store := $(O)/metad/mds_store.o).

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

UNIT_TEST_NAMES := test_type test_map test_pattern test_mapping test_codec \
	test_falls_cursor \
	test_layout \
	test_random test_compact
# The copy loops of progressions (libclf/engine/mapping_copy.c).
UNIT_TEST_NAMES += test_prog_copy
# Layouts as text (libclf/engine/layout_text.h).
UNIT_TEST_NAMES += test_layout_text
# Network layer: protocol codec, TCP transport, authentication, config.
UNIT_TEST_NAMES += test_proto test_transport test_auth test_config
# The wire format byte for byte, against bytes captured from protocol 1.8.
UNIT_TEST_NAMES += test_proto_golden
# How a message is declared (libclf/runtime/proto_decl.h).
UNIT_TEST_NAMES += test_proto_decl
# Messages sealed after the handshake, against a man in the middle.
UNIT_TEST_NAMES += test_seal
# The last error: who failed, as a field (libclf/engine/error.h).
UNIT_TEST_NAMES += test_error
# The one intrusive hash table (libclf/runtime/hash.h).
UNIT_TEST_NAMES += test_hash
# The client's wait for a restarting daemon (libclf/client/client_grace.c).
UNIT_TEST_NAMES += test_client_grace
# The daemon runtime: readiness, pid file, stop signals (daemon.h).
UNIT_TEST_NAMES += test_daemon
# Byte-range lock bodies (libclf/runtime/proto_lock.c).
UNIT_TEST_NAMES += test_proto_lock
# Symlink, hard link and special file bodies (libclf/runtime/proto_link.c).
UNIT_TEST_NAMES += test_proto_link
# The RDMA transport's SEND header and credits, without a device.
UNIT_TEST_NAMES += test_rdma_wire
# The RDMA registration cache's rules, without a device.
UNIT_TEST_NAMES += test_rdma_regcache
# One registration cache per RDMA device (protection domain), shared by
# its connections, without a device.
UNIT_TEST_NAMES += test_rdma_devcache
UNIT_TEST_LIBS = $(LIBCLF_EXTRA_LIBS)

TEST_MODEL_OBJ := $(O)/tests/unit/model.o $(O)/tests/unit/partition.o

.SECONDEXPANSION:
$(O)/tests/unit/%: $(O)/tests/unit/%.o $(TEST_MODEL_OBJ) $$(TEST_OBJS_$$*) \
		$(O)/libclf.a
	$(CC) -o $@ $< $(TEST_MODEL_OBJ) $(TEST_OBJS_$*) $(O)/libclf.a \
		$(TEST_LIBS_$*) $(UNIT_TEST_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

$(O)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(LIBCLF_INCLUDES) -Iiod -Imetad -Itests/unit -c -o $@ $<

CHECK_TARGETS += check-unit

# iod: storage, views, view I/O and collective merging (iod/Build.mk).
UNIT_TEST_NAMES += test_iod_rangelock test_iod_store test_iod_view \
	test_iod_viewio test_iod_merge
TEST_OBJS_test_iod_rangelock := $(O)/iod/iod_rangelock.o
TEST_LIBS_test_iod_rangelock := -lpthread
# The extent locks iods grant to caching clients (iod/iod_lock.h).
UNIT_TEST_NAMES += test_iod_lock
TEST_OBJS_test_iod_lock := $(O)/iod/iod_lock.o $(O)/iod/iod_lock_shape.o
TEST_LIBS_test_iod_lock := -lpthread
TEST_OBJS_test_iod_store := $(O)/iod/iod_store.o $(O)/iod/iod_store_io.o \
	$(O)/iod/iod_rangelock.o
TEST_LIBS_test_iod_store := -lpthread
TEST_OBJS_test_iod_view := $(O)/iod/iod_view.o $(O)/iod/iod_share.o
TEST_LIBS_test_iod_view := -lpthread
TEST_OBJS_test_iod_viewio := $(O)/iod/iod_viewio.o $(O)/iod/iod_view.o $(O)/iod/iod_share.o \
	$(O)/iod/iod_store.o $(O)/iod/iod_store_io.o $(O)/iod/iod_rangelock.o
TEST_LIBS_test_iod_viewio := -lpthread
TEST_OBJS_test_iod_merge := $(O)/iod/iod_merge.o $(O)/iod/iod_view.o $(O)/iod/iod_share.o \
	$(O)/iod/iod_store.o $(O)/iod/iod_store_io.o $(O)/iod/iod_rangelock.o
TEST_LIBS_test_iod_merge := -lpthread
# The record of collective operations an iod ran (iod/iod_coll_done.h).
UNIT_TEST_NAMES += test_iod_coll_done
TEST_OBJS_test_iod_coll_done := $(O)/iod/iod_coll_done.o
# The capability table of a connection (iod/iod_cap.h).
UNIT_TEST_NAMES += test_iod_cap
TEST_OBJS_test_iod_cap := $(O)/iod/iod_cap.o $(O)/iod/iod_view.o $(O)/iod/iod_share.o
TEST_LIBS_test_iod_cap := -lpthread

# metad store (metad/Build.mk defines MDS_STORE_OBJS, included after this
# file: hence '=', expanded when the rule runs).
UNIT_TEST_NAMES += test_mds_store test_mds_namespace test_mds_crash
TEST_OBJS_test_mds_store = $(MDS_STORE_OBJS)
TEST_LIBS_test_mds_store = $(MDS_STORE_LIBS)
TEST_OBJS_test_mds_namespace = $(MDS_STORE_OBJS)
TEST_LIBS_test_mds_namespace = $(MDS_STORE_LIBS)
TEST_OBJS_test_mds_crash = $(MDS_STORE_OBJS)
TEST_LIBS_test_mds_crash = $(MDS_STORE_LIBS)
# A store of a namespace over several metads (metad/mds_remote.c,
# mds_intents.c).
UNIT_TEST_NAMES += test_mds_remote
TEST_OBJS_test_mds_remote = $(MDS_STORE_OBJS)
TEST_LIBS_test_mds_remote = $(MDS_STORE_LIBS)
# Retired iods: kept in the store, skipped by placement (mds_retire.c).
UNIT_TEST_NAMES += test_mds_retire
TEST_OBJS_test_mds_retire = $(MDS_STORE_OBJS) $(O)/metad/mds_retire.o \
	$(O)/metad/mds_log.o
TEST_LIBS_test_mds_retire = $(MDS_STORE_LIBS)
# Iods joining a running metad (mds_iods_join).
UNIT_TEST_NAMES += test_mds_iods
TEST_OBJS_test_mds_iods = $(O)/metad/mds_iods.o $(O)/metad/mds_log.o
# Group commit: concurrent callers of one store.
UNIT_TEST_NAMES += test_mds_group
TEST_OBJS_test_mds_group = $(MDS_STORE_OBJS)
TEST_LIBS_test_mds_group = $(MDS_STORE_LIBS)
# Symlinks, special files and hard links in the store.
UNIT_TEST_NAMES += test_mds_links
TEST_OBJS_test_mds_links = $(MDS_STORE_OBJS)
TEST_LIBS_test_mds_links = $(MDS_STORE_LIBS)
