# bench: programs that print figures; not tests.

BENCHES += $(O)/bench/mapping_bench

$(O)/bench/mapping_bench: $(O)/bench/mapping_bench.o $(O)/libclf.a
	$(CC) -o $@ $^ $(ALL_LDFLAGS)
