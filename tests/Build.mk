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
	test_layout \
	test_random
UNIT_TEST_LIBS = $(LIBCLF_EXTRA_LIBS)

TEST_MODEL_OBJ := $(O)/tests/unit/model.o

.SECONDEXPANSION:
$(O)/tests/unit/%: $(O)/tests/unit/%.o $(TEST_MODEL_OBJ) $$(TEST_OBJS_$$*) \
		$(O)/libclf.a
	$(CC) -o $@ $< $(TEST_MODEL_OBJ) $(TEST_OBJS_$*) $(O)/libclf.a \
		$(TEST_LIBS_$*) $(UNIT_TEST_LIBS) $(CHECK_LIBS) $(ALL_LDFLAGS)

$(O)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Ilibclf -Iiod -Imetad -Itests/unit -c -o $@ $<

CHECK_TARGETS += check-unit
