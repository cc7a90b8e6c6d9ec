# tests: Check unit tests (one program per module) and integration tests.

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

UNIT_TEST_NAMES := test_type test_map test_pattern test_mapping test_codec \
	test_random
UNIT_TESTS += $(UNIT_TEST_NAMES:%=$(O)/tests/unit/%)
TEST_MODEL_OBJ := $(O)/tests/unit/model.o

$(O)/tests/unit/%: $(O)/tests/unit/%.o $(TEST_MODEL_OBJ) $(O)/libclf.a
	$(CC) -o $@ $< $(TEST_MODEL_OBJ) $(O)/libclf.a $(CHECK_LIBS) $(ALL_LDFLAGS)

$(O)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Ilibclf -Itests/unit -c -o $@ $<

CHECK_TARGETS += check-unit
