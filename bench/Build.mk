# bench: programs that print figures; not tests.

BENCHES += $(O)/bench/mapping_bench

$(O)/bench/mapping_bench: $(O)/bench/mapping_bench.o $(O)/libclf.a
	$(CC) -o $@ $^ $(ALL_LDFLAGS)

BENCHES += $(O)/bench/matrix_native

$(O)/bench/matrix_native.o: ALL_CFLAGS += -Itests/integration
$(O)/bench/matrix_native: $(O)/bench/matrix_native.o \
		$(O)/tests/integration/instance.o $(O)/libclf.a
	$(CC) -o $@ $^ $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)
