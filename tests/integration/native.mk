# Integration tests of the native API against real daemons (test_native).

NATIVE_TEST := $(O)/tests/integration/test_native
NATIVE_TEST_OBJS := $(O)/tests/integration/test_native.o \
	$(O)/tests/integration/instance.o $(TEST_MODEL_OBJ)

$(O)/tests/integration/%.o: tests/integration/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(LIBCLF_INCLUDES) -Itests/unit \
		-Itests/integration -c -o $@ $<

$(NATIVE_TEST): $(NATIVE_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_TEST_OBJS) $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) \
		$(CHECK_LIBS) $(ALL_LDFLAGS)

# Byte-range locks between processes (test_native_lock).
NATIVE_LOCK_TEST := $(O)/tests/integration/test_native_lock
NATIVE_LOCK_TEST_OBJS := $(O)/tests/integration/test_native_lock.o \
	$(O)/tests/integration/instance.o

$(NATIVE_LOCK_TEST): $(NATIVE_LOCK_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_LOCK_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

# O_APPEND across processes (test_native_append).
NATIVE_APPEND_TEST := $(O)/tests/integration/test_native_append
NATIVE_APPEND_TEST_OBJS := $(O)/tests/integration/test_native_append.o \
	$(O)/tests/integration/instance.o

$(NATIVE_APPEND_TEST): $(NATIVE_APPEND_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_APPEND_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

# Symbolic and hard links through the native API (test_native_links).
NATIVE_LINKS_TEST := $(O)/tests/integration/test_native_links
NATIVE_LINKS_TEST_OBJS := $(O)/tests/integration/test_native_links.o \
	$(O)/tests/integration/instance.o

$(NATIVE_LINKS_TEST): $(NATIVE_LINKS_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_LINKS_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

# Clients through restarts of metad and the iods (test_native_recovery).
NATIVE_RECOVERY_TEST := $(O)/tests/integration/test_native_recovery
NATIVE_RECOVERY_TEST_OBJS := $(O)/tests/integration/test_native_recovery.o \
	$(O)/tests/integration/instance.o

$(NATIVE_RECOVERY_TEST): $(NATIVE_RECOVERY_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_RECOVERY_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

# A namespace over several metads (test_native_metads; run with the
# namespace suites against 3 metads by test_native_metads.sh).
NATIVE_METADS_TEST := $(O)/tests/integration/test_native_metads
NATIVE_METADS_TEST_OBJS := $(O)/tests/integration/test_native_metads.o \
	$(O)/tests/integration/instance.o

$(NATIVE_METADS_TEST): $(NATIVE_METADS_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_METADS_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

# The fsync recorder the durability test preloads into the daemons.
NATIVE_FSYNC_LOG := $(O)/tests/integration/fsync_log.so
$(NATIVE_FSYNC_LOG): tests/integration/fsync_log.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARNINGS) -O2 -fPIC -shared -o $@ $< -ldl

# Power cuts at random moments (test_crash): crash_shim.so records in a
# shadow tree what the daemons' syncs made durable.
NATIVE_CRASH_TEST := $(O)/tests/integration/test_crash
NATIVE_CRASH_TEST_OBJS := $(O)/tests/integration/test_crash.o \
	$(O)/tests/integration/crash_shadow.o $(O)/tests/integration/instance.o
NATIVE_CRASH_SHIM := $(O)/tests/integration/crash_shim.so

$(NATIVE_CRASH_TEST): $(NATIVE_CRASH_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_CRASH_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

$(NATIVE_CRASH_SHIM): tests/integration/crash_shim.c \
		tests/integration/crash_shadow.c tests/integration/crash_shadow.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARNINGS) -O2 -fPIC -shared -Itests/integration \
		-o $@ tests/integration/crash_shim.c \
		tests/integration/crash_shadow.c -ldl -lpthread

# A collective of a thousand threads of one process (test_native_coll).
NATIVE_COLL_TEST := $(O)/tests/integration/test_native_coll
NATIVE_COLL_TEST_OBJS := $(O)/tests/integration/test_native_coll.o \
	$(O)/tests/integration/instance.o

$(NATIVE_COLL_TEST): $(NATIVE_COLL_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_COLL_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

# Small accesses cached under the iods' extent locks (test_native_cache).
NATIVE_CACHE_TEST := $(O)/tests/integration/test_native_cache
NATIVE_CACHE_TEST_OBJS := $(O)/tests/integration/test_native_cache.o \
	$(O)/tests/integration/instance.o

$(NATIVE_CACHE_TEST): $(NATIVE_CACHE_TEST_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(NATIVE_CACHE_TEST_OBJS) $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

.PHONY: check-native
check-native: $(NATIVE_TEST) $(NATIVE_LOCK_TEST) $(NATIVE_APPEND_TEST) \
		$(NATIVE_LINKS_TEST) $(NATIVE_CRASH_TEST) $(NATIVE_FSYNC_LOG) \
		$(NATIVE_CRASH_SHIM) $(NATIVE_RECOVERY_TEST) $(NATIVE_COLL_TEST) \
		$(NATIVE_METADS_TEST) $(NATIVE_CACHE_TEST) $(PROGRAMS)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(NATIVE_TEST) \
		$(NATIVE_LOCK_TEST) $(NATIVE_APPEND_TEST) $(NATIVE_LINKS_TEST) \
		$(NATIVE_CACHE_TEST) \
		$(NATIVE_CRASH_TEST) $(NATIVE_RECOVERY_TEST) $(NATIVE_COLL_TEST) \
		tests/integration/test_native_metads.sh

CHECK_TARGETS += check-native
